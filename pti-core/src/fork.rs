//! `fork()` safety: the `pthread_atfork` handlers of every subsystem, in one place.
//!
//! At `fork()`, the child gets a copy of memory but only the forking thread. Every lock of
//! libpti's writers is taken before the fork (`prepare`) and released in both processes, so the
//! child never inherits a lock held by a thread it does not have. In the child, state that
//! belongs to the other threads (callback announcements, buffer flags) is cleared, the records
//! already buffered are left to the parent, and cached process and thread IDs are refreshed.
//! Locks are taken in one fixed order; no libpti code holds two of them at once.

use std::sync::Once;

use crate::{backend, callback, clock, thread, view};

extern "C" fn prepare() {
    callback::fork_prepare();
    view::fork_prepare();
    backend::fork_prepare();
}

extern "C" fn parent() {
    backend::fork_parent();
    view::fork_parent();
    callback::fork_parent();
}

extern "C" fn child() {
    clock::fork_child();
    thread::fork_child();
    backend::fork_child();
    view::fork_child();
    callback::fork_child();
}

/// Installs the handlers, once; called before the first subscriber or buffer callback exists.
pub(crate) fn install_handlers() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: the handlers are plain functions of this library that take only libpti's own
        // writer locks; glibc calls them around fork().
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
}
