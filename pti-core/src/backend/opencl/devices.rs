//! Devices as device records need them: identity (handle, PCI address, UUID, CPU or not), the
//! runtime's USM query for classifying pointers, what libpti learnt of the device, and what the
//! shared device registry (`backend::device::registry`) needs to convert its timestamps onto the
//! host clock: `clGetDeviceAndHostTimer`, where the runtime has it.

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pti_sys::opencl::*;

use super::{next, query};
use crate::backend::device::registry::{
    self, DeviceRegistry, DeviceTimer, Probed, TimerReading, TimerSpec,
};
use crate::backend::device::timing::{DeviceTimes, HostTimes};
use crate::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, PTI_MAX_PCI_ADDRESS_SIZE, pti_view_memory_type};
use crate::view::device::DeviceIdentity;

/// What libpti keeps of an OpenCL device besides its identity.
pub(super) struct ClDevice {
    /// The runtime's `clGetMemAllocInfoINTEL`, where the platform has USM.
    mem_alloc_info: clGetMemAllocInfoINTEL_t,
    /// The device gives no timestamps for barrier events (learnt from the first one).
    barriers_untimed: AtomicBool,
}

impl DeviceTimer for ClDevice {
    /// `clGetDeviceAndHostTimer`; `None` where the runtime has no such timer (PoCL answers 0).
    fn read_timer(&self, device: *mut c_void) -> Option<TimerReading> {
        let read = next::dispatch().clGetDeviceAndHostTimer?;
        let (mut ticks, mut host) = (0u64, 0u64);
        // SAFETY: a device handle the runtime gave and two writable timestamps.
        let status = unsafe { read(device.cast(), &mut ticks, &mut host) };
        // The runtime's host timer is its own choice of clock: only libpti's bracket is used.
        (status == CL_SUCCESS && ticks != 0).then_some(TimerReading {
            device_ticks: ticks,
            host_raw_ns: None,
        })
    }
}

/// A device as the records see it.
pub(super) type Device = registry::Device<ClDevice>;

/// The backend's devices (their locks are the fork handlers' too).
pub(super) static DEVICES: DeviceRegistry<ClDevice> = DeviceRegistry::new();

/// The device `handle` (looked up, or probed on first use).
pub(super) fn get(handle: cl_device_id) -> Arc<Device> {
    DEVICES.get(handle.cast(), || probe(handle))
}

/// Whether the command of `device` whose call began at `enter` should anchor its clock (no
/// timer read beside the host clock, and no anchor lately: see `timing`).
pub(super) fn wants_anchor(device: &Device, enter: u64) -> bool {
    DEVICES.wants_anchor(device, enter)
}

/// Converts one command's times on `device`; `enter` is the host time its enqueue call began.
/// `None` when the device gave no usable start.
pub(super) fn to_host(device: &Device, t: &DeviceTimes, enter: u64) -> Option<HostTimes> {
    if t.start == 0 || t.end == 0 {
        return None;
    }
    Some(DEVICES.to_host(device, t, enter))
}

fn probe(handle: cl_device_id) -> Probed<ClDevice> {
    let device_type: cl_device_type = query::device(handle, CL_DEVICE_TYPE).unwrap_or(0);
    let platform: cl_platform_id =
        query::device(handle, CL_DEVICE_PLATFORM).unwrap_or(core::ptr::null_mut());
    // `cl_device_pci_bus_info_khr`: domain, bus, device, function.
    let pci_address = query::device::<[cl_uint; 4]>(handle, CL_DEVICE_PCI_BUS_INFO_KHR).map_or(
        [0 as c_char; PTI_MAX_PCI_ADDRESS_SIZE],
        |[domain, bus, dev, function]| DeviceIdentity::pci_text(domain, bus, dev, function),
    );
    let uuid = query::device::<[u8; PTI_MAX_DEVICE_UUID_SIZE]>(handle, CL_DEVICE_UUID_KHR)
        .unwrap_or_default();
    Probed {
        identity: DeviceIdentity {
            device: handle.cast(),
            pci_address,
            uuid,
        },
        is_cpu: device_type & CL_DEVICE_TYPE_CPU != 0,
        // OpenCL device timers count nanoseconds, in 64 bits.
        timer: TimerSpec::NANOSECONDS,
        info: ClDevice {
            mem_alloc_info: extension(platform, c"clGetMemAllocInfoINTEL"),
            barriers_untimed: AtomicBool::new(false),
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

impl ClDevice {
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
}
