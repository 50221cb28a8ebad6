//! What the driver serves through `zeDriverGetExtensionFunctionAddress`: functions newer than
//! API 1.4 (the version of the loader the tests run, whose DDI tables lack them) and Intel's
//! `zex*` extensions, as a real driver serves them to an old loader and to Intel's runtimes
//! (any other name: NULL and `ZE_RESULT_ERROR_INVALID_ARGUMENT`).
//!
//! - Counter-based events (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`) belong to
//!   no pool (see `event` for how they behave); creation checks what compute-runtime's
//!   `Event::counterBasedCreate` checks.
//! - Host functions run when their command executes, on the engine's thread (`HOSTFN` in the
//!   ground truth). `…WithParameters` appends are the plain ones (`pNext` is ignored);
//!   `…WithArguments` launches know the sizes of the driver's kernels' arguments.
//! - Regular lists appended to an immediate list run as a queue runs them, after the wait list,
//!   and the signal event spans the whole run.
//! - `zeEventPoolGetFlags`, `zeEventQueryKernelTimestampsExt`, `zeCommandListHostSynchronize`,
//!   `zeDeviceSynchronize`; graph capture and replay (`graph`), mutable lists and clones
//!   (`mutable`); and the functions Intel's Unified Runtime adapters call (`adapters`).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{CStr, c_char, c_void};
use std::sync::Arc;

use pti_sys::level_zero::*;

use crate::api;
use crate::event::{Event, Timestamps, with_minimal};
use crate::exec::Work;
use crate::list::{List, append, run_on_immediate, wait_list};
use crate::objects::*;
use crate::{adapters, graph, mutable};

const OK: ze_result_t = ZE_RESULT_SUCCESS;

/// Intel's descriptor of `zexCounterBasedEventCreate2` (no Level Zero header declares it).
#[repr(C)]
struct ZexCounterBasedEventDesc {
    stype: u32,
    p_next: *const c_void,
    flags: u32,
    signal_scope: u32,
    wait_scope: u32,
}

/// Flags of both creation functions (`ZE_EVENT_COUNTER_BASED_FLAG_*`, and Intel's, whose bits
/// are the same: `KERNEL_TIMESTAMP` 16, `KERNEL_MAPPED_TIMESTAMP` 32).
const IPC: u32 = 8;
const DEVICE_TIMESTAMP: u32 = 16;
const HOST_TIMESTAMP: u32 = 32;
const KNOWN: u32 = 1 | 2 | 4 | IPC | DEVICE_TIMESTAMP | HOST_TIMESTAMP | 64;

/// Creates a counter-based event with `flags` in `*ph`, as `Event::counterBasedCreate` checks.
fn counter_based_event(flags: u32, ph: *mut ze_event_handle_t) -> ze_result_t {
    if ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    if flags & !KNOWN != 0 {
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    }
    let timestamps = flags & (DEVICE_TIMESTAMP | HOST_TIMESTAMP);
    if timestamps == DEVICE_TIMESTAMP | HOST_TIMESTAMP || (flags & IPC != 0 && timestamps != 0) {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    let kind = match timestamps {
        DEVICE_TIMESTAMP => Timestamps::Kernel,
        HOST_TIMESTAMP => Timestamps::Mapped,
        _ => Timestamps::None,
    };
    let event = Event::new(with_minimal(kind), Some(flags & 3), flags & IPC != 0);
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::Event, Arc::new(event)) };
    OK
}

unsafe extern "C" fn zeEventCounterBasedCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    desc: *const ze_event_counter_based_desc_t,
    ph: *mut ze_event_handle_t,
) -> ze_result_t {
    if desc.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's descriptor, checked above.
    counter_based_event(unsafe { (*desc).flags }, ph)
}

/// Intel's `zexCounterBasedEventCreate2`, which its runtimes use.
unsafe extern "C" fn zexCounterBasedEventCreate2(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    desc: *const c_void,
    ph: *mut ze_event_handle_t,
) -> ze_result_t {
    // Intel's driver takes a NULL descriptor for its default, which has no timestamps.
    let flags = if desc.is_null() {
        0
    } else {
        // SAFETY: the caller's descriptor, of Intel's layout.
        unsafe { (*desc.cast::<ZexCounterBasedEventDesc>()).flags }
    };
    counter_based_event(flags, ph)
}

