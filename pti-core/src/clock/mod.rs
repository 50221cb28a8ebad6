//! Timestamps: one host clock for every record, and the conversion of device ticks onto it.
//!
//! - [`now`] is the clock of every timestamp libpti writes: the tool's timestamp callback when
//!   one is set ([`set_timestamp_source`]), else [`host_ns`], CLOCK_MONOTONIC_RAW in nanoseconds.
//!   A traced call reads its clock once (`Source::current`) and uses it for both of its
//!   timestamps, so a record never mixes two clocks. Where the kernel's clocksource is the TSC,
//!   [`host_ns`] reads CLOCK_MONOTONIC_RAW from a calibrated TSC (module `tsc`), at less than
//!   half the cost of `clock_gettime`.
//! - [`DeviceClock`] converts device timestamps onto the host clock from periodic (host, device)
//!   pairs, including device counters of fewer than 64 valid bits that wrap.

use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

mod device;
mod tsc;

pub use device::DeviceClock;

/// A tool's clock: nanoseconds on a timeline of its choosing.
pub type TimestampSource = Box<dyn Fn() -> u64 + Send + Sync + 'static>;

/// The tool's clock, if set: a leaked `Box<TimestampSource>`. Replaced sources are leaked too
/// (a few bytes per replacement): a thread may still be reading one, and tools set it once.
static TOOL_CLOCK: AtomicPtr<TimestampSource> = AtomicPtr::new(ptr::null_mut());

/// CLOCK_MONOTONIC_RAW in nanoseconds: read from the calibrated TSC where the kernel's clock is
/// the TSC (see `tsc`), else from `clock_gettime`.
#[inline]
pub fn host_ns() -> u64 {
    tsc::now()
}

/// Whether [`host_ns`] reads the TSC now (rather than calling `clock_gettime`: on machines
/// without a TSC clocksource, and for the first 20 ms while the TSC is calibrated).
pub fn host_clock_uses_tsc() -> bool {
    tsc::in_use()
}

/// `clock_gettime(id)` in nanoseconds; 0 if the clock cannot be read.
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter; on failure it stays zero.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// In the child of `fork()`.
pub(crate) fn fork_child() {
    tsc::fork_child();
}

/// Makes `source` the clock of every timestamp libpti writes from now on.
pub fn set_timestamp_source(source: TimestampSource) {
    let fresh = Box::into_raw(Box::new(source));
    TOOL_CLOCK.store(fresh, Ordering::Release);
}

/// Makes `source` the clock of every timestamp, unless a clock other than the host clock is set
/// already (a tool's). Returns whether it was installed; a refused `source` is dropped.
pub fn set_timestamp_source_if_host(source: TimestampSource) -> bool {
    let fresh = Box::into_raw(Box::new(source));
    let installed = TOOL_CLOCK
        .compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if !installed {
        // SAFETY: `fresh` came from Box::into_raw above and was never published.
        drop(unsafe { Box::from_raw(fresh) });
    }
    installed
}

/// Returns to the host clock (a Rust-API extension: the C API has no way back).
pub fn clear_timestamp_source() {
    TOOL_CLOCK.store(ptr::null_mut(), Ordering::Release);
}

/// The clock a record's timestamps come from, fixed for the record's lifetime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source(*const TimestampSource);

impl Source {
    /// The host clock (what untraced calls carry: no load on the dispatch's fast path).
    pub(crate) const HOST: Source = Source(core::ptr::null());

    /// The clock in force now.
    #[inline]
    pub(crate) fn current() -> Self {
        Source(TOOL_CLOCK.load(Ordering::Acquire))
    }

    /// Reads it.
    #[inline]
    pub(crate) fn now(self) -> u64 {
        if self.0.is_null() {
            host_ns()
        } else {
            // SAFETY: non-null pointers in TOOL_CLOCK come from Box::into_raw and are never
            // freed, so the source stays valid for the life of the process.
            unsafe { (*self.0)() }
        }
    }
}

/// Whether records are stamped with the host clock (CLOCK_MONOTONIC_RAW), no tool clock being set:
/// then a driver's CLOCK_MONOTONIC_RAW readings are on libpti's clock as they are.
pub(crate) fn is_host_clock() -> bool {
    TOOL_CLOCK.load(Ordering::Acquire).is_null()
}

/// The current time on the clock of every record (see the module docs).
pub fn now() -> u64 {
    Source::current().now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_clock_moves_forward() {
        let a = host_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = host_ns();
        assert!(b > a + 1_000_000, "{a} -> {b}");
    }
}
