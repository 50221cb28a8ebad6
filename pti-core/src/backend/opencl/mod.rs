//! The OpenCL backend: libpti as an OpenCL loader layer.
//!
//! The loader hands libpti the dispatch table of the layer below (`layer`, `next`) and takes
//! libpti's table of wrappers (`wrappers`, generated: one per dispatch function, plus the
//! extension functions handed out through `clGetExtensionFunctionAddress[ForPlatform]`, see
//! `extensions`). Every wrapper runs its call through the dispatch entry with the call's
//! parameter struct ([`params`], generated, published as `pti/pti_cl_params.h`); the functions
//! that need more have a hook (`hooks`):
//!
//! - `queues`: queues get profiling while a device view is enabled, invisibly to the program;
//! - `commands`: an enqueue call gets an event (the program's, or an injected one) when its
//!   command is to be recorded; `pending` keeps it until the command completes and writes its
//!   record then (harvested at the program's waits, at flushes, never with an added wait);
//! - `devices`: device identity and the conversion of device timestamps to the host clock;
//! - `retained`: the program's events libpti holds, hidden from its reference-count queries;
//! - `kernels`: kernel names; `errcode`: statuses reported through `errcode_ret`;
//! - `query`: libpti's own queries of OpenCL objects.
//!
//! Handles that libpti passes to the runtime are ones the runtime returned, or ones the program
//! passed to a call that reached libpti through the loader, which dereferenced them to find their
//! dispatch table: libpti's own queries on them are as safe as the program's call itself.
//!
//! This module touches the rest of libpti through the dispatch entry, the view's record writers
//! and critical events only.

mod commands;
mod devices;
mod errcode;
mod extensions;
mod hooks;
mod kernels;
pub mod layer;
pub(crate) mod lifetime;
mod next;
#[rustfmt::skip]
pub mod params;
mod pending;
mod query;
mod queues;
mod retained;
#[rustfmt::skip]
mod wrappers;

use crate::api::ApiId;
use crate::ids::opencl as ids;
use crate::sync::writer_lock::ForkLock;

/// The functions that submit or wait for device work: traced while a device view is enabled,
/// so that device records carry their correlation IDs.
pub(crate) const DEVICE_WORK: &[ApiId] = &[
    ids::clEnqueueNDRangeKernel,
    ids::clEnqueueTask,
    ids::clEnqueueNativeKernel,
    ids::clEnqueueReadBuffer,
    ids::clEnqueueWriteBuffer,
    ids::clEnqueueCopyBuffer,
    ids::clEnqueueReadBufferRect,
    ids::clEnqueueWriteBufferRect,
    ids::clEnqueueCopyBufferRect,
    ids::clEnqueueReadImage,
    ids::clEnqueueWriteImage,
    ids::clEnqueueCopyImage,
    ids::clEnqueueCopyImageToBuffer,
    ids::clEnqueueCopyBufferToImage,
    ids::clEnqueueMapBuffer,
    ids::clEnqueueMapImage,
    ids::clEnqueueUnmapMemObject,
    ids::clEnqueueSVMMemcpy,
    ids::clEnqueueSVMMemFill,
    ids::clEnqueueSVMMap,
    ids::clEnqueueSVMUnmap,
    ids::clEnqueueFillBuffer,
    ids::clEnqueueFillImage,
    ids::clEnqueueMarker,
    ids::clEnqueueMarkerWithWaitList,
    ids::clEnqueueBarrierWithWaitList,
    ids::clEnqueueMemcpyINTEL,
    ids::clEnqueueMemFillINTEL,
    ids::clEnqueueMemsetINTEL,
    ids::clEnqueueReadGlobalVariableINTEL,
    ids::clEnqueueWriteGlobalVariableINTEL,
    ids::clEnqueueReadHostPipeINTEL,
    ids::clEnqueueWriteHostPipeINTEL,
    ids::clFinish,
    ids::clWaitForEvents,
];

/// The backend's locks, in the one order the fork handlers take them (no code holds two, but
/// for the pending list's poll and list locks, taken in that order).
fn fork_locks() -> [&'static dyn ForkLock; 10] {
    let [devices, timings] = devices::fork_locks();
    let [poll, pending] = pending::fork_locks();
    [
        extensions::fork_lock(),
        commands::fork_lock(),
        queues::fork_lock(),
        devices,
        timings,
        poll,
        pending,
        retained::fork_lock(),
        crate::intern::fork_lock(),
        lifetime::fork_lock(),
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

/// After `fork()`, in the child: the locks are released, and the parent's pending commands
/// forgotten.
pub(crate) fn fork_child() {
    for lock in fork_locks().iter().rev() {
        // SAFETY: as in fork_parent.
        unsafe { lock.release_after_fork() };
    }
    pending::fork_child();
}

/// At process exit: pending commands are counted as lost, the runtime is not called.
pub(crate) fn at_exit() {
    pending::abandon("the process exits");
}

/// Writes the records of every command that has completed (for a flush), and says if the
/// process has an OpenCL loader that cannot load the layer.
pub(crate) fn harvest_finished() {
    layer::check_loaders();
    pending::harvest_all();
}

/// Commands submitted while a device view was enabled whose records are not written yet: each
/// holds one event reference of libpti's, given back when its record is written.
pub fn pending_commands() -> usize {
    pending::count()
}
