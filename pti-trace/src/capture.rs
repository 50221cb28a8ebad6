//! Capture control on pti-trace's side: the options' values checked and turned into the
//! environment the collectors read (see the collector's `capture` module), and the toggle
//! signal passed on.
//!
//! With `--toggle-signal`, pti-trace makes `capture/` in its reports directory, where each traced
//! process that installed the handler leaves a file named by its process ID, holding its start
//! time. pti-trace's handler of the signal (not one the kernel sent: a terminal's SIGWINCH at a
//! resize) wakes a thread of its own, which counts the toggle in `capture/toggles` (renamed into
//! place, before any process is signalled) and sends the signal to every process still
//! registered. A collector that gets the signal from pti-trace (`PTI_TRACE_PID`) takes the state
//! the count gives, so a toggle that reaches a process twice, or a process started later, ends
//! where the run stands.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal number `text` names, as `--toggle-signal` takes it (`pti_trace_options`, which
/// the collector's check shares).
pub(crate) fn signal(text: &str) -> Result<i32, String> {
    pti_trace_options::toggle_signal(text).map_err(|e| format!("--toggle-signal: {e}"))
}

/// Seconds as given on the command line (`1.5`), in whole milliseconds.
pub(crate) fn millis(option: &str, text: &str) -> Result<String, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..1e9).contains(&s) => Ok(((s * 1000.0).round() as u64).to_string()),
        _ => Err(format!("{option}: {text:?} is not a number of seconds")),
    }
}

/// The directory of the run's capture state, made in the reports directory `reports`.
pub(crate) fn prepare(reports: &Path) -> std::io::Result<PathBuf> {
    let dir = reports.join("capture");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The write end of the pipe pti-trace's handler writes to (-1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// pti-trace's handler of the toggle signal: one byte to the forwarding thread, unless the
/// kernel sent the signal (a terminal's SIGWINCH at a resize). Only async-signal-safe work.
extern "C" fn on_signal(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let fd = WAKE.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    if fd < 0 || info.is_null() || unsafe { (*info).si_code } == libc::SI_KERNEL {
        return;
    }
    // SAFETY: this thread's errno, saved and restored around a write to a non-blocking pipe.
    unsafe {
        let saved = *libc::__errno_location();
        libc::write(fd, [1u8].as_ptr().cast(), 1);
        *libc::__errno_location() = saved;
    }
}

/// Handles `signal` in pti-trace and starts the thread that passes it on. (Not a blocked signal
/// and `sigwait`: the program would inherit the mask.)
pub(crate) fn forward(signal: i32, dir: PathBuf) {
    let mut fds = [-1i32; 2];
    // SAFETY: a writable pair of descriptors; close-on-exec, so the program does not get them.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        eprintln!("pti-trace: cannot make a pipe for signal {signal}: it will not toggle");
        return;
    }
    WAKE.store(fds[1], Ordering::Relaxed);
    let read_end = fds[0];
    let spawned = std::thread::Builder::new()
        .name("toggle".into())
        .spawn(move || {
            let mut toggles = 0u64;
            loop {
                let mut poll = libc::pollfd {
                    fd: read_end,
                    events: libc::POLLIN,
                    revents: 0,
                };
                let mut bytes = [0u8; 64];
                // SAFETY: one pollfd and a local buffer, on the pipe's read end this thread alone
                // reads.
                let n = unsafe {
                    if libc::poll(&mut poll, 1, -1) <= 0 {
                        continue;
                    }
                    libc::read(read_end, bytes.as_mut_ptr().cast(), bytes.len())
                };
                for _ in 0..n.max(0) {
                    toggles += 1;
                    // The count first, whole (renamed into place): a process that reads it
                    // while starting, or at the signal, finds the new count or the old one.
                    let staged = dir.join("toggles.new");
                    let counted = std::fs::write(&staged, toggles.to_string())
                        .and_then(|()| std::fs::rename(&staged, dir.join("toggles")));
                    if let Err(e) = counted {
                        eprintln!("pti-trace: cannot count toggle {toggles} ({e})");
                        continue;
                    }
                    let sent = send_to_all(&dir, signal);
                    // One write, so that it does not interleave with the collectors' lines.
                    let line = format!(
                        "pti-trace: toggle {toggles} (signal {signal}) sent to {sent} process{}\n",
                        if sent == 1 { "" } else { "es" }
                    );
                    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("pti-trace: cannot wait for signal {signal} ({e}): it will not toggle");
        return;
    }
    // SAFETY: a zeroed sigaction with a handler of the SA_SIGINFO signature; SA_RESTART so that
    // the wait for the program resumes. exec resets a handled signal, so the program starts with
    // the default action until its collector installs its own handler.
    let installed = unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as usize;
        action.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, core::ptr::null_mut()) == 0
    };
    if !installed {
        eprintln!("pti-trace: cannot handle signal {signal}: it will not toggle");
    }
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), which tells it
/// from a later process that got the same ID.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Sends `signal` to every process registered in `dir` that is still the process that
/// registered (same start time); forgets the others. Returns how many got it.
fn send_to_all(dir: &Path, signal: i32) -> usize {
    let mut sent = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let registered = std::fs::read_to_string(entry.path())
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok());
        if registered.is_none() || registered != start_time(pid) {
            let _ = std::fs::remove_file(entry.path());
            continue;
        }
        // SAFETY: a signal to the process that registered this file (same ID, same start time).
        if unsafe { libc::kill(pid, signal) } == 0 {
            sent += 1;
        } else {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_and_seconds_are_checked() {
        assert_eq!(signal("USR2"), Ok(libc::SIGUSR2));
        assert_eq!(signal("SIGusr1"), Ok(libc::SIGUSR1));
        assert_eq!(signal("RTMIN+2"), Ok(libc::SIGRTMIN() + 2));
        assert_eq!(signal(&libc::SIGUSR2.to_string()), Ok(libc::SIGUSR2));
        assert!(signal("INT").is_err());
        assert!(signal("9").is_err());
        assert!(signal("KILL").is_err());
        assert_eq!(millis("--delay", "1.5").as_deref(), Ok("1500"));
        assert_eq!(millis("--delay", "0").as_deref(), Ok("0"));
        assert!(millis("--delay", "-1").is_err());
        assert!(millis("--delay", "soon").is_err());
    }
}
