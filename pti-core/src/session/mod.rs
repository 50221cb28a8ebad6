//! # The session: a tool's requests, and what each means for the backends
//!
//! Tools change libpti's configuration here and only here: the C API (`pti-capi`) and Rust tools
//! subscribe, enable and flush through this module. Each function first changes the engine
//! (subscribers and enables in `callback`, views and filters in `view`), then tells the backends
//! what the change means for them, through their contract (`backend::contract::Backend`), with
//! the reason ([`Activation`](crate::backend::contract::Activation)). That policy is written
//! once, in [`activate`] and the table below:
//!
//! | request | backends told | reason |
//! | --- | --- | --- |
//! | [`enable_callback`] of a function of group G | G's | named |
//! | [`enable_domain`] (driver API, runtime API) | the domain's groups' | implied |
//! | [`enable_view`] (driver API, a device view) | Level Zero's, OpenCL's | implied |
//! | [`enable_view`] (runtime API, memory allocations) | SYCL's | implied |
//! | [`enable_api`], [`enable_api_class`] for group G | G's | named (implied for ALL) |
//! | [`flush`] | every backend harvests, then is told, with whether something enabled concerns it | flush |
//!
//! A backend told "named" that cannot trace fails the request (its setting stands); told
//! "implied", it raises a critical event only. Every backend concerned is told, also when an
//! earlier one failed.
//!
//! Also here: the process around the engine and the backends (`process`: the `fork()` handlers,
//! the exit hook, the device-work functions the view traces), and the Rust subscriber type
//! ([`Subscriber`]).
//!
//! This is the only module that calls a backend, and nothing below it imports it.

mod process;
mod subscriber;

use crate::api::{ApiGroup, ApiId};
use crate::backend::contract::{Activation, Backend, SHARED};
use crate::backend::{level_zero::LevelZero, opencl::OpenCl, sycl::Sycl};
use crate::interest;
use crate::result::Error;
use crate::view::abi::{pti_api_class, pti_api_group_id, pti_view_kind};
use crate::view::{self, ApiView, BufferCallbacks};
use crate::{clock, ids};

pub use process::install_fork_handlers;
pub use subscriber::{Subscriber, enable_callback, enable_domain, subscribe, unsubscribe};

/// Every backend, in the order they are told things (and take their locks around `fork()`).
static BACKENDS: [&dyn Backend; 3] = [&OpenCl, &LevelZero, &Sycl];

/// The backend of `group`.
fn backend(group: ApiGroup) -> &'static dyn Backend {
    match group {
        ApiGroup::OpenCl => &OpenCl,
        ApiGroup::LevelZero => &LevelZero,
        ApiGroup::Sycl => &Sycl,
    }
}

/// Tells the backends of `groups` that a request concerns them, for reason `why`. Every one is
/// told; the first error is returned.
fn activate(groups: &[ApiGroup], why: Activation) -> Result<(), Error> {
    let mut first_error = Ok(());
    for &group in groups {
        if let Err(e) = backend(group).activate(why) {
            first_error = first_error.and(Err(e));
        }
    }
    first_error
}

/// The API groups whose backends produce the records of view `kind`.
fn view_groups(kind: pti_view_kind) -> &'static [ApiGroup] {
    use pti_view_kind::*;
    match kind {
        PTI_VIEW_DRIVER_API
        | PTI_VIEW_DEVICE_GPU_KERNEL
        | PTI_VIEW_DEVICE_CPU_KERNEL
        | PTI_VIEW_DEVICE_GPU_MEM_COPY
        | PTI_VIEW_DEVICE_GPU_MEM_FILL
        | PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P
        | PTI_VIEW_DEVICE_SYNCHRONIZATION
        | PTI_VIEW_EXT_KERNEL_LAUNCH => &[ApiGroup::LevelZero, ApiGroup::OpenCl],
        PTI_VIEW_RUNTIME_API | PTI_VIEW_EXT_MEMORY_ALLOCATION => &[ApiGroup::Sycl],
        PTI_VIEW_EXT_COMMAND_EXECUTION => &[ApiGroup::LevelZero],
        _ => &[],
    }
}

/// Why a filter request concerns its groups: the tool named one group, or every group.
fn filter_reason(group: pti_api_group_id) -> Activation {
    match group {
        pti_api_group_id::PTI_API_GROUP_ALL => Activation::Implied,
        _ => Activation::Named,
    }
}

/// Whether something the tool enabled concerns `group`: a view its backend fills, or a callback
/// of one of its functions.
fn in_use(group: ApiGroup) -> bool {
    pti_view_kind::ALL
        .iter()
        .any(|k| view::is_configured(*k) && view_groups(*k).contains(&group))
        || ids::iter(group).any(|(id, _)| interest::load(group, id) & interest::CALLBACKS != 0)
}

/// Sets the tool's buffer callbacks, which the view API needs before any view is enabled. The
/// first time, also arranges for every buffer to go back to the tool at exit.
pub fn set_buffer_callbacks(callbacks: std::sync::Arc<dyn BufferCallbacks>) {
    process::prepare();
    process::install_exit_hook();
    view::set_callbacks(callbacks);
}

