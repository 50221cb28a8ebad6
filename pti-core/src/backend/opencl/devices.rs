//! Devices as device records need them: identity (handle, PCI address, UUID, CPU or not), the
//! runtime's USM query for classifying pointers, and the conversion of device timestamps onto
//! the host clock.
//!
//! Time conversion, per device, in two steps:
//! - a **base** mapping, decided at the device's first use: where `clGetDeviceAndHostTimer`
//!   works, libpti reads the device timer between two reads of its own clock and keeps the pairs
//!   in a [`DeviceClock`] (rate and offset), refreshed at most every [`RESYNC_NS`] when records
//!   are written; where it does not (PoCL, for one), device nanoseconds are taken as they are;
//! - a **shift** from the commands themselves: a command cannot reach the device before its
//!   enqueue call began, so each command's earliest device timestamp, mapped, bounds the shift
//!   from below. The shift is the largest bound of the last [`OFFSET_WINDOW_NS`] (older bounds
//!   expire, so a drifting clock is followed). Without a device timer the shift *is* the offset
//!   between the clocks; with one it only corrects the base mapping forward, by the error of a
//!   synchronisation pair (the width of its bracket, a few microseconds) and the drift since it.
//!
//! A command's times are converted after its own bound is applied, so no command appears to
//! start before the call that submitted it.

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pti_sys::opencl::*;

use super::{next, query};
use crate::clock::{self, DeviceClock};
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, PTI_MAX_PCI_ADDRESS_SIZE, pti_view_memory_type};
use crate::view::device::DeviceIdentity;

/// How often, at most, a timer-mode device gets a new synchronisation pair.
pub(super) const RESYNC_NS: u64 = 100_000_000;

/// How long an offset-mode lower bound is trusted.
pub(super) const OFFSET_WINDOW_NS: u64 = 1_000_000_000;

/// A synchronisation pair whose host reads lie further apart than this is retried.
const MAX_PAIR_SPREAD_NS: u64 = 50_000;

/// The base mapping of device timestamps (see the module docs).
#[derive(Debug)]
enum Base {
    Unprobed,
    /// `clGetDeviceAndHostTimer` works: synchronisation pairs.
    Timer {
        clock: DeviceClock,
        last_sync: u64,
    },
    /// No device timer: device nanoseconds as they are.
    Identity,
}

/// One device's conversion state.
#[derive(Debug)]
struct Timing {
    base: Base,
    /// Added to base-mapped times; the largest lower bound of the current window.
    shift: i128,
    /// When the window began (0: no bound yet).
    shift_set_at: u64,
}

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
            timings.push(Timing {
                base: Base::Unprobed,
                shift: 0,
                shift_set_at: 0,
            });
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

/// Device timestamps of one command, as the runtime reports them (0: not reported).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DeviceTimes {
    pub(super) queued: u64,
    pub(super) submit: u64,
    pub(super) start: u64,
    pub(super) end: u64,
}

