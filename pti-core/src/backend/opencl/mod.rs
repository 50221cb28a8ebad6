//! The OpenCL backend: libpti as an OpenCL loader layer.
//!
//! The loader hands libpti the dispatch table of the layer below (`layer`, `next`) and takes
//! libpti's table of wrappers (`wrappers`, generated: one per dispatch function, plus the
//! extension functions handed out through `clGetExtensionFunctionAddress[ForPlatform]`, see
//! `extensions`). Every wrapper runs its call through the dispatch entry with the call's
//! parameter struct ([`params`], generated, published as `pti/pti_cl_params.h`); the functions
//! that need more have an *override*: libpti code that runs in place of the plain call and makes
//! the real call itself, behind the dispatch's panic boundary. The enqueue calls have one line
//! each in `enqueues` (what command the call submits; their arguments by value are `args`,
//! generated); the others are functions of `overrides/` (queues, kernels, host waits, extension
//! addresses).
//!
//! - `queues`: queues get profiling while a device view is enabled, invisibly to the program;
//! - `commands`: an enqueue call gets an event (the program's, or an injected one) when its
//!   command is to be recorded; `pending` keeps it until the command completes and writes its
//!   record then (harvested at the program's waits, at flushes, never with an added wait);
//! - `devices`: device identity, and what the shared registry needs to convert its timestamps;
//! - `retained`: the program's events of pending commands, kept alive past the program's release
//!   (libpti's references to them hidden from its reference-count queries);
//! - `kernels`: kernel names; `errcode`: statuses reported through `errcode_ret`;
//! - `query`: libpti's own queries of OpenCL objects.
//!
//! Handles that libpti passes to the runtime are ones the runtime returned, or ones the program
//! passed to a call that reached libpti through the loader, which dereferenced them to find their
//! dispatch table: libpti's own queries on them are as safe as the program's call itself.
//!
//! This module touches the rest of libpti through the engine (the dispatch entry, the view's
//! record writers, critical events, the runtime task, the linker queries) and `backend::device`
//! only.

mod args;
mod commands;
mod devices;
mod enqueues;
mod errcode;
mod extensions;
mod kernels;
pub mod layer;
mod lifetime;
mod next;
mod overrides;
pub mod params;
mod pending;
mod query;
mod queues;
mod retained;
mod wrappers;

use crate::api::{ApiGroup, ApiId};
use crate::backend::contract::{Activation, Backend, Counts};
use crate::backend::device::pending::Ask;
use crate::ids::opencl as ids;
use crate::result::Error;
use crate::sync::writer_lock::ForkLock;

/// The functions that submit or wait for device work: traced while a device view is enabled,
/// so that device records carry their correlation IDs.
const DEVICE_WORK: &[ApiId] = &[
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

/// The functions that submit device work of no record kind, with what that work is: counted, and
/// announced once, while a device view is enabled (`view::loss`). Every other enqueue function is
/// in [`DEVICE_WORK`] and gets records.
const UNRECORDED_WORK: &[(ApiId, &str)] = &[
    (
        ids::clEnqueueWaitForEvents,
        "a wait for events (it takes no event, so it cannot be timed)",
    ),
    (
        ids::clEnqueueBarrier,
        "a barrier of OpenCL 1.1 (it takes no event, so it cannot be timed)",
    ),
    (
        ids::clEnqueueAcquireGLObjects,
        "an acquisition of OpenGL objects",
    ),
    (
        ids::clEnqueueReleaseGLObjects,
        "a release of OpenGL objects",
    ),
    (
        ids::clEnqueueAcquireD3D10ObjectsKHR,
        "an acquisition of Direct3D 10 objects",
    ),
    (
        ids::clEnqueueReleaseD3D10ObjectsKHR,
        "a release of Direct3D 10 objects",
    ),
    (
        ids::clEnqueueMigrateMemObjects,
        "a migration of memory objects",
    ),
    (
        ids::clEnqueueAcquireD3D11ObjectsKHR,
        "an acquisition of Direct3D 11 objects",
    ),
    (
        ids::clEnqueueReleaseD3D11ObjectsKHR,
        "a release of Direct3D 11 objects",
    ),
    (
        ids::clEnqueueAcquireDX9MediaSurfacesKHR,
        "an acquisition of DX9 media surfaces",
    ),
    (
        ids::clEnqueueReleaseDX9MediaSurfacesKHR,
        "a release of DX9 media surfaces",
    ),
    (
        ids::clEnqueueAcquireEGLObjectsKHR,
        "an acquisition of EGL objects",
    ),
    (
        ids::clEnqueueReleaseEGLObjectsKHR,
        "a release of EGL objects",
    ),
    (ids::clEnqueueSVMFree, "a release of SVM pointers"),
    (ids::clEnqueueSVMMigrateMem, "a migration of SVM memory"),
    (ids::clEnqueueMigrateMemINTEL, "a migration of USM memory"),
    (ids::clEnqueueMemAdviseINTEL, "memory advice"),
    (
        ids::clEnqueueCommandBufferKHR,
        "the execution of a command buffer",
    ),
    (
        ids::clEnqueueAcquireExternalMemObjectsKHR,
        "an acquisition of external memory objects",
    ),
    (
        ids::clEnqueueReleaseExternalMemObjectsKHR,
        "a release of external memory objects",
    ),
    (ids::clEnqueueWaitSemaphoresKHR, "a wait on semaphores"),
    (ids::clEnqueueSignalSemaphoresKHR, "a signal of semaphores"),
];

/// The OpenCL backend, as the session sees it.
pub(crate) struct OpenCl;

impl Backend for OpenCl {
    fn group(&self) -> ApiGroup {
        ApiGroup::OpenCl
    }

    fn device_work(&self) -> &'static [ApiId] {
        DEVICE_WORK
    }

    fn unrecorded_work(&self) -> &'static [(ApiId, &'static str)] {
        UNRECORDED_WORK
    }

    /// The layer is loaded by the OpenCL loader, not attached by libpti: activation only checks
    /// that it still can be (see `lifetime::check_late_load`), and at every flush whether the
    /// process has a loader that cannot load layers (`layer::check_loaders`: said once, also to a
    /// tool that asked for nothing of OpenCL yet, since no OpenCL call can ever be traced then).
    fn activate(&self, why: Activation) -> Result<(), Error> {
        match why {
            Activation::Flush { .. } => {
                layer::check_loaders();
                Ok(())
            }
            Activation::Named | Activation::Implied => lifetime::check_late_load(why),
        }
    }

    fn harvest(&self) {
        pending::PENDING.harvest(Ask::All);
    }

    fn exit(&self) {
        pending::PENDING.abandon("OpenCL", "the process exits");
    }

    fn fork_locks(&self) -> Vec<&'static dyn ForkLock> {
        let mut locks = vec![
            extensions::fork_lock(),
            commands::fork_lock(),
            queues::fork_lock(),
        ];
        locks.extend(devices::DEVICES.fork_locks());
        locks.extend(pending::PENDING.fork_locks());
        locks.push(retained::fork_lock());
        locks
    }

    /// The parent's pending commands are forgotten (the parent records them).
    fn forget_in_child(&self) {
        pending::PENDING.forget_in_child();
        retained::forget_in_child();
    }

    fn counts(&self) -> Counts {
        Counts {
            intercepted_functions: layer::intercepted_entries(),
            pending_commands: pending::PENDING.count(),
        }
    }
}
