//! What the tracer does besides tracing, per function: `before_<function>` runs in the prologue
//! (after the ENTER callbacks), `after_<function>` in the epilogue (before the EXIT callbacks);
//! the generator calls every hook named here. Each gets the call's parameter struct (its fields
//! point at the call's arguments; a `before_` hook may change them) and the call's token (0 when
//! the call is not traced).
//!
//! - kernel creation and destruction are reported to kernel-object callbacks, ENTER and EXIT;
//! - creation and destruction calls keep `objects` up to date (also untraced, but not for
//!   libpti's own calls); event pools created while a device view is enabled get host-visible
//!   kernel timestamps, so that the program's own events time its commands (unless
//!   `PTI_LEVEL_ZERO_KEEP_EVENT_POOLS=1`);
//! - appends prepare and complete timed commands (`commands`);
//! - executions of regular lists make their commands pending;
//! - host waits harvest what has finished, and write synchronisation records;
//! - resets and destruction of events, lists and contexts settle their commands first.

#![allow(non_snake_case)]

use core::ffi::{CStr, c_void};
use core::ptr::null_mut;

use pti_sys::level_zero::*;

use super::commands::{self, PENDING, memory_type};
use super::extension;
use super::objects::{self, List};
use super::tracer::{self, is_internal};
use crate::api::{ApiGroup, Domain, Site};
use crate::backend::device::command::{self, Work};
use crate::callback::KernelObject;
use crate::callback::device as callbacks;
use crate::clock;
use crate::dispatch::open;
use crate::ids::level_zero as ids;
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view;
use crate::view::abi::pti_view_synchronization_type;
use crate::view::device::{Engine, Launch, Synchronization};

thread_local! {
    /// Host times at which traced calls began, by token (for synchronisation records and
    /// executions).
    static STARTED: ThreadStack<usize, u64> = const { ThreadStack::new() };
}

fn note_start(token: usize) {
    if token != 0 {
        STARTED.push(token, clock::now());
    }
}

fn take_start(token: usize) -> Option<u64> {
    if token == 0 {
        return None;
    }
    STARTED.take(token)
}

// ---------------------------------------------------------------------------------------------
// Objects

/// What kernel-object callbacks hear of `zeKernelCreate` (`created`) or `zeKernelDestroy` at
/// `site`; NULL `kernel` at the ENTER of a creation.
fn kernel_object(
    created: bool,
    site: Site,
    token: usize,
    kernel: ze_kernel_handle_t,
    module: ze_module_handle_t,
    result: Option<ze_result_t>,
) {
    if is_internal() || !callbacks::listening(Domain::KernelObjects) {
        return;
    }
    let api_id = if created {
        ids::zeKernelCreate
    } else {
        ids::zeKernelDestroy
    };
    let mut event = KernelObject::new(created, site, ApiGroup::LevelZero, api_id);
    event.correlation_id = if token == 0 {
        0
    } else {
        open::correlation_id(token)
    };
    event.return_code = result.map(|r| r as i32);
    event.kernel = kernel.cast();
    event.module = module.cast();
    event.name = (created && !kernel.is_null())
        .then(|| objects::kernel_name(kernel))
        .flatten();
    callbacks::kernel_object(&event);
}

pub(super) fn before_zeKernelCreate(p: &mut ze_kernel_create_params_t, token: usize) {
    // SAFETY: the field points at the call's argument.
    let module = unsafe { *p.phModule };
    kernel_object(true, Site::Enter, token, null_mut(), module, None);
}

pub(super) fn after_zeKernelCreate(
    p: &mut ze_kernel_create_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a descriptor with the kernel's
    // NUL-terminated name and the out-pointer the driver has just written (on success).
    let (kernel, module) = unsafe {
        let (kernel, desc) = (**p.pphKernel, *p.pdesc);
        if result == ZE_RESULT_SUCCESS
            && !is_internal()
            && !kernel.is_null()
            && !desc.is_null()
            && !(*desc).pKernelName.is_null()
        {
            objects::kernel_created(kernel, CStr::from_ptr((*desc).pKernelName));
        }
        let kernel = if result == ZE_RESULT_SUCCESS {
            kernel
        } else {
            null_mut()
        };
        (kernel, *p.phModule)
    };
    kernel_object(true, Site::Exit, token, kernel, module, Some(result));
}

