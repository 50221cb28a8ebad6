//! The user's log: a file named by the environment variable `PTI_LOG` that receives every
//! critical event as one line and, at exit, the totals of what was lost (which `view::loss`
//! writes through [`line`]).
//!
//! Why: a tool that never subscribes to critical events (every tool written for Intel's View API
//! alone: it cannot) leaves its user no way to learn that records were dropped or that commands
//! got no record. The log reaches the user whatever the tool does, and never through the traced
//! program's own stdout or stderr.
//!
//! `%p` in the name is replaced by the process ID, so each process of a multi-process run (and a
//! forked child) gets a file of its own; without it, processes append to one file, each line in
//! one `write` (`O_APPEND`). A file that cannot be opened is not retried and nothing is said
//! (there is nowhere to say it). Lines look like
//! `libpti[1234] 5678901234 PTI_ERROR_RECORDS_DROPPED: <message>`, the number being the records'
//! clock in nanoseconds.
//!
//! May touch: the environment (read when the file is first needed in a process) and the file.

use core::fmt::{self, Write as _};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::result::ResultCode;
use crate::{clock, thread};

/// The environment variable that names the log file.
const ENV: &str = "PTI_LOG";

/// The process the file was opened for (high 32 bits) and its descriptor (low 32 bits, as i32;
/// [`NONE`] when there is no log). 0 before the first use.
static OPENED: AtomicU64 = AtomicU64::new(0);

/// The descriptor value meaning "no log in this process".
const NONE: i32 = -1;

fn pack(pid: u32, fd: i32) -> u64 {
    (u64::from(pid) << 32) | u64::from(fd as u32)
}

/// Opens the log of process `pid`, or gives [`NONE`]: created 0600, never through a symbolic
/// link, never a FIFO or device (the program must not block in its first traced call), never
/// another user's file (`pti_files::append`). The name is taken as bytes: a name that is not
/// UTF-8 is the file's name as given.
fn open(pid: u32) -> i32 {
    use std::os::fd::IntoRawFd;
    let Some(name) = std::env::var_os(ENV).filter(|n| !n.is_empty()) else {
        return NONE;
    };
    let path = pti_files::expand(&name, &[("%p", &pid.to_string())]);
    match pti_files::append(&path) {
        Ok(file) => file.into_raw_fd(),
        Err(_) => NONE,
    }
}

/// This process's log descriptor, opened the first time (again in a forked child).
fn descriptor() -> Option<i32> {
    let pid = thread::process_id();
    loop {
        let current = OPENED.load(Ordering::Acquire);
        if current != 0 && (current >> 32) as u32 == pid {
            let fd = current as u32 as i32;
            return (fd != NONE).then_some(fd);
        }
        let fd = open(pid);
        match OPENED.compare_exchange(current, pack(pid, fd), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                let inherited = current as u32 as i32;
                if current != 0 && inherited != NONE {
                    // The parent's file, inherited across fork(): this process has its own now.
                    // SAFETY: a descriptor this library opened and no longer uses here.
                    unsafe { libc::close(inherited) };
                }
                return (fd != NONE).then_some(fd);
            }
            Err(_) if fd != NONE => {
                // Another thread opened it first: use that one.
                // SAFETY: the descriptor just opened above, used by nobody.
                unsafe { libc::close(fd) };
            }
            Err(_) => {}
        }
    }
}

/// Writes one line (the newline added) to the log, if there is one.
pub(crate) fn line(args: fmt::Arguments<'_>) {
    let Some(fd) = descriptor() else {
        return;
    };
    let mut text = String::with_capacity(160);
    let _ = writeln!(
        text,
        "libpti[{}] {} {args}",
        thread::process_id(),
        clock::now()
    );
    let bytes = text.as_bytes();
    let mut written = 0;
    while written < bytes.len() {
        // SAFETY: the slice is valid for its length; `fd` is this process's log.
        let n = unsafe { libc::write(fd, bytes[written..].as_ptr().cast(), bytes.len() - written) };
        if n <= 0 {
            return;
        }
        written += n as usize;
    }
}

/// Logs a critical event (`crate::callback::critical` calls it for every event raised).
pub(crate) fn critical(code: ResultCode, message: &fmt::Arguments<'_>) {
    line(format_args!("{}: {message}", code.name().to_string_lossy()));
}
