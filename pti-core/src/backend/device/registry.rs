//! The devices of one driver backend, as records need them, each with its conversion of device
//! timestamps onto the host clock (`timing`).
//!
//! A backend keeps one `static` [`DeviceRegistry`] of its own devices. A device is probed by the
//! backend the first time one of its commands is seen ([`DeviceRegistry::get`]): its identity,
//! kind, timer (rate and valid bits) and whatever the backend keeps of it (`I`, e.g. the
//! runtime's USM query). Times are converted by [`DeviceRegistry::to_host`] (most commands of a
//! device without a timer without the timings' lock, see [`Device::shift`]), which feeds the
//! device's [`Timing`] with synchronisation pairs: a reading of the device timer
//! ([`DeviceTimer::read_timer`], a runtime call made without any lock held) bracketed by two
//! reads of libpti's clock.
//!
//! Touches the engine's clock and the backend's own runtime calls (through [`DeviceTimer`]).

use core::ffi::c_void;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use super::switches;
use super::timing::{DeviceTimes, HostTimes, NO_SHIFT, Timing};
use crate::clock;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::device::DeviceIdentity;

/// A synchronisation pair whose two host reads lie further apart than this is read again.
const MAX_PAIR_SPREAD_NS: u64 = 50_000;

/// How often a pair is read, at most, to get one within [`MAX_PAIR_SPREAD_NS`].
const PAIR_TRIES: usize = 3;

/// One reading of a device's timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerReading {
    /// The device timer, in its own ticks.
    pub(crate) device_ticks: u64,
    /// The host time the runtime took with it, if it gives one on CLOCK_MONOTONIC_RAW (libpti's
    /// host clock): used as it is while no tool clock is set.
    pub(crate) host_raw_ns: Option<u64>,
}

/// How a backend reads one of its devices' timer.
pub(crate) trait DeviceTimer: Send + Sync + 'static {
    /// Reads the timer once; `None` if the device has none (its timestamps are then taken as
    /// nanoseconds on the host clock, corrected by the commands, see `timing`).
    fn read_timer(&self, device: *mut c_void) -> Option<TimerReading>;
}

/// A device's timer: its rate, and how many low bits of its timestamps are valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerSpec {
    pub(crate) ticks_per_second: u64,
    pub(crate) valid_bits: u32,
}

impl TimerSpec {
    /// A nanosecond timer of 64 bits (OpenCL's, and the fallback of a driver that says nothing).
    pub(crate) const NANOSECONDS: TimerSpec = TimerSpec {
        ticks_per_second: 1_000_000_000,
        valid_bits: 64,
    };

    fn mask(self) -> u64 {
        if self.valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.valid_bits) - 1
        }
    }
}

/// What a backend learnt of a device when it first saw it.
pub(crate) struct Probed<I> {
    pub(crate) identity: DeviceIdentity,
    pub(crate) is_cpu: bool,
    pub(crate) timer: TimerSpec,
    /// What the backend keeps of the device besides (queries, learnt quirks).
    pub(crate) info: I,
}

/// A device as the records see it.
pub(crate) struct Device<I> {
    pub(crate) identity: DeviceIdentity,
    pub(crate) is_cpu: bool,
    pub(crate) info: I,
    timer: TimerSpec,
    /// This device's entry in the registry's timings.
    timing: usize,
    /// What [`DeviceRegistry::wants_anchor`] needs, kept beside the lock so that asking costs a
    /// load: the call time of the device's last anchor (0: none yet), or [`NO_ANCHORS`] once the
    /// device is known to have a timer. Written under the timings' lock after each conversion.
    last_anchor: AtomicU64,
    /// [`Timing::published_shift`] after the device's last conversion, kept beside the lock so
    /// that most commands of a device without a timer are converted without it (issue 39: the
    /// lock and its checks were most of a conversion). Written under the timings' lock.
    shift: AtomicI64,
}

/// [`Device::last_anchor`] of a device with a timer: its commands are never anchors.
const NO_ANCHORS: u64 = u64::MAX;