/// `zeCommandListAppendHostFunction`: a command that calls `function(user_data)` when it
/// executes, on the engine's thread.
unsafe extern "C" fn zeCommandListAppendHostFunction(
    h: ze_command_list_handle_t,
    function: ze_host_function_callback_t,
    user_data: *mut c_void,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    let Some(function) = function else {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    };
    let work = Work::HostFunction {
        function,
        user_data: user_data as usize,
    };
    // SAFETY: see `api`'s module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

/// `zeCommandListAppendLaunchKernelWithParameters`: the plain launch.
unsafe extern "C" fn zeCommandListAppendLaunchKernelWithParameters(
    h: ze_command_list_handle_t,
    kernel: ze_kernel_handle_t,
    groups: *const ze_group_count_t,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the same arguments as the plain form, which checks nothing more.
    unsafe { api::zeCommandListAppendLaunchKernel(h, kernel, groups, signal, n_waits, waits) }
}

/// The sizes of the arguments of the driver's kernels, which `…WithArguments` passes as bare
/// pointers.
pub(crate) fn argument_sizes(kernel: &str) -> &'static [usize] {
    match kernel {
        "vadd" => &[8, 8, 8],
        "scale" => &[8, 4],
        "spin" => &[4],
        _ => &[],
    }
}

/// `zeCommandListAppendLaunchKernelWithArguments`: sets the group size and the arguments,
/// then launches as the plain form.
unsafe extern "C" fn zeCommandListAppendLaunchKernelWithArguments(
    h: ze_command_list_handle_t,
    kernel: ze_kernel_handle_t,
    groups: ze_group_count_t,
    sizes: ze_group_size_t,
    arguments: *mut *mut c_void,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if kernel.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a kernel of this driver.
    let k: &Kernel = unsafe { object(kernel) };
    *k.group_size.lock().unwrap() = [sizes.groupSizeX, sizes.groupSizeY, sizes.groupSizeZ];
    let name = k.name.to_string_lossy();
    for (i, size) in argument_sizes(&name).iter().enumerate() {
        if arguments.is_null() {
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        }
        // SAFETY: the program passes one pointer per argument of the kernel, each at a value of
        // the argument's size.
        let value = unsafe {
            core::slice::from_raw_parts((*arguments.add(i)).cast::<u8>(), *size).to_vec()
        };
        k.args.lock().unwrap().insert(i as u32, value);
    }
    // SAFETY: the plain form, with the group count as a pointer.
    unsafe { api::zeCommandListAppendLaunchKernel(h, kernel, &groups, signal, n_waits, waits) }
}

/// `zeCommandListAppendMemoryCopyWithParameters`: the plain copy.
unsafe extern "C" fn zeCommandListAppendMemoryCopyWithParameters(
    h: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: as above.
    unsafe { api::zeCommandListAppendMemoryCopy(h, dst, src, size, signal, n_waits, waits) }
}

/// `zeCommandListAppendMemoryFillWithParameters`: the plain fill.
unsafe extern "C" fn zeCommandListAppendMemoryFillWithParameters(
    h: ze_command_list_handle_t,
    ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: as above.
    unsafe {
        api::zeCommandListAppendMemoryFill(
            h,
            ptr,
            pattern,
            pattern_size,
            size,
            signal,
            n_waits,
            waits,
        )
    }
}

