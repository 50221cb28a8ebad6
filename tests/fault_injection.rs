//! The panic boundaries under fire: real programs run under a tool while libpti panics inside
//! each path where the traced program or a runtime enters it, and the programs must end as they
//! end without libpti.
//!
//! A fault-injection build of libpti (`cargo xtask test` builds it into
//! `target/fault-injection/debug` and names it in `PTI_FAULT_LIB_DIR`) panics at the named point
//! `PTI_FAULT_INJECT=<point>@<n>` names, the n-th time the process reaches it (see
//! `pti_core::fault`). The tool (`tests/c/fault_tool.c`, preloaded) enables every callback and
//! view and reports the critical events it received and `ptiGetUntracedCallCount`.
//!
//! - The OpenCL workload on PoCL (behind ocl-icd), with a counting layer below libpti
//!   (`tests/c/cl_count_layer.c`): panics after ENTER, after EXIT, before and after an override's
//!   real call, and in `clInitLayer`. Each of the program's enqueue, wait and creation calls
//!   reaches the runtime exactly as often as without libpti.
//! - The Level Zero workload through the real loader and its tracing layer over the simulated
//!   driver (a test double): panics in prologues and epilogues (of any call, and of each append
//!   in turn) and in the dispatch they open and close. The driver's ground truth shows every
//!   kernel, copy and fill of the program ran as often as without libpti, and no command waited
//!   for an event that was never signalled (an append whose event libpti replaced still signals
//!   the program's: without `commands::rescue`, one of these runs hangs).
//! - The Python SYCL workload on dpctl: panics in XPTI notifications and in the OpenCL calls
//!   the SYCL runtime makes.
//!
//! Every faulted run must exit 0 with the same results as the program alone, and the tool must
//! have received `PTI_ERROR_TRACING_PANICKED` (303).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use pti_tests::{
    SHARED, compile, compile_c_with, compile_shared, out_dir, root, run_with_watchdog,
    sycl_workload,
};

/// `PTI_ERROR_TRACING_PANICKED`.
const TRACING_PANICKED: &str = "F CRITICAL 303 ";

/// The fault-injection build of libpti.
fn fault_lib_dir() -> PathBuf {
    let dir = std::env::var_os("PTI_FAULT_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/fault-injection/debug"));
    assert!(
        dir.join("libpti.so").exists(),
        "{} is missing: build it with `cargo build -p pti-capi --features \
         pti-core/fault-injection --target-dir target/fault-injection` (cargo xtask test does), \
         or point PTI_FAULT_LIB_DIR at its directory",
        dir.join("libpti.so").display()
    );
    pti_tests::link_in_place(Path::new("libpti.so"), &dir.join("libpti.so.0"));
    dir
}

/// What to preload: the fault-injection build by its path (`cargo test` puts the shipped build's
/// directory on `LD_LIBRARY_PATH`, which would win over the tool's RUNPATH), then the tool.
fn preload() -> String {
    format!(
        "{}:{}",
        fault_lib_dir().join("libpti.so.0").display(),
        fault_tool().display()
    )
}

/// The tool, linked against the fault-injection build.
fn fault_tool() -> &'static PathBuf {
    static TOOL: OnceLock<PathBuf> = OnceLock::new();
    TOOL.get_or_init(|| {
        compile(
            out_dir().join("libfault_tool.so"),
            SHARED,
            &["tests/c/fault_tool.c"],
            &["-lpti"],
            &[fault_lib_dir()],
        )
    })
}

/// Sets `cmd` up for a run alone (`fault` is `None`) or under the tool with the fault-injection
/// build, arming `fault` unless it is empty.
fn under_tool(cmd: &mut Command, fault: Option<&str>) {
    cmd.env_remove("PTI_FAULT_INJECT").env_remove("LD_PRELOAD");
    if let Some(fault) = fault {
        cmd.env("LD_PRELOAD", preload());
        if !fault.is_empty() {
            cmd.env("PTI_FAULT_INJECT", fault);
        }
    }
}

/// A run of a program: its exit status was 0 (checked), its lines, and what it leaves in files.
struct Run {
    /// The program's result lines ("W RESULT ...", sorted: threads print in any order).
    results: Vec<String>,
    /// The tool's lines ("F ...").
    tool: Vec<String>,
    stdout: String,
}

/// A faulted program that waits for ever (for an event never signalled) fails the test.
const HUNG_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

