//! The Python package (`pti-python/`) as a wheel: `libpti.so`, the pti-trace binary and its
//! collector are staged into the package directory (`pti-python/python/libpti/`, ignored by
//! git; debug information stripped, the code is unchanged), then maturin builds the native
//! module and packs everything (`target/wheels/libpti-<version>-cp39-abi3-linux_x86_64.whl`).
//!
//! Also the wheels the Python tests install into their fresh virtual environment, downloaded once
//! into `.cache/python-wheels` so that a test run needs no network.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages the Python tests install beside libpti's wheel: the programs they trace (PyOpenCL
/// on PoCL, dpctl on Intel's CPU OpenCL runtime).
pub const TEST_PACKAGES: &[&str] = &[
    "numpy==2.4.6",
    "pyopencl==2026.1.4",
    "dpctl==0.22.1",
    "intel-opencl-rt==2026.2.0",
    "intel-cmplr-lib-rt==2026.2.0",
    "intel-sycl-rt==2026.2.0",
    "ittapi==1.2.2",
];

/// Where [`TEST_PACKAGES`] are kept, relative to the workspace root.
pub const WHEEL_CACHE: &str = ".cache/python-wheels";

/// Downloads [`TEST_PACKAGES`] and their dependencies into [`WHEEL_CACHE`] unless the list is
/// there already (a stamp records it).
pub fn fetch_test_packages(root: &Path) -> Result<(), String> {
    let cache = root.join(WHEEL_CACHE);
    let stamp = cache.join("packages.txt");
    let wanted: String = TEST_PACKAGES.iter().map(|p| format!("{p}\n")).collect();
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    eprintln!(
        "xtask: downloading the Python tests' packages into {}",
        cache.display()
    );
    let status = Command::new(root.join(".venv/bin/pip"))
        .args(["download", "-q", "--disable-pip-version-check", "-d"])
        .arg(&cache)
        .args(TEST_PACKAGES)
        .status()
        .map_err(|e| format!("cannot run .venv/bin/pip: {e}"))?;
    if !status.success() {
        return Err(format!(
            "pip download of the Python tests' packages failed: {status}"
        ));
    }
    std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))
}

/// Copies `from` to `to` without its debug information.
fn stage(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let status = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(from)
        .arg(to)
        .status()
        .map_err(|e| format!("cannot run objcopy: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("objcopy --strip-debug {} failed", from.display()))
}

/// Builds the wheel from the libraries in `lib` (a build directory holding `libpti.so`,
/// `libpti_trace_collector.so` and `pti-trace`), `release` choosing maturin's profile for the
/// native module; returns the wheel's path.
pub fn build(root: &Path, lib: &Path, release: bool) -> Result<PathBuf, String> {
    let package = root.join("pti-python/python/libpti");
    stage(&lib.join("libpti.so"), &package.join("libpti.so.0"))?;
    stage(
        &lib.join("libpti_trace_collector.so"),
        &package.join("libpti_trace_collector.so"),
    )?;
    stage(&lib.join("pti-trace"), &package.join("bin/pti-trace"))?;
    let out = root.join("target/wheels");
    let _ = std::fs::remove_dir_all(&out);
    let mut cmd = Command::new(root.join(".venv/bin/maturin"));
    cmd.current_dir(root)
        .args(["build", "--manifest-path", "pti-python/Cargo.toml", "--out"])
        .arg(&out)
        .args([
            "--auditwheel",
            "skip",
            "--compatibility",
            "linux",
            "--strip",
        ])
        .arg("--interpreter")
        .arg(root.join(".venv/bin/python"));
    if release {
        cmd.arg("--release");
    }
    // The native module links libpti from the same build directory as the one staged.
    cmd.env("PTI_LIB_DIR", lib);
    let status = cmd.status().map_err(|e| {
        format!("cannot run .venv/bin/maturin (cargo xtask setup installs it): {e}")
    })?;
    if !status.success() {
        return Err(format!("maturin build failed: {status}"));
    }
    std::fs::read_dir(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("maturin wrote no wheel into {}", out.display()))
}
