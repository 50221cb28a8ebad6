//! The interception layers: one submodule per runtime, each turning the runtime's calls into
//! traced calls of the dispatch entry and its device work into view records.
//!
//! - [`opencl`]: the OpenCL loader layer;
//! - [`level_zero`]: a tracer on the Level Zero loader's tracing layer;
//! - [`sycl`]: an XPTI subscriber of the SYCL runtime and its Unified Runtime;
//! - shared by the backends: `timing` (device timestamps onto the host clock), `work` (what a
//!   command does, and its record), `pending` (commands awaiting their records, and harvests).
//!
//! What the rest of libpti asks of the backends, through this file only: which functions submit
//! or wait for device work (`device_work_functions`, traced while a device view is enabled),
//! to write the records of finished device work before a flush (`harvest_finished`), to give
//! up at exit (`at_exit`), the fork handlers, and what is intercepted
//! ([`intercepted_functions`]).

use crate::api::{ApiGroup, ApiId};

pub mod level_zero;
pub mod opencl;
pub(crate) mod pending;
pub mod sycl;
pub(crate) mod timing;
pub(crate) mod work;

/// Every backend's functions that submit or wait for device work.
pub(crate) fn device_work_functions() -> impl Iterator<Item = (ApiGroup, ApiId)> {
    let opencl = opencl::DEVICE_WORK.iter().map(|id| (ApiGroup::OpenCl, *id));
    let level_zero = level_zero::DEVICE_WORK
        .iter()
        .map(|id| (ApiGroup::LevelZero, *id));
    opencl.chain(level_zero)
}

/// Writes the records of every command that has completed, without waiting for any other.
pub(crate) fn harvest_finished() {
    opencl::harvest_finished();
    level_zero::harvest_finished();
    // A tool that asked for SYCL data hears, at its flush, why none comes if the runtime runs
    // without libpti.
    use crate::view::{abi::pti_view_kind::*, is_enabled};
    if is_enabled(PTI_VIEW_RUNTIME_API) || is_enabled(PTI_VIEW_EXT_MEMORY_ALLOCATION) {
        sycl::check_setup(true);
    }
}

/// At process exit, after the last flush: device work not yet recorded is counted as lost;
/// no runtime is called (it may be gone).
pub(crate) fn at_exit() {
    opencl::at_exit();
    level_zero::at_exit();
}

/// Before `fork()`: every backend lock is taken.
pub(crate) fn fork_prepare() {
    opencl::fork_prepare();
    level_zero::fork_prepare();
    sycl::fork_prepare();
}

/// After `fork()`, in the parent.
pub(crate) fn fork_parent() {
    sycl::fork_parent();
    level_zero::fork_parent();
    opencl::fork_parent();
}

/// After `fork()`, in the child.
pub(crate) fn fork_child() {
    opencl::fork_child();
    level_zero::fork_child();
    sycl::fork_child();
    pending::fork_child();
}

/// How many functions of `group` libpti intercepts in this process: for Level Zero, those whose
/// prologue and epilogue the loader's tracing layer accepted; for OpenCL, the dispatch-table
/// entries of the layer (those the layer below provides; extension functions are wrapped as the
/// program asks for them, and not counted); for SYCL, the table's functions once the Unified
/// Runtime's calls reach libpti. 0 while the backend is not attached.
pub fn intercepted_functions(group: ApiGroup) -> usize {
    match group {
        ApiGroup::LevelZero => match level_zero::attachment() {
            Some(level_zero::Attachment::Attached { functions }) => *functions,
            _ => 0,
        },
        ApiGroup::OpenCl => opencl::layer::intercepted_entries(),
        ApiGroup::Sycl => sycl::intercepted_functions(),
    }
}

/// Checks that OpenCL can still be traced, now that a tool asked for something that may concern
/// it (`explicit`: the tool named the OpenCL group); see `opencl::lifetime`.
pub(crate) fn check_opencl(explicit: bool) -> Result<(), crate::result::Error> {
    opencl::lifetime::check_late_load(explicit)
}

/// Makes sure Level Zero is traced, now that a tool asked for something that may concern it
/// (`explicit`: the tool named the Level Zero group). The first call attaches (see
/// `level_zero::attach`). Without Level Zero in the process (no loader, or no driver) there is
/// nothing to trace, and no error: the enable stands, and simulated calls still reach it. Level
/// Zero that is there but cannot be traced has raised a critical event saying why; an explicit
/// request also gets the error, as it does when `PTI_LEVEL_ZERO=0` keeps libpti out.
pub(crate) fn attach_level_zero(explicit: bool) -> Result<(), crate::result::Error> {
    match level_zero::attach() {
        level_zero::Attachment::Failed(_) if explicit => {
            Err(crate::result::Error::TracingNotInitialized(
                "the Level Zero tracing layer is not loaded (see the critical event)",
            ))
        }
        level_zero::Attachment::Disabled if explicit => {
            Err(crate::result::Error::TracingNotInitialized(
                "PTI_LEVEL_ZERO=0 keeps libpti out of Level Zero",
            ))
        }
        _ => Ok(()),
    }
}
