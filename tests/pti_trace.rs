//! pti-trace on real programs: the OpenCL test program on PoCL, the Python SYCL program on
//! Intel's CPU runtime, and a shell that starts two traced processes. Each timeline must be
//! well-formed JSON in Chrome's trace-event format, with a track per device queue, non-negative
//! durations, and a flow from an API call with the same correlation ID to every device operation;
//! the summary's counts must equal the timeline's records. Also: exit codes and signals passed
//! on, and relative paths that hold when the program changes directory.

#[path = "pti_trace/files.rs"]
mod files;
#[path = "pti_trace/hostile.rs"]
mod hostile;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use pti_tests::{Adapter, compile_c_with, lib_dir, out_dir, root, sycl_over_level_zero};
use serde_json::Value;

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
    let dir = out_dir().join(format!("pti-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

#[test]
fn opencl_program_under_pti_trace() {
    let dir = scratch("opencl");
    let plain = run(Command::new(opencl_program()).env("PTI_TEST_PLATFORM", "Portable"));
    let out = run(Command::new(pti_trace())
        .args(["-o"])
        .arg(dir.join("trace.%p.json"))
        .arg("--")
        .arg(opencl_program())
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS"));
    assert_eq!(program_lines(&plain.stdout), program_lines(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    assert!(!stderr.contains("critical event"), "{stderr}");
    assert!(!stderr.contains("end before"), "{stderr}");
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!((files.len(), sums.len()), (1, 1), "{stderr}");
    let c = check_timeline(&files[0], &sums[0]);
    assert!(
        c.api_events > 100 && c.device_events > 20 && c.queues >= 4,
        "{} {} {}",
        c.api_events,
        c.device_events,
        c.queues
    );
    println!(
        "OpenCL: {} API slices, {} device slices on {} queue tracks, each with its flow",
        c.api_events, c.device_events, c.queues
    );
}

#[test]
fn sycl_program_under_pti_trace() {
    check_sycl_program("sycl", "trace.%p.json", check_timeline);
}

#[test]
fn sycl_program_under_pti_trace_as_a_perfetto_trace() {
    check_sycl_program("sycl-perfetto", "trace.%p.pftrace", check_perfetto);
}

/// Runs the SYCL program under pti-trace writing `output` (its extension chooses the format) and
/// checks each timeline with `check`, and the summaries.
fn check_sycl_program(name: &str, output: &str, check: fn(&Path, &Summary) -> Checked) {
    let venv = root().join(".venv");
    let lib = venv.join("lib");
    assert!(
        lib.join("libsycl.so").exists(),
        "{} lacks the SYCL runtime: run `cargo xtask setup`",
        venv.display()
    );
    let dir = scratch(name);
    let out = run(Command::new(pti_trace())
        .arg("-o")
        .arg(dir.join(output))
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(root().join("tests/python/sycl_workload.py"))
        .env("OCL_ICD_FILENAMES", lib.join("libintelocl.so"))
        .env("LD_LIBRARY_PATH", &lib)
        .env_remove("XPTI_SUBSCRIBERS")
        .env_remove("OPENCL_LAYERS"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("W RESULT 8386560.0"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    assert!(!stderr.contains("critical event"), "{stderr}");
    assert!(!stderr.contains("end before"), "{stderr}");
    // The Python process is the one with device work (processes it starts are traced too).
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!(files.len(), sums.len(), "{stderr}");
    let mut device = 0;
    for (file, sum) in files.iter().zip(&sums) {
        let c = check(file, sum);
        device += c.device_events;
    }
    assert_eq!(device, 6, "two kernels, three copies, a fill");
    let python = sums
        .iter()
        .find(|s| s.contains_key("device"))
        .expect("a summary with device work");
    assert!(
        python["api"]
            .keys()
            .any(|k| k.starts_with("urEnqueueKernelLaunch") && k.ends_with("[SYCL runtime]")),
        "{:?}",
        python["api"]
    );
    assert_eq!(python["device"]["vadd"], 1);
    assert_eq!(python["device"]["scale"], 1);
}

/// The SYCL program on the simulated Level Zero GPU through each Unified Runtime adapter: the
/// whole chain drawn, a flow from each Unified Runtime call to its device operations, and the
/// Level Zero calls inside each Unified Runtime call under it with its correlation ID.
#[test]
fn sycl_over_level_zero_under_pti_trace() {
    let venv = root().join(".venv");
    let lib = venv.join("lib");
    for (adapter, format) in [
        (Adapter::V1, "json"),
        (Adapter::V2, "json"),
        (Adapter::V2, "pftrace"),
    ] {
        let dir = scratch(&format!("sycl-ze-{adapter:?}-{format}"));
        let mut cmd = Command::new(pti_trace());
        cmd.arg("-o")
            .arg(dir.join(format!("trace.%p.{format}")))
            .arg("--")
            .arg(venv.join("bin/python"))
            .arg(root().join("tests/python/sycl_workload.py"))
            .env("LD_LIBRARY_PATH", &lib)
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("OPENCL_LAYERS");
        let out = run(sycl_over_level_zero(&mut cmd, adapter));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("W RESULT 8386560.0"), "{stdout}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("records dropped: 0"), "{stderr}");
        assert!(!stderr.contains("critical event"), "{stderr}");
        let files = timelines(&stderr);
        let sums = summaries(&stderr);
        assert_eq!(files.len(), sums.len(), "{stderr}");
        let (mut device, mut nested, mut engines) = (0, 0, 0);
        for (file, sum) in files.iter().zip(&sums) {
            let checked = if format == "json" {
                nested += level_zero_under_sycl(file);
                check_timeline(file, sum)
            } else {
                check_perfetto(file, sum)
            };
            device += checked.device_events;
            engines += checked.engines;
        }
        assert_eq!(device, 6, "two kernels, three copies, a fill");
        assert!(engines >= 1, "no queue is placed on its Level Zero engine");
        if format == "json" {
            assert!(
                nested > 100,
                "{nested} Level Zero slices under their UR call"
            );
        }
        println!(
            "{adapter:?} adapter, {format}: 6 device slices each with its flow from its UR call, \
             queues on {engines} Level Zero engine(s), {nested} Level Zero slices under a UR \
             slice of the same correlation ID (JSON only)"
        );
    }
}

/// How many Level Zero slices of a timeline lie inside a Unified Runtime slice, checking that
/// each such one has that slice's correlation ID.
fn level_zero_under_sycl(path: &Path) -> usize {
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().expect("traceEvents");
    let of = |cat: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .collect()
    };
    let (sycl, level_zero) = (of("SYCL runtime"), of("Level Zero"));
    let num = |e: &Value, k: &str| e[k].as_f64().unwrap();
    let mut nested = 0;
    for z in &level_zero {
        let Some(outer) = sycl.iter().find(|s| {
            s["tid"] == z["tid"]
                && num(s, "ts") <= num(z, "ts")
                && num(z, "ts") + num(z, "dur") <= num(s, "ts") + num(s, "dur")
        }) else {
            continue;
        };
        assert_eq!(
            z["args"]["correlation_id"], outer["args"]["correlation_id"],
            "{z} inside {outer}"
        );
        nested += 1;
    }
    nested
}

#[test]
fn child_processes_get_a_timeline_each() {
    let dir = scratch("children");
    let program = opencl_program().display().to_string();
    let out = run(Command::new(pti_trace())
        .arg("-o")
        .arg(dir.join("trace.%p.json"))
        .args(["--", "sh", "-c"])
        .arg(format!("{program} >/dev/null && {program} >/dev/null"))
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!(files.len(), sums.len());
    let distinct: HashSet<&PathBuf> = files.iter().collect();
    assert_eq!(distinct.len(), files.len(), "one file per process");
    let with_device: Vec<_> = files
        .iter()
        .zip(&sums)
        .map(|(f, s)| check_timeline(f, s))
        .filter(|c| c.device_events > 0)
        .collect();
    assert_eq!(
        with_device.len(),
        2,
        "both runs of the program traced: {stderr}"
    );
}

#[test]
fn summary_only_options_and_exit_codes() {
    let dir = scratch("options");
    let out = run(Command::new(pti_trace())
        .current_dir(&dir)
        .args([
            "--summary-only",
            "--views",
            "api",
            "--api",
            "clEnqueue*",
            "--",
        ])
        .arg(opencl_program())
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(timelines(&stderr).is_empty(), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "a file was written"
    );
    let sums = summaries(&stderr);
    let api = &sums[0]["api"];
    assert!(
        !api.is_empty() && api.keys().all(|k| k.starts_with("clEnqueue")),
        "{api:?}"
    );
    assert!(
        !sums[0].contains_key("device"),
        "device work recorded without the device view"
    );

    // Programs that run are run where they cannot leave files among the sources.
    let status = |args: &[&str]| {
        let out = Command::new(pti_trace())
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), out.status.signal())
    };
    assert_eq!(status(&["-s", "--", "sh", "-c", "exit 3"]), (Some(3), None));
    assert_eq!(
        status(&["--backends", "cuda", "--", "true"]),
        (Some(2), None)
    );
    assert_eq!(status(&["--no-such-option", "--", "true"]), (Some(2), None));
    assert_eq!(status(&[]), (Some(2), None));
    assert_eq!(status(&["-s", "--", "/no/such/program"]), (Some(127), None));
    assert_eq!(status(&["--help"]), (Some(0), None));
    // A program killed by a signal: pti-trace dies of the same signal.
    assert_eq!(
        status(&["-s", "--", "sh", "-c", "kill -TERM $$"]),
        (None, Some(15)) // SIGTERM
    );
}

#[test]
fn relative_paths_hold_when_the_program_changes_directory() {
    let dir = scratch("relative");
    let program = opencl_program().display().to_string();
    let out = run(Command::new(pti_trace())
        .current_dir(&dir)
        .args(["-o", "rel.%p.json", "--", "sh", "-c"])
        .arg(format!("cd / && exec {program} >/dev/null"))
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    assert!(!files.is_empty(), "{stderr}");
    let dir = dir.canonicalize().unwrap();
    for f in &files {
        assert_eq!(f.parent(), Some(dir.as_path()), "{stderr}");
        assert!(f.exists(), "{}", f.display());
    }
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

#[test]
fn opencl_program_under_pti_trace_as_a_perfetto_trace() {
    let dir = scratch("perfetto");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), opencl_program()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!((files.len(), sums.len()), (1, 1), "{stderr}");
    let c = check_perfetto(&files[0], &sums[0]);
    assert!(
        c.api_events > 100 && c.device_events > 20 && c.queues >= 4,
        "{} {} {}",
        c.api_events,
        c.device_events,
        c.queues
    );
    // The same run as JSON, for the size per event.
    let json = run(on_pocl(
        Command::new(pti_trace())
            .arg("-o")
            .arg(dir.join("trace.%p.json")),
        opencl_program(),
    ));
    let json_stderr = String::from_utf8_lossy(&json.stderr);
    let json_file = &timelines(&json_stderr)[0];
    // Runs differ in their number of calls (the program polls its events): compared per slice.
    let json_slices: u64 = summaries(&json_stderr)[0]
        .values()
        .flat_map(|rows| rows.values())
        .sum();
    let (pf, js) = (
        std::fs::metadata(&files[0]).unwrap().len() / (c.api_events + c.device_events) as u64,
        std::fs::metadata(json_file).unwrap().len() / json_slices,
    );
    println!(
        "Perfetto: {} API slices, {} device slices on {} queues; {pf} bytes per slice, against \
         {js} in JSON",
        c.api_events, c.device_events, c.queues
    );
    assert!(pf < js, "Perfetto takes {pf} bytes per slice, JSON {js}");
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

#[test]
fn a_killed_run_leaves_a_trace_up_to_its_last_flush() {
    use std::io::BufRead as _;
    let dir = scratch("killed");
    let mut child = on_pocl(
        &mut pti_trace_into(&dir, &["--flush-interval", "100"]),
        looping_program(),
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut launched = 0u64;
    while launched < 2000 {
        let line = lines.next().expect("the program stopped").unwrap();
        if let Some(n) = line.strip_prefix("W ITER ") {
            launched = n.parse().unwrap();
        }
    }
    // Wait until the trace on disk holds 1,000 kernels (the periodic flush put them there),
    // then kill: they must all still be there, and the file must decode.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let before = loop {
        let n = traces_in(&dir).first().map_or(0, |f| kernel_slices(f));
        if n >= 1000 {
            break n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {n} kernels flushed after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The program is pti-trace's child (other tests may run the same program at once).
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
        .expect("pti-trace's children");
    let program_pid: i32 = children
        .split_whitespace()
        .next()
        .expect("pti-trace has no child")
        .parse()
        .unwrap();
    // SAFETY: sending a signal to a process ID.
    assert_eq!(unsafe { libc::kill(program_pid, libc::SIGKILL) }, 0);
    let out = child.wait_with_output().unwrap();
    // pti-trace passes the program's death on.
    assert!(
        out.status.signal() == Some(9) || out.status.code() == Some(128 + 9),
        "{:?}",
        out.status
    );
    let file = traces_in(&dir).pop().expect("no trace file");
    let bytes = std::fs::read(&file).unwrap();
    let (packets, cut) = whole_packets(&bytes);
    let kernels = kernel_slices(&file);
    println!(
        "killed after {launched}+ launches: {} bytes, {} whole packets{}, {kernels} kernel \
         slices ({before} on disk before the kill)",
        bytes.len(),
        packets.len(),
        if cut { ", the last one cut" } else { "" }
    );
    assert!(
        kernels >= before,
        "{kernels} kernels after the kill, {before} before"
    );
}

/// The peak resident memory (kB) of the looping OpenCL program run `launches` times under
/// pti-trace writing a Perfetto trace, and the trace's size.
fn peak_memory_under_pti_trace(launches: u64) -> (u64, u64) {
    peak_memory_with(launches, &[], &[]).0
}

/// The program's peak resident memory (kB) and the size of its timeline after `launches` under
/// pti-trace with `options` and `env`, and pti-trace's stderr.
fn peak_memory_with(launches: u64, options: &[&str], env: &[(&str, &str)]) -> ((u64, u64), String) {
    let dir = scratch(&format!("memory-{launches}-{}", options.len()));
    let mut cmd = Command::new(pti_trace());
    cmd.args(options)
        .arg("-o")
        .arg(dir.join(if options.contains(&"json") {
            "t.%p.json"
        } else {
            "t.%p.pftrace"
        }))
        .envs(env.iter().copied());
    let out = run(on_pocl(&mut cmd, looping_program()).arg(launches.to_string()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let hwm = stdout
        .lines()
        .find_map(|l| l.strip_prefix("W HWM "))
        .unwrap_or_else(|| panic!("no HWM line: {stdout}"))
        .parse()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let file = &timelines(&stderr)[0];
    let size = std::fs::metadata(file).unwrap().len();
    let _ = std::fs::remove_dir_all(&dir);
    ((hwm, size), stderr)
}

/// Issue 36, `--max-size`: a long run's Perfetto timeline stops growing at the size given; the
/// records past it are counted in the summary, which says so, and the file holds whole packets.
#[test]
fn max_size_bounds_the_timeline_and_says_what_it_left_out() {
    let dir = scratch("max-size");
    let file = dir.join("t.pftrace");
    let mut cmd = Command::new(pti_trace());
    cmd.args(["--max-size", "1M", "--flush-interval", "20", "-o"])
        .arg(&file);
    let out = run(on_pocl(&mut cmd, looping_program()).arg("20000"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let size = std::fs::metadata(&file).unwrap().len();
    let (packets, cut) = whole_packets(&std::fs::read(&file).unwrap());
    println!("{size} bytes, {} packets", packets.len());
    assert!(!cut, "the file ends inside a packet");
    assert!(
        (1 << 20..4 << 20).contains(&size),
        "{size} bytes for --max-size 1M (a batch past it at most)"
    );
    let left_out: u64 = stderr
        .lines()
        .find_map(|l| l.split(" bytes): ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("nothing said of the records left out:\n{stderr}"));
    assert!(left_out > 10_000, "{left_out} records left out\n{stderr}");
}

/// Issue 36, finding 14: a JSON timeline is written at exit, so its records are held until
/// then; without a bound `-f json` grew the program's memory with the run (983 MB after 10 s).
/// Past `PTI_TRACE_JSON_MAX_RECORDS` (here 5,000; default 1,000,000) later records are counted
/// in the summary and let go: a run ten times longer costs no more memory.
#[test]
fn a_json_timeline_holds_a_bounded_number_of_records() {
    let options = ["-f", "json"];
    let env = [("PTI_TRACE_JSON_MAX_RECORDS", "5000")];
    let ((short, _), _) = peak_memory_with(10_000, &options, &env);
    let ((long, _), stderr) = peak_memory_with(100_000, &options, &env);
    println!("peak memory with -f json: {short} kB for 10,000 launches, {long} kB for 100,000");
    assert!(
        stderr.contains("the JSON timeline keeps the first 5000 records"),
        "nothing said of the records left out:\n{stderr}"
    );
    assert!(
        long * 100 < short * 120,
        "peak memory grew from {short} kB to {long} kB for a run ten times longer"
    );
}

#[test]
fn memory_stays_flat_on_a_run_ten_times_longer() {
    let (short, short_file) = peak_memory_under_pti_trace(10_000);
    let (long, long_file) = peak_memory_under_pti_trace(100_000);
    println!(
        "peak memory: {short} kB for 10,000 launches ({short_file} bytes of trace), {long} kB for \
         100,000 ({long_file} bytes)"
    );
    // The trace grows with the run; the process does not: a tenfold longer run may only add
    // libpti's warm-up (about 10 MB here, reached by 80,000 launches), not the records (a JSON
    // timeline keeps them: about 40 MB more for the longer run).
    assert!(
        long_file > 8 * short_file,
        "the trace did not grow with the run"
    );
    assert!(
        long * 100 < short * 120,
        "peak memory grew from {short} kB to {long} kB for a run ten times longer"
    );
}

#[test]
fn reports_stay_out_of_the_programs_output_and_idle_processes_leave_nothing() {
    let dir = scratch("quiet");
    let program_err = dir.join("program.err");
    // The program sends its own stderr to a file, starts two processes that do no GPU work, and
    // runs the OpenCL program twice: once as is, once with pti-trace's reporting descriptor
    // closed (as Python's `subprocess` does), whose report goes through the reports directory
    // (bash: dash's redirections take single-digit descriptors only).
    let program = opencl_program().display();
    let script = format!(
        "ls / >/dev/null; /bin/true; {program} 2>{err}; fd=${{PTI_TRACE_REPORT_FD%%:*}}; \
         eval \"exec $fd>&-\"; exec {program} 2>>{err}",
        err = program_err.display()
    );
    let child = pti_trace_into(&dir, &[])
        .args(["--", "bash", "-c", &script])
        .current_dir(&dir)
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let own = std::fs::read_to_string(&program_err).unwrap();
    assert!(
        !own.contains("pti-trace"),
        "the program's stderr got: {own}"
    );
    assert_eq!(summaries(&stderr).len(), 2, "{stderr}");
    assert_eq!(timelines(&stderr).len(), 2, "{stderr}");
    assert!(
        stderr.contains("2 processes recorded no GPU-runtime call or device work"),
        "{stderr}"
    );
    assert_eq!(traces_in(&dir).len(), 2, "the OpenCL program's timelines");
    // Nothing else was left: no report file beside the timelines (the working directory), and
    // no reports directory.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".pftrace") && n != "program.err")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let reports = std::env::temp_dir().join(format!("pti-trace.{pid}.reports"));
    assert!(!reports.exists(), "{} left behind", reports.display());
}

#[test]
fn the_csv_summary_holds_the_printed_rows() {
    let dir = scratch("csv");
    let out = run(on_pocl(
        Command::new(pti_trace())
            .args(["-s", "--csv"])
            .arg(dir.join("summary.%p.csv")),
        opencl_program(),
    ));
    let printed = &summaries(&String::from_utf8_lossy(&out.stderr))[0];
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .expect("no CSV")
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("section,name,group,count,total_ns,avg_ns,min_ns,max_ns")
    );
    let mut rows: Summary = HashMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let (section, name) = match f[0] {
            "api" => ("api", format!("{} [{}]", f[1], f[2])),
            _ => ("device", f[1].to_string()),
        };
        let (min, max): (u64, u64) = (f[6].parse().unwrap(), f[7].parse().unwrap());
        assert!(min <= max, "{line}");
        rows.entry(section)
            .or_default()
            .insert(name, f[3].parse().unwrap());
    }
    assert_eq!(&rows, printed);
}

#[test]
fn the_sqlite_export_holds_every_record_of_the_trace() {
    let dir = scratch("sqlite");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), opencl_program()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = &summaries(&stderr)[0];
    let db = dir.join("trace.db");
    run(Command::new(pti_trace())
        .args(["export", "--sqlite"])
        .arg(&db)
        .arg(&timelines(&stderr)[0]));
    let db = rusqlite::Connection::open(&db).unwrap();
    let one = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    // The views count what the summary counts.
    let rows = |sql: &str| -> BTreeMap<String, u64> {
        let mut stmt = db.prepare(sql).unwrap();
        stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    assert_eq!(
        rows("SELECT name || ' [' || api_group || ']', count FROM api_summary"),
        summary["api"]
    );
    assert_eq!(
        rows("SELECT name, count FROM device_summary"),
        summary["device"]
    );
    // Every device operation joins the call that submitted it, which started before it was
    // submitted, and runs after its submission.
    let ops = one("SELECT COUNT(*) FROM device_op");
    let joined = one(
        "SELECT COUNT(*) FROM device_op d JOIN api_call a ON a.pid = d.pid AND \
         a.correlation_id = d.correlation_id WHERE a.start_ns <= d.submit_ns AND \
         d.submit_ns <= d.start_ns",
    );
    assert!(
        ops > 20 && joined == ops,
        "{joined} of {ops} device operations joined"
    );
    assert_eq!(one("SELECT COUNT(*) FROM device_op WHERE device = ''"), 0);
    assert_eq!(one("SELECT COUNT(*) FROM process"), 1);
}

#[test]
fn abort_and_exit_without_handlers_keep_what_was_flushed() {
    for (how, expected) in [("abort", "signal 6"), ("_exit", "code 3")] {
        let dir = scratch(&format!("end-{how}"));
        let out = on_pocl(
            &mut pti_trace_into(&dir, &["--flush-interval", "100"]),
            looping_program(),
        )
        .args(["500", how])
        .output()
        .unwrap();
        let ended = match (out.status.code(), out.status.signal()) {
            (Some(code), _) if code > 128 => format!("signal {}", code - 128),
            (Some(code), _) => format!("code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            _ => "?".into(),
        };
        assert_eq!(ended, expected, "{how}");
        // No exit handler ran (no summary), yet the periodic flush put every launch on disk.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("summary of process"), "{how}: {stderr}");
        let file = traces_in(&dir)
            .pop()
            .unwrap_or_else(|| panic!("{how}: no trace"));
        let kernels = kernel_slices(&file);
        assert_eq!(kernels, 500, "{how}: the kernels on disk");
    }
}

#[test]
fn a_queue_that_ran_only_markers_sits_on_its_device() {
    let program = compile_c_with("cl_markers", &["tests/c/cl_markers.c"], &["-lOpenCL"]);
    let dir = scratch("markers");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), &program));
    assert!(String::from_utf8_lossy(&out.stdout).contains("W DONE"));
    let file = traces_in(&dir).pop().expect("a trace");
    let stderr = String::from_utf8_lossy(&out.stderr);
    check_perfetto(&file, &summaries(&stderr)[0]);
    // Track UUID -> (name, parent); the device slices' tracks by category.
    let (packets, cut) = whole_packets(&std::fs::read(&file).unwrap());
    assert!(!cut);
    let mut tracks: HashMap<u64, (String, u64)> = HashMap::new();
    let mut by_category: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for p in &packets {
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            tracks.insert(d.uuid(), (d.name().to_string(), d.parent_uuid()));
        }
        if p.has_track_event() && !p.track_event().categories.is_empty() {
            let e = p.track_event();
            by_category
                .entry(e.categories[0].clone())
                .or_default()
                .push(e.track_uuid());
        }
    }
    let (markers, barriers, copies) = (
        &by_category["marker"],
        &by_category["barrier"],
        &by_category["memcpy"],
    );
    assert_eq!((markers.len(), barriers.len(), copies.len()), (2, 1, 2));
    // The markers and the barrier share their queue's track; the copies have another, and both
    // queues sit under the one device.
    let sync_queue = markers[0];
    assert!(markers.iter().chain(barriers).all(|t| *t == sync_queue));
    assert!(copies.iter().all(|t| *t == copies[0] && *t != sync_queue));
    let device = tracks[&sync_queue].1;
    assert_eq!(tracks[&copies[0]].1, device, "both queues on one device");
    let device_name = &tracks[&device].0;
    assert!(device_name.starts_with("device 0"), "{device_name:?}");
    println!(
        "{:?} (markers, barrier) and {:?} (copies) both under {device_name:?}",
        tracks[&sync_queue].0, tracks[&copies[0]].0
    );
}

#[test]
fn a_process_that_only_loads_the_sycl_runtime_is_counted_not_reported() {
    // `import dpctl` maps the SYCL runtime but starts nothing: no call was made, none was lost,
    // so no summary, no critical event and no file; one line counts it. Then a program that
    // does start the runtime gets its summary.
    let venv = root().join(".venv");
    let lib = venv.join("lib");
    let dir = scratch("sycl-loaded");
    let mut outputs = Vec::new();
    for code in [
        "import dpctl",
        "import dpctl; print(len(dpctl.get_devices()) > 0)",
    ] {
        let out = run(pti_trace_into(&dir, &[])
            .args([
                "--".as_ref(),
                venv.join("bin/python").as_os_str(),
                "-c".as_ref(),
            ])
            .arg(code)
            .env("OCL_ICD_FILENAMES", lib.join("libintelocl.so"))
            .env("LD_LIBRARY_PATH", &lib)
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("OPENCL_LAYERS"));
        outputs.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let (loaded, started) = (&outputs[0], &outputs[1]);
    assert!(
        loaded.contains("1 process recorded no GPU-runtime call") && !loaded.contains("critical"),
        "{loaded}"
    );
    assert!(summaries(loaded).is_empty(), "{loaded}");
    assert_eq!(summaries(started).len(), 1, "{started}");
    assert!(!started.contains("critical"), "{started}");
    assert_eq!(traces_in(&dir).len(), 1, "the second program's trace only");
}

/// Commands of no record kind are named in the summary with their count (from libpti's loss
/// records, which the collector enables), beside the critical event that announced them; the
/// other commands are on the timeline as usual. `tests/c/cl_migrate.c`: four migrations and a
/// write, on PoCL. (The collector flushes from an `atexit` handler, after the main thread's
/// locals are gone: the loss records must be written there too, which a first version did not.)
#[test]
fn commands_without_a_record_kind_are_counted_in_the_summary() {
    let program = compile_c_with("cl_migrate", &["tests/c/cl_migrate.c"], &["-lOpenCL"]);
    let out = run(on_pocl(
        Command::new(pti_trace()).arg("--summary-only"),
        &program,
    ));
    assert!(String::from_utf8_lossy(&out.stdout).contains("W DONE"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "commands with no record kind (counted, not on the timeline): 4 of clEnqueueMigrateMemObjects"
        ),
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches("PTI_ERROR_COMMANDS_NOT_RECORDED: clEnqueueMigrateMemObjects")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    let s = &summaries(&stderr)[0];
    assert_eq!(s["device"].get("copy M2D"), Some(&1), "{stderr}");
}

/// The OpenCL program of two phases (kernels `phase_a`, then `phase_b`), compiled once.
fn phases_program() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c_with("cl_phases", &["tests/c/cl_phases.c"], &["-lOpenCL"]))
}

/// Events of a trace: (time, name) for instants, (time, category) for slice begins.
type Timed = Vec<(u64, String)>;

/// The instants of a Perfetto trace (time, name), and the begin times of its slices by
/// category ("kernel", the API groups, ...).
fn instants_and_slices(file: &Path) -> (Timed, Timed) {
    use perfetto_protos::track_event::track_event::Type;
    let (packets, _) = whole_packets(&std::fs::read(file).unwrap());
    let mut names: HashMap<u64, String> = HashMap::new();
    let (mut instants, mut slices) = (Vec::new(), Vec::new());
    for p in &packets {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(n.iid(), n.name().to_string());
            }
        }
        if !p.has_track_event() {
            continue;
        }
        let e = p.track_event();
        match e.type_() {
            Type::TYPE_INSTANT => instants.push((
                p.timestamp(),
                names.get(&e.name_iid()).cloned().unwrap_or_default(),
            )),
            Type::TYPE_SLICE_BEGIN => slices.push((
                p.timestamp(),
                e.categories.first().cloned().unwrap_or_default(),
            )),
            _ => {}
        }
    }
    (instants, slices)
}

#[test]
fn start_paused_then_resumed_by_signal_records_only_the_resumed_window() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;
    let dir = scratch("capture-signal");
    let mut cmd = pti_trace_into(&dir, &["--start-paused", "--toggle-signal", "WINCH"]);
    on_pocl(&mut cmd, phases_program()).args(["7", "stdin"]);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "PHASE A DONE", "the program's first line");
    // SAFETY: a signal to the pti-trace this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGWINCH) }, 0);
    // Phase B starts only once the program's collector said it resumed.
    let mut said = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "pti-trace ended its stderr before the program resumed; it said:\n{said}"
        );
        said.push_str(&line);
        if line.contains(": collection resumed (signal)") {
            break;
        }
    }
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    said.push_str(&rest);
    assert!(child.wait().unwrap().success(), "pti-trace failed:\n{said}");
    assert!(
        said.contains("pti-trace: toggle 1 (signal ") && said.contains(") sent to 1 process\n"),
        "pti-trace passed the signal on to the one process:\n{said}"
    );

    let summary = summaries(&said);
    assert_eq!(summary.len(), 1, "one process summarised:\n{said}");
    let device = &summary[0]["device"];
    assert_eq!(device.get("phase_b"), Some(&7), "phase B whole:\n{said}");
    assert_eq!(
        device.get("phase_a"),
        None,
        "nothing of the paused phase A:\n{said}"
    );
    assert_eq!(
        summary[0]["api"].get("clEnqueueNDRangeKernel [OpenCL]"),
        Some(&7)
    );
    assert_eq!(
        summary[0]["api"].get("clBuildProgram [OpenCL]"),
        None,
        "calls made while paused are not recorded:\n{said}"
    );
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1);
    assert_eq!(kernel_slices(&trace[0]), 7);
    let (instants, slices) = instants_and_slices(&trace[0]);
    let resumed = instants
        .iter()
        .find(|(_, name)| name == "collection resumed (signal)")
        .unwrap_or_else(|| panic!("no resume on the timeline: {instants:?}"))
        .0;
    assert!(
        slices.iter().all(|(at, _)| *at >= resumed),
        "every slice begins after the resume"
    );
}

#[test]
fn delay_and_duration_bound_the_recorded_window() {
    let dir = scratch("capture-window");
    let mut cmd = pti_trace_into(&dir, &["--delay", "1", "--duration", "1"]);
    // About 45 us a launch on PoCL here: several seconds, past the window's end.
    let out = run(on_pocl(&mut cmd, looping_program()).arg("100000"));
    let said = String::from_utf8_lossy(&out.stderr);
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1, "{said}");
    let (instants, slices) = instants_and_slices(&trace[0]);
    let at = |name: &str| {
        instants
            .iter()
            .find(|(_, n)| n == name)
            .unwrap_or_else(|| panic!("no {name:?} on the timeline: {instants:?}\n{said}"))
            .0
    };
    let (resumed, paused) = (
        at("collection resumed (--delay)"),
        at("collection paused (--duration)"),
    );
    let window = (paused - resumed) as f64 / 1e9;
    assert!(
        (0.9..3.0).contains(&window),
        "the window lasts --duration: {window} s"
    );
    let kernels: Vec<u64> = slices
        .iter()
        .filter(|(_, c)| c == "kernel")
        .map(|(t, _)| *t)
        .collect();
    assert!(
        kernels.len() > 100,
        "launches in the window: {}\n{said}",
        kernels.len()
    );
    assert!(
        kernels.len() < 100000,
        "not every launch: {}",
        kernels.len()
    );
    // Every call recorded began inside the window; a kernel submitted just before the pause may
    // start on the device just after it.
    let slack = 500_000_000;
    for (t, category) in &slices {
        let end = if category == "kernel" {
            paused + slack
        } else {
            paused
        };
        assert!(
            *t >= resumed && *t <= end,
            "a {category} slice at {t} outside the window [{resumed}, {paused}]"
        );
    }
}

#[test]
fn kernel_filters_keep_only_the_named_kernels() {
    for (options, kept, left_out) in [
        (["--kernels", "*_b"], "phase_b", "phase_a"),
        (["--exclude-kernels", "phase_b"], "phase_a", "phase_b"),
    ] {
        let dir = scratch("kernel-filters");
        let mut cmd = pti_trace_into(&dir, &options);
        let out = run(on_pocl(&mut cmd, phases_program()).args(["4", "0"]));
        let said = String::from_utf8_lossy(&out.stderr);
        let summary = summaries(&said);
        let device = &summary[0]["device"];
        assert_eq!(device.get(kept), Some(&4), "{options:?}:\n{said}");
        assert_eq!(device.get(left_out), None, "{options:?}:\n{said}");
        assert!(
            said.contains("kernels left out by the kernel filters: 4"),
            "{options:?}: the summary counts what the filters left out:\n{said}"
        );
        assert_eq!(kernel_slices(&traces_in(&dir)[0]), 4);
    }
}

#[test]
fn ittapi_annotations_are_tracks_of_the_perfetto_timeline() {
    use perfetto_protos::track_event::track_event::Type;
    let python = root().join(".venv/bin/python");
    let program = root().join("pti-python/tests/programs/itt_annotated.py");
    assert!(
        python.exists(),
        "{} is missing: `cargo xtask setup` makes .venv with ittapi",
        python.display()
    );
    let dir = scratch("itt");
    let out = run(pti_trace_into(&dir, &[])
        .arg("--")
        .arg(&python)
        .arg(&program)
        .env_remove("INTEL_LIBITTNOTIFY64"));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("Annotations (ITT tasks, frames, events)"),
        "{said}"
    );
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1, "one process with annotations:\n{said}");
    let (packets, cut_short) = whole_packets(&std::fs::read(&trace[0]).unwrap());
    assert!(!cut_short, "the trace ends with a whole packet");
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut tracks: HashMap<u64, String> = HashMap::new();
    let mut slices: Vec<(String, String)> = Vec::new(); // (track name, slice name)
    for p in &packets {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(n.iid(), n.name().to_string());
            }
        }
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            tracks.insert(d.uuid(), d.name().to_string());
        }
        if p.has_track_event() && p.track_event().type_() == Type::TYPE_SLICE_BEGIN {
            let e = p.track_event();
            slices.push((
                tracks.get(&e.track_uuid()).cloned().unwrap_or_default(),
                names[&e.name_iid()].clone(),
            ));
        }
    }
    let on = |track: &str| -> Vec<String> {
        let mut v: Vec<String> = slices
            .iter()
            .filter(|(t, _)| t.starts_with(track))
            .filter(|(t, _)| track != "ITT " || !t.starts_with("ITT overlapped"))
            .map(|(_, n)| n.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        on("ITT "),
        [
            "ITT event: mark",
            "app: inner",
            "app: inner",
            "app: outer",
            "frames",
            "oneCCL::API: allgatherv",
            "oneCCL::API: allreduce",
            "oneCCL::API: allreduce",
            "oneCCL::API: bcast",
        ]
    );
    assert_eq!(
        on("ITT overlapped tasks"),
        ["app: async", "app: first", "app: second"]
    );
    assert!(
        tracks.values().any(|t| t.starts_with("ITT app (thread ")),
        "a track per thread and domain: {tracks:?}"
    );
    assert_eq!(
        on("communication (oneCCL"),
        [
            "allgatherv (4096 B sent, 0 B received)",
            "allreduce (0 B sent, 0 B received)",
            "allreduce (1048576 B sent, 0 B received)",
            "bcast (64 B sent, 0 B received)",
        ]
    );
    // The SQLite export puts them in its annotation table.
    let rows: Vec<(String, i64)> = exported(
        &trace[0],
        &dir.join("itt.db"),
        "SELECT kind, COUNT(*) FROM annotation GROUP BY kind ORDER BY kind",
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    assert_eq!(
        rows,
        [
            ("annotation".to_string(), 13),
            ("communication".to_string(), 4)
        ]
    );
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

#[test]
fn four_mpi_ranks_on_pocl_merge_into_one_timeline() {
    let dir = scratch("mpi");
    let launches = 3;
    // Open MPI as root on 2 cores: --allow-run-as-root, --oversubscribe; no cross-memory
    // attach in a container.
    let out = run(Command::new("mpirun")
        .args(["--oversubscribe", "--allow-run-as-root", "-np", "4"])
        .arg(pti_trace())
        .arg("-o")
        .arg(dir.join("trace.rank%r.%p.pftrace"))
        .arg("--")
        .arg(mpi_program())
        .arg(launches.to_string())
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS"));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("MPI TOTAL 30 of 4 ranks"),
        "{}\n{said}",
        String::from_utf8_lossy(&out.stdout)
    );
    // One trace per rank, named by its rank.
    let mut traces = traces_in(&dir);
    traces.sort();
    let names: Vec<String> = traces
        .iter()
        .map(|t| t.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(traces.len(), 4, "{names:?}\n{said}");
    for (rank, name) in names.iter().enumerate() {
        assert!(name.starts_with(&format!("trace.rank{rank}.")), "{names:?}");
        assert_eq!(
            kernel_slices(&traces[rank]),
            (rank + 1) * launches,
            "rank {rank}'s own trace"
        );
    }

    let merged = dir.join("merged.pftrace");
    let out = run(Command::new(pti_trace())
        .arg("merge")
        .arg("-o")
        .arg(&merged)
        .args(&traces));
    let summary = String::from_utf8_lossy(&out.stdout);
    // The per-rank rows: rank, pid, host, API calls, kernels, ...
    for rank in 0..4usize {
        let row = summary
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&rank.to_string()))
            .unwrap_or_else(|| panic!("no row of rank {rank}:\n{summary}"));
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            fields[4],
            ((rank + 1) * launches).to_string(),
            "rank {rank}'s kernels:\n{summary}"
        );
    }
    let all = summary.lines().find(|l| l.starts_with("all")).unwrap();
    assert_eq!(all.split_whitespace().nth(2), Some("30"), "{summary}");
    assert!(
        summary.contains("(0 shifted from other hosts' clocks)"),
        "one host, one clock:\n{summary}"
    );
    let bump = summary
        .lines()
        .find(|l| l.trim_start().starts_with("bump "))
        .unwrap_or_else(|| panic!("no kernel row:\n{summary}"));
    assert_eq!(
        bump.split_whitespace().take(3).collect::<Vec<_>>(),
        ["bump", "4", "3/12"],
        "{summary}"
    );

    // The merged trace: four processes named by rank, every kernel, one sequence per input,
    // and each input's tracks distinct.
    let (packets, cut_short) = whole_packets(&std::fs::read(&merged).unwrap());
    assert!(!cut_short);
    let processes: Vec<String> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .filter_map(|p| {
            p.track_descriptor()
                .process
                .as_ref()
                .map(|d| d.process_name().to_string())
        })
        .collect();
    assert_eq!(processes.len(), 4, "{processes:?}");
    for rank in 0..4 {
        assert!(
            processes
                .iter()
                .any(|n| n.starts_with(&format!("rank {rank}: "))),
            "{processes:?}"
        );
    }
    assert_eq!(kernel_slices(&merged), 30);
    let sequences: HashSet<u32> = packets
        .iter()
        .map(|p| p.trusted_packet_sequence_id())
        .collect();
    assert_eq!(sequences.len(), 4);
    let uuids: Vec<u64> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .map(|p| p.track_descriptor().uuid())
        .collect();
    assert_eq!(
        uuids.iter().collect::<HashSet<_>>().len(),
        uuids.len(),
        "track UUIDs collide"
    );
    // The merged file exports like any trace: each process's kernels under its own ID.
    let per_process: Vec<i64> = exported(
        &merged,
        &dir.join("merged.db"),
        "SELECT COUNT(*) FROM device_op d JOIN process p USING (pid) \
         WHERE d.kind = 'kernel' AND d.name = 'bump' GROUP BY pid ORDER BY p.name",
        |r| r.get(0),
    );
    assert_eq!(
        per_process,
        [3, 6, 9, 12],
        "kernels per rank, from the merged file"
    );

    // The same trace twice: every process, thread, track and flow ID collides, and the merge
    // keeps them apart.
    let twice = dir.join("twice.pftrace");
    run(Command::new(pti_trace())
        .arg("merge")
        .arg("-o")
        .arg(&twice)
        .args([&traces[3], &traces[3]]));
    let (packets, _) = whole_packets(&std::fs::read(&twice).unwrap());
    let descriptors: Vec<_> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .map(|p| p.track_descriptor())
        .collect();
    let pids: HashSet<i32> = descriptors
        .iter()
        .filter_map(|d| d.process.as_ref().map(|p| p.pid()))
        .collect();
    assert_eq!(pids.len(), 2, "the second copy's process moved");
    let tids: Vec<i32> = descriptors
        .iter()
        .filter_map(|d| d.thread.as_ref().map(|t| t.tid()))
        .collect();
    assert_eq!(
        tids.iter().collect::<HashSet<_>>().len(),
        tids.len(),
        "thread IDs collide: {tids:?}"
    );
    for d in &descriptors {
        if let Some(t) = d.thread.as_ref().filter(|t| t.tid() == t.pid()) {
            assert!(
                pids.contains(&t.pid()),
                "a main thread keeps its process's ID"
            );
        }
    }
    let uuids: Vec<u64> = descriptors.iter().map(|d| d.uuid()).collect();
    assert_eq!(uuids.iter().collect::<HashSet<_>>().len(), uuids.len());
    let flows: Vec<u64> = packets
        .iter()
        .filter(|p| p.has_track_event())
        .flat_map(|p| p.track_event().flow_ids.clone())
        .collect();
    assert_eq!(flows.iter().collect::<HashSet<_>>().len(), flows.len());
    assert_eq!(kernel_slices(&twice), 24);
    let counts: Vec<i64> = exported(
        &twice,
        &dir.join("twice.db"),
        "SELECT COUNT(*) FROM device_op WHERE kind = 'kernel' GROUP BY pid",
        |r| r.get(0),
    );
    assert_eq!(counts, [12, 12]);
}