// SAFETY: the raw handle inside `identity` is an opaque value passed back to the runtime, which
// allows its objects to be used from any thread; `I` is Send + Sync by `DeviceTimer`'s bound.
unsafe impl<I: Send> Send for Device<I> {}
// SAFETY: as above.
unsafe impl<I: Sync> Sync for Device<I> {}

/// The devices of one backend (see the module docs).
pub(crate) struct DeviceRegistry<I> {
    devices: WriterLock<Vec<Arc<Device<I>>>>,
    /// Every device's conversion state, by [`Device::timing`]: one lock for all, taken briefly,
    /// never while the runtime is called.
    timings: WriterLock<Vec<Timing>>,
}

impl<I: DeviceTimer> DeviceRegistry<I> {
    /// An empty registry (for a `static`).
    pub(crate) const fn new() -> Self {
        DeviceRegistry {
            devices: WriterLock::new(Vec::new()),
            timings: WriterLock::new(Vec::new()),
        }
    }

    /// The registry's locks, in the order the fork handlers take them.
    pub(crate) fn fork_locks(&'static self) -> [&'static dyn ForkLock; 2] {
        [&self.devices, &self.timings]
    }

    /// The device `handle`: looked up, or probed with `probe` (outside the locks: probing calls
    /// into the runtime) and added.
    pub(crate) fn get(
        &self,
        handle: *mut c_void,
        probe: impl FnOnce() -> Probed<I>,
    ) -> Arc<Device<I>> {
        let find = |devices: &Vec<Arc<Device<I>>>| {
            devices
                .iter()
                .find(|d| d.identity.device == handle)
                .cloned()
        };
        if let Some(d) = find(&self.devices.lock()) {
            return d;
        }
        let probed = probe();
        let mut devices = self.devices.lock();
        if let Some(d) = find(&devices) {
            return d;
        }
        let timing = {
            let mut timings = self.timings.lock();
            timings.push(Timing::new(
                probed.timer.ticks_per_second,
                probed.timer.valid_bits,
            ));
            timings.len() - 1
        };
        let device = Arc::new(Device {
            identity: probed.identity,
            is_cpu: probed.is_cpu,
            info: probed.info,
            timer: probed.timer,
            timing,
            last_anchor: AtomicU64::new(0),
            shift: AtomicI64::new(NO_SHIFT),
        });
        devices.push(device.clone());
        device
    }

    /// Whether the command of `device` whose call began at `enter` should anchor its clock (see
    /// [`Timing::last_anchor`]).
    pub(crate) fn wants_anchor(&self, device: &Device<I>, enter: u64) -> bool {
        match device.last_anchor.load(Ordering::Relaxed) {
            NO_ANCHORS => false,
            0 => true,
            last => enter.abs_diff(last) >= switches::anchor_interval_ns(),
        }
    }

    /// Converts one command's device times of `device`; `enter` is the host time at which the
    /// call that submitted it began (see `timing`).
    #[inline]
    pub(crate) fn to_host(&self, device: &Device<I>, t: &DeviceTimes, enter: u64) -> HostTimes {
        // A shift read without the lock is one the device had at some point of the
        // conversions under it; a command this path takes would have left it as it was there.
        let shift = device.shift.load(Ordering::Relaxed);
        match Timing::convert_unchanged(shift, t, enter) {
            Some(host) => host,
            None => self.to_host_locked(device, t, enter),
        }
    }

    /// [`DeviceRegistry::to_host`] under the timings' lock (out of line: its frame stays off
    /// the path of the commands converted without it).
    #[inline(never)]
    fn to_host_locked(&self, device: &Device<I>, t: &DeviceTimes, enter: u64) -> HostTimes {
        {
            let mut timings = self.timings.lock();
            if !timings[device.timing].needs_pair(enter) {
                return Self::convert(device, &mut timings[device.timing], t, enter);
            }
        }
        // A pair is due: read without the lock (a runtime call), then converted with.
        let pair = sync_pair(device, clock::now, clock::is_host_clock());
        let mut timings = self.timings.lock();
        timings[device.timing].add_pair(pair);
        Self::convert(device, &mut timings[device.timing], t, enter)
    }

