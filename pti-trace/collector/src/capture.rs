//! Capture control: which part of the run is recorded. libpti pauses and resumes collection for
//! the whole process (`ptiViewPause`, `ptiViewResume`; views stay enabled, so queues keep their
//! profiling and names stay known); this module decides when, from what pti-trace set:
//!
//! - `PTI_START_PAUSED=1` (`--start-paused`, and `--delay`): libpti itself starts paused;
//! - `PTI_TRACE_DELAY_MS` (`--delay`): resumed that long after the collector was loaded;
//! - `PTI_TRACE_DURATION_MS` (`--duration`): paused again that long after the start of
//!   collection (the end of the delay, or the load);
//! - `PTI_TRACE_TOGGLE_SIGNAL` (`--toggle-signal`): the signal that toggles.
//!
//! The state a process should be in is absolute: what the options give at this time (its
//! *base*), flipped once per toggle pti-trace has counted (`capture/toggles` in pti-trace's
//! reports directory, written before pti-trace signals). Under pti-trace (`PTI_TRACE_PID` set),
//! the signal makes the process re-read that count and take the state, whoever sent it; without
//! pti-trace (the collector preloaded by hand) it toggles; one the kernel sends (a terminal's
//! SIGWINCH at a resize) is ignored. So a process that gets a toggle twice (sent to its process
//! group, and passed on by pti-trace) ends where pti-trace says, and one started after toggles
//! starts where the run stands. The handler only writes a byte to a pipe (all it may do in a
//! signal handler); a thread of the collector reads it and calls libpti.
//!
//! A process registers in `capture/<pid>` (with its start time, so that pti-trace never signals a
//! later process that got the same ID) before it reads the count, and leaves at exit. A child
//! forked without `exec` has neither the thread nor a registration: it keeps the state it had at
//! the fork, and ignores the signal.
//!
//! The program's own ways (ITT's `__itt_pause` and `__itt_resume`, `ptiViewPause`) flip the same
//! switch: they hold until the next timer or signal. Each change this module makes is said on
//! stderr and put on the timeline.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::options::Options;

/// The write end of the pipe the signal handler writes to (-1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// pti-trace's process ID, whose signals mean "take the run's state" (0: none).
static TRACER: AtomicI32 = AtomicI32::new(0);

/// What the handler tells the control thread.
const TOGGLE: u8 = 1;
const SYNC: u8 = 2;

/// The signal handler: one byte to the control thread. Only async-signal-safe work: reads of
/// `info`, an atomic load, write(2), errno kept.
extern "C" fn on_signal(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let fd = WAKE.load(Ordering::Relaxed);
    if fd < 0 || info.is_null() {
        return;
    }
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    if unsafe { (*info).si_code } == libc::SI_KERNEL {
        return;
    }
    // Under pti-trace the count decides, whoever sent the signal: one that reaches a process
    // directly and through pti-trace (sent to its process group) cannot undo itself.
    let byte = if TRACER.load(Ordering::Relaxed) != 0 {
        SYNC
    } else {
        TOGGLE
    };
    // SAFETY: this thread's errno, saved and restored around a write to a non-blocking pipe (a
    // full pipe drops the byte: the ones queued stand for it).
    unsafe {
        let saved = *libc::__errno_location();
        libc::write(fd, [byte].as_ptr().cast(), 1);
        *libc::__errno_location() = saved;
    }
}

/// The directory where pti-trace keeps the toggle count and the processes to signal.
fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PTI_TRACE_REPORT_DIR")?).join("capture");
    dir.is_dir().then_some(dir)
}

