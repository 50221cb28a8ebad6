//! Where the traced processes' reports (summaries, warnings) reach pti-trace's stderr, and the
//! count of the processes that recorded nothing.
//!
//! Two ways, both set up in the program's environment before it starts:
//! - a descriptor: pti-trace's stderr duplicated onto a descriptor from 900 up, inherited,
//!   named with its file's identity (`PTI_TRACE_REPORT_FD=fd:dev:ino`); a collector writes there
//!   while that descriptor still is that file;
//! - a private directory (`PTI_TRACE_REPORT_DIR`, mode 0700 under the temporary directory): a
//!   process whose descriptor is gone (Python's `subprocess` closes inherited descriptors)
//!   writes its report there as `<pid>.txt`, and processes that recorded nothing add a line to
//!   its `quiet` list. When the program has ended, pti-trace prints those reports on its stderr,
//!   counts the quiet ones in one line, and removes the directory: nothing is left behind.

use std::path::{Path, PathBuf};

/// pti-trace's stderr, duplicated onto a descriptor from 900 up that the program inherits (no
/// close-on-exec), as `fd:dev:ino` (see the collector's `report`).
pub(crate) fn descriptor() -> Option<String> {
    // SAFETY: duplicating fd 2 onto the lowest free descriptor from 900 up.
    let fd = unsafe { libc::fcntl(2, libc::F_DUPFD, 900) };
    if fd < 0 {
        return None;
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: a descriptor just made and a writable stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded and filled it.
    let st = unsafe { st.assume_init() };
    Some(format!("{fd}:{}:{}", st.st_dev, st.st_ino))
}

/// The reports' directory of this pti-trace: made empty and private to the user.
pub(crate) fn directory() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let dir = std::env::temp_dir().join(format!("pti-trace.{}.reports", std::process::id()));
    // A directory of a finished pti-trace that had this process ID and was killed.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// The list of processes that recorded nothing, in `dir`.
pub(crate) fn quiet_list(dir: &Path) -> PathBuf {
    dir.join("quiet")
}

/// Prints the reports written to `dir` (in the order they were written), says in one line how
/// many processes recorded nothing, and removes the directory.
pub(crate) fn gather(dir: &Path) {
    let mut reports: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            let at = p.metadata().and_then(|m| m.modified());
            (at.unwrap_or(std::time::UNIX_EPOCH), p)
        })
        .collect();
    reports.sort();
    for (_, path) in &reports {
        if let Ok(text) = std::fs::read_to_string(path) {
            eprint!("{text}");
        }
    }
    let quiet = std::fs::read_to_string(quiet_list(dir)).unwrap_or_default();
    let _ = std::fs::remove_dir_all(dir);
    if let Some(line) = quiet_line(&quiet) {
        eprintln!("{line}");
    }
}

/// The summary's line for the processes that recorded nothing (`list`: one "<pid> <command>"
/// line each, as the collector notes them), naming their commands: they are mostly helpers the
/// program or its runtime started (PoCL's compiler and linker, a shell), which a reader of a
/// one-program run would not expect. `None` when there were none.
fn quiet_line(list: &str) -> Option<String> {
    let mut commands = std::collections::BTreeMap::<&str, usize>::new();
    for line in list.lines() {
        let command = line.split_once(' ').map_or("?", |(_, c)| c.trim());
        *commands.entry(command).or_default() += 1;
    }
    let quiet: usize = commands.values().sum();
    if quiet == 0 {
        return None;
    }
    let named: Vec<String> = commands
        .iter()
        .map(|(c, n)| {
            if *n == 1 {
                c.to_string()
            } else {
                format!("{c} ×{n}")
            }
        })
        .collect();
    Some(format!(
        "pti-trace: {quiet} process{} recorded no GPU-runtime call or device work ({}: helpers \
         the program or its runtime started, such as a compiler; no summary, no timeline for \
         them)",
        if quiet == 1 { "" } else { "es" },
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::quiet_line;

    #[test]
    fn quiet_processes_are_counted_and_named_by_command() {
        assert_eq!(quiet_line(""), None);
        let line = quiet_line("12 ld\n13 clang\n14 ld\n15\n").unwrap();
        assert!(
            line.starts_with("pti-trace: 4 processes recorded no GPU-runtime call or device work"),
            "{line}"
        );
        assert!(line.contains("(?, clang, ld ×2: helpers"), "{line}");
        let one = quiet_line("7 sh\n").unwrap();
        assert!(
            one.starts_with(
                "pti-trace: 1 process recorded no GPU-runtime call or device work (sh: "
            ),
            "{one}"
        );
    }
}
