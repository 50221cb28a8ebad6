//! CLOCK_MONOTONIC_RAW read from the TSC, for less than half the price of `clock_gettime`.
//!
//! Every API record needs two host timestamps; with `clock_gettime` they are most of the
//! record's cost. When the kernel's clocksource is the TSC and the CPU's TSC is invariant
//! (`constant_tsc`, `nonstop_tsc`), CLOCK_MONOTONIC_RAW is a fixed linear function of the TSC,
//! so libpti reads the TSC and converts it with a line estimated from (TSC, `clock_gettime`)
//! pairs:
//!
//! - **Warm-up.** Until two pairs [`WARMUP_NS`] apart exist, reads use `clock_gettime` (exact);
//!   the first line then starts at the second pair, with a slope good to about 1e-6.
//! - **Calibration.** A pair is sampled as `tsc_a; clock_gettime; tsc_b` (the narrowest of a few
//!   tries), the TSC taken midway. The line is re-estimated at growing intervals (1 ms, doubling,
//!   up to 1 s), when a read finds it due; its long-run slope is measured over the whole baseline
//!   since the first pair, so its error shrinks as the process runs.
//! - **Monotonic.** A re-estimate that finds the line behind the clock jumps forward to it; one
//!   that finds it ahead never jumps back: the new line starts where the old one is when it is
//!   published, with a slope that reaches the clock one interval later (it slews, as NTP does).
//!   Past that point the line continues with the long-run slope, so a long pause without
//!   re-estimates stays as accurate as that slope.
//! - **Safety net.** If a pair lies farther off the line than its known uncertainty allows
//!   ([`MAX_RESIDUAL_NS`] plus the slope's uncertainty over the gap), the clocksource changed or
//!   the machine was suspended or migrated: the TSC path is switched off for good and every later
//!   read uses `clock_gettime`.
//!
//! `PTI_HOST_CLOCK=syscall` in the environment forces `clock_gettime`. Readers take the line
//! through a seqlock; one thread at a time re-estimates it, the others keep using the old line.

use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering, fence};

/// A pair farther than this from the line (beyond the slope's uncertainty) switches the TSC off.
pub(crate) const MAX_RESIDUAL_NS: i128 = 5_000;
const FIRST_INTERVAL_NS: u64 = 1_000_000;
const MAX_INTERVAL_NS: u64 = 1_000_000_000;
/// How long reads use `clock_gettime` before the first line, to measure its slope well.
pub(crate) const WARMUP_NS: u64 = 20_000_000;

/// The conversion: from `base` with slope `scale` (ns per tick << 32) until tick `next`, then on
/// with the long-run slope `long` (continuous at `next`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line {
    pub(crate) base_tsc: u64,
    pub(crate) base_ns: u64,
    pub(crate) scale: u64,
    pub(crate) next: u64,
    pub(crate) long: u64,
}

fn along(from_tsc: u64, from_ns: u64, scale: u64, tsc: u64) -> u64 {
    let delta = tsc.wrapping_sub(from_tsc) as i64 as i128;
    (from_ns as i128 + ((delta * scale as i128) >> 32)) as u64
}

