//! What the tracer does besides tracing, per function: `before_<function>` runs in the prologue
//! (after the ENTER callbacks), `after_<function>` in the epilogue (before the EXIT callbacks);
//! the generator calls every hook named here. Each gets the call's parameter struct (its fields
//! point at the call's arguments; a `before_` hook may change them) and the call's token (0 when
//! the call is not traced).
//!
//! - kernel creation and destruction are reported to kernel-object callbacks, ENTER and EXIT;
//! - creation and destruction calls keep `objects` up to date (also untraced, but not for
//!   libpti's own calls); event pools and counter-based events created while a device view is
//!   enabled get kernel timestamps the program never sees (`pools`), so that the program's own
//!   events time its commands;
//! - appends prepare and complete timed commands (`commands`), after `guards` secured what a
//!   change of the program's event would lose;
//! - executions of regular lists and replays of graphs make their commands pending
//!   (`executions`); graph captures and mutable command lists are followed;
//! - host waits harvest what has finished, and write synchronisation records;
//! - resets and destruction of events, lists and contexts settle their commands first.

#![allow(non_snake_case)]

use core::ffi::{CStr, c_void};
use core::ptr::null_mut;
use std::sync::Arc;

use pti_sys::level_zero::*;
use pti_sys::level_zero_intel::*;

use super::commands::{self, PENDING, memory_type};
use super::executions::{self, Batch, Executor, Target};
use super::objects::{self, List, Recorded};
use super::source::Source;
use super::tracer::is_internal;
use super::{events, extension, guards, pools};
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
/// `site`; NULL `kernel` at the ENTER of a creation, where `desc_name` is the name the program
/// asks for (as Intel PTI gives it at that ENTER).
fn kernel_object(
    created: bool,
    site: Site,
    token: usize,
    (kernel, module): (ze_kernel_handle_t, ze_module_handle_t),
    desc_name: Option<&CStr>,
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
    event.name = match desc_name {
        Some(name) => Some(crate::intern::intern(name)),
        None => (created && !kernel.is_null())
            .then(|| objects::kernel_name(kernel))
            .flatten(),
    };
    callbacks::kernel_object(&event);
}

pub(super) fn before_zeKernelCreate(p: &mut ze_kernel_create_params_t, token: usize) {
    // SAFETY: the fields point at the call's arguments; the descriptor, where not NULL, names
    // the kernel with a NUL-terminated string that lives for the call.
    let (module, name) = unsafe {
        let desc = *p.pdesc;
        let name = (!desc.is_null() && !(*desc).pKernelName.is_null())
            .then(|| CStr::from_ptr((*desc).pKernelName));
        (*p.phModule, name)
    };
    kernel_object(true, Site::Enter, token, (null_mut(), module), name, None);
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
    kernel_object(
        true,
        Site::Exit,
        token,
        (kernel, module),
        None,
        Some(result),
    );
}

pub(super) fn before_zeKernelDestroy(p: &mut ze_kernel_destroy_params_t, token: usize) {
    // SAFETY: the field points at the call's argument.
    let kernel = unsafe { *p.phKernel };
    kernel_object(false, Site::Enter, token, (kernel, null_mut()), None, None);
    objects::kernel_destroyed(kernel);
}

pub(super) fn after_zeKernelDestroy(
    p: &mut ze_kernel_destroy_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the field points at the call's argument.
    let kernel = unsafe { *p.phKernel };
    kernel_object(
        false,
        Site::Exit,
        token,
        (kernel, null_mut()),
        None,
        Some(result),
    );
}

pub(super) fn after_zeCommandListCreate(
    p: &mut ze_command_list_create_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments; the driver has written the list, and the
    // descriptor (NULL-checked) is the program's.
    unsafe {
        let desc = (*p.pdesc).as_ref();
        let new = objects::NewList {
            handle: **p.pphCommandList,
            context: *p.phContext,
            device: *p.phDevice,
            immediate: false,
            in_order: desc.is_some_and(|d| d.flags & ZE_COMMAND_LIST_FLAG_IN_ORDER != 0),
            // Its queue group: where libpti may append its copies (a regular list's commands
            // run on the engine of the queue that executes it).
            engine: Engine {
                ordinal: desc.map_or(0, |d| d.commandQueueGroupOrdinal),
                index: 0,
            },
            synchronous: false,
        };
        objects::list_created(new, objects::Recording::default());
    }
}

pub(super) fn after_zeCommandListCreateImmediate(
    p: &mut ze_command_list_create_immediate_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments; the driver has written the list, and the
    // queue descriptor (NULL-checked) is the program's.
    unsafe {
        let desc = *p.paltdesc;
        let d = desc.as_ref();
        let new = objects::NewList {
            handle: **p.pphCommandList,
            context: *p.phContext,
            device: *p.phDevice,
            immediate: true,
            in_order: d.is_some_and(|d| d.flags & ZE_COMMAND_QUEUE_FLAG_IN_ORDER != 0),
            engine: engine_of(desc),
            synchronous: d.is_some_and(|d| d.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS),
        };
        objects::list_created(new, objects::Recording::default());
    }
}

