//! The Level Zero tracer through the real Level Zero loader and its tracing layer (Debian's
//! `libze1`, installed by `cargo xtask setup`), over the simulated driver `tests/ze-sim` (a test
//! double the loader loads through `ZE_ENABLE_ALT_DRIVERS`).
//!
//! The same real Level Zero program (`tests/c/ze_workload.c`: kernels, copies and fills on an
//! immediate list on one thread and on a regular list executed three times on another, events
//! with and without kernel timestamps, barriers, and every host wait) runs alone (`ze_plain`) and
//! under a tool on libpti's public API (`ze_traced`). The tool's output is checked against the
//! program's own account of what it submitted, and every device record's times against the
//! simulated driver's ground truth (the host times at which it really ran each command): they
//! must agree within 1 µs, including commands that ran after the device's kernel timestamps
//! wrapped around.
//!
//! A second program (`tests/c/ze_modern.c`, built against the newest headers) takes the modern
//! paths a program on this loader can only reach through `zeDriverGetExtensionFunctionAddress`:
//! counter-based events created both ways, the `…WithParameters` appends, a host function,
//! regular lists run on an immediate list, `zeCommandListHostSynchronize`; and again over a
//! deliberately minimal configuration of the driver (`ZE_SIM_MINIMAL`). Every command appended
//! must give a device record (none dropped), with its appending call's correlation ID, inside
//! that call and the wait after it. A last test checks that the generated registration reaches
//! every register function a 1.32 loader exports.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use pti_tests::{api_ids, compile_c_with, lib_dir, lines_after, newest_level_zero, out_dir, root};

/// The largest error allowed between a record's times and the ground truth, in nanoseconds.
const MAX_ERROR_NS: u64 = 1_000;

/// How many times the workload executes its regular list, and the commands on it.
const EXECUTIONS: usize = 3;
const REGULAR_COMMANDS: usize = 8;
/// The barriers among them (their records have no operation ID).
const REGULAR_BARRIERS: usize = 2;

/// The simulated driver, built with the workspace (`cargo build -p ze-sim`).
fn simulated_driver() -> PathBuf {
    let sim = lib_dir().join("libze_sim.so");
    assert!(
        sim.exists(),
        "{} is missing: build it with `cargo build -p ze-sim` (`cargo xtask test` does)",
        sim.display()
    );
    sim
}

/// The two programs, compiled once per test binary.
fn programs() -> &'static (PathBuf, PathBuf) {
    static PROGRAMS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        assert!(
            Path::new("/usr/include/level_zero/ze_api.h").exists(),
            "the Level Zero headers and loader are missing: run `cargo xtask setup`, which \
             installs Debian's libze1 and libze-dev"
        );
        let plain = compile_c_with(
            "ze_plain",
            &["tests/c/ze_plain.c", "tests/c/ze_workload.c"],
            &["-lze_loader"],
        );
        let traced = compile_c_with(
            "ze_traced",
            &["tests/c/ze_traced.c", "tests/c/ze_workload.c"],
            &["-lpti", "-lze_loader"],
        );
        (plain, traced)
    })
}

/// What the simulated driver says really happened.
#[derive(Debug, Default)]
struct Truth {
    /// Host time at which the driver started.
    start: u64,
    /// Host time at which the device's kernel timestamps wrapped around.
    wrap: u64,
    /// Every command it executed: kind (KERNEL, COPY, FILL, BARRIER), name, bytes, start, end.
    commands: Vec<(String, String, u64, u64, u64)>,
    /// The objects still alive at exit, by kind.
    live: Vec<(String, u64)>,
}

/// Output of one run: the program's ("W") and the tool's ("T") lines, and the driver's account.
struct Run {
    w: Vec<String>,
    t: Vec<String>,
    truth: Truth,
}

fn parse_truth(text: &str, report: &str) -> Truth {
    let mut truth = Truth::default();
    for line in text.lines() {
        let p: Vec<&str> = line.split(' ').collect();
        match p.as_slice() {
            ["TRUTH", "START", t] => truth.start = t.parse().unwrap(),
            ["TRUTH", "WRAP", t] => truth.wrap = t.parse().unwrap(),
            ["TRUTH", kind, name, bytes, start, end] => truth.commands.push((
                kind.to_string(),
                name.to_string(),
                bytes.parse().unwrap(),
                start.parse().unwrap(),
                end.parse().unwrap(),
            )),
            _ => panic!("unexpected ground-truth line {line:?}"),
        }
    }
    let report = pti_tests::SimReport::parse_all(report)
        .pop()
        .unwrap_or_else(|| panic!("no LIVE line in the driver's report: {report:?}"));
    truth.live = report
        .live
        .into_iter()
        .map(|(k, v)| (k, v as u64))
        .collect();
    truth
}

fn run(exe: &Path, env: &[(&str, &str)]) -> Run {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let stem = format!("ze-{}-{n}", std::process::id());
    let (truth_file, report_file) = (
        out_dir().join(format!("{stem}.truth")),
        out_dir().join(format!("{stem}.report")),
    );
    let mut cmd = Command::new(exe);
    cmd.env("ZE_ENABLE_ALT_DRIVERS", simulated_driver())
        .env("ZE_SIM_TRUTH", &truth_file)
        .env("ZE_SIM_REPORT", &report_file)
        .env_remove("ZE_ENABLE_TRACING_LAYER")
        .env_remove("PTI_LEVEL_ZERO")
        .env_remove("ZE_SIM_WRAP_US")
        .env_remove("ZE_SIM_DEVICE_TYPE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} {env:?} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        exe.display(),
        out.status
    );
    let read = |p: &Path| {
        let text = std::fs::read_to_string(p)
            .unwrap_or_else(|e| panic!("the simulated driver wrote no {}: {e}", p.display()));
        let _ = std::fs::remove_file(p);
        text
    };
    let truth = parse_truth(&read(&truth_file), read(&report_file).trim());
    Run {
        w: lines_after(&stdout, "W "),
        t: lines_after(&stdout, "T "),
        truth,
    }
}

/// The `zelTracer*RegisterCallback` functions the installed loader exports: what its tracing
/// layer offers.
fn loader_register_functions() -> BTreeSet<String> {
    register_functions_of(Path::new("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"))
}

/// The program's lines that must be the same with and without libpti.
fn invariant_lines(w: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = w
        .iter()
        .filter(|l| l.starts_with("RESULT") || l.starts_with("DEVICE"))
        .cloned()
        .collect();
    lines.sort();
    lines
}

#[derive(Debug, Clone)]
struct ApiRecord {
    id: u32,
    tid: u32,
    start: u64,
    end: u64,
}

/// A device record (kernel, copy, fill, or barrier): what it is, its call and its times.
#[derive(Debug, Clone)]
struct DeviceRecord {
    /// KERNEL, COPY, FILL or BARRIER (the ground truth's kinds).
    kind: &'static str,
    name: String,
    detail: String,
    bytes: u64,
    corr: u32,
    tid: u32,
    append: u64,
    submit: u64,
    start: u64,
    end: u64,
    /// `_kernel_id` or `_mem_op_id` (0 for barriers).
    op: u64,
}

