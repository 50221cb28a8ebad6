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
//! The 0.x releases are another library name, `libpti_view.so.0` (with `libpti.so` beside it, no
//! `pti/`): PyTorch's XPU wheels 2.11 to 2.13 pin 0.16.0 and 0.17.0. Those two are fetched too,
//! and given a link `libpti_view.so.1 -> libpti_view.so.0` in their directory, so that the
//! differential tests run the same tool binaries (built against 1.x's name) on them
//! (docs/compatibility.md, "Intel PTI releases tools load").

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release libpti's Intel face implements, and the tests' main reference.
pub const VERSION: &str = "1.2.0";

/// Every `libpti_view.so.1` release the differential tests run against, oldest first, with its
/// wheel's SHA-256 (the wheel is `intel_pti-<version>-py2.py3-none-manylinux_2_28_x86_64.whl`).
pub const RELEASES: [(&str, &str); 6] = [
    (
        "0.16.0",
        "452e44479a5720b3fe19f00fa01bdea29586a1a25a557278857ab0a3d11c7852",
    ),
    (
        "0.17.0",
        "1a3327b8683af72e60e1ea8f754160fb12ffb8a15e57941f7e3672bcc540e2fc",
    ),
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

/// Whether `lib` holds a release's libraries: `libpti_view.so.1` (1.x's, or the link to 0.x's
/// `libpti_view.so.0`) and the core library (`pti/libpti.so` in 1.x, `libpti.so` in 0.x).
pub fn is_unpacked(lib: &Path) -> bool {
    lib.join("libpti_view.so.1").exists()
        && (lib.join("pti/libpti.so").exists() || lib.join("libpti.so").exists())
}

fn fetch_release(root: &Path, version: &str, sha256: &str) -> Result<PathBuf, String> {
    let lib = lib_dir_of(root, version);
    if is_unpacked(&lib) {
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
    // A 0.x release's library is libpti_view.so.0: the tests load it under 1.x's name.
    if version.starts_with("0.") && lib.join("libpti_view.so.0").exists() {
        std::os::unix::fs::symlink("libpti_view.so.0", lib.join("libpti_view.so.1"))
            .map_err(|e| format!("{}: {e}", lib.display()))?;
    }
    if is_unpacked(&lib) {
        Ok(lib)
    } else {
        Err(format!(
            "the intel-pti {version} wheel lacks libpti_view or libpti.so: its layout changed"
        ))
    }
}