pub(super) fn before_zeKernelDestroy(p: &mut ze_kernel_destroy_params_t, token: usize) {
    // SAFETY: the field points at the call's argument.
    let kernel = unsafe { *p.phKernel };
    kernel_object(false, Site::Enter, token, kernel, null_mut(), None);
    objects::kernel_destroyed(kernel);
}

pub(super) fn after_zeKernelDestroy(
    p: &mut ze_kernel_destroy_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let kernel = unsafe { *p.phKernel };
    kernel_object(false, Site::Exit, token, kernel, null_mut(), Some(result));
}

pub(super) fn after_zeCommandListCreate(
    p: &mut ze_command_list_create_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the list.
        unsafe {
            objects::list_created(
                **p.pphCommandList,
                *p.phContext,
                *p.phDevice,
                false,
                Engine::default(),
                false,
            )
        };
    }
}

pub(super) fn after_zeCommandListCreateImmediate(
    p: &mut ze_command_list_create_immediate_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the list, and
        // the queue descriptor (NULL-checked) is the program's.
        unsafe {
            let desc = *p.paltdesc;
            let synchronous = !desc.is_null() && (*desc).mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
            objects::list_created(
                **p.pphCommandList,
                *p.phContext,
                *p.phDevice,
                true,
                engine_of(desc),
                synchronous,
            );
        }
    }
}

pub(super) fn before_zeCommandListDestroy(p: &mut ze_command_list_destroy_params_t, _token: usize) {
    // SAFETY: the field points at the call's argument.
    if let Some(list) = objects::list_destroyed(unsafe { *p.phCommandList }) {
        commands::forget_recorded(&list);
    }
}

pub(super) fn before_zeCommandListReset(p: &mut ze_command_list_reset_params_t, _token: usize) {
    // SAFETY: the field points at the call's argument.
    if let Some(list) = objects::list(unsafe { *p.phCommandList }) {
        commands::forget_recorded(&list);
    }
}

pub(super) fn after_zeCommandQueueCreate(
    p: &mut ze_command_queue_create_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the queue,
        // and the descriptor (NULL-checked) is the program's.
        unsafe {
            objects::queue_created(
                **p.pphCommandQueue,
                *p.phContext,
                *p.phDevice,
                engine_of(*p.pdesc),
            )
        };
    }
}

/// The engine a queue descriptor names.
///
/// # Safety
/// `desc` is NULL or points to a readable descriptor.
unsafe fn engine_of(desc: *const ze_command_queue_desc_t) -> Engine {
    // SAFETY: as the caller promises.
    unsafe { desc.as_ref() }.map_or(Engine::default(), |d| Engine {
        ordinal: d.ordinal,
        index: d.index,
    })
}

pub(super) fn before_zeCommandQueueDestroy(
    p: &mut ze_command_queue_destroy_params_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    objects::queue_destroyed(unsafe { *p.phCommandQueue });
}

/// The flags a pool created now gets from libpti: host-visible kernel timestamps added to a pool
/// of known flags that lacks them, while a device view is enabled (not for IPC pools, nor when the
/// user asked libpti to keep the program's pools).
fn upgraded_flags(flags: ze_event_pool_flags_t) -> Option<ze_event_pool_flags_t> {
    let known = ZE_EVENT_POOL_FLAG_HOST_VISIBLE
        | ZE_EVENT_POOL_FLAG_IPC
        | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
    let wanted = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
    let upgrade = tracer::upgrades_event_pools()
        && view::any_device_view_configured()
        && flags & !known == 0
        && flags & ZE_EVENT_POOL_FLAG_IPC == 0
        && flags & wanted != wanted;
    upgrade.then_some(flags | wanted)
}

/// A program's pool descriptor replaced by libpti's copy: (the program's, the copy).
type ReplacedDesc = (*const ze_event_pool_desc_t, Box<ze_event_pool_desc_t>);

thread_local! {
    /// Per `zeEventPoolCreate` in progress on this thread, by token: the descriptor replaced, if
    /// it was.
    static POOL_DESCS: ThreadStack<usize, Option<ReplacedDesc>> = const { ThreadStack::new() };
}

