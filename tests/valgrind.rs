//! Memory safety of libpti as C programs use it: the C test programs and the C samples run under
//! valgrind's memcheck (Debian's `valgrind`, installed by `cargo xtask setup`).
//!
//! Each program runs under
//! `valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite`
//! with the suppressions of `tests/valgrind.supp` (third-party code only: glibc's loader, PoCL's
//! LLVM, the Level Zero tracing layer; each entry says why). Every invalid read or write, use of
//! uninitialised memory, bad free, and every definite leak is an error; a run passes when
//! memcheck counts 0 errors and the program itself succeeds and prints what it prints without
//! valgrind. "Possibly lost" and "still reachable" blocks are not errors: libpti keeps some
//! memory for the life of the process on purpose (interned kernel names that records point to,
//! the per-thread buffers and registries held in statics), and hash tables hold their
//! allocations by interior pointers, which memcheck calls "possibly lost"; their totals are
//! printed.
//!
//! The OpenCL programs run on PoCL behind ocl-icd with libpti as a layer (as in `opencl.rs` and
//! `samples.rs`); the Level Zero program runs on the real loader and its tracing layer over the
//! simulated driver (as in `level_zero.rs`). PoCL compiles each program's kernels with LLVM
//! the first time, which under valgrind takes about 40 s (twice: `cl_traced` and the samples
//! have different kernels); later runs take them from PoCL's kernel cache (`~/.cache/pocl`,
//! `POCL_CACHE_DIR`). A native run does not fill the cache for valgrind's runs: PoCL keys it by
//! the CPU features it detects, and valgrind's emulated CPU has fewer. The whole test takes about
//! 2 minutes with a cold cache and 1 minute with a warm one (debug build, 2 cores).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use pti_tests::{compile_c_with, lib_dir, out_dir, root, run_ok};

/// The most a single run may take (wall time) before it counts as hung.
const RUN_LIMIT_S: &str = "300";

/// One program to run under memcheck.
struct Case {
    /// Name in the report (and of its log file).
    name: String,
    exe: PathBuf,
    args: Vec<&'static str>,
    env: Vec<(&'static str, String)>,
    /// Lines the program must print (its own success).
    expect: Vec<&'static str>,
    /// A file the simulated Level Zero driver writes at exit: no objects may be left alive.
    ze_report: Option<PathBuf>,
}

impl Case {
    fn new(name: &str, exe: PathBuf) -> Self {
        Case {
            name: name.to_string(),
            exe,
            args: Vec::new(),
            env: Vec::new(),
            expect: Vec::new(),
            ze_report: None,
        }
    }
}

/// The result of one run under memcheck.
struct Outcome {
    name: String,
    errors: Option<u64>,
    summary: String,
    definitely_lost: String,
    possibly_lost: String,
    seconds: f64,
    problems: Vec<String>,
}

fn valgrind() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("valgrind"))
        .find(|p| p.is_file());
    let valgrind = found.unwrap_or_else(|| {
        panic!(
            "valgrind is not installed: run `cargo xtask setup`, which installs Debian's \
             `valgrind` package (apt-get install valgrind)"
        )
    });
    let version = run_ok(Command::new(&valgrind).arg("--version"));
    println!(
        "valgrind: {}",
        String::from_utf8_lossy(&version.stdout).trim()
    );
    valgrind
}

/// The simulated Level Zero driver (`cargo build -p ze-sim`).
fn simulated_driver() -> PathBuf {
    let sim = lib_dir().join("libze_sim.so");
    assert!(
        sim.exists(),
        "{} is missing: build it with `cargo build -p ze-sim` (`cargo xtask test` does)",
        sim.display()
    );
    sim
}

