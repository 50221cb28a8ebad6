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
//! Where membarrier is unavailable (old kernels, seccomp, valgrind) [`init`] chooses
//! [`Mode::Fence`]: readers then issue a real `SeqCst` fence, which is always correct. The mode is
//! decided once, by the first writer, before anything is published, and never changes: a reader
//! and a writer must never disagree on it.

use core::sync::atomic::{AtomicU8, Ordering, compiler_fence, fence};

/// How the barrier pair is implemented; chosen once by [`init`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Mode {
    /// Readers issue `fence(SeqCst)`; [`heavy`] is a fence too.
    Fence = 0,
    /// Readers issue a compiler fence; [`heavy`] calls `membarrier`.
    Membarrier = 1,
}

/// Not decided yet: readers behave as in [`Mode::Fence`].
const UNDECIDED: u8 = 2;
/// Being decided by one thread.
const DECIDING: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

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

/// Decides the mode, once: membarrier if the kernel lets us register for it, else fences.
/// When it returns, the mode is final.
///
/// The first subscribe and the setting of the buffer callbacks call it, so that readers use the
/// cheap barrier from the start; [`heavy`] calls it too, so a writer never issues its half
/// under an undecided mode while a reader already uses the decided one. Readers that see an
/// undecided mode issue a full fence, which pairs with either writer half.
pub(crate) fn init() {
    match MODE.compare_exchange(UNDECIDED, DECIDING, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            let mode = match membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
                true => Mode::Membarrier,
                false => Mode::Fence,
            };
            MODE.store(mode as u8, Ordering::SeqCst);
        }
        Err(DECIDING) => {
            while MODE.load(Ordering::Acquire) == DECIDING {
                std::thread::yield_now();
            }
        }
        Err(_) => {}
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

/// The writer's half: after it returns `true`, every reader's store that preceded its [`light`]
/// is visible to this thread, or that reader's later load sees this thread's earlier stores.
///
/// Returns `false` if no barrier could be issued: then nothing is guaranteed, and the caller
/// must not free anything a reader might still use. That cannot happen on a kernel that accepted
/// the registration, but the call path must not depend on "cannot happen".
#[must_use]
pub(crate) fn heavy() -> bool {
    init();
    fence(Ordering::SeqCst);
    if mode() == Mode::Fence {
        return true;
    }
    // A forked child may have lost the registration: register again and retry, then fall back to
    // the global command, which needs no registration (slower, equally strong).
    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        || (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
            && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        || membarrier(MEMBARRIER_CMD_GLOBAL)
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
        assert!(heavy());
    }
}