/// A clone holds its source's commands (and uses libpti's events of them, which stay the
/// source's: the specification has the clone destroyed before its source).
pub(super) fn after_zeCommandListCreateCloneExp(
    p: &mut ze_command_list_create_clone_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments; the driver has written the clone.
    let (source, clone) = unsafe { (*p.phCommandList, **p.pphClonedCommandList) };
    let Some(source) = objects::list(source) else {
        return;
    };
    let recording = {
        let r = source.recording();
        objects::Recording {
            commands: r.commands.clone(),
            touched: r.touched.clone(),
            borrowed: true,
            ..Default::default()
        }
    };
    let new = objects::NewList {
        handle: clone,
        context: source.context,
        device: source.device,
        immediate: false,
        in_order: source.in_order,
        engine: source.engine,
        synchronous: false,
    };
    objects::list_created(new, recording);
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

// ---------------------------------------------------------------------------------------------
// Event pools and events: timestamps added where the program asked for none, never seen by it
// (`pools`)

/// What the prologue of a pool creation learnt of the descriptor (the epilogue reads nothing of
/// it: another tool's epilogue, run before libpti's, may already have freed a copy of its own it
/// had put in the argument).
struct PoolCreation {
    /// The descriptor libpti found in the argument, and its copy put there instead, if any.
    replaced: Option<(*const ze_event_pool_desc_t, Box<ze_event_pool_desc_t>)>,
    /// The flags asked for, and those the pool is created with.
    asked: ze_event_pool_flags_t,
    made: ze_event_pool_flags_t,
    counter_based: bool,
}

thread_local! {
    /// Per `zeEventPoolCreate` in progress on this thread, by token.
    static POOL_CREATIONS: ThreadStack<usize, PoolCreation> = const { ThreadStack::new() };
}

pub(super) fn before_zeEventPoolCreate(p: &mut ze_event_pool_create_params_t, token: usize) {
    if is_internal() {
        return;
    }
    // SAFETY: the field points at the call's descriptor argument (NULL-checked before use).
    let original = unsafe { *p.pdesc };
    // SAFETY: a non-NULL descriptor, read once, here.
    let Some(desc) = (unsafe { original.as_ref() }) else {
        return;
    };
    // SAFETY: the descriptor of the call.
    let (upgraded, counter_based) = unsafe { pools::upgrade_pool(desc) };
    let copy = upgraded.map(|flags| Box::new(ze_event_pool_desc_t { flags, ..*desc }));
    let replacement: Option<*const ze_event_pool_desc_t> = copy.as_deref().map(|d| d as *const _);
    let creation = PoolCreation {
        asked: desc.flags,
        made: upgraded.unwrap_or(desc.flags),
        counter_based,
        replaced: copy.map(|c| (original, c)),
    };
    if let (true, Some(replacement)) = (POOL_CREATIONS.push(token, creation), replacement) {
        // SAFETY: the field points at the call's descriptor argument; the copy lives in
        // POOL_CREATIONS (on the heap) until the epilogue puts back what libpti found.
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
    let Some(creation) = POOL_CREATIONS.take(token) else {
        return;
    };
    // SAFETY: the fields point at the call's arguments; what libpti found in the descriptor
    // argument goes back there (as for an append, only where the argument is still libpti's
    // copy); the driver has written the pool on success.
    unsafe {
        if let Some((original, copy)) = &creation.replaced
            && core::ptr::eq(*p.pdesc, &**copy)
        {
            *p.pdesc = *original;
        }
        if result == ZE_RESULT_SUCCESS {
            pools::pool_created(
                **p.pphEventPool,
                *p.phContext,
                creation.asked,
                creation.made,
                creation.counter_based,
            );
        }
    }
}

pub(super) fn before_zeEventPoolDestroy(p: &mut ze_event_pool_destroy_params_t, _token: usize) {
    if !is_internal() {
        // SAFETY: the field points at the call's argument.
        objects::pool_destroyed(unsafe { *p.phEventPool });
    }
}

/// The program asks its pool's flags: those it created the pool with.
pub(super) fn after_zeEventPoolGetFlags(
    p: &mut ze_event_pool_get_flags_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments; the driver has written the flags.
    unsafe {
        if let Some(flags) = pools::program_flags(*p.phEventPool)
            && !(*p.ppFlags).is_null()
        {
            **p.ppFlags = flags;
        }
    }
}

pub(super) fn after_zeEventCreate(
    p: &mut ze_event_create_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the event.
        unsafe { objects::pool_event_created(**p.pphEvent, *p.phEventPool) };
    }
}

thread_local! {
    /// Per creation of a counter-based event in progress on this thread, by token: the
    /// program's flags, and libpti's copy of its descriptor (if it replaced it).
    static CB_DESCS: ThreadStack<usize, (u32, Option<CbDesc>)> = const { ThreadStack::new() };
}

/// A counter-based event's descriptor replaced by libpti's copy (of either creation function's
/// layout): (the program's descriptor, the copy).
type CbDesc = (*const c_void, Box<[u8]>);

/// Before a counter-based event's creation: timestamps asked for where the program asked for
/// none (`pools`). `flags_at` is the offset of the flags in the descriptor (`T`'s layout).
///
/// # Safety
/// `desc` points at the call's descriptor argument, NULL or a descriptor of layout `T`.
unsafe fn before_counter_based<T>(desc: *mut *const T, flags_at: usize, token: usize) {
    if is_internal() {
        return;
    }
    // SAFETY: as the caller promises.
    let original = unsafe { *desc };
    if original.is_null() {
        CB_DESCS.push(token, (0, None));
        return;
    }
    // SAFETY: a descriptor of `T`'s layout, whose flags are a u32 at `flags_at`.
    let asked = unsafe {
        original
            .cast::<u8>()
            .add(flags_at)
            .cast::<u32>()
            .read_unaligned()
    };
    let Some(flags) = pools::upgrade_counter_based(asked) else {
        CB_DESCS.push(token, (asked, None));
        return;
    };
    // SAFETY: `T` is plain data: its bytes copied, then the flags changed in the copy.
    let mut copy: Box<[u8]> =
        unsafe { core::slice::from_raw_parts(original.cast::<u8>(), size_of::<T>()) }.into();
    copy[flags_at..flags_at + 4].copy_from_slice(&flags.to_ne_bytes());
    let replacement = copy.as_ptr().cast::<T>();
    if CB_DESCS.push(token, (asked, Some((original.cast(), copy)))) {
        // SAFETY: the call's descriptor argument; the copy lives in CB_DESCS (on the heap) until
        // the epilogue puts the program's back.
        unsafe { *desc = replacement };
    }
}

/// After a counter-based event's creation: the program's descriptor back, the event noted.
///
/// # Safety
/// As [`before_counter_based`]; `context`, `device` and `event` are the call's, the event
/// written on success.
unsafe fn after_counter_based<T>(
    desc: *mut *const T,
    flags_at: usize,
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    event: *mut ze_event_handle_t,
    result: ze_result_t,
    token: usize,
) {
    if is_internal() {
        return;
    }
    let Some((asked, replaced)) = CB_DESCS.take(token) else {
        return;
    };
    let made = match replaced {
        Some((original, copy)) => {
            // SAFETY: as the caller promises: what libpti found goes back in the argument, where
            // it still holds libpti's copy (see `after_zeEventPoolCreate`).
            unsafe {
                if core::ptr::eq((*desc).cast::<u8>(), copy.as_ptr()) {
                    *desc = original.cast();
                }
            }
            u32::from_ne_bytes(copy[flags_at..flags_at + 4].try_into().unwrap())
        }
        None => asked,
    };
    if result == ZE_RESULT_SUCCESS && !event.is_null() {
        // SAFETY: the driver has written the event.
        pools::counter_based_created(unsafe { *event }, context, device, asked, made);
    }
}

pub(super) fn before_zeEventCounterBasedCreate(
    p: &mut ze_event_counter_based_create_params_t,
    token: usize,
) {
    // SAFETY: the field points at the call's descriptor argument, of the standard layout.
    unsafe {
        before_counter_based(
            p.pdesc,
            core::mem::offset_of!(ze_event_counter_based_desc_t, flags),
            token,
        )
    };
}

pub(super) fn after_zeEventCounterBasedCreate(
    p: &mut ze_event_counter_based_create_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe {
        after_counter_based(
            p.pdesc,
            core::mem::offset_of!(ze_event_counter_based_desc_t, flags),
            *p.phContext,
            *p.phDevice,
            *p.pphEvent,
            result,
            token,
        )
    };
}

/// Intel's descriptor of `zexCounterBasedEventCreate2` (stype, pNext, flags, scopes).
#[repr(C)]
struct ZexCounterBasedEventDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
    signal_scope: u32,
    wait_scope: u32,
}