/// A PTI_VIEW_EXT_COMMAND_EXECUTION record: one execution of a regular list's command.
#[derive(Debug)]
struct Execution {
    corr: u32,
    tid: u32,
    api_id: u32,
    submit: u64,
}

fn field<T: std::str::FromStr>(parts: &[&str], i: usize, line: &str) -> T {
    parts
        .get(i)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("field {i} of {line:?}"))
}

/// What the tool printed, parsed.
#[derive(Default)]
struct Traced {
    enable: String,
    /// (site, api id, correlation, thread, status, kernel name)
    callbacks: Vec<(char, u32, u32, u32, i64, String)>,
    api: HashMap<u32, ApiRecord>,
    /// Kernels, copies, fills and barriers.
    device: Vec<DeviceRecord>,
    /// Kernel records of the CPU-kernel view.
    cpu_kernels: usize,
    /// Each kernel, copy and fill record's PCI address and engine ("ordinal.index").
    places: Vec<(String, String)>,
    /// Command-execution records, by operation ID.
    executions: HashMap<u64, Execution>,
    /// Kernel-launch records, by kernel ID: "dims counts sizes globals".
    launches: HashMap<u64, String>,
    waits: Vec<HostWait>,
    counters: HashMap<String, u64>,
    criticals: Vec<String>,
}

/// A host wait's synchronisation record.
#[derive(Debug)]
struct HostWait {
    /// `pti_view_synchronization_type`.
    kind: u32,
    api_id: u32,
    corr: u32,
    tid: u32,
    start: u64,
    end: u64,
    wait_events: u32,
    status: i32,
}

/// `pti_view_synchronization_type` values.
const GPU_BARRIER_EXECUTION: u32 = 1;
const HOST_FENCE: u32 = 3;
const HOST_EVENT: u32 = 4;
const HOST_COMMAND_QUEUE: u32 = 6;

fn device_record(kind: &'static str, p: &[&str], line: &str, at: usize) -> DeviceRecord {
    DeviceRecord {
        kind,
        name: p[1].into(),
        detail: String::new(),
        bytes: 0,
        corr: field(p, at, line),
        tid: field(p, at + 1, line),
        append: field(p, at + 2, line),
        submit: field(p, at + 3, line),
        start: field(p, at + 4, line),
        end: field(p, at + 5, line),
        op: 0,
    }
}

fn parse_traced(t: &[String]) -> Traced {
    let mut out = Traced::default();
    for line in t {
        let p: Vec<&str> = line.split(' ').collect();
        match p[0] {
            "ENABLE" => out.enable = p[1].into(),
            "CB" => out.callbacks.push((
                p[1].chars().next().unwrap(),
                field(&p, 2, line),
                field(&p, 3, line),
                field(&p, 4, line),
                field(&p, 5, line),
                p[6].to_string(),
            )),
            "API" => {
                let corr = field(&p, 2, line);
                let old = out.api.insert(
                    corr,
                    ApiRecord {
                        id: field(&p, 1, line),
                        tid: field(&p, 3, line),
                        start: field(&p, 4, line),
                        end: field(&p, 5, line),
                    },
                );
                assert!(old.is_none(), "two API records with correlation ID {corr}");
            }
            "KERNEL" => {
                out.device.push(DeviceRecord {
                    op: field(&p, 12, line),
                    ..device_record("KERNEL", &p, line, 2)
                });
                out.cpu_kernels += usize::from(p[9] == "cpu");
                out.places.push((p[10].to_string(), p[11].to_string()));
            }
            "COPY" => {
                out.device.push(DeviceRecord {
                    detail: p[2].into(),
                    bytes: field(&p, 3, line),
                    op: field(&p, 12, line),
                    ..device_record("COPY", &p, line, 4)
                });
                out.places.push((p[10].to_string(), p[11].to_string()));
            }
            "FILL" => {
                out.device.push(DeviceRecord {
                    bytes: field(&p, 2, line),
                    op: field(&p, 11, line),
                    ..device_record("FILL", &p, line, 3)
                });
                out.places.push((p[9].to_string(), p[10].to_string()));
            }
            "LAUNCH" => {
                let old = out.launches.insert(field(&p, 1, line), p[2..].join(" "));
                assert!(old.is_none(), "two launch records of one kernel: {line}");
            }
            "EXEC" => {
                let old = out.executions.insert(
                    field(&p, 1, line),
                    Execution {
                        corr: field(&p, 2, line),
                        tid: field(&p, 3, line),
                        api_id: field(&p, 4, line),
                        submit: field(&p, 5, line),
                    },
                );
                assert!(
                    old.is_none(),
                    "two execution records of one operation: {line}"
                );
            }
            "SYNC" => {
                let kind: u32 = field(&p, 1, line);
                let api_id: u32 = field(&p, 2, line);
                let (corr, tid, start, end) = (
                    field(&p, 3, line),
                    field(&p, 4, line),
                    field(&p, 5, line),
                    field(&p, 6, line),
                );
                if kind == GPU_BARRIER_EXECUTION {
                    // A barrier's record has no append or submit time: its call's.
                    out.device.push(DeviceRecord {
                        kind: "BARRIER",
                        name: format!("api{api_id}"),
                        detail: String::new(),
                        bytes: 0,
                        corr,
                        tid,
                        append: 0,
                        submit: 0,
                        start,
                        end,
                        op: 0,
                    });
                } else {
                    out.waits.push(HostWait {
                        kind,
                        api_id,
                        corr,
                        tid,
                        start,
                        end,
                        wait_events: field(&p, 7, line),
                        status: field(&p, 8, line),
                    });
                }
            }
            "CRITICAL" => out.criticals.push(line.clone()),
            "PENDING" | "DROPPED" | "CRITICALS" | "CBOVERFLOW" | "PROBLEMS" | "INTERCEPTED" => {
                out.counters.insert(p[0].into(), field(&p, 1, line));
            }
            other => panic!("unexpected tool line {other:?}: {line}"),
        }
    }
    out
}

