//! Capture control: which part of the run is recorded. libpti pauses and resumes collection for
//! the whole process (`ptiViewPause`, `ptiViewResume`; views stay enabled, so queues keep their
//! profiling and names stay known); this module decides when, from what pti-trace set:
//!
//! - `PTI_START_PAUSED=1` (`--start-paused`): libpti itself starts paused;
//! - `PTI_TRACE_DELAY_MS` (`--delay`): paused from the start, resumed that long after the
//!   collector was loaded;
//! - `PTI_TRACE_DURATION_MS` (`--duration`): paused again that long after the start of
//!   collection (the end of the delay, or the load);
//! - `PTI_TRACE_TOGGLE_SIGNAL` (`--toggle-signal`): each delivery of that signal toggles. The
//!   handler only writes a byte to a pipe (all it may do in a signal handler); a thread of the
//!   collector reads it and calls libpti. pti-trace, which gets the signal too, passes it on to
//!   every traced process that registered in its reports directory (`capture/<pid>`) and keeps
//!   the state there (`capture/state`), which a process started later adopts.
//!
//! The program's own ways (ITT's `__itt_pause` and `__itt_resume`, `ptiViewPause`) flip the same
//! switch: the last call wins. Each change is said on pti-trace's stderr.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::options::Options;

/// The write end of the pipe the signal handler writes to (-1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// The signal handler: one byte to the control thread. Only async-signal-safe calls.
extern "C" fn on_signal(_: libc::c_int) {
    let fd = WAKE.load(Ordering::Relaxed);
    if fd >= 0 {
        let saved = errno();
        // SAFETY: write(2) on a non-blocking pipe is async-signal-safe; a full pipe drops the
        // byte, and the toggles already queued stand for it (pressed twice: back where it was).
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
        set_errno(saved);
    }
}

fn errno() -> i32 {
    // SAFETY: reading this thread's errno.
    unsafe { *libc::__errno_location() }
}

fn set_errno(value: i32) {
    // SAFETY: writing this thread's errno.
    unsafe { *libc::__errno_location() = value };
}

/// The toggle signal of this process, from the environment.
fn options_signal() -> Option<i32> {
    std::env::var("PTI_TRACE_TOGGLE_SIGNAL").ok()?.parse().ok()
}

/// The directory where pti-trace keeps the capture state and the processes to signal.
pub(crate) fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PTI_TRACE_REPORT_DIR")?).join("capture");
    dir.is_dir().then_some(dir)
}

/// Says a change on pti-trace's stderr and puts it on the timeline at `at`.
fn say(paused: bool, why: &str, at: u64) {
    let text = format!(
        "collection {} ({why})",
        if paused { "paused" } else { "resumed" }
    );
    crate::collect::capture_changed(at, &text);
    crate::say(&format!(
        "pti-trace: process {}: {text}\n",
        std::process::id()
    ));
}

/// Pauses or resumes, saying why.
///
/// The change is placed on the timeline so that every call recorded lies between a resume and
/// the next pause: a resume at the time just before it took effect, a pause just after.
fn set(paused: bool, why: &str) {
    let before = libpti::view::timestamp();
    let result = if paused {
        libpti::view::pause()
    } else {
        libpti::view::resume()
    };
    crate::check(
        if paused {
            "ptiViewPause"
        } else {
            "ptiViewResume"
        },
        result,
    );
    let at = if paused {
        libpti::view::timestamp()
    } else {
        before
    };
    say(paused, why, at);
}

/// Sets up capture control as `options` ask, once the views are enabled.
pub(crate) fn start(options: &Options) {
    let loaded = Instant::now();
    // A process started after a toggle takes the run's state.
    if let Some(state) = shared_dir().and_then(|d| std::fs::read_to_string(d.join("state")).ok()) {
        let paused = state.trim() == "paused";
        if libpti::view::is_paused().is_ok_and(|now| now != paused) {
            set(paused, "as the run stands");
        }
    }
    if options.delay.is_some() && !libpti::view::is_paused().unwrap_or(true) {
        crate::check("ptiViewPause", libpti::view::pause());
    }
    let wake = options.toggle_signal.and_then(install_handler);
    if options.delay.is_none() && options.duration.is_none() && wake.is_none() {
        return;
    }
    let (delay, duration) = (options.delay, options.duration);
    let spawned = std::thread::Builder::new()
        .name("pti-trace-capture".into())
        .spawn(move || control(loaded, delay, duration, wake));
    if let Err(e) = spawned {
        crate::say(&format!(
            "pti-trace: process {}: no capture-control thread ({e}): --delay, --duration and \
             the toggle signal do nothing here\n",
            std::process::id()
        ));
    }
}

