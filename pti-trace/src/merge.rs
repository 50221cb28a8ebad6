//! `pti-trace merge -o OUT.pftrace TRACE.pftrace...`: the Perfetto traces of several processes
//! (the ranks of an MPI job, the processes of one run) as one trace on one clock, and a summary
//! across them on stdout.
//!
//! Each input is one packet sequence of the output (its own `trusted_packet_sequence_id`, so its
//! interned names stay its own); its track UUIDs and flow IDs get the input's number in their top
//! byte, so that no two inputs share one. A process ID (or thread ID) already taken by an earlier
//! input (two hosts) is moved to a free one; the process keeps its name ("rank R: ...").
//!
//! The clock: each trace's times are libpti's, the host's monotonic clock, which all processes of
//! one host share, so traces of the first input's host are left as they are. A trace of another
//! host is shifted by the difference between the two hosts' wall clocks, from the clock anchor
//! each trace starts with (`pti-trace clock anchor`: libpti's time and the wall-clock time read
//! together, the host's name): as good as the hosts' wall-clock synchronisation at the start. Not
//! corrected: the drift over the run between two hosts' raw monotonic clocks (libpti's, which
//! NTP does not slew; tens of ppm). A trace without an anchor is left as it is, and said.
//!
//! The summary reads each input with the SQLite export's reader (`export`), one in-memory
//! database per input.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use perfetto_protos::trace_packet::TracePacket;
use protobuf::Message as _;

use crate::identity::{Anchor, AnchorFinder};

/// One input's figures for the summary.
#[derive(Debug, Default)]
struct Figures {
    rank: Option<u32>,
    pid: i64,
    host: String,
    api_calls: i64,
    kernels: i64,
    kernel_ns: i64,
    other_device_ops: i64,
    annotations: i64,
    communication: i64,
    /// Per kernel name: (count, total ns).
    per_kernel: BTreeMap<String, (i64, i64)>,
    /// How far its times were shifted (other host), ns.
    shift: i64,
}

/// What the first pass learns of one input: its clock anchor, the process and thread IDs of its
/// track descriptors, and its figures.
struct Survey {
    anchor: Option<Anchor>,
    /// (pid, tid) of each descriptor: `tid` None for a process's.
    descriptors: Vec<(i32, Option<i32>)>,
    figures: Figures,
}

/// Reads `trace` once, packet by packet: what [`Survey`] holds (bounded by the trace's tracks and
/// kernel names, not its length).
fn survey(trace: &Path) -> Result<Survey, String> {
    let mut anchors = AnchorFinder::default();
    let mut descriptors = Vec::new();
    let mut figures = Figures::default();
    let mut first_process = true;
    let mut decoder = crate::records::Decoder::default();
    for packet in crate::packets::open(trace)? {
        let p = packet.map_err(|e| format!("{}: {e}", trace.display()))?;
        anchors.see(&p);
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            match (d.process.as_ref(), d.thread.as_ref()) {
                (Some(process), _) => descriptors.push((process.pid(), None)),
                (None, Some(thread)) => descriptors.push((thread.pid(), Some(thread.tid()))),
                _ => {}
            }
        }
        decoder.feed(&p, &mut |item| {
            figures.add(item, &mut first_process);
            Ok(())
        })?;
    }
    if first_process {
        return Err(format!("{}: no process in the trace", trace.display()));
    }
    Ok(Survey {
        anchor: anchors.found,
        descriptors,
        figures,
    })
}

/// Merges `traces` into `out` and returns the summary's text. Each input is read twice, packet
/// by packet (a survey, then the rewriting): memory stays bounded whatever the traces' lengths.
pub(crate) fn merge(out: &Path, traces: &[PathBuf]) -> Result<String, String> {
    if traces.len() > 255 {
        return Err("at most 255 traces can be merged into one".into());
    }
    let surveys = traces
        .iter()
        .map(|t| survey(t))
        .collect::<Result<Vec<_>, _>>()?;
    let reference = surveys.iter().find_map(|s| s.anchor.clone());
    let file = crate::outputs::create(out, "file")?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    // Process and thread IDs share one space (a main thread's ID is its process's).
    let mut taken: HashSet<i32> = HashSet::new();
    let mut sequences = Sequences::default();
    let mut figures = Vec::new();
    let mut unanchored = Vec::new();
    for (i, survey) in surveys.into_iter().enumerate() {
        let shift = crate::identity::shift(survey.anchor.as_ref(), reference.as_ref())
            .unwrap_or_else(|| {
                unanchored.push(traces[i].display().to_string());
                0
            });
        let ids = Ids::new(i, &mut taken, &survey.descriptors);
        for packet in crate::packets::open(&traces[i])? {
            let mut packet = packet.map_err(|e| format!("{}: {e}", traces[i].display()))?;
            ids.rewrite(&mut packet, shift, &mut sequences);
            let field = packet
                .write_length_delimited_to_bytes()
                .map_err(|e| e.to_string())?;
            writer
                .write_all(&[0x0A])
                .and_then(|()| writer.write_all(&field))
                .map_err(|e| format!("{}: {e}", out.display()))?;
        }
        let mut f = survey.figures;
        f.pid = i64::from(ids.pid(f.pid as i32));
        f.host = survey.anchor.map(|a| a.host).unwrap_or_default();
        f.shift = shift;
        figures.push(f);
    }
    writer
        .flush()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(render(out, &figures, &unanchored))
}