/// Every ENTER has its EXIT on the same thread, with the same function and correlation ID,
/// properly nested; returns the (id, correlation, thread) of every call.
fn check_callbacks(tr: &Traced, ids: &HashMap<String, u32>) -> Vec<(u32, u32, u32)> {
    let mut stacks: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let mut calls = Vec::new();
    for (site, id, corr, tid, rc, kernel) in &tr.callbacks {
        let stack = stacks.entry(*tid).or_default();
        match site {
            'E' => stack.push((*id, *corr)),
            'X' => {
                assert_eq!(
                    stack.pop(),
                    Some((*id, *corr)),
                    "EXIT of {id}/{corr} on thread {tid} does not match the open ENTER"
                );
                assert_eq!(
                    *rc, 0,
                    "EXIT of {id}/{corr}: _return_code is not ZE_RESULT_SUCCESS"
                );
                calls.push((*id, *corr, *tid));
            }
            _ => panic!("bad site {site}"),
        }
        if *id == ids["zeCommandListAppendLaunchKernel"] {
            assert!(
                kernel == "vadd" || kernel == "spin",
                "launch callback names kernel {kernel:?}"
            );
        }
    }
    for (tid, stack) in &stacks {
        assert!(
            stack.is_empty(),
            "thread {tid} has ENTERs without EXIT: {stack:?}"
        );
    }
    assert!(
        !tr.callbacks
            .iter()
            .any(|c| c.1 == ids["zeKernelSetArgumentValue"]),
        "callbacks for zeKernelSetArgumentValue, which the tool disabled"
    );
    for name in [
        "zeInit",
        "zeDriverGet",
        "zeDeviceGetProperties",
        "zeContextCreate",
        "zeModuleCreate",
        "zeKernelCreate",
        "zeKernelSetGroupSize",
        "zeMemAllocShared",
        "zeEventPoolCreate",
        "zeCommandListCreateImmediate",
        "zeCommandListAppendLaunchKernel",
        "zeCommandListAppendMemoryFill",
        "zeCommandListClose",
        "zeCommandQueueExecuteCommandLists",
        "zeFenceHostSynchronize",
        "zeFenceReset",
        "zeEventHostSynchronize",
        "zeEventQueryKernelTimestamp",
        "zeCommandQueueSynchronize",
        "zeMemFree",
        "zeContextDestroy",
    ] {
        assert!(
            calls.iter().any(|c| c.0 == ids[name]),
            "no callbacks for {name}"
        );
    }
    let threads: BTreeSet<u32> = calls.iter().map(|c| c.2).collect();
    assert!(
        threads.len() >= 3,
        "calls on threads {threads:?}: expected the main thread and two workers"
    );
    calls
}

/// The multiset of `(name, bytes)` the program says it submitted, for one kind.
fn expected(w: &[String], kind: &str) -> Vec<(String, u64)> {
    let prefix = format!("EXPECT {kind} ");
    let mut v: Vec<(String, u64)> = w
        .iter()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|rest| {
            let mut p = rest.split(' ');
            let name = p.next().unwrap().to_string();
            (name, p.next().map_or(0, |b| b.parse().unwrap()))
        })
        .collect();
    v.sort();
    v
}

/// Matches every record with the command the driver ran (same kind, name and size), pairing the
/// closest first, each command at most once; returns the worst error (ns) and the number of
/// records that ran after the wrap-around.
fn compare_with_truth(records: &[DeviceRecord], truth: &Truth, unrecorded: usize) -> (u64, usize) {
    let mut pairs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        for (j, (kind, name, bytes, start, end)) in truth.commands.iter().enumerate() {
            let same = kind == r.kind
                && match r.kind {
                    "KERNEL" => *name == r.name,
                    "COPY" | "FILL" => *bytes == r.bytes,
                    _ => true,
                };
            if same {
                let error = r.start.abs_diff(*start).max(r.end.abs_diff(*end));
                pairs.push((error, i, j));
            }
        }
    }
    let made = pti_tests::pair_closest(pairs, records.len())
        .unwrap_or_else(|i| panic!("{:?} matches no command the driver ran", records[i]));
    let mut truth_done = vec![false; truth.commands.len()];
    let mut after_wrap = 0;
    for &(error, i, j) in &made {
        assert!(
            error <= MAX_ERROR_NS,
            "{:?} is {error} ns from the driver's ground truth {:?} (the closest command left)",
            records[i],
            truth.commands[j]
        );
        truth_done[j] = true;
        after_wrap += usize::from(truth.commands[j].3 >= truth.wrap);
    }
    let worst = pti_tests::worst_error(&made);
    // Every command of the program has its record but the `unrecorded` ones (counted lost);
    // barriers need none (the synchronisation view is not checked here).
    let without: Vec<_> = truth_done
        .iter()
        .enumerate()
        .filter(|(j, done)| !**done && truth.commands[*j].0 != "BARRIER")
        .map(|(j, _)| &truth.commands[j])
        .collect();
    assert_eq!(
        without.len(),
        unrecorded,
        "commands the driver ran without a record: {without:?}"
    );
    (worst, after_wrap)
}

