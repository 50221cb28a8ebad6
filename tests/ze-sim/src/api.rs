//! The Level Zero functions the fixture implements (see `tables` for how the loader finds them).
//! Pointers the caller passes are trusted, as a driver may: this is a test double.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use pti_sys::level_zero::*;

use crate::clock;
use crate::exec::{Command, Work, execute, rearm, run_list};
use crate::objects::*;

const OK: ze_result_t = ZE_RESULT_SUCCESS;
const UNSUPPORTED: ze_result_t = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// Fills `out` (room for `*count` items) with `items`, the Level Zero way: a zero count asks for
/// the number only.
unsafe fn list_out<T: Copy>(count: *mut u32, out: *mut T, items: &[T]) -> ze_result_t {
    if count.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller passes a valid count and room for that many items.
    unsafe {
        if *count == 0 || out.is_null() {
            *count = items.len() as u32;
            return OK;
        }
        let n = (*count as usize).min(items.len());
        core::ptr::copy_nonoverlapping(items.as_ptr(), out, n);
        *count = n as u32;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeInit(_flags: ze_init_flags_t) -> ze_result_t {
    clock::start();
    report_live_objects_at_exit();
    OK
}

pub(crate) unsafe extern "C" fn zeDriverGet(
    pCount: *mut u32,
    phDrivers: *mut ze_driver_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, phDrivers, &[driver_handle()]) }
}

pub(crate) unsafe extern "C" fn zeDriverGetApiVersion(
    _: ze_driver_handle_t,
    version: *mut ze_api_version_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *version = ZE_API_VERSION_1_4 };
    OK
}

pub(crate) unsafe extern "C" fn zeDriverGetProperties(
    _: ze_driver_handle_t,
    p: *mut ze_driver_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        (*p).uuid.id = *b"libpti-ze-sim\0\0\0";
        (*p).driverVersion = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDriverGetIpcProperties(
    _: ze_driver_handle_t,
    p: *mut ze_driver_ipc_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { (*p).flags = 0 };
    OK
}

pub(crate) unsafe extern "C" fn zeDriverGetExtensionProperties(
    _: ze_driver_handle_t,
    pCount: *mut u32,
    p: *mut ze_driver_extension_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, p, &[]) }
}

pub(crate) unsafe extern "C" fn zeDeviceGet(
    _: ze_driver_handle_t,
    pCount: *mut u32,
    phDevices: *mut ze_device_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, phDevices, &[device_handle()]) }
}

pub(crate) unsafe extern "C" fn zeDeviceGetSubDevices(
    _: ze_device_handle_t,
    pCount: *mut u32,
    p: *mut ze_device_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, p, &[]) }
}

/// The simulated device's PCI address, 0000:3a:00.0.
pub(crate) const PCI_ADDRESS: ze_pci_address_ext_t = ze_pci_address_ext_t {
    domain: 0,
    bus: 0x3a,
    device: 0,
    function: 0,
};

