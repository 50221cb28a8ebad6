//! The process around the engine and the backends: what must be in place before a tool's first
//! request, the `fork()` handlers and the exit hook.
//!
//! - [`prepare`] (once, before any request takes effect): the view learns which functions of
//!   each backend submit or wait for device work, and the fork handlers are installed.
//! - The fork handlers take the engine's locks, then every backend's in the order the backends
//!   list them; after `fork()` they release them in the reverse order, and in the child each
//!   backend forgets the parent's runtime objects (see `crate::fork` for the engine's part).
//! - The exit hook (installed with the tool's buffer callbacks): the harvester thread stops, the
//!   backends count what they can no longer record, then every buffer goes back to the tool.

use std::sync::{Once, OnceLock};

use super::BACKENDS;
use crate::backend::contract::SHARED;
use crate::sync::writer_lock::ForkLock;
use crate::{fork, view};

/// Every backend's locks, in the order the fork handlers take them (collected once, so that the
/// handlers allocate nothing).
static BACKEND_LOCKS: OnceLock<Vec<&'static dyn ForkLock>> = OnceLock::new();

fn backend_locks() -> &'static [&'static dyn ForkLock] {
    BACKEND_LOCKS.get_or_init(|| {
        SHARED
            .fork_locks()
            .into_iter()
            .chain(BACKENDS.iter().flat_map(|b| b.fork_locks()))
            .collect()
    })
}

/// What must be in place before a tool's request takes effect; cheap after the first call.
pub(super) fn prepare() {
    static PREPARED: Once = Once::new();
    PREPARED.call_once(|| {
        for b in BACKENDS {
            view::mark_device_work(b.group(), b.device_work());
            view::mark_unrecorded_work(b.group(), b.unrecorded_work());
        }
        // The environment's way to start with collection paused (docs/environment.md).
        if std::env::var_os("PTI_START_PAUSED").is_some_and(|v| v == "1") {
            view::set_paused(true);
        }
    });
    install_fork_handlers();
}

/// Installs the `fork()` handlers, once. The session does before a tool's first request; the
/// runtime entry points of `pti-capi` (the OpenCL layer's set-up, XPTI's stream set-up) do before
/// a backend first takes a lock, traced or not.
pub fn install_fork_handlers() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        backend_locks();
        // SAFETY: the handlers are plain functions of this library that take and release only
        // libpti's own writer locks and reset libpti's own state; glibc calls them around fork().
        unsafe { libc::pthread_atfork(Some(before_fork), Some(in_parent), Some(in_child)) };
    });
}

extern "C" fn before_fork() {
    fork::prepare();
    fork::acquire_all(backend_locks());
    view::loss::fork_prepare();
}

extern "C" fn in_parent() {
    view::loss::fork_parent();
    // SAFETY: `before_fork` took them on this thread; no guard is held across fork().
    unsafe { fork::release_all(backend_locks()) };
    fork::parent();
}

extern "C" fn in_child() {
    view::loss::fork_child();
    // SAFETY: as in `in_parent`; in the child the forking thread is the only thread.
    unsafe { fork::release_all(backend_locks()) };
    SHARED.forget_thread_in_child();
    for b in BACKENDS {
        b.forget_in_child();
    }
    SHARED.forget_harvests_in_child();
    fork::child();
}

/// Installs the exit hook, once.
pub(super) fn install_exit_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: `at_exit` is a plain function of this library; glibc runs it at exit, or when
        // the library is unloaded (atexit records the calling object's handle).
        unsafe { libc::atexit(at_exit) };
    });
}

/// At process exit (or unload): device work not yet recorded is counted as lost (no runtime is
/// called: it may be gone), the loss records say what was lost, then every buffer goes back to
/// the tool, and the user's log (if any) gets the totals of what was lost.
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        SHARED.stop_at_exit();
        for b in BACKENDS {
            b.exit();
        }
        view::write_loss_records();
        view::hand_back_at_exit();
        crate::view::loss::log_exit_summary();
    });
}
