//! Setting up a fresh machine: the Debian packages the build, the tests and the demo need, and
//! the Python virtual environment (`.venv`) that holds the runtimes PyPI ships.
//!
//! Packages are installed with apt-get only when `dpkg-query` says they are missing, so a set-up
//! machine pays one quick query per package; the virtual environment is made and filled only
//! when a file it should hold is missing or the pinned list changed (`.venv/pti-packages.txt`
//! records what was installed). Nothing here is ever installed by hand.

use std::path::Path;
use std::process::Command;

/// `(package, why the project needs it)`.
const PACKAGES: &[(&str, &str)] = &[
    (
        "gcc",
        "compiles the C tests and samples against include/ and libpti.so",
    ),
    ("g++", "checks that the headers compile as C++"),
    ("binutils", "readelf checks the SONAME of libpti.so"),
    (
        "ocl-icd-libopencl1",
        "ocl-icd, the OpenCL loader the PoCL tests run behind",
    ),
    (
        "ocl-icd-opencl-dev",
        "libOpenCL.so to link the OpenCL test programs against",
    ),
    (
        "opencl-c-headers",
        "CL/*.h for the OpenCL test programs and pti_cl_params.h",
    ),
    ("pocl-opencl-icd", "PoCL, a CPU OpenCL 3.0 runtime"),
    (
        "clinfo",
        "lists the OpenCL platforms, to diagnose a runtime that is not found",
    ),
    (
        "cmake",
        "builds the C and C++ samples against an installed tree (find_package(Pti))",
    ),
    (
        "pkg-config",
        "builds the C samples against an installed tree (pkg-config pti)",
    ),
    (
        "python3-venv",
        "python3 -m venv, which makes .venv (Intel's OpenCL and SYCL runtimes, dpctl)",
    ),
    (
        "libze1",
        "the Level Zero loader and its tracing layer, which the Level Zero tests run through",
    ),
    (
        "libze-dev",
        "the Level Zero headers (pti-sys's bindings are generated from them) and libze_loader.so",
    ),
    (
        "libclang1-15",
        "libclang, which bindgen loads to generate the Level Zero bindings (drift test)",
    ),
    (
        "valgrind",
        "memcheck, which runs the C tests and samples to prove they touch no memory they should not",
    ),
    (
        "openmpi-bin",
        "mpirun, which starts the 4-rank MPI test under pti-trace (tests/pti_trace.rs)",
    ),
    (
        "libopenmpi-dev",
        "mpicc and mpi.h, to build the MPI test program (tests/c/mpi_ranks.c)",
    ),
    (
        "openjdk-17-jre-headless",
        "the Java runtime Spark needs (`cargo xtask spark`, a step of `cargo xtask test`)",
    ),
    (
        "libopen-trace-format2-10",
        "libotf2 (OTF2 3.0), which `pti-trace export --otf2` loads at run time to write the archive",
    ),
    (
        "otf2-tools",
        "otf2-print, which reads the OTF2 export back in its test (tests/pti_trace/otf2.rs)",
    ),
    (
        "libclang-common-15-dev",
        "clang's own headers (stddef.h, ...), which libclang needs to parse the Level Zero headers",
    ),
];

/// What the demo (`cargo xtask demo`: pti-trace on the OpenCL sample) needs of [`PACKAGES`]: a
/// C compiler, the OpenCL loader and headers, and PoCL to run on where the machine has no GPU.
/// Nothing else: the Level Zero and SYCL set-up is for the tests.
const DEMO_PACKAGES: &[&str] = &[
    "gcc",
    "ocl-icd-libopencl1",
    "ocl-icd-opencl-dev",
    "opencl-c-headers",
    "pocl-opencl-icd",
];

/// The PyPI packages of `.venv`, pinned: `(requirement, why)`.
const PYTHON_PACKAGES: &[(&str, &str)] = &[
    (
        "intel-opencl-rt==2026.2.0",
        "Intel's CPU OpenCL runtime and the Khronos ICD loader (lib/libintelocl.so, lib/libOpenCL.so.1)",
    ),
    (
        "intel-cmplr-lib-rt==2026.2.0",
        "the compiler runtime libintelocl.so needs (libsvml, libimf, libirng, libintlc)",
    ),
    (
        "intel-sycl-rt==2026.2.0",
        "the SYCL runtime, its XPTI framework (lib/libxptifw.so) and, through intel-cmplr-lib-ur, \
         the Unified Runtime",
    ),
    (
        "dpctl==0.22.1",
        "SYCL from Python (queues, USM memory, dpctl.program): the SYCL tests' program",
    ),
    (
        "numpy==2.4.6",
        "the SYCL test program's host arrays (a dpctl dependency, pinned)",
    ),
    (
        "ittapi==1.2.2",
        "Intel's ITT API from Python, unmodified: the annotation tests' client (tests/pti_trace.rs)",
    ),
    (
        "duckdb==2.0.1",
        "queries pti-trace's Parquet dataset (pti-trace/analysis/pti_query.py; tests/pti_trace.rs)",
    ),
    (
        "maturin==1.16.0",
        "builds libpti's Python wheel (pti-python/, cargo xtask wheel)",
    ),
    (
        "pytest==9.2.0",
        "runs the Python package's tests (pti-python/tests)",
    ),
    (
        "mypy==2.4.1",
        "checks the Python package's type hints (mypy --strict pti-python/python/libpti)",
    ),
];

