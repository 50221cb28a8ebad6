//! pti-trace on real programs, one module per feature; the helpers they share are here.
//!
//! - `timeline`: the JSON and Perfetto timelines of the OpenCL, SYCL and Level Zero programs: a
//!   track per device queue, non-negative durations, a flow from the API call with the same
//!   correlation ID to every device operation, the summary's counts equal to the timeline's;
//! - `summary`: the summary, its options and exit codes, the CSV and SQLite exports, `check`;
//! - `processes`: child processes, exits, signals, relative paths, MPI ranks and `merge`;
//! - `capture`: pausing, resuming, `--delay` and `--duration`;
//! - `memory`: long runs in bounded memory, `--max-size`;
//! - `dataset`: the Parquet dataset of many ranks' traces, queried by DuckDB and Spark;
//! - `files`: outputs created carefully (no link followed, nothing overwritten);
//! - `hostile`: hostile options, paths and environments;
//! - `otf2`: the OTF2 export of MPI ranks' traces, read back with otf2-print.

#[path = "pti_trace/capture.rs"]
mod capture;
#[path = "pti_trace/dataset.rs"]
mod dataset;
#[path = "pti_trace/files.rs"]
mod files;
#[path = "pti_trace/hostile.rs"]
mod hostile;
#[path = "pti_trace/memory.rs"]
mod memory;
#[path = "pti_trace/otf2.rs"]
mod otf2;
#[path = "pti_trace/processes.rs"]
mod processes;
#[path = "pti_trace/summary.rs"]
mod summary;
#[path = "pti_trace/timeline.rs"]
mod timeline;

use pti_tests::{
    Adapter, compile_c_with, lib_dir, out_dir, root, scratch_dir, sycl_over_level_zero,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Device operations sit on tracks from this ID on (the queue tracks; see the collector).
const QUEUE_TRACKS: u64 = 1 << 30;

fn pti_trace() -> PathBuf {
    let exe = lib_dir().join("pti-trace");
    assert!(
        exe.exists() && lib_dir().join("libpti_trace_collector.so").exists(),
        "{} or its collector is missing: build them with `cargo build -p pti-trace -p \
         pti-trace-collector` (`cargo xtask test` does)",
        exe.display()
    );
    exe
}

/// libpti and the collector, as pti-trace preloads them (for tests that load the collector
/// without pti-trace).
fn lib_dir_of_trace() -> (PathBuf, PathBuf) {
    pti_trace();
    (
        lib_dir().join("libpti.so.0"),
        lib_dir().join("libpti_trace_collector.so"),
    )
}

fn opencl_program() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        compile_c_with(
            "cl_plain",
            &["tests/c/cl_plain.c", "tests/c/cl_workload.c"],
            &["-lOpenCL"],
        )
    })
}

/// The OpenCL program that loops (forever, or as many launches as its argument says), compiled
/// once per test binary.
fn looping_program() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c_with("cl_forever", &["tests/c/cl_forever.c"], &["-lOpenCL"]))
}

/// The MPI test program (tests/c/mpi_ranks.c), built with Open MPI's `mpicc`.
fn mpi_program() -> PathBuf {
    let exe = out_dir().join("mpi_ranks");
    let built = Command::new("mpicc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-Itests/c"])
        .arg(root().join("tests/c/mpi_ranks.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lOpenCL")
        .current_dir(root())
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run mpicc ({e}): `cargo xtask setup` installs Open MPI (libopenmpi-dev)")
        });
    assert!(built.success(), "mpicc failed on tests/c/mpi_ranks.c");
    exe
}

/// The MPI program's four ranks run by `mpirun`, each under pti-trace, on PoCL: rank R launches
/// (R + 1) * `launches` kernels and writes `dir/trace.rankR.<pid>.pftrace`.
fn traced_mpi_ranks(dir: &Path, launches: usize) -> Output {
    // PoCL's kernel cache filled by one process first: ranks that all compile the kernel into an
    // empty cache at once can fail (seen once in 8 ranks on a cold CI run, `cargo xtask scale`).
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        run(mpirun(1)
            .arg(mpi_program())
            .arg("1")
            .env("PTI_TEST_PLATFORM", "Portable")
            .env_remove("OPENCL_LAYERS"));
    });
    run(mpirun_under_pti_trace(dir)
        .arg("--")
        .arg(mpi_program())
        .arg(launches.to_string())
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS"))
}

/// `mpirun` starting `ranks` ranks of what follows.
fn mpirun(ranks: u32) -> Command {
    let mut cmd = Command::new("mpirun");
    // Open MPI as root on 2 cores: --allow-run-as-root, --oversubscribe; no cross-memory
    // attach in a container.
    cmd.args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    cmd
}