pub(super) fn before_zeEventPoolCreate(p: &mut ze_event_pool_create_params_t, token: usize) {
    if is_internal() {
        return;
    }
    // SAFETY: the field points at the call's descriptor argument (NULL-checked before use).
    let original = unsafe { *p.pdesc };
    // SAFETY: a non-NULL descriptor of the program's, read once.
    let copy = (!original.is_null())
        .then(|| unsafe { *original })
        .and_then(|desc| {
            upgraded_flags(desc.flags).map(|flags| Box::new(ze_event_pool_desc_t { flags, ..desc }))
        });
    let replacement: Option<*const ze_event_pool_desc_t> = copy.as_deref().map(|d| d as *const _);
    let pushed = POOL_DESCS.push(token, copy.map(|c| (original, c)));
    if let (true, Some(replacement)) = (pushed, replacement) {
        // SAFETY: the field points at the call's descriptor argument; the copy lives in
        // POOL_DESCS (on the heap) until the epilogue puts the program's back.
        unsafe { *p.pdesc = replacement };
    }
}

pub(super) fn after_zeEventPoolCreate(
    p: &mut ze_event_pool_create_params_t,
    result: ze_result_t,
    token: usize,
) {
    if is_internal() {
        return;
    }
    let replaced = POOL_DESCS.take(token).flatten();
    // SAFETY: the fields point at the call's arguments; the descriptor is the program's or
    // libpti's copy (alive in `replaced`), and the driver has written the pool on success.
    unsafe {
        let flags = match &replaced {
            Some((original, copy)) => {
                *p.pdesc = *original;
                copy.flags
            }
            None if !(*p.pdesc).is_null() => (**p.pdesc).flags,
            None => return,
        };
        if result == ZE_RESULT_SUCCESS {
            objects::pool_created(**p.pphEventPool, flags);
        }
    }
}

pub(super) fn before_zeEventPoolDestroy(p: &mut ze_event_pool_destroy_params_t, _token: usize) {
    if !is_internal() {
        // SAFETY: the field points at the call's argument.
        objects::pool_destroyed(unsafe { *p.phEventPool });
    }
}

pub(super) fn after_zeEventCreate(
    p: &mut ze_event_create_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the event.
        unsafe { objects::event_created(**p.pphEvent, *p.phEventPool) };
    }
}

pub(super) fn before_zeEventDestroy(p: &mut ze_event_destroy_params_t, _token: usize) {
    if !is_internal() {
        // SAFETY: the field points at the call's argument.
        let event = unsafe { *p.phEvent };
        commands::event_going(event);
        objects::event_destroyed(event);
    }
}

pub(super) fn before_zeEventHostReset(p: &mut ze_event_host_reset_params_t, _token: usize) {
    if !is_internal() {
        // SAFETY: the field points at the call's argument.
        commands::event_going(unsafe { *p.phEvent });
    }
}

pub(super) fn before_zeContextDestroy(p: &mut ze_context_destroy_params_t, _token: usize) {
    // SAFETY: the field points at the call's argument.
    commands::context_going(unsafe { *p.phContext });
}

// ---------------------------------------------------------------------------------------------
// The extension route