/// The same times on the host clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HostTimes {
    pub(super) queued: Option<u64>,
    pub(super) submit: Option<u64>,
    pub(super) start: u64,
    pub(super) end: u64,
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
        let needs_pair = match &TIMINGS.lock()[self.timing].base {
            Base::Unprobed => true,
            Base::Timer { last_sync, .. } => clock::now().saturating_sub(*last_sync) >= RESYNC_NS,
            Base::Identity => false,
        };
        if needs_pair {
            let pair = self.sync_pair();
            TIMINGS.lock()[self.timing].base.add_pair(pair);
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

impl Base {
    /// Takes a synchronisation pair (or learns, on the first try, that there is none).
    fn add_pair(&mut self, pair: Option<(u64, u64)>) {
        match (self, pair) {
            (base @ Base::Unprobed, Some((host, ticks))) => {
                // OpenCL device timers count nanoseconds in 64 bits.
                *base = match DeviceClock::new(1_000_000_000, 64) {
                    Ok(mut clock) => {
                        clock.add_sync_point(host, ticks);
                        Base::Timer {
                            clock,
                            last_sync: host,
                        }
                    }
                    Err(_) => Base::Identity,
                };
            }
            (base @ Base::Unprobed, None) => *base = Base::Identity,
            (Base::Timer { clock, last_sync }, Some((host, ticks))) => {
                clock.add_sync_point(host, ticks);
                *last_sync = host;
            }
            _ => {}
        }
    }

    fn map(&self, ticks: u64, near: u64) -> i128 {
        match self {
            Base::Timer { clock, .. } => clock.to_host_ns(ticks, near).unwrap_or(near) as i128,
            Base::Unprobed | Base::Identity => ticks as i128,
        }
    }
}

impl Timing {
    fn convert(&mut self, t: &DeviceTimes, enter: u64) -> HostTimes {
        let earliest = [t.queued, t.submit, t.start]
            .into_iter()
            .find(|v| *v != 0)
            .unwrap_or(t.start);
        // This command cannot have reached the device before its enqueue call began.
        let bound = enter as i128 - self.base.map(earliest, enter);
        let bound = match self.base {
            // A device timer is believed except where a command proves it early.
            Base::Timer { .. } => bound.max(0),
            Base::Unprobed | Base::Identity => bound,
        };
        let now = clock::now();
        let expired =
            self.shift_set_at == 0 || now.saturating_sub(self.shift_set_at) >= OFFSET_WINDOW_NS;
        if expired || bound > self.shift {
            self.shift = bound;
            self.shift_set_at = now;
        }
        let map = |v: u64| (self.base.map(v, enter) + self.shift).max(0) as u64;
        let nonzero = |v: u64| (v != 0).then_some(v);
        HostTimes {
            queued: nonzero(t.queued).map(map),
            submit: nonzero(t.submit).map(map),
            start: map(t.start),
            end: map(t.end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(base: Base) -> Timing {
        Timing {
            base,
            shift: 0,
            shift_set_at: 0,
        }
    }

    fn times(queued: u64, start: u64, end: u64) -> DeviceTimes {
        DeviceTimes {
            queued,
            submit: queued,
            start,
            end,
        }
    }

    #[test]
    fn without_a_device_timer_commands_set_the_offset_from_below() {
        let mut t = timing(Base::Identity);
        // Device clock 1_000_000 ns behind the host's; queued 300 ns after the call began.
        let h = t.convert(&times(9_000_300, 9_000_500, 9_001_000), 10_000_000);
        assert_eq!(
            (h.queued, h.start, h.end),
            (Some(10_000_000), 10_000_200, 10_000_700)
        );
        // A command queued closer to its call moves the offset up; durations never change.
        let h = t.convert(&times(9_100_100, 9_100_200, 9_100_900), 10_100_000);
        assert_eq!(
            (h.queued, h.start, h.end),
            (Some(10_100_000), 10_100_100, 10_100_800)
        );
        // A command that proves nothing new keeps the offset.
        let h = t.convert(&times(9_200_800, 9_201_000, 9_202_000), 10_200_000);
        assert_eq!(h.start, 9_201_000 + 999_900);
        assert!(h.queued.unwrap() >= 10_200_000);
    }

    #[test]
    fn a_device_timer_is_corrected_only_where_a_command_proves_it_early() {
        let mut clock = DeviceClock::new(1_000_000_000, 64).unwrap();
        clock.add_sync_point(5_000_000, 2_000_000); // device = host - 3_000_000
        let mut t = timing(Base::Timer {
            clock,
            last_sync: 5_000_000,
        });
        // Mapped late of its call: left as the timer says.
        let h = t.convert(&times(2_000_500, 2_000_600, 2_000_700), 5_000_100);
        assert_eq!((h.queued, h.start), (Some(5_000_500), 5_000_600));
        // Mapped 200 ns before its call began: the timer is off, shifted forward.
        let h = t.convert(&times(2_001_000, 2_001_100, 2_001_300), 5_001_200);
        assert_eq!(
            (h.queued, h.start, h.end),
            (Some(5_001_200), 5_001_300, 5_001_500)
        );
    }

    #[test]
    fn a_command_without_queued_time_is_bounded_by_its_submit_or_start() {
        let mut t = timing(Base::Identity);
        let only_start = DeviceTimes {
            queued: 0,
            submit: 0,
            start: 700,
            end: 900,
        };
        let h = t.convert(&only_start, 1_000);
        assert_eq!(
            (h.queued, h.submit, h.start, h.end),
            (None, None, 1_000, 1_200)
        );
    }
}
