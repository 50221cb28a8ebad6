//! The two top-level commands of the README: `demo` (set up, build, run the main job) and
//! `test` (set up, build, run every check and test). `.ci/run` calls `test` and nothing else.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{setup, workspace_root};

/// Runs one named step, echoing it and its duration; fails with the step's name.
pub(crate) fn step(name: &str, cmd: &mut Command) -> Result<(), String> {
    eprintln!("xtask: == {name}: {cmd:?}");
    let start = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    eprintln!(
        "xtask: == {name}: {status} after {:.1}s",
        start.elapsed().as_secs_f64()
    );
    status.success().then_some(()).ok_or_else(|| {
        let room = crate::disk::free_gib(Path::new(".")).map_or(String::new(), |gib| {
            format!(" ({gib} GiB left free on the disk)")
        });
        format!("step failed: {name}{room}")
    })
}

/// `cargo` (the one running xtask) with `args`, in the workspace root.
pub(crate) fn cargo(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root).args(args);
    // Incremental compilation's caches (1.5 GB after the tests) serve only the next edit of a
    // workspace crate; xtask's builds run once over a checkout. A user's own setting wins.
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        cmd.env("CARGO_INCREMENTAL", "0");
    }
    cmd
}

/// The packages of what is shipped: libpti, Intel PTI's face of it (libpti_view.so.1),
/// pti-trace and its collector.
const SHIPPED: [&str; 8] = [
    "-p",
    "pti-capi",
    "-p",
    "pti-view",
    "-p",
    "pti-trace",
    "-p",
    "pti-trace-collector",
];

/// Builds what is shipped (`--release` or debug); returns the build directory, where pti-capi's
/// build script links the SONAMEs (`libpti.so.0`, `libpti_view.so.1`) so programs linked there
/// run.
pub fn build(release: bool) -> Result<PathBuf, String> {
    build_packages(release, &SHIPPED)
}

/// What the demo runs: libpti and pti-trace with its collector (not Intel's ABI, `pti-view`).
const DEMO_BUILT: [&str; 6] = [
    "-p",
    "pti-capi",
    "-p",
    "pti-trace",
    "-p",
    "pti-trace-collector",
];

/// Builds `packages` (`-p` arguments), `--release` or debug; returns the build directory.
fn build_packages(release: bool, packages: &[&str]) -> Result<PathBuf, String> {
    let root = workspace_root();
    let mut args = vec!["build"];
    if release {
        args.push("--release");
    }
    args.extend(packages);
    step(
        &format!(
            "build libpti and pti-trace ({})",
            if release { "release" } else { "debug" }
        ),
        &mut cargo(&root, &args),
    )?;
    Ok(root
        .join("target")
        .join(if release { "release" } else { "debug" }))
}

/// Where the fault-injection build of libpti goes: a target directory of its own, so that it
/// never replaces the shipped build.
const FAULT_TARGET: &str = "target/fault-injection";

/// Builds libpti (debug) with the `fault-injection` feature, whose panics
/// `tests/fault_injection.rs` arms through `PTI_FAULT_INJECT`; returns its directory.
fn build_fault_injection(root: &Path) -> Result<PathBuf, String> {
    step(
        "build libpti with fault injection (tests/fault_injection.rs)",
        &mut cargo(
            root,
            &[
                "build",
                "-p",
                "pti-capi",
                "--features",
                "pti-core/fault-injection",
                "--target-dir",
                FAULT_TARGET,
            ],
        ),
    )?;
    Ok(root.join(FAULT_TARGET).join("debug"))
}

/// Builds what is shipped (debug), the simulated Level Zero driver of the tests
/// (`libze_sim.so`) and the loader pairing for the Unified Runtime's adapters
/// (`libze_loader_compat.so`); returns the build directory.
fn build_libpti(root: &Path) -> Result<PathBuf, String> {
    let lib = build(false)?;
    step(
        "build the simulated Level Zero driver and the adapters' loader pairing",
        &mut cargo(root, &["build", "-p", "ze-sim", "-p", "ze-loader-compat"]),
    )?;
    Ok(lib)
}

