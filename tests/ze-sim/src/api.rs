//! The core Level Zero functions the driver implements (see `tables` for how the loader finds
//! them): the driver and its devices, contexts, queues, command lists and their appends, event
//! pools, events and fences. Modules, kernels and memory are in `memory`. Pointers the caller
//! passes are trusted, as a driver may: this is a test double.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pti_sys::level_zero::*;

use crate::clock;
use crate::config::minimal;
use crate::device::{self, device, devices};
use crate::engine::{deadline, wait_until};
use crate::event::{CB_IMMEDIATE, CB_NON_IMMEDIATE, Event, Pool, Timestamps, create_in_pool};
use crate::exec::Work;
use crate::list::{List, Queue, append, event, wait_list};
use crate::objects::*;
use crate::report;

const OK: ze_result_t = ZE_RESULT_SUCCESS;
const UNSUPPORTED: ze_result_t = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// Fills `out` (room for `*count` items) with `items`, the Level Zero way: a zero count asks for
/// the number only.
pub(crate) unsafe fn list_out<T: Copy>(count: *mut u32, out: *mut T, items: &[T]) -> ze_result_t {
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

// === driver and devices ===

pub(crate) unsafe extern "C" fn zeInit(flags: ze_init_flags_t) -> ze_result_t {
    clock::start();
    report::at_exit();
    device::init(flags)
}

/// `zeInitDrivers` (spec 1.10): the driver's handle where `desc` names its type; modern loaders
/// ask each driver with the caller's descriptor, so the set of drivers is filtered per call.
pub(crate) unsafe extern "C" fn zeInitDrivers(
    pCount: *mut u32,
    phDrivers: *mut ze_driver_handle_t,
    desc: *mut ze_init_driver_type_desc_t,
) -> ze_result_t {
    if desc.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: checked non-NULL; the caller passes a descriptor.
    let status = device::init_drivers(unsafe { (*desc).flags });
    if status != ZE_RESULT_SUCCESS {
        return status;
    }
    clock::start();
    report::at_exit();
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, phDrivers, &[device::driver_handle()]) }
}

pub(crate) unsafe extern "C" fn zeDriverGet(
    pCount: *mut u32,
    phDrivers: *mut ze_driver_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, phDrivers, &[device::driver_handle()]) }
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
        (*p).uuid.id = match device::role() {
            device::Role::Gpu => *b"libpti-ze-sim\0\0\0",
            device::Role::Npu => *b"libpti-ze-simnpu",
        };
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
    unsafe { list_out(pCount, phDevices, &device::listed()) }
}

pub(crate) unsafe extern "C" fn zeDeviceGetSubDevices(
    h: ze_device_handle_t,
    pCount: *mut u32,
    p: *mut ze_device_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, p, &device::sub_devices(device(h))) }
}

/// The simulated device's PCI address, 0000:3a:00.0 (the NPU's 0000:3b:00.0).
pub(crate) fn pci_address() -> ze_pci_address_ext_t {
    ze_pci_address_ext_t {
        domain: 0,
        bus: match device::role() {
            device::Role::Gpu => 0x3a,
            device::Role::Npu => 0x3b,
        },
        device: 0,
        function: 0,
    }
}

