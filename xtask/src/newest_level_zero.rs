//! The newest Level Zero headers and loader, fetched from Debian for generation and inspection.
//!
//! pti-sys's bindings, the tracer's callbacks and the ID table are generated from the newest
//! Level Zero headers Debian ships (`libze-dev` 1.32.0, in sid), not from the older ones the
//! machine has installed (trixie-era 1.8.12, whose loader the tests run). Those loaders cannot
//! run here (1.32 needs glibc 2.38), but their headers describe every function, and their
//! loader's exported `zelTracer*RegisterCallback` functions say what a 1.32 tracing layer offers.
//!
//! The two packages are downloaded once, by name and version, with `apt-get download` over a
//! private apt state in `.cache/level-zero/apt` (its own lists and cache: the machine's apt
//! state is never touched), whose one source is sid's, derived from the machine's own Debian
//! source (its archive address and keyring). They are checked against pinned SHA-256 sums and
//! unpacked with `dpkg-deb -x` into `.cache/level-zero/<version>/` (ignored by git, never
//! committed). When sid has moved past this version, the download fails and says so; a cache
//! already holding the packages keeps working.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Debian version of the packages.
pub const VERSION: &str = "1.32.0-1";

/// `(package, file apt-get download writes, SHA-256)`.
const PACKAGES: [(&str, &str, &str); 2] = [
    (
        "libze-dev",
        "libze-dev_1.32.0-1_amd64.deb",
        "46683fdb7a9c619941a5e665b424e8dca69d9870e4f49424a73ddc18653f1111",
    ),
    (
        "libze1",
        "libze1_1.32.0-1_amd64.deb",
        "c6bfe97794297776f9270b987bb3a7467f2a947a417bdb8fd46d2fea75cf7854",
    ),
];

/// The Debian suite that has [`VERSION`].
const SUITE: &str = "sid";

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
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(_, file, sha256)| {
            let path = downloads.join(file);
            !(path.exists() && digest(&path).is_ok_and(|d| d == *sha256))
        })
        .map(|(package, _, _)| *package)
        .collect();
    if !missing.is_empty() {
        download(root, &missing, &downloads)?;
    }
    for (_, file, sha256) in PACKAGES {
        let path = downloads.join(file);
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

/// Downloads `packages` at [`VERSION`] into `to` with `apt-get download`, over the private apt
/// state [`private_apt`] makes.
fn download(root: &Path, packages: &[&str], to: &Path) -> Result<(), String> {
    eprintln!(
        "xtask: downloading {} {VERSION} from Debian {SUITE} (the newest Level Zero headers and \
         loader), with apt-get over a private apt state",
        packages.join(" ")
    );
    let options = private_apt(root)?;
    let apt = |args: &[String]| -> Result<(), String> {
        let status = Command::new("apt-get")
            .args(&options)
            .args(args)
            .current_dir(to)
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("apt-get {} failed: {status}", args.join(" ")))
    };
    apt(&["-q".into(), "update".into()])?;
    let wanted: Vec<String> = packages.iter().map(|p| format!("{p}={VERSION}")).collect();
    let mut args = vec!["-q".to_string(), "download".to_string()];
    args.extend(wanted.iter().cloned());
    apt(&args).map_err(|e| {
        format!(
            "{e}: Debian {SUITE} may no longer have {} (the newest Level Zero headers are needed \
             to generate and check pti-sys's bindings; pin the version sid has in \
             xtask/src/newest_level_zero.rs)",
            wanted.join(" ")
        )
    })
}

