//! An asymmetric memory barrier: cheap for the many readers, expensive for the rare writer.
//!
//! The unsubscribe protocol is Dekker-shaped. A reader announces "I am calling subscriber k"
//! (a store) and then checks that k is still live (a load); the writer marks k dead (a store) and
//! then looks for announcements (a load). Both sides need a full barrier between their store and
//! their load, or each could miss the other's store and a callback could run after unsubscribe
//! returned. A `SeqCst` fence on every callback would cost the call path tens of cycles.
//!
//! Instead, as in liburcu's membarrier flavour, the reader issues only a compiler fence
//! ([`light`]) and the writer issues `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`
//! ([`heavy`]), which makes every running thread of the process execute a full barrier; a thread
//! that is not running passes through one when it is switched out. Together they order the
//! reader's store before its load as seen by the writer.
//!
//! Where membarrier is unavailable (old kernels, seccomp, valgrind) [`init`] leaves the mode at
//! [`Mode::Fence`]: readers then issue a real `SeqCst` fence, which is always correct.

use core::sync::atomic::{AtomicU8, Ordering, compiler_fence, fence};

/// How the barrier pair is implemented; chosen once by [`init`], never changed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Mode {
    /// Readers issue `fence(SeqCst)`; [`heavy`] is a fence too.
    Fence = 0,
    /// Readers issue a compiler fence; [`heavy`] calls `membarrier`.
    Membarrier = 1,
}

static MODE: AtomicU8 = AtomicU8::new(Mode::Fence as u8);

const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1 << 0;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

fn membarrier(cmd: libc::c_int) -> bool {
    // SAFETY: membarrier takes two integer arguments and touches no memory of ours; an
    // unsupported command or kernel answers with -1 and errno, which we treat as "no".
    unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            cmd,
            0 as libc::c_uint,
            0 as libc::c_int,
        ) == 0
    }
}

/// The current mode.
pub(crate) fn mode() -> Mode {
    if MODE.load(Ordering::Relaxed) == Mode::Membarrier as u8 {
        Mode::Membarrier
    } else {
        Mode::Fence
    }
}

/// Chooses the mode: registers for expedited membarrier if the kernel allows it.
///
/// Must be called by a writer before it publishes anything that readers will protect with
/// [`light`] (the first subscribe does it). Until then, readers see [`Mode::Fence`], which is
/// stronger than needed, never weaker.
pub(crate) fn init() {
    if mode() == Mode::Fence && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
        MODE.store(Mode::Membarrier as u8, Ordering::SeqCst);
    }
}

/// The reader's half: orders this thread's earlier stores before its later loads, as seen by a
/// writer that runs [`heavy`].
#[inline(always)]
pub(crate) fn light() {
    if MODE.load(Ordering::Relaxed) == Mode::Membarrier as u8 {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The writer's half: after it returns, every reader's store that preceded its [`light`] is
/// visible to this thread, or that reader's later load sees this thread's earlier stores.
pub(crate) fn heavy() {
    fence(Ordering::SeqCst);
    if mode() == Mode::Fence {
        return;
    }
    // A forked child may have lost the registration: register again and retry, then fall back to
    // the global command, which needs no registration (slower, equally strong).
    if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        || (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
            && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        || membarrier(MEMBARRIER_CMD_GLOBAL)
    {
        return;
    }
    // No barrier could be issued although readers rely on one. This cannot happen on a kernel
    // that accepted the registration; yield so that preempted readers get switched out (a
    // context switch is a full barrier) and carry on.
    for _ in 0..4 {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_is_idempotent_and_the_pair_runs() {
        init();
        let first = mode();
        init();
        assert_eq!(mode(), first);
        light();
        heavy();
    }
}