impl Line {
    /// The line's value at `tsc` (which may lie a little before `base_tsc`).
    #[inline(always)]
    pub(crate) fn at(self, tsc: u64) -> u64 {
        if tsc < self.next {
            along(self.base_tsc, self.base_ns, self.scale, tsc)
        } else {
            let at_next = along(self.base_tsc, self.base_ns, self.scale, self.next);
            along(self.next, at_next, self.long, tsc)
        }
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
    let ticks = to.tsc.saturating_sub(from.tsc) as u128;
    ((to.ns.saturating_sub(from.ns) as u128) << 32)
        .checked_div(ticks)
        .unwrap_or(0) as u64
}

/// The line re-estimated from `pair`, published at tick `now`: continuous with `old` at `now`,
/// reaching the measured clock (`pair` extended with the long-run slope from `first`)
/// `interval_ns` later, then on with that slope. `None` if `pair` lies farther from `old` than
/// [`MAX_RESIDUAL_NS`] plus `uncertainty` (relative) over the time since `old` was based.
pub(crate) fn slew(
    old: Line,
    first: Pair,
    pair: Pair,
    now: u64,
    interval_ns: u64,
    uncertainty: f64,
) -> Option<Line> {
    let predicted = old.at(pair.tsc) as i128;
    let gap_ns = pair.ns.saturating_sub(old.base_ns) as f64;
    let tolerance = MAX_RESIDUAL_NS + (uncertainty * gap_ns) as i128;
    if (pair.ns as i128 - predicted).abs() > tolerance {
        return None;
    }
    let long = slope(first, pair).max(1);
    let here = old.at(now);
    let truth_now = along(pair.tsc, pair.ns, long, now);
    let interval_ticks = (((interval_ns as u128) << 32) / long as u128).max(1);
    let next = now + interval_ticks as u64;
    if truth_now >= here {
        // Behind the clock: catching up at once keeps time increasing.
        return Some(Line {
            base_tsc: now,
            base_ns: truth_now,
            scale: long,
            next,
            long,
        });
    }
    let target = truth_now as i128 + interval_ns as i128;
    let scale = (((target - here as i128) << 32) / interval_ticks as i128).max(1) as u64;
    Some(Line {
        base_tsc: now,
        base_ns: here,
        scale,
        next,
        long,
    })
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
    super::clock_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// The narrowest of a few `tsc; clock_gettime; tsc` samples, and its width in ticks.
fn sample() -> (Pair, u64) {
    let mut best = (Pair { tsc: 0, ns: 0 }, u64::MAX);
    for _ in 0..5 {
        let a = rdtsc();
        let ns = syscall_ns();
        let b = rdtsc();
        let width = b.wrapping_sub(a);
        if width < best.1 {
            best = (
                Pair {
                    tsc: a + width / 2,
                    ns,
                },
                width,
            );
        }
    }
    best
}

const UNINIT: u8 = 0;
const BUSY: u8 = 1;
const ON: u8 = 2;
const OFF: u8 = 3;
/// The first pair is taken; reads use `clock_gettime` until the warm-up is over.
const WARMING: u8 = 4;

static MODE: AtomicU8 = AtomicU8::new(UNINIT);
static SEQ: AtomicU64 = AtomicU64::new(0);
static BASE_TSC: AtomicU64 = AtomicU64::new(0);
static BASE_NS: AtomicU64 = AtomicU64::new(0);
static SCALE: AtomicU64 = AtomicU64::new(0);
static NEXT_TSC: AtomicU64 = AtomicU64::new(0);
static LONG: AtomicU64 = AtomicU64::new(0);
static FIRST_TSC: AtomicU64 = AtomicU64::new(0);
static FIRST_NS: AtomicU64 = AtomicU64::new(0);
/// Widest bracket of the pairs so far, in ticks: bounds the error of each pair's TSC.
static MAX_WIDTH: AtomicU64 = AtomicU64::new(0);
static INTERVAL_NS: AtomicU64 = AtomicU64::new(FIRST_INTERVAL_NS);
static UPDATING: AtomicBool = AtomicBool::new(false);

/// Reads the line (seqlock reader).
#[inline(always)]
fn read_line() -> Line {
    loop {
        let s1 = SEQ.load(Ordering::Acquire);
        if s1 & 1 == 0 {
            let line = Line {
                base_tsc: BASE_TSC.load(Ordering::Relaxed),
                base_ns: BASE_NS.load(Ordering::Relaxed),
                scale: SCALE.load(Ordering::Relaxed),
                next: NEXT_TSC.load(Ordering::Relaxed),
                long: LONG.load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            if SEQ.load(Ordering::Relaxed) == s1 {
                return line;
            }
        }
        core::hint::spin_loop();
    }
}

/// Publishes a line (seqlock writer; callers hold UPDATING or run before MODE is ON).
fn write_line(line: Line) {
    let s = SEQ.load(Ordering::Relaxed);
    SEQ.store(s + 1, Ordering::Relaxed);
    fence(Ordering::Release);
    BASE_TSC.store(line.base_tsc, Ordering::Relaxed);
    BASE_NS.store(line.base_ns, Ordering::Relaxed);
    SCALE.store(line.scale, Ordering::Relaxed);
    NEXT_TSC.store(line.next, Ordering::Relaxed);
    LONG.store(line.long, Ordering::Relaxed);
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

/// Decides whether the TSC can be used and, if so, takes the first pair (the warm-up begins).
#[cold]
fn init() {
    if MODE
        .compare_exchange(UNINIT, BUSY, Ordering::Acquire, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    if !tsc_usable() {
        MODE.store(OFF, Ordering::Release);
        return;
    }
    let (first, width) = sample();
    FIRST_TSC.store(first.tsc, Ordering::Relaxed);
    FIRST_NS.store(first.ns, Ordering::Relaxed);
    MAX_WIDTH.store(width, Ordering::Relaxed);
    INTERVAL_NS.store(FIRST_INTERVAL_NS, Ordering::Relaxed);
    MODE.store(WARMING, Ordering::Release);
}

/// Ends the warm-up once it has lasted [`WARMUP_NS`]: the first line starts at a fresh pair.
#[cold]
fn finish_warmup(now_ns: u64) {
    if now_ns < FIRST_NS.load(Ordering::Relaxed) + WARMUP_NS
        || MODE
            .compare_exchange(WARMING, BUSY, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let (second, width) = sample();
    MAX_WIDTH.fetch_max(width, Ordering::Relaxed);
    let first = Pair {
        tsc: FIRST_TSC.load(Ordering::Relaxed),
        ns: FIRST_NS.load(Ordering::Relaxed),
    };
    let long = slope(first, second);
    let interval_ticks = ((FIRST_INTERVAL_NS as u128) << 32)
        .checked_div(long as u128)
        .unwrap_or(0) as u64;
    write_line(Line {
        base_tsc: second.tsc,
        base_ns: second.ns,
        scale: long,
        next: second.tsc + interval_ticks,
        long,
    });
    MODE.store(if long > 0 { ON } else { OFF }, Ordering::Release);
}

/// Re-estimates the line, unless another thread is doing it; returns the line it published.
#[cold]
fn recalibrate() -> Option<Line> {
    if UPDATING.swap(true, Ordering::Acquire) {
        return None;
    }
    let (pair, width) = sample();
    let max_width = MAX_WIDTH.fetch_max(width, Ordering::Relaxed).max(width);
    let old = read_line();
    let first = Pair {
        tsc: FIRST_TSC.load(Ordering::Relaxed),
        ns: FIRST_NS.load(Ordering::Relaxed),
    };
    // Relative uncertainty of the long-run slope: two bracket widths over the baseline.
    let uncertainty = 2.0 * max_width as f64 / pair.tsc.saturating_sub(first.tsc).max(1) as f64;
    let interval = (INTERVAL_NS.load(Ordering::Relaxed) * 2).min(MAX_INTERVAL_NS);
    let published = match slew(old, first, pair, rdtsc(), interval, uncertainty) {
        Some(line) => {
            INTERVAL_NS.store(interval, Ordering::Relaxed);
            write_line(line);
            Some(line)
        }
        None => {
            MODE.store(OFF, Ordering::Release);
            None
        }
    };
    UPDATING.store(false, Ordering::Release);
    published
}

/// CLOCK_MONOTONIC_RAW in nanoseconds: from the TSC when it is on, else from `clock_gettime`.
// Out of line, so that `clock::now` (a load and a branch around this call) stays small enough to
// be inlined where records are stamped: callgrind counted 12 instructions a launch more with
// views when LLVM chose the other way round.
#[inline(never)]
pub(crate) fn now() -> u64 {
    if MODE.load(Ordering::Acquire) != ON {
        return now_without_line();
    }
    let tsc = rdtsc();
    let line = read_line();
    // Nested, not a `let` chain: the chain made this function big enough that `clock::now`, its
    // caller on every record, was no longer inlined (callgrind: 12 instructions more a launch).
    #[allow(clippy::collapsible_if)]
    if tsc >= line.next {
        if let Some(fresh) = recalibrate() {
            return fresh.at(tsc);
        }
    }
    line.at(tsc)
}

/// A read where the TSC is not in use: `clock_gettime` where it never will be again (the
/// machine's every read, where the kernel's clocksource is not the TSC), else the warm-up's.
// Kept to the system call alone, the warm-up out of line: on a machine without a TSC
// clocksource every timestamp comes here (callgrind: 5 instructions a read fewer than with the
// warm-up's `match` here, issue 39).
#[cold]
fn now_without_line() -> u64 {
    if MODE.load(Ordering::Acquire) == OFF {
        return syscall_ns();
    }
    now_before_line()
}

/// A read before the line exists: the first (which decides whether the TSC can be used), or one
/// during the warm-up.
#[cold]
#[inline(never)]
fn now_before_line() -> u64 {
    match MODE.load(Ordering::Acquire) {
        UNINIT => init(),
        WARMING => {
            let ns = syscall_ns();
            finish_warmup(ns);
            return ns;
        }
        _ => {}
    }
    syscall_ns()
}

/// In the child of `fork()`: a thread that was initialising or re-estimating is gone, so its
/// half-done state is reset (the next read initialises again).
pub(crate) fn fork_child() {
    UPDATING.store(false, Ordering::Relaxed);
    let seq = SEQ.load(Ordering::Relaxed);
    let mode = MODE.load(Ordering::Relaxed);
    if mode == BUSY || mode == WARMING || seq & 1 == 1 {
        SEQ.store((seq + 1) & !1, Ordering::Relaxed);
        MODE.store(UNINIT, Ordering::Release);
    }
}

/// Whether host timestamps come from the TSC now (not during the warm-up).
pub(crate) fn in_use() -> bool {
    now();
    MODE.load(Ordering::Acquire) == ON
}

#[cfg(test)]
mod tests {
    use super::*;

    const GHZ3: u64 = (1u64 << 32) / 3; // 1/3 ns per tick: a 3 GHz TSC

    fn straight(base_tsc: u64, base_ns: u64, scale: u64) -> Line {
        Line {
            base_tsc,
            base_ns,
            scale,
            next: u64::MAX,
            long: scale,
        }
    }

    #[test]
    fn a_slewed_line_is_continuous_and_reaches_the_clock_one_interval_later() {
        let first = Pair {
            tsc: 0,
            ns: 1_000_000,
        };
        // The old line runs 0.1% fast; the truth is 3 GHz exactly.
        let old = straight(0, 1_000_000, GHZ3 + GHZ3 / 1000);
        let pair = Pair {
            tsc: 3_000_000,
            ns: 2_000_000,
        };
        let published = pair.tsc + 30_000; // the updater was preempted for 10 µs
        let new = slew(old, first, pair, published, 1_000_000, 0.0).unwrap();
        assert_eq!(
            new.at(published),
            old.at(published),
            "continuous where it is published"
        );
        let truth_then = 2_000_000 + 10_000 + 1_000_000;
        assert!(
            new.at(new.next).abs_diff(truth_then) <= 2,
            "{} vs {truth_then}",
            new.at(new.next)
        );
        // Beyond `next` it runs at the true rate, so a long pause stays accurate.
        // (The slope's 32-bit fraction rounds by under 1 ns per second at 3 GHz.)
        let later = new.at(new.next + 3_000_000_000);
        assert!(
            later.abs_diff(truth_then + 1_000_000_000) <= 4,
            "{later} vs {}",
            truth_then + 1_000_000_000
        );
        assert!(new.at(published + 1) >= new.at(published), "increasing");
        // A pair far off the line turns the TSC path off.
        assert!(
            slew(
                old,
                first,
                Pair {
                    tsc: 3_000_000,
                    ns: 2_010_000
                },
                published,
                1_000_000,
                0.0
            )
            .is_none()
        );
    }

    #[test]
    fn a_line_behind_the_clock_catches_up_at_once() {
        let first = Pair { tsc: 0, ns: 0 };
        // The old line runs 0.1% slow: it is behind when the pair is taken.
        let old = straight(0, 0, GHZ3 - GHZ3 / 1000);
        let pair = Pair {
            tsc: 3_000_000,
            ns: 1_000_000,
        };
        let new = slew(old, first, pair, pair.tsc, 1_000_000, 0.0).unwrap();
        assert!(
            new.at(pair.tsc) > old.at(pair.tsc),
            "jumps forward, never back"
        );
        assert!(new.at(pair.tsc).abs_diff(pair.ns) <= 1);
    }

    #[test]
    fn the_tolerance_grows_with_the_slopes_uncertainty_over_the_gap() {
        let first = Pair { tsc: 0, ns: 0 };
        let old = straight(0, 0, GHZ3);
        // 20 µs off after a 100 ms gap: too much for an exact slope, fine for 1e-3 uncertainty.
        let pair = Pair {
            tsc: 300_000_000,
            ns: 100_020_000,
        };
        assert!(slew(old, first, pair, pair.tsc, 1_000_000, 0.0).is_none());
        assert!(slew(old, first, pair, pair.tsc, 1_000_000, 1e-3).is_some());
    }

    #[test]
    fn a_line_converts_before_and_after_its_base_and_past_next() {
        let line = Line {
            base_tsc: 3_000,
            base_ns: 10_000,
            scale: GHZ3,
            next: 6_000,
            long: GHZ3 / 2,
        };
        assert_eq!(line.at(3_000), 10_000);
        assert_eq!(line.at(0), 9_000);
        let at_next = line.at(6_000);
        assert!(at_next.abs_diff(11_000) <= 1);
        assert!(
            line.at(12_000).abs_diff(at_next + 1_000) <= 1,
            "half the slope past next"
        );
    }

    #[test]
    fn tsc_time_follows_clock_gettime() {
        // Past the warm-up, the TSC path is on wherever the machine supports it.
        now();
        std::thread::sleep(std::time::Duration::from_nanos(WARMUP_NS));
        assert_eq!(
            in_use(),
            tsc_usable(),
            "mode {}",
            MODE.load(Ordering::Relaxed)
        );
        let mut last = now();
        let start = syscall_ns();
        let (mut worst, mut compared) = (0i128, 0);
        while syscall_ns() < start + 50_000_000 {
            let a = now();
            let s = syscall_ns();
            let b = now();
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