/// An empty PoCL kernel cache for the tests (`target/pocl-cache`, emptied at each run): every
/// run of the tests sees PoCL as a fresh machine does, compiling each kernel in processes of its
/// own, which a preloaded tool also runs in (issue 35).
fn cold_pocl_cache(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join("target/pocl-cache");
    remove_build(&dir)?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Set up, build `libpti.so`, then lint and run every test of the workspace.
pub fn test() -> Result<(), String> {
    let root = workspace_root();
    crate::disk::require(&root, crate::disk::TEST_NEEDS_GIB)?;
    setup::all(&root)?;
    let lib = build_libpti(&root)?;
    let fault_lib = build_fault_injection(&root)?;
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
    // The tests find libpti in target/debug, as `lib` is; PTI_LIB_DIR is left as the build
    // steps had it, since a change of it reruns the libpti crate's build script and relinks
    // everything built on it.
    step(
        "tests",
        cargo(&root, &["test", "--workspace"])
            .env("PTI_FAULT_LIB_DIR", &fault_lib)
            .env("POCL_CACHE_DIR", cold_pocl_cache(&root)?),
    )?;
    // Each build below is made afresh by a run on a fresh clone and used by one step only: it is
    // removed once that step passed (kept where a step failed, to look into), so that the
    // checkout stays under 8 GB all along (docs/README's figures: at its peak, not only at the
    // end).
    remove_build(&root.join(FAULT_TARGET))?;
    python_tests(&root, &lib)?;
    step(
        "loom models of the buffer hand-off and the switch-off latch (pti-core/tests/loom_*.rs)",
        cargo(
            &root,
            &[
                "test",
                "-p",
                "pti-core",
                "--test",
                "loom_handoff",
                "--test",
                "loom_off_latch",
                "--release",
                "--target-dir",
                "target/loom",
            ],
        )
        .env("RUSTFLAGS", "--cfg loom"),
    )?;
    remove_build(&root.join("target/loom"))?;
    crate::sanitizers::asan_rust(&root, 16)?;
    crate::sanitizers::asan_c(&root)?;
    remove_build(&root.join("target/sanitizers/x86_64-unknown-linux-gnu"))?;
    crate::sanitizers::fuzz(&root, 30)?;
    // The fuzz corpus stays; the build goes.
    remove_build(&root.join("target/sanitizers/fuzz"))?;
    crate::msrv::check(&root, &SHIPPED)?;
    crate::analysis::spark(&root)?;
    remove_build(&root.join("target/spark-venv"))?;
    crate::analysis::scale(&root, &[8, 16, 32, 64])?;
    step(
        "benchmarks, once each as tests",
        &mut cargo(&root, &["test", "-p", "pti-core", "--benches"]),
    )?;
    step(
        "overhead benchmark, one short round (debug libpti)",
        Command::new(root.join("benches/overhead.sh"))
            .arg("quick")
            .env("PTI_LIB_DIR", &lib),
    )?;
    eprintln!("xtask: all checks passed");
    Ok(())
}

/// Removes a directory of builds or caches that the run makes afresh (absent already: fine).
fn remove_build(dir: &Path) -> Result<(), String> {
    std::fs::remove_dir_all(dir).or_else(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Ok(())
        } else {
            Err(format!("cannot remove {}: {e}", dir.display()))
        }
    })
}

/// Builds the Python wheel from the debug build in `lib` and runs the Python package's tests
/// (`pti-python/tests`), which install it into a fresh virtual environment.
fn python_tests(root: &Path, lib: &Path) -> Result<(), String> {
    step(
        "Python package type hints (mypy --strict)",
        Command::new(root.join(".venv/bin/mypy"))
            .args(["--strict", "libpti"])
            .current_dir(root.join("pti-python/python")),
    )?;
    let wheel = crate::wheel::build(root, lib, false)?;
    step(
        "Python package tests (pytest, the wheel in a fresh venv)",
        Command::new(root.join(".venv/bin/python"))
            .args(["-m", "pytest", "-q", "-ra", "pti-python/tests"])
            .current_dir(root)
            .env("LIBPTI_WHEEL", &wheel)
            .env("LIBPTI_WHEEL_CACHE", root.join(crate::wheel::WHEEL_CACHE))
            .env("PTI_LIB_DIR", lib)
            // cargo runs xtask with target/debug on LD_LIBRARY_PATH, which would come before the
            // wheel's own libpti (its native module finds it by RUNPATH): the wheel's tests test
            // the wheel's library.
            .env_remove("LD_LIBRARY_PATH"),
    )?;
    // The tests' virtual environment (1.7 GB) is made afresh by each run: kept only where a
    // test failed, to look into.
    remove_build(&root.join("target/python-tests"))
}