pub(super) fn before_zexCounterBasedEventCreate2(
    p: &mut zex_counter_based_event_create2_params_t,
    token: usize,
) {
    // SAFETY: the field points at the call's descriptor argument, of Intel's layout.
    unsafe {
        before_counter_based(
            p.pdesc.cast::<*const ZexCounterBasedEventDesc>(),
            core::mem::offset_of!(ZexCounterBasedEventDesc, flags),
            token,
        )
    };
}

pub(super) fn after_zexCounterBasedEventCreate2(
    p: &mut zex_counter_based_event_create2_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe {
        after_counter_based(
            p.pdesc.cast::<*const ZexCounterBasedEventDesc>(),
            core::mem::offset_of!(ZexCounterBasedEventDesc, flags),
            *p.phContext,
            *p.phDevice,
            *p.pphEvent,
            result,
            token,
        )
    };
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

pub(super) fn before_zeEventQueryKernelTimestamp(
    p: &mut ze_event_query_kernel_timestamp_params_t,
    token: usize,
) {
    // SAFETY: the field points at the call's event argument.
    pools::probe_query(token, unsafe { &mut *p.phEvent });
}

pub(super) fn after_zeEventQueryKernelTimestamp(
    p: &mut ze_event_query_kernel_timestamp_params_t,
    _result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    pools::unprobe_query(token, unsafe { &mut *p.phEvent });
}

pub(super) fn before_zeEventQueryKernelTimestampsExt(
    p: &mut ze_event_query_kernel_timestamps_ext_params_t,
    token: usize,
) {
    // SAFETY: the field points at the call's event argument.
    pools::probe_query(token, unsafe { &mut *p.phEvent });
}

pub(super) fn after_zeEventQueryKernelTimestampsExt(
    p: &mut ze_event_query_kernel_timestamps_ext_params_t,
    _result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    pools::unprobe_query(token, unsafe { &mut *p.phEvent });
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
    // SAFETY: the field points at the call's argument.
    extension::saw_driver(unsafe { *p.phDriver }.cast());
    // SAFETY: the fields point at the call's arguments: the program's NUL-terminated name and
    // the address the driver has just written (NULL-checked).
    unsafe {
        let (name, address) = (*p.pname, *p.pppFunctionAddress);
        if !name.is_null() && !address.is_null() {
            *address = extension::hand_out(CStr::from_ptr(name), *address);
        }
    }
}

pub(super) fn after_zeDriverGet(
    p: &mut ze_driver_get_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments: a count and the drivers written (when
    // the program asked for them).
    unsafe {
        let (count, drivers) = (*p.ppCount, *p.pphDrivers);
        if !count.is_null() && *count > 0 && !drivers.is_null() {
            extension::saw_driver((*drivers).cast());
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

// Commands of no record kind that change an event of the program's: what still reads the event
// is recorded or copied first (`guards`), and a recorded one counts among what an execution of
// its list changes.

/// Before an append that resets or signals the program's `event` on `list`.
fn changes_event(list: ze_command_list_handle_t, event: ze_event_handle_t, token: usize) {
    if token == 0 || event.is_null() || is_internal() {
        return;
    }
    let Some(list) = objects::list(list) else {
        return;
    };
    guards::before_change(event, &list);
    if list.records() {
        list.recording().touched.push(event);
    } else {
        guards::used(event);
    }
}

pub(super) fn before_zeCommandListAppendEventReset(
    p: &mut ze_command_list_append_event_reset_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe { changes_event(*p.phCommandList, *p.phEvent, token) };
}

pub(super) fn before_zeCommandListAppendSignalEvent(
    p: &mut ze_command_list_append_signal_event_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe { changes_event(*p.phCommandList, *p.phEvent, token) };
}

// ---------------------------------------------------------------------------------------------
// Executions of regular lists and replays of graphs (`executions`)

/// The regular lists among the `n` lists at `lists` (a call's arguments), as batches to run,
/// each with the number of times the call passes it.
///
/// # Safety
/// `lists` is NULL or points at `n` list handles.
unsafe fn regular_lists(n: u32, lists: *const ze_command_list_handle_t) -> Vec<Batch> {
    if lists.is_null() {
        return Vec::new();
    }
    let mut found: Vec<(Arc<List>, usize)> = Vec::new();
    for i in 0..n as usize {
        // SAFETY: as the caller promises.
        let handle = unsafe { *lists.add(i) };
        match found.iter_mut().find(|(l, _)| l.handle == handle) {
            Some((_, times)) => *times += 1,
            None => found.extend(
                objects::list(handle)
                    .filter(|l| !l.immediate)
                    .map(|l| (l, 1)),
            ),
        }
    }
    found
        .into_iter()
        .map(|(list, times)| {
            let recording = list.recording();
            let in_order = list.in_order;
            Batch::of(list.clone(), &recording, in_order, times)
        })
        .collect()
}

/// The commands of executable graph `graph`, to replay on immediate list `list`.
fn graph_batch(list: ze_command_list_handle_t, graph: *mut c_void) -> Vec<Batch> {
    let (Some(list), Some(commands)) = (objects::list(list), objects::executable(graph)) else {
        return Vec::new();
    };
    let recording = commands
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let in_order = list.in_order;
    vec![Batch::of(list, &recording, in_order, 1)]
}

/// Before a call that runs recorded commands: earlier executions settled or snapshotted, libpti's
/// events reset (`executions::before`).
fn before_running(batches: Vec<Batch>, target: Target, token: usize) {
    if is_internal() || token == 0 {
        return;
    }
    executions::before(&batches, &target, token);
    note_start(token);
}

/// After a call that ran recorded commands: their commands pending, the execution (`by`, asked
/// only then) noted; the recordings renumbered for the next execution.
fn after_running(
    batches: impl FnOnce() -> Vec<Batch>,
    by: impl FnOnce() -> Executor,
    renumber: impl FnOnce(),
    result: ze_result_t,
    token: usize,
) {
    let Some(entered) = take_start(token) else {
        return;
    };
    if result != ZE_RESULT_SUCCESS || !view::any_device_view() {
        executions::abandoned(token);
        return;
    }
    executions::after(batches(), token, entered, &by());
    renumber();
}

/// Gives the recorded commands of regular lists fresh operation IDs for their next execution.
///
/// # Safety
/// As [`regular_lists`].
unsafe fn renumber_lists(n: u32, lists: *const ze_command_list_handle_t) {
    // SAFETY: as the caller promises.
    for b in unsafe { regular_lists(n, lists) } {
        executions::renumber(&mut b.list.recording());
    }
}

pub(super) fn before_zeCommandQueueExecuteCommandLists(
    p: &mut ze_command_queue_execute_command_lists_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a queue, a count and that many lists.
    let (queue, batches) = unsafe {
        (
            *p.phCommandQueue,
            regular_lists(*p.pnumCommandLists, *p.pphCommandLists),
        )
    };
    before_running(batches, Target::Queue(queue), token);
}

pub(super) fn after_zeCommandQueueExecuteCommandLists(
    p: &mut ze_command_queue_execute_command_lists_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    let (queue, n, lists) = unsafe { (*p.phCommandQueue, *p.pnumCommandLists, *p.pphCommandLists) };
    let by = || Executor {
        api_id: ids::zeCommandQueueExecuteCommandLists,
        queue: queue.cast(),
        engine: objects::queue_engine(queue),
    };
    // SAFETY: a count and that many lists, the call's.
    after_running(
        || unsafe { regular_lists(n, lists) },
        by,
        || unsafe { renumber_lists(n, lists) },
        result,
        token,
    );
}

/// Before regular lists run on immediate list `immediate` (spec 1.9 and 1.14: as on a queue).
///
/// # Safety
/// `lists` is NULL or points at `n` list handles.
unsafe fn before_appending_lists(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *const ze_command_list_handle_t,
    token: usize,
) {
    let Some(target) = objects::list(immediate) else {
        return;
    };
    // SAFETY: as the caller promises.
    before_running(
        unsafe { regular_lists(n, lists) },
        Target::Immediate(target),
        token,
    );
}

/// After regular lists ran on immediate list `immediate` by the call `api_id`.
///
/// # Safety
/// As [`before_appending_lists`].
unsafe fn after_appending_lists(
    api_id: u32,
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *const ze_command_list_handle_t,
    result: ze_result_t,
    token: usize,
) {
    let by = || Executor {
        api_id,
        queue: immediate.cast(),
        engine: objects::immediate_engine(immediate),
    };
    // SAFETY: as the caller promises.
    after_running(
        || unsafe { regular_lists(n, lists) },
        by,
        || unsafe { renumber_lists(n, lists) },
        result,
        token,
    );
}

pub(super) fn before_zeCommandListImmediateAppendCommandListsExp(
    p: &mut ze_command_list_immediate_append_command_lists_exp_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a list, a count and that many lists.
    unsafe {
        before_appending_lists(
            *p.phCommandListImmediate,
            *p.pnumCommandLists,
            *p.pphCommandLists,
            token,
        )
    };
}

pub(super) fn after_zeCommandListImmediateAppendCommandListsExp(
    p: &mut ze_command_list_immediate_append_command_lists_exp_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    unsafe {
        after_appending_lists(
            ids::zeCommandListImmediateAppendCommandListsExp,
            *p.phCommandListImmediate,
            *p.pnumCommandLists,
            *p.pphCommandLists,
            result,
            token,
        )
    };
}

pub(super) fn before_zeCommandListImmediateAppendCommandListsWithParameters(
    p: &mut ze_command_list_immediate_append_command_lists_with_parameters_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments: a list, a count and that many lists.
    unsafe {
        before_appending_lists(
            *p.phCommandListImmediate,
            *p.pnumCommandLists,
            *p.pphCommandLists,
            token,
        )
    };
}

pub(super) fn after_zeCommandListImmediateAppendCommandListsWithParameters(
    p: &mut ze_command_list_immediate_append_command_lists_with_parameters_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    unsafe {
        after_appending_lists(
            ids::zeCommandListImmediateAppendCommandListsWithParameters,
            *p.phCommandListImmediate,
            *p.pnumCommandLists,
            *p.pphCommandLists,
            result,
            token,
        )
    };
}

/// Before a replay of executable graph `graph` on immediate list `list`.
fn before_replay(list: ze_command_list_handle_t, graph: *mut c_void, token: usize) {
    let Some(target) = objects::list(list) else {
        return;
    };
    before_running(graph_batch(list, graph), Target::Immediate(target), token);
}

/// After a replay of executable graph `graph` on immediate list `list` by the call `api_id`.
fn after_replay(
    api_id: u32,
    list: ze_command_list_handle_t,
    graph: *mut c_void,
    result: ze_result_t,
    token: usize,
) {
    let by = || Executor {
        api_id,
        queue: list.cast(),
        engine: objects::immediate_engine(list),
    };
    let renumber = || {
        if let Some(commands) = objects::executable(graph) {
            executions::renumber(
                &mut commands
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
        }
    };
    after_running(|| graph_batch(list, graph), by, renumber, result, token);
}

pub(super) fn before_zeCommandListAppendGraphExt(
    p: &mut ze_command_list_append_graph_ext_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe { before_replay(*p.phCommandList, (*p.phGraph).cast(), token) };
}

pub(super) fn after_zeCommandListAppendGraphExt(
    p: &mut ze_command_list_append_graph_ext_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    unsafe {
        after_replay(
            ids::zeCommandListAppendGraphExt,
            *p.phCommandList,
            (*p.phGraph).cast(),
            result,
            token,
        )
    };
}

pub(super) fn before_zeCommandListAppendGraphExp(
    p: &mut ze_command_list_append_graph_exp_params_t,
    token: usize,
) {
    // SAFETY: the fields point at the call's arguments.
    unsafe { before_replay(*p.phCommandList, (*p.phGraph).cast(), token) };
}

pub(super) fn after_zeCommandListAppendGraphExp(
    p: &mut ze_command_list_append_graph_exp_params_t,
    result: ze_result_t,
    token: usize,
) {
    // SAFETY: as above.
    unsafe {
        after_replay(
            ids::zeCommandListAppendGraphExp,
            *p.phCommandList,
            (*p.phGraph).cast(),
            result,
            token,
        )
    };
}

// ---------------------------------------------------------------------------------------------
// Graph capture: an immediate list capturing records its appends (as a regular list does); the
// graph ends up with them, and its executable instances replay them

/// Capture began on `list` (a new graph, or one the program made).
fn capture_began(list: ze_command_list_handle_t, result: ze_result_t) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    if let Some(list) = objects::list(list) {
        let mut recording = list.recording();
        *recording = objects::Recording::default();
        recording.capturing = true;
    }
}

/// Capture ended on `list` into `graph`.
fn capture_ended(list: ze_command_list_handle_t, graph: *mut c_void, result: ze_result_t) {
    if result != ZE_RESULT_SUCCESS || is_internal() || graph.is_null() {
        return;
    }
    if let Some(list) = objects::list(list) {
        let mut recording = core::mem::take(&mut *list.recording());
        recording.capturing = false;
        objects::graph_captured(graph, recording);
    }
}

pub(super) fn after_zeCommandListBeginGraphCaptureExt(
    p: &mut ze_command_list_begin_graph_capture_ext_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    capture_began(unsafe { *p.phCommandList }, result);
}

pub(super) fn after_zeCommandListBeginCaptureIntoGraphExt(
    p: &mut ze_command_list_begin_capture_into_graph_ext_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    capture_began(unsafe { *p.phCommandList }, result);
}

pub(super) fn after_zeCommandListBeginGraphCaptureExp(
    p: &mut ze_command_list_begin_graph_capture_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    capture_began(unsafe { *p.phCommandList }, result);
}

pub(super) fn after_zeCommandListBeginCaptureIntoGraphExp(
    p: &mut ze_command_list_begin_capture_into_graph_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    capture_began(unsafe { *p.phCommandList }, result);
}

pub(super) fn after_zeCommandListEndGraphCaptureExt(
    p: &mut ze_command_list_end_graph_capture_ext_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the fields point at the call's arguments; the driver has written the graph.
    unsafe {
        let graph = (*p.pphGraph).as_ref().map_or(null_mut(), |g| *g);
        capture_ended(*p.phCommandList, graph.cast(), result);
    }
}

pub(super) fn after_zeCommandListEndGraphCaptureExp(
    p: &mut ze_command_list_end_graph_capture_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the fields point at the call's arguments; the driver has written the graph.
    unsafe {
        let graph = (*p.pphGraph).as_ref().map_or(null_mut(), |g| *g);
        capture_ended(*p.phCommandList, graph.cast(), result);
    }
}

pub(super) fn after_zeGraphInstantiateExt(
    p: &mut ze_graph_instantiate_ext_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the graph.
        unsafe {
            objects::graph_instantiated((*p.phGraph).cast(), (**p.pphExecutableGraph).cast())
        };
    }
}

pub(super) fn after_zeCommandListInstantiateGraphExp(
    p: &mut ze_command_list_instantiate_graph_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the fields point at the call's arguments; the driver has written the graph.
        unsafe {
            objects::graph_instantiated((*p.phGraph).cast(), (**p.pphExecutableGraph).cast())
        };
    }
}

pub(super) fn before_zeGraphDestroyExt(p: &mut ze_graph_destroy_ext_params_t, _token: usize) {
    // SAFETY: the field points at the call's argument.
    objects::graph_destroyed(unsafe { *p.phGraph }.cast());
}

pub(super) fn before_zeGraphDestroyExp(p: &mut ze_graph_destroy_exp_params_t, _token: usize) {
    // SAFETY: the field points at the call's argument.
    objects::graph_destroyed(unsafe { *p.phGraph }.cast());
}

pub(super) fn before_zeExecutableGraphDestroyExt(
    p: &mut ze_executable_graph_destroy_ext_params_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    objects::graph_destroyed(unsafe { *p.phGraph }.cast());
}

pub(super) fn before_zeExecutableGraphDestroyExp(
    p: &mut ze_executable_graph_destroy_exp_params_t,
    _token: usize,
) {
    // SAFETY: the field points at the call's argument.
    objects::graph_destroyed(unsafe { *p.phGraph }.cast());
}

// ---------------------------------------------------------------------------------------------
// Mutable command lists: libpti follows the numbered commands' kernels, sizes and signal events

pub(super) fn after_zeCommandListGetNextCommandIdExp(
    p: &mut ze_command_list_get_next_command_id_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the fields point at the call's arguments; the driver has written the ID.
    unsafe { next_command_id(*p.phCommandList, *p.ppCommandId, result) };
}

pub(super) fn after_zeCommandListGetNextCommandIdWithKernelsExp(
    p: &mut ze_command_list_get_next_command_id_with_kernels_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    // SAFETY: the fields point at the call's arguments; the driver has written the ID.
    unsafe { next_command_id(*p.phCommandList, *p.ppCommandId, result) };
}

/// The driver gives the next command appended to `list` the ID at `id`.
///
/// # Safety
/// `id` is NULL or the call's written ID.
unsafe fn next_command_id(list: ze_command_list_handle_t, id: *mut u64, result: ze_result_t) {
    if result != ZE_RESULT_SUCCESS || is_internal() || id.is_null() {
        return;
    }
    if let Some(list) = objects::list(list) {
        // SAFETY: as the caller promises.
        list.recording().next_id = Some(unsafe { *id });
    }
}

/// Applies `change` to the recorded command `id` of `list`.
fn update_recorded(list: ze_command_list_handle_t, id: u64, change: impl FnOnce(&mut Recorded)) {
    if id == 0 {
        return;
    }
    if let Some(list) = objects::list(list)
        && let Some(r) = list.recording().commands.iter_mut().find(|r| r.id == id)
    {
        change(r);
    }
}

thread_local! {
    /// Per signal-event update in progress on this thread, by token: libpti's event put in
    /// place of the program's NULL, if it was.
    static NEW_SIGNALS: ThreadStack<usize, Option<ze_event_handle_t>> = const { ThreadStack::new() };
}

/// A numbered command gets a new signal event: NULL (libpti times it with an event of its own,
/// put in the call's argument as an append's would be) or the program's.
pub(super) fn before_zeCommandListUpdateMutableCommandSignalEventExp(
    p: &mut ze_command_list_update_mutable_command_signal_event_exp_params_t,
    token: usize,
) {
    if token == 0 || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments.
    let (list, signal) = unsafe { (*p.phCommandList, &mut *p.phSignalEvent) };
    let Some(list) = objects::list(list) else {
        return;
    };
    let ours = if signal.is_null() {
        events::take(list.context)
    } else {
        guards::before_change(*signal, &list);
        None
    };
    if NEW_SIGNALS.push(token, ours)
        && let Some(event) = ours
    {
        *signal = event;
    }
}

pub(super) fn after_zeCommandListUpdateMutableCommandSignalEventExp(
    p: &mut ze_command_list_update_mutable_command_signal_event_exp_params_t,
    result: ze_result_t,
    token: usize,
) {
    let Some(ours) = NEW_SIGNALS.take(token) else {
        return;
    };
    // SAFETY: the fields point at the call's arguments.
    let (handle, id, signal) = unsafe { (*p.phCommandList, *p.pcommandId, &mut *p.phSignalEvent) };
    let actual = *signal;
    // As for an append (`commands::complete`): left to a later tool that replaced libpti's.
    if ours.is_some() && ours == Some(actual) {
        *signal = null_mut();
    }
    let Some(list) = objects::list(handle) else {
        return;
    };
    if result != ZE_RESULT_SUCCESS {
        if let Some(event) = ours {
            events::give(list.context, event);
        }
        return;
    }
    let source = match ours {
        Some(event) => {
            list.recording().events.push(event);
            Source::Own(event)
        }
        None => match commands::untimed_because(actual) {
            None => Source::Borrowed(actual),
            Some(why) => Source::Untimed(why),
        },
    };
    update_recorded(handle, id, |r| {
        r.source = source;
        r.signal = actual;
    });
}

pub(super) fn after_zeCommandListUpdateMutableCommandKernelsExp(
    p: &mut ze_command_list_update_mutable_command_kernels_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments: a list, a count, that many IDs and
    // kernels.
    unsafe {
        let (list, n, ids, kernels) = (
            *p.phCommandList,
            *p.pnumKernels,
            *p.ppCommandId,
            *p.pphKernels,
        );
        if ids.is_null() || kernels.is_null() {
            return;
        }
        for i in 0..n as usize {
            let (id, new) = (*ids.add(i), *kernels.add(i));
            update_recorded(list, id, |r| {
                if let Work::Kernel { launch, .. } = r.submission.work {
                    r.submission.work = Work::Kernel {
                        name: objects::kernel_name(new).unwrap_or(c"<unnamed kernel>"),
                        kernel: new.cast(),
                        launch: Launch::groups(launch.group_count, objects::group_size(new)),
                    };
                }
            });
        }
    }
}

/// The fields every mutable descriptor starts with.
#[repr(C)]
struct Header {
    stype: ze_structure_type_t,
    p_next: *const c_void,
}

/// The program changes numbered commands' group counts and sizes (the chained descriptors).
pub(super) fn after_zeCommandListUpdateMutableCommandsExp(
    p: &mut ze_command_list_update_mutable_commands_exp_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result != ZE_RESULT_SUCCESS || is_internal() {
        return;
    }
    // SAFETY: the fields point at the call's arguments: a list and the program's descriptor,
    // whose chain holds descriptors of the types their headers name.
    unsafe {
        let list = *p.phCommandList;
        let Some(desc) = (*p.pdesc).as_ref() else {
            return;
        };
        let mut next = desc.pNext;
        while let Some(h) = next.cast::<Header>().as_ref() {
            match h.stype {
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_group_count_exp_desc_t>();
                    if let Some(g) = d.pGroupCount.as_ref() {
                        let count = [g.groupCountX, g.groupCountY, g.groupCountZ];
                        update_recorded(list, d.commandId, |r| relaunch(r, Some(count), None));
                    }
                }
                ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC => {
                    let d = &*next.cast::<ze_mutable_group_size_exp_desc_t>();
                    let size = [d.groupSizeX, d.groupSizeY, d.groupSizeZ];
                    update_recorded(list, d.commandId, |r| relaunch(r, None, Some(size)));
                }
                _ => {}
            }
            next = h.p_next;
        }
    }
}

/// A recorded kernel's launch with a new group count or size.
fn relaunch(r: &mut Recorded, count: Option<[u32; 3]>, size: Option<[u32; 3]>) {
    if let Work::Kernel {
        name,
        kernel,
        launch,
    } = r.submission.work
    {
        r.submission.work = Work::Kernel {
            name,
            kernel,
            launch: Launch::groups(
                count.unwrap_or(launch.group_count),
                size.unwrap_or(launch.group_size),
            ),
        };
    }
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

/// A host wait's hook pair: `before_` notes when the wait began; `after_` harvests what
/// finished and writes the wait's record of `kind`, on the context, queue (or list) and event
/// that `|p| (context, queue, event)` reads of the arguments (asked only for a record).
macro_rules! wait_hooks {
    ($before:ident, $after:ident, $params:ty, $id:ident, $kind:ident, |$p:ident| $on:expr) => {
        pub(super) fn $before(_p: &mut $params, token: usize) {
            note_start(token);
        }

        pub(super) fn $after($p: &mut $params, result: ze_result_t, token: usize) {
            host_waited(token, result, || {
                #[allow(unused_unsafe)] // a fence's record reads no argument
                let (context, queue, event): (*mut c_void, *mut c_void, *mut c_void) = {
                    // SAFETY: the fields point at the call's arguments.
                    unsafe { $on }
                };
                let kind = pti_view_synchronization_type::$kind;
                wait_record(kind, ids::$id, context, queue, event, result)
            });
        }
    };
}

const NONE: *mut c_void = core::ptr::null_mut();

wait_hooks!(
    before_zeEventHostSynchronize,
    after_zeEventHostSynchronize,
    ze_event_host_synchronize_params_t,
    zeEventHostSynchronize,
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_EVENT,
    |p| (NONE, NONE, (*p.phEvent).cast())
);

wait_hooks!(
    before_zeCommandQueueSynchronize,
    after_zeCommandQueueSynchronize,
    ze_command_queue_synchronize_params_t,
    zeCommandQueueSynchronize,
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_QUEUE,
    |p| (
        objects::queue_context(*p.phCommandQueue),
        (*p.phCommandQueue).cast(),
        NONE
    )
);

wait_hooks!(
    before_zeCommandListHostSynchronize,
    after_zeCommandListHostSynchronize,
    ze_command_list_host_synchronize_params_t,
    zeCommandListHostSynchronize,
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_LIST,
    |p| (
        objects::list_context(*p.phCommandList),
        (*p.phCommandList).cast(),
        NONE
    )
);

wait_hooks!(
    before_zeFenceHostSynchronize,
    after_zeFenceHostSynchronize,
    ze_fence_host_synchronize_params_t,
    zeFenceHostSynchronize,
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_FENCE,
    |_p| (NONE, NONE, NONE)
);

pub(super) fn after_zeEventQueryStatus(
    p: &mut ze_event_query_status_params_t,
    result: ze_result_t,
    _token: usize,
) {
    if result == ZE_RESULT_SUCCESS && !is_internal() {
        // SAFETY: the field points at the call's argument.
        let event = unsafe { *p.phEvent };
        PENDING.harvest_matching(|c| c.source.uses(event));
    }
}