/// Runs the workload alone and under the tool on the simulated device of type `device_type`
/// (`cpu` or `gpu`), and checks everything the tool received. With `keep_pools`, libpti leaves
/// the program's event pools as they are, and cannot time the commands that signal events
/// without host-readable timestamps.
fn check_device(device_type: &str, keep_pools: bool) {
    let (plain_exe, traced_exe) = programs();
    let ids = api_ids("pti_driver_levelzero_api_ids.h");
    let plain = run(plain_exe, &[("ZE_SIM_DEVICE_TYPE", device_type)]);
    let keep = if keep_pools { "1" } else { "0" };
    let traced = run(
        traced_exe,
        &[
            ("ZE_SIM_DEVICE_TYPE", device_type),
            ("PTI_LEVEL_ZERO_KEEP_EVENT_POOLS", keep),
        ],
    );

    // The program computes the same with libpti as without, nothing is leaked (libpti's event
    // pools and events are gone with the program's context), and no command waited for an event
    // that was never to signal.
    assert_eq!(invariant_lines(&plain.w), invariant_lines(&traced.w));
    for run in [&plain, &traced] {
        for (kind, n) in &run.truth.live {
            assert_eq!(*n, 0, "at exit, {kind}: {n} ({:?})", run.truth.live);
        }
    }

    let tr = parse_traced(&traced.t);
    assert_eq!(
        tr.enable, "PTI_SUCCESS",
        "ptiCallbackEnable(LEVELZERO): {:?}",
        tr.criticals
    );
    // Keeping the program's pools, libpti cannot time the commands that signal the program's
    // events without host-readable timestamps (it never replaces a program's event): the spin
    // kernel and the last copy (a pool without timestamps), the first copy (timestamps the host
    // cannot read); counted, and said once.
    let (dropped, criticals) = if keep_pools { (3, 1) } else { (0, 0) };
    for (counter, want) in [
        ("PENDING", 0),
        ("DROPPED", dropped),
        ("CRITICALS", criticals),
        ("CBOVERFLOW", 0),
        ("PROBLEMS", 0),
    ] {
        assert_eq!(
            tr.counters.get(counter).copied(),
            Some(want),
            "{counter}; critical events: {:?}",
            tr.criticals
        );
    }
    // Every function the loader's tracing layer offers has a prologue and an epilogue, and the
    // functions of the extension route (none of which loader 1.8.12's layer traces) wrappers.
    let offered = loader_register_functions().len() as u64;
    assert!(
        offered > 100,
        "the loader exports only {offered} register functions"
    );
    assert_eq!(
        tr.counters.get("INTERCEPTED").copied(),
        Some(offered + extension_route().len() as u64)
    );

    // Callbacks, and API records for the functions the tool enabled, each matching a call.
    let calls = check_callbacks(&tr, &ids);
    let name_of = |id: u32| {
        ids.iter()
            .find(|(_, v)| **v == id)
            .map(|(k, _)| k.clone())
            .unwrap()
    };
    let recorded_ok = |name: &str| {
        name.starts_with("zeCommandListAppend")
            || [
                "zeCommandQueueExecuteCommandLists",
                "zeMemAllocDevice",
                "zeCommandQueueSynchronize",
                "zeFenceHostSynchronize",
                "zeEventHostSynchronize",
            ]
            .contains(&name)
    };
    for (corr, api) in &tr.api {
        assert!(
            recorded_ok(&name_of(api.id)),
            "API record for {}, not enabled",
            name_of(api.id)
        );
        assert!(
            calls.contains(&(api.id, *corr, api.tid)),
            "API record {corr} {api:?} has no matching callbacks"
        );
        assert!(api.start <= api.end);
    }
    for name in [
        "zeCommandListAppendLaunchKernel",
        "zeCommandListAppendMemoryCopy",
        "zeCommandListAppendBarrier",
        "zeCommandQueueExecuteCommandLists",
        "zeMemAllocDevice",
        "zeFenceHostSynchronize",
    ] {
        assert!(
            tr.api.values().any(|a| a.id == ids[name]),
            "no API record for {name}"
        );
    }

    // Device records: one per command the program submitted (per execution of the regular
    // list), of the right view, size and memory types.
    let of_kind = |kind: &str| {
        let mut v: Vec<(String, u64)> = tr
            .device
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| (r.name.clone(), r.bytes))
            .collect();
        v.sort();
        v
    };
    // Keeping the pools, the three commands counted lost above have no record.
    let recordable = |kind: &str| {
        let mut want = expected(&traced.w, kind);
        let lost: &[(&str, &str)] = if keep_pools {
            &[
                ("KERNEL", "spin"),
                ("COPY", "zeCommandListAppendMemoryCopy(H2D)"),
                ("COPY", "zeCommandListAppendMemoryCopy(S2M)"),
            ]
        } else {
            &[]
        };
        for (k, name) in lost.iter().filter(|(k, _)| *k == kind) {
            let at = want
                .iter()
                .position(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("the program announced no {k} {name}"));
            want.remove(at);
        }
        want
    };
    let kernels = of_kind("KERNEL");
    assert_eq!(
        kernels.iter().map(|k| (k.0.clone(), 0)).collect::<Vec<_>>(),
        recordable("KERNEL")
    );
    assert_eq!(of_kind("COPY"), recordable("COPY"));
    assert_eq!(of_kind("FILL"), recordable("FILL"));
    let want_cpu = if device_type == "cpu" {
        kernels.len()
    } else {
        0
    };
    assert_eq!(
        tr.cpu_kernels, want_cpu,
        "kernel records of the CPU view on a {device_type} device"
    );
    // Every kernel has its launch record: vadd in 64 groups of 64 (set with
    // zeKernelSetGroupSize), spin in one group of a size it never set (0: the driver's default).
    let mut launches: Vec<(String, String)> = tr
        .device
        .iter()
        .filter(|r| r.kind == "KERNEL")
        .map(|r| {
            let launch = tr
                .launches
                .get(&r.op)
                .unwrap_or_else(|| panic!("{r:?} has no launch record: {:?}", tr.launches));
            (r.name.clone(), launch.clone())
        })
        .collect();
    launches.sort();
    launches.dedup();
    assert_eq!(
        launches,
        [
            ("spin".to_string(), "3 1,1,1 0,0,0 0,0,0".to_string()),
            ("vadd".to_string(), "3 64,1,1 64,1,1 4096,1,1".to_string()),
        ],
        "kernel launches"
    );
    assert_eq!(
        tr.launches.len(),
        tr.device.iter().filter(|r| r.kind == "KERNEL").count()
    );

    // Every kernel, copy and fill names the simulated device's PCI address and the engine the
    // workload asked for: its immediate lists on 0.1 and 0.2, its regular list executed on a
    // queue of 0.3.
    let engines: std::collections::BTreeSet<&str> =
        tr.places.iter().map(|(_, e)| e.as_str()).collect();
    assert!(
        tr.places.iter().all(|(pci, _)| pci == "0000:3a:00.0"),
        "{:?}",
        tr.places
    );
    assert_eq!(
        engines,
        ["0.1", "0.2", "0.3"].into_iter().collect(),
        "{:?}",
        tr.places
    );
    for c in tr.device.iter().filter(|r| r.kind == "COPY") {
        let suffix = c.name.split('(').nth(1).unwrap().trim_end_matches(')');
        assert_eq!(
            c.detail, suffix,
            "{c:?}: ptiViewMemcpyTypeToString of its type"
        );
    }
    let mut syncs: Vec<(String, u64)> = tr
        .device
        .iter()
        .filter(|r| r.kind == "BARRIER")
        .map(|_| ("zeCommandListAppendBarrier".to_string(), 0))
        .chain(tr.waits.iter().map(|s| (name_of(s.api_id), 0)))
        .collect();
    syncs.sort();
    assert_eq!(
        syncs,
        expected(&traced.w, "SYNC"),
        "synchronisation records"
    );

    // Correlation: every record carries its append call's ID and thread (as Intel PTI's do);
    // a regular list's commands also have a command-execution record per execution, naming the
    // execute call that ran them, one set per execution.
    let execute = ids["zeCommandQueueExecuteCommandLists"];
    let mut per_execution: HashMap<u32, usize> = HashMap::new();
    for x in tr.executions.values() {
        let call = tr
            .api
            .get(&x.corr)
            .unwrap_or_else(|| panic!("{x:?}: no API record with its correlation ID"));
        assert_eq!(
            (call.id, x.api_id, call.tid),
            (execute, execute, x.tid),
            "{x:?} names {call:?}"
        );
        assert!(
            call.start <= x.submit && x.submit <= call.end,
            "{x:?}: submitted outside its execute call {call:?}"
        );
        *per_execution.entry(x.corr).or_default() += 1;
    }
    for r in &tr.device {
        let api = tr
            .api
            .get(&r.corr)
            .unwrap_or_else(|| panic!("{r:?}: no API record with its correlation ID"));
        assert_eq!(r.tid, api.tid, "{r:?}: thread differs from its call's");
        assert!(r.start <= r.end, "{r:?}: ends before it starts");
        assert!(
            r.start >= api.start,
            "{r:?} starts before its call {api:?} began"
        );
        let function = if r.kind == "BARRIER" {
            "zeCommandListAppendBarrier"
        } else if r.kind == "KERNEL" {
            "zeCommandListAppendLaunchKernel"
        } else {
            r.name.split('(').next().unwrap()
        };
        assert_eq!(api.id, ids[function], "{r:?} correlates with {api:?}");
        if r.kind == "BARRIER" {
            continue;
        }
        assert!(
            api.start <= r.append && r.append <= api.end,
            "{r:?}: append time outside its call {api:?}"
        );
        match tr.executions.get(&r.op) {
            // A regular list's command: submitted by the execute call its execution names.
            Some(x) => assert!(
                r.append < x.submit && x.submit == r.submit && r.submit <= r.start,
                "{r:?}: appended before, submitted by its execution {x:?}"
            ),
            None => assert!(
                r.append == r.submit && r.submit <= r.start,
                "{r:?}: append and submit times are its call's {api:?}"
            ),
        }
    }
    assert_eq!(
        per_execution.len(),
        EXECUTIONS,
        "executions with records: {per_execution:?}"
    );
    assert!(
        per_execution.values().all(|n| *n == REGULAR_COMMANDS),
        "records per execution: {per_execution:?}"
    );
    let executed_records = tr
        .device
        .iter()
        .filter(|r| r.kind != "BARRIER" && tr.executions.contains_key(&r.op))
        .count();
    assert_eq!(
        executed_records + EXECUTIONS * REGULAR_BARRIERS,
        EXECUTIONS * REGULAR_COMMANDS,
        "every kernel, copy and fill of the regular list has its execution record (the barriers \
         of each execution have no operation ID in their records)"
    );

    // Host waits span their calls.
    for s in &tr.waits {
        let api = &tr.api[&s.corr];
        assert_eq!((api.id, api.tid), (s.api_id, s.tid), "{s:?}");
        assert!(
            api.start <= s.start && s.start <= s.end && s.end <= api.end,
            "{s:?} outside its call {api:?}"
        );
        let want = match name_of(s.api_id).as_str() {
            "zeEventHostSynchronize" => (HOST_EVENT, 1),
            "zeFenceHostSynchronize" => (HOST_FENCE, 0),
            "zeCommandQueueSynchronize" => (HOST_COMMAND_QUEUE, 0),
            other => panic!("a host-wait record for {other}"),
        };
        assert_eq!(
            (s.kind, s.wait_events, s.status),
            (want.0, want.1, 0),
            "{s:?}"
        );
    }

    // The program's own measurement of its timed kernel equals the record's duration.
    let own: u64 = traced
        .w
        .iter()
        .find_map(|l| l.strip_prefix("OWNTIME "))
        .expect("OWNTIME line")
        .parse()
        .unwrap();
    let vadd_immediate = tr
        .device
        .iter()
        .find(|r| r.name == "vadd" && !tr.executions.contains_key(&r.op))
        .expect("the immediate list's vadd record");
    let duration = vadd_immediate.end - vadd_immediate.start;
    assert!(
        duration.abs_diff(own) <= 60,
        "record {vadd_immediate:?} lasts {duration} ns, the program's event says {own} ns"
    );

    // Times: every record within 1 µs of when the driver really ran the command, on both sides of
    // the kernel timestamps' wrap-around.
    assert!(traced.truth.start < traced.truth.wrap);
    let (worst, after_wrap) = compare_with_truth(&tr.device, &traced.truth, dropped as usize);
    // libpti appends no barrier (it never replaces a program's event, so never signals one).
    let barriers = |truth: &Truth| truth.commands.iter().filter(|c| c.0 == "BARRIER").count();
    assert_eq!(
        barriers(&traced.truth),
        barriers(&plain.truth),
        "barriers libpti appended"
    );
    let before_wrap = tr.device.len() - after_wrap;
    assert!(
        after_wrap > 0 && before_wrap > 0,
        "the wrap-around (at {} ns) did not fall inside the workload: {before_wrap} records \
         before it, {after_wrap} after",
        traced.truth.wrap
    );
    println!(
        "{device_type} device{}: {} calls traced ({} distinct functions) of {offered} intercepted; \
         {} API records; {} device records ({before_wrap} before the kernel timestamps wrapped, \
         {after_wrap} after), worst error against the driver's ground truth {worst} ns; {} host \
         waits; nothing leaked",
        if keep_pools {
            ", program's pools kept"
        } else {
            ""
        },
        calls.len(),
        calls.iter().map(|c| c.0).collect::<BTreeSet<_>>().len(),
        tr.api.len(),
        tr.device.len(),
        tr.waits.len(),
    );
}

