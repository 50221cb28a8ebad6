//! `pti-trace export --otf2 OUT TRACE.pftrace...`: Perfetto traces written by pti-trace as one
//! OTF2 archive (the format of Score-P, read by Vampir, Scalasca, otf2-print), written through
//! the OTF2 C library, which `ffi` loads at run time: pti-trace starts without it, and only this
//! command needs it.
//!
//! The archive, in the directory OUT (`OUT/traces.otf2` is its anchor file, beside
//! `traces.def` and the event files under `traces/`):
//!
//! - the system tree: a root node, and under it a node per host (from each trace's clock
//!   anchor; "unknown host" for traces without one);
//! - a location group (a process) per input trace, under its host's node, named by its MPI rank
//!   ("rank 3") or, without one, by its process's name;
//! - its locations: a CPU thread per host thread with API calls, an accelerator stream per
//!   device queue, a CPU-thread location per annotation track (the program's ITT tasks and
//!   markers, per thread and domain; oneCCL's communication);
//! - each record an Enter and a Leave of a region. Regions are shared across locations, one per
//!   (name, description, role, paradigm): API calls are functions (paradigm OpenCL for OpenCL's,
//!   OTF2 3.0 has no Level Zero or SYCL paradigm: user for those), described "OpenCL call";
//!   device operations (paradigm user: a device record does not say which API submitted it)
//!   are described "device kernel", "device memcpy"..., kernels functions, copies and fills
//!   data transfers, barriers barriers, others artificial; ITT ranges are code regions
//!   described "ITT annotation"; communication operations are functions described
//!   "communication (oneCCL)". An ITT marker (no length) is an Enter and a Leave at the same
//!   time of its region, which Vampir shows as an instant on its location; OTF2's own markers
//!   (`OTF2_MarkerWriter`) are a tool's notes about a trace, not the program's events.
//!
//! Events must be in time order on each location and nest (a Leave closes the latest Enter), but
//! `records` hands slices over at their end (nested ones inner first) and a queue's lanes
//! (overlapping device operations) as one queue. So each input's records are buffered per
//! location (24 bytes per record, up to twice that as the buffers grow, plus each distinct name
//! once: a trace of 10 million records needs 240 to 480 MB while it is written; one input at a
//! time), sorted by start (ties: the
//! longer first), and laid on lanes: a record that starts inside another and ends after it goes
//! on the location's next lane, written as a location of its own ("... (overlapping 1)").
//!
//! Times: nanoseconds (the clock's resolution is 1 ns) on libpti's clock, the host's
//! `CLOCK_MONOTONIC_RAW`; a trace of a host other than the first anchored input's is shifted
//! by the difference between the two hosts' wall clocks, as `merge` shifts it. The clock
//! properties' global offset is the earliest time written, and its wall-clock time is given
//! when the first anchored input has an anchor.
//!
//! May touch: the trace files it reads, the directory OUT (created here, 0700, its files 0600;
//! never one that exists), the process's umask while the archive is written, and stderr.

mod ffi;

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::identity::{self, Identity};
use crate::records::Item;

/// The archive's name inside OUT: OUT/traces.otf2 is the anchor file.
pub(crate) const ARCHIVE: &str = "traces";

