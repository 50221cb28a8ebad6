//! What the fixture serves through `zeDriverGetExtensionFunctionAddress`: functions newer than
//! API 1.4 (the version of the loader the tests run, whose DDI tables lack them) and Intel's
//! `zexCounterBasedEventCreate2`, as a real driver serves them to an old loader and to Intel's
//! runtimes. And `ZE_SIM_MINIMAL`, the entry points a deliberately minimal configuration lacks.
//!
//! - Counter-based events (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`) belong to
//!   no pool; each command that signals one re-arms it (its latest command defines its state and
//!   timestamps, see `Event::rearm`), which it has only if created with a timestamp flag
//!   (`zeEventQueryKernelTimestamp` answers `ZE_RESULT_ERROR_INVALID_ARGUMENT` otherwise). The
//!   host must not reset or signal them: `zeEventHostReset`, `zeEventHostSignal` and
//!   `zeCommandListAppendEventReset` answer `ZE_RESULT_ERROR_INVALID_ARGUMENT`. They are
//!   destroyed with `zeEventDestroy` and counted with the other events.
//! - Host functions run when their command executes (`HOSTFN` in the ground truth).
//!   `…WithParameters` appends are the plain ones (`pNext` is ignored); `…WithArguments` launches
//!   know the sizes of the fixture's kernels' arguments (`argument_sizes`).
//! - Regular lists appended to an immediate list run as a queue would run them (each command
//!   with its own ground-truth line); the wait list is checked as any command's, and the signal
//!   event spans the whole run (no ground-truth line of its own: it is no command).
//! - `zeCommandListHostSynchronize` succeeds at once: execution is synchronous.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{CStr, c_char, c_void};
use std::sync::OnceLock;

use pti_sys::level_zero::*;

use crate::clock;
use crate::exec::{Work, check_waits, rearm, run_list, signal};
use crate::objects::*;
use crate::{adapters, api};

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

/// Intel's flag for kernel timestamps (besides `IMMEDIATE` 1, `NON_IMMEDIATE` 2,
/// `HOST_VISIBLE` 4, `IPC` 8, which change nothing here).
const ZEX_KERNEL_TIMESTAMP: u32 = 16;
/// Intel's flag for kernel timestamps mapped to the host's clock (given as the device's here).
const ZEX_KERNEL_MAPPED_TIMESTAMP: u32 = 32;

/// The entry points `ZE_SIM_MINIMAL` (a comma-separated list) says the fixture lacks: each
/// answers `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE` and leaves its out-parameters untouched.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Minimal {
    /// `query-status`: `zeEventQueryStatus`.
    pub(crate) query_status: bool,
    /// `global-timestamps`: `zeDeviceGetGlobalTimestamps`.
    pub(crate) global_timestamps: bool,
    /// `kernel-timestamps`: `zeEventQueryKernelTimestamp`.
    pub(crate) kernel_timestamps: bool,
}

impl Minimal {
    /// Parses `ZE_SIM_MINIMAL`'s value; also returns the words it does not know.
    fn parse(list: &str) -> (Self, Vec<&str>) {
        let mut m = Minimal::default();
        let mut unknown = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "query-status" => m.query_status = true,
                "global-timestamps" => m.global_timestamps = true,
                "kernel-timestamps" => m.kernel_timestamps = true,
                other => unknown.push(other),
            }
        }
        (m, unknown)
    }
}

/// The minimal configuration, read once (so an unknown word is reported once).
pub(crate) fn minimal() -> &'static Minimal {
    static MINIMAL: OnceLock<Minimal> = OnceLock::new();
    MINIMAL.get_or_init(|| {
        let list = std::env::var("ZE_SIM_MINIMAL").unwrap_or_default();
        let (m, unknown) = Minimal::parse(&list);
        for word in unknown {
            eprintln!("ze-sim: ZE_SIM_MINIMAL: unknown feature {word:?}, ignored");
        }
        m
    })
}

/// Whether an event whose creator `asked` for kernel timestamps gets them: a driver without
/// them (`kernel-timestamps`) still creates such pools and events, ignoring the flag, as a
/// driver that cannot time kernels would.
pub(crate) fn kernel_timestamps(asked: bool) -> bool {
    asked && !minimal().kernel_timestamps
}

/// Creates a counter-based event, of no pool, in `*ph`.
fn counter_based_event(timestamps: bool, ph: *mut ze_event_handle_t) -> ze_result_t {
    if ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let event = Event::new(kernel_timestamps(timestamps), true);
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::Event, event) };
    OK
}