#[test]
fn cpu_device_through_the_real_loader_and_tracing_layer() {
    check_device("cpu", false);
}

/// The GPU paths, and libpti told to keep the program's event pools: the commands whose events
/// the host cannot read timestamps from are counted lost (libpti never replaces a program's
/// event), the others recorded.
#[test]
fn gpu_device_keeping_the_programs_event_pools() {
    check_device("gpu", true);
}

/// A tool's timestamp callback that goes backwards at every read: pairing device ticks with host
/// times (two reads of the tool's clock around `zeDeviceGetGlobalTimestamps`) must neither
/// overflow nor panic, and nothing is lost: the program runs unchanged, every command gets its
/// record, and no critical event is raised (a caught panic would raise one).
#[test]
fn a_tool_clock_that_goes_backwards_loses_nothing() {
    let (plain_exe, traced_exe) = programs();
    let plain = run(plain_exe, &[]);
    let traced = run(traced_exe, &[("PTI_TEST_CLOCK", "backwards")]);
    assert_eq!(invariant_lines(&plain.w), invariant_lines(&traced.w));
    let tr = parse_traced(&traced.t);
    assert_eq!(tr.enable, "PTI_SUCCESS");
    assert!(tr.criticals.is_empty(), "{:?}", tr.criticals);
    for (counter, want) in [("PENDING", 0), ("DROPPED", 0), ("PROBLEMS", 0)] {
        assert_eq!(tr.counters.get(counter).copied(), Some(want), "{counter}");
    }
    let commands = ["KERNEL", "COPY", "FILL"]
        .iter()
        .map(|k| expected(&traced.w, k).len())
        .sum::<usize>();
    let recorded = tr
        .device
        .iter()
        .filter(|r| ["KERNEL", "COPY", "FILL"].contains(&r.kind))
        .count();
    assert_eq!(recorded, commands, "every command gets its record");
}

/// A regular command list built while collection is paused (`ptiViewPause`) and executed after
/// the resume: every command of every execution gets its record (the list's commands are
/// prepared whenever the view is enabled; an execution made while collecting records them).
#[test]
fn a_regular_list_built_while_paused_is_recorded_when_run_after_the_resume() {
    let (_, traced_exe) = programs();
    let traced = run(traced_exe, &[("ZE_TEST_PAUSE_WHILE_BUILDING", "1")]);
    let tr = parse_traced(&traced.t);
    assert_eq!(tr.enable, "PTI_SUCCESS");
    assert!(tr.criticals.is_empty(), "{:?}", tr.criticals);
    for (counter, want) in [("PENDING", 0), ("DROPPED", 0), ("PROBLEMS", 0)] {
        assert_eq!(tr.counters.get(counter).copied(), Some(want), "{counter}");
    }
    let of_kind = |kind: &str| {
        let mut v: Vec<(String, u64)> = tr
            .device
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| (r.name.clone(), if kind == "KERNEL" { 0 } else { r.bytes }))
            .collect();
        v.sort();
        v
    };
    for kind in ["KERNEL", "COPY", "FILL"] {
        let want = expected(&traced.w, kind);
        assert!(!want.is_empty(), "the regular list has {kind} commands");
        assert_eq!(of_kind(kind), want, "{kind} records");
    }
}

