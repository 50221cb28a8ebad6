//! `fork()` safety of the engine, and the helper every participant uses.
//!
//! At `fork()`, the child gets a copy of memory but only the forking thread. Every lock of
//! libpti's writers is taken before the fork and released in both processes, so the child never
//! inherits a lock held by a thread it does not have. In the child, state that belongs to the
//! other threads (callback announcements, buffer flags) is cleared, the records already buffered
//! are left to the parent, and cached process and thread IDs are refreshed. Locks are taken in one
//! fixed order and released in the reverse order; no libpti code holds two of them at once (but
//! for the pending lists' poll and list locks, taken in that order).
//!
//! This module holds the engine's part ([`prepare`], [`parent`], [`child`]) and the helper that
//! takes and releases a list of locks ([`acquire_all`], [`release_all`]). Who installs the
//! `pthread_atfork` handlers, and what the backends add, is the session's business
//! (`session::process`).

use crate::sync::writer_lock::ForkLock;
use crate::{callback, clock, intern, linker, thread, view};

/// Takes every lock of `locks`, in order.
pub(crate) fn acquire_all(locks: &[&'static dyn ForkLock]) {
    for lock in locks {
        lock.acquire_for_fork();
    }
}

/// Releases every lock of `locks`, in the reverse order.
///
/// # Safety
/// The calling thread took them all with [`acquire_all`] (before `fork()`, in this process or the
/// parent it was copied from) and holds no guard of any.
pub(crate) unsafe fn release_all(locks: &[&'static dyn ForkLock]) {
    for lock in locks.iter().rev() {
        // SAFETY: the caller's contract.
        unsafe { lock.release_after_fork() };
    }
}

/// The engine's locks that are not released by their own module's handlers.
fn engine_locks() -> [&'static dyn ForkLock; 5] {
    let [overlapped, events, made] = crate::annotation::fork_locks();
    [
        intern::fork_lock(),
        linker::fork_lock(),
        overlapped,
        events,
        made,
    ]
}

/// Before `fork()`: the engine's locks, taken before any backend's.
pub(crate) fn prepare() {
    callback::fork_prepare();
    view::fork_prepare();
    acquire_all(&engine_locks());
}

/// After `fork()`, in the parent, once the backends released theirs.
pub(crate) fn parent() {
    // SAFETY: `prepare` took them on this thread; no guard is held across fork().
    unsafe { release_all(&engine_locks()) };
    view::fork_parent();
    callback::fork_parent();
}

/// After `fork()`, in the child, once the backends released theirs and forgot the parent's
/// objects.
pub(crate) fn child() {
    clock::fork_child();
    thread::fork_child();
    // SAFETY: as in `parent`; in the child the forking thread is the only thread.
    unsafe { release_all(&engine_locks()) };
    view::fork_child();
    callback::fork_child();
    crate::annotation::forget_in_child();
}