/// Runs regular lists on an immediate one (see `list::run_on_immediate`).
unsafe fn run_lists(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if n > 0 && lists.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let mut segments = Vec::new();
    for i in 0..n as usize {
        // SAFETY: `n` lists of this driver.
        let list: &List = unsafe { object(*lists.add(i)) };
        if list.immediate {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        segments.push((list.in_order, list.state().commands.clone()));
    }
    // SAFETY: the caller's list and events.
    unsafe { run_on_immediate(immediate, segments, signal, wait_list(n_waits, waits)) }
}

/// `zeCommandListImmediateAppendCommandListsExp`.
unsafe extern "C" fn zeCommandListImmediateAppendCommandListsExp(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the caller passes lists and events of this driver.
    unsafe { run_lists(immediate, n, lists, signal, n_waits, waits) }
}

/// `zeCommandListImmediateAppendCommandListsWithParameters`: the same (`pNext` ignored).
unsafe extern "C" fn zeCommandListImmediateAppendCommandListsWithParameters(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: as above.
    unsafe { run_lists(immediate, n, lists, signal, n_waits, waits) }
}

/// The functions served by name.
pub(crate) fn served(name: &[u8]) -> *mut c_void {
    macro_rules! by_name {
        ($name:expr; $($f:path),* $(,)?) => {
            match $name {
                $(n if n == stringify!($f).rsplit("::").next().unwrap().trim().as_bytes() =>
                    $f as *const c_void,)*
                _ => core::ptr::null(),
            }
        };
    }
    if name == b"zexCounterBasedEventCreate2" && crate::config::minimal().counter_based_create2 {
        return core::ptr::null_mut();
    }
    let f: *const c_void = by_name!(name;
        zeEventCounterBasedCreate,
        zexCounterBasedEventCreate2,
        zeCommandListAppendHostFunction,
        zeCommandListAppendLaunchKernelWithParameters,
        zeCommandListAppendLaunchKernelWithArguments,
        zeCommandListAppendMemoryCopyWithParameters,
        zeCommandListAppendMemoryFillWithParameters,
        zeCommandListImmediateAppendCommandListsExp,
        zeCommandListImmediateAppendCommandListsWithParameters,
        api::zeCommandListHostSynchronize,
        api::zeDeviceSynchronize,
        api::zeEventPoolGetFlags,
        api::zeEventQueryKernelTimestampsExt,
        adapters::zeDeviceGetRootDevice,
        adapters::zeCommandListIsImmediate,
        adapters::zeDriverGetDefaultContext,
        graph::zeGraphCreateExt,
        graph::zeCommandListBeginGraphCaptureExt,
        graph::zeCommandListBeginCaptureIntoGraphExt,
        graph::zeCommandListIsGraphCaptureEnabledExt,
        graph::zeCommandListEndGraphCaptureExt,
        graph::zeGraphInstantiateExt,
        graph::zeCommandListAppendGraphExt,
        graph::zeGraphDestroyExt,
        graph::zeExecutableGraphDestroyExt,
        graph::zeGraphIsEmptyExt,
        graph::zeGraphDumpContentsExt,
        graph::zeExecutableGraphGetSourceGraphExt,
        graph::zeGraphCreateExp,
        graph::zeCommandListBeginGraphCaptureExp,
        graph::zeCommandListBeginCaptureIntoGraphExp,
        graph::zeCommandListEndGraphCaptureExp,
        graph::zeCommandListInstantiateGraphExp,
        graph::zeCommandListAppendGraphExp,
        graph::zeCommandListIsGraphCaptureEnabledExp,
        graph::zeGraphIsEmptyExp,
        graph::zeGraphDumpContentsExp,
        mutable::zeCommandListGetNextCommandIdExp,
        mutable::zeCommandListGetNextCommandIdWithKernelsExp,
        mutable::zeCommandListUpdateMutableCommandsExp,
        mutable::zeCommandListUpdateMutableCommandSignalEventExp,
        mutable::zeCommandListUpdateMutableCommandWaitEventsExp,
        mutable::zeCommandListUpdateMutableCommandKernelsExp,
        mutable::zeCommandListCreateCloneExp,
    );
    if !f.is_null() {
        return f.cast_mut();
    }
    let f: *const c_void = match name {
        // The `…Exp` destructions are the `…Ext` ones.
        b"zeGraphDestroyExp" => graph::zeGraphDestroyExt as *const c_void,
        b"zeExecutableGraphDestroyExp" => graph::zeExecutableGraphDestroyExt as *const c_void,
        b"zeDeviceGetVectorWidthPropertiesExt"
        | b"zeEventCounterBasedGetIpcHandle"
        | b"zeEventCounterBasedOpenIpcHandle"
        | b"zeEventCounterBasedCloseIpcHandle"
        | b"zeImageViewCreateExt"
        | b"zePhysicalMemGetProperties" => adapters::unmodelled as *const c_void,
        _ => core::ptr::null(),
    };
    f.cast_mut()
}

/// `zeDriverGetExtensionFunctionAddress`: the functions above by name; NULL and
/// `ZE_RESULT_ERROR_INVALID_ARGUMENT` for any other.
pub(crate) unsafe extern "C" fn zeDriverGetExtensionFunctionAddress(
    _: ze_driver_handle_t,
    name: *const c_char,
    out: *mut *mut c_void,
) -> ze_result_t {
    if name.is_null() || out.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's NUL-terminated name.
    let f = served(unsafe { CStr::from_ptr(name) }.to_bytes());
    // SAFETY: a writable pointer, checked above.
    unsafe { *out = f };
    if f.is_null() {
        ZE_RESULT_ERROR_INVALID_ARGUMENT
    } else {
        OK
    }
}

#[cfg(test)]
mod tests;