/// `pti-trace export --otf2 OUT TRACE...` (what `export_command` hands over).
pub(crate) fn command(args: Vec<OsString>) -> ExitCode {
    let Some((out, traces)) = crate::output_and_traces(args, &["--otf2"]) else {
        eprintln!(
            "pti-trace: export needs --otf2 OUT (a directory to create) and trace files\n\n{}",
            crate::USAGE
        );
        return ExitCode::from(2);
    };
    if let Some(flag) = traces
        .iter()
        .find(|t| t.to_string_lossy().starts_with("--"))
    {
        eprintln!(
            "pti-trace: export: {} with --otf2: one output per export\n\n{}",
            flag.display(),
            crate::USAGE
        );
        return ExitCode::from(2);
    }
    if std::fs::symlink_metadata(&out).is_ok() {
        eprintln!(
            "pti-trace: export: {} exists: --otf2 writes a new archive directory and replaces \
             nothing (remove it, or name another)",
            out.display()
        );
        return ExitCode::from(2);
    }
    if let Err(e) = crate::outputs::check_not_an_input(&out, &traces) {
        eprintln!("pti-trace: export: {e}");
        return ExitCode::from(2);
    }
    match export(&out, &traces) {
        Ok(written) => {
            eprintln!(
                "pti-trace: wrote {} ({} location groups, {} locations, {} regions, {} events; \
                 open {} in Vampir or otf2-print)",
                out.display(),
                written.groups,
                written.locations,
                written.regions,
                written.events,
                out.join(format!("{ARCHIVE}.otf2")).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pti-trace: export: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What an export wrote.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Written {
    pub(crate) groups: usize,
    pub(crate) locations: usize,
    pub(crate) regions: usize,
    pub(crate) events: u64,
}

/// Writes `traces` as the OTF2 archive `out` (a directory that must not exist). Every input is
/// checked to be a trace, and the library loaded, before anything is created; on an error after
/// that, the directory is removed.
pub(crate) fn export(out: &Path, traces: &[PathBuf]) -> Result<Written, String> {
    let identities = traces
        .iter()
        .map(|t| identity::of(t))
        .collect::<Result<Vec<_>, _>>()?;
    ffi::available()?;
    create_directory(out)?;
    // The archive's files private to their owner, as every other output of pti-trace.
    let umask = set_umask(0o077);
    let result = write(out, traces, &identities);
    set_umask(umask);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(out);
    }
    result
}

/// Creates `out`, 0700: an error if anything is there (a symbolic link too).
fn create_directory(out: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(out)
        .map_err(|e| format!("{}: {e}", out.display()))
}

/// Sets the process's umask; returns the one before.
fn set_umask(mask: libc::mode_t) -> libc::mode_t {
    // SAFETY: umask only swaps the process's mask; it cannot fail.
    unsafe { libc::umask(mask) }
}

/// One record as a location holds it until written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Interval {
    start: u64,
    end: u64,
    region: u32,
    /// Which of its location's lanes (set by [`lanes`]).
    lane: u32,
}

/// A location's records, sorted by start (ties: the longer first), each given the lowest lane on
/// which it nests properly: it starts after the lane's open records that ended, and ends no
/// later than the innermost that is still open. Returns how many lanes there are.
fn lanes(intervals: &mut [Interval]) -> u32 {
    intervals.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    // Per lane, the ends of its open records, innermost last.
    let mut open: Vec<Vec<u64>> = Vec::new();
    for interval in intervals.iter_mut() {
        let mut placed = None;
        for (lane, stack) in open.iter_mut().enumerate() {
            // What ended is closed: later records start no earlier than this one.
            while stack.last().is_some_and(|end| *end <= interval.start) {
                stack.pop();
            }
            if placed.is_none() && stack.last().is_none_or(|end| *end >= interval.end) {
                stack.push(interval.end);
                placed = Some(lane);
            }
        }
        let lane = placed.unwrap_or_else(|| {
            open.push(vec![interval.end]);
            open.len() - 1
        });
        interval.lane = lane as u32;
    }
    open.len() as u32
}

/// An event of a location, in writing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Enter(u64, u32),
    Leave(u64, u32),
}

/// The events of lane `lane` of `intervals` (as [`lanes`] left them), handed to `emit` in time
/// order, properly nested.
fn events(
    intervals: &[Interval],
    lane: u32,
    mut emit: impl FnMut(Event) -> Result<(), String>,
) -> Result<(), String> {
    let mut open: Vec<&Interval> = Vec::new();
    for interval in intervals.iter().filter(|i| i.lane == lane) {
        while let Some(top) = open.last().filter(|top| top.end <= interval.start) {
            emit(Event::Leave(top.end, top.region))?;
            open.pop();
        }
        emit(Event::Enter(interval.start, interval.region))?;
        open.push(interval);
    }
    while let Some(top) = open.pop() {
        emit(Event::Leave(top.end, top.region))?;
    }
    Ok(())
}

/// Strings of the definitions, each once.
#[derive(Default)]
struct Strings {
    ids: HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, text: &str) -> u32 {
        if let Some(id) = self.ids.get(text) {
            return *id;
        }
        let id = self.list.len() as u32;
        self.ids.insert(text.to_string(), id);
        self.list.push(text.to_string());
        id
    }
}