/// Every program to check, compiled (under names of their own, so that other test binaries
/// running at the same time do not replace them).
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();

    // The C ABI alone: bad input to every export, and a view client in its three modes.
    let bad_input = compile_c_with("valgrind_bad_input", &["tests/c/bad_input.c"], &["-lpti"]);
    let mut case = Case::new("bad_input", bad_input);
    case.expect = vec![", 0 failures"];
    cases.push(case);
    let view_client = compile_c_with(
        "valgrind_view_client",
        &["tests/c/view_client.c"],
        &["-lpti"],
    );
    for (mode, expect) in [
        (None, vec!["4 API records, 1 external", " 0 failures"]),
        (Some("exit"), vec!["at exit: 3 API records in 1 buffers"]),
        (Some("clock"), vec![" 0 failures"]),
    ] {
        let name = match mode {
            None => "view_client".to_string(),
            Some(m) => format!("view_client {m}"),
        };
        let mut case = Case::new(&name, view_client.clone());
        case.args = mode.into_iter().collect();
        case.expect = expect;
        cases.push(case);
    }

    // OpenCL: the traced workload on PoCL, with the test tool's default and small buffers (the
    // latter flushes from inside buffer_completed).
    let cl_traced = compile_c_with(
        "valgrind_cl_traced",
        &["tests/c/cl_traced.c", "tests/c/cl_workload.c"],
        &["-lpti", "-lOpenCL"],
    );
    // Not "T CBOVERFLOW 0": the test tool keeps a fixed-size log of callbacks, and under
    // valgrind the workload's busy-wait loops (clGetEventInfo polling) make many more calls
    // than natively, enough to fill it. The log's completeness is checked by tests/opencl.rs.
    let cl_counters = vec![
        "T PENDING 0",
        "T DROPPED 0",
        "T CRITICALS 0",
        "T PROBLEMS 0",
        "T KERNEL ",
        "W RESULT",
    ];
    for tool in [None, Some("small")] {
        let name = match tool {
            None => "cl_traced (PoCL)".to_string(),
            Some(t) => format!("cl_traced (PoCL, PTI_TEST_TOOL={t})"),
        };
        let mut case = Case::new(&name, cl_traced.clone());
        case.env = vec![(
            "PTI_TEST_PLATFORM",
            "Portable Computing Language".to_string(),
        )];
        if let Some(t) = tool {
            case.env.push(("PTI_TEST_TOOL", t.to_string()));
        }
        case.expect = cl_counters.clone();
        cases.push(case);
    }

    // Level Zero: the traced workload through the real loader and tracing layer over the
    // simulated driver, on its CPU device, and on its GPU device with the program's event pools
    // kept (libpti's own events and barriers).
    assert!(
        Path::new("/usr/include/level_zero/ze_api.h").exists(),
        "the Level Zero headers and loader are missing: run `cargo xtask setup`, which installs \
         Debian's libze1 and libze-dev"
    );
    let ze_traced = compile_c_with(
        "valgrind_ze_traced",
        &["tests/c/ze_traced.c", "tests/c/ze_workload.c"],
        &["-lpti", "-lze_loader"],
    );
    for (device, keep) in [("cpu", "0"), ("gpu", "1")] {
        let name = format!("ze_traced (ze-sim {device} device, keep pools {keep})");
        let mut case = Case::new(&name, ze_traced.clone());
        let stem = format!("valgrind-ze-{}-{device}", std::process::id());
        let report = out_dir().join(format!("{stem}.report"));
        case.env = vec![
            (
                "ZE_ENABLE_ALT_DRIVERS",
                simulated_driver().display().to_string(),
            ),
            (
                "ZE_SIM_TRUTH",
                out_dir()
                    .join(format!("{stem}.truth"))
                    .display()
                    .to_string(),
            ),
            ("ZE_SIM_REPORT", report.display().to_string()),
            ("ZE_SIM_DEVICE_TYPE", device.to_string()),
            ("PTI_LEVEL_ZERO_KEEP_EVENT_POOLS", keep.to_string()),
        ];
        // Keeping the program's pools, libpti cannot time the 3 commands that signal events
        // without host-readable timestamps: counted, said once (tests/level_zero.rs).
        let (dropped, criticals) = if keep == "1" {
            ("T DROPPED 3", "T CRITICALS 1")
        } else {
            ("T DROPPED 0", "T CRITICALS 0")
        };
        case.expect = vec![
            "T PENDING 0",
            dropped,
            criticals,
            "T CBOVERFLOW 0",
            "T PROBLEMS 0",
            "W RESULT",
        ];
        case.ze_report = Some(report);
        cases.push(case);
    }

    // The C samples, on PoCL (the first OpenCL device of the test machines). vector_add does not
    // use libpti: it is the control run for the third-party suppressions.
    let callback_trace = compile_c_with(
        "valgrind_callback_trace",
        &["samples/c/callback_trace.c", "samples/c/workload.c"],
        &["-lpti", "-lOpenCL"],
    );
    let mut case = Case::new("samples/c/callback_trace", callback_trace);
    case.expect = vec![
        "clEnqueueNDRangeKernel",
        "kernel vector_add",
        "0 critical events",
    ];
    cases.push(case);
    let view_dump = compile_c_with(
        "valgrind_view_dump",
        &["samples/c/view_dump.c", "samples/c/workload.c"],
        &["-lpti", "-lOpenCL"],
    );
    let mut case = Case::new("samples/c/view_dump", view_dump);
    case.expect = vec!["kernel ", "vector_add", "copy ", "fill ", " 0 dropped"];
    cases.push(case);
    let vector_add = compile_c_with(
        "valgrind_vector_add",
        &["samples/c/vector_add.c", "samples/c/workload.c"],
        &["-lOpenCL"],
    );
    let mut case = Case::new("samples/c/vector_add (no libpti)", vector_add);
    case.expect = vec!["device: ", "result: "];
    cases.push(case);

    cases
}