    /// Converts with `timing` (the device's, under the lock), and notes what the next
    /// [`DeviceRegistry::wants_anchor`] needs.
    fn convert(device: &Device<I>, timing: &mut Timing, t: &DeviceTimes, enter: u64) -> HostTimes {
        let host = timing.convert(t, enter);
        let last = timing.last_anchor().unwrap_or(NO_ANCHORS);
        device.last_anchor.store(last, Ordering::Relaxed);
        device
            .shift
            .store(timing.published_shift(), Ordering::Relaxed);
        host
    }
}

/// One `(host time, device ticks)` pair for `device`, the ticks masked to the timer's valid bits;
/// `None` if the device has no timer. `now` is libpti's clock; `host_is_raw` says whether it is
/// CLOCK_MONOTONIC_RAW, on which runtimes give their own host time.
fn sync_pair<I: DeviceTimer>(
    device: &Device<I>,
    now: impl Fn() -> u64,
    host_is_raw: bool,
) -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64, u64)> = None;
    for _ in 0..PAIR_TRIES {
        let before = now();
        let reading = device.info.read_timer(device.identity.device)?;
        let after = now();
        let ticks = reading.device_ticks & device.timer.mask();
        if let (Some(host), true) = (reading.host_raw_ns, host_is_raw) {
            return Some((host, ticks));
        }
        let (host, spread) = bracketed(before, after);
        if best.is_none_or(|b| spread < b.2) {
            best = Some((host, ticks, spread));
        }
        if spread <= MAX_PAIR_SPREAD_NS {
            break;
        }
    }
    best.map(|(host, ticks, _)| (host, ticks))
}

/// The host time of a reading taken between two reads of the clock, and how far apart they lie.
/// A clock that went backwards (a tool's callback may) gives a spread of 0 at `before`: never an
/// overflow, never a time outside the two reads.
fn bracketed(before: u64, after: u64) -> (u64, u64) {
    let spread = after.saturating_sub(before);
    (before + spread / 2, spread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// A device whose timer always reads 5,000,000 ticks, with no host time of its own.
    struct Fake;

    impl DeviceTimer for Fake {
        fn read_timer(&self, _: *mut c_void) -> Option<TimerReading> {
            Some(TimerReading {
                device_ticks: 5_000_000,
                host_raw_ns: None,
            })
        }
    }

    fn device(bits: u32) -> Device<Fake> {
        Device {
            identity: DeviceIdentity {
                device: core::ptr::null_mut(),
                pci_address: [0; pti_abi::PTI_MAX_PCI_ADDRESS_SIZE],
                uuid: [0; pti_abi::PTI_MAX_DEVICE_UUID_SIZE],
            },
            is_cpu: false,
            info: Fake,
            timer: TimerSpec {
                ticks_per_second: 1_000_000_000,
                valid_bits: bits,
            },
            timing: 0,
            last_anchor: AtomicU64::new(0),
            shift: AtomicI64::new(NO_SHIFT),
        }
    }

    #[test]
    fn a_clock_that_goes_backwards_gives_a_pair_at_its_first_read() {
        // A tool's timestamp callback that goes backwards between the two reads.
        let t = Cell::new(10_000u64);
        let backwards = || {
            let v = t.get();
            t.set(v - 100);
            v
        };
        assert_eq!(
            sync_pair(&device(64), backwards, false),
            Some((10_000, 5_000_000)),
            "a spread of 0 is taken at once, at the first read"
        );
        assert_eq!(bracketed(500, 100), (500, 0));
        assert_eq!(bracketed(100, 500), (300, 400));
        assert_eq!(bracketed(u64::MAX - 1, u64::MAX), (u64::MAX - 1, 1));
    }

    #[test]
    fn ticks_are_masked_to_the_valid_bits() {
        let t = Cell::new(0u64);
        let forward = || {
            t.set(t.get() + 10);
            t.get()
        };
        let (_, ticks) = sync_pair(&device(16), forward, false).unwrap();
        assert_eq!(ticks, 5_000_000 & 0xffff);
    }
}
