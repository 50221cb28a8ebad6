//! The newest Level Zero headers and loader, fetched from Debian for generation and inspection.
//!
//! pti-sys's bindings, the tracer's callbacks and the ID table are generated from the newest
//! Level Zero headers Debian ships (`libze-dev` 1.32.0, in sid), not from the older ones the
//! machine has installed (trixie-era 1.8.12, whose loader the tests run). Those loaders cannot
//! run here (1.32 needs glibc 2.38), but their headers describe every function, and their
//! loader's exported `zelTracer*RegisterCallback` functions say what a 1.32 tracing layer offers.
//!
//! The two packages are downloaded once into `.cache/level-zero/<version>/` (ignored by git,
//! never committed), checked against pinned SHA-256 sums and unpacked with `dpkg-deb -x`. The
//! pool address goes away when sid moves on; snapshot.debian.org keeps it, and is tried next.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Debian version of the packages.
pub const VERSION: &str = "1.32.0-1";

/// `(package file, SHA-256)`.
const PACKAGES: [(&str, &str); 2] = [
    (
        "libze-dev_1.32.0-1_amd64.deb",
        "46683fdb7a9c619941a5e665b424e8dca69d9870e4f49424a73ddc18653f1111",
    ),
    (
        "libze1_1.32.0-1_amd64.deb",
        "c6bfe97794297776f9270b987bb3a7467f2a947a417bdb8fd46d2fea75cf7854",
    ),
];

/// Where each package may be found, tried in order.
const MIRRORS: [&str; 2] = [
    "https://deb.debian.org/debian/pool/main/l/level-zero",
    "https://snapshot.debian.org/archive/debian/20261120T000000Z/pool/main/l/level-zero",
];

/// The unpacked tree (`usr/include/level_zero`, `usr/lib/x86_64-linux-gnu/libze_loader.so.*`).
pub fn tree(root: &Path) -> PathBuf {
    root.join(".cache/level-zero").join(VERSION)
}

/// The include directory of the newest headers (fetched by [`fetch`]).
pub fn include_dir(root: &Path) -> PathBuf {
    tree(root).join("usr/include")
}

/// The 1.32 loader library (fetched by [`fetch`]; it cannot run on this machine's glibc).
pub fn loader(root: &Path) -> PathBuf {
    tree(root).join("usr/lib/x86_64-linux-gnu/libze_loader.so.1.32.0")
}

/// Downloads and unpacks the packages unless they are there already.
pub fn fetch(root: &Path) -> Result<PathBuf, String> {
    let tree = tree(root);
    if include_dir(root).join("level_zero/ze_api.h").exists() && loader(root).exists() {
        return Ok(tree);
    }
    let downloads = root.join(".cache/level-zero/downloads");
    std::fs::create_dir_all(&downloads).map_err(|e| format!("{}: {e}", downloads.display()))?;
    for (file, sha256) in PACKAGES {
        let path = downloads.join(file);
        if !(path.exists() && digest(&path)? == sha256) {
            download(file, &path)?;
        }
        let got = digest(&path)?;
        if got != sha256 {
            return Err(format!(
                "{} has SHA-256 {got}, not the pinned {sha256}",
                path.display()
            ));
        }
        let status = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&path)
            .arg(&tree)
            .status()
            .map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
        if !status.success() {
            return Err(format!("dpkg-deb -x {} failed: {status}", path.display()));
        }
    }
    Ok(tree)
}

fn download(file: &str, to: &Path) -> Result<(), String> {
    eprintln!("xtask: downloading {file} (the Level Zero {VERSION} headers and loader)");
    let mut tried = Vec::new();
    for mirror in MIRRORS {
        let url = format!("{mirror}/{file}");
        let ok = Command::new("curl")
            .args(["-fsSL", "--retry", "2", "-o"])
            .arg(to)
            .arg(&url)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Ok(());
        }
        tried.push(url);
    }
    Err(format!(
        "could not download {file} from any of {tried:?}; the newest Level Zero headers are \
         needed to generate and check pti-sys's bindings"
    ))
}

/// The SHA-256 of a file, as `sha256sum` prints it.
pub fn digest(path: &Path) -> Result<String, String> {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string())
}
