//! The interception layers: one submodule per runtime, each turning the runtime's calls into
//! traced calls of the dispatch entry and its device work into view records.
//!
//! - [`opencl`]: the OpenCL loader layer;
//! - shared by the backends: `timing` (device timestamps onto the host clock), `work` (what a
//!   command does, and its record), `pending` (commands awaiting their records, and harvests).
//!
//! What the rest of libpti asks of the backends, through this file only: which functions submit
//! or wait for device work ([`device_work_functions`], traced while a device view is enabled),
//! to write the records of finished device work before a flush ([`harvest_finished`]), to give
//! up at exit ([`at_exit`]), and the fork handlers.

use crate::api::{ApiGroup, ApiId};

pub mod opencl;
pub(crate) mod pending;
pub(crate) mod timing;
pub(crate) mod work;

/// Every backend's functions that submit or wait for device work.
pub(crate) fn device_work_functions() -> impl Iterator<Item = (ApiGroup, ApiId)> {
    opencl::DEVICE_WORK.iter().map(|id| (ApiGroup::OpenCl, *id))
}

/// Writes the records of every command that has completed, without waiting for any other.
pub(crate) fn harvest_finished() {
    opencl::harvest_finished();
}

/// At process exit, after the last flush: device work not yet recorded is counted as lost;
/// no runtime is called (it may be gone).
pub(crate) fn at_exit() {
    opencl::at_exit();
}

/// Before `fork()`: every backend lock is taken.
pub(crate) fn fork_prepare() {
    opencl::fork_prepare();
}

/// After `fork()`, in the parent.
pub(crate) fn fork_parent() {
    opencl::fork_parent();
}

/// After `fork()`, in the child.
pub(crate) fn fork_child() {
    opencl::fork_child();
    pending::fork_child();
}