/// `mpirun` starting 4 ranks, each under pti-trace writing `dir/trace.rank<r>.<pid>.pftrace`:
/// the program (after "--") follows.
fn mpirun_under_pti_trace(dir: &Path) -> Command {
    let mut cmd = mpirun(4);
    cmd.arg(pti_trace())
        .arg("-o")
        .arg(dir.join("trace.rank%r.%p.pftrace"));
    cmd
}

/// `pti-trace merge` of `traces` into `out`: the summary it printed.
fn merge_summary(out: &Path, traces: &[PathBuf]) -> String {
    let printed = run(Command::new(pti_trace())
        .arg("merge")
        .arg("-o")
        .arg(out)
        .args(traces));
    String::from_utf8_lossy(&printed.stdout).into_owned()
}

/// pti-trace with `options`, writing each process's Perfetto trace into `dir`; the program
/// follows.
fn pti_trace_into(dir: &Path, options: &[&str]) -> Command {
    let mut cmd = Command::new(pti_trace());
    cmd.args(options)
        .arg("-o")
        .arg(dir.join("trace.%p.pftrace"));
    cmd
}

/// A fresh directory for one test's timelines.
fn scratch(name: &str) -> PathBuf {
    scratch_dir(&format!("pti-trace-{name}"))
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({})\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// One process's summary rows: per section ("api", "device", "memory"), count by name.
type Summary = HashMap<&'static str, BTreeMap<String, u64>>;

/// The timelines a run wrote, as pti-trace's lines name them.
fn timelines(stderr: &str) -> Vec<PathBuf> {
    stderr
        .lines()
        .filter_map(|l| l.split(" written to ").nth(1))
        .map(|rest| PathBuf::from(rest.split(" (").next().unwrap()))
        .collect()
}

/// One process's summary: rows by name, per section ("API calls", "Device work").
fn summaries(stderr: &str) -> Vec<Summary> {
    let mut out: Vec<Summary> = Vec::new();
    let mut section: Option<&'static str> = None;
    for line in stderr.lines() {
        if line.starts_with("pti-trace: summary of process") {
            out.push(HashMap::new());
            section = None;
        } else if let Some(rest) = line.strip_prefix("memory: ") {
            // "memory: N allocations (B bytes), R releases by the SYCL runtime"
            let words: Vec<&str> = rest.split_whitespace().collect();
            let m = out.last_mut().unwrap().entry("memory").or_default();
            m.insert("allocations".into(), words[0].parse().unwrap());
            m.insert("releases".into(), words[4].parse().unwrap());
            section = None;
        } else if line.starts_with("API calls ") {
            section = Some("api");
        } else if line.starts_with("Device work ") {
            section = Some("device");
        } else if let (Some(s), Some(row)) = (section, line.strip_prefix("  ")) {
            // "  name [group]   count total avg min max share": the count is the 6th field from
            // the end.
            let fields: Vec<&str> = row.split_whitespace().collect();
            let n = fields.len();
            let name = fields[..n - 6].join(" ");
            let count: u64 = fields[n - 6].parse().unwrap();
            out.last_mut()
                .unwrap()
                .entry(s)
                .or_default()
                .insert(name, count);
        } else {
            section = None;
        }
    }
    out
}

/// What a timeline shows, checked.
struct Checked {
    api_events: usize,
    device_events: usize,
    queues: usize,
    /// Level Zero engines whose tracks hold device work.
    engines: usize,
}

/// Checks one timeline against its process's summary rows.
fn check_timeline(path: &Path, summary: &Summary) -> Checked {
    let text = std::fs::read_to_string(path).unwrap();
    let json: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let events = json["traceEvents"].as_array().expect("traceEvents");
    let num = |e: &Value, k: &str| e[k].as_f64().unwrap_or_else(|| panic!("{k} of {e}"));
    let is_api = |e: &Value| {
        e["ph"] == "X"
            && ["OpenCL", "Level Zero", "SYCL runtime"].contains(&e["cat"].as_str().unwrap_or(""))
    };
    let on_queue = |e: &Value| e["ph"] == "X" && e["tid"].as_u64().unwrap() >= QUEUE_TRACKS;

    // Durations are never negative; every slice of a call or of device work has a correlation
    // ID (the program's annotations have none: Intel's CPU runtime's TBB annotates its parallel
    // loops through ITT).
    for e in events.iter().filter(|e| e["ph"] == "X") {
        assert!(num(e, "dur") >= 0.0, "negative duration: {e}");
        if e["cat"] == "annotation" || e["cat"] == "communication" {
            continue;
        }
        assert!(
            e["args"]["correlation_id"].is_u64(),
            "no correlation ID: {e}"
        );
    }
    // A named track per queue that has device work.
    let names: HashMap<u64, String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let device: Vec<&Value> = events.iter().filter(|e| on_queue(e)).collect();
    // Each queue's work is on tracks named for that queue alone, by number and device, never by
    // a handle.
    let mut queues: HashMap<String, String> = HashMap::new();
    for d in &device {
        let track = &names[&d["tid"].as_u64().unwrap()];
        let queue = d["args"]["queue"].as_str().unwrap();
        let label = track.split(" (overlap").next().unwrap().to_string();
        assert!(
            label.starts_with("queue ") && label.contains(" on device ") && !label.contains("0x"),
            "{d} on track {track:?}"
        );
        let first = queues.entry(queue.to_string()).or_insert(label.clone());
        assert_eq!(*first, label, "queue {queue} on two tracks");
    }
    let labels: HashSet<&String> = queues.values().collect();
    assert_eq!(
        labels.len(),
        queues.len(),
        "two queues share a track: {queues:?}"
    );
    let engines: HashSet<&str> = labels
        .iter()
        .filter_map(|l| l.split_once(" on ").map(|(_, place)| place))
        .filter(|place| place.contains(", engine group "))
        .collect();
    // Every device slice names the flow that ends inside it; that flow starts inside an API
    // slice of the same correlation ID.
    let ends = |ph: &str| -> HashMap<u64, &Value> {
        events
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| (e["id"].as_u64().unwrap(), e))
            .collect()
    };
    let (starts, finishes) = (ends("s"), ends("f"));
    let apis: Vec<&Value> = events.iter().filter(|e| is_api(e)).collect();
    let inside = |e: &Value, slice: &Value| {
        e["tid"] == slice["tid"]
            && num(slice, "ts") <= num(e, "ts")
            && num(e, "ts") <= num(slice, "ts") + num(slice, "dur")
    };
    for d in &device {
        let corr = &d["args"]["correlation_id"];
        let id = d["args"]["flow_id"]
            .as_u64()
            .unwrap_or_else(|| panic!("no flow_id on {d}"));
        let finish = finishes[&id];
        assert!(inside(finish, d), "flow {id} ends outside {d}");
        let start = starts[&id];
        assert!(
            apis.iter()
                .any(|a| inside(start, a) && &a["args"]["correlation_id"] == corr),
            "the flow to {d} starts in no API call of correlation ID {corr}"
        );
    }
    assert_eq!(finishes.len(), device.len(), "one flow per device slice");
    // The summary counts what the timeline holds.
    let count = |filter: &dyn Fn(&Value) -> bool, key: &dyn Fn(&Value) -> String| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for e in events.iter().filter(|e| filter(e)) {
            *m.entry(key(e)).or_default() += 1;
        }
        m
    };
    let api_counts = count(&is_api, &|e| {
        format!(
            "{} [{}]",
            e["name"].as_str().unwrap(),
            e["cat"].as_str().unwrap()
        )
    });
    let device_counts = count(&on_queue, &|e| e["name"].as_str().unwrap().to_string());
    assert_eq!(
        summary.get("api").cloned().unwrap_or_default(),
        api_counts,
        "API rows of the summary"
    );
    assert_eq!(
        summary.get("device").cloned().unwrap_or_default(),
        device_counts,
        "device rows of the summary"
    );
    Checked {
        api_events: apis.len(),
        device_events: device.len(),
        queues: queues.len(),
        engines: engines.len(),
    }
}