pub(super) fn after_zeDriverGetExtensionFunctionAddress(
    p: &mut ze_driver_get_extension_function_address_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments: the program's NUL-terminated name and
    // the address the driver has just written (NULL-checked).
    unsafe {
        let (name, address) = (*p.pname, *p.pppFunctionAddress);
        if !name.is_null() && !address.is_null() {
            *address = extension::hand_out(CStr::from_ptr(name), *address);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Appends

/// A launch of `kernel` in `counts` groups (NULL: not known to the host, an indirect launch) of
/// `size` work-items (None: as last set on the kernel).
///
/// # Safety
/// `counts` is NULL or points at the program's group counts.
unsafe fn kernel(
    kernel: ze_kernel_handle_t,
    counts: *const ze_group_count_t,
    size: Option<[u32; 3]>,
) -> Work {
    // SAFETY: as the caller promises.
    let count = unsafe { counts.as_ref() }
        .map_or([0; 3], |c| [c.groupCountX, c.groupCountY, c.groupCountZ]);
    Work::Kernel {
        name: objects::kernel_name(kernel).unwrap_or(c"<unnamed kernel>"),
        kernel: kernel.cast(),
        launch: Launch::groups(count, size.unwrap_or_else(|| objects::group_size(kernel))),
    }
}

pub(super) fn after_zeKernelSetGroupSize(
    p: &mut ze_kernel_set_group_size_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments.
        unsafe {
            objects::group_size_set(
                *p.phKernel,
                [*p.pgroupSizeX, *p.pgroupSizeY, *p.pgroupSizeZ],
            )
        };
    }
}

fn copy(context: ze_context_handle_t, dst: *const c_void, src: *const c_void, bytes: u64) -> Work {
    Work::Copy {
        src: memory_type(context, src),
        dst: memory_type(context, dst),
        bytes,
    }
}

/// A fill of `bytes` bytes at `ptr` with the `pattern_size`-byte `pattern`.
///
/// # Safety
/// `pattern` is NULL or points at `pattern_size` readable bytes (the program's argument).
unsafe fn fill(
    context: ze_context_handle_t,
    ptr: *const c_void,
    pattern: *const c_void,
    pattern_size: usize,
    bytes: usize,
) -> Work {
    let mut value = [0u8; 8];
    if !pattern.is_null() {
        // SAFETY: as the caller promises; at most 8 bytes are read.
        unsafe {
            core::ptr::copy_nonoverlapping(
                pattern.cast::<u8>(),
                value.as_mut_ptr(),
                pattern_size.min(8),
            )
        };
    }
    Work::Fill {
        memory: memory_type(context, ptr),
        bytes: bytes as u64,
        value: u64::from_le_bytes(value),
    }
}

fn barrier(kind: pti_view_synchronization_type, wait_events: u32) -> Work {
    Work::Barrier { kind, wait_events }
}

/// Generates the prologue and epilogue hooks of an append whose signal-event parameter is
/// `phSignalEvent`, describing its work with `$work` (given the list's context, NULL for a list
/// libpti does not know, and the parameters).
macro_rules! append_hooks {
    ($before:ident, $after:ident, $params:ty, $id:ident, |$context:ident, $p:ident| $work:expr) => {
        pub(super) fn $before($p: &mut $params, token: usize) {
            // SAFETY: the fields point at the call's arguments (the signal event may be
            // replaced: the tracing layer passes what the prologue leaves there).
            let (list_handle, signal) = unsafe { (*$p.phCommandList, &mut *$p.phSignalEvent) };
            let params: &$params = $p;
            commands::prepare(
                token,
                ids::$id,
                list_handle,
                signal,
                |list: Option<&List>| {
                    let $context = list.map_or(core::ptr::null_mut(), |l| l.context);
                    let $p = params;
                    #[allow(unused_unsafe)] // some descriptions read no argument
                    // SAFETY: the fields point at the call's arguments.
                    unsafe {
                        $work
                    }
                },
            );
        }

        pub(super) fn $after($p: &mut $params, result: ze_result_t, token: usize) {
            // SAFETY: the field points at the call's signal-event argument.
            commands::complete(token, result, unsafe { &mut *$p.phSignalEvent });
        }
    };
}

append_hooks!(
    before_zeCommandListAppendLaunchKernel,
    after_zeCommandListAppendLaunchKernel,
    ze_command_list_append_launch_kernel_params_t,
    zeCommandListAppendLaunchKernel,
    |_context, p| kernel(*p.phKernel, *p.ppLaunchFuncArgs, None)
);

append_hooks!(
    before_zeCommandListAppendLaunchCooperativeKernel,
    after_zeCommandListAppendLaunchCooperativeKernel,
    ze_command_list_append_launch_cooperative_kernel_params_t,
    zeCommandListAppendLaunchCooperativeKernel,
    |_context, p| kernel(*p.phKernel, *p.ppLaunchFuncArgs, None)
);

append_hooks!(
    before_zeCommandListAppendLaunchKernelIndirect,
    after_zeCommandListAppendLaunchKernelIndirect,
    ze_command_list_append_launch_kernel_indirect_params_t,
    zeCommandListAppendLaunchKernelIndirect,
    |_context, p| kernel(*p.phKernel, core::ptr::null(), None)
);

append_hooks!(
    before_zeCommandListAppendMemoryCopy,
    after_zeCommandListAppendMemoryCopy,
    ze_command_list_append_memory_copy_params_t,
    zeCommandListAppendMemoryCopy,
    |context, p| copy(context, *p.pdstptr, *p.psrcptr, *p.psize as u64)
);

append_hooks!(
    before_zeCommandListAppendMemoryCopyFromContext,
    after_zeCommandListAppendMemoryCopyFromContext,
    ze_command_list_append_memory_copy_from_context_params_t,
    zeCommandListAppendMemoryCopyFromContext,
    |context, p| Work::Copy {
        src: memory_type(*p.phContextSrc, *p.psrcptr),
        dst: memory_type(context, *p.pdstptr),
        bytes: *p.psize as u64,
    }
);

append_hooks!(
    before_zeCommandListAppendMemoryCopyRegion,
    after_zeCommandListAppendMemoryCopyRegion,
    ze_command_list_append_memory_copy_region_params_t,
    zeCommandListAppendMemoryCopyRegion,
    |context, p| {
        let region = *p.pdstRegion;
        let bytes = if region.is_null() {
            0
        } else {
            u64::from((*region).width)
                * u64::from((*region).height.max(1))
                * u64::from((*region).depth.max(1))
        };
        copy(context, *p.pdstptr, *p.psrcptr, bytes)
    }
);

append_hooks!(
    before_zeCommandListAppendMemoryFill,
    after_zeCommandListAppendMemoryFill,
    ze_command_list_append_memory_fill_params_t,
    zeCommandListAppendMemoryFill,
    |context, p| fill(context, *p.pptr, *p.ppattern, *p.ppattern_size, *p.psize)
);

append_hooks!(
    before_zeCommandListAppendBarrier,
    after_zeCommandListAppendBarrier,
    ze_command_list_append_barrier_params_t,
    zeCommandListAppendBarrier,
    |_context, p| barrier(
        pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_EXECUTION,
        *p.pnumWaitEvents
    )
);

append_hooks!(
    before_zeCommandListAppendMemoryRangesBarrier,
    after_zeCommandListAppendMemoryRangesBarrier,
    ze_command_list_append_memory_ranges_barrier_params_t,
    zeCommandListAppendMemoryRangesBarrier,
    |_context, p| barrier(
        pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_MEMORY,
        *p.pnumWaitEvents
    )
);

// The appends of spec 1.13 and later, which programs on older loaders reach through
// `zeDriverGetExtensionFunctionAddress` (see `extension`).

append_hooks!(
    before_zeCommandListAppendLaunchKernelWithParameters,
    after_zeCommandListAppendLaunchKernelWithParameters,
    ze_command_list_append_launch_kernel_with_parameters_params_t,
    zeCommandListAppendLaunchKernelWithParameters,
    |_context, p| kernel(*p.phKernel, *p.ppGroupCounts, None)
);

append_hooks!(
    before_zeCommandListAppendLaunchKernelWithArguments,
    after_zeCommandListAppendLaunchKernelWithArguments,
    ze_command_list_append_launch_kernel_with_arguments_params_t,
    zeCommandListAppendLaunchKernelWithArguments,
    |_context, p| {
        let size = p
            .pgroupSizes
            .as_ref()
            .map(|s| [s.groupSizeX, s.groupSizeY, s.groupSizeZ]);
        kernel(*p.phKernel, p.pgroupCounts, size)
    }
);

append_hooks!(
    before_zeCommandListAppendMemoryCopyWithParameters,
    after_zeCommandListAppendMemoryCopyWithParameters,
    ze_command_list_append_memory_copy_with_parameters_params_t,
    zeCommandListAppendMemoryCopyWithParameters,
    |context, p| copy(context, *p.pdstptr, *p.psrcptr, *p.psize as u64)
);

append_hooks!(
    before_zeCommandListAppendMemoryFillWithParameters,
    after_zeCommandListAppendMemoryFillWithParameters,
    ze_command_list_append_memory_fill_with_parameters_params_t,
    zeCommandListAppendMemoryFillWithParameters,
    |context, p| fill(context, *p.pptr, *p.ppattern, *p.ppattern_size, *p.psize)
);

// A host function runs in the list's stream, like OpenCL's native kernels: a kernel record.
append_hooks!(
    before_zeCommandListAppendHostFunction,
    after_zeCommandListAppendHostFunction,
    ze_command_list_append_host_function_params_t,
    zeCommandListAppendHostFunction,
    |_context, _p| Work::Kernel {
        name: c"<host function>",
        kernel: core::ptr::null_mut(),
        launch: Launch::default(),
    }
);

// ---------------------------------------------------------------------------------------------
// Executions of regular lists

/// The regular lists among the `n` lists at `lists` (a call's arguments), each with the number
/// of times the call passes it.
///
/// # Safety
/// `lists` is NULL or points at `n` list handles.
unsafe fn regular_lists(
    n: u32,
    lists: *const ze_command_list_handle_t,
) -> Vec<(std::sync::Arc<List>, usize)> {
    if lists.is_null() {
        return Vec::new();
    }
    let mut out: Vec<(std::sync::Arc<List>, usize)> = Vec::new();
    for i in 0..n as usize {
        // SAFETY: as the caller promises.
        let handle = unsafe { *lists.add(i) };
        match out.iter_mut().find(|(l, _)| l.handle == handle) {
            Some((_, times)) => *times += 1,
            None => out.extend(
                objects::list(handle)
                    .filter(|l| !l.immediate)
                    .map(|l| (l, 1)),
            ),
        }
    }
    out
}

/// The regular lists of an execute call, each with the number of times the call passes it.
///
/// # Safety
/// `p` is the call's parameter struct.
unsafe fn executed_lists(
    p: &ze_command_queue_execute_command_lists_params_t,
) -> Vec<(std::sync::Arc<List>, usize)> {
    // SAFETY: the fields point at the call's arguments: a count and that many lists.
    unsafe { regular_lists(*p.pnumCommandLists, *p.pphCommandLists) }
}

/// Before a call that runs regular lists: their previous executions settled.
fn before_running(lists: Vec<(std::sync::Arc<List>, usize)>, token: usize) {
    if is_internal() {
        return;
    }
    for (list, _) in lists {
        commands::executing(&list);
    }
    note_start(token);
}

/// After a call that ran regular lists: their commands pending, the execution (`by`, asked
/// only then) noted.
fn after_running(
    lists: impl FnOnce() -> Vec<(std::sync::Arc<List>, usize)>,
    by: impl FnOnce() -> commands::Executor,
    result: ze_result_t,
    token: usize,
) {
    let Some(entered) = take_start(token) else {
        return;
    };
    if result != ZE_RESULT_SUCCESS || !view::any_device_view() {
        return;
    }
    let by = by();
    for (list, times) in lists() {
        commands::executed(&list, token, entered, times, &by);
    }
}

pub(super) fn before_zeCommandQueueExecuteCommandLists(
    p: &mut ze_command_queue_execute_command_lists_params_t,
    token: usize,
) {
    // SAFETY: the call's parameter struct.
    before_running(unsafe { executed_lists(p) }, token);
}

pub(super) fn after_zeCommandQueueExecuteCommandLists(
    p: &mut ze_command_queue_execute_command_lists_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the call's parameter struct; its queue field points at the call's argument.
    let queue = unsafe { *p.phCommandQueue };
    let by = || commands::Executor {
        api_id: ids::zeCommandQueueExecuteCommandLists,
        queue: queue.cast(),
        engine: objects::queue_engine(queue),
    };
    // SAFETY: the call's parameter struct.
    after_running(|| unsafe { executed_lists(p) }, by, result, token);
}

// Regular lists run on an immediate list (spec 1.9 and 1.14): as on a queue.

pub(super) fn before_zeCommandListImmediateAppendCommandListsExp(
    p: &mut ze_command_list_immediate_append_command_lists_exp_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a count and that many lists.
    before_running(
        unsafe { regular_lists(*p.pnumCommandLists, *p.pphCommandLists) },
        token,
    );
}

pub(super) fn after_zeCommandListImmediateAppendCommandListsExp(
    p: &mut ze_command_list_immediate_append_command_lists_exp_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let list = unsafe { *p.phCommandListImmediate };
    let by = || commands::Executor {
        api_id: ids::zeCommandListImmediateAppendCommandListsExp,
        queue: list.cast(),
        engine: objects::immediate_engine(list),
    };
    // SAFETY: as above.
    after_running(
        || unsafe { regular_lists(*p.pnumCommandLists, *p.pphCommandLists) },
        by,
        result,
        token,
    );
}

pub(super) fn before_zeCommandListImmediateAppendCommandListsWithParameters(
    p: &mut ze_command_list_immediate_append_command_lists_with_parameters_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a count and that many lists.
    before_running(
        unsafe { regular_lists(*p.pnumCommandLists, *p.pphCommandLists) },
        token,
    );
}

pub(super) fn after_zeCommandListImmediateAppendCommandListsWithParameters(
    p: &mut ze_command_list_immediate_append_command_lists_with_parameters_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let list = unsafe { *p.phCommandListImmediate };
    let by = || commands::Executor {
        api_id: ids::zeCommandListImmediateAppendCommandListsWithParameters,
        queue: list.cast(),
        engine: objects::immediate_engine(list),
    };
    // SAFETY: as above.
    after_running(
        || unsafe { regular_lists(*p.pnumCommandLists, *p.pphCommandLists) },
        by,
        result,
        token,
    );
}

// ---------------------------------------------------------------------------------------------
// Host waits

fn wait_record(
    kind: pti_view_synchronization_type,
    api_id: u32,
    context: *mut c_void,
    queue: *mut c_void,
    event: *mut c_void,
    result: ze_result_t,
) -> Synchronization {
    Synchronization {
        kind,
        group: ApiGroup::LevelZero,
        api_id,
        context,
        queue,
        event,
        start: 0,
        end: 0,
        thread_id: 0,
        correlation_id: 0,
        wait_events: u32::from(!event.is_null()),
        status: result,
    }
}

/// After a host wait whose start `before_` noted: what has finished is harvested (if the wait
/// succeeded, and is the program's), and the wait's synchronisation record written. A record
/// without an event counts no wait events (`wait_record`).
fn host_waited(token: usize, result: ze_result_t, record: impl FnOnce() -> Synchronization) {
    let end = clock::now();
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        PENDING.harvest_soon();
    }
    if let Some(start) = take_start(token) {
        command::host_wait(open::correlation_id(token), (start, end), record);
    }
}

pub(super) fn before_zeEventHostSynchronize(
    _p: &mut ze_event_host_synchronize_params_t,
    token: usize,
) {
    note_start(token);
}

pub(super) fn after_zeEventHostSynchronize(
    p: &mut ze_event_host_synchronize_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let event = unsafe { *p.phEvent };
    host_waited(token, result, || {
        wait_record(
            pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_EVENT,
            ids::zeEventHostSynchronize,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            event.cast(),
            result,
        )
    });
}

pub(super) fn after_zeEventQueryStatus(
    p: &mut ze_event_query_status_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the field points at the call's argument.
        let event = unsafe { *p.phEvent };
        PENDING.harvest_matching(|c| c.uses(event));
    }
}

