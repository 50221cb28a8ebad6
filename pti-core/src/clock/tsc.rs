//! CLOCK_MONOTONIC_RAW read from the TSC, for less than half the price of `clock_gettime`.
//!
//! Every API record needs two host timestamps; with `clock_gettime` they are most of the
//! record's cost. When the kernel's clocksource is the TSC and the CPU's TSC is invariant
//! (`constant_tsc`, `nonstop_tsc`), CLOCK_MONOTONIC_RAW is a fixed linear function of the TSC,
//! so libpti reads the TSC and converts it with a line estimated from (TSC, `clock_gettime`)
//! pairs:
//!
//! - **Calibration.** A pair is sampled as `tsc_a; clock_gettime; tsc_b` (the narrowest of a few
//!   tries), the TSC taken midway. The first line comes from two pairs 200 µs apart. The line is
//!   re-estimated at growing intervals (1 ms, doubling, up to 1 s), with the slope measured over
//!   the whole baseline since the first pair, so its error shrinks as the process runs.
//! - **Continuity.** A re-estimate never jumps: the new line starts where the old one is at the
//!   new pair's TSC, with a slope that reaches the measured clock one interval later (it slews,
//!   as NTP does), so timestamps stay continuous and increasing.
//! - **Safety net.** If a pair lies more than [`MAX_RESIDUAL_NS`] off the line (the clocksource
//!   changed, the machine was suspended or migrated), the TSC path is switched off for good and
//!   every later read uses `clock_gettime`.
//!
//! `PTI_HOST_CLOCK=syscall` in the environment forces `clock_gettime`. Readers take the line
//! through a seqlock; one thread at a time re-estimates it, the others keep using the old line.

use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering, fence};

/// A pair this far from the line switches the TSC path off.
pub(crate) const MAX_RESIDUAL_NS: i128 = 5_000;
const FIRST_INTERVAL_NS: u64 = 1_000_000;
const MAX_INTERVAL_NS: u64 = 1_000_000_000;
const INITIAL_BASELINE_NS: u64 = 200_000;

/// `ns(tsc) = base_ns + ((tsc - base_tsc) * scale) >> 32`, `scale` in ns per tick << 32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line {
    pub(crate) base_tsc: u64,
    pub(crate) base_ns: u64,
    pub(crate) scale: u64,
}

impl Line {
    /// The line's value at `tsc` (which may lie a little before `base_tsc`).
    #[inline(always)]
    pub(crate) fn at(self, tsc: u64) -> u64 {
        let delta = tsc.wrapping_sub(self.base_tsc) as i64 as i128;
        (self.base_ns as i128 + ((delta * self.scale as i128) >> 32)) as u64
    }
}

/// A (TSC, CLOCK_MONOTONIC_RAW) pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pair {
    pub(crate) tsc: u64,
    pub(crate) ns: u64,
}

/// Slope (ns per tick << 32) between two pairs.
pub(crate) fn slope(from: Pair, to: Pair) -> u64 {
    (((to.ns - from.ns) as u128) << 32)
        .checked_div((to.tsc - from.tsc) as u128)
        .unwrap_or(0) as u64
}