/// The command that runs `case` under memcheck, its log going to `log`.
fn command(case: &Case, valgrind: &Path, log: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg(RUN_LIMIT_S)
        .arg(valgrind)
        .args([
            "--tool=memcheck",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
            "--num-callers=40",
        ])
        .arg(format!(
            "--suppressions={}",
            root().join("tests/valgrind.supp").display()
        ))
        .arg(format!("--log-file={}", log.display()))
        .arg(&case.exe);
    cmd.args(&case.args)
        .env_remove("OPENCL_LAYERS")
        .env_remove("PTI_OPENCL_LAYER")
        .env_remove("ZE_ENABLE_TRACING_LAYER")
        .env_remove("PTI_LEVEL_ZERO")
        .env_remove("ZE_SIM_WRAP_US")
        .env_remove("PTI_TEST_TOOL");
    // As in the other tests, libpti's constructor activates the OpenCL layer and Level Zero's
    // tracing layer itself.
    cmd.envs(case.env.iter().map(|(k, v)| (k, v)));
    cmd
}

/// The value after `label` on the first line of `log` that has it.
fn log_line<'a>(log: &'a str, label: &str) -> Option<&'a str> {
    log.lines()
        .find_map(|l| l.split_once(label).map(|(_, rest)| rest.trim()))
}

/// memcheck's error reports in `log` (its blocks that are neither summaries nor notes).
fn error_reports(log: &str) -> String {
    let mut out = String::new();
    let mut block = Vec::new();
    for line in log.lines().map(|l| match l.split_once("== ") {
        Some((pid, rest)) if pid.starts_with("==") => rest,
        _ => l,
    }) {
        if line.trim().is_empty() {
            let head = block.first().copied().unwrap_or("");
            let is_error = [
                "Invalid",
                "uninitialised",
                "Conditional jump",
                "Syscall param",
                "Mismatched",
                "definitely lost in loss record",
                "overlap",
                "free()",
                "Argument",
            ]
            .iter()
            .any(|k| head.contains(k));
            if is_error {
                out.push_str(&block.join("\n"));
                out.push_str("\n\n");
            }
            block.clear();
        } else {
            block.push(line);
        }
    }
    out
}