/// `pti-trace check` (issue 35): what would keep a run from GPU records, found before a run. Over
/// the simulated Level Zero driver it finds a driver and a device; with a variable that switches
/// tracing off it names it as a problem and exits with 1.
#[test]
fn check_says_what_keeps_records_away() {
    let sim = lib_dir().join("libze_sim.so");
    assert!(
        sim.exists(),
        "{} is missing: build it with `cargo build -p ze-sim`",
        sim.display()
    );
    let check = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(pti_trace());
        cmd.arg("check")
            .env("ZE_ENABLE_ALT_DRIVERS", &sim)
            .env_remove("PTI_LEVEL_ZERO")
            .env_remove("ZE_ENABLE_TRACING_LAYER")
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("PTI_TRACE_VIEWS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run pti-trace check")
    };
    let fine = check(&[]);
    let text = String::from_utf8_lossy(&fine.stdout);
    assert!(fine.status.success(), "{text}");
    for want in [
        "libpti: ok: ",
        "OpenCL: ok: platform \"Portable Computing Language\"",
        "Level Zero: ok: 1 driver(s), 1 device(s)",
        "pti-trace check: nothing found that keeps records away",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    assert!(!text.contains("PROBLEM"), "{text}");
    let off = check(&[("PTI_LEVEL_ZERO", "0"), ("ZE_ENABLE_TRACING_LAYER", "0")]);
    let text = String::from_utf8_lossy(&off.stdout);
    assert_eq!(off.status.code(), Some(1), "{text}");
    assert!(
        text.contains("environment: PROBLEM: PTI_LEVEL_ZERO=0")
            && text.contains("environment: PROBLEM: ZE_ENABLE_TRACING_LAYER=0"),
        "{text}"
    );
}