/// A region's definition: its name's and description's strings, role and paradigm.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Region {
    name: u32,
    description: u32,
    role: ffi::RegionRole,
    paradigm: ffi::Paradigm,
}

/// What a region is, from a record: (description, role, paradigm).
fn kind_of(item: &Item) -> Option<(String, ffi::RegionRole, ffi::Paradigm)> {
    Some(match item {
        Item::Api { group, .. } => (
            format!("{group} call"),
            ffi::ROLE_FUNCTION,
            if group == "OpenCL" {
                ffi::PARADIGM_OPENCL
            } else {
                ffi::PARADIGM_USER
            },
        ),
        Item::Device { kind, .. } => (
            format!("device {kind}"),
            match kind.as_str() {
                "kernel" => ffi::ROLE_FUNCTION,
                "memcpy" | "memfill" => ffi::ROLE_DATA_TRANSFER,
                "barrier" => ffi::ROLE_BARRIER,
                _ => ffi::ROLE_ARTIFICIAL,
            },
            ffi::PARADIGM_USER,
        ),
        Item::Annotation { kind, .. } if kind == "communication" => (
            "communication (oneCCL)".to_string(),
            ffi::ROLE_FUNCTION,
            ffi::PARADIGM_USER,
        ),
        Item::Annotation { .. } => (
            "ITT annotation".to_string(),
            ffi::ROLE_CODE,
            ffi::PARADIGM_USER,
        ),
        _ => return None,
    })
}

/// Which location of a process a record goes on; ordered as the locations are numbered.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Thread(i64),
    /// (device, queue).
    Queue(String, String),
    /// The annotation track's name.
    Annotations(String),
}

/// Definitions gathered while the events are written.
#[derive(Default)]
struct Gathered {
    strings: Strings,
    regions: HashMap<Region, u32>,
    region_list: Vec<Region>,
    /// (id, name, type, events, group).
    locations: Vec<(u64, u32, ffi::LocationType, u64, u32)>,
    /// The earliest and latest time written.
    first: Option<u64>,
    last: u64,
    events: u64,
}

impl Gathered {
    fn region(&mut self, name: &str, (description, role, paradigm): (String, u8, u8)) -> u32 {
        let region = Region {
            name: self.strings.id(name),
            description: self.strings.id(&description),
            role,
            paradigm,
        };
        let next = self.region_list.len() as u32;
        *self.regions.entry(region).or_insert_with(|| {
            self.region_list.push(region);
            next
        })
    }
}

/// The archive's body: every input's events, then the definitions.
fn write(out: &Path, traces: &[PathBuf], identities: &[Identity]) -> Result<Written, String> {
    let mut archive = ffi::Archive::create(
        out,
        ARCHIVE,
        &format!("pti-trace {}", env!("CARGO_PKG_VERSION")),
    )?;
    let reference = identities.iter().find_map(|i| i.anchor.clone());
    archive.describe(&format!(
        "pti-trace export of {} trace(s); times in ns on {} of {}",
        traces.len(),
        identity::CLOCK,
        reference
            .as_ref()
            .map_or("each trace's host", |a| a.host.as_str())
    ))?;
    let mut gathered = Gathered::default();
    for (group, (trace, who)) in traces.iter().zip(identities).enumerate() {
        let shift = identity::shift(who.anchor.as_ref(), reference.as_ref()).unwrap_or_else(|| {
            eprintln!(
                "pti-trace: export: {} has no clock anchor (written before pti-trace had one): \
                 left on its own clock",
                trace.display()
            );
            0
        });
        write_trace(&mut archive, &mut gathered, trace, group as u32, shift)?;
    }
    let locations: Vec<u64> = gathered.locations.iter().map(|l| l.0).collect();
    archive.definitions(locations, |defs| {
        define(defs, &mut gathered, identities, reference.as_ref())
    })?;
    archive.close()?;
    Ok(Written {
        groups: identities.len(),
        locations: gathered.locations.len(),
        regions: gathered.region_list.len(),
        events: gathered.events,
    })
}