fn check(case: &Case, valgrind: &Path) -> Outcome {
    let mut problems = Vec::new();
    let log = out_dir().join(format!(
        "valgrind-{}-{}.log",
        std::process::id(),
        case.name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    ));
    let start = Instant::now();
    let out = command(case, valgrind, &log)
        .output()
        .unwrap_or_else(|e| panic!("cannot run valgrind on {}: {e}", case.exe.display()));
    let seconds = start.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();

    let summary = log_line(&log_text, "ERROR SUMMARY:").map(str::to_string);
    let errors = summary
        .as_deref()
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.replace(',', "").parse::<u64>().ok());
    match errors {
        None => problems.push(format!(
            "no ERROR SUMMARY in valgrind's log {} (status {}):\n{log_text}",
            log.display(),
            out.status
        )),
        Some(0) => {}
        Some(n) => problems.push(format!(
            "memcheck found {n} errors (log: {}):\n{}",
            log.display(),
            error_reports(&log_text)
        )),
    }
    match out.status.code() {
        Some(0) => {}
        Some(99) => problems.push("valgrind exited with --error-exitcode (99)".into()),
        Some(124) => problems.push(format!("did not finish within {RUN_LIMIT_S} s")),
        _ => problems.push(format!(
            "the program failed under valgrind ({})\n--- stderr\n{stderr}",
            out.status
        )),
    }
    for e in &case.expect {
        if !stdout.contains(e) {
            problems.push(format!("printed no {e:?}:\n{stdout}\n--- stderr\n{stderr}"));
        }
    }
    if let Some(report) = &case.ze_report {
        match std::fs::read_to_string(report) {
            Ok(text) => {
                let reports = pti_tests::SimReport::parse_all(&text);
                let alive: Vec<_> = reports
                    .iter()
                    .flat_map(|r| r.live.iter().filter(|(_, n)| *n != 0))
                    .collect();
                if reports.is_empty() || !alive.is_empty() {
                    problems.push(format!("driver objects left alive at exit: {text}"));
                }
                let _ = std::fs::remove_file(report);
            }
            Err(e) => problems.push(format!(
                "the simulated driver wrote no {}: {e}",
                report.display()
            )),
        }
        if let Some((_, truth)) = case.env.iter().find(|(k, _)| *k == "ZE_SIM_TRUTH") {
            let _ = std::fs::remove_file(truth);
        }
    }
    if problems.is_empty() {
        let _ = std::fs::remove_file(&log);
    }
    Outcome {
        name: case.name.clone(),
        errors,
        summary: summary.unwrap_or_else(|| "(none)".into()),
        definitely_lost: log_line(&log_text, "definitely lost:")
            .unwrap_or("(no leak summary)")
            .to_string(),
        possibly_lost: log_line(&log_text, "possibly lost:")
            .unwrap_or("(no leak summary)")
            .to_string(),
        seconds,
        problems,
    }
}

/// Every C test program and C sample, under memcheck: no errors, no definite leaks, and each
/// program's own success. One test, so the runs go one after another (each is a heavy process).
#[test]
fn c_programs_and_samples_have_no_memcheck_errors() {
    let valgrind = valgrind();
    let started = Instant::now();
    let cases = cases();
    let mut outcomes = Vec::new();
    for case in &cases {
        let outcome = check(case, &valgrind);
        println!(
            "valgrind: {:<48} {} errors ({:.1} s); ERROR SUMMARY: {}; definitely lost: {}; \
             possibly lost: {}{}",
            outcome.name,
            outcome
                .errors
                .map_or_else(|| "?".to_string(), |n| n.to_string()),
            outcome.seconds,
            outcome.summary,
            outcome.definitely_lost,
            outcome.possibly_lost,
            if outcome.problems.is_empty() {
                ""
            } else {
                "  FAILED"
            }
        );
        outcomes.push(outcome);
    }
    let errors: u64 = outcomes.iter().map(|o| o.errors.unwrap_or(0)).sum();
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.problems.is_empty()).collect();
    println!(
        "valgrind memcheck: {} programs, {errors} errors, {} failed, in {:.1} s",
        outcomes.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "{}",
        failed
            .iter()
            .map(|o| format!("--- {}:\n{}", o.name, o.problems.join("\n")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
