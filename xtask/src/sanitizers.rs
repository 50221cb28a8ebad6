//! The sanitizer and fuzzing jobs: bounded ones in `cargo xtask test`, longer ones in
//! `cargo xtask sanitize --long` (for a closing note). What these machines can run with their
//! one stable toolchain (`RUSTC_BOOTSTRAP=1` lets the `-Z` flags through; std cannot be rebuilt,
//! so std itself is not instrumented, but every allocation is):
//!
//! - [`asan_rust`]: pti-core's tests under AddressSanitizer and LeakSanitizer;
//! - [`asan_c`]: C test programs built with gcc's `-fsanitize=address,undefined`, against a
//!   libpti built with AddressSanitizer (gcc's runtime in the program serves both);
//! - [`fuzz`]: the cargo-fuzz targets of `fuzz/` (libFuzzer, with AddressSanitizer), each for a
//!   fixed time.
//!
//! ThreadSanitizer is not run: without an instrumented std every report it gives here is a false
//! positive (docs/RELIABILITY.md says what was tried; the suppression files for trying again are
//! in `tests/sanitizers/`). Everything builds into `target/sanitizers`, away from the normal
//! build.

use std::path::Path;
use std::process::Command;

use crate::run::{cargo, step};

const TRIPLE: &str = "x86_64-unknown-linux-gnu";
const TARGET_DIR: &str = "target/sanitizers";

/// Sets what every sanitized cargo command needs: the `-Z` flags on stable, and no cached
/// compiler probe (cargo's cache key ignores `RUSTC_BOOTSTRAP`).
fn sanitized<'a>(cmd: &'a mut Command, rustflags: &str) -> &'a mut Command {
    cmd.env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", rustflags)
        .env("CARGO_CACHE_RUSTC_INFO", "0")
}

/// pti-core's tests (not its doctests: rustdoc does not take the flags) under AddressSanitizer
/// and LeakSanitizer; `cases` proptest cases for the concurrency tests.
pub fn asan_rust(root: &Path, cases: u32) -> Result<(), String> {
    let supp = root.join("tests/sanitizers/lsan-rust.supp");
    step(
        "AddressSanitizer + LeakSanitizer: pti-core's tests",
        sanitized(
            &mut cargo(
                root,
                &[
                    "test",
                    "--target",
                    TRIPLE,
                    "--target-dir",
                    TARGET_DIR,
                    "-p",
                    "pti-core",
                    "--tests",
                    "--no-fail-fast",
                ],
            ),
            "-Zsanitizer=address",
        )
        .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        .env("LSAN_OPTIONS", format!("suppressions={}", supp.display()))
        .env("PTI_CONCURRENCY_CASES", cases.to_string()),
    )
}

/// The C programs run under the sanitizers: name, sources, libraries, and the runs (arguments,
/// and extra environment).
type CProgram = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [(
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
    )],
);

const POCL: (&str, &str) = ("PTI_TEST_PLATFORM", "Portable Computing Language");

const C_PROGRAMS: &[CProgram] = &[
    ("bad_input", &["tests/c/bad_input.c"], &[], &[(&[], &[])]),
    (
        "view_client",
        &["tests/c/view_client.c"],
        &[],
        &[(&[], &[]), (&["exit"], &[]), (&["clock"], &[])],
    ),
    (
        "cl_traced",
        &["tests/c/cl_traced.c", "tests/c/cl_workload.c"],
        &["-lOpenCL"],
        &[(&[], &[POCL])],
    ),
    (
        "cl_toggle_stress",
        &["tests/c/cl_toggle_stress.c"],
        &["-lOpenCL"],
        &[
            (&["1000", "1"], &[POCL]),
            (&["1000", "2"], &[POCL]),
            (&["1000", "3"], &[POCL]),
        ],
    ),
    (
        "cl_every_enqueue",
        &["tests/c/cl_every_enqueue.c"],
        &["-lOpenCL"],
        &[(&[], &[POCL, ("PTI_TEST_SKIP", "clEnqueueWaitForEvents")])],
    ),
];