pub(crate) unsafe extern "C" fn zeDevicePciGetPropertiesExt(
    _: ze_device_handle_t,
    p: *mut ze_pci_ext_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let p = unsafe { &mut *p };
    p.address = PCI_ADDRESS;
    p.maxSpeed = ze_pci_speed_ext_t {
        genVersion: 4,
        width: 16,
        maxBandwidth: 32_000_000_000,
    };
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let p = unsafe { &mut *p };
    // A CPU device, as it is one; `ZE_SIM_DEVICE_TYPE=gpu` presents it as a GPU, for a
    // profiler's GPU paths.
    p.type_ = match std::env::var("ZE_SIM_DEVICE_TYPE").as_deref() {
        Ok("gpu") => ZE_DEVICE_TYPE_GPU,
        _ => ZE_DEVICE_TYPE_CPU,
    };
    p.vendorId = 0x8086;
    p.deviceId = 0x5151;
    p.coreClockRate = 1000;
    p.maxMemAllocSize = 1 << 30;
    p.maxHardwareContexts = 64;
    p.numThreadsPerEU = 8;
    p.physicalEUSimdWidth = 8;
    p.numEUsPerSubslice = 8;
    p.numSubslicesPerSlice = 4;
    p.numSlices = 1;
    // Cycles per second with the 1.2 structure, nanoseconds per cycle before it (the spec).
    p.timerResolution = if p.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 {
        clock::FREQUENCY
    } else {
        1_000_000_000 / clock::FREQUENCY
    };
    p.timestampValidBits = clock::GLOBAL_BITS;
    p.kernelTimestampValidBits = clock::KERNEL_BITS;
    p.uuid.id = *b"ze-sim-device-01";
    let name = b"libpti simulated Level Zero device (test double)";
    for (d, s) in p
        .name
        .iter_mut()
        .zip(name.iter().chain(core::iter::once(&0)))
    {
        *d = *s as c_char;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetComputeProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_compute_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let p = unsafe { &mut *p };
    p.maxTotalGroupSize = 1024;
    p.maxGroupSizeX = 1024;
    p.maxGroupSizeY = 1024;
    p.maxGroupSizeZ = 64;
    p.maxGroupCountX = u32::MAX;
    p.maxGroupCountY = u32::MAX;
    p.maxGroupCountZ = u32::MAX;
    p.maxSharedLocalMemory = 64 * 1024;
    p.numSubGroupSizes = 1;
    p.subGroupSizes[0] = 16;
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetCommandQueueGroupProperties(
    _: ze_device_handle_t,
    pCount: *mut u32,
    p: *mut ze_command_queue_group_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        if (*pCount == 0 || p.is_null()) && !pCount.is_null() {
            *pCount = 1;
            return OK;
        }
        (*p).flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE
            | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        (*p).maxMemoryFillPatternSize = 128;
        (*p).numQueues = 4;
        *pCount = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetGlobalTimestamps(
    _: ze_device_handle_t,
    host: *mut u64,
    device: *mut u64,
) -> ze_result_t {
    if crate::modern::minimal().global_timestamps {
        return UNSUPPORTED;
    }
    let now = clock::host_ns();
    // SAFETY: see the module docs.
    unsafe {
        *host = now;
        *device = clock::masked(clock::ticks_at(now), clock::GLOBAL_BITS);
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetStatus(_: ze_device_handle_t) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeContextCreate(
    _: ze_driver_handle_t,
    _: *const ze_context_desc_t,
    ph: *mut ze_context_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Context, Context) };
    OK
}

pub(crate) unsafe extern "C" fn zeContextDestroy(h: ze_context_handle_t) -> ze_result_t {
    // SAFETY: a context of this fixture, not used again.
    unsafe { destroy::<Context, _>(Kind::Context, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeContextGetStatus(_: ze_context_handle_t) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *const ze_command_queue_desc_t,
    ph: *mut ze_command_queue_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Queue, Queue) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueDestroy(h: ze_command_queue_handle_t) -> ze_result_t {
    // SAFETY: a queue of this fixture, not used again.
    unsafe { destroy::<Queue, _>(Kind::Queue, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueExecuteCommandLists(
    _: ze_command_queue_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    fence: ze_fence_handle_t,
) -> ze_result_t {
    for i in 0..n as usize {
        // SAFETY: `n` lists of this fixture.
        run_list(unsafe { object(*lists.add(i)) });
    }
    if !fence.is_null() {
        // SAFETY: a fence of this fixture.
        let f: &Fence = unsafe { object(fence) };
        f.signaled.store(true, Ordering::Release);
    }
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueSynchronize(
    _: ze_command_queue_handle_t,
    _: u64,
) -> ze_result_t {
    OK
}

fn new_list(immediate: bool) -> List {
    List {
        immediate,
        commands: Mutex::new(Vec::new()),
    }
}

pub(crate) unsafe extern "C" fn zeCommandListCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *const ze_command_list_desc_t,
    ph: *mut ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::List, new_list(false)) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListCreateImmediate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *const ze_command_queue_desc_t,
    ph: *mut ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::List, new_list(true)) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListDestroy(h: ze_command_list_handle_t) -> ze_result_t {
    // SAFETY: a list of this fixture, not used again.
    unsafe { destroy::<List, _>(Kind::List, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListClose(_: ze_command_list_handle_t) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListReset(h: ze_command_list_handle_t) -> ze_result_t {
    // SAFETY: a list of this fixture.
    let list: &List = unsafe { object(h) };
    list.commands.lock().unwrap().clear();
    OK
}

/// The wait list of an append, copied.
///
/// # Safety
/// `waits` holds `n` events (or is NULL when `n` is 0).
pub(crate) unsafe fn wait_list(n: u32, waits: *mut ze_event_handle_t) -> Vec<ze_event_handle_t> {
    if n == 0 || waits.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(waits, n as usize) }.to_vec()
}

/// Appends to a list: an immediate list executes the command at once, a regular one keeps it
/// (and a counter-based signal event is pending from then on: its latest command is this one).
///
/// # Safety
/// `h` is a list of this fixture, `signal` NULL or an event of it, `waits` events of it.
pub(crate) unsafe fn append(
    h: ze_command_list_handle_t,
    work: Work,
    signal: ze_event_handle_t,
    waits: Vec<ze_event_handle_t>,
) -> ze_result_t {
    // SAFETY: the caller's contract.
    let list: &List = unsafe { object(h) };
    let command = Command {
        work,
        signal,
        waits,
    };
    if list.immediate {
        execute(&command);
    } else {
        rearm(signal);
        list.commands.lock().unwrap().push(command);
    }
    OK
}

/// Whether `h` is a counter-based event, which the host must neither reset nor signal (the
/// specification's rule; a real driver's behaviour then is undefined, this one refuses).
///
/// # Safety
/// `h` is NULL or an event of this fixture.
unsafe fn counter_based(h: ze_event_handle_t) -> bool {
    // SAFETY: the caller's contract.
    !h.is_null() && unsafe { object::<Event, _>(h) }.counter_based
}

pub(crate) unsafe extern "C" fn zeCommandListAppendBarrier(
    h: ze_command_list_handle_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Barrier, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendMemoryRangesBarrier(
    h: ze_command_list_handle_t,
    _: u32,
    _: *const usize,
    _: *mut *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Barrier, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendMemoryCopy(
    h: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    let work = Work::Copy {
        dst: dst as usize,
        src: src as usize,
        bytes: size,
    };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendMemoryFill(
    h: ze_command_list_handle_t,
    ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the pattern holds `pattern_size` bytes.
    let pattern =
        unsafe { core::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
    let work = Work::Fill {
        dst: ptr as usize,
        pattern,
        bytes: size,
    };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendSignalEvent(
    h: ze_command_list_handle_t,
    event: ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Signal, event, Vec::new()) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendWaitOnEvents(
    h: ze_command_list_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        append(
            h,
            Work::Signal,
            core::ptr::null_mut(),
            wait_list(n_waits, waits),
        )
    }
}

/// A prefetch: memory is always where the CPU is, so the command does nothing when it runs.
pub(crate) unsafe extern "C" fn zeCommandListAppendMemoryPrefetch(
    h: ze_command_list_handle_t,
    _ptr: *const c_void,
    _size: usize,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Signal, core::ptr::null_mut(), Vec::new()) }
}

/// Memory advice: taken, and without effect, as on a CPU.
pub(crate) unsafe extern "C" fn zeCommandListAppendMemAdvise(
    h: ze_command_list_handle_t,
    _device: ze_device_handle_t,
    _ptr: *const c_void,
    _size: usize,
    _advice: ze_memory_advice_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Signal, core::ptr::null_mut(), Vec::new()) }
}

/// Launches of several kernels whose count and group counts are in memory: the fixture signals
/// the event and runs none of them (no test needs their effect; their accounting is what is
/// tested).
pub(crate) unsafe extern "C" fn zeCommandListAppendLaunchMultipleKernelsIndirect(
    h: ze_command_list_handle_t,
    _n_kernels: u32,
    _kernels: *mut ze_kernel_handle_t,
    _count: *const u32,
    _arguments: *const ze_group_count_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Signal, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendEventReset(
    h: ze_command_list_handle_t,
    event: ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: an event of this fixture.
    if unsafe { counter_based(event) } {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Reset(event), core::ptr::null_mut(), Vec::new()) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendLaunchKernel(
    h: ze_command_list_handle_t,
    kernel: ze_kernel_handle_t,
    groups: *const ze_group_count_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture and a group count, as the API requires.
    let (k, g): (&Kernel, &ze_group_count_t) = unsafe { (object(kernel), &*groups) };
    let size = *k.group_size.lock().unwrap();
    let items = u64::from(g.groupCountX * size[0])
        * u64::from(g.groupCountY * size[1])
        * u64::from(g.groupCountZ * size[2]);
    let work = Work::Kernel {
        name: k.name.to_string_lossy().into_owned(),
        args: k.args.lock().unwrap().clone(),
        items,
    };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeEventPoolCreate(
    _: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    _: u32,
    _: *mut ze_device_handle_t,
    ph: *mut ze_event_pool_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        *ph = into_handle(
            Kind::Pool,
            Pool {
                flags: (*desc).flags,
            },
        )
    };
    OK
}

pub(crate) unsafe extern "C" fn zeEventPoolDestroy(h: ze_event_pool_handle_t) -> ze_result_t {
    // SAFETY: a pool of this fixture, not used again.
    unsafe { destroy::<Pool, _>(Kind::Pool, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventCreate(
    pool: ze_event_pool_handle_t,
    _: *const ze_event_desc_t,
    ph: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: a pool of this fixture.
    let pool: &Pool = unsafe { object(pool) };
    let asked = pool.flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP != 0;
    let event = Event::new(crate::modern::kernel_timestamps(asked), false);
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Event, event) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventDestroy(h: ze_event_handle_t) -> ze_result_t {
    // SAFETY: an event of this fixture, not used again.
    unsafe { destroy::<Event, _>(Kind::Event, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventHostSignal(h: ze_event_handle_t) -> ze_result_t {
    // SAFETY: an event of this fixture.
    if unsafe { counter_based(h) } {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: an event of this fixture.
    let e: &Event = unsafe { object(h) };
    e.signaled.store(true, Ordering::Release);
    OK
}

pub(crate) unsafe extern "C" fn zeEventHostSynchronize(
    h: ze_event_handle_t,
    timeout: u64,
) -> ze_result_t {
    // SAFETY: an event of this fixture.
    let e: &Event = unsafe { object(h) };
    let deadline = clock::host_ns().saturating_add(timeout);
    while !e.signaled.load(Ordering::Acquire) {
        if clock::host_ns() >= deadline {
            return ZE_RESULT_NOT_READY;
        }
        std::thread::yield_now();
    }
    OK
}

pub(crate) unsafe extern "C" fn zeEventQueryStatus(h: ze_event_handle_t) -> ze_result_t {
    if crate::modern::minimal().query_status {
        return UNSUPPORTED;
    }
    // SAFETY: an event of this fixture.
    let e: &Event = unsafe { object(h) };
    if e.signaled.load(Ordering::Acquire) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeEventHostReset(h: ze_event_handle_t) -> ze_result_t {
    // SAFETY: an event of this fixture.
    if unsafe { counter_based(h) } {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: an event of this fixture.
    unsafe { object::<Event, _>(h) }.reset();
    OK
}

pub(crate) unsafe extern "C" fn zeEventQueryKernelTimestamp(
    h: ze_event_handle_t,
    dst: *mut ze_kernel_timestamp_result_t,
) -> ze_result_t {
    if crate::modern::minimal().kernel_timestamps {
        return UNSUPPORTED;
    }
    // SAFETY: an event of this fixture.
    let e: &Event = unsafe { object(h) };
    if !e.timestamps {
        // A counter-based event created without a timestamp flag: a wrong argument; an event
        // of a pool without the flag: a feature its pool lacks.
        return if e.counter_based {
            ZE_RESULT_ERROR_INVALID_ARGUMENT
        } else {
            UNSUPPORTED
        };
    }
    let Some((start, end)) = *e.span.lock().unwrap() else {
        return ZE_RESULT_NOT_READY;
    };
    let data = ze_kernel_timestamp_data_t {
        kernelStart: clock::masked(start, clock::KERNEL_BITS),
        kernelEnd: clock::masked(end, clock::KERNEL_BITS),
    };
    // SAFETY: see the module docs.
    unsafe {
        *dst = ze_kernel_timestamp_result_t {
            global: data,
            context: data,
        }
    };
    OK
}

pub(crate) unsafe extern "C" fn zeFenceCreate(
    _: ze_command_queue_handle_t,
    _: *const ze_fence_desc_t,
    ph: *mut ze_fence_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        *ph = into_handle(
            Kind::Fence,
            Fence {
                signaled: AtomicBool::new(false),
            },
        )
    };
    OK
}

pub(crate) unsafe extern "C" fn zeFenceDestroy(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this fixture, not used again.
    unsafe { destroy::<Fence, _>(Kind::Fence, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeFenceHostSynchronize(
    h: ze_fence_handle_t,
    _: u64,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { zeFenceQueryStatus(h) }
}

pub(crate) unsafe extern "C" fn zeFenceQueryStatus(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this fixture.
    let f: &Fence = unsafe { object(h) };
    if f.signaled.load(Ordering::Acquire) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeFenceReset(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this fixture.
    let f: &Fence = unsafe { object(h) };
    f.signaled.store(false, Ordering::Release);
    OK
}

/// The kernels every module of the fixture holds.
const KERNELS: [&core::ffi::CStr; 3] = [c"vadd", c"scale", c"spin"];

pub(crate) unsafe extern "C" fn zeModuleCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *const ze_module_desc_t,
    ph: *mut ze_module_handle_t,
    log: *mut ze_module_build_log_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        *ph = into_handle(Kind::Module, Module);
        if !log.is_null() {
            *log = core::ptr::null_mut();
        }
    }
    OK
}

pub(crate) unsafe extern "C" fn zeModuleDestroy(h: ze_module_handle_t) -> ze_result_t {
    // SAFETY: a module of this fixture, not used again.
    unsafe { destroy::<Module, _>(Kind::Module, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeModuleGetKernelNames(
    _: ze_module_handle_t,
    pCount: *mut u32,
    pNames: *mut *const c_char,
) -> ze_result_t {
    let names: Vec<*const c_char> = KERNELS.iter().map(|k| k.as_ptr()).collect();
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, pNames, &names) }
}

pub(crate) unsafe extern "C" fn zeModuleBuildLogDestroy(
    _: ze_module_build_log_handle_t,
) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeModuleBuildLogGetString(
    _: ze_module_build_log_handle_t,
    size: *mut usize,
    log: *mut c_char,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        if !log.is_null() && *size > 0 {
            *log = 0;
        }
        *size = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeKernelCreate(
    _: ze_module_handle_t,
    desc: *const ze_kernel_desc_t,
    ph: *mut ze_kernel_handle_t,
) -> ze_result_t {
    // SAFETY: a kernel descriptor with a NUL-terminated name, as the API requires.
    let name = unsafe { core::ffi::CStr::from_ptr((*desc).pKernelName) };
    if !KERNELS.contains(&name) {
        return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    }
    let kernel = Kernel {
        name: name.to_owned(),
        args: Mutex::new(HashMap::new()),
        group_size: Mutex::new([1, 1, 1]),
    };
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Kernel, kernel) };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelDestroy(h: ze_kernel_handle_t) -> ze_result_t {
    // SAFETY: a kernel of this fixture, not used again.
    unsafe { destroy::<Kernel, _>(Kind::Kernel, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetGroupSize(
    h: ze_kernel_handle_t,
    x: u32,
    y: u32,
    z: u32,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture.
    let k: &Kernel = unsafe { object(h) };
    *k.group_size.lock().unwrap() = [x.max(1), y.max(1), z.max(1)];
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSuggestGroupSize(
    _: ze_kernel_handle_t,
    gx: u32,
    _: u32,
    _: u32,
    x: *mut u32,
    y: *mut u32,
    z: *mut u32,
) -> ze_result_t {
    let size = [256, 128, 64, 32, 16, 8, 4, 2, 1]
        .into_iter()
        .find(|s| gx.is_multiple_of(*s))
        .unwrap_or(1);
    // SAFETY: see the module docs.
    unsafe {
        *x = size;
        *y = 1;
        *z = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetArgumentValue(
    h: ze_kernel_handle_t,
    index: u32,
    size: usize,
    value: *const c_void,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture; `value` holds `size` bytes (or is NULL).
    let (k, bytes): (&Kernel, Vec<u8>) = unsafe {
        (
            object(h),
            if value.is_null() {
                vec![0; size]
            } else {
                core::slice::from_raw_parts(value.cast::<u8>(), size).to_vec()
            },
        )
    };
    k.args.lock().unwrap().insert(index, bytes);
    OK
}

pub(crate) unsafe extern "C" fn zeKernelGetName(
    h: ze_kernel_handle_t,
    size: *mut usize,
    name: *mut c_char,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture; `name` has room for `*size` bytes when not NULL.
    unsafe {
        let k: &Kernel = object(h);
        let bytes = k.name.as_bytes_with_nul();
        if !name.is_null() {
            let n = (*size).min(bytes.len());
            core::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), name, n);
        }
        *size = bytes.len();
    }
    OK
}

unsafe fn allocate(
    kind: ze_memory_type_t,
    size: usize,
    alignment: usize,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    let align = alignment.max(64);
    let mut ptr = core::ptr::null_mut();
    // SAFETY: a power-of-two alignment and a writable out-pointer.
    if unsafe { libc::posix_memalign(&mut ptr, align, size.max(1)) } != 0 {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    created(Kind::Allocation);
    ALLOCATIONS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(ptr as usize, (kind, size));
    // SAFETY: see the module docs.
    unsafe { *pptr = ptr };
    OK
}

pub(crate) unsafe extern "C" fn zeMemAllocShared(
    _: ze_context_handle_t,
    _: *const ze_device_mem_alloc_desc_t,
    _: *const ze_host_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    _: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_SHARED, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemAllocDevice(
    _: ze_context_handle_t,
    _: *const ze_device_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    _: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_DEVICE, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemAllocHost(
    _: ze_context_handle_t,
    _: *const ze_host_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_HOST, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemFree(_: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
    let known = ALLOCATIONS
        .lock()
        .unwrap()
        .as_mut()
        .and_then(|m| m.remove(&(ptr as usize)))
        .is_some();
    if !known {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    destroyed(Kind::Allocation);
    // SAFETY: memory this fixture allocated with posix_memalign.
    unsafe { libc::free(ptr) };
    OK
}

/// The allocation holding `ptr`: (base, type, size).
fn find_allocation(ptr: usize) -> Option<(usize, ze_memory_type_t, usize)> {
    ALLOCATIONS
        .lock()
        .unwrap()
        .as_ref()?
        .iter()
        .find(|(base, (_, size))| ptr >= **base && ptr < **base + *size)
        .map(|(base, (kind, size))| (*base, *kind, *size))
}

pub(crate) unsafe extern "C" fn zeMemGetAllocProperties(
    _: ze_context_handle_t,
    ptr: *const c_void,
    p: *mut ze_memory_allocation_properties_t,
    device: *mut ze_device_handle_t,
) -> ze_result_t {
    let found = find_allocation(ptr as usize);
    // SAFETY: see the module docs.
    unsafe {
        (*p).type_ = found.map_or(ZE_MEMORY_TYPE_UNKNOWN, |f| f.1);
        (*p).id = found.map_or(0, |f| f.0 as u64);
        (*p).pageSize = 4096;
        if !device.is_null() {
            *device = if found.is_some_and(|f| f.1 != ZE_MEMORY_TYPE_HOST) {
                device_handle()
            } else {
                core::ptr::null_mut()
            };
        }
    }
    OK
}

pub(crate) unsafe extern "C" fn zeMemGetAddressRange(
    _: ze_context_handle_t,
    ptr: *const c_void,
    base: *mut *mut c_void,
    size: *mut usize,
) -> ze_result_t {
    let Some((b, _, s)) = find_allocation(ptr as usize) else {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    };
    // SAFETY: see the module docs.
    unsafe {
        if !base.is_null() {
            *base = b as *mut c_void;
        }
        if !size.is_null() {
            *size = s;
        }
    }
    OK
}
