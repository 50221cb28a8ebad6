//! The Level Zero backend: a tracer on the loader's tracing layer.
//!
//! [`attach`] (the first time a tool enables something, see `backend::attach_for`) opens the
//! loader and registers a prologue and an epilogue for every function its tracing layer offers
//! (`tracer`, `callbacks`, generated). Each prologue opens the traced call through the dispatch's
//! two-step entry (`dispatch::open`) with the tracing layer's parameter struct (`ze_*_params_t`)
//! as `_args`; each epilogue closes it with the call's `ze_result_t`. The functions that need more
//! have hooks (`hooks`):
//!
//! - `objects`: kernel names, command lists, queues, event pools, from the creation calls;
//! - `commands`: appends get timing events (`events`: libpti's own timestamp pools where the
//!   program's event cannot be used), immediate lists' commands are pending at once, regular
//!   lists' at each execution; records are written when the events have signalled
//!   (`backend::pending`), with kernel timestamps converted by `devices`.
//!
//! This module touches the rest of libpti through the dispatch entry, the view's record writers
//! and critical events only.

#[rustfmt::skip]
mod callbacks;
mod commands;
mod devices;
mod events;
mod hooks;
mod objects;
pub mod tracer;

pub use tracer::{Attachment, attach, attachment};

use crate::api::ApiId;
use crate::backend::pending;
use crate::ids::level_zero as ids;
use crate::sync::writer_lock::ForkLock;

/// The functions that submit or wait for device work: traced while a device view is enabled,
/// so that device records carry their correlation IDs.
pub(crate) const DEVICE_WORK: &[ApiId] = &[
    ids::zeCommandListAppendLaunchKernel,
    ids::zeCommandListAppendLaunchCooperativeKernel,
    ids::zeCommandListAppendLaunchKernelIndirect,
    ids::zeCommandListAppendMemoryCopy,
    ids::zeCommandListAppendMemoryCopyRegion,
    ids::zeCommandListAppendMemoryCopyFromContext,
    ids::zeCommandListAppendMemoryFill,
    ids::zeCommandListAppendBarrier,
    ids::zeCommandListAppendMemoryRangesBarrier,
    ids::zeCommandQueueExecuteCommandLists,
    ids::zeCommandQueueSynchronize,
    ids::zeEventHostSynchronize,
    ids::zeFenceHostSynchronize,
];

/// Writes the records of every command that has completed (for a flush).
pub(crate) fn harvest_finished() {
    commands::PENDING.harvest();
    pending::wait_for_other_harvests();
}

/// Commands whose records are still to come.
pub fn pending_commands() -> usize {
    commands::PENDING.count()
}

/// At process exit: pending commands are counted as lost, the driver is not called.
pub(crate) fn at_exit() {
    commands::PENDING.abandon("Level Zero", "the process exits");
}

fn fork_locks() -> [&'static dyn ForkLock; 7] {
    let [devices, timings] = devices::fork_locks();
    let [poll, pending, seen] = commands::fork_locks();
    [
        objects::fork_lock(),
        events::fork_lock(),
        devices,
        timings,
        poll,
        pending,
        seen,
    ]
}

/// Before `fork()`: takes every lock of the backend.
pub(crate) fn fork_prepare() {
    fork_locks().iter().for_each(|l| l.acquire_for_fork());
}

/// After `fork()`, in the parent.
pub(crate) fn fork_parent() {
    for lock in fork_locks().iter().rev() {
        // SAFETY: fork_prepare took every lock on this thread; no guard is held across fork().
        unsafe { lock.release_after_fork() };
    }
}

/// After `fork()`, in the child: the locks released, and the parent's objects, events and
/// pending commands forgotten (the child has no use of the parent's driver state).
pub(crate) fn fork_child() {
    for lock in fork_locks().iter().rev() {
        // SAFETY: as in fork_parent.
        unsafe { lock.release_after_fork() };
    }
    commands::fork_child();
    events::fork_child();
    objects::fork_child();
}
