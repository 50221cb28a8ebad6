//! Intel's PTI (PyPI `intel-pti`), fetched as a reference for the tests to compare records
//! against: 1.2.0, which libpti's Intel face implements, and the earlier releases of the same
//! library name (`libpti_view.so.1`), which tools built for Intel PTI 1.x load as well.
//!
//! Each wheel is downloaded once with the venv's pip into `.cache/intel-pti/downloads` (ignored
//! by git, never committed), checked against a pinned SHA-256, and its libraries
//! (`libpti_view.so.1`, which opens `pti/libpti.so`) unpacked into `.cache/intel-pti/<version>/lib`.
//! They are not installed into `.venv`: there `libpti_view.so.1` would sit on the library path of
//! every SYCL test, beside the link to libpti the drop-in tests make under the same name.
//!
//! The 0.x releases (0.10 to 0.17, which PyTorch's XPU wheels before 1.x pin) are another
//! library, `libpti_view.so.0`: a tool built for them does not load `libpti_view.so.1`, Intel's or
//! libpti's, so they are not fetched (docs/compatibility.md, "Intel PTI releases").

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release libpti's Intel face implements, and the tests' main reference.
pub const VERSION: &str = "1.2.0";

/// Every `libpti_view.so.1` release the differential tests run against, oldest first, with its
/// wheel's SHA-256 (the wheel is `intel_pti-<version>-py2.py3-none-manylinux_2_28_x86_64.whl`).
pub const RELEASES: [(&str, &str); 4] = [
    (
        "1.0.0",
        "1788669cdc189414116ec1cb73b54013acc30678f1065cda9d3ad56a690dedb5",
    ),
    (
        "1.0.1",
        "4e7ad9e955d2dad8e41cd95d22e8ab1e476bae2e6e351f0e8b4653fe77ab2e0c",
    ),
    (
        "1.1.0",
        "62bb374068d5e43239db7a75d19e673e21be68603092de6238522cad4ea8c9ca",
    ),
    (
        "1.2.0",
        "4cba1d71816f6b3f4283d55c5bc45f09532647e9c5ca8b3a4f136092fa8e3c94",
    ),
];

/// The directory holding Intel's `libpti_view.so.1` and `pti/libpti.so` of [`VERSION`].
pub fn lib_dir(root: &Path) -> PathBuf {
    lib_dir_of(root, VERSION)
}

/// The directory holding release `version`'s libraries (made by [`fetch`]).
pub fn lib_dir_of(root: &Path, version: &str) -> PathBuf {
    root.join(".cache/intel-pti").join(version).join("lib")
}

/// Downloads and unpacks every release of [`RELEASES`] whose libraries are not there yet;
/// returns the directory of [`VERSION`]'s. Needs `.venv` (made first by
/// [`crate::setup::python_venv`]) for pip and Python's `zipfile`.
pub fn fetch(root: &Path) -> Result<PathBuf, String> {
    for (version, sha256) in RELEASES {
        fetch_release(root, version, sha256)?;
    }
    Ok(lib_dir(root))
}

fn fetch_release(root: &Path, version: &str, sha256: &str) -> Result<PathBuf, String> {
    let lib = lib_dir_of(root, version);
    if lib.join("libpti_view.so.1").exists() && lib.join("pti/libpti.so").exists() {
        return Ok(lib);
    }
    let downloads = root.join(".cache/intel-pti/downloads");
    std::fs::create_dir_all(&downloads).map_err(|e| format!("{}: {e}", downloads.display()))?;
    let file = format!("intel_pti-{version}-py2.py3-none-manylinux_2_28_x86_64.whl");
    let wheel = downloads.join(&file);
    let venv = root.join(".venv/bin");
    if !(wheel.exists() && crate::newest_level_zero::digest(&wheel)? == sha256) {
        eprintln!("xtask: downloading intel-pti=={version} (Intel's PTI, the tests' reference)");
        let status = Command::new(venv.join("pip"))
            .args(["download", "-q", "--disable-pip-version-check", "--no-deps"])
            .args(["--only-binary", ":all:", "-d"])
            .arg(&downloads)
            .arg(format!("intel-pti=={version}"))
            .status()
            .map_err(|e| format!("cannot run {}/pip: {e}", venv.display()))?;
        if !status.success() {
            return Err(format!(
                "pip download intel-pti=={version} failed: {status}"
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
    let unpacked = root.join(".cache/intel-pti").join(version).join("wheel");
    let status = Command::new(venv.join("python"))
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked)
        .status()
        .map_err(|e| format!("cannot run {}/python: {e}", venv.display()))?;
    if !status.success() {
        return Err(format!("unpacking {} failed: {status}", wheel.display()));
    }
    let data_lib = unpacked.join(format!("intel_pti-{version}.data/data/lib"));
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
            "the intel-pti {version} wheel has no lib/{missing}: its layout changed"
        )),
        None => Ok(lib),
    }
}