/// Without the tracing layer (`ZE_ENABLE_TRACING_LAYER=0` set before the program starts), naming
/// Level Zero fails with PTI_ERROR_TRACING_NOT_INITIALIZED, a critical event says why, and the
/// program runs unchanged. With `PTI_LEVEL_ZERO=0` libpti leaves Level Zero alone altogether:
/// the same error, no critical event (the user asked for it).
#[test]
fn without_the_tracing_layer_the_tool_is_told_why() {
    let (plain_exe, traced_exe) = programs();
    let plain = run(plain_exe, &[]);
    for (env, criticals) in [
        (("ZE_ENABLE_TRACING_LAYER", "0"), 1),
        (("PTI_LEVEL_ZERO", "0"), 0),
    ] {
        let traced = run(traced_exe, &[env]);
        let tr = parse_traced(&traced.t);
        assert_eq!(tr.enable, "PTI_ERROR_TRACING_NOT_INITIALIZED", "{env:?}");
        assert_eq!(tr.criticals.len(), criticals, "{env:?}: {:?}", tr.criticals);
        if criticals == 1 {
            assert!(
                tr.criticals[0].contains("ZE_ENABLE_TRACING_LAYER"),
                "{env:?}: the critical event does not say what to do: {}",
                tr.criticals[0]
            );
        }
        assert_eq!(tr.counters.get("CRITICALS"), Some(&(criticals as u64)));
        assert_eq!(tr.counters.get("INTERCEPTED"), Some(&0));
        assert!(tr.callbacks.is_empty() && tr.device.is_empty());
        assert_eq!(
            invariant_lines(&plain.w),
            invariant_lines(&traced.w),
            "{env:?}"
        );
        for (kind, n) in &traced.truth.live {
            assert_eq!(*n, 0, "{env:?}: {n} {kind} still alive at exit");
        }
    }
}

/// Explicit activation, as a launcher does it: it sets `ZE_ENABLE_TRACING_LAYER=1` itself (and
/// libpti's constructor keeps a value that is set).
#[test]
fn a_tracing_layer_enabled_by_a_launcher_is_used() {
    let (_, traced_exe) = programs();
    let traced = run(traced_exe, &[("ZE_ENABLE_TRACING_LAYER", "1")]);
    let tr = parse_traced(&traced.t);
    assert_eq!(tr.enable, "PTI_SUCCESS", "{:?}", tr.criticals);
    assert!(!tr.callbacks.is_empty() && !tr.device.is_empty());
    assert_eq!(tr.counters.get("PENDING"), Some(&0));
    assert_eq!(tr.counters.get("CRITICALS"), Some(&0));
}

/// The overhead benchmark (`benches/ze_overhead.c`, see `docs/BENCHMARKS.md`) builds and runs in
/// every mode, so the documented command keeps working; its figures come from release builds.
#[test]
fn the_overhead_benchmark_runs_in_every_mode() {
    let exe = compile_c_with(
        "ze_overhead",
        &["benches/ze_overhead.c"],
        &["-lpti", "-lze_loader"],
    );
    for mode in [
        "off",
        "layer",
        "tracer",
        "attached",
        "callbacks",
        "apiview",
        "views",
        "floor",
    ] {
        let mut cmd = Command::new(&exe);
        cmd.args([mode, "1000", "200"])
            .env("ZE_ENABLE_ALT_DRIVERS", simulated_driver())
            .env_remove("ZE_ENABLE_TRACING_LAYER")
            .env_remove("PTI_LEVEL_ZERO");
        if mode == "off" || mode == "floor" {
            cmd.env("PTI_LEVEL_ZERO", "0");
        }
        let out = pti_tests::run_ok(&mut cmd);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let records: u64 = stdout
            .split_whitespace()
            .skip_while(|w| *w != "records")
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{mode}: {stdout}"));
        // views: an API record per call, a kernel record per launch, a sync record per wait;
        // apiview: an API record per call (set-argument calls, launches and copies).
        let want_at_least = match mode {
            "views" => 1000 + 2 * 200,
            "apiview" => 1000 + 2 * 200,
            _ => 0,
        };
        assert!(records >= want_at_least, "{mode}: {stdout}");
        // The floor read a device time for every launch (the simulated kernels take time).
        if mode == "floor" {
            assert!(
                !stdout.contains("device_ticks 0 ")
                    && !stdout.trim_end().ends_with("device_ticks 0"),
                "{stdout}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The newest Level Zero: generated registration, the extension route, drivers that implement less

/// The functions libpti wraps when a program obtains them through
/// `zeDriverGetExtensionFunctionAddress`, as the generated callbacks list them
/// (`xtask::level_zero::EXTENSION_ROUTE`).
fn extension_route() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("pti-core/src/backend/level_zero/callbacks.rs"))
        .expect("the generated callbacks");
    // Each wrapped function's first copy, `<function>_wrapper::<0>`, wherever the formatting put
    // it.
    let wrapped: Vec<String> = text
        .match_indices("_wrapper::<0>")
        .map(|(at, _)| {
            let before = &text[..at];
            let start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            before[start..].to_string()
        })
        .collect();
    assert!(wrapped.len() >= 10, "the generated wrappers: {wrapped:?}");
    wrapped
}

/// The `zelTracer*RegisterCallback` functions a loader library exports.
fn register_functions_of(loader: &Path) -> BTreeSet<String> {
    let out = pti_tests::run_ok(
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(loader),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| s.starts_with("zelTracer") && s.ends_with("RegisterCallback"))
        .map(str::to_string)
        .collect()
}

/// The register functions libpti's generated callbacks name.
fn generated_registration() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("pti-core/src/backend/level_zero/callbacks.rs"))
        .expect("the generated callbacks");
    // Every `c"zelTracer…"` literal, wherever the formatting put it.
    text.split("c\"zelTracer")
        .skip(1)
        .filter_map(|rest| rest.split_once('"'))
        .map(|(stem, _)| format!("zelTracer{stem}"))
        .collect()
}

#[test]
fn registration_reaches_every_function_a_1_32_loader_traces() {
    let newest = newest_level_zero();
    let loader = std::fs::read_dir(newest.join("usr/lib/x86_64-linux-gnu"))
        .expect("the unpacked libze1")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libze_loader.so.1."))
        })
        .expect("libze_loader.so.1.* in the unpacked libze1");
    let newest_offers = register_functions_of(&loader);
    let installed_offers = loader_register_functions();
    let generated = generated_registration();
    let missing: Vec<&String> = newest_offers.difference(&generated).collect();
    assert!(
        missing.is_empty(),
        "{} of the newest loader's register functions have no callbacks: {missing:?}",
        missing.len()
    );
    let reached_today = generated.intersection(&installed_offers).count();
    assert_eq!(
        reached_today,
        installed_offers.len(),
        "the installed loader's layer offers functions libpti does not register"
    );
    let route = extension_route();
    // On the extension route, what the newest loader's layer does not trace: Intel's `zex…`
    // functions and the `…Exp` forms older drivers serve by name.
    let untraced_by_newest: Vec<&String> = route
        .iter()
        .filter(|f| {
            f.starts_with("zex")
                || !newest_offers.contains(&format!("zelTracer{}RegisterCallback", &f[2..]))
        })
        .collect();
    println!(
        "registration: {} callbacks generated; the installed loader \
         (/usr/lib/x86_64-linux-gnu/libze_loader.so.1) exports {} register \
         functions, all registered, plus {} functions wrapped on the extension route = {} \
         intercepted; the newest loader ({}) exports {}, all of which the generated registration \
         reaches ({} intercepted with the {} wrapped functions it does not trace: \
         {untraced_by_newest:?})",
        generated.len(),
        installed_offers.len(),
        route.len(),
        installed_offers.len() + route.len(),
        loader.display(),
        newest_offers.len(),
        newest_offers.len() + untraced_by_newest.len(),
        untraced_by_newest.len(),
    );
}

