//! The Level Zero backend: a tracer on the loader's tracing layer.
//!
//! [`attach`] (the first time a tool enables something that concerns Level Zero: the session
//! activates the backend, see [`LevelZero`]) opens the loader and registers a prologue and an
//! epilogue for every function its tracing layer offers (`tracer`, `callbacks`, generated). Each
//! prologue opens the traced call through the dispatch's two-step entry (`dispatch::open`) with
//! the tracing layer's parameter struct (`ze_*_params_t`) as `_args`; each epilogue closes it with
//! the call's `ze_result_t`. Both run behind the tracer's panic boundary. The functions that need
//! more have hooks (`hooks`: `before_<function>` in the prologue, `after_<function>` in the
//! epilogue):
//!
//! - `objects`: kernel names, command lists, queues, event pools and events, graphs, from the
//!   creation calls; `pools`: the timestamps libpti adds to the program's pools and
//!   counter-based events, which the program never sees;
//! - `commands`: how each append is timed (`source`: an event of libpti's where the program
//!   passed none, the program's own event otherwise, or a device copy of its timestamps); an
//!   immediate list's commands are pending at once, recorded ones (regular lists, graph
//!   captures) at each execution (`executions`); `guards` keep what a change of a program's
//!   event would lose; records are written when the timestamps are there
//!   (`backend::device::pending`), converted by `devices`; `events`: libpti's own events and
//!   timestamp slots.
//!
//! The timing design, and the driver facts it rests on, are in docs/ARCHITECTURE.md ("Level Zero
//! timing").
//!
//! This module touches the rest of libpti through the engine (the dispatch entry, the view's
//! record writers, critical events, the runtime task) and `backend::device` only.

mod callbacks;
mod commands;
mod devices;
mod events;
mod executions;
mod extension;
mod guards;
mod hooks;
mod objects;
mod pools;
mod source;
pub mod tracer;

pub use tracer::{Attachment, attach, attachment};

use crate::api::{ApiGroup, ApiId};
use crate::backend::contract::{Activation, Backend, Counts};
use crate::backend::device::pending::Ask;
use crate::ids::level_zero as ids;
use crate::result::Error;
use crate::sync::writer_lock::ForkLock;

/// The functions that submit or wait for device work: traced while a device view is enabled,
/// so that device records carry their correlation IDs.
const DEVICE_WORK: &[ApiId] = &[
    ids::zeCommandListAppendLaunchKernel,
    ids::zeCommandListAppendLaunchCooperativeKernel,
    ids::zeCommandListAppendLaunchKernelIndirect,
    ids::zeCommandListAppendMemoryCopy,
    ids::zeCommandListAppendMemoryCopyRegion,
    ids::zeCommandListAppendMemoryCopyFromContext,
    ids::zeCommandListAppendMemoryFill,
    ids::zeCommandListAppendBarrier,
    ids::zeCommandListAppendMemoryRangesBarrier,
    ids::zeCommandListAppendLaunchKernelWithParameters,
    ids::zeCommandListAppendLaunchKernelWithArguments,
    ids::zeCommandListAppendMemoryCopyWithParameters,
    ids::zeCommandListAppendMemoryFillWithParameters,
    ids::zeCommandListAppendHostFunction,
    ids::zeCommandListImmediateAppendCommandListsExp,
    ids::zeCommandListImmediateAppendCommandListsWithParameters,
    ids::zeCommandListAppendGraphExt,
    ids::zeCommandListAppendGraphExp,
    ids::zeCommandListUpdateMutableCommandSignalEventExp,
    ids::zeCommandQueueExecuteCommandLists,
    ids::zeCommandListHostSynchronize,
    ids::zeCommandQueueSynchronize,
    ids::zeEventHostSynchronize,
    ids::zeFenceHostSynchronize,
];