/// How many toggles pti-trace has counted (0 without pti-trace).
fn toggles() -> u64 {
    shared_dir()
        .and_then(|d| std::fs::read_to_string(d.join("toggles")).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// This process's start time, in clock ticks since boot (`/proc/self/stat` field 22): with the
/// process ID, what tells it from a later process that reuses the ID.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from the closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
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

/// What the options ask for over time.
#[derive(Clone, Copy)]
struct Plan {
    start_paused: bool,
    resume_at: Option<Instant>,
    pause_at: Option<Instant>,
}

impl Plan {
    fn new(options: &Options, loaded: Instant) -> Plan {
        let resume_at = options.delay.map(|d| loaded + d);
        Plan {
            start_paused: std::env::var_os("PTI_START_PAUSED").is_some_and(|v| v == "1")
                || options.delay.is_some(),
            resume_at,
            pause_at: options.duration.map(|d| resume_at.unwrap_or(loaded) + d),
        }
    }

    /// Whether the options alone want collection paused at `now`.
    fn base(&self, now: Instant) -> bool {
        if self.pause_at.is_some_and(|at| now >= at) {
            return true;
        }
        match self.resume_at {
            Some(at) => now < at,
            None => self.start_paused,
        }
    }

    /// What the run wants at `now`: the base, flipped by each toggle pti-trace counted.
    fn wanted(&self, now: Instant) -> bool {
        self.base(now) ^ (toggles() % 2 == 1)
    }

    /// The next time the base changes after `now`.
    fn next_change(&self, now: Instant) -> Option<Instant> {
        [self.resume_at, self.pause_at]
            .into_iter()
            .flatten()
            .filter(|at| *at > now)
            .min()
    }
}

/// Takes the state the run wants, saying `why`, if the process is not in it.
fn sync(plan: &Plan, why: &str) {
    let wanted = plan.wanted(Instant::now());
    if libpti::view::is_paused().is_ok_and(|now| now != wanted) {
        set(wanted, why);
    }
}

/// Sets up capture control as `options` ask, once the views are enabled.
pub(crate) fn start(options: &Options) {
    let loaded = Instant::now();
    let plan = Plan::new(options, loaded);
    // Registered (when the signal toggles) before the run's state is read: a toggle counted
    // after the read reaches this process.
    let signal = options.toggle_signal;
    let wake = signal.and_then(install_handler);
    sync(&plan, "as the run stands");
    if plan.next_change(loaded).is_none() && wake.is_none() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("pti-trace-capture".into())
        .spawn(move || control(plan, wake, signal));
    if let Err(e) = spawned {
        crate::say(&format!(
            "pti-trace: process {}: no capture-control thread ({e}): --delay, --duration and \
             the toggle signal do nothing here\n",
            std::process::id()
        ));
    }
}

/// Installs the toggle handler of `signal` and registers the process; returns the pipe's read
/// end.
fn install_handler(signal: i32) -> Option<i32> {
    let mut fds = [-1i32; 2];
    // SAFETY: a writable pair of descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    let tracer = std::env::var("PTI_TRACE_PID")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    TRACER.store(tracer, Ordering::Relaxed);
    WAKE.store(fds[1], Ordering::Relaxed);
    // SAFETY: a zeroed sigaction filled with a handler of the SA_SIGINFO signature; SA_RESTART
    // so that the program's interrupted calls resume.
    let installed = unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction = handler_address();
        action.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
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
    // SAFETY: a function with the signature pthread_atfork expects.
    unsafe { libc::pthread_atfork(None, None, Some(forget_in_child)) };
    let pid = std::process::id();
    if let (Some(dir), Some(started)) = (shared_dir(), start_time(pid)) {
        let _ = std::fs::write(dir.join(pid.to_string()), started.to_string());
    }
    Some(fds[0])
}

fn handler_address() -> usize {
    on_signal as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize
}

/// In a child forked without `exec`: the signal does nothing (the pipe is the parent's, and the
/// child has no control thread).
extern "C" fn forget_in_child() {
    WAKE.store(-1, Ordering::Relaxed);
}

/// At exit: the process leaves pti-trace's list.
pub(crate) fn unregister() {
    if WAKE.load(Ordering::Relaxed) < 0 {
        return;
    }
    if let Some(dir) = shared_dir() {
        let _ = std::fs::remove_file(dir.join(std::process::id().to_string()));
    }
}

/// The control thread: takes the run's state when the options' timers change it and at each
/// signal from pti-trace, and toggles at each signal from anyone else.
fn control(plan: Plan, wake: Option<i32>, signal: Option<i32>) {
    if let Some(signal) = signal {
        // At least this thread takes the signal, whatever mask the program's threads have.
        // SAFETY: a local signal set and this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = core::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
        }
    }
    let mut replaced = Replaced(signal, false);
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        // A timer passed since the last look: take the state the run wants now.
        if let Some(at) = plan.next_change(last).filter(|at| *at <= now) {
            let why = if Some(at) == plan.pause_at {
                "--duration"
            } else {
                "--delay"
            };
            sync(&plan, why);
        }
        last = now;
        let next = plan.next_change(now);
        let Some(fd) = wake else {
            let Some(at) = next else {
                return;
            };
            std::thread::sleep(at.saturating_duration_since(now) + Duration::from_millis(1));
            continue;
        };
        // With a signal, a look each second whether the handler is still ours.
        let timeout = next.map_or(1000, |at| {
            (at.saturating_duration_since(now).as_millis() as i32 + 1).min(1000)
        });
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
        for &byte in &bytes[..n.max(0) as usize] {
            if byte == SYNC {
                sync(&plan, "signal");
            } else {
                let paused = libpti::view::is_paused().unwrap_or(false);
                set(!paused, "signal to this process only");
            }
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
        if current != handler_address() {
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
