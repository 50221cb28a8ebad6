//! Setting up a fresh machine: the Debian packages the build, the tests and the demo need.
//!
//! Packages are installed with apt-get only when `dpkg-query` says they are missing, so a set-up
//! machine pays one quick query per package. Nothing here is ever installed by hand.

use std::process::Command;

/// `(package, why the project needs it)`.
const PACKAGES: &[(&str, &str)] = &[
    (
        "gcc",
        "compiles the C tests and samples against include/ and libpti.so",
    ),
    ("g++", "checks that the headers compile as C++"),
    ("binutils", "readelf checks the SONAME of libpti.so"),
];

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn is_root() -> bool {
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
    let missing: Vec<&str> = PACKAGES
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| !installed(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask: installing {}", missing.join(" "));
    apt_get(&["update", "-q"])?;
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(&missing);
    apt_get(&args)
}
