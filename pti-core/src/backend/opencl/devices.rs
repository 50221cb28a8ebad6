//! Devices as device records need them: identity (handle, PCI address, UUID, CPU or not), the
//! runtime's USM query for classifying pointers, and each device's conversion of timestamps
//! onto the host clock (`backend::timing`), fed by `clGetDeviceAndHostTimer` where it works.

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pti_sys::opencl::*;

use super::{next, query};
use crate::backend::timing::{DeviceTimes, HostTimes, Timing};
use crate::clock;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, PTI_MAX_PCI_ADDRESS_SIZE, pti_view_memory_type};
use crate::view::device::DeviceIdentity;

/// A synchronisation pair whose host reads lie further apart than this is retried.
const MAX_PAIR_SPREAD_NS: u64 = 50_000;

/// A device as the records see it.
pub(super) struct Device {
    pub(super) identity: DeviceIdentity,
    pub(super) is_cpu: bool,
    /// The runtime's `clGetMemAllocInfoINTEL`, where the platform has USM.
    mem_alloc_info: clGetMemAllocInfoINTEL_t,
    /// This device's entry in [`TIMINGS`].
    timing: usize,
    /// The device gives no timestamps for barrier events (learnt from the first one).
    barriers_untimed: AtomicBool,
}

// SAFETY: the raw handles inside are opaque values libpti passes back to the runtime, which
// allows OpenCL objects to be used from any thread; the mutable state is behind a lock.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

static DEVICES: WriterLock<Vec<Arc<Device>>> = WriterLock::new(Vec::new());

/// Every device's conversion state, by [`Device::timing`]: one lock for all, taken briefly.
static TIMINGS: WriterLock<Vec<Timing>> = WriterLock::new(Vec::new());

/// The locks of this module, for the fork handlers.
pub(super) fn fork_locks() -> [&'static dyn ForkLock; 2] {
    [&DEVICES, &TIMINGS]
}

/// The device `handle` (looked up, or probed on first use).
pub(super) fn get(handle: cl_device_id) -> Arc<Device> {
    let find = |devices: &Vec<Arc<Device>>| {
        devices
            .iter()
            .find(|d| d.identity.device == handle)
            .cloned()
    };
    if let Some(d) = find(&DEVICES.lock()) {
        return d;
    }
    // Probed outside the lock: the queries call into the runtime.
    let probed = Arc::new(probe(handle));
    let mut devices = DEVICES.lock();
    if let Some(d) = find(&devices) {
        return d;
    }
    devices.push(probed.clone());
    probed
}

fn probe(handle: cl_device_id) -> Device {
    let device_type: cl_device_type = query::device(handle, CL_DEVICE_TYPE).unwrap_or(0);
    let platform: cl_platform_id =
        query::device(handle, CL_DEVICE_PLATFORM).unwrap_or(core::ptr::null_mut());
    let mut pci_address = [0 as c_char; PTI_MAX_PCI_ADDRESS_SIZE];
    // `cl_device_pci_bus_info_khr`: domain, bus, device, function.
    if let Some([domain, bus, dev, function]) =
        query::device::<[cl_uint; 4]>(handle, CL_DEVICE_PCI_BUS_INFO_KHR)
    {
        let text = format!("{domain:04x}:{bus:02x}:{dev:02x}.{function:x}");
        for (dst, src) in pci_address
            .iter_mut()
            .zip(text.bytes().take(PTI_MAX_PCI_ADDRESS_SIZE - 1))
        {
            *dst = src as c_char;
        }
    }
    let uuid = query::device::<[u8; PTI_MAX_DEVICE_UUID_SIZE]>(handle, CL_DEVICE_UUID_KHR)
        .unwrap_or_default();
    Device {
        identity: DeviceIdentity {
            device: handle,
            pci_address,
            uuid,
        },
        is_cpu: device_type & CL_DEVICE_TYPE_CPU != 0,
        barriers_untimed: AtomicBool::new(false),
        mem_alloc_info: extension(platform, c"clGetMemAllocInfoINTEL"),
        timing: {
            let mut timings = TIMINGS.lock();
            // OpenCL device timers count nanoseconds, in 64 bits.
            timings.push(Timing::new(1_000_000_000, 64));
            timings.len() - 1
        },
    }
}

