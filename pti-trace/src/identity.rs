//! Whose a trace is: its process's MPI rank and host, and its clock anchor, read from the
//! anchor the collector writes among a trace's first packets (`pti-trace clock anchor`: libpti's
//! time and the wall-clock time read together, the host's name, the rank when there is one).
//!
//! `merge` aligns the clocks of several hosts by the anchors; `export` files each trace's rows
//! under its rank and host (the Parquet dataset's partitions, the SQLite tables' columns) and
//! says which clock their times are on.
//!
//! May touch: the trace file it reads.

use std::collections::HashMap;
use std::path::Path;

use perfetto_protos::trace_packet::TracePacket;

/// The clock anchor's event name (the collector's `perfetto::ANCHOR`).
pub(crate) const ANCHOR: &str = "pti-trace clock anchor";

/// The clock libpti's times are on (pti-core's `clock`): the host's `CLOCK_MONOTONIC_RAW`, in
/// nanoseconds. Every process of one host shares it; other hosts' are aligned by the anchors.
pub(crate) const CLOCK: &str = "CLOCK_MONOTONIC_RAW";

/// What one trace's anchor says.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Anchor {
    /// libpti's time and the wall clock's (ns since the Unix epoch), read together.
    pub(crate) at: u64,
    pub(crate) realtime: u64,
    pub(crate) host: String,
    /// The MPI rank, where the process had one.
    pub(crate) rank: Option<u32>,
}

impl Anchor {
    /// What to add to a time of this trace to put it on the wall clock.
    pub(crate) fn to_realtime(&self) -> i64 {
        self.realtime as i64 - self.at as i64
    }
}

/// What to add to the times of a trace whose anchor is `anchor` to put them on the clock of the
/// host of `reference` (the first anchored input's), for `merge` and `export --otf2`: nothing on
/// the same host (one monotonic clock), the difference of the two hosts' wall clocks on another.
/// None for a trace without an anchor (left on its own clock).
pub(crate) fn shift(anchor: Option<&Anchor>, reference: Option<&Anchor>) -> Option<i64> {
    match (anchor, reference) {
        (Some(a), Some(r)) if a.host != r.host => Some(a.to_realtime() - r.to_realtime()),
        (Some(_), _) => Some(0),
        (None, _) => None,
    }
}

/// Finds the clock anchor among a trace's packets.
#[derive(Default)]
pub(crate) struct AnchorFinder {
    names: HashMap<(u32, u64), String>,
    pub(crate) found: Option<Anchor>,
}

impl AnchorFinder {
    /// Looks at packet `p` (until the anchor is found).
    pub(crate) fn see(&mut self, p: &TracePacket) {
        if self.found.is_some() {
            return;
        }
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                self.names.insert(
                    (p.trusted_packet_sequence_id(), n.iid()),
                    n.name().to_string(),
                );
            }
        }
        if !p.has_track_event() {
            return;
        }
        let e = p.track_event();
        let key = (p.trusted_packet_sequence_id(), e.name_iid());
        if self.names.get(&key).map(String::as_str) != Some(ANCHOR) {
            return;
        }
        let mut anchor = Anchor {
            at: p.timestamp(),
            ..Anchor::default()
        };
        for a in &e.debug_annotations {
            match a.name() {
                "realtime_ns" => anchor.realtime = a.uint_value(),
                "host" => anchor.host = a.string_value().to_string(),
                "rank" => anchor.rank = u32::try_from(a.uint_value()).ok(),
                _ => {}
            }
        }
        self.found = Some(anchor);
        // The names are no longer needed.
        self.names = HashMap::new();
    }
}

/// The rank a process's name gives ("rank R: command"), for traces whose anchor has none.
pub(crate) fn rank_of_name(name: &str) -> Option<u32> {
    name.strip_prefix("rank ")?.split(':').next()?.parse().ok()
}

/// Whose a trace is.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Identity {
    /// The process ID of its (first) process.
    pub(crate) pid: i64,
    /// Its process's name.
    pub(crate) name: String,
    pub(crate) rank: Option<u32>,
    /// The host, where the trace has an anchor.
    pub(crate) host: Option<String>,
    pub(crate) anchor: Option<Anchor>,
}

/// How many packets are read looking for the process and the anchor: the collector writes
/// both first, so a trace without them in its first packets has none (written before pti-trace
/// had anchors).
const LOOK_AHEAD: usize = 64;

/// Reads the first packets of `trace`: whose it is. An error for a trace with no process among
/// them (an empty file, one cut short at its start, one pti-trace did not write): every export
/// files its rows under a process.
pub(crate) fn of(trace: &Path) -> Result<Identity, String> {
    let mut finder = AnchorFinder::default();
    let mut process = None;
    for packet in crate::packets::open(trace)?.take(LOOK_AHEAD) {
        let p = packet.map_err(|e| format!("{}: {e}", trace.display()))?;
        finder.see(&p);
        if process.is_none()
            && p.has_track_descriptor()
            && let Some(pd) = p.track_descriptor().process.as_ref()
        {
            process = Some((i64::from(pd.pid()), pd.process_name().to_string()));
        }
        if process.is_some() && finder.found.is_some() {
            break;
        }
    }
    let Some((pid, name)) = process else {
        return Err(format!(
            "{}: no process in the trace (empty, or not written by pti-trace)",
            trace.display()
        ));
    };
    let anchor = finder.found;
    let rank = anchor
        .as_ref()
        .and_then(|a| a.rank)
        .or_else(|| rank_of_name(&name));
    Ok(Identity {
        pid,
        rank,
        host: anchor
            .as_ref()
            .map(|a| a.host.clone())
            .filter(|h| !h.is_empty()),
        name,
        anchor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_hosts_trace_is_shifted_by_the_wall_clocks_difference() {
        let anchor = |at, realtime, host: &str| Anchor {
            at,
            realtime,
            host: host.into(),
            rank: None,
        };
        // Host a: libpti's 1,000 is wall 1,000,000. Host b: libpti's 5,000 is wall 1,000,500,
        // so b's clock reads 3,500 more than a's for the same moment: its times move 3,500 back.
        let a = anchor(1_000, 1_000_000, "a");
        let b = anchor(5_000, 1_000_500, "b");
        let a2 = anchor(9_000, 1_000_000, "a");
        assert_eq!(shift(Some(&b), Some(&a)), Some(-3_500));
        assert_eq!(shift(Some(&a2), Some(&a)), Some(0), "one host, one clock");
        assert_eq!(shift(Some(&a), Some(&a)), Some(0));
        assert_eq!(shift(None, Some(&a)), None);
    }
}