/// The line after re-estimating at `pair`: continuous with `old` at `pair.tsc`, reaching the
/// measured clock (`pair` extended with the long-baseline slope) `interval_ns` later. Returns the
/// line and the TSC at which to re-estimate next; `None` if `pair` is too far off `old`.
pub(crate) fn slew(old: Line, first: Pair, pair: Pair, interval_ns: u64) -> Option<(Line, u64)> {
    let here = old.at(pair.tsc);
    if (pair.ns as i128 - here as i128).abs() > MAX_RESIDUAL_NS {
        return None;
    }
    let long = slope(first, pair).max(1);
    let interval_ticks = ((interval_ns as u128) << 32) / long as u128;
    let target = (pair.ns + interval_ns) as i128;
    let scale = (((target - here as i128) << 32) / interval_ticks.max(1) as i128).max(1) as u64;
    let line = Line {
        base_tsc: pair.tsc,
        base_ns: here,
        scale,
    };
    Some((line, pair.tsc + interval_ticks as u64))
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and touches no memory.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn rdtsc() -> u64 {
    0
}

fn syscall_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter; on failure it stays zero.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The narrowest of a few `tsc; clock_gettime; tsc` samples.
fn sample() -> Pair {
    let mut best = (u64::MAX, Pair { tsc: 0, ns: 0 });
    for _ in 0..5 {
        let a = rdtsc();
        let ns = syscall_ns();
        let b = rdtsc();
        let width = b.wrapping_sub(a);
        if width < best.0 {
            best = (
                width,
                Pair {
                    tsc: a + width / 2,
                    ns,
                },
            );
        }
    }
    best.1
}

const UNINIT: u8 = 0;
const BUSY: u8 = 1;
const ON: u8 = 2;
const OFF: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNINIT);
static SEQ: AtomicU64 = AtomicU64::new(0);
static BASE_TSC: AtomicU64 = AtomicU64::new(0);
static BASE_NS: AtomicU64 = AtomicU64::new(0);
static SCALE: AtomicU64 = AtomicU64::new(0);
static NEXT_TSC: AtomicU64 = AtomicU64::new(0);
static FIRST_TSC: AtomicU64 = AtomicU64::new(0);
static FIRST_NS: AtomicU64 = AtomicU64::new(0);
static INTERVAL_NS: AtomicU64 = AtomicU64::new(FIRST_INTERVAL_NS);
static UPDATING: AtomicBool = AtomicBool::new(false);

/// Reads the line and the next re-estimation point (seqlock reader).
#[inline(always)]
fn read_line() -> (Line, u64) {
    loop {
        let s1 = SEQ.load(Ordering::Acquire);
        if s1 & 1 == 0 {
            let line = Line {
                base_tsc: BASE_TSC.load(Ordering::Relaxed),
                base_ns: BASE_NS.load(Ordering::Relaxed),
                scale: SCALE.load(Ordering::Relaxed),
            };
            let next = NEXT_TSC.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if SEQ.load(Ordering::Relaxed) == s1 {
                return (line, next);
            }
        }
        core::hint::spin_loop();
    }
}

/// Publishes a line (seqlock writer; callers hold UPDATING or run before MODE is ON).
fn write_line(line: Line, next: u64) {
    let s = SEQ.load(Ordering::Relaxed);
    SEQ.store(s + 1, Ordering::Relaxed);
    fence(Ordering::Release);
    BASE_TSC.store(line.base_tsc, Ordering::Relaxed);
    BASE_NS.store(line.base_ns, Ordering::Relaxed);
    SCALE.store(line.scale, Ordering::Relaxed);
    NEXT_TSC.store(next, Ordering::Relaxed);
    SEQ.store(s + 2, Ordering::Release);
}