/// The output's packet sequences: one per (input, sequence of that input), so that a merged
/// trace merged again keeps each of its processes' interned names apart (issue 36, finding 7:
/// every input got one sequence, and kernels of a merged input were named `clGetDeviceIDs`).
#[derive(Default)]
struct Sequences {
    of: HashMap<(u64, u32), u32>,
}

impl Sequences {
    fn of(&mut self, tag: u64, sequence: u32) -> u32 {
        let next = self.of.len() as u32 + 1;
        *self.of.entry((tag, sequence)).or_insert(next)
    }
}

/// How one input's IDs are rewritten: its tag (its number in the top byte of track UUIDs and
/// flow IDs) and its process and thread IDs moved where an earlier input took them (a main
/// thread moves with its process).
struct Ids {
    tag: u64,
    pids: HashMap<i32, i32>,
    tids: HashMap<i32, i32>,
}

impl Ids {
    /// The rewriting of input `i`, whose packets are `packets`; `taken` holds the process and
    /// thread IDs earlier inputs took (this one's are added).
    fn new(i: usize, taken: &mut HashSet<i32>, descriptors: &[(i32, Option<i32>)]) -> Ids {
        let mut ids = Ids {
            tag: (i as u64) << 56,
            pids: HashMap::new(),
            tids: HashMap::new(),
        };
        for &(pid, _) in descriptors {
            ids.pids.entry(pid).or_insert_with(|| free(taken, pid));
        }
        for &(pid, tid) in descriptors {
            let Some(tid) = tid else {
                continue;
            };
            if tid == pid {
                ids.tids.insert(tid, ids.pid(tid));
            } else {
                ids.tids.entry(tid).or_insert_with(|| free(taken, tid));
            }
        }
        ids
    }

    fn pid(&self, pid: i32) -> i32 {
        self.pids.get(&pid).copied().unwrap_or(pid)
    }

    /// Rewrites one packet of this input: its sequence, UUIDs, flow IDs, IDs, and time.
    fn rewrite(&self, p: &mut TracePacket, shift: i64, sequences: &mut Sequences) {
        p.set_trusted_packet_sequence_id(sequences.of(self.tag, p.trusted_packet_sequence_id()));
        if p.has_timestamp() && shift != 0 {
            p.set_timestamp(p.timestamp().saturating_add_signed(shift));
        }
        if p.has_track_descriptor() {
            let d = p.mut_track_descriptor();
            d.set_uuid(d.uuid() ^ self.tag);
            if d.has_parent_uuid() {
                d.set_parent_uuid(d.parent_uuid() ^ self.tag);
            }
            if let Some(process) = d.process.as_mut() {
                process.set_pid(self.pid(process.pid()));
            }
            if let Some(thread) = d.thread.as_mut() {
                thread.set_pid(self.pid(thread.pid()));
                let tid = self
                    .tids
                    .get(&thread.tid())
                    .copied()
                    .unwrap_or(thread.tid());
                thread.set_tid(tid);
            }
        }
        if p.has_track_event() {
            let e = p.mut_track_event();
            e.set_track_uuid(e.track_uuid() ^ self.tag);
            for f in e
                .flow_ids
                .iter_mut()
                .chain(e.terminating_flow_ids.iter_mut())
            {
                *f ^= self.tag;
            }
        }
    }
}

