//! Intel PTI 1.2's default clock: CLOCK_REALTIME, nanoseconds since the epoch.
//!
//! Intel's library stamps records on CLOCK_MONOTONIC_RAW and shifts them onto CLOCK_REALTIME
//! with an offset it measures again every `PTI_CONV_CLOCK_SYNC_TIME_NS` (1 ms by default; values
//! from 1 us to 1 s are honoured). The Intel face does the same on libpti's host clock, so an
//! Intel-built tool sees epoch timestamps, while `libpti.so`'s own face keeps
//! CLOCK_MONOTONIC_RAW as the proposal requires. A timestamp callback set by the tool (through
//! either face) takes precedence: the Intel clock is installed only over the host clock.

use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Once;

use pti_core::clock;

/// Default re-measuring period of the offset, as Intel's.
const DEFAULT_SYNC_NS: u64 = 1_000_000;

/// The offset from the host clock to CLOCK_REALTIME, and when (host clock) it was measured.
static SHIFT: AtomicI64 = AtomicI64::new(0);
static MEASURED_AT: AtomicU64 = AtomicU64::new(0);

/// Installs the epoch clock the first time the Intel face stamps or asks for time, unless the
/// tool set its own clock first.
pub(crate) fn activate() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let period = sync_period();
        measure();
        clock::set_timestamp_source_if_host(Box::new(move || epoch_ns(period)));
    });
}

/// `PTI_CONV_CLOCK_SYNC_TIME_NS` when set to a number from 1 us to 1 s, else 1 ms.
fn sync_period() -> u64 {
    std::env::var("PTI_CONV_CLOCK_SYNC_TIME_NS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ns| (1_000..=1_000_000_000).contains(ns))
        .unwrap_or(DEFAULT_SYNC_NS)
}

/// The host clock moved onto the epoch, the offset re-measured when older than `period`.
fn epoch_ns(period: u64) -> u64 {
    let host = clock::host_ns();
    if host.wrapping_sub(MEASURED_AT.load(Ordering::Relaxed)) > period {
        measure();
    }
    host.wrapping_add_signed(SHIFT.load(Ordering::Relaxed))
}

/// Measures the offset between CLOCK_REALTIME and the host clock, the host clock read on both
/// sides of the real-time read and averaged.
fn measure() {
    let before = clock::host_ns();
    let real = realtime_ns();
    let after = clock::host_ns();
    let host = before + (after - before) / 2;
    SHIFT.store(real as i64 - host as i64, Ordering::Relaxed);
    MEASURED_AT.store(after, Ordering::Relaxed);
}

fn realtime_ns() -> u64 {
    clock::clock_ns(libc::CLOCK_REALTIME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_clock_is_within_a_millisecond_of_realtime() {
        let ours = epoch_ns(DEFAULT_SYNC_NS);
        let real = realtime_ns();
        assert!(ours.abs_diff(real) < 1_000_000, "{ours} vs {real}");
        assert!(ours > 1_700_000_000_000_000_000, "not in the epoch: {ours}");
    }
}