fn run(cmd: &mut Command, what: &str) -> Run {
    let out = run_with_watchdog(cmd, HUNG_AFTER);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut results: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("W RESULT"))
        .map(str::to_string)
        .collect();
    results.sort();
    let tool = stdout
        .lines()
        .filter(|l| l.starts_with("F "))
        .map(str::to_string)
        .collect();
    Run {
        results,
        tool,
        stdout,
    }
}

impl Run {
    /// `F UNTRACED <level zero> <opencl> <sycl>`.
    fn untraced(&self) -> [u64; 3] {
        let line = self
            .tool
            .iter()
            .find_map(|l| l.strip_prefix("F UNTRACED "))
            .unwrap_or_else(|| panic!("the tool reported nothing:\n{}", self.stdout));
        let n: Vec<u64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        [n[0], n[1], n[2]]
    }

    fn panic_reported(&self) -> bool {
        self.tool.iter().any(|l| l.starts_with(TRACING_PANICKED))
    }

    /// Checks a run with an injected fault against the program alone.
    fn check_faulted(&self, alone: &Run, what: &str) {
        assert!(!alone.results.is_empty(), "the program printed no results");
        assert_eq!(
            self.results, alone.results,
            "{what}: the program's results changed"
        );
        assert!(
            self.panic_reported(),
            "{what}: the tool received no PTI_ERROR_TRACING_PANICKED:\n{}",
            self.stdout
        );
    }
}