/// The program's own lines, which tracing must not change.
fn program_lines(stdout: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.starts_with("W RESULT") || l.starts_with("W EVENTS"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Checks a Perfetto trace (`.pftrace`) as Perfetto needs it to show it, and against its
/// process's summary rows:
/// - it parses as a `Trace`; one packet sequence, whose first packet clears the incremental
///   state and whose events say they need it;
/// - every event's track is declared before the event, every interned name before its use;
/// - every flow ID has one start and one end, the start no later than the end;
/// - once sorted by time as trace processors sort (stably), each track's slices nest: every
///   END closes an open slice, none stays open;
/// - every device slice's flow starts inside an API slice of its correlation ID on the
///   submitting thread;
/// - the API and device slices, counted by name, are the summary's rows.
fn check_perfetto(path: &Path, summary: &Summary) -> Checked {
    use perfetto_protos::trace::Trace;
    use perfetto_protos::track_event::track_event::Type;
    use protobuf::Message as _;

    let bytes = std::fs::read(path).unwrap();
    let trace = Trace::parse_from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("{} does not parse as a Perfetto trace: {e}", path.display()));
    assert!(!trace.packet.is_empty(), "{}: no packet", path.display());

    /// One event, in file order.
    struct Ev {
        ts: u64,
        track: u64,
        kind: Type,
        name: String,
        category: String,
        correlation: Option<u64>,
        flow_out: Vec<u64>,
        flow_in: Vec<u64>,
    }
    let mut tracks: HashMap<u64, (bool, String)> = HashMap::new(); // uuid -> (is a thread, name)
    let mut parents: HashMap<u64, u64> = HashMap::new();
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut events = Vec::new();
    let mut counters = 0usize;
    for (i, p) in trace.packet.iter().enumerate() {
        assert_eq!(p.trusted_packet_sequence_id(), 1, "packet {i}: sequence");
        if i == 0 {
            assert_eq!(
                p.sequence_flags(),
                1,
                "the first packet clears the incremental state"
            );
        }
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(n.iid(), n.name().to_string());
            }
        }
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            let is_thread = d.thread.is_some();
            tracks.insert(d.uuid(), (is_thread, d.name().to_string()));
            if d.has_parent_uuid() {
                parents.insert(d.uuid(), d.parent_uuid());
            }
        }
        if p.has_track_event() {
            let e = p.track_event();
            assert_eq!(
                p.sequence_flags(),
                2,
                "packet {i}: an event needs the incremental state"
            );
            assert!(
                tracks.contains_key(&e.track_uuid()),
                "packet {i}: undeclared track"
            );
            let kind = e.type_();
            if kind == Type::TYPE_COUNTER {
                counters += 1;
                let (_, track) = &tracks[&e.track_uuid()];
                assert!(
                    !track.is_empty(),
                    "packet {i}: a counter on an unnamed track"
                );
                continue;
            }
            let name = if kind == Type::TYPE_SLICE_END {
                String::new()
            } else {
                names
                    .get(&e.name_iid())
                    .unwrap_or_else(|| panic!("packet {i}: name {} not interned", e.name_iid()))
                    .clone()
            };
            events.push(Ev {
                ts: p.timestamp(),
                track: e.track_uuid(),
                kind,
                name,
                category: e.categories.first().cloned().unwrap_or_default(),
                correlation: e
                    .debug_annotations
                    .iter()
                    .find(|a| a.name() == "correlation_id")
                    .map(|a| a.uint_value()),
                flow_out: e.flow_ids.clone(),
                flow_in: e.terminating_flow_ids.clone(),
            });
        }
    }
    // Flows: one start, one end, forward in time.
    let mut starts: HashMap<u64, usize> = HashMap::new();
    let mut ends: HashMap<u64, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        for f in &e.flow_out {
            assert!(starts.insert(*f, i).is_none(), "flow {f} starts twice");
        }
        for f in &e.flow_in {
            assert!(ends.insert(*f, i).is_none(), "flow {f} ends twice");
        }
    }
    assert_eq!(
        starts.keys().collect::<HashSet<_>>(),
        ends.keys().collect::<HashSet<_>>(),
        "unpaired flows"
    );
    for (f, s) in &starts {
        assert!(
            events[*s].ts <= events[ends[f]].ts,
            "flow {f} runs backwards in time"
        );
    }
    // Nesting per track, after a stable sort by time; the slices with their intervals.
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].ts);
    let mut open: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut slices: Vec<(usize, u64)> = Vec::new(); // (begin event, end time)
    for &i in &order {
        let e = &events[i];
        match e.kind {
            Type::TYPE_SLICE_BEGIN => open.entry(e.track).or_default().push(i),
            Type::TYPE_SLICE_END => {
                let b = open
                    .get_mut(&e.track)
                    .and_then(Vec::pop)
                    .unwrap_or_else(|| panic!("an END at {} closes no slice", e.ts));
                slices.push((b, e.ts));
            }
            _ => {}
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open");
    let on_thread = |i: usize| tracks[&events[i].track].0;
    // The program's own annotations (TBB's, under Intel's CPU runtime) are neither.
    let annotation =
        |i: usize| ["annotation", "communication"].contains(&events[i].category.as_str());
    let api: Vec<&(usize, u64)> = slices
        .iter()
        .filter(|(b, _)| on_thread(*b) && !annotation(*b))
        .collect();
    let device: Vec<&(usize, u64)> = slices
        .iter()
        .filter(|(b, _)| !on_thread(*b) && !annotation(*b))
        .collect();
    let (mut queues, mut engines) = (HashSet::new(), HashSet::new());
    for (b, _) in &device {
        let d = &events[*b];
        let track = &tracks[&d.track].1;
        assert!(
            track.starts_with("queue "),
            "device work on track {track:?}"
        );
        // A queue sits under its device, directly or under one of its engines.
        let parent = &tracks[&parents[&d.track]].1;
        let device = if parent.starts_with("engine: group ") {
            engines.insert(parents[&d.track]);
            &tracks[&parents[&parents[&d.track]]].1
        } else {
            parent
        };
        assert!(
            device.starts_with("device ") && !device.starts_with("device ?"),
            "{track:?} is under {parent:?}, not under a device"
        );
        queues.insert(track.split(' ').nth(1).unwrap().to_string());
        let flow = d
            .flow_in
            .first()
            .unwrap_or_else(|| panic!("{} has no flow", d.name));
        let src = &events[starts[flow]];
        assert!(
            api.iter().any(|(a, end)| {
                let a = &events[*a];
                a.track == src.track
                    && a.ts <= src.ts
                    && src.ts <= *end
                    && a.correlation == d.correlation
            }),
            "the flow to {} (correlation {:?}) starts in no API call of its correlation ID",
            d.name,
            d.correlation
        );
    }
    let count = |list: &[&(usize, u64)], key: &dyn Fn(&Ev) -> String| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for (b, _) in list {
            *m.entry(key(&events[*b])).or_default() += 1;
        }
        m
    };
    assert_eq!(
        summary.get("api").cloned().unwrap_or_default(),
        count(&api, &|e| format!("{} [{}]", e.name, e.category)),
        "API rows of the summary"
    );
    assert_eq!(
        summary.get("device").cloned().unwrap_or_default(),
        count(&device, &|e| e.name.clone()),
        "device rows of the summary"
    );
    // The USM counter moves with the SYCL runtime's allocations (one value per record).
    let memory = summary.get("memory").map_or(0, |m| m.values().sum::<u64>());
    assert_eq!(
        counters as u64, memory,
        "counter values against memory records"
    );
    Checked {
        api_events: api.len(),
        device_events: device.len(),
        queues: queues.len(),
        engines: engines.len(),
    }
}