/// Makes the private apt state (`.cache/level-zero/apt`): a sources list with [`SUITE`] of the
/// machine's Debian archive, and directories for its lists and cache. Returns the `-o` options
/// that point apt-get at it.
fn private_apt(root: &Path) -> Result<Vec<String>, String> {
    let dir = root.join(".cache/level-zero/apt");
    for sub in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(dir.join(sub))
            .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
    }
    let (uri, keyring) = debian_archive()?;
    let sources = dir.join("sources.list");
    std::fs::write(
        &sources,
        format!("deb [signed-by={keyring}] {uri} {SUITE} main\n"),
    )
    .map_err(|e| format!("cannot write {}: {e}", sources.display()))?;
    let at = |p: &str| dir.join(p).display().to_string();
    let mut options = vec![
        format!("-oDir::Etc::SourceList={}", sources.display()),
        "-oDir::Etc::SourceParts=/dev/null".into(),
        format!("-oDir::State::Lists={}", at("lists")),
        format!("-oDir::Cache={}", at("cache")),
        "-oDebug::NoLocking=1".into(),
    ];
    if crate::setup::is_root() {
        // apt would hand the download to its `_apt` user, which cannot write the workspace.
        options.push("-oAPT::Sandbox::User=root".into());
    }
    Ok(options)
}

/// The machine's Debian archive (not its security archive) and its keyring, from its apt
/// sources: `/etc/apt/sources.list.d/*.sources` (deb822) and `/etc/apt/sources.list`.
fn debian_archive() -> Result<(String, String), String> {
    const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
    let mut texts = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path
                .extension()
                .is_some_and(|x| x == "sources" || x == "list")
            {
                texts.push(std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    texts.push(std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default());
    texts
        .iter()
        .find_map(|t| debian_source(t))
        .map(|(uri, keyring)| (uri, keyring.unwrap_or_else(|| KEYRING.to_string())))
        .ok_or_else(|| {
            "no Debian archive (a `deb` source whose address ends in /debian) in the machine's \
             apt sources: the newest Level Zero packages are fetched from its sid suite"
                .to_string()
        })
}

/// The first Debian archive of an apt sources text (deb822 stanzas or one-line entries): its
/// address and, if it names one, its keyring.
fn debian_source(text: &str) -> Option<(String, Option<String>)> {
    let is_archive = |uri: &str| uri.trim_end_matches('/').ends_with("/debian");
    // deb822: stanzas separated by blank lines.
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza.lines().find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|v| v.trim().to_string())
            })
        };
        let types = field("Types").unwrap_or_default();
        if !types.split_whitespace().any(|t| t == "deb") {
            continue;
        }
        if let Some(uri) = field("URIs").and_then(|u| {
            u.split_whitespace()
                .find(|u| is_archive(u))
                .map(String::from)
        }) {
            return Some((uri, field("Signed-By")));
        }
    }
    // One-line entries: deb [options] uri suite components...
    for line in text.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("deb ") else {
            continue;
        };
        let (options, rest) = match rest.trim_start().strip_prefix('[') {
            Some(r) => r.split_once(']').unwrap_or(("", r)),
            None => ("", rest),
        };
        let keyring = options
            .split_whitespace()
            .find_map(|o| o.strip_prefix("signed-by="))
            .map(String::from);
        if let Some(uri) = rest.split_whitespace().next().filter(|u| is_archive(u)) {
            return Some((uri.to_string(), keyring));
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use super::debian_source;

    #[test]
    fn the_debian_archive_is_found_in_both_source_formats() {
        let deb822 = "Types: deb\n# a comment\nURIs: http://deb.debian.org/debian\nSuites: \
                      bookworm\nComponents: main\nSigned-By: /k.gpg\n\nTypes: deb\nURIs: \
                      http://deb.debian.org/debian-security\nSuites: bookworm-security\n";
        assert_eq!(
            debian_source(deb822),
            Some(("http://deb.debian.org/debian".into(), Some("/k.gpg".into())))
        );
        let security_first = "Types: deb\nURIs: http://deb.debian.org/debian-security\n\n\
                              Types: deb-src\nURIs: http://m.example/debian\n\nTypes: deb\n\
                              URIs: http://m.example/debian/\n";
        assert_eq!(
            debian_source(security_first),
            Some(("http://m.example/debian/".into(), None))
        );
        let one_line = "# x\ndeb-src http://a/debian sid main\n\
                        deb [arch=amd64 signed-by=/s.gpg] http://a/debian bookworm main\n";
        assert_eq!(
            debian_source(one_line),
            Some(("http://a/debian".into(), Some("/s.gpg".into())))
        );
        assert_eq!(debian_source("deb http://a/ubuntu noble main\n"), None);
    }
}
