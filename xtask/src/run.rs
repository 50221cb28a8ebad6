//! The two top-level commands of the README: `demo` (set up, build, run the main job) and
//! `test` (set up, build, run every check and test). `.ci/run` calls `test` and nothing else.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{setup, workspace_root};

/// Runs one named step, echoing it and its duration; fails with the step's name.
fn step(name: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("xtask: == {name}: {cmd:?}");
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    eprintln!(
        "xtask: == {name}: {status} after {:.1}s",
        start.elapsed().as_secs_f64()
    );
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("step failed: {name}"))
}

fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root).args(args);
    cmd
}

/// Where the debug build puts `libpti.so`; the tests find it through `PTI_LIB_DIR`.
fn lib_dir(root: &Path) -> PathBuf {
    root.join("target/debug")
}

/// Builds `libpti.so` and `libpti.a` (debug) and the simulated Level Zero driver of the tests
/// (`libze_sim.so`), and links `libpti.so.0` (its SONAME, which the
/// runtime loader looks for) to it, so programs linked against the build directory run.
fn build_libpti(root: &Path) -> Result<PathBuf, String> {
    step(
        "build libpti and the simulated Level Zero driver",
        &mut cargo(root, &["build", "-p", "pti-capi", "-p", "ze-sim"]),
    )?;
    let lib = lib_dir(root);
    let soname = lib.join("libpti.so.0");
    if std::fs::read_link(&soname).is_err() {
        let _ = std::fs::remove_file(&soname);
        std::os::unix::fs::symlink("libpti.so", &soname)
            .map_err(|e| format!("cannot link {}: {e}", soname.display()))?;
    }
    Ok(lib)
}

/// Set up, build `libpti.so`, then lint and run every test of the workspace.
pub fn test() -> Result<(), String> {
    let root = workspace_root();
    setup::all(&root)?;
    let lib = build_libpti(&root)?;
    step(
        "format",
        &mut cargo(&root, &["fmt", "--all", "--", "--check"]),
    )?;
    step(
        "clippy",
        &mut cargo(
            &root,
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
    )?;
    step(
        "tests",
        cargo(&root, &["test", "--workspace"]).env("PTI_LIB_DIR", &lib),
    )?;
    step(
        "benchmarks, once each as tests",
        &mut cargo(&root, &["test", "-p", "pti-core", "--benches"]),
    )?;
    eprintln!("xtask: all checks passed");
    Ok(())
}

/// Set up, build, and run the main job.
///
/// Until pti-trace exists, the main job is the two C samples on libpti's simulated-call test
/// backend: `callback_demo.c` (subscribes, enables, prints every callback) and `view_dump.c`
/// (enables views, flushes, prints every record).
pub fn demo() -> Result<(), String> {
    let root = workspace_root();
    setup::all(&root)?;
    let lib = build_libpti(&root)?;
    let out = root.join("target/samples");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    for sample in ["callback_demo", "view_dump"] {
        let exe = out.join(sample);
        step(
            &format!("compile samples/c/{sample}.c"),
            Command::new("cc")
                .current_dir(&root)
                .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-Iinclude"])
                .arg(format!("samples/c/{sample}.c"))
                .arg("-o")
                .arg(&exe)
                .arg(format!("-L{}", lib.display()))
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .args(["-lpti", "-lpthread"]),
        )?;
        step(&format!("run {sample}"), &mut Command::new(&exe))?;
    }
    Ok(())
}