/// The packets of a trace file that may end in a packet cut short (a run killed while writing):
/// the whole ones, parsed, and whether the end was cut.
fn whole_packets(bytes: &[u8]) -> (Vec<perfetto_protos::trace_packet::TracePacket>, bool) {
    use protobuf::Message as _;
    let mut packets = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        assert_eq!(bytes[at], 0x0A, "byte {at}: not a Trace.packet field");
        let (mut len, mut shift, mut i) = (0usize, 0, at + 1);
        while i < bytes.len() {
            len |= usize::from(bytes[i] & 0x7F) << shift;
            shift += 7;
            i += 1;
            if bytes[i - 1] & 0x80 == 0 {
                break;
            }
        }
        if i + len > bytes.len() {
            return (packets, true);
        }
        packets.push(
            perfetto_protos::trace_packet::TracePacket::parse_from_bytes(&bytes[i..i + len])
                .unwrap_or_else(|e| panic!("packet at byte {at}: {e}")),
        );
        at = i + len;
    }
    (packets, false)
}

/// `cmd` (pti-trace and its options) made to run `program` on PoCL; the program's own arguments
/// may follow.
fn on_pocl<'a>(cmd: &'a mut Command, program: &Path) -> &'a mut Command {
    cmd.arg("--")
        .arg(program)
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS")
}

/// The Perfetto traces in `dir`.
fn traces_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pftrace"))
        .collect()
}

/// How many kernel slices the whole packets of the trace `file` hold.
fn kernel_slices(file: &Path) -> usize {
    let (packets, _) = whole_packets(&std::fs::read(file).unwrap_or_default());
    packets
        .iter()
        .filter(|p| {
            p.has_track_event()
                && p.track_event()
                    .categories
                    .first()
                    .is_some_and(|c| c == "kernel")
        })
        .count()
}

/// The rows `sql` selects from the SQLite export of `trace` (written to `db`), each made by `row`.
fn exported<T>(
    trace: &Path,
    db: &Path,
    sql: &str,
    row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Vec<T> {
    run(Command::new(pti_trace())
        .args(["export", "--sqlite"])
        .arg(db)
        .arg(trace));
    let db = rusqlite::Connection::open(db).unwrap();
    let mut query = db.prepare(sql).unwrap();
    query
        .query_map([], row)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The OpenCL program of two phases (kernels `phase_a`, then `phase_b`), compiled once.
fn phases_program() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c_with("cl_phases", &["tests/c/cl_phases.c"], &["-lOpenCL"]))
}
