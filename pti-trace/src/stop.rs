//! What pti-trace does when it is told to stop while the program runs (issue 36, finding 8):
//! as `perf record` does with its workload, it ends the program (SIGTERM) and then, once the
//! program is gone, finishes its reports and exits with the program's status.
//!
//! - **SIGTERM, SIGHUP** to pti-trace: the program gets SIGTERM (again for each one).
//! - **SIGINT**: the terminal's Ctrl-C (sent by the kernel, `si_code` `SI_KERNEL`) reached the
//!   program too, which decides what it does: not passed on, so it is never delivered twice. A
//!   SIGINT sent to pti-trace alone (`kill`) ends the program as SIGTERM does.
//! - **SIGQUIT** (the terminal's Ctrl-\\): ignored; the program got it.
//!
//! Before this, SIGTERM ended pti-trace and left the program running, still tracing, and the
//! reports directory behind. What this module may touch: the dispositions of those four signals
//! in pti-trace, and `kill(2)` of the program's process.

use std::sync::atomic::{AtomicI32, Ordering};

/// The program's process ID, for the handler.
static PROGRAM: AtomicI32 = AtomicI32::new(0);

/// From now on, SIGTERM, SIGHUP and a SIGINT that did not come from the terminal end `program`
/// (SIGTERM), and the terminal's SIGINT and SIGQUIT are left to it.
pub(crate) fn pass_on_to(program: i32) {
    PROGRAM.store(program, Ordering::Release);
    // SAFETY: a zeroed sigaction with a handler of the SA_SIGINFO signature, installed for
    // three signals; SIGQUIT set to "ignore" (after the spawn: an ignored disposition would be
    // inherited across exec). SA_RESTART so that pti-trace's wait for the program goes on.
    unsafe {
        let mut action: libc::sigaction = core::mem::zeroed();
        action.sa_sigaction =
            on_stop as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            libc::sigaction(signal, &action, core::ptr::null_mut());
        }
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
}

/// The handler: async-signal-safe (an atomic load and `kill`).
extern "C" fn on_stop(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let program = PROGRAM.load(Ordering::Acquire);
    if program <= 0 {
        return;
    }
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_terminal = unsafe { (*info).si_code } == libc::SI_KERNEL;
    if signal == libc::SIGINT && from_terminal {
        return;
    }
    // SAFETY: kill(2) is async-signal-safe; the program is pti-trace's child, not yet reaped
    // (pti-trace reaps it after this handler can no longer matter).
    unsafe {
        libc::kill(program, libc::SIGTERM);
    }
}

/// The program was reaped: its process ID may be another process's from now on.
pub(crate) fn program_gone() {
    PROGRAM.store(0, Ordering::Release);
}