pub(super) fn before_zeCommandQueueSynchronize(
    _p: &mut ze_command_queue_synchronize_params_t,
    token: usize,
) {
    note_start(token);
}

pub(super) fn after_zeCommandQueueSynchronize(
    p: &mut ze_command_queue_synchronize_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let queue = unsafe { *p.phCommandQueue };
    host_waited(token, result, || {
        wait_record(
            pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_QUEUE,
            ids::zeCommandQueueSynchronize,
            objects::queue_context(queue),
            queue.cast(),
            core::ptr::null_mut(),
            result,
        )
    });
}

pub(super) fn before_zeCommandListHostSynchronize(
    _p: &mut ze_command_list_host_synchronize_params_t,
    token: usize,
) {
    note_start(token);
}

pub(super) fn after_zeCommandListHostSynchronize(
    p: &mut ze_command_list_host_synchronize_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let list = unsafe { *p.phCommandList };
    host_waited(token, result, || {
        wait_record(
            pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_LIST,
            ids::zeCommandListHostSynchronize,
            objects::list_context(list),
            list.cast(),
            core::ptr::null_mut(),
            result,
        )
    });
}

pub(super) fn before_zeFenceHostSynchronize(
    _p: &mut ze_fence_host_synchronize_params_t,
    token: usize,
) {
    note_start(token);
}

pub(super) fn after_zeFenceHostSynchronize(
    _p: &mut ze_fence_host_synchronize_params_t,
    result: ze_result_t,
    token: usize,
) {
    host_waited(token, result, || {
        wait_record(
            pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_FENCE,
            ids::zeFenceHostSynchronize,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            result,
        )
    });
}