/// The modern-path program, built against the newest headers.
fn modern_program() -> &'static PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let include = format!("-I{}", newest_level_zero().join("usr/include").display());
        pti_tests::compile(
            out_dir().join("ze_modern"),
            &[&include],
            &["tests/c/ze_modern.c"],
            &["-lpti", "-lze_loader"],
            &[lib_dir()],
        )
    })
}

/// One device record of the modern-path program.
#[derive(Debug)]
struct ModernRecord {
    kind: String,
    correlation_id: u32,
    start: u64,
    end: u64,
    /// `_kernel_id` or `_mem_op_id`.
    op: u64,
    name: String,
}

/// What the modern paths must give: `(appending function, kernels, copies, fills)` per call,
/// and the wait (`W WAIT <path>`) after which its commands must have ended.
const MODERN: [(&str, u64, u64, u64, &str); 9] = [
    ("zeCommandListAppendLaunchKernel", 1, 0, 0, "A"),
    ("zeCommandListAppendMemoryCopy", 0, 1, 0, "B"),
    (
        "zeCommandListAppendLaunchKernelWithParameters",
        1,
        0,
        0,
        "C",
    ),
    ("zeCommandListAppendLaunchKernelWithArguments", 1, 0, 0, "C"),
    ("zeCommandListAppendMemoryCopyWithParameters", 0, 1, 0, "C"),
    ("zeCommandListAppendMemoryFillWithParameters", 0, 0, 1, "C"),
    ("zeCommandListAppendHostFunction", 1, 0, 0, "C"),
    // A regular list of a kernel and a fill, run on the immediate list.
    ("zeCommandListImmediateAppendCommandListsExp", 1, 0, 1, "E"),
    (
        "zeCommandListImmediateAppendCommandListsWithParameters",
        1,
        0,
        1,
        "F",
    ),
];

/// Pairs each record with the closest command of its kind the driver ran (a host function's
/// kernel record with the driver's `HOSTFN`), each command once, and returns the worst error in
/// ns. Every command the driver ran (but the barriers libpti appends) must have its record.
fn modern_truth_error(device: &[ModernRecord], truth: &Truth) -> u64 {
    fn kind_of(r: &ModernRecord) -> &str {
        if r.name == "<host function>" {
            "HOSTFN"
        } else {
            &r.kind
        }
    }
    let ran: Vec<usize> = (0..truth.commands.len())
        .filter(|&j| truth.commands[j].0 != "BARRIER")
        .collect();
    assert_eq!(
        ran.len(),
        device.len(),
        "commands the driver ran (no barriers) vs device records"
    );
    let mut pairs = Vec::new();
    for (i, r) in device.iter().enumerate() {
        for &j in &ran {
            let (kind, _, _, start, end) = &truth.commands[j];
            if kind == kind_of(r) {
                pairs.push((r.start.abs_diff(*start).max(r.end.abs_diff(*end)), i, j));
            }
        }
    }
    let made = pti_tests::pair_closest(pairs, device.len())
        .unwrap_or_else(|i| panic!("{:?} matches no command the driver ran", device[i]));
    pti_tests::worst_error(&made)
}