/// Reads one trace, buffering its records per location, and writes each location's events.
fn write_trace(
    archive: &mut ffi::Archive,
    gathered: &mut Gathered,
    trace: &Path,
    group: u32,
    shift: i64,
) -> Result<(), String> {
    let mut places: BTreeMap<Place, Vec<Interval>> = BTreeMap::new();
    let mut thread_names: HashMap<i64, String> = HashMap::new();
    crate::records::each(trace, |item| {
        let Some(kind) = kind_of(&item) else {
            if let Item::Thread { tid, name, .. } = item {
                thread_names.insert(tid, name);
            }
            return Ok(());
        };
        let (place, name, start, end) = match item {
            Item::Api {
                tid,
                name,
                start,
                end,
                ..
            } => (Place::Thread(tid), name, start, end),
            Item::Device {
                device,
                queue,
                name,
                start,
                end,
                ..
            } => (Place::Queue(device, queue), name, start, end),
            Item::Annotation {
                track,
                name,
                start,
                end,
                ..
            } => (Place::Annotations(track), name, start, end),
            _ => return Ok(()),
        };
        let region = gathered.region(&name, kind);
        let start = start.saturating_add_signed(shift);
        let end = end.saturating_add_signed(shift).max(start);
        places.entry(place).or_default().push(Interval {
            start,
            end,
            region,
            lane: 0,
        });
        Ok(())
    })?;
    for (place, mut intervals) in places {
        let (name, kind) = match &place {
            Place::Thread(tid) => (
                match thread_names.get(tid).filter(|n| !n.is_empty()) {
                    // "main thread 21446": already says which.
                    Some(name) if name.contains(&tid.to_string()) => name.clone(),
                    Some(name) => format!("thread {tid} ({name})"),
                    None => format!("thread {tid}"),
                },
                ffi::LOCATION_CPU_THREAD,
            ),
            Place::Queue(device, queue) if device.is_empty() => {
                (queue.clone(), ffi::LOCATION_ACCELERATOR_STREAM)
            }
            Place::Queue(device, queue) => (
                format!("{queue} on {device}"),
                ffi::LOCATION_ACCELERATOR_STREAM,
            ),
            Place::Annotations(track) => (track.clone(), ffi::LOCATION_CPU_THREAD),
        };
        let count = lanes(&mut intervals);
        if let (Some(first), Some(last)) = (
            intervals.first().map(|i| i.start),
            intervals.iter().map(|i| i.end).max(),
        ) {
            gathered.first = Some(gathered.first.map_or(first, |f| f.min(first)));
            gathered.last = gathered.last.max(last);
        }
        for lane in 0..count {
            let id = gathered.locations.len() as u64;
            let mut writer = archive.events(id)?;
            let mut written = 0u64;
            events(&intervals, lane, |event| {
                written += 1;
                match event {
                    Event::Enter(time, region) => writer.enter(time, region),
                    Event::Leave(time, region) => writer.leave(time, region),
                }
            })?;
            writer.close()?;
            let name = if lane == 0 {
                name.clone()
            } else {
                format!("{name} (overlapping {lane})")
            };
            let name = gathered.strings.id(&name);
            gathered.locations.push((id, name, kind, written, group));
            gathered.events += written;
        }
    }
    Ok(())
}

