//! Output files created as a careful Unix tool creates them, for pti-trace, its collector and
//! libpti's log (`PTI_LOG`):
//!
//! - **never through a link**: the last component of the path is opened with `O_NOFOLLOW`, so a
//!   symbolic link planted where the output goes is refused, not followed;
//! - **never blocking**: opened with `O_NONBLOCK` and checked with `fstat` before anything is
//!   written: a FIFO, a device or a directory is refused (a profiled program must never hang in
//!   its first traced call because someone put a FIFO where its trace goes); writing to a pipe is
//!   for the caller to ask for explicitly (pti-trace's `-o -`), not through this module;
//! - **private**: created with mode 0600 (traces hold command lines and kernel names), as `perf
//!   record` creates `perf.data`;
//! - **nothing overwritten unasked**: a file already there is kept as `<path>.old` (as perf does),
//!   or, when it was written during this run (by another process sharing the output, or by the
//!   image this process `exec`'d from), left alone while this process writes `<stem>.<n><ext>`;
//!   replacing it is the user's explicit choice ([`IfExists::Replace`]), and only for a regular
//!   file the user owns;
//! - **inputs never written**: [`same_file`] says whether an output would be one of the inputs.
//!
//! What this crate may touch: the file system, through `open(2)`, `fstat(2)`, `rename(2)`. It
//! holds no state.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What to do when the output's path names a file already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfExists {
    /// Keep that file as `<path>.old` (replacing an older `.old`) and create the output, as `perf
    /// record` does; but if it was last written at or after `run_started` (by this run), leave
    /// it and create `<stem>.<n><ext>` with the first free `n` instead.
    KeepOld {
        /// When the run began; `None`: every file there is older.
        run_started: Option<SystemTime>,
    },
    /// Fail with [`io::ErrorKind::AlreadyExists`].
    Refuse,
    /// Truncate it: only a regular file owned by the user (the user forced it).
    Replace,
}

/// An output file, created.
#[derive(Debug)]
pub struct Created {
    /// The open file, positioned at its start.
    pub file: File,
    /// Where it was created: the path asked for, or the fresh name [`IfExists::KeepOld`] chose.
    pub path: PathBuf,
    /// Where the file that was there before went (`<path>.old`), if anywhere.
    pub kept_as: Option<PathBuf>,
}

/// Creates the output file `path` (mode 0600), never through a link, never blocking, never a
/// FIFO or device; `if_exists` says what happens to a file already there.
pub fn create(path: &Path, if_exists: IfExists) -> io::Result<Created> {
    match open_new(path) {
        Ok(file) => {
            return Ok(Created {
                file,
                path: path.to_path_buf(),
                kept_as: None,
            });
        }
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {}
    }
    // Something is there: what is it (the link itself, not what it points to)?
    let there = std::fs::symlink_metadata(path)?;
    if there.file_type().is_symlink() {
        return Err(refused(path, "is a symbolic link, which is not followed"));
    }
    if !there.file_type().is_file() {
        return Err(refused(path, NOT_REGULAR));
    }
    match if_exists {
        IfExists::Refuse => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", path.display()),
        )),
        IfExists::Replace => replace(path),
        IfExists::KeepOld { run_started } => {
            let this_run = run_started
                .is_some_and(|started| there.modified().is_ok_and(|written| written >= started));
            if this_run {
                return create_fresh_name(path);
            }
            let old = with_suffix(path, ".old");
            std::fs::rename(path, &old)?;
            let file = open_new(path)?;
            Ok(Created {
                file,
                path: path.to_path_buf(),
                kept_as: Some(old),
            })
        }
    }
}

/// Opens `path` to append to it, creating it (mode 0600) if needed: never through a link, never
/// blocking, never anything but a regular file the user owns. For a log that several processes
/// share.
pub fn append(path: &Path) -> io::Result<File> {
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT;
    let file = open(path, flags)?;
    check_regular_and_ours(&file, path)?;
    Ok(file)
}