/// Builds libpti with AddressSanitizer, then the C programs with gcc's address and
/// undefined-behaviour sanitizers against it, and runs them (on PoCL where they use OpenCL).
/// Leaks of PoCL's and LLVM's own are suppressed (`tests/sanitizers/lsan-c.supp`).
pub fn asan_c(root: &Path) -> Result<(), String> {
    step(
        "AddressSanitizer: libpti",
        sanitized(
            &mut cargo(
                root,
                &[
                    "build",
                    "--target",
                    TRIPLE,
                    "--target-dir",
                    TARGET_DIR,
                    "-p",
                    "pti-capi",
                ],
            ),
            "-Zsanitizer=address",
        ),
    )?;
    let lib = root.join(TARGET_DIR).join(TRIPLE).join("debug");
    let out = root.join(TARGET_DIR).join("c");
    std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let supp = root.join("tests/sanitizers/lsan-c.supp");
    for (name, sources, libs, runs) in C_PROGRAMS {
        let exe = out.join(name);
        let mut cc = Command::new("cc");
        cc.current_dir(root)
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
            .args(["-fsanitize=address,undefined", "-fno-omit-frame-pointer"])
            .args(["-DPTI_LIBPTI_SYMBOLS", "-Iinclude", "-Itests/c"])
            .args(*sources)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lpti")
            .args(*libs)
            .arg("-lpthread");
        step(&format!("compile {name} with ASan and UBSan"), &mut cc)?;
        for (args, env) in *runs {
            let mut run = Command::new(&exe);
            run.current_dir(root)
                .args(*args)
                .env_remove("OPENCL_LAYERS")
                .env_remove("PTI_OPENCL_LAYER")
                .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
                .env("LSAN_OPTIONS", format!("suppressions={}", supp.display()))
                .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
                .envs(env.iter().copied())
                .stdout(std::process::Stdio::null());
            step(&format!("{name} {}", args.join(" ")), &mut run)?;
        }
    }
    Ok(())
}

/// Builds the cargo-fuzz targets (installing cargo-fuzz into `.cache/cargo-fuzz` the first
/// time) and runs each for `seconds`, on the corpus kept in `target/sanitizers/corpus`.
pub fn fuzz(root: &Path, seconds: u64) -> Result<(), String> {
    let tools = root.join(".cache/cargo-fuzz");
    let cargo_fuzz = tools.join("bin/cargo-fuzz");
    if !cargo_fuzz.exists() {
        step(
            "install cargo-fuzz (crates.io) into .cache/cargo-fuzz",
            cargo(root, &["install", "cargo-fuzz", "--locked", "--root"]).arg(&tools),
        )?;
    }
    let fuzz_dir = root.join("fuzz");
    let target_dir = root.join(TARGET_DIR).join("fuzz");
    let fuzz_cmd = |args: &[&str]| {
        let mut cmd = Command::new(&cargo_fuzz);
        cmd.current_dir(&fuzz_dir)
            .arg("fuzz")
            .args(args)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_CACHE_RUSTC_INFO", "0")
            .env("CARGO_TARGET_DIR", &target_dir)
            .env_remove("RUSTFLAGS");
        cmd
    };
    step("cargo fuzz build", &mut fuzz_cmd(&["build"]))?;
    for target in ["next_record", "api_sequence"] {
        let corpus = root.join(TARGET_DIR).join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("create {}: {e}", corpus.display()))?;
        let time = format!("-max_total_time={seconds}");
        step(
            &format!("fuzz {target} for {seconds} s"),
            fuzz_cmd(&["run", target])
                .arg(&corpus)
                .args(["--", &time, "-print_final_stats=1"]),
        )?;
    }
    Ok(())
}

/// Every job: `long` runs the concurrency tests with 64 cases and fuzzes 10 minutes per target
/// (the closing note's run); otherwise 16 cases and 30 seconds, as `cargo xtask test` runs them
/// (one by one there, removing each build once its jobs passed).
pub fn all(root: &Path, long: bool) -> Result<(), String> {
    asan_rust(root, if long { 64 } else { 16 })?;
    asan_c(root)?;
    fuzz(root, if long { 600 } else { 30 })
}