/// The global definitions: clock, strings, paradigm, system tree, location groups, locations,
/// regions.
fn define(
    defs: &mut ffi::Definitions<'_>,
    gathered: &mut Gathered,
    identities: &[Identity],
    reference: Option<&identity::Anchor>,
) -> Result<(), String> {
    let first = gathered.first.unwrap_or(0);
    let realtime = reference.map_or(ffi::UNDEFINED_TIMESTAMP, |r| {
        first.saturating_add_signed(r.to_realtime())
    });
    defs.clock(
        1_000_000_000,
        first,
        gathered.last.saturating_sub(first),
        realtime,
    )?;
    // Every string the definitions name, before they are written.
    let strings = &mut gathered.strings;
    let opencl = strings.id("OpenCL");
    let root = (strings.id("pti-trace"), strings.id("machine"));
    let node_class = strings.id("node");
    let mut hosts: Vec<String> = Vec::new();
    let mut groups = Vec::new();
    for who in identities {
        let host = who.host.clone().unwrap_or_else(|| "unknown host".into());
        let node = match hosts.iter().position(|h| *h == host) {
            Some(n) => n,
            None => {
                hosts.push(host);
                hosts.len() - 1
            }
        };
        let name = match who.rank {
            Some(rank) => format!("rank {rank}"),
            None if who.name.is_empty() => format!("process {}", who.pid),
            None => who.name.clone(),
        };
        groups.push((strings.id(&name), node as u32 + 1));
    }
    let host_names: Vec<u32> = hosts.iter().map(|h| strings.id(h)).collect();
    for (id, text) in strings.list.iter().enumerate() {
        defs.string(id as u32, text)?;
    }
    if gathered
        .region_list
        .iter()
        .any(|r| r.paradigm == ffi::PARADIGM_OPENCL)
    {
        defs.paradigm(
            ffi::PARADIGM_OPENCL,
            opencl,
            ffi::PARADIGM_CLASS_ACCELERATOR,
        )?;
    }
    defs.system_tree_node(0, root.0, root.1, ffi::UNDEFINED_SYSTEM_TREE_NODE)?;
    for (i, name) in host_names.iter().enumerate() {
        defs.system_tree_node(i as u32 + 1, *name, node_class, 0)?;
    }
    for (id, (name, node)) in groups.iter().enumerate() {
        defs.location_group(id as u32, *name, ffi::LOCATION_GROUP_PROCESS, *node)?;
    }
    for &(id, name, kind, events, group) in &gathered.locations {
        defs.location(id, name, kind, events, group)?;
    }
    for (id, r) in gathered.region_list.iter().enumerate() {
        defs.region(id as u32, r.name, r.description, r.role, r.paradigm)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start: u64, end: u64, region: u32) -> Interval {
        Interval {
            start,
            end,
            region,
            lane: 0,
        }
    }

    /// The events of every lane: (lane, events).
    fn all_events(intervals: &mut [Interval]) -> Vec<(u32, Vec<Event>)> {
        let count = lanes(intervals);
        (0..count)
            .map(|lane| {
                let mut out = Vec::new();
                events(intervals, lane, |e| {
                    out.push(e);
                    Ok(())
                })
                .unwrap();
                (lane, out)
            })
            .collect()
    }

    /// Checks that `events` are in time order and nest: every Leave closes the latest Enter,
    /// none is left open.
    fn assert_well_formed(events: &[Event]) {
        let mut time = 0;
        let mut open = Vec::new();
        for e in events {
            let (t, region) = match *e {
                Event::Enter(t, r) => {
                    open.push(r);
                    (t, r)
                }
                Event::Leave(t, r) => {
                    assert_eq!(open.pop(), Some(r), "{events:?}");
                    (t, r)
                }
            };
            assert!(t >= time, "time goes back at {region}: {events:?}");
            time = t;
        }
        assert!(open.is_empty(), "{events:?}");
    }

    #[test]
    fn nested_records_arriving_inner_first_are_written_outer_first() {
        // As records arrive: slices at their end, the inner one (2) before the outer (1), then a
        // marker (3, no length) inside the outer, then one after (4) that starts where 1 ends.
        let mut intervals = vec![
            interval(20, 30, 2),
            interval(40, 40, 3),
            interval(10, 50, 1),
            interval(50, 60, 4),
        ];
        let got = all_events(&mut intervals);
        use Event::{Enter, Leave};
        assert_eq!(
            got,
            [(
                0,
                vec![
                    Enter(10, 1),
                    Enter(20, 2),
                    Leave(30, 2),
                    Enter(40, 3),
                    Leave(40, 3),
                    Leave(50, 1),
                    Enter(50, 4),
                    Leave(60, 4),
                ]
            )]
        );
        assert_well_formed(&got[0].1);
    }

    #[test]
    fn equal_starts_put_the_longer_outside() {
        let mut intervals = vec![interval(10, 20, 2), interval(10, 30, 1)];
        let got = all_events(&mut intervals);
        use Event::{Enter, Leave};
        assert_eq!(
            got,
            [(
                0,
                vec![Enter(10, 1), Enter(10, 2), Leave(20, 2), Leave(30, 1)]
            )]
        );
    }

    #[test]
    fn overlapping_records_go_on_further_lanes() {
        // 2 starts inside 1 and ends after it: a second lane. 3 fits the first lane again once 1
        // ended, 5 nests in 3, and 4 (starting inside 3, ending after it) takes the second lane,
        // free again once 2 ended.
        let mut intervals = vec![
            interval(0, 10, 1),
            interval(5, 15, 2),
            interval(12, 20, 3),
            interval(13, 14, 5),
            interval(16, 25, 4),
        ];
        let got = all_events(&mut intervals);
        use Event::{Enter, Leave};
        assert_eq!(
            got,
            [
                (
                    0,
                    vec![
                        Enter(0, 1),
                        Leave(10, 1),
                        Enter(12, 3),
                        Enter(13, 5),
                        Leave(14, 5),
                        Leave(20, 3)
                    ]
                ),
                (
                    1,
                    vec![Enter(5, 2), Leave(15, 2), Enter(16, 4), Leave(25, 4)]
                ),
            ]
        );
        for (_, events) in &got {
            assert_well_formed(events);
        }
    }

    #[test]
    fn any_order_of_records_writes_well_formed_lanes() {
        // A pseudo-random mix of nested, overlapping and zero-length records: every record is
        // written once, on a lane whose events are in order and nest.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut intervals: Vec<Interval> = (0..2000)
            .map(|i| {
                let start = next() % 10_000;
                let length = if i % 7 == 0 { 0 } else { next() % 300 };
                interval(start, start + length, i)
            })
            .collect();
        let got = all_events(&mut intervals);
        let mut entered: Vec<u32> = Vec::new();
        for (_, events) in &got {
            assert_well_formed(events);
            entered.extend(events.iter().filter_map(|e| match e {
                Event::Enter(_, r) => Some(*r),
                Event::Leave(..) => None,
            }));
        }
        entered.sort();
        assert_eq!(entered, (0..2000).collect::<Vec<u32>>());
    }

    #[test]
    fn regions_are_shared_by_name_and_kind() {
        let mut g = Gathered::default();
        let api = |group: &str| Item::Api {
            pid: 1,
            tid: 1,
            name: "clFinish".into(),
            group: group.into(),
            correlation: None,
            start: 0,
            end: 1,
        };
        let a = g.region("clFinish", kind_of(&api("OpenCL")).unwrap());
        let b = g.region("clFinish", kind_of(&api("OpenCL")).unwrap());
        let c = g.region("clFinish", kind_of(&api("Level Zero")).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(g.region_list.len(), 2);
        assert_eq!(g.region_list[0].paradigm, ffi::PARADIGM_OPENCL);
        assert_eq!(g.region_list[1].paradigm, ffi::PARADIGM_USER);
    }
}
