//! The life of a traced process: fork with tracing threads, exit without a flush, `dlclose` of
//! the OpenCL loader, libpti loaded after OpenCL initialised, and no runtime at all. The C
//! programs are `tests/c/fork_exit.c` and `tests/c/lifecycle.c`; each scenario runs under a
//! watchdog, so a deadlock fails the test instead of hanging it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use pti_tests::{compile_c_with, lib_dir, run_with_watchdog};

const LIMIT: Duration = Duration::from_secs(120);

/// Runs `exe scenario` with libpti's path in `PTI_LIBRARY`, OpenCL's layer variables cleared;
/// returns stdout after checking the scenario's "ok" line.
fn run(cmd: &mut Command, scenario: &str, ok_line: &str) -> String {
    let out = run_with_watchdog(
        cmd.env("PTI_LIBRARY", lib_dir().join("libpti.so.0"))
            .env_remove("OPENCL_LAYERS")
            .env_remove("PTI_OPENCL_LAYER"),
        LIMIT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(ok_line),
        "{scenario}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    println!("{stdout}");
    stdout
}

/// Compiled once per test binary: tests run in parallel, and one that rewrote the program while
/// another executed it would fail with "Text file busy".
fn fork_exit() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c_with("fork_exit", &["tests/c/fork_exit.c"], &["-lpti"]))
        .clone()
}

/// libpti is never linked: the program loads it with dlopen when its scenario says.
fn lifecycle() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c_with("lifecycle", &["tests/c/lifecycle.c"], &["-ldl"]))
        .clone()
}

#[test]
fn a_child_forked_while_threads_trace_keeps_tracing_and_nothing_is_lost() {
    let exe = fork_exit();
    run(Command::new(&exe).arg("fork"), "fork", "fork_exit fork: ok");
}

#[test]
fn exit_without_flush_while_threads_trace_delivers_or_counts_every_record() {
    let exe = fork_exit();
    run(Command::new(&exe).arg("exit"), "exit", "fork_exit exit: ok");
}

#[test]
fn dlclose_of_the_opencl_loader_while_tracing() {
    let out = run(
        Command::new(lifecycle()).arg("dlclose"),
        "dlclose",
        "lifecycle dlclose: ok",
    );
    assert!(out.contains("dlclose: 32 callbacks"), "{out}");
}

#[test]
fn libpti_loaded_after_opencl_initialised_says_so() {
    let out = run(
        Command::new(lifecycle()).arg("late"),
        "late",
        "lifecycle late: ok",
    );
    assert!(
        out.contains("critical PTI_ERROR_TRACING_NOT_INITIALIZED: OpenCL is not traced"),
        "{out}"
    );
}

/// The same for a single-threaded program (PoCL's "basic" device starts no thread): libpti's
/// constructor sets `OPENCL_LAYERS` after the loader read it; the loaded driver gives it away.
#[test]
fn libpti_loaded_alone_after_the_first_opencl_call_says_so() {
    let out = run(
        Command::new(lifecycle())
            .arg("late-alone")
            .env("POCL_DEVICES", "basic")
            .env("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/pocl.icd"),
        "late-alone",
        "lifecycle late-alone: ok",
    );
    assert!(out.contains("1 thread(s) when libpti is loaded"), "{out}");
    assert!(
        out.contains("critical PTI_ERROR_TRACING_NOT_INITIALIZED: OpenCL is not traced"),
        "{out}"
    );
}

/// The real file behind a library name in the system's directories.
fn system_library(name: &str) -> PathBuf {
    let path = Path::new("/usr/lib/x86_64-linux-gnu").join(name);
    std::fs::canonicalize(&path).unwrap_or_else(|e| {
        panic!(
            "{} is not installed ({e}): `cargo xtask test` installs it",
            path.display()
        )
    })
}

/// The runtimes are hidden in a private mount namespace (their files covered by /dev/null), so
/// `dlopen` of the OpenCL and Level Zero loaders fails as on a machine without them; SYCL is not
/// in the process at all. Needs the right to create a mount namespace (root, as in CI).
#[test]
fn without_any_runtime_every_call_returns_a_documented_code() {
    let hide: Vec<String> = ["libOpenCL.so.1", "libze_loader.so.1"]
        .iter()
        .map(|l| format!("mount --bind /dev/null {}", system_library(l).display()))
        .collect();
    let script = format!("{} && exec \"$0\" missing", hide.join(" && "));
    let probe = Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .expect("run unshare (util-linux)");
    assert!(
        probe.success(),
        "`unshare -m` is refused here: this test hides the runtimes in a private mount namespace, \
         which needs root (or CAP_SYS_ADMIN)"
    );
    let out = run(
        Command::new("unshare")
            .args(["-m", "sh", "-c", &script])
            .arg(lifecycle()),
        "missing",
        "lifecycle missing: ok",
    );
    assert!(
        out.contains("libOpenCL.so.1 absent, libze_loader.so.1 absent"),
        "{out}"
    );
}
