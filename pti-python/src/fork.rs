//! `fork` without `exec` (Python's `multiprocessing` does it by default on Linux): a child
//! copies each lock as it was, and one that another thread held at that instant would stay held
//! in the child forever (its next record, or its next `Views` call, would hang). So every lock
//! of this module is taken before the fork and released after it, in the parent and the child.
//! They are leaves (held for a copy or a swap, never while waiting for anything), so taking
//! them in any order cannot deadlock.

use crate::callbacks::QUEUED;
use crate::views::{STORE, VIEWS};

extern "C" fn before() {
    core::mem::forget(VIEWS.lock());
    core::mem::forget(STORE.lock());
    core::mem::forget(QUEUED.lock());
}

extern "C" fn after_in_child() {
    crate::callbacks::after_fork_in_child();
    after();
}

extern "C" fn after() {
    // SAFETY: `before` took each lock on this thread and forgot its guard; in the child, this
    // thread is the one that forked.
    unsafe {
        QUEUED.force_unlock();
        STORE.force_unlock();
        VIEWS.force_unlock();
    }
}

/// Registers the handlers (once, when the module is loaded).
pub(crate) fn hold_locks_across_fork() {
    // SAFETY: three functions of the signature pthread_atfork expects, callable in a fork's
    // parent and child.
    unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after_in_child)) };
}