/// Files whose presence says `.venv` is complete.
const VENV_MARKERS: &[&str] = &[
    "lib/libintelocl.so",
    "lib/libOpenCL.so.1",
    "lib/libsvml.so",
    "lib/libsycl.so",
    "lib/libxptifw.so",
    "lib/libur_loader.so.0",
];

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn apt_get(args: &[&str]) -> Result<(), String> {
    let mut cmd = if is_root() {
        Command::new("apt-get")
    } else {
        let mut sudo = Command::new("sudo");
        sudo.arg("apt-get");
        sudo
    };
    let status = cmd
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run apt-get (is this a Debian machine?): {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("apt-get {} failed: {status}", args.join(" ")))
}

/// Installs whichever of the project's Debian packages are missing.
pub fn system_packages() -> Result<(), String> {
    install_missing(PACKAGES.iter().map(|(p, _)| *p))
}

/// Installs whichever of `packages` are missing.
fn install_missing<'a>(packages: impl Iterator<Item = &'a str>) -> Result<(), String> {
    let missing: Vec<&str> = packages.filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing {}", missing.join(" "));
    apt_get(&["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(&missing);
    apt_get(&args)
}

/// Makes `.venv` in the workspace root and installs [`PYTHON_PACKAGES`] into it, unless it is
/// complete already.
pub fn python_venv(root: &Path) -> Result<(), String> {
    let venv = root.join(".venv");
    // What was installed, as pip was asked: a change of the pins installs again.
    let stamp = venv.join("pti-packages.txt");
    let wanted: String = PYTHON_PACKAGES
        .iter()
        .map(|(p, _)| format!("{p}\n"))
        .collect();
    if VENV_MARKERS.iter().all(|m| venv.join(m).exists())
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted)
    {
        return Ok(());
    }
    eprintln!(
        "xtask: making {} with {}",
        venv.display(),
        PYTHON_PACKAGES
            .iter()
            .map(|(p, _)| *p)
            .collect::<Vec<_>>()
            .join(" ")
    );
    if !venv.join("bin/pip").exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .map_err(|e| format!("cannot run python3 -m venv: {e}"))?;
        if !status.success() {
            return Err(format!(
                "python3 -m venv {} failed ({status}); with Debian's python3, the package \
                 python3-venv provides the venv module",
                venv.display()
            ));
        }
    }
    let status = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check"])
        .args(PYTHON_PACKAGES.iter().map(|(p, _)| *p))
        .status()
        .map_err(|e| format!("cannot run {}/bin/pip: {e}", venv.display()))?;
    if !status.success() {
        return Err(format!(
            "pip install into {} failed: {status}",
            venv.display()
        ));
    }
    match VENV_MARKERS.iter().find(|m| !venv.join(m).exists()) {
        Some(missing) => Err(format!(
            "{} lacks {missing} after pip install: the packages' layout changed",
            venv.display()
        )),
        None => std::fs::write(&stamp, wanted)
            .map_err(|e| format!("cannot write {}: {e}", stamp.display())),
    }
}

/// What the demo needs: [`DEMO_PACKAGES`].
pub fn demo() -> Result<(), String> {
    install_missing(DEMO_PACKAGES.iter().copied())
}

/// Everything: Debian packages, the newest Level Zero headers (`.cache/level-zero`), the
/// virtual environment, the Python tests' packages (`.cache/python-wheels`), then Intel's PTI as a reference (`.cache/intel-pti`).
pub fn all(root: &Path) -> Result<(), String> {
    system_packages()?;
    crate::msrv::install(root)?;
    crate::newest_level_zero::fetch(root)?;
    python_venv(root)?;
    crate::wheel::fetch_test_packages(root)?;
    crate::intel_pti::fetch(root).map(drop)
}

#[cfg(test)]
mod tests {
    use super::{DEMO_PACKAGES, PACKAGES};

    #[test]
    fn the_demo_installs_only_packages_the_project_lists() {
        for p in DEMO_PACKAGES {
            assert!(
                PACKAGES.iter().any(|(q, _)| q == p),
                "{p} is not in PACKAGES"
            );
        }
    }
}
