//! What the SYCL runtime said of the task that submitted a command ([`SyclTag`]): a value the
//! thread's state carries while SYCL enqueues (see `runtime_task`) and device records copy.
//!
//! A leaf of the engine's layers: `thread`, `runtime_task` and `view` all name it, and it names
//! nothing of libpti (`tests/layering.rs`).

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