fn tsc_usable() -> bool {
    if !cfg!(target_arch = "x86_64")
        || std::env::var("PTI_HOST_CLOCK").is_ok_and(|v| v == "syscall")
    {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has = |flag: &str| flags.split_whitespace().any(|w| w == flag);
    source.is_ok_and(|s| s.trim() == "tsc") && has("constant_tsc") && has("nonstop_tsc")
}

/// Decides whether to use the TSC and, if so, takes the first line. Returns whether it is on.
#[cold]
fn init() -> bool {
    if MODE
        .compare_exchange(UNINIT, BUSY, Ordering::Acquire, Ordering::Acquire)
        .is_err()
    {
        while MODE.load(Ordering::Acquire) == BUSY {
            std::thread::yield_now();
        }
        return MODE.load(Ordering::Acquire) == ON;
    }
    if !tsc_usable() {
        MODE.store(OFF, Ordering::Release);
        return false;
    }
    let first = sample();
    while syscall_ns() < first.ns + INITIAL_BASELINE_NS {
        core::hint::spin_loop();
    }
    let second = sample();
    FIRST_TSC.store(first.tsc, Ordering::Relaxed);
    FIRST_NS.store(first.ns, Ordering::Relaxed);
    let line = Line {
        base_tsc: second.tsc,
        base_ns: second.ns,
        scale: slope(first, second),
    };
    let next = second.tsc
        + ((FIRST_INTERVAL_NS as u128) << 32)
            .checked_div(line.scale as u128)
            .unwrap_or(0) as u64;
    write_line(line, next);
    MODE.store(if line.scale > 0 { ON } else { OFF }, Ordering::Release);
    MODE.load(Ordering::Relaxed) == ON
}

/// Re-estimates the line, unless another thread is doing it.
#[cold]
fn recalibrate() {
    if UPDATING.swap(true, Ordering::Acquire) {
        return;
    }
    let pair = sample();
    let (old, _) = read_line();
    let first = Pair {
        tsc: FIRST_TSC.load(Ordering::Relaxed),
        ns: FIRST_NS.load(Ordering::Relaxed),
    };
    let interval = (INTERVAL_NS.load(Ordering::Relaxed) * 2).min(MAX_INTERVAL_NS);
    match slew(old, first, pair, interval) {
        Some((line, next)) => {
            INTERVAL_NS.store(interval, Ordering::Relaxed);
            write_line(line, next);
        }
        None => MODE.store(OFF, Ordering::Release),
    }
    UPDATING.store(false, Ordering::Release);
}

/// CLOCK_MONOTONIC_RAW in nanoseconds, from the TSC; `None` where the TSC path is off.
#[inline]
pub(crate) fn now() -> Option<u64> {
    match MODE.load(Ordering::Relaxed) {
        ON => {}
        OFF => return None,
        _ => {
            if !init() {
                return None;
            }
        }
    }
    let tsc = rdtsc();
    let (line, next) = read_line();
    if tsc >= next {
        recalibrate();
    }
    Some(line.at(tsc))
}

/// Whether host timestamps come from the TSC (for diagnostics and tests).
pub(crate) fn in_use() -> bool {
    now().is_some()
}

/// `clock_gettime(CLOCK_MONOTONIC_RAW)`, for the fallback and for comparisons.
pub(crate) fn system_ns() -> u64 {
    syscall_ns()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GHZ3: u64 = (1u64 << 32) / 3; // 1/3 ns per tick: a 3 GHz TSC

    #[test]
    fn a_slewed_line_is_continuous_and_reaches_the_clock_one_interval_later() {
        let first = Pair {
            tsc: 0,
            ns: 1_000_000,
        };
        // The old line runs 0.1% fast; the truth is 3 GHz exactly.
        let old = Line {
            base_tsc: 0,
            base_ns: 1_000_000,
            scale: GHZ3 + GHZ3 / 1000,
        };
        let t = 3_000_000; // 1 ms of ticks
        let pair = Pair {
            tsc: t,
            ns: 1_000_000 + 1_000_000,
        };
        let (new, next) = slew(old, first, pair, 1_000_000).unwrap();
        assert_eq!(new.at(t), old.at(t), "continuous at the re-estimate");
        let truth_then = pair.ns + 1_000_000;
        assert!(
            new.at(next).abs_diff(truth_then) <= 2,
            "{} vs {truth_then}",
            new.at(next)
        );
        assert!(new.at(t + 1) >= new.at(t), "increasing");
        // A pair far off the line turns the TSC path off.
        assert!(
            slew(
                old,
                first,
                Pair {
                    tsc: t,
                    ns: pair.ns + 10_000
                },
                1_000_000
            )
            .is_none()
        );
    }

    #[test]
    fn a_line_converts_before_and_after_its_base() {
        let line = Line {
            base_tsc: 3_000,
            base_ns: 10_000,
            scale: GHZ3,
        };
        assert_eq!(line.at(3_000), 10_000);
        assert_eq!(line.at(6_000), 11_000 - 1);
        assert_eq!(line.at(0), 9_000);
    }

    #[test]
    fn tsc_time_follows_clock_gettime() {
        if !in_use() {
            // The TSC path may only be off where the machine cannot support it.
            assert!(!tsc_usable() || MODE.load(Ordering::Relaxed) == OFF);
            return;
        }
        let mut last = now().unwrap();
        let start = system_ns();
        let (mut worst, mut compared) = (0i128, 0);
        while system_ns() < start + 50_000_000 {
            let a = now().unwrap();
            let s = system_ns();
            let b = now().unwrap();
            assert!(a >= last && b >= a, "went backwards");
            last = b;
            // Only brackets too narrow to hide a preemption tell where clock_gettime lies.
            if b - a < 2_000 {
                compared += 1;
                let mid = (a as i128 + b as i128) / 2;
                worst = worst.max((mid - s as i128).abs());
            }
        }
        assert!(compared > 1000, "only {compared} tight samples");
        assert!(
            worst < 2_000,
            "TSC time strayed {worst} ns from clock_gettime"
        );
    }
}