/// The functions that append device work of no record kind, with what that work is: counted at
/// the append (once, however often a regular list runs it), and announced once, while a device
/// view is enabled (`view::loss`). Every other append function is in [`DEVICE_WORK`].
const UNRECORDED_WORK: &[(ApiId, &str)] = &[
    (
        ids::zeCommandListAppendWriteGlobalTimestamp,
        "a write of the global timestamp",
    ),
    (ids::zeCommandListAppendImageCopy, "an image copy"),
    (ids::zeCommandListAppendImageCopyRegion, "an image copy"),
    (
        ids::zeCommandListAppendImageCopyToMemory,
        "an image copy to memory",
    ),
    (
        ids::zeCommandListAppendImageCopyFromMemory,
        "an image copy from memory",
    ),
    (
        ids::zeCommandListAppendImageCopyToMemoryExt,
        "an image copy to memory",
    ),
    (
        ids::zeCommandListAppendImageCopyFromMemoryExt,
        "an image copy from memory",
    ),
    (ids::zeCommandListAppendMemoryPrefetch, "a memory prefetch"),
    (ids::zeCommandListAppendMemAdvise, "memory advice"),
    (ids::zeCommandListAppendSignalEvent, "an event signal"),
    (ids::zeCommandListAppendWaitOnEvents, "a wait on events"),
    (ids::zeCommandListAppendEventReset, "an event reset"),
    (
        ids::zeCommandListAppendQueryKernelTimestamps,
        "a query of kernel timestamps",
    ),
    (
        ids::zeCommandListAppendLaunchMultipleKernelsIndirect,
        "launches of several kernels whose count and arguments are in device memory",
    ),
    (
        ids::zeCommandListAppendSignalExternalSemaphoreExt,
        "a signal of external semaphores",
    ),
    (
        ids::zeCommandListAppendWaitExternalSemaphoreExt,
        "a wait on external semaphores",
    ),
    (
        ids::zeRTASBuilderCommandListAppendCopyExt,
        "a copy of ray-tracing acceleration structures",
    ),
];

/// The Level Zero backend, as the session sees it.
pub(crate) struct LevelZero;

impl Backend for LevelZero {
    fn group(&self) -> ApiGroup {
        ApiGroup::LevelZero
    }

    fn attaches_at_run_time(&self) -> bool {
        tracer::attaches_at_run_time()
    }

    fn device_work(&self) -> &'static [ApiId] {
        DEVICE_WORK
    }

    fn unrecorded_work(&self) -> &'static [(ApiId, &'static str)] {
        UNRECORDED_WORK
    }

    /// Attaches the tracer the first time (see [`attach`]). Without Level Zero in the process
    /// (no loader, or no driver) there is nothing to trace, and no error: the enable stands, and
    /// simulated calls still reach it. Level Zero that is there but cannot be traced has raised a
    /// critical event saying why; a request that named Level Zero also gets the error, as it does
    /// when `PTI_LEVEL_ZERO=0` keeps libpti out.
    fn activate(&self, why: Activation) -> Result<(), Error> {
        if let Activation::Flush { .. } = why {
            return Ok(());
        }
        match (attach(), why) {
            (Attachment::Failed(_), Activation::Named) => Err(Error::TracingNotInitialized(
                "the Level Zero tracing layer is not loaded (see the critical event)",
            )),
            (Attachment::Disabled, Activation::Named) => Err(Error::TracingNotInitialized(
                "PTI_LEVEL_ZERO=0 keeps libpti out of Level Zero",
            )),
            _ => Ok(()),
        }
    }

    fn harvest(&self) {
        commands::PENDING.harvest(Ask::All);
    }

    fn exit(&self) {
        commands::PENDING.abandon("Level Zero", "the process exits");
    }

    fn fork_locks(&self) -> Vec<&'static dyn ForkLock> {
        let mut locks = vec![objects::fork_lock(), events::fork_lock()];
        locks.extend(guards::fork_locks());
        locks.extend(devices::DEVICES.fork_locks());
        locks.extend(commands::fork_locks());
        locks
    }

    /// The parent's objects, events and pending commands are forgotten (the child has no use of
    /// the parent's driver state).
    fn forget_in_child(&self) {
        commands::forget_in_child();
        guards::forget_in_child();
        events::forget_in_child();
        objects::forget_in_child();
    }

    fn counts(&self) -> Counts {
        Counts {
            intercepted_functions: match attachment() {
                Some(Attachment::Attached { functions }) => *functions,
                _ => 0,
            },
            pending_commands: commands::PENDING.count(),
        }
    }
}