/// Whether `a` and `b` name the same existing file (same device and inode): an output that is
/// one of the inputs. `false` when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The file name `pattern` with each of `with`'s escapes (`("%p", "1234")`) replaced by its
/// value, left to right; every other byte kept as it is (a name need not be UTF-8). The
/// patterns of `-o`, `--csv` and `PTI_LOG`.
pub fn expand(pattern: &std::ffi::OsStr, with: &[(&str, &str)]) -> PathBuf {
    let bytes = pattern.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        match with
            .iter()
            .find(|(escape, _)| bytes[i..].starts_with(escape.as_bytes()))
        {
            Some((escape, value)) => {
                out.extend_from_slice(value.as_bytes());
                i += escape.len();
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// `path` with `suffix` appended to its file name (`trace.pftrace` -> `trace.pftrace.old`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Creates `<stem>.<n><ext>` beside `path`, the first `n` from 1 that is free.
fn create_fresh_name(path: &Path) -> io::Result<Created> {
    let stem = path.file_stem().unwrap_or_default().to_os_string();
    let ext = path.extension().map(|e| e.to_os_string());
    for n in 1..10_000u32 {
        let mut name = stem.clone();
        name.push(format!(".{n}"));
        if let Some(ext) = &ext {
            name.push(".");
            name.push(ext);
        }
        let candidate = path.with_file_name(name);
        match open_new(&candidate) {
            Ok(file) => {
                return Ok(Created {
                    file,
                    path: candidate,
                    kept_as: None,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(refused(path, "has 9,999 siblings of this run already"))
}

/// Truncates the regular file of the user's at `path`.
fn replace(path: &Path) -> io::Result<Created> {
    let file = open(path, libc::O_WRONLY)?;
    check_regular_and_ours(&file, path)?;
    file.set_len(0)?;
    Ok(Created {
        file,
        path: path.to_path_buf(),
        kept_as: None,
    })
}

/// Creates `path`, failing with `AlreadyExists` if anything is there (a link included).
fn open_new(path: &Path) -> io::Result<File> {
    let file = open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)?;
    check_regular_and_ours(&file, path)?;
    Ok(file)
}

/// `open(2)` with `flags`, plus never following a final link, never blocking and close-on-exec,
/// mode 0600 for a file it creates; then back to blocking writes.
fn open(path: &Path, flags: libc::c_int) -> io::Result<File> {
    let c_path =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| refused(path, "holds a NUL byte"))?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call; the mode argument is
    // read only with O_CREAT and is a plain integer.
    let fd = unsafe { libc::open(c_path.as_ptr(), flags, 0o600 as libc::c_uint) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        // O_NOFOLLOW on a link: ELOOP; say why.
        if e.raw_os_error() == Some(libc::ELOOP) {
            return Err(refused(path, "is a symbolic link, which is not followed"));
        }
        // A FIFO nobody reads (or a device without one) answers ENXIO to a non-blocking open.
        if e.raw_os_error() == Some(libc::ENXIO) {
            return Err(refused(path, NOT_REGULAR));
        }
        return Err(e);
    }
    // SAFETY: `fd` was just opened by this function and is owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    // SAFETY: F_GETFL/F_SETFL on a descriptor we own; no pointer arguments.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Refuses what is not a regular file, or not the user's.
fn check_regular_and_ours(file: &File, path: &Path) -> io::Result<()> {
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(refused(path, NOT_REGULAR));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(refused(path, "belongs to another user"));
    }
    Ok(())
}

const NOT_REGULAR: &str = "is not a regular file (a FIFO, a device or a directory): not written, \
                           so that nothing blocks on it";

fn refused(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} {why}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pti-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_new_file_is_private() {
        let d = dir("new");
        let c = create(&d.join("t.pftrace"), IfExists::Refuse).unwrap();
        assert_eq!(
            c.file.metadata().unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(c.path, d.join("t.pftrace"));
    }

    #[test]
    fn a_link_is_never_followed() {
        let d = dir("link");
        std::fs::write(d.join("victim"), "keep").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), d.join("out")).unwrap();
        for how in [
            IfExists::Refuse,
            IfExists::Replace,
            IfExists::KeepOld { run_started: None },
        ] {
            let e = create(&d.join("out"), how).unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{how:?}: {e}");
        }
        let e = append(&d.join("out")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(d.join("victim")).unwrap(), "keep");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = dir("fifo");
        let fifo = d.join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = create(&fifo, IfExists::Replace).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = append(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn an_older_file_is_kept_as_old_and_one_of_this_run_left_alone() {
        let d = dir("old");
        let out = d.join("t.pftrace");
        std::fs::write(&out, "before").unwrap();
        let c = create(&out, IfExists::KeepOld { run_started: None }).unwrap();
        assert_eq!(
            c.kept_as.as_deref(),
            Some(d.join("t.pftrace.old").as_path())
        );
        assert_eq!(
            std::fs::read_to_string(d.join("t.pftrace.old")).unwrap(),
            "before"
        );
        drop(c);
        std::fs::write(&out, "this run").unwrap();
        let started = SystemTime::now() - std::time::Duration::from_secs(60);
        let mut c = create(
            &out,
            IfExists::KeepOld {
                run_started: Some(started),
            },
        )
        .unwrap();
        assert_eq!(c.path, d.join("t.1.pftrace"));
        c.file.write_all(b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "this run");
        let c = create(
            &out,
            IfExists::KeepOld {
                run_started: Some(started),
            },
        )
        .unwrap();
        assert_eq!(c.path, d.join("t.2.pftrace"));
    }

    #[test]
    fn refuse_and_replace() {
        let d = dir("refuse");
        let out = d.join("t.csv");
        std::fs::write(&out, "before").unwrap();
        let e = create(&out, IfExists::Refuse).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let mut c = create(&out, IfExists::Replace).unwrap();
        c.file.write_all(b"after").unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "after");
    }

    #[test]
    fn patterns_expand_byte_for_byte() {
        use std::ffi::OsStr;
        let name = OsStr::from_bytes(b"t.%p.%r\xff%%p.json");
        let with = [("%p", "42"), ("%r", "norank")];
        assert_eq!(
            expand(name, &with).as_os_str().as_bytes(),
            b"t.42.norank\xff%42.json"
        );
        assert_eq!(expand(OsStr::new("plain"), &with), PathBuf::from("plain"));
    }

    #[test]
    fn same_file_sees_through_names() {
        let d = dir("same");
        std::fs::write(d.join("a"), "").unwrap();
        assert!(same_file(&d.join("a"), &d.join(".").join("a")));
        assert!(!same_file(&d.join("a"), &d.join("b")));
    }
}