/// Enables view `kind`: its records are written from now on, and the backends that fill it are
/// told (see the module docs). Device views are filled by the backends that produce device work
/// (kernels on CPU devices go to `PTI_VIEW_DEVICE_CPU_KERNEL`, on other devices to
/// `PTI_VIEW_DEVICE_GPU_KERNEL`); `PTI_VIEW_COMMUNICATION` is accepted for compatibility but no
/// backend produces it. Queues and event pools created while a device view is enabled get the
/// profiling that device timestamps need.
pub fn enable_view(kind: pti_view_kind) -> Result<(), Error> {
    process::prepare();
    view::set_enabled(kind, true)?;
    activate(view_groups(kind), Activation::Implied)
}

/// Pauses (`true`) or resumes (`false`) collection, for every view at once; returns whether it
/// was paused. While paused no call or command is recorded, but views stay enabled and libpti
/// keeps the set-up a resume needs (queues and event pools get profiling, kernel names are
/// learned); commands submitted before the pause are written when they complete, and loss
/// records are written as ever. The last call wins: pauses do not nest. `PTI_START_PAUSED=1`
/// starts a process paused; ITT's `__itt_pause` and `__itt_resume` call this.
pub fn set_paused(paused: bool) -> bool {
    process::prepare();
    view::set_paused(paused)
}

/// Whether collection is paused (see [`set_paused`]).
pub fn is_paused() -> bool {
    process::prepare();
    view::is_paused()
}

/// Disables view `kind`. Records already written stay in their buffers until a flush.
pub fn disable_view(kind: pti_view_kind) -> Result<(), Error> {
    view::set_enabled(kind, false)
}

/// Records (`enable`) or stops recording one function in an API view. With
/// `PTI_API_GROUP_ALL`, applies to every group of the view whose table has `api_id`.
pub fn enable_api(
    api_view: ApiView,
    enable: bool,
    group: pti_api_group_id,
    api_id: ApiId,
) -> Result<(), Error> {
    process::prepare();
    let groups = view::enable_api(api_view, enable, group, api_id)?;
    if !enable {
        return Ok(());
    }
    activate(&groups, filter_reason(group))
}

/// Records (`enable`) or stops recording the functions of a class in an API view.
pub fn enable_api_class(
    api_view: ApiView,
    enable: bool,
    class: pti_api_class,
    group: pti_api_group_id,
) -> Result<(), Error> {
    process::prepare();
    let groups = view::enable_api_class(api_view, enable, class, group)?;
    if !enable {
        return Ok(());
    }
    activate(groups, filter_reason(group))
}

/// Returns every group to its initial filter: every function recorded while its API view is
/// enabled (a Rust-API extension; C tools re-enable functions one by one).
pub fn reset_api_filters() {
    view::reset_api_filters();
}

/// Hands every finished record of every thread to the tool before returning: first every
/// backend writes the records of the device work that has completed (without waiting for any
/// that has not), and harvests other threads have under way finish writing theirs; then the
/// backends say why data may be missing (once each), then every buffer is delivered (see
/// `view::FilledBuffer`).
pub fn flush() -> Result<(), Error> {
    let started = clock::now();
    for b in BACKENDS {
        b.harvest();
    }
    SHARED.wait_for_other_harvests();
    for b in BACKENDS {
        let in_use = in_use(b.group());
        // A flush is never refused for what a backend reports.
        let _ = b.activate(Activation::Flush { in_use });
    }
    view::flush(started)
}

/// Whether Level Zero device activity can be collected from whenever a tool enables it: the
/// loader can load its tracing layer at run time (`zelEnableTracingLayer`; Intel's PTI calls this
/// local collection). On a loader without it, Level Zero is traced only if
/// `ZE_ENABLE_TRACING_LAYER=1` was set before the program's first `zeInit` (libpti sets it when it
/// is loaded first), and this answers `Error::L0LocalProfilingNotSupported`.
pub fn gpu_local_available() -> Result<(), Error> {
    if backend(ApiGroup::LevelZero).attaches_at_run_time() {
        Ok(())
    } else {
        Err(Error::L0LocalProfilingNotSupported)
    }
}

/// How many functions of `group` libpti intercepts in this process now: for Level Zero, those
/// whose prologue and epilogue the loader's tracing layer accepted, plus the functions libpti
/// wraps on the extension route (`zeDriverGetExtensionFunctionAddress`) that the layer does not
/// trace; for OpenCL, the dispatch-table entries of the layer (those the layer below provides;
/// extension functions are wrapped as the program asks for them, and not counted); for SYCL, the
/// table's functions once the Unified Runtime's calls reach libpti. 0 while the backend is not
/// attached.
pub fn intercepted_functions(group: ApiGroup) -> usize {
    backend(group).counts().intercepted_functions
}

/// Device commands submitted while a device view was enabled whose records are not written yet,
/// over every backend: each holds one event reference of libpti's, given back when its record is
/// written.
pub fn pending_device_commands() -> usize {
    BACKENDS.iter().map(|b| b.counts().pending_commands).sum()
}
