//! What the fixture serves through `zeDriverGetExtensionFunctionAddress`: functions newer than
//! API 1.4 (the version of the loader the tests run, whose DDI tables lack them) and Intel's
//! `zexCounterBasedEventCreate2`, as a real driver serves them to an old loader and to Intel's
//! runtimes. And `ZE_SIM_MINIMAL`, the entry points a deliberately minimal configuration lacks.
//!
//! - Counter-based events (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`) belong to
//!   no pool; each command that signals one re-arms it (its latest command defines its state and
//!   timestamps, which it has only if created with a timestamp flag). They are destroyed with
//!   `zeEventDestroy` and counted with the other events.
//! - Host functions run when their command executes. `…WithArguments` launches know the sizes of
//!   the fixture's kernels' arguments (`argument_sizes`).
//! - Regular lists appended to an immediate list run as a queue would run them; the signal event
//!   spans the whole run.
//! - `zeCommandListHostSynchronize` succeeds at once: execution is synchronous.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{CStr, c_char, c_void};
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;

use pti_sys::level_zero::*;

use crate::api;
use crate::clock;
use crate::exec::{Work, execute};
use crate::objects::*;

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

/// Intel's flags that ask for kernel timestamps (`KERNEL_TIMESTAMP`, `KERNEL_MAPPED_TIMESTAMP`).
const ZEX_TIMESTAMP_FLAGS: u32 = 16 | 32;

/// The entry points `ZE_SIM_MINIMAL` (a comma-separated list) says the fixture lacks.
#[derive(Default)]
pub(crate) struct Minimal {
    /// `query-status`: `zeEventQueryStatus`.
    pub(crate) query_status: bool,
    /// `global-timestamps`: `zeDeviceGetGlobalTimestamps`.
    pub(crate) global_timestamps: bool,
    /// `kernel-timestamps`: `zeEventQueryKernelTimestamp`.
    pub(crate) kernel_timestamps: bool,
}

/// The minimal configuration, read once.
pub(crate) fn minimal() -> &'static Minimal {
    static MINIMAL: OnceLock<Minimal> = OnceLock::new();
    MINIMAL.get_or_init(|| {
        let mut m = Minimal::default();
        let list = std::env::var("ZE_SIM_MINIMAL").unwrap_or_default();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "query-status" => m.query_status = true,
                "global-timestamps" => m.global_timestamps = true,
                "kernel-timestamps" => m.kernel_timestamps = true,
                other => eprintln!("ze-sim: ZE_SIM_MINIMAL: unknown feature {other:?}, ignored"),
            }
        }
        m
    })
}

/// A counter-based event: an event of no pool.
fn counter_based_event(timestamps: bool, ph: *mut ze_event_handle_t) -> ze_result_t {
    if ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let event = Event {
        timestamps,
        signaled: AtomicBool::new(false),
        span: Mutex::new(None),
    };
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::Event, event) };
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
    let wanted =
        ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP | ZE_EVENT_COUNTER_BASED_FLAG_HOST_TIMESTAMP;
    // SAFETY: the caller's descriptor, checked above.
    counter_based_event(unsafe { (*desc).flags } & wanted != 0, ph)
}

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
    counter_based_event(flags & ZEX_TIMESTAMP_FLAGS != 0, ph)
}

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
fn argument_sizes(kernel: &str) -> &'static [usize] {
    match kernel {
        "vadd" => &[8, 8, 8],
        "scale" => &[8, 4],
        "spin" => &[4],
        _ => &[],
    }
}

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

/// Runs regular lists on an immediate one; `signal` spans the whole run.
///
/// # Safety
/// `lists` holds `n` lists of this fixture.
unsafe fn run_lists(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal: ze_event_handle_t,
) -> ze_result_t {
    if immediate.is_null() || (n > 0 && lists.is_null()) {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a list of this fixture.
    if !unsafe { object::<List, _>(immediate) }.immediate {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    let start = clock::host_ns();
    for i in 0..n as usize {
        // SAFETY: the caller's contract.
        let list: &List = unsafe { object(*lists.add(i)) };
        for command in list.commands.lock().unwrap().iter() {
            execute(command);
        }
    }
    let end = clock::host_ns();
    if !signal.is_null() {
        // SAFETY: an event handle of this fixture.
        let e: &Event = unsafe { object(signal) };
        *e.span.lock().unwrap() = Some((clock::ticks_at(start), clock::ticks_at(end)));
        e.signaled.store(true, std::sync::atomic::Ordering::Release);
    }
    OK
}

unsafe extern "C" fn zeCommandListImmediateAppendCommandListsExp(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    signal: ze_event_handle_t,
    _: u32,
    _: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the caller passes `n` lists.
    unsafe { run_lists(immediate, n, lists, signal) }
}

unsafe extern "C" fn zeCommandListImmediateAppendCommandListsWithParameters(
    immediate: ze_command_list_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    _: *const c_void,
    signal: ze_event_handle_t,
    _: u32,
    _: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: as above.
    unsafe { run_lists(immediate, n, lists, signal) }
}

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
