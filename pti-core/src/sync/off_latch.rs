//! The hand-shake between a caught panic switching a thread's entry off and the hook that must
//! run before a thread's dispatch goes off (`boundary::before_dispatch_off`): whichever of the two
//! comes second runs the hook, so that it runs at least once whatever their timing.
//!
//! The two sides are a store-buffering pair: each writes its own flag, then reads the other's. A
//! `SeqCst` fence between the write and the read on both sides makes at least one read see the
//! other side's write, so the hook cannot be missed by both; it may run twice, which the hook
//! allows (it is idempotent). Reading first and writing after, as libpti once did, let a
//! switch-off concurrent with the hook's arrival miss it on both sides; so do the two orders
//! without the fences (the loom model finds both).
//!
//! Touches: its two flags only; under `cfg(loom)` they are loom's ([`super::shim`]), for the
//! model in `tests/loom_off_latch.rs`.

use core::sync::atomic::Ordering;

use super::shim::{AtomicBool, fence};

/// Whether some entry was switched off on some thread, and whether the hook was given.
#[derive(Debug)]
pub(crate) struct OffLatch {
    off: AtomicBool,
    hook_given: AtomicBool,
}

impl OffLatch {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        OffLatch {
            off: AtomicBool::new(false),
            hook_given: AtomicBool::new(false),
        }
    }

    /// Loom's atomics cannot be made in a `const fn`.
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        OffLatch {
            off: AtomicBool::new(false),
            hook_given: AtomicBool::new(false),
        }
    }

    /// Whether some entry was switched off on some thread (the traced calls' fast check).
    #[inline]
    pub(crate) fn any_off(&self) -> bool {
        // Relaxed: a thread sets it before its own bits, and only its own bits answer for it.
        self.off.load(Ordering::Relaxed)
    }

    /// An entry is being switched off: returns whether the hook was already given, for the
    /// caller to run it.
    pub(crate) fn switch_off(&self) -> bool {
        self.off.store(true, Ordering::Relaxed);
        // The store-buffering pair (module docs): this fence and `give_hook`'s order both sides'
        // store before their load in one total order, so the later side's load sees the earlier
        // side's store. Acquire/release alone would let both loads read `false`.
        fence(Ordering::SeqCst);
        // Acquire: pairs with `give_hook`'s release, so the caller then finds the hook stored.
        self.hook_given.load(Ordering::Acquire)
    }

    /// The hook was just stored where [`switch_off`](Self::switch_off)'s caller finds it: returns
    /// whether an entry was already switched off, for the caller to run the hook at once.
    pub(crate) fn give_hook(&self) -> bool {
        self.hook_given.store(true, Ordering::Release);
        // See `switch_off`.
        fence(Ordering::SeqCst);
        self.off.load(Ordering::Relaxed)
    }
}