/// `zeEventCounterBasedCreate`: timestamps with `…_DEVICE_TIMESTAMP` or
/// `…_HOST_TIMESTAMP`; the other flags and scopes change nothing here.
unsafe extern "C" fn zeEventCounterBasedCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    desc: *const ze_event_counter_based_desc_t,
    ph: *mut ze_event_handle_t,
) -> ze_result_t {
    if desc.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let wanted =
        ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP | ZE_EVENT_COUNTER_BASED_FLAG_HOST_TIMESTAMP;
    // SAFETY: the caller's descriptor, checked above.
    counter_based_event(unsafe { (*desc).flags } & wanted != 0, ph)
}

/// Intel's `zexCounterBasedEventCreate2`, which its runtimes use: timestamps with
/// `KERNEL_TIMESTAMP` or `KERNEL_MAPPED_TIMESTAMP`.
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
    counter_based_event(
        flags & (ZEX_KERNEL_TIMESTAMP | ZEX_KERNEL_MAPPED_TIMESTAMP) != 0,
        ph,
    )
}

/// `zeCommandListAppendHostFunction`: a command that calls `function(user_data)` when it
/// executes, on the thread that executes it.
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
    unsafe { api::append(h, work, signal, api::wait_list(n_waits, waits)) }
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

/// The sizes of the arguments of the fixture's kernels, which `…WithArguments` passes as bare
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
    // SAFETY: a kernel of this fixture.
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

/// Runs regular lists on an immediate one, as `zeCommandQueueExecuteCommandLists` runs them,
/// after checking the wait list as any command's; `signal_event` (re-armed first if
/// counter-based) spans the whole run.
///
/// # Safety
/// `immediate` is a list of this fixture, `lists` holds `n` lists of it, `waits` `n_waits`
/// events of it, `signal_event` is NULL or an event of it.
unsafe fn run_lists(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal_event: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if immediate.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    if n > 0 && lists.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's contract.
    if !unsafe { object::<List, _>(immediate) }.immediate {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contract.
    check_waits(&unsafe { api::wait_list(n_waits, waits) });
    rearm(signal_event);
    let start = clock::host_ns();
    for i in 0..n as usize {
        // SAFETY: the caller's contract.
        run_list(unsafe { object(*lists.add(i)) });
    }
    signal(signal_event, start, clock::host_ns());
    OK
}

/// `zeCommandListImmediateAppendCommandListsExp`: runs the lists (see `run_lists`).
unsafe extern "C" fn zeCommandListImmediateAppendCommandListsExp(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the caller passes lists and events of this fixture.
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

/// `zeCommandListHostSynchronize`: everything appended has already run.
unsafe extern "C" fn zeCommandListHostSynchronize(
    h: ze_command_list_handle_t,
    _: u64,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    OK
}

/// The functions served by name.
fn served(name: &[u8]) -> *mut c_void {
    let f: *const c_void = match name {
        b"zeEventCounterBasedCreate" => zeEventCounterBasedCreate as *const c_void,
        b"zexCounterBasedEventCreate2" => zexCounterBasedEventCreate2 as *const c_void,
        b"zeCommandListAppendHostFunction" => zeCommandListAppendHostFunction as *const c_void,
        b"zeCommandListAppendLaunchKernelWithParameters" => {
            zeCommandListAppendLaunchKernelWithParameters as *const c_void
        }
        b"zeCommandListAppendLaunchKernelWithArguments" => {
            zeCommandListAppendLaunchKernelWithArguments as *const c_void
        }
        b"zeCommandListAppendMemoryCopyWithParameters" => {
            zeCommandListAppendMemoryCopyWithParameters as *const c_void
        }
        b"zeCommandListAppendMemoryFillWithParameters" => {
            zeCommandListAppendMemoryFillWithParameters as *const c_void
        }
        b"zeCommandListImmediateAppendCommandListsExp" => {
            zeCommandListImmediateAppendCommandListsExp as *const c_void
        }
        b"zeCommandListImmediateAppendCommandListsWithParameters" => {
            zeCommandListImmediateAppendCommandListsWithParameters as *const c_void
        }
        b"zeCommandListHostSynchronize" => zeCommandListHostSynchronize as *const c_void,
        b"zeDeviceGetRootDevice" => adapters::zeDeviceGetRootDevice as *const c_void,
        b"zeDeviceSynchronize" => adapters::zeDeviceSynchronize as *const c_void,
        b"zeCommandListIsImmediate" => adapters::zeCommandListIsImmediate as *const c_void,
        b"zeDriverGetDefaultContext" => adapters::zeDriverGetDefaultContext as *const c_void,
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
