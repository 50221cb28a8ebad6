//! The hand-off of one thread's record buffer between its writing thread and flushers: a Dekker
//! pair of flags made cheap for the writer by the asymmetric barrier of [`super::barrier`].
//!
//! - writer ([`HandOff::write`]): `writing = true`; `light()`; if `flushing`, `writing = false`,
//!   wait until `flushing` is false and start again; else run the section on the slot, then
//!   `writing = false` (Release);
//! - flusher: [`HandOff::announce_flush`] (`flushing = true`) on every slot; one heavy barrier
//!   ([`flush_barrier`]); per slot [`HandOff::take`] (wait until `writing` is false, Acquire, then
//!   use the slot) and [`HandOff::end_flush`] (`flushing = false`, Release).
//!
//! The barrier pair orders each side's store before its load, so either the writer sees
//! `flushing` and keeps off, or the flusher sees `writing` and waits for the section to end;
//! never both miss. The Release/Acquire pairs on the flags hand the slot's contents over in both
//! directions. The module is built on [`super::shim`], so the loom models in
//! `tests/loom_handoff.rs` check this very code.

use core::sync::atomic::Ordering;

use super::shim::{AtomicBool, Backoff, UnsafeCell, heavy, light};

/// A value shared by its one writing thread and (serialised) flushers.
pub(crate) struct HandOff<T> {
    writing: AtomicBool,
    flushing: AtomicBool,
    slot: UnsafeCell<T>,
}

// SAFETY: the slot is accessed only by the writer inside its section, or by the flusher between
// `take` and `end_flush`; the protocol (module docs) makes those exclusive, and the flags' Release
// and Acquire hand the value from one thread to the other, hence `T: Send`.
unsafe impl<T: Send> Sync for HandOff<T> {}

impl<T> HandOff<T> {
    pub(crate) fn new(value: T) -> Self {
        HandOff {
            writing: AtomicBool::new(false),
            flushing: AtomicBool::new(false),
            slot: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the slot inside the writer's section, after waiting out a flush under way.
    /// `f` must be short and must not run tool code: a flusher waits for it.
    ///
    /// # Safety
    /// Only one thread writes a given slot (its owner), and `f` does not call `write` on it.
    #[inline(always)]
    pub(crate) unsafe fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        while !self.begin_write() {
            self.wait_for_flush();
        }
        // SAFETY: inside the writer's section: no flusher uses the slot until `end_write` (module
        // docs), no other thread writes it (contract), and `f` does not re-enter.
        let result = self.slot.with_mut(|p| f(unsafe { &mut *p }));
        self.end_write();
        result
    }

    /// Enters the writer's section; `false` if a flush is under way.
    #[inline(always)]
    fn begin_write(&self) -> bool {
        self.writing.store(true, Ordering::Relaxed);
        light();
        // Acquire: pairs with the flusher's Release of `flushing = false`, so that its use of the
        // slot happens before ours.
        if self.flushing.load(Ordering::Acquire) {
            self.writing.store(false, Ordering::Release);
            return false;
        }
        true
    }

    #[inline(always)]
    fn end_write(&self) {
        self.writing.store(false, Ordering::Release);
    }

    #[cold]
    fn wait_for_flush(&self) {
        let mut backoff = Backoff::default();
        while self.flushing.load(Ordering::Acquire) {
            backoff.snooze();
        }
    }

    /// Flusher, first step: the writer keeps off from its next section on. Then
    /// [`flush_barrier`], then [`HandOff::take`] and [`HandOff::end_flush`].
    pub(crate) fn announce_flush(&self) {
        self.flushing.store(true, Ordering::Relaxed);
    }

    /// Flusher: waits until the writer is out of its section, then runs `f` on the slot.
    ///
    /// # Safety
    /// The caller called [`HandOff::announce_flush`] on this slot, then [`flush_barrier`], which
    /// returned `true`, and has not called [`HandOff::end_flush`] since; no other flusher is
    /// between those steps on this slot (flushers are serialised); `f` does not call into this
    /// slot.
    pub(crate) unsafe fn take<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut backoff = Backoff::default();
        // Acquire: pairs with the writer's Release of `writing = false`, so that its section
        // happens before our use of the slot.
        while self.writing.load(Ordering::Acquire) {
            backoff.snooze();
        }
        // SAFETY: the writer saw `flushing` and keeps off, or we saw it leave its section after
        // it last could (module docs); we are the only flusher (contract).
        self.slot.with_mut(|p| f(unsafe { &mut *p }))
    }

    /// Flusher, last step: lets the writer in again. Release: what the flusher did to the slot
    /// happens before the writer's next section.
    pub(crate) fn end_flush(&self) {
        self.flushing.store(false, Ordering::Release);
    }

    /// In a forked child: clears the flags of threads that do not exist there and runs `f` on
    /// the slot.
    ///
    /// # Safety
    /// Only the calling thread exists (the child after `fork()`), and it is not inside a
    /// writer's section or a flush of this slot.
    pub(crate) unsafe fn reset_after_fork(&self, f: impl FnOnce(&mut T)) {
        self.writing.store(false, Ordering::Relaxed);
        self.flushing.store(false, Ordering::Relaxed);
        // SAFETY: no other thread exists to access the slot (contract).
        self.slot.with_mut(|p| f(unsafe { &mut *p }));
    }
}

/// The flusher's barrier, issued once after announcing on every slot: after it returns `true`,
/// every writer either saw its `flushing` or published its `writing`. `false`: no barrier could
/// be issued, and no slot may be taken.
#[must_use]
pub(crate) fn flush_barrier() -> bool {
    heavy()
}