/// Installs the toggle handler of `signal`; returns the pipe's read end.
fn install_handler(signal: i32) -> Option<i32> {
    let mut fds = [-1i32; 2];
    // SAFETY: a writable pair of descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    WAKE.store(fds[1], Ordering::Relaxed);
    // SAFETY: a zeroed sigaction filled with a handler of the right signature; SA_RESTART so
    // that the program's interrupted calls resume.
    let installed = unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, core::ptr::null_mut()) == 0
    };
    if !installed {
        crate::say(&format!(
            "pti-trace: process {}: cannot handle signal {signal}\n",
            std::process::id()
        ));
        return None;
    }
    if let Some(dir) = shared_dir() {
        let _ = std::fs::write(dir.join(std::process::id().to_string()), b"");
    }
    Some(fds[0])
}

/// The control thread: resumes at the end of the delay, pauses at the end of the duration, and
/// toggles at each signal.
fn control(
    loaded: Instant,
    delay: Option<Duration>,
    duration: Option<Duration>,
    wake: Option<i32>,
) {
    if let Some(signal) = options_signal() {
        // At least this thread takes the signal, whatever mask the program's threads have.
        // SAFETY: a local signal set and this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = core::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
        }
    }
    let mut replaced = Replaced(options_signal(), false);
    let resume_at = delay.map(|d| loaded + d);
    let pause_at = duration.map(|d| resume_at.unwrap_or(loaded) + d);
    let mut timers: Vec<(Instant, bool, &str)> = Vec::new();
    if let Some(at) = resume_at {
        timers.push((at, false, "--delay"));
    }
    if let Some(at) = pause_at {
        timers.push((at, true, "--duration"));
    }
    loop {
        let now = Instant::now();
        while let Some(&(at, paused, why)) = timers.first() {
            if at > now {
                break;
            }
            timers.remove(0);
            set(paused, why);
        }
        // With a signal, a look each second whether the handler is still ours.
        let timeout = timers.first().map_or(1000, |(at, _, _)| {
            (at.saturating_duration_since(now).as_millis() as i32 + 1).min(1000)
        });
        let Some(fd) = wake else {
            if timers.is_empty() {
                return;
            }
            std::thread::sleep(timers[0].0.saturating_duration_since(now));
            continue;
        };
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on the pipe's read end, which this thread alone reads.
        let ready = unsafe { libc::poll(&mut poll, 1, timeout) };
        if ready <= 0 {
            replaced.check();
            continue;
        }
        let mut bytes = [0u8; 64];
        // SAFETY: reading into a local buffer from the non-blocking read end.
        let n = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), bytes.len()) };
        for _ in 0..n.max(0) {
            let paused = libpti::view::is_paused().unwrap_or(false);
            set(!paused, "signal");
        }
    }
}

/// Whether the toggle signal's handler is still the collector's (the signal, and whether that was
/// already said): a runtime loaded later may take the signal over (LLVM, inside PoCL and Intel's
/// CPU runtime, takes USR1 and USR2), and then toggles never arrive.
struct Replaced(Option<i32>, bool);

impl Replaced {
    /// Says once that the handler was replaced.
    fn check(&mut self) {
        let (Some(signal), false) = (self.0, self.1) else {
            return;
        };
        // SAFETY: queries the disposition of `signal` into a zeroed sigaction; changes nothing.
        let current = unsafe {
            let mut action: libc::sigaction = core::mem::zeroed();
            libc::sigaction(signal, core::ptr::null(), &mut action);
            action.sa_sigaction
        };
        if current != on_signal as extern "C" fn(libc::c_int) as usize {
            self.1 = true;
            crate::say(&format!(
                "pti-trace: process {}: signal {signal} was taken over by the program or a \
                 runtime: it no longer toggles collection here (LLVM-based runtimes take USR1 \
                 and USR2; WINCH or a real-time signal is safer)\n",
                std::process::id()
            ));
        }
    }
}
