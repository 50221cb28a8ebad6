//! The runtime task a thread is submitting: what a runtime (SYCL) said of the task whose device
//! commands the driver calls on this thread create right now.
//!
//! Cross-backend state lives here, in the engine, so that no backend imports another: the SYCL
//! backend sets the task while one of its task's enqueue calls runs ([`set_current`]), and the
//! OpenCL and Level Zero backends read it for the records of the commands they see submitted
//! meanwhile ([`current`]), as they inherit the runtime call's correlation ID through
//! `correlation`.
//!
//! Touches a thread-local of its own and nothing else, so that `thread` and `view` both build on
//! it (`tests/layering.rs`).

use core::cell::Cell;
use core::ffi::CStr;

/// What the SYCL runtime said of the task that submitted a command (its `sycl` XPTI stream).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyclTag {
    /// The task-graph node (the event's unique ID).
    pub(crate) node_id: u64,
    /// The instance of the node this submission is.
    pub(crate) invocation_id: u32,
    /// The SYCL queue's ID (`PTI_INVALID_QUEUE_ID` if not known).
    pub(crate) queue_id: u64,
    /// When the runtime began the task, and began enqueuing its kernel (host ns; 0 if not seen).
    pub(crate) task_begin: u64,
    pub(crate) enqueue_begin: u64,
    /// Where the command group was submitted from, and the SYCL kernel name.
    pub(crate) source_file: Option<&'static CStr>,
    pub(crate) line: u64,
    pub(crate) kernel_name: Option<&'static CStr>,
}

thread_local! {
    /// The task of this thread. A constant initialiser and no destructor: readable however far
    /// the thread's exit has gone.
    static CURRENT: Cell<Option<SyclTag>> = const { Cell::new(None) };
}

/// Makes `tag` the task whose commands this thread submits from now on (`None`: none).
pub(crate) fn set_current(tag: Option<SyclTag>) {
    CURRENT.set(tag);
}

/// The task whose commands this thread submits now, as the runtime backend last set it.
pub(crate) fn current() -> Option<SyclTag> {
    CURRENT.get()
}