/// `id` if no earlier input took it, else the first free one of `id + k * 2^22` (IDs stay
/// recognisable: the low 22 bits are the original's); if all 1,024 of those are taken (a crafted
/// input: before, this looped for ever), the next free positive ID. Taken now.
fn free(taken: &mut HashSet<i32>, id: i32) -> i32 {
    let mut candidate = id;
    for _ in 0..1u32 << 10 {
        if taken.insert(candidate) {
            return candidate;
        }
        candidate = candidate.wrapping_add(1 << 22);
    }
    // At most `taken.len()` IDs are taken, so a free one lies within that many steps.
    let mut candidate = id;
    loop {
        candidate = candidate.wrapping_add(1);
        if candidate > 0 && taken.insert(candidate) {
            return candidate;
        }
    }
}

impl Figures {
    /// Counts one record of the input (its first process names the input).
    fn add(&mut self, item: crate::records::Item, first_process: &mut bool) {
        use crate::records::Item;
        match item {
            Item::Process { pid, name } if *first_process => {
                *first_process = false;
                self.pid = pid;
                self.rank = crate::identity::rank_of_name(&name);
            }
            Item::Api { .. } => self.api_calls += 1,
            Item::Device {
                kind,
                name,
                start,
                end,
                ..
            } => {
                if kind == "kernel" {
                    let ns = end.saturating_sub(start) as i64;
                    self.kernels += 1;
                    self.kernel_ns += ns;
                    let entry = self.per_kernel.entry(name).or_insert((0, 0));
                    entry.0 += 1;
                    entry.1 += ns;
                } else {
                    self.other_device_ops += 1;
                }
            }
            Item::Annotation { kind, .. } if kind == "annotation" => self.annotations += 1,
            Item::Annotation { kind, .. } if kind == "communication" => self.communication += 1,
            _ => {}
        }
    }
}

/// The summary across the inputs.
fn render(out: &Path, figures: &[Figures], unanchored: &[String]) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let shifted = figures.iter().filter(|f| f.shift != 0).count();
    let _ = writeln!(
        text,
        "pti-trace merge: {} traces into {} ({} shifted from other hosts' clocks)",
        figures.len(),
        out.display(),
        shifted
    );
    for trace in unanchored {
        let _ = writeln!(
            text,
            "pti-trace merge: {trace} has no clock anchor (written before pti-trace had one): \
             left on its own clock"
        );
    }
    let _ = writeln!(
        text,
        "{:<6} {:>8} {:<12} {:>9} {:>8} {:>12} {:>10} {:>11} {:>13}",
        "rank",
        "pid",
        "host",
        "API calls",
        "kernels",
        "kernel time",
        "other ops",
        "annotations",
        "communication"
    );
    let mut ordered: Vec<&Figures> = figures.iter().collect();
    ordered.sort_by_key(|f| (f.rank.is_none(), f.rank, f.pid));
    for f in &ordered {
        let _ = writeln!(
            text,
            "{:<6} {:>8} {:<12} {:>9} {:>8} {:>10.3}ms {:>10} {:>11} {:>13}",
            f.rank.map_or("-".to_string(), |r| r.to_string()),
            f.pid,
            if f.host.is_empty() {
                "-".to_string()
            } else {
                shorten(&f.host, 12)
            },
            f.api_calls,
            f.kernels,
            f.kernel_ns as f64 / 1e6,
            f.other_device_ops,
            f.annotations,
            f.communication
        );
    }
    let sum = |g: fn(&Figures) -> i64| figures.iter().map(g).sum::<i64>();
    let _ = writeln!(
        text,
        "{:<6} {:>8} {:<12} {:>9} {:>8} {:>10.3}ms {:>10} {:>11} {:>13}",
        "all",
        "",
        "",
        sum(|f| f.api_calls),
        sum(|f| f.kernels),
        sum(|f| f.kernel_ns) as f64 / 1e6,
        sum(|f| f.other_device_ops),
        sum(|f| f.annotations),
        sum(|f| f.communication)
    );
    // Each kernel across the processes: how evenly the work was spread.
    let mut kernels: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
    for f in figures {
        for (name, counts) in &f.per_kernel {
            kernels.entry(name).or_default().push(*counts);
        }
    }
    if !kernels.is_empty() {
        let _ = writeln!(
            text,
            "{:<40} {:>9} {:>17} {:>32}",
            "kernel across processes", "processes", "count min/max", "time per process min/avg/max"
        );
        for (name, per) in kernels {
            let counts = per.iter().map(|p| p.0);
            let times: Vec<i64> = per.iter().map(|p| p.1).collect();
            let avg = times.iter().sum::<i64>() as f64 / times.len() as f64;
            let _ = writeln!(
                text,
                "  {:<38} {:>9} {:>17} {:>32}",
                shorten(name, 38),
                per.len(),
                format!(
                    "{}/{}",
                    counts.clone().min().unwrap_or(0),
                    counts.max().unwrap_or(0)
                ),
                format!(
                    "{:.3}/{:.3}/{:.3} ms",
                    *times.iter().min().unwrap_or(&0) as f64 / 1e6,
                    avg / 1e6,
                    *times.iter().max().unwrap_or(&0) as f64 / 1e6
                )
            );
        }
    }
    text
}