pub(crate) unsafe extern "C" fn zeDevicePciGetPropertiesExt(
    _: ze_device_handle_t,
    p: *mut ze_pci_ext_properties_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let p = unsafe { &mut *p };
    p.address = pci_address();
    p.maxSpeed = ze_pci_speed_ext_t {
        genVersion: 4,
        width: 16,
        maxBandwidth: 32_000_000_000,
    };
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetProperties(
    h: ze_device_handle_t,
    p: *mut ze_device_properties_t,
) -> ze_result_t {
    let d = device(h);
    // SAFETY: see the module docs.
    let p = unsafe { &mut *p };
    p.type_ = d.kind;
    p.vendorId = 0x8086;
    p.deviceId = if d.kind == ZE_DEVICE_TYPE_VPU {
        0x7d1d
    } else {
        0x5151
    };
    p.flags = if d.is_tile() {
        ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE
    } else {
        0
    };
    p.subdeviceId = d.index.saturating_sub(1) as u32;
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
    let mut uuid = *b"ze-sim-device-00";
    uuid[14] = b'0' + d.index as u8;
    if d.kind == ZE_DEVICE_TYPE_VPU {
        uuid[13] = b'n';
    }
    p.uuid.id = uuid;
    let name: &[u8] = match (d.kind, d.is_tile()) {
        (ZE_DEVICE_TYPE_VPU, _) => b"libpti simulated Level Zero NPU (test double)",
        (_, true) => b"libpti simulated Level Zero device, one tile (test double)",
        _ => b"libpti simulated Level Zero device (test double)",
    };
    for (dst, src) in p
        .name
        .iter_mut()
        .zip(name.iter().chain(core::iter::once(&0)))
    {
        *dst = *src as c_char;
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
    h: ze_device_handle_t,
    pCount: *mut u32,
    p: *mut ze_command_queue_group_properties_t,
) -> ze_result_t {
    if pCount.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let groups = device::queue_groups(device(h));
    // SAFETY: the caller's count, and room for that many properties when `p` is not NULL.
    unsafe {
        if *pCount == 0 || p.is_null() {
            *pCount = groups.len() as u32;
            return OK;
        }
        let n = (*pCount as usize).min(groups.len());
        for (i, (flags, queues)) in groups.into_iter().take(n).enumerate() {
            let g = &mut *p.add(i);
            g.flags = flags;
            g.maxMemoryFillPatternSize = 128;
            g.numQueues = queues;
        }
        *pCount = n as u32;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetGlobalTimestamps(
    _: ze_device_handle_t,
    host: *mut u64,
    device: *mut u64,
) -> ze_result_t {
    if minimal().global_timestamps {
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

/// `zeDeviceSynchronize`: until every engine of the device (and of its tiles) is idle.
pub(crate) unsafe extern "C" fn zeDeviceSynchronize(h: ze_device_handle_t) -> ze_result_t {
    let d = device(h);
    let engines: Vec<_> = core::iter::once(d)
        .chain(d.tiles.iter().map(|&t| &devices()[t]))
        .flat_map(|d| d.engines.iter())
        .collect();
    wait_until(u64::MAX, || engines.iter().all(|e| e.idle()));
    OK
}

// === contexts ===

pub(crate) unsafe extern "C" fn zeContextCreate(
    _: ze_driver_handle_t,
    _: *const ze_context_desc_t,
    ph: *mut ze_context_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Context, Arc::new(Context)) };
    OK
}

pub(crate) unsafe extern "C" fn zeContextDestroy(h: ze_context_handle_t) -> ze_result_t {
    // SAFETY: a context of this driver, not used again.
    unsafe { destroy::<Context, _>(Kind::Context, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeContextGetStatus(_: ze_context_handle_t) -> ze_result_t {
    OK
}

// === queues ===

pub(crate) unsafe extern "C" fn zeCommandQueueCreate(
    _: ze_context_handle_t,
    dev: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    ph: *mut ze_command_queue_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let desc = unsafe { desc.as_ref() };
    let queue = Queue::new(
        device(dev),
        desc.map_or(0, |d| d.ordinal),
        desc.is_some_and(|d| d.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS),
    );
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Queue, Arc::new(queue)) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueDestroy(h: ze_command_queue_handle_t) -> ze_result_t {
    // SAFETY: a queue of this driver, not used again.
    unsafe { destroy::<Queue, _>(Kind::Queue, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandQueueExecuteCommandLists(
    h: ze_command_queue_handle_t,
    n: u32,
    lists: *mut ze_command_list_handle_t,
    fence: ze_fence_handle_t,
) -> ze_result_t {
    // SAFETY: a queue of this driver.
    let queue: &Queue = unsafe { object(h) };
    let lists: Vec<&List> = (0..n as usize)
        // SAFETY: `n` lists of this driver.
        .map(|i| unsafe { object(*lists.add(i)) })
        .collect();
    // SAFETY: NULL or a fence of this driver.
    let fence = (!fence.is_null()).then(|| unsafe { shared::<Fence, _>(fence) });
    queue.execute(&lists, fence)
}

pub(crate) unsafe extern "C" fn zeCommandQueueSynchronize(
    h: ze_command_queue_handle_t,
    timeout: u64,
) -> ze_result_t {
    // SAFETY: a queue of this driver.
    unsafe { object::<Queue, _>(h) }.synchronize(timeout)
}

// === command lists ===

/// Whether a descriptor chain holds a structure of type `stype`.
///
/// # Safety
/// `next` is NULL or a chain of Level Zero structures.
pub(crate) unsafe fn chained(mut next: *const c_void, stype: ze_structure_type_t) -> bool {
    #[repr(C)]
    struct Header {
        stype: ze_structure_type_t,
        p_next: *const c_void,
    }
    while !next.is_null() {
        // SAFETY: every structure of a chain starts with its type and the next one.
        let h = unsafe { &*next.cast::<Header>() };
        if h.stype == stype {
            return true;
        }
        next = h.p_next;
    }
    false
}

pub(crate) unsafe extern "C" fn zeCommandListCreate(
    _: ze_context_handle_t,
    dev: ze_device_handle_t,
    desc: *const ze_command_list_desc_t,
    ph: *mut ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let desc = unsafe { desc.as_ref() };
    let flags = desc.map_or(0, |d| d.flags);
    // SAFETY: the descriptor's chain.
    let mutable = desc.is_some_and(|d| unsafe {
        chained(d.pNext, ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC)
    });
    let list = List::new(
        false,
        flags & ZE_COMMAND_LIST_FLAG_IN_ORDER != 0,
        false,
        device(dev),
        desc.map_or(0, |d| d.commandQueueGroupOrdinal),
    )
    .with_flags(mutable, flags & ZE_COMMAND_LIST_FLAG_EXP_CLONEABLE != 0);
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::List, Arc::new(list)) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListCreateImmediate(
    _: ze_context_handle_t,
    dev: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    ph: *mut ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    let desc = unsafe { desc.as_ref() };
    let list = List::new(
        true,
        desc.is_some_and(|d| d.flags & ZE_COMMAND_QUEUE_FLAG_IN_ORDER != 0),
        desc.is_some_and(|d| d.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS),
        device(dev),
        desc.map_or(0, |d| d.ordinal),
    );
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::List, Arc::new(list)) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListDestroy(h: ze_command_list_handle_t) -> ze_result_t {
    // SAFETY: a list of this driver, not used again.
    unsafe { destroy::<List, _>(Kind::List, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListClose(h: ze_command_list_handle_t) -> ze_result_t {
    // SAFETY: a list of this driver.
    unsafe { object::<List, _>(h) }.state().closed = true;
    OK
}

pub(crate) unsafe extern "C" fn zeCommandListReset(h: ze_command_list_handle_t) -> ze_result_t {
    // SAFETY: a list of this driver.
    let mut state = unsafe { object::<List, _>(h) }.state();
    state.commands.clear();
    state.closed = false;
    state.next_id = None;
    OK
}

/// `zeCommandListHostSynchronize`: until everything appended to the immediate list has run.
pub(crate) unsafe extern "C" fn zeCommandListHostSynchronize(
    h: ze_command_list_handle_t,
    timeout: u64,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a list of this driver.
    let list: &List = unsafe { object(h) };
    if list.state().capture.is_some() {
        return ZE_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED;
    }
    if list.wait(deadline(timeout)) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

// === appends ===

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
            Work::Wait,
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

/// Launches of several kernels whose count and group counts are in memory: the driver signals
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
    reset: ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: an event of this driver.
    let Some(reset) = (unsafe { event(reset) }) else {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    };
    // SAFETY: see the module docs.
    unsafe { append(h, Work::Reset(reset), core::ptr::null_mut(), Vec::new()) }
}

/// A launch of `kernel` in `groups` groups (its group size as last set).
///
/// # Safety
/// `kernel` is a kernel of this driver.
pub(crate) unsafe fn launch(kernel: ze_kernel_handle_t, groups: ze_group_count_t) -> Work {
    // SAFETY: the caller's contract.
    let k: &Kernel = unsafe { object(kernel) };
    Work::Kernel {
        name: k.name.to_string_lossy().into_owned(),
        args: k.args.lock().unwrap().clone(),
        groups: [groups.groupCountX, groups.groupCountY, groups.groupCountZ],
        size: *k.group_size.lock().unwrap(),
    }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendLaunchKernel(
    h: ze_command_list_handle_t,
    kernel: ze_kernel_handle_t,
    groups: *const ze_group_count_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if kernel.is_null() || groups.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a kernel of this driver and a group count, as the API requires.
    let work = unsafe { launch(kernel, *groups) };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendQueryKernelTimestamps(
    h: ze_command_list_handle_t,
    n: u32,
    events: *mut ze_event_handle_t,
    dst: *mut c_void,
    offsets: *const usize,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: `n` events of this driver.
    let events = unsafe { wait_list(n, events) };
    if events.len() != n as usize || (n > 0 && dst.is_null()) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let offsets = if offsets.is_null() {
        Vec::new()
    } else {
        // SAFETY: `n` offsets, as the API requires when not NULL.
        unsafe { core::slice::from_raw_parts(offsets, n as usize) }.to_vec()
    };
    let work = Work::QueryTimestamps {
        events,
        dst: dst as usize,
        offsets,
    };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendWriteGlobalTimestamp(
    h: ze_command_list_handle_t,
    dst: *mut u64,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if dst.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let work = Work::WriteGlobalTimestamp { dst: dst as usize };
    // SAFETY: see the module docs.
    unsafe { append(h, work, signal, wait_list(n_waits, waits)) }
}

// === event pools and events ===

/// The counter-based descriptor first in a pool descriptor's `pNext` (only there does the
/// driver look, `EventPool::setupDescriptorFlags`): its flags, 0 meaning `IMMEDIATE`.
///
/// # Safety
/// `next` is NULL or a chain of Level Zero structures.
unsafe fn counter_based_flags(next: *const c_void) -> Option<u32> {
    if next.is_null() {
        return None;
    }
    // SAFETY: the first structure of the chain starts with its type.
    let first = unsafe { &*next.cast::<ze_event_pool_counter_based_exp_desc_t>() };
    let flags = if first.flags == 0 {
        CB_IMMEDIATE
    } else {
        first.flags
    };
    (first.stype == ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC).then_some(flags)
}

pub(crate) unsafe extern "C" fn zeEventPoolCreate(
    _: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    _: u32,
    _: *mut ze_device_handle_t,
    ph: *mut ze_event_pool_handle_t,
) -> ze_result_t {
    if desc.is_null() || ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the program's descriptor, checked above.
    let desc = unsafe { &*desc };
    let timestamps =
        ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP;
    // The specification: the two kinds of timestamps cannot be combined.
    if desc.flags & timestamps == timestamps {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the descriptor's chain.
    let counter_based = unsafe { counter_based_flags(desc.pNext) };
    if let Some(flags) = counter_based {
        if desc.flags & ZE_EVENT_POOL_FLAG_IPC != 0 {
            return UNSUPPORTED;
        }
        if flags & (CB_IMMEDIATE | CB_NON_IMMEDIATE) == 0 {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
    }
    let pool = Pool {
        flags: desc.flags,
        counter_based,
    };
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::Pool, Arc::new(pool)) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventPoolDestroy(h: ze_event_pool_handle_t) -> ze_result_t {
    // SAFETY: a pool of this driver, not used again.
    unsafe { destroy::<Pool, _>(Kind::Pool, h) };
    OK
}

/// `zeEventPoolGetFlags`: the flags the pool was created with.
pub(crate) unsafe extern "C" fn zeEventPoolGetFlags(
    h: ze_event_pool_handle_t,
    flags: *mut ze_event_pool_flags_t,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    if flags.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a pool of this driver, and a writable answer.
    unsafe { *flags = object::<Pool, _>(h).flags };
    OK
}

pub(crate) unsafe extern "C" fn zeEventCreate(
    pool: ze_event_pool_handle_t,
    _: *const ze_event_desc_t,
    ph: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: a pool of this driver.
    let pool: &Pool = unsafe { object(pool) };
    // SAFETY: see the module docs.
    unsafe { *ph = create_in_pool(pool) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventDestroy(h: ze_event_handle_t) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: an event of this driver (lists and graphs that record it may hold it too: only
    // commands submitted and not yet run make it in use).
    let busy = unsafe { object::<Event, _>(h) }.in_use();
    // SAFETY: an event of this driver, not used again.
    unsafe { destroy_checked::<Event, _>(Kind::Event, h, Some(busy)) };
    OK
}

pub(crate) unsafe extern "C" fn zeEventHostSignal(h: ze_event_handle_t) -> ze_result_t {
    // SAFETY: an event of this driver.
    unsafe { object::<Event, _>(h) }.host_signal()
}

pub(crate) unsafe extern "C" fn zeEventHostSynchronize(
    h: ze_event_handle_t,
    timeout: u64,
) -> ze_result_t {
    // SAFETY: an event of this driver.
    let e: &Event = unsafe { object(h) };
    if wait_until(deadline(timeout), || e.completed()) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeEventQueryStatus(h: ze_event_handle_t) -> ze_result_t {
    if minimal().query_status {
        return UNSUPPORTED;
    }
    report::count(report::Counter::StatusQueries);
    // SAFETY: an event of this driver.
    if unsafe { object::<Event, _>(h) }.completed() {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeEventHostReset(h: ze_event_handle_t) -> ze_result_t {
    // SAFETY: an event of this driver.
    unsafe { object::<Event, _>(h) }.host_reset()
}

/// Why an event gives no kernel timestamps: an event of a pool without the flag lacks a feature
/// of its pool; a counter-based one created without a timestamp flag is a wrong argument.
fn no_timestamps(e: &Event) -> ze_result_t {
    if e.cb_flags.is_some() {
        ZE_RESULT_ERROR_INVALID_ARGUMENT
    } else {
        UNSUPPORTED
    }
}

pub(crate) unsafe extern "C" fn zeEventQueryKernelTimestamp(
    h: ze_event_handle_t,
    dst: *mut ze_kernel_timestamp_result_t,
) -> ze_result_t {
    if minimal().kernel_timestamps {
        return UNSUPPORTED;
    }
    report::count(report::Counter::TimestampQueries);
    // SAFETY: an event of this driver.
    let e: &Event = unsafe { object(h) };
    if e.timestamps == Timestamps::None {
        return no_timestamps(e);
    }
    let Some((start, end)) = e.kernel_timestamps() else {
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

/// `zeEventQueryKernelTimestampsExt`: one result per timestamp packet (one per tile of the
/// device that ran the command; the driver's reduced result for each here), and for an event of
/// a `KERNEL_MAPPED_TIMESTAMP` pool the same on the host clock (ns).
pub(crate) unsafe extern "C" fn zeEventQueryKernelTimestampsExt(
    h: ze_event_handle_t,
    dev: ze_device_handle_t,
    count: *mut u32,
    results: *mut ze_event_query_kernel_timestamps_results_ext_properties_t,
) -> ze_result_t {
    if h.is_null() || count.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: an event of this driver.
    let e: &Event = unsafe { object(h) };
    if e.timestamps == Timestamps::None {
        return no_timestamps(e);
    }
    let packets = device(dev).tiles.len().max(1) as u32;
    // SAFETY: the caller's count.
    unsafe {
        if *count == 0 || results.is_null() {
            *count = packets;
            return OK;
        }
    }
    if !e.completed() {
        return ZE_RESULT_NOT_READY;
    }
    let Some((start, end)) = e.kernel_timestamps() else {
        return ZE_RESULT_NOT_READY;
    };
    // SAFETY: the caller's count and results, with room for that many entries in each buffer.
    unsafe {
        let n = (*count).min(packets) as usize;
        let r = &*results;
        for i in 0..n {
            if !r.pKernelTimestampsBuffer.is_null() {
                let data = ze_kernel_timestamp_data_t {
                    kernelStart: clock::masked(start, clock::KERNEL_BITS),
                    kernelEnd: clock::masked(end, clock::KERNEL_BITS),
                };
                *r.pKernelTimestampsBuffer.add(i) = ze_kernel_timestamp_result_t {
                    global: data,
                    context: data,
                };
            }
            if !r.pSynchronizedTimestampsBuffer.is_null() && e.timestamps == Timestamps::Mapped {
                let data = ze_synchronized_timestamp_data_ext_t {
                    kernelStart: clock::host_at(start),
                    kernelEnd: clock::host_at(end),
                };
                *r.pSynchronizedTimestampsBuffer.add(i) = ze_synchronized_timestamp_result_ext_t {
                    global: data,
                    context: data,
                };
            }
        }
        *count = n as u32;
    }
    OK
}

// === fences ===

pub(crate) unsafe extern "C" fn zeFenceCreate(
    _: ze_command_queue_handle_t,
    _: *const ze_fence_desc_t,
    ph: *mut ze_fence_handle_t,
) -> ze_result_t {
    let fence = Fence {
        signaled: AtomicBool::new(false),
    };
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Fence, Arc::new(fence)) };
    OK
}

pub(crate) unsafe extern "C" fn zeFenceDestroy(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this driver, not used again.
    unsafe { destroy::<Fence, _>(Kind::Fence, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeFenceHostSynchronize(
    h: ze_fence_handle_t,
    timeout: u64,
) -> ze_result_t {
    // SAFETY: a fence of this driver.
    let f: &Fence = unsafe { object(h) };
    if wait_until(deadline(timeout), || f.signaled.load(Ordering::Acquire)) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeFenceQueryStatus(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this driver.
    let f: &Fence = unsafe { object(h) };
    if f.signaled.load(Ordering::Acquire) {
        OK
    } else {
        ZE_RESULT_NOT_READY
    }
}

pub(crate) unsafe extern "C" fn zeFenceReset(h: ze_fence_handle_t) -> ze_result_t {
    // SAFETY: a fence of this driver.
    let f: &Fence = unsafe { object(h) };
    f.signaled.store(false, Ordering::Release);
    OK
}
