//! The lock of the rare writers (subscribe, enable, unsubscribe): a test-and-set lock that can be
//! taken before `fork()` and released in both parent and child.
//!
//! Why not a parking mutex: at `fork()`, the child gets a copy of memory but only the forking
//! thread, so a lock held by another thread would stay held forever, and a parking lock's shared
//! wait queues may be copied mid-update. libpti's `pthread_atfork` handlers take this lock before
//! the fork and release it in both processes, which needs nothing but one atomic flag. Writers
//! hold it for microseconds and never run user code under it, so spinning with backoff costs
//! nothing measurable; readers (the call path) never take it.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

use super::backoff::Backoff;

/// A value behind the writers' lock.
pub(crate) struct WriterLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and a guard exists only while `locked` is
// held (acquired with Acquire, released with Release), so at most one thread accesses it.
unsafe impl<T: Send> Sync for WriterLock<T> {}

impl<T> WriterLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        WriterLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// One attempt inlined where the lock is taken, the wait out of line: a lock taken on every
    /// launch (the queue registry, the pending list) cost about 19 instructions as a call
    /// (issue 39).
    #[inline(always)]
    fn acquire(&self) {
        if !self.try_acquire() {
            self.acquire_contended();
        }
    }

    /// One attempt to take the lock.
    #[inline(always)]
    fn try_acquire(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[cold]
    #[inline(never)]
    fn acquire_contended(&self) {
        let mut backoff = Backoff::default();
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            backoff.snooze();
        }
    }

    /// Takes the lock until the guard is dropped.
    pub(crate) fn lock(&self) -> WriterGuard<'_, T> {
        self.acquire();
        WriterGuard { lock: self }
    }

    /// Takes the lock if it is free, without waiting.
    pub(crate) fn try_lock(&self) -> Option<WriterGuard<'_, T>> {
        self.try_acquire().then_some(WriterGuard { lock: self })
    }

    /// Takes the lock without a guard, before `fork()`.
    pub(crate) fn acquire_for_fork(&self) {
        self.acquire();
    }

    /// Releases the lock taken by [`WriterLock::acquire_for_fork`], in the parent or the child.
    ///
    /// # Safety
    /// The calling thread took the lock with `acquire_for_fork` and holds no guard.
    pub(crate) unsafe fn release_after_fork(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

/// Access to the locked value; releases the lock when dropped (also when unwinding).
pub(crate) struct WriterGuard<'a, T> {
    lock: &'a WriterLock<T>,
}

impl<T> Deref for WriterGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this thread holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for WriterGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard exists only while this thread holds the lock, and `&mut self`
        // makes this the only reference through it.
        unsafe { &mut *self.lock.value.get() }
    }
}

/// A writers' lock seen only as something to take around `fork()`, whatever it guards: lets a
/// subsystem list its locks for the fork handlers.
pub(crate) trait ForkLock: Sync {
    /// See [`WriterLock::acquire_for_fork`].
    fn acquire_for_fork(&self);
    /// See [`WriterLock::release_after_fork`].
    ///
    /// # Safety
    /// As [`WriterLock::release_after_fork`].
    unsafe fn release_after_fork(&self);
}

impl<T: Send> ForkLock for WriterLock<T> {
    fn acquire_for_fork(&self) {
        WriterLock::acquire_for_fork(self);
    }
    unsafe fn release_after_fork(&self) {
        // SAFETY: the caller's contract is this method's.
        unsafe { WriterLock::release_after_fork(self) };
    }
}

impl<T> Drop for WriterGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn excludes_and_survives_a_panic_while_held() {
        let lock = Arc::new(WriterLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 40_000);
        let l = lock.clone();
        let _ = std::thread::spawn(move || {
            let _g = l.lock();
            panic!("while holding");
        })
        .join();
        assert_eq!(
            *lock.lock(),
            40_000,
            "the guard released the lock while unwinding"
        );
        lock.acquire_for_fork();
        // SAFETY: acquired just above, no guard held.
        unsafe { lock.release_after_fork() };
        assert_eq!(*lock.lock(), 40_000);
    }
}
