//! Level Zero devices as records need them: identity and kind, and what the shared device
//! registry (`backend::device::registry`) needs to convert their kernel timestamps onto the host
//! clock.
//!
//! A device's timer counts `timerResolution` ticks per second (asked with the 1.2 properties
//! structure), and kernel timestamps keep only `kernelTimestampValidBits` bits: the registry
//! masks the synchronisation pairs of `zeDeviceGetGlobalTimestamps` to those bits and unwraps
//! kernel timestamps near the host time of the call that submitted them. The pairs' host value is
//! CLOCK_MONOTONIC_RAW, libpti's own clock, and is taken as it is unless a tool set its own clock
//! (then the registry brackets the call with two reads of the tool's clock).

use core::ffi::{c_char, c_void};
use std::sync::Arc;

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::backend::device::registry::{
    self, DeviceRegistry, DeviceTimer, Probed, TimerReading, TimerSpec,
};
use crate::backend::device::timing::{DeviceTimes, HostTimes};
use crate::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, PTI_MAX_PCI_ADDRESS_SIZE};
use crate::view::device::DeviceIdentity;

/// What libpti keeps of a Level Zero device besides its identity and timer: its kind beyond GPU
/// and CPU, and which of its queue groups compute.
pub(super) struct ZeDevice {
    /// An NPU (`ZE_DEVICE_TYPE_VPU`): its work is no GPU's, and has no record kind.
    pub(super) npu: bool,
    /// Bit `i`: queue group `i` computes (runs kernels, and so libpti's copies of timestamps,
    /// which are built-in kernels); the others copy only.
    pub(super) compute_groups: u64,
}

impl DeviceTimer for ZeDevice {
    fn read_timer(&self, device: *mut c_void) -> Option<TimerReading> {
        let read = loader()?.zeDeviceGetGlobalTimestamps?;
        let (mut host, mut ticks) = (0u64, 0u64);
        // SAFETY: a device handle the driver gave and two writable timestamps.
        let status = internal(|| unsafe { read(device.cast(), &mut host, &mut ticks) });
        (status == ZE_RESULT_SUCCESS).then_some(TimerReading {
            device_ticks: ticks,
            host_raw_ns: Some(host),
        })
    }
}

/// A device as the records see it.
pub(super) type Device = registry::Device<ZeDevice>;

/// The backend's devices (their locks are the fork handlers' too).
pub(super) static DEVICES: DeviceRegistry<ZeDevice> = DeviceRegistry::new();

/// Whether `device`'s kernels are recorded as CPU kernels: a device of type CPU, unless the
/// Intel face asked for Intel PTI's filing (`view::level_zero_cpu_kernels_as_gpu`).
pub(super) fn records_as_cpu(device: &Device) -> bool {
    crate::view::device::level_zero_records_as_cpu(device.is_cpu)
}

/// The device `handle` (looked up, or probed on first use).
pub(super) fn get(handle: ze_device_handle_t) -> Arc<Device> {
    DEVICES.get(handle.cast(), || probe(handle))
}

/// Converts one command's kernel timestamps on `device`; `enter` is the host time at which the
/// call that submitted it began.
pub(super) fn to_host(device: &Device, start: u64, end: u64, enter: u64) -> HostTimes {
    let times = DeviceTimes {
        queued: 0,
        submit: 0,
        start,
        end,
        // START is the earliest time Level Zero has of any command: each one anchors.
        anchor: true,
    };
    DEVICES.to_host(device, &times, enter)
}

/// The device's PCI address (`zeDevicePciGetPropertiesExt`), empty if the driver gives none.
fn pci_address(handle: ze_device_handle_t) -> [c_char; PTI_MAX_PCI_ADDRESS_SIZE] {
    // SAFETY: all-zero bytes are a valid properties structure (integers and a null pointer).
    let mut pci: ze_pci_ext_properties_t = unsafe { core::mem::zeroed() };
    pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
    let ok = loader()
        .and_then(|l| l.zeDevicePciGetPropertiesExt)
        // SAFETY: a device the program passed to a call, and a writable properties structure.
        .is_some_and(|get| internal(|| unsafe { get(handle, &mut pci) }) == ZE_RESULT_SUCCESS);
    if !ok {
        return [0 as c_char; PTI_MAX_PCI_ADDRESS_SIZE];
    }
    let a = pci.address;
    DeviceIdentity::pci_text(a.domain, a.bus, a.device, a.function)
}

fn probe(handle: ze_device_handle_t) -> Probed<ZeDevice> {
    // SAFETY: all-zero bytes are a valid properties structure (integers, arrays, null pointers).
    let mut props: ze_device_properties_t = unsafe { core::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    let ok = loader()
        .and_then(|l| l.zeDeviceGetProperties)
        // SAFETY: a device the program passed to a call, and a writable properties structure.
        .is_some_and(|get| internal(|| unsafe { get(handle, &mut props) }) == ZE_RESULT_SUCCESS);
    // A driver that leaves the kernel timestamps' width at 0 gives the global timer's.
    let bits = match (props.kernelTimestampValidBits, props.timestampValidBits) {
        (0, 0) => 64,
        (0, global) => global.min(64),
        (kernel, _) => kernel.min(64),
    };
    let timer = if ok && props.timerResolution > 0 {
        TimerSpec {
            ticks_per_second: props.timerResolution,
            valid_bits: bits,
        }
    } else {
        TimerSpec::NANOSECONDS
    };
    let mut uuid = [0u8; PTI_MAX_DEVICE_UUID_SIZE];
    uuid.copy_from_slice(&props.uuid.id[..PTI_MAX_DEVICE_UUID_SIZE]);
    Probed {
        identity: DeviceIdentity {
            device: handle.cast(),
            pci_address: pci_address(handle),
            uuid,
        },
        is_cpu: ok && props.type_ == ZE_DEVICE_TYPE_CPU,
        timer,
        info: ZeDevice {
            npu: ok && props.type_ == ZE_DEVICE_TYPE_VPU,
            compute_groups: compute_groups(handle),
        },
    }
}

/// Which queue groups of the device compute (`zeDeviceGetCommandQueueGroupProperties`); all of
/// them where the driver does not say.
fn compute_groups(handle: ze_device_handle_t) -> u64 {
    let Some(get) = loader().and_then(|l| l.zeDeviceGetCommandQueueGroupProperties) else {
        return u64::MAX;
    };
    let mut count = 0u32;
    // SAFETY: a count query for a device the program passed to a call.
    let status = internal(|| unsafe { get(handle, &mut count, core::ptr::null_mut()) });
    if status != ZE_RESULT_SUCCESS || count == 0 {
        return u64::MAX;
    }
    // SAFETY: all-zero bytes are valid properties (integers and a null pointer).
    let mut groups: Vec<ze_command_queue_group_properties_t> =
        (0..count).map(|_| unsafe { core::mem::zeroed() }).collect();
    for g in &mut groups {
        g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    }
    // SAFETY: room for `count` properties.
    let status = internal(|| unsafe { get(handle, &mut count, groups.as_mut_ptr()) });
    if status != ZE_RESULT_SUCCESS {
        return u64::MAX;
    }
    groups
        .iter()
        .take(64)
        .enumerate()
        .filter(|(_, g)| g.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE != 0)
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Whether queue group `ordinal` of `device` runs kernels.
pub(super) fn computes(device: ze_device_handle_t, ordinal: u32) -> bool {
    ordinal < 64 && get(device).info.compute_groups & (1 << ordinal) != 0
}
