//! The simulated device's timer: ticks at [`FREQUENCY`] from an origin far from the host clock.
//!
//! `ticks(h) = ORIGIN + (h - H0) * FREQUENCY / 1e9`, where `H0` is the host time when the driver
//! started. The global timer keeps [`GLOBAL_BITS`] bits; kernel timestamps keep [`KERNEL_BITS`].
//! `ORIGIN`'s low [`KERNEL_BITS`] bits are chosen so that kernel timestamps wrap
//! `ZE_SIM_WRAP_US` microseconds (default 500 000) after the start; the ground-truth file gets
//! the host times of the start and of the wrap (`TRUTH START <ns>`, `TRUTH WRAP <ns>`).

use std::sync::OnceLock;

/// Timer frequency (Hz): 52.083 ns per tick, as on many Intel GPUs.
pub(crate) const FREQUENCY: u64 = 19_200_000;
/// Valid bits of `zeDeviceGetGlobalTimestamps`' device value.
pub(crate) const GLOBAL_BITS: u32 = 48;
/// Valid bits of kernel timestamps.
pub(crate) const KERNEL_BITS: u32 = 32;

/// High bits of the origin: far from anything the host clock reads.
const ORIGIN_HIGH: u64 = 0x5A5A << KERNEL_BITS;

struct Timer {
    h0: u64,
    origin: u64,
}

static TIMER: OnceLock<Timer> = OnceLock::new();

/// CLOCK_MONOTONIC_RAW in nanoseconds.
pub(crate) fn host_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timer() -> &'static Timer {
    TIMER.get_or_init(|| {
        let wrap_us: u64 = std::env::var("ZE_SIM_WRAP_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(500_000);
        let to_wrap = (FREQUENCY * wrap_us / 1_000_000).clamp(1, (1 << KERNEL_BITS) - 1);
        let low = (1u64 << KERNEL_BITS) - to_wrap;
        let h0 = host_ns();
        // The first host time whose tick count has its low KERNEL_BITS bits back at 0.
        let wrap = h0 + (to_wrap as u128 * 1_000_000_000).div_ceil(FREQUENCY as u128) as u64;
        crate::report::truth(&format!("TRUTH START {h0}"));
        crate::report::truth(&format!("TRUTH WRAP {wrap}"));
        Timer {
            h0,
            origin: ORIGIN_HIGH | low,
        }
    })
}

/// Starts the timer (at driver initialisation).
pub(crate) fn start() {
    timer();
}

/// The device's full tick count at host time `host`.
pub(crate) fn ticks_at(host: u64) -> u64 {
    let t = timer();
    let elapsed = host.saturating_sub(t.h0) as u128;
    t.origin + (elapsed * FREQUENCY as u128 / 1_000_000_000) as u64
}

/// Masks `ticks` to `bits` valid bits.
pub(crate) fn masked(ticks: u64, bits: u32) -> u64 {
    if bits >= 64 {
        ticks
    } else {
        ticks & ((1u64 << bits) - 1)
    }
}

/// The host time (ns) at which the device's full tick count was `ticks` (the inverse of
/// [`ticks_at`], to within a tick).
pub(crate) fn host_at(ticks: u64) -> u64 {
    let t = timer();
    let elapsed = ticks.saturating_sub(t.origin) as u128;
    t.h0 + (elapsed * 1_000_000_000 / FREQUENCY as u128) as u64
}
