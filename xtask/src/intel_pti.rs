//! Intel's PTI 1.2 (PyPI `intel-pti`), fetched as a reference for the tests to compare records
//! against.
//!
//! The wheel is downloaded once with the venv's pip into `.cache/intel-pti/downloads` (ignored
//! by git, never committed), checked against a pinned SHA-256, and its libraries
//! (`libpti_view.so.1`, which opens `pti/libpti.so`) unpacked into `.cache/intel-pti/<version>/lib`.
//! They are not installed into `.venv`: there `libpti_view.so.1` would sit on the library path of
//! every SYCL test, beside the link to libpti the drop-in tests make under the same name.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned release.
pub const VERSION: &str = "1.2.0";

/// The wheel's file name and SHA-256.
const WHEEL: (&str, &str) = (
    "intel_pti-1.2.0-py2.py3-none-manylinux_2_28_x86_64.whl",
    "4cba1d71816f6b3f4283d55c5bc45f09532647e9c5ca8b3a4f136092fa8e3c94",
);

/// The directory holding Intel's `libpti_view.so.1` and `pti/libpti.so` (made by [`fetch`]).
pub fn lib_dir(root: &Path) -> PathBuf {
    root.join(".cache/intel-pti").join(VERSION).join("lib")
}

/// Downloads and unpacks the wheel unless its libraries are there already. Needs `.venv`
/// (made first by [`crate::setup::python_venv`]) for pip and Python's `zipfile`.
pub fn fetch(root: &Path) -> Result<PathBuf, String> {
    let lib = lib_dir(root);
    if lib.join("libpti_view.so.1").exists() && lib.join("pti/libpti.so").exists() {
        return Ok(lib);
    }
    let downloads = root.join(".cache/intel-pti/downloads");
    std::fs::create_dir_all(&downloads).map_err(|e| format!("{}: {e}", downloads.display()))?;
    let (file, sha256) = WHEEL;
    let wheel = downloads.join(file);
    let venv = root.join(".venv/bin");
    if !(wheel.exists() && crate::newest_level_zero::digest(&wheel)? == sha256) {
        eprintln!("xtask: downloading intel-pti=={VERSION} (Intel's PTI, the tests' reference)");
        let status = Command::new(venv.join("pip"))
            .args(["download", "-q", "--disable-pip-version-check", "--no-deps"])
            .args(["--only-binary", ":all:", "-d"])
            .arg(&downloads)
            .arg(format!("intel-pti=={VERSION}"))
            .status()
            .map_err(|e| format!("cannot run {}/pip: {e}", venv.display()))?;
        if !status.success() {
            return Err(format!(
                "pip download intel-pti=={VERSION} failed: {status}"
            ));
        }
    }
    let got = crate::newest_level_zero::digest(&wheel)?;
    if got != sha256 {
        return Err(format!(
            "{} has SHA-256 {got}, not the pinned {sha256}",
            wheel.display()
        ));
    }
    let unpacked = root.join(".cache/intel-pti").join(VERSION).join("wheel");
    let status = Command::new(venv.join("python"))
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked)
        .status()
        .map_err(|e| format!("cannot run {}/python: {e}", venv.display()))?;
    if !status.success() {
        return Err(format!("unpacking {} failed: {status}", wheel.display()));
    }
    let data_lib = unpacked.join(format!("intel_pti-{VERSION}.data/data/lib"));
    let _ = std::fs::remove_dir_all(&lib);
    std::fs::rename(&data_lib, &lib).map_err(|e| {
        format!(
            "{} -> {}: {e} (the wheel's layout changed?)",
            data_lib.display(),
            lib.display()
        )
    })?;
    let _ = std::fs::remove_dir_all(&unpacked);
    // Python's zipfile keeps no symbolic links: the wheel's libpti_view.so.1 is a file already.
    match ["libpti_view.so.1", "pti/libpti.so"]
        .iter()
        .find(|f| !lib.join(f).exists())
    {
        Some(missing) => Err(format!(
            "the intel-pti {VERSION} wheel has no lib/{missing}: its layout changed"
        )),
        None => Ok(lib),
    }
}