/// Builds libpti (release) and runs the overhead benchmark, `benches/overhead.sh` (one short
/// round with `quick`); its figures go to `docs/BENCHMARKS.md` by hand, with the date and device.
pub fn bench(quick: bool) -> Result<(), String> {
    let root = workspace_root();
    setup::all(&root)?;
    let lib = build(true)?;
    let mut cmd = Command::new(root.join("benches/overhead.sh"));
    if quick {
        cmd.arg("quick");
    }
    step("overhead benchmark", cmd.env("PTI_LIB_DIR", &lib))
}

/// Set up, build, and run the main job: pti-trace on the bundled OpenCL sample
/// (`samples/c/vector_add.c`, the first real OpenCL device it finds: a GPU if there is one).
pub fn demo() -> Result<(), String> {
    let root = workspace_root();
    setup::demo()?;
    let lib = build_packages(false, &DEMO_BUILT)?;
    let out = root.join("target/samples");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let exe = out.join("vector_add");
    step(
        "compile samples/c/vector_add.c",
        Command::new("cc")
            .current_dir(&root)
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2"])
            .args(["samples/c/vector_add.c", "samples/c/workload.c", "-o"])
            .arg(&exe)
            .arg("-lOpenCL"),
    )?;
    let mut trace = Command::new(lib.join("pti-trace"));
    trace
        .current_dir(&root)
        .arg("-o")
        .arg(out.join("vector_add.%p.pftrace"))
        .arg("--")
        .arg(&exe);
    if let Some(vendors) = register_nvidia_opencl(&out)? {
        eprintln!(
            "xtask: NVIDIA's OpenCL driver is installed but not registered with the OpenCL \
             loader: registered for this run with OCL_ICD_VENDORS={}",
            vendors.display()
        );
        trace.env("OCL_ICD_VENDORS", &vendors);
        // ocl-icd (which loads layers) before CUDA's own libOpenCL.so.1 (which does not).
        let system = Path::new("/lib/x86_64-linux-gnu");
        if system.join("libOpenCL.so.1").exists() {
            let mut path = std::ffi::OsString::from(system);
            if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
                path.push(":");
                path.push(old);
            }
            trace.env("LD_LIBRARY_PATH", path);
        }
    }
    step("pti-trace on vector_add", &mut trace)?;
    eprintln!("xtask: open the timeline written above in https://ui.perfetto.dev");
    Ok(())
}

/// Where NVIDIA's OpenCL driver is installed without an ICD file (as on the GPU machines, see
/// `../shared/RUNTIMES.md`), a vendors directory under `out` with the registered ICDs and
/// NVIDIA's, for `OCL_ICD_VENDORS`; `None` when there is nothing to add.
fn register_nvidia_opencl(out: &Path) -> Result<Option<PathBuf>, String> {
    let registered = Path::new("/etc/OpenCL/vendors");
    let icds: Vec<PathBuf> = std::fs::read_dir(registered)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let mentions_nvidia =
        |p: &PathBuf| std::fs::read_to_string(p).is_ok_and(|t| t.contains("nvidia"));
    if icds.iter().any(mentions_nvidia) {
        return Ok(None);
    }
    let Some(library) = [
        "/usr/local/nvidia/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
    ]
    .iter()
    .map(|d| Path::new(d).join("libnvidia-opencl.so.1"))
    .find(|p| p.exists()) else {
        return Ok(None);
    };
    let vendors = out.join("icd");
    std::fs::create_dir_all(&vendors).map_err(|e| e.to_string())?;
    for icd in icds
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "icd"))
    {
        std::fs::copy(icd, vendors.join(icd.file_name().unwrap())).map_err(|e| e.to_string())?;
    }
    std::fs::write(
        vendors.join("nvidia.icd"),
        format!("{}\n", library.display()),
    )
    .map_err(|e| e.to_string())?;
    Ok(Some(vendors))
}