/// `text` cut to `most` characters.
fn shorten(text: &str, most: usize) -> String {
    text.chars().take(most).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::ANCHOR;

    /// A one-process trace of `host` whose anchor says libpti's `at` is wall-clock `realtime`,
    /// with one instant named "work <name>" at `work`, written to a file of the temporary
    /// directory.
    fn trace(name: &str, host: &str, (at, realtime): (u64, u64), work: u64) -> PathBuf {
        use perfetto_protos::debug_annotation::DebugAnnotation;
        use perfetto_protos::interned_data::InternedData;
        use perfetto_protos::process_descriptor::ProcessDescriptor;
        use perfetto_protos::track_descriptor::TrackDescriptor;
        use perfetto_protos::track_event::track_event::Type;
        use perfetto_protos::track_event::{EventName, TrackEvent};
        let mut packets = Vec::new();
        let mut descriptor = TrackDescriptor::new();
        descriptor.set_uuid(7);
        let mut process = ProcessDescriptor::new();
        process.set_pid(42);
        process.set_process_name(format!("rank 0: {name}"));
        descriptor.process = Some(process).into();
        let mut p = TracePacket::new();
        p.set_track_descriptor(descriptor);
        p.set_trusted_packet_sequence_id(1);
        packets.push(p);
        let mut interned = InternedData::new();
        for (iid, text) in [(1, ANCHOR.to_string()), (2, format!("work {name}"))] {
            let mut n = EventName::new();
            n.set_iid(iid);
            n.set_name(text);
            interned.event_names.push(n);
        }
        for (ts, iid) in [(at, 1), (work, 2)] {
            let mut e = TrackEvent::new();
            e.set_type(Type::TYPE_INSTANT);
            e.set_track_uuid(7);
            e.set_name_iid(iid);
            if iid == 1 {
                let mut wall = DebugAnnotation::new();
                wall.set_name("realtime_ns".into());
                wall.set_uint_value(realtime);
                let mut machine = DebugAnnotation::new();
                machine.set_name("host".into());
                machine.set_string_value(host.into());
                e.debug_annotations = vec![wall, machine];
            }
            let mut p = TracePacket::new();
            p.set_timestamp(ts);
            p.set_track_event(e);
            p.set_trusted_packet_sequence_id(1);
            if iid == 1 {
                p.interned_data = Some(interned.clone()).into();
            }
            packets.push(p);
        }
        let path =
            std::env::temp_dir().join(format!("pti-merge-{}-{name}.pftrace", std::process::id()));
        let mut bytes = Vec::new();
        for p in packets {
            bytes.push(0x0A);
            bytes.extend(p.write_length_delimited_to_bytes().unwrap());
        }
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// The names of the instants of `trace`, per process, as its interned names give them.
    fn instant_names(trace: &Path) -> Vec<(i32, String)> {
        let mut names: HashMap<(u32, u64), String> = HashMap::new();
        let mut pids: HashMap<u64, i32> = HashMap::new();
        let mut out = Vec::new();
        for p in crate::packets::open(trace).unwrap().map(Result::unwrap) {
            if let Some(interned) = p.interned_data.as_ref() {
                for n in &interned.event_names {
                    names.insert((p.trusted_packet_sequence_id(), n.iid()), n.name().into());
                }
            }
            if p.has_track_descriptor() {
                let d = p.track_descriptor();
                if let Some(process) = d.process.as_ref() {
                    pids.insert(d.uuid(), process.pid());
                }
            }
            if p.has_track_event() {
                let e = p.track_event();
                let name = names[&(p.trusted_packet_sequence_id(), e.name_iid())].clone();
                out.push((pids[&e.track_uuid()], name));
            }
        }
        out
    }

    #[test]
    fn a_merged_trace_merged_again_keeps_its_names() {
        // Issue 36, finding 7: each input got one packet sequence, so the processes of a merged
        // input shared one, and their interned names collided.
        let a = trace("ma", "a", (1_000, 1_000_000), 1_500);
        let b = trace("mb", "a", (2_000, 1_001_000), 2_500);
        let c = trace("mc", "a", (3_000, 1_002_000), 3_500);
        let tmp =
            |n: &str| std::env::temp_dir().join(format!("pti-merge-{}-{n}", std::process::id()));
        let (ab, abc) = (tmp("ab.pftrace"), tmp("abc.pftrace"));
        merge(&ab, &[a, b]).unwrap();
        // In the first merge, b's names are interned with the same IDs as a's, on its own
        // sequence; merged again, they must stay on a sequence apart from a's.
        merge(&abc, &[ab, c]).unwrap();
        let names = instant_names(&abc);
        let mut work: Vec<&str> = names
            .iter()
            .map(|(_, n)| n.as_str())
            .filter(|n| *n != ANCHOR)
            .collect();
        work.sort();
        assert_eq!(work, ["work ma", "work mb", "work mc"], "{names:?}");
        let pids: HashSet<i32> = names.iter().map(|(pid, _)| *pid).collect();
        assert_eq!(pids.len(), 3, "{names:?}");
        // Each process on a sequence of its own: a trace processor sorts packets by time, so
        // two processes interning the same IDs on one sequence take each other's names.
        let packets: Vec<TracePacket> = crate::packets::open(&abc)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let pid_of: HashMap<u64, i32> = packets
            .iter()
            .filter(|p| p.has_track_descriptor())
            .filter_map(|p| {
                let d = p.track_descriptor();
                d.process.as_ref().map(|process| (d.uuid(), process.pid()))
            })
            .collect();
        let mut sequence_of: HashMap<u32, i32> = HashMap::new();
        for p in packets.iter().filter(|p| p.has_track_event()) {
            let pid = pid_of[&p.track_event().track_uuid()];
            let sequence = p.trusted_packet_sequence_id();
            let owner = *sequence_of.entry(sequence).or_insert(pid);
            assert_eq!(owner, pid, "two processes share sequence {sequence}");
        }
    }

    #[test]
    fn another_hosts_trace_is_shifted_by_the_wall_clocks_difference() {
        // Host a: libpti's 1,000 is wall 1,000,000. Host b: libpti's 5,000 is wall 1,000,500,
        // so b's clock reads 3,500 more than a's for the same moment: its 6,000 is a's 2,500.
        // A trace of host a again (another process) is left as it is.
        let a = trace("a", "a", (1_000, 1_000_000), 1_500);
        let b = trace("b", "b", (5_000, 1_000_500), 6_000);
        let a2 = trace("a2", "a", (9_000, 1_000_000), 9_500);
        let out =
            std::env::temp_dir().join(format!("pti-merge-{}-out.pftrace", std::process::id()));
        let summary = merge(&out, &[a.clone(), b.clone(), a2.clone()]).unwrap();
        assert!(
            summary.contains("(1 shifted from other hosts' clocks)"),
            "{summary}"
        );
        let packets: Vec<TracePacket> = crate::packets::open(&out)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let times: Vec<(u32, u64)> = packets
            .iter()
            .filter(|p| p.has_track_event())
            .map(|p| (p.trusted_packet_sequence_id(), p.timestamp()))
            .collect();
        assert_eq!(
            times,
            [
                (1, 1_000),
                (1, 1_500),
                (2, 1_500),
                (2, 2_500),
                (3, 9_000),
                (3, 9_500)
            ]
        );
        // Three processes of pid 42: the second and third moved.
        let pids: Vec<i32> = packets
            .iter()
            .filter(|p| p.has_track_descriptor())
            .filter_map(|p| p.track_descriptor().process.as_ref().map(|d| d.pid()))
            .collect();
        assert_eq!(pids, [42, 42 + (1 << 22), 42 + (2 << 22)]);
        for f in [a, b, a2, out] {
            let _ = std::fs::remove_file(f);
        }
    }

    #[test]
    fn an_input_that_takes_every_id_of_a_residue_still_merges() {
        // Issue 36, finding 12: 1,024 IDs equal modulo 2^22 are every ID the stride reaches.
        let mut taken: HashSet<i32> = (0..1024).map(|k| 42i32.wrapping_add(k << 22)).collect();
        let got = free(&mut taken, 42);
        assert!(
            got > 0 && !(0..1024).any(|k| got == 42i32.wrapping_add(k << 22)),
            "{got}"
        );
        assert_eq!(taken.len(), 1025);
    }

    #[test]
    fn taken_ids_move_up_and_are_kept() {
        let mut taken = HashSet::new();
        assert_eq!(free(&mut taken, 42), 42);
        assert_eq!(free(&mut taken, 42), 42 + (1 << 22));
        assert_eq!(free(&mut taken, 42), 42 + (2 << 22));
        assert_eq!(free(&mut taken, 7), 7);
    }
}