fn unique(stem: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    out_dir().join(format!(
        "{stem}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

// === OpenCL ===

/// The workload alone, and the counting layer.
fn opencl_programs() -> &'static (PathBuf, PathBuf) {
    static P: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    P.get_or_init(|| {
        let plain = compile_c_with(
            "cl_plain",
            &["tests/c/cl_plain.c", "tests/c/cl_workload.c"],
            &["-lOpenCL"],
        );
        let counter = compile_shared("cl_count_layer", &["tests/c/cl_count_layer.c"], &[]);
        (plain, counter)
    })
}

/// Runs the OpenCL workload on PoCL with the counting layer, under the tool when `fault` is
/// `Some` (`""`: no fault); returns the run and the calls that reached the runtime.
fn opencl_run(fault: Option<&str>) -> (Run, BTreeMap<String, u64>) {
    opencl_run_with(fault, false)
}

/// [`opencl_run`]; with `views_only`, the tool subscribes to no API callbacks, so that the
/// enqueue calls take their records-only path.
fn opencl_run_with(fault: Option<&str>, views_only: bool) -> (Run, BTreeMap<String, u64>) {
    let (plain, counter) = opencl_programs();
    let counts = unique("cl-counts");
    let mut cmd = Command::new(plain);
    cmd.env("FAULT_TOOL_VIEWS_ONLY", if views_only { "1" } else { "0" })
        .env("PTI_TEST_PLATFORM", "Portable Computing Language")
        // First in the list: the loader stacks libpti (which appends itself) on top of it.
        .env("OPENCL_LAYERS", counter)
        .env("CL_COUNT_FILE", &counts)
        .env_remove("PTI_OPENCL_LAYER");
    under_tool(&mut cmd, fault);
    let run = run(&mut cmd, &format!("the OpenCL workload ({fault:?})"));
    let text = std::fs::read_to_string(&counts)
        .unwrap_or_else(|e| panic!("the counting layer wrote no {}: {e}", counts.display()));
    let _ = std::fs::remove_file(&counts);
    let calls = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(f, n)| (f.to_string(), n.parse().unwrap()))
        .collect();
    (run, calls)
}

/// The program releases the event of a command still pending on a thread where a panic has just
/// switched the dispatch off (the workload's first `clReleaseEvent`, before its wait), so that the
/// release passes untraced: libpti must have retained the event before the switch, or the
/// runtime frees it and reading its times after the wait reads freed memory. Intel's CPU runtime
/// crashes then; PoCL recycles its events and would not show it.
#[test]
fn a_pending_event_released_where_a_panic_switched_the_dispatch_off_stays_alive() {
    let (plain, _) = opencl_programs();
    let workload = |fault: Option<&str>| {
        let mut cmd = Command::new(plain);
        cmd.envs(pti_tests::intel_cpu_opencl_env())
            .env_remove("OPENCL_LAYERS")
            .env_remove("PTI_OPENCL_LAYER");
        under_tool(&mut cmd, fault);
        run(
            &mut cmd,
            &format!("the OpenCL workload on Intel's CPU runtime ({fault:?})"),
        )
    };
    let alone = workload(None);
    let fault = "opencl.release_event@1";
    let faulted = workload(Some(fault));
    faulted.check_faulted(&alone, fault);
    assert!(
        faulted.untraced()[1] > 0,
        "{fault}: the thread's later calls were not counted as untraced: {:?}",
        faulted.tool
    );
}

#[test]
fn opencl_program_survives_a_panic_in_every_path_of_the_layer() {
    let (alone, alone_calls) = opencl_run(None);
    assert!(
        alone_calls
            .get("clEnqueueNDRangeKernel")
            .copied()
            .unwrap_or(0)
            > 0,
        "the counting layer counted no kernel launch: {alone_calls:?}"
    );
    let (healthy, healthy_calls) = opencl_run(Some(""));
    assert_eq!(healthy.results, alone.results);
    assert_eq!(healthy_calls, alone_calls);
    assert!(!healthy.panic_reported() && healthy.untraced() == [0, 0, 0]);
    // (the fault, whether the panicking thread surely makes traced calls after it: then they
    // must be counted as untraced; a late fault may be the thread's last call)
    for (fault, calls_after) in [
        ("dispatch.enter@20", true),
        ("dispatch.exit@20", true),
        ("override.before_call@6", true),
        ("override.after_call@6", true),
        ("override.after_call@40", false),
        ("opencl.layer_init@1", false),
    ] {
        let (faulted, calls) = opencl_run(Some(fault));
        faulted.check_faulted(&alone, fault);
        assert_eq!(
            calls, alone_calls,
            "{fault}: the program's calls did not reach the runtime exactly once each"
        );
        if fault.starts_with("opencl.layer_init") {
            // The loader runs without the layer: nothing of OpenCL reaches libpti.
            assert!(
                faulted.tool.iter().any(|l| l == "F CALLS 0 0"),
                "{fault}: {:?}",
                faulted.tool
            );
        } else if calls_after {
            assert!(
                faulted.untraced()[1] > 0,
                "{fault}: the thread's later calls were not counted as untraced: {:?}",
                faulted.tool
            );
        }
    }
}

/// The same with a tool that collects views only: the enqueue calls take their records-only
/// path (`commands::submit_records_only`), the other traced calls the dispatch's
/// (`trace_records_only`), each with the dispatch's fault points. A panic at each leaves the
/// program's calls made exactly once and its results unchanged.
#[test]
fn opencl_program_survives_a_panic_in_the_records_only_path() {
    let (alone, alone_calls) = opencl_run_with(None, true);
    let (healthy, healthy_calls) = opencl_run_with(Some(""), true);
    assert_eq!(healthy.results, alone.results);
    assert_eq!(healthy_calls, alone_calls);
    assert!(!healthy.panic_reported() && healthy.untraced() == [0, 0, 0]);
    // Where each count lands was checked by removing each boundary of the two paths in turn:
    // the runs then abort (`dispatch.enter@3` in `trace_records_only`, `@16` and `@24` in the
    // enqueues' path, on either of the workload's threads; `override.before_call@3` there too).
    for fault in [
        "dispatch.enter@3",
        "dispatch.enter@16",
        "dispatch.enter@24",
        "override.before_call@3",
        "override.before_call@8",
        "override.after_call@3",
        "override.after_call@8",
        "dispatch.exit@3",
        "dispatch.exit@8",
    ] {
        let (faulted, calls) = opencl_run_with(Some(fault), true);
        faulted.check_faulted(&alone, fault);
        assert_eq!(
            calls, alone_calls,
            "{fault}: the program's calls did not reach the runtime exactly once each"
        );
        assert!(
            faulted.untraced()[1] > 0,
            "{fault}: the thread's later calls were not counted as untraced: {:?}",
            faulted.tool
        );
    }
}

// === Level Zero ===

fn simulated_driver() -> PathBuf {
    let sim = pti_tests::lib_dir().join("libze_sim.so");
    assert!(
        sim.exists(),
        "{} is missing: build it with `cargo build -p ze-sim` (`cargo xtask test` does)",
        sim.display()
    );
    sim
}

/// The driver's account of a run: how many kernels, copies and fills it executed (libpti's own
/// barriers and event resets left out), and whether any command waited for an event never
/// signalled.
struct DriverAccount {
    executed: BTreeMap<String, u64>,
    stuck: u64,
}

fn level_zero_run(fault: Option<&str>) -> (Run, DriverAccount) {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        assert!(
            Path::new("/usr/include/level_zero/ze_api.h").exists(),
            "the Level Zero headers and loader are missing: run `cargo xtask setup`"
        );
        compile_c_with(
            "ze_plain",
            &["tests/c/ze_plain.c", "tests/c/ze_workload.c"],
            &["-lze_loader"],
        )
    });
    let (truth, report) = (unique("ze-truth"), unique("ze-report"));
    let mut cmd = Command::new(program);
    cmd.env("ZE_ENABLE_ALT_DRIVERS", simulated_driver())
        .env("ZE_SIM_TRUTH", &truth)
        .env("ZE_SIM_REPORT", &report)
        .env_remove("ZE_ENABLE_TRACING_LAYER")
        .env_remove("PTI_LEVEL_ZERO");
    under_tool(&mut cmd, fault);
    let run = run(&mut cmd, &format!("the Level Zero workload ({fault:?})"));
    let read = |p: &Path| {
        let text = std::fs::read_to_string(p)
            .unwrap_or_else(|e| panic!("the simulated driver wrote no {}: {e}", p.display()));
        let _ = std::fs::remove_file(p);
        text
    };
    let mut executed = BTreeMap::new();
    for line in read(&truth).lines() {
        let p: Vec<&str> = line.split(' ').collect();
        if let ["TRUTH", kind @ ("KERNEL" | "COPY" | "FILL"), name, ..] = p.as_slice() {
            *executed.entry(format!("{kind} {name}")).or_insert(0) += 1;
        }
    }
    let report = read(&report);
    let stuck = report
        .split_whitespace()
        .skip_while(|w| *w != "stuck")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no stuck count in the driver's report: {report:?}"));
    (run, DriverAccount { executed, stuck })
}

