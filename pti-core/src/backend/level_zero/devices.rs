//! Level Zero devices as records need them: identity and kind, and the conversion of their
//! kernel timestamps onto the host clock (`backend::timing`).
//!
//! A device's timer counts `timerResolution` ticks per second (asked with the 1.2 properties
//! structure), and kernel timestamps keep only `kernelTimestampValidBits` bits: the conversion
//! masks the synchronisation pairs of `zeDeviceGetGlobalTimestamps` to those bits and unwraps
//! kernel timestamps near the host time of the call that submitted them. The pairs' host value is
//! CLOCK_MONOTONIC_RAW, libpti's own clock, and is taken as it is unless a tool set its own clock
//! (then libpti brackets the call with two reads of the tool's clock).

use core::ffi::c_char;
use std::sync::Arc;

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::backend::timing::{DeviceTimes, HostTimes, Timing};
use crate::clock;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, PTI_MAX_PCI_ADDRESS_SIZE};
use crate::view::device::DeviceIdentity;

/// A device as the records see it.
pub(super) struct Device {
    pub(super) identity: DeviceIdentity,
    pub(super) is_cpu: bool,
    kernel_bits: u32,
    /// This device's entry in [`TIMINGS`].
    timing: usize,
}

// SAFETY: the handle inside is an opaque value passed back to the driver; the rest is plain data.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

static DEVICES: WriterLock<Vec<Arc<Device>>> = WriterLock::new(Vec::new());
static TIMINGS: WriterLock<Vec<Timing>> = WriterLock::new(Vec::new());

/// The locks of this module, for the fork handlers.
pub(super) fn fork_locks() -> [&'static dyn ForkLock; 2] {
    [&DEVICES, &TIMINGS]
}

/// The device `handle` (looked up, or probed on first use).
pub(super) fn get(handle: ze_device_handle_t) -> Arc<Device> {
    let find = |devices: &Vec<Arc<Device>>| {
        devices
            .iter()
            .find(|d| d.identity.device == handle.cast())
            .cloned()
    };
    if let Some(d) = find(&DEVICES.lock()) {
        return d;
    }
    let probed = Arc::new(probe(handle));
    let mut devices = DEVICES.lock();
    if let Some(d) = find(&devices) {
        return d;
    }
    devices.push(probed.clone());
    probed
}

fn probe(handle: ze_device_handle_t) -> Device {
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
    let (hz, bits) = if ok && props.timerResolution > 0 {
        (props.timerResolution, bits)
    } else {
        (1_000_000_000, 64)
    };
    let mut uuid = [0u8; PTI_MAX_DEVICE_UUID_SIZE];
    uuid.copy_from_slice(&props.uuid.id[..PTI_MAX_DEVICE_UUID_SIZE]);
    let timing = {
        let mut timings = TIMINGS.lock();
        timings.push(Timing::new(hz, bits));
        timings.len() - 1
    };
    Device {
        identity: DeviceIdentity {
            device: handle.cast(),
            pci_address: [0 as c_char; PTI_MAX_PCI_ADDRESS_SIZE],
            uuid,
        },
        is_cpu: ok && props.type_ == ZE_DEVICE_TYPE_CPU,
        kernel_bits: bits,
        timing,
    }
}

impl Device {
    /// Converts one command's kernel timestamps; `enter` is the host time at which the call that
    /// submitted it began.
    pub(super) fn to_host(&self, start: u64, end: u64, enter: u64) -> HostTimes {
        if TIMINGS.lock()[self.timing].needs_pair() {
            let pair = self.sync_pair();
            TIMINGS.lock()[self.timing].add_pair(pair);
        }
        let times = DeviceTimes {
            queued: 0,
            submit: 0,
            start,
            end,
        };
        TIMINGS.lock()[self.timing].convert(&times, enter)
    }

    /// One `(host time, device ticks)` pair, the ticks masked to the kernel timestamps' bits.
    fn sync_pair(&self) -> Option<(u64, u64)> {
        let read = loader()?.zeDeviceGetGlobalTimestamps?;
        let (mut host, mut device) = (0u64, 0u64);
        let before = clock::now();
        // SAFETY: a device handle the driver gave and two writable timestamps.
        let status =
            internal(|| unsafe { read(self.identity.device.cast(), &mut host, &mut device) });
        let after = clock::now();
        if status != ZE_RESULT_SUCCESS {
            return None;
        }
        let host = if clock::is_host_clock() {
            host
        } else {
            before + (after - before) / 2
        };
        let mask = if self.kernel_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.kernel_bits) - 1
        };
        Some((host, device & mask))
    }
}