/// Runs the modern paths with `env` and checks them exactly; returns the critical events. With a
/// driver that gives both kinds of timestamps (`exact_times`), each record must also be within
/// 1 µs of when the driver really ran its command.
fn check_modern(env: &[(&str, &str)], exact_times: bool) -> Vec<String> {
    let run = run(modern_program(), env);
    let ids = api_ids("pti_driver_levelzero_api_ids.h");
    let name_of = |id: u32| {
        ids.iter()
            .find(|(_, v)| **v == id)
            .map(|(n, _)| n.clone())
            .unwrap_or_else(|| format!("<id {id}>"))
    };
    let mut appended: HashMap<String, u64> = HashMap::new();
    let mut on_regular: HashMap<String, u64> = HashMap::new();
    let mut waits: HashMap<String, (u64, u64)> = HashMap::new();
    for line in &run.w {
        let p: Vec<&str> = line.split(' ').collect();
        match p.as_slice() {
            ["APPEND", f, n] => {
                *appended.entry(f.to_string()).or_default() += n.parse::<u64>().unwrap()
            }
            // Appends to the regular list: traced calls, recorded when the list runs.
            ["APPEND_REGULAR", f, n] => {
                *on_regular.entry(f.to_string()).or_default() += n.parse::<u64>().unwrap()
            }
            // The last wait of a path bounds its commands.
            ["WAIT", path, s, e] => {
                waits.insert(path.to_string(), (s.parse().unwrap(), e.parse().unwrap()));
            }
            ["RESULT", "host_function_calls", n] => assert_eq!(*n, "1", "the host function ran"),
            _ => {}
        }
    }
    let mut api: HashMap<u32, (String, u64, u64)> = HashMap::new();
    let mut api_calls: HashMap<String, u64> = HashMap::new();
    let mut device = Vec::new();
    let mut list_waits = 0;
    let mut criticals = Vec::new();
    // Command-execution records: operation ID -> (execute call's correlation ID, API ID).
    let mut executions: HashMap<u64, (u32, u32)> = HashMap::new();
    for line in &run.t {
        let p: Vec<&str> = line.splitn(7, ' ').collect();
        match p.as_slice() {
            ["API", id, corr, s, e] => {
                let name = name_of(id.parse().unwrap());
                *api_calls.entry(name.clone()).or_default() += 1;
                api.insert(
                    corr.parse().unwrap(),
                    (name, s.parse().unwrap(), e.parse().unwrap()),
                );
            }
            ["DEVICE", kind, corr, s, e, op, name] => device.push(ModernRecord {
                kind: kind.to_string(),
                correlation_id: corr.parse().unwrap(),
                start: s.parse().unwrap(),
                end: e.parse().unwrap(),
                op: op.parse().unwrap(),
                name: name.to_string(),
            }),
            ["EXEC", op, corr, id] => {
                let old = executions.insert(
                    op.parse().unwrap(),
                    (corr.parse().unwrap(), id.parse().unwrap()),
                );
                assert!(
                    old.is_none(),
                    "two execution records of one operation: {line}"
                );
            }
            ["SYNC", "5", id, _corr, s, e]
                if name_of(id.parse().unwrap()) == "zeCommandListHostSynchronize" =>
            {
                let (s, e): (u64, u64) = (s.parse().unwrap(), e.parse().unwrap());
                assert!(s <= e, "a list wait's record ends before it starts: {line}");
                list_waits += 1;
            }
            ["DROPPED", view, n] => {
                assert_eq!(*n, "0", "records of view {view} dropped: {:?}", run.t)
            }
            ["CRITICAL", ..] => criticals.push(line.clone()),
            _ => {}
        }
    }
    // Every appending call was traced, once per call.
    let mut expected = (0, 0, 0);
    for (function, kernels, copies, fills, _) in MODERN {
        let calls = appended.get(function).copied().unwrap_or(0);
        assert!(calls > 0, "the program made no {function}");
        assert_eq!(
            api_calls.get(function).copied().unwrap_or(0),
            calls + on_regular.get(function).copied().unwrap_or(0),
            "API records of {function}"
        );
        expected.0 += calls * kernels;
        expected.1 += calls * copies;
        expected.2 += calls * fills;
    }
    // Commands appended = device records (nothing was dropped, checked above), each with the
    // correlation ID of its appending call and times within the call and the wait after it.
    let count = |k: &str| device.iter().filter(|r| r.kind == k).count() as u64;
    assert_eq!(
        (count("KERNEL"), count("COPY"), count("FILL")),
        expected,
        "device records (kernels, copies, fills); critical events: {criticals:?}"
    );
    // Each record carries its append call's ID; a command of the regular list is also named by
    // its execution's record, whose call is the one that ran it (and bounds its times).
    let mut executed = 0;
    for r in &device {
        let (appended_by, append_start, _) = api
            .get(&r.correlation_id)
            .unwrap_or_else(|| panic!("{r:?}: no API record has its correlation ID"));
        assert!(
            *append_start <= r.start,
            "{r:?} starts before its {appended_by} call"
        );
        let (function, call_start) = match executions.get(&r.op) {
            Some((corr, id)) => {
                executed += 1;
                assert!(
                    on_regular.contains_key(appended_by),
                    "{r:?}: executed, but appended by a {appended_by} call"
                );
                let (name, start, _) = &api[corr];
                assert_eq!(*name, name_of(*id), "{r:?}: its execution names {name}");
                (name, start)
            }
            None => (appended_by, append_start),
        };
        let (_, kernels, copies, fills, path) = MODERN
            .iter()
            .find(|m| m.0 == function)
            .unwrap_or_else(|| panic!("{r:?} has the correlation ID of a {function} call"));
        let allowed = match r.kind.as_str() {
            "KERNEL" => *kernels,
            "COPY" => *copies,
            _ => *fills,
        };
        assert!(
            allowed > 0,
            "{r:?}: a {function} call appends no such command"
        );
        let (_, wait_end) = waits[*path];
        assert!(
            *call_start <= r.start && r.start <= r.end && r.end <= wait_end,
            "{r:?}: not within its {function} call (from {call_start}) and the wait after it \
             (to {wait_end})"
        );
        if function == "zeCommandListAppendHostFunction" {
            assert_eq!(r.name, "<host function>");
        }
    }
    assert_eq!(
        executed, 6,
        "the regular list's kernel and fill, run three times, each with its execution record"
    );
    assert_eq!(list_waits, 4, "zeCommandListHostSynchronize records");
    // Nothing leaked (libpti's events and pools included), and no command ran before an event
    // it waits for had signalled.
    for (kind, n) in &run.truth.live {
        assert_eq!(*n, 0, "{env:?}: {n} {kind} at exit");
    }
    let worst = modern_truth_error(&device, &run.truth);
    if exact_times {
        assert!(
            worst <= MAX_ERROR_NS,
            "a record is {worst} ns from the driver's ground truth"
        );
    }
    let counter = |k: &str| {
        run.t
            .iter()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("no T {k} line"))
            .trim()
            .to_string()
    };
    let intercepted: usize = counter("INTERCEPTED").parse().unwrap();
    assert_eq!(
        intercepted,
        loader_register_functions().len() + extension_route().len()
    );
    assert_eq!(
        counter("LOCAL"),
        "PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED"
    );
    println!(
        "modern paths {env:?}: {} calls appended {} commands; {} device records, 0 lost; worst \
         error against the driver's ground truth {worst} ns; {} intercepted functions",
        appended.values().sum::<u64>(),
        expected.0 + expected.1 + expected.2,
        device.len(),
        intercepted
    );
    criticals
}

#[test]
fn modern_paths_through_the_extension_route() {
    let criticals = check_modern(&[], true);
    assert!(criticals.is_empty(), "{criticals:?}");
}

#[test]
fn a_driver_without_query_status_or_global_timestamps_loses_nothing() {
    let criticals = check_modern(
        &[("ZE_SIM_MINIMAL", "query-status,global-timestamps")],
        false,
    );
    assert!(
        criticals.iter().any(|c| c.contains("zeEventQueryStatus")),
        "the fallback is not reported: {criticals:?}"
    );
}

#[test]
fn a_driver_without_kernel_timestamps_is_timed_by_the_host() {
    let criticals = check_modern(
        &[(
            "ZE_SIM_MINIMAL",
            "query-status,global-timestamps,kernel-timestamps",
        )],
        false,
    );
    assert!(
        criticals
            .iter()
            .any(|c| c.contains("zeEventQueryKernelTimestamp")),
        "the fallback is not reported: {criticals:?}"
    );
}

/// Every append function the simulated driver offers (`tests/c/ze_every_append.c`, three calls
/// each on an immediate list, every device view on): each command is recorded (device records
/// sharing the call's correlation ID) or counted without record
/// (`ptiViewGetUnrecordedCommandCount`), never both, never neither. Not offered by the fixture,
/// so not exercised here: image copies (it models no images), global-timestamp writes, kernel
/// timestamp queries, external semaphores, ray-tracing copies, graphs, cooperative and indirect
/// single launches and region copies (libpti records those three kinds; `tests/c/ze_modern.c`
/// covers the newer `…WithParameters` appends).
#[test]
fn every_append_function_is_recorded_or_counted() {
    let exe = compile_c_with(
        "ze_every_append",
        &["tests/c/ze_every_append.c"],
        &["-lpti", "-lze_loader"],
    );
    let mut cmd = Command::new(&exe);
    cmd.env("ZE_ENABLE_ALT_DRIVERS", simulated_driver())
        .env_remove("ZE_ENABLE_TRACING_LAYER")
        .env_remove("PTI_LEVEL_ZERO");
    let out = pti_tests::run_with_watchdog(&mut cmd, std::time::Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let covered = pti_tests::every_command_accounted("the simulated driver", &stdout);
    for name in [
        "zeCommandListAppendMemoryCopy",
        "zeCommandListAppendMemoryFill",
        "zeCommandListAppendLaunchKernel",
        "zeCommandListAppendBarrier",
        "zeCommandListAppendMemoryRangesBarrier",
        "zeCommandListAppendMemoryPrefetch",
        "zeCommandListAppendMemAdvise",
        "zeCommandListAppendLaunchMultipleKernelsIndirect",
        "zeCommandListAppendSignalEvent",
        "zeCommandListAppendWaitOnEvents",
        "zeCommandListAppendEventReset",
    ] {
        assert!(
            covered.iter().any(|c| c == name),
            "{name} was not exercised:\n{stdout}"
        );
    }
    println!("{} append functions accounted: {covered:?}", covered.len());
}
