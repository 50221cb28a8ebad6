//! Where the collector's words go (summaries, warnings): never into the traced program's own
//! stdout or stderr, which the program may capture or parse.
//!
//! `pti-trace` duplicates its own stderr onto a high descriptor that the program and its
//! children inherit, and names it with the file's identity (`PTI_TRACE_REPORT_FD=fd:dev:ino`).
//! The collector writes there while that descriptor still is that file; a process where it is
//! not (closed, or reused for something else: Python's `subprocess` closes inherited
//! descriptors) appends to `<pid>.txt` in pti-trace's private reports directory
//! (`PTI_TRACE_REPORT_DIR`), which pti-trace prints on its stderr and removes when the program
//! has ended; without that directory (pti-trace already gone), to `pti-trace.<pid>.report.txt`
//! beside its timeline (or in the working directory), and only if that fails too, to its stderr.
//! Where pti-trace could make no descriptor (a `ulimit -n` below 901), the reports directory.
//! Without the variables (the collector preloaded by hand), stderr.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The reporting descriptor and the identity it must have.
fn inherited() -> Option<(i32, u64, u64)> {
    let value = std::env::var("PTI_TRACE_REPORT_FD").ok()?;
    let mut parts = value.split(':').map(str::parse::<u64>);
    let (Some(Ok(fd)), Some(Ok(dev)), Some(Ok(ino))) = (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    Some((i32::try_from(fd).ok()?, dev, ino))
}

/// Whether `fd` is open on the file `dev`/`ino`.
fn is_file(fd: i32, dev: u64, ino: u64) -> bool {
    let mut st = core::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: a descriptor number (fstat fails cleanly on a closed one) and a writable stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstat succeeded and filled it.
    let st = unsafe { st.assume_init() };
    st.st_dev == dev && st.st_ino == ino
}

/// The file a process writes its report to when the inherited descriptor is gone: in
/// pti-trace's reports directory while it is there (pti-trace prints it at the end), else beside
/// the timeline.
fn fallback_file() -> PathBuf {
    let pid = std::process::id();
    if let Some(dir) = std::env::var_os("PTI_TRACE_REPORT_DIR").map(PathBuf::from)
        && dir.is_dir()
    {
        return dir.join(format!("{pid}.txt"));
    }
    let name = format!("pti-trace.{pid}.report.txt");
    crate::OPTIONS
        .get()
        .and_then(|o| o.output_path(std::process::id()))
        .and_then(|p| p.parent().map(|d| d.join(&name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Where this text goes: a descriptor, or a file (None: the file could not be written either;
/// then stderr).
pub(crate) fn target() -> Result<i32, PathBuf> {
    match inherited() {
        // pti-trace could not make the descriptor (`ulimit -n` below 901): its reports
        // directory, not the program's own stderr.
        None if std::env::var_os("PTI_TRACE_REPORT_DIR").is_some() => Err(fallback_file()),
        None => Ok(2),
        Some((fd, dev, ino)) if is_file(fd, dev, ino) => Ok(fd),
        Some(_) => Err(fallback_file()),
    }
}

/// Appends `text` to `path` (created 0600; never through a link, never a FIFO or another user's
/// file: `pti_files::append`); false if it cannot.
pub(crate) fn append(path: &Path, text: &str) -> bool {
    pti_files::append(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .is_ok()
}