/// The runtime's own address of an extension function (never libpti's wrapper).
fn extension<F: Copy>(platform: cl_platform_id, name: &CStr) -> Option<F> {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    if platform.is_null() {
        return None;
    }
    let get = next::dispatch().clGetExtensionFunctionAddressForPlatform?;
    // SAFETY: a platform handle the runtime gave and a NUL-terminated name.
    let address = unsafe { get(platform, name.as_ptr()) };
    if address.is_null() {
        return None;
    }
    // SAFETY: `F` is a function-pointer type of the same size (checked above), and the runtime
    // gave this address for the function that `F` types.
    Some(unsafe { core::mem::transmute_copy::<*mut c_void, F>(&address) })
}

impl Device {
    /// Whether the device is known to give no timestamps for barriers.
    pub(super) fn barriers_untimed(&self) -> bool {
        self.barriers_untimed.load(Ordering::Relaxed)
    }

    /// Records that the device gives no timestamps for barriers; `true` the first time.
    pub(super) fn learn_barriers_untimed(&self) -> bool {
        !self.barriers_untimed.swap(true, Ordering::Relaxed)
    }

    /// What kind of memory `ptr` is, in `context`: USM host, device or shared where the runtime
    /// can tell, else plain memory.
    pub(super) fn memory_type(
        &self,
        context: cl_context,
        ptr: *const c_void,
    ) -> pti_view_memory_type {
        let Some(query) = self.mem_alloc_info else {
            return pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY;
        };
        let mut kind: cl_unified_shared_memory_type_intel = 0;
        // SAFETY: the runtime's own query, with room for the one value it writes.
        let status = unsafe {
            query(
                context,
                ptr,
                CL_MEM_ALLOC_TYPE_INTEL,
                size_of_val(&kind),
                (&raw mut kind).cast::<c_void>(),
                core::ptr::null_mut(),
            )
        };
        match (status, kind) {
            (CL_SUCCESS, CL_MEM_TYPE_HOST_INTEL) => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_HOST,
            (CL_SUCCESS, CL_MEM_TYPE_DEVICE_INTEL) => {
                pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_DEVICE
            }
            (CL_SUCCESS, CL_MEM_TYPE_SHARED_INTEL) => {
                pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_SHARED
            }
            _ => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY,
        }
    }

    /// Converts one command's times; `enter` is the host time its enqueue call began.
    /// `None` when the device gave no usable start.
    pub(super) fn to_host(&self, t: &DeviceTimes, enter: u64) -> Option<HostTimes> {
        if t.start == 0 || t.end == 0 {
            return None;
        }
        // Runtime calls are made without the lock held.
        if TIMINGS.lock()[self.timing].needs_pair() {
            let pair = self.sync_pair();
            TIMINGS.lock()[self.timing].add_pair(pair);
        }
        Some(TIMINGS.lock()[self.timing].convert(t, enter))
    }

    /// One device-timer reading with the host time it was taken at: the midpoint of two reads of
    /// libpti's clock around `clGetDeviceAndHostTimer`. `None` if the device has no such timer.
    fn sync_pair(&self) -> Option<(u64, u64)> {
        let read = next::dispatch().clGetDeviceAndHostTimer?;
        let mut best: Option<(u64, u64, u64)> = None;
        for _ in 0..3 {
            let (mut device, mut host) = (0u64, 0u64);
            let before = clock::now();
            // SAFETY: a device handle the runtime gave and two writable timestamps.
            let status = unsafe { read(self.identity.device, &mut device, &mut host) };
            let after = clock::now();
            if status != CL_SUCCESS || device == 0 {
                return None;
            }
            let spread = after.saturating_sub(before);
            if best.is_none_or(|b| spread < b.2) {
                best = Some((before + spread / 2, device, spread));
            }
            if spread <= MAX_PAIR_SPREAD_NS {
                break;
            }
        }
        best.map(|(host, device, _)| (host, device))
    }
}