#[test]
fn level_zero_program_survives_a_panic_in_every_path_of_the_tracer() {
    let (alone, alone_driver) = level_zero_run(None);
    assert!(!alone_driver.executed.is_empty() && alone_driver.stuck == 0);
    let (healthy, healthy_driver) = level_zero_run(Some(""));
    assert_eq!(healthy.results, alone.results);
    assert_eq!(healthy_driver.executed, alone_driver.executed);
    assert!(!healthy.panic_reported() && healthy.untraced() == [0, 0, 0]);
    let mut faults = Vec::new();
    // Several calls of each path: prologues and epilogues of appends (whose event libpti may
    // replace), of executions and of host waits.
    for n in [3, 12, 25, 40, 60] {
        faults.push(format!("level_zero.prologue@{n}"));
        faults.push(format!("level_zero.epilogue@{n}"));
    }
    // Every append's epilogue in turn (the workload makes 15 appends), before it takes its
    // command: where libpti replaced the program's signal event with its own, the program's must
    // still be signalled (the driver would count the command that waits for it as stuck, the
    // program's host wait would hang).
    for n in 1..=15 {
        faults.push(format!("level_zero.append_epilogue@{n}"));
    }
    faults.push("dispatch.enter@10".into());
    faults.push("dispatch.exit@10".into());
    for fault in &faults {
        let (faulted, driver) = level_zero_run(Some(fault));
        faulted.check_faulted(&alone, fault);
        assert_eq!(
            driver.executed, alone_driver.executed,
            "{fault}: the program's commands did not run exactly as without libpti"
        );
        assert_eq!(
            driver.stuck, 0,
            "{fault}: a command waited for an event that was never signalled"
        );
        assert!(
            faulted.untraced()[0] > 0,
            "{fault}: the thread's later calls were not counted as untraced: {:?}",
            faulted.tool
        );
    }
}

// === SYCL ===

fn sycl_run(fault: Option<&str>) -> Run {
    let mut cmd = sycl_workload();
    cmd.env_remove("PTI_TEST_EXTERNAL_ID");
    under_tool(&mut cmd, fault);
    run(&mut cmd, &format!("the SYCL workload ({fault:?})"))
}

/// `dispatch.enter` is reached first in the Unified Runtime calls (XPTI notifications), later in
/// the OpenCL calls they make: which entry catches it depends on the call, so the untraced calls
/// are counted in one group or the other.
#[test]
fn sycl_program_survives_a_panic_in_xpti_and_in_its_opencl_calls() {
    let alone = sycl_run(None);
    for fault in ["xpti@5", "xpti@200", "dispatch.enter@30"] {
        let faulted = sycl_run(Some(fault));
        faulted.check_faulted(&alone, fault);
        let untraced: u64 = faulted.untraced().iter().sum();
        assert!(
            untraced > 0,
            "{fault}: the thread's later calls were not counted as untraced: {:?}",
            faulted.tool
        );
    }
}
