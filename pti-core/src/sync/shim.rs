//! The primitives of the buffer hand-off ([`super::handoff`]) and of [`super::off_latch`], swapped
//! for loom's under `cfg(loom)` so that the loom models in `tests/loom_handoff.rs` and
//! `tests/loom_off_latch.rs` check the real protocol code.
//!
//! As crossbeam's `primitive` facade: in a normal build these are `core`'s atomics, a thin
//! `UnsafeCell` with loom's closure API, the real asymmetric barrier and [`Backoff`]; under
//! `cfg(loom)` they are loom's atomics and `UnsafeCell` (which report any access that races with
//! another), `SeqCst` fences for both barrier halves, and a backoff that yields to loom's
//! scheduler. The fences are exactly the guarantee the membarrier pair gives: the writer's store
//! before [`light`] and the flusher's store before [`heavy`] cannot both be missed by the loads
//! that follow them.
//!
//! Under `cfg(loom)` the library itself must not run (its loom atomics would live outside a
//! model): that configuration exists only to build the loom tests.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::AtomicBool;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicBool;

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::fence;

#[cfg(not(loom))]
pub(crate) use super::backoff::Backoff;
#[cfg(not(loom))]
pub(crate) use super::barrier::{heavy, light};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` behind loom's closure API, so the same code compiles both ways.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(core::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer to the value; the caller's protocol makes the access exclusive.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// The reader's barrier half, modelled: a `SeqCst` fence.
#[cfg(loom)]
pub(crate) fn light() {
    loom::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
}

/// The writer's barrier half, modelled: a `SeqCst` fence, which always succeeds.
#[cfg(loom)]
pub(crate) fn heavy() -> bool {
    loom::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    true
}

/// Waiting under loom: every round yields to the scheduler, or loom would explore the spin
/// forever.
#[cfg(loom)]
#[derive(Default)]
pub(crate) struct Backoff {
    // Not a unit struct, so that `Backoff::default()` reads the same in both configurations.
    _rounds: u32,
}

#[cfg(loom)]
impl Backoff {
    pub(crate) fn snooze(&mut self) {
        loom::thread::yield_now();
    }
}
