//! Device timestamps onto the host clock.
//!
//! A device counts ticks at its own frequency, from an origin unrelated to the host's, and a
//! kernel timestamp may keep fewer valid bits than the device's global timer (Level Zero's
//! `kernelTimestampValidBits` < `timestampValidBits`), so it wraps often: a 32-bit counter at
//! 19.2 MHz wraps every 224 s. The backends feed periodic synchronisation pairs (a host time and
//! the device counter read together, e.g. from `zeDeviceGetGlobalTimestamps` or
//! `clGetDeviceAndHostTimer`); [`DeviceClock`] masks every device value to the valid bits and
//! works on *extended* tick counts that never wrap:
//!
//! - each new pair is unwrapped against the previous one: the extended value is the one
//!   congruent to the masked value that lies nearest to the value the elapsed host time predicts;
//! - a timestamp to convert is unwrapped the same way around the host time it is known to be
//!   near (the time of its submission, say), against the pair nearest to that time;
//! - the rate (nanoseconds per tick) starts at the nominal frequency and is re-measured over the
//!   longest baseline (first to latest pair) once that spans at least [`MIN_RATE_BASELINE_NS`],
//!   which absorbs the drift between the two oscillators; a measured rate more than
//!   [`MAX_RATE_DEVIATION`] from the nominal one (a counter that was reset) is not used.
//!
//! Arithmetic subtracts in integers before converting to `f64`, so host times far above 2^53 ns
//! (a tool clock in epoch nanoseconds) keep their precision.
//!
//! Unwrapping is correct as long as the true time is within half a wrap period of the guess.

use std::collections::VecDeque;

use crate::result::Error;

/// Pairs kept for choosing the one nearest to a timestamp.
const MAX_PAIRS: usize = 64;

/// Up to this many pairs, the nearest is found by a scan (cheaper than bisection for a few).
const SCANNED_PAIRS: usize = 8;

/// Baseline from which the measured rate replaces the nominal one.
pub(crate) const MIN_RATE_BASELINE_NS: u64 = 100_000_000;

/// Largest relative difference between a measured and the nominal rate that is believed.
pub(crate) const MAX_RATE_DEVIATION: f64 = 1e-3;

/// `x` rounded to the nearest integer, halves away from zero, as `f64::round` does (within
/// i64): the conversions to and from i64 are single instructions; `f64::round` is a library call
/// on x86-64's baseline.
fn round(x: f64) -> i64 {
    (x + 0.5f64.copysign(x)) as i64
}

#[derive(Clone, Copy, Debug)]
struct Pair {
    host_ns: u64,
    /// Device ticks, unwrapped (never masked again).
    ticks: i128,
}

/// Converts one device's timestamps onto the host clock (see the module docs).
#[derive(Clone, Debug)]
pub struct DeviceClock {
    nominal_ns_per_tick: f64,
    ns_per_tick: f64,
    valid_bits: u32,
    first: Option<Pair>,
    pairs: VecDeque<Pair>,
    /// The pairs' host times strictly increase (as libpti's clock makes them; a tool's clock
    /// may not): the nearest pair is then found by bisection instead of a scan of up to
    /// [`MAX_PAIRS`] pairs, twice per command converted.
    increasing: bool,
}

impl DeviceClock {
    /// A converter for a counter of `ticks_per_second` Hz whose values keep `valid_bits` bits.
    pub fn new(ticks_per_second: u64, valid_bits: u32) -> Result<Self, Error> {
        if ticks_per_second == 0 {
            return Err(Error::BadArgument(
                "a device clock's frequency must not be 0",
            ));
        }
        if !(1..=64).contains(&valid_bits) {
            return Err(Error::BadArgument(
                "a device counter keeps 1 to 64 valid bits",
            ));
        }
        let ns_per_tick = 1e9 / ticks_per_second as f64;
        Ok(DeviceClock {
            nominal_ns_per_tick: ns_per_tick,
            ns_per_tick,
            valid_bits,
            first: None,
            pairs: VecDeque::new(),
            increasing: true,
        })
    }

    fn modulus(&self) -> i128 {
        1i128 << self.valid_bits
    }

    fn masked(&self, ticks: u64) -> i128 {
        (ticks as i128) & (self.modulus() - 1)
    }

    /// The value congruent to `masked` (modulo 2^valid_bits) nearest to `guess`.
    fn unwrap_near(&self, masked: i128, guess: i128) -> i128 {
        let m = self.modulus();
        // `guess.rem_euclid(m)`, for a power of two: a mask, not an i128 division (a library
        // call of about a hundred instructions, twice per command converted).
        let base = guess - (guess & (m - 1)) + masked;
        [base - m, base + m].into_iter().fold(base, |best, v| {
            if (v - guess).abs() < (best - guess).abs() {
                v
            } else {
                best
            }
        })
    }

    fn ticks_between(&self, from_ns: u64, to_ns: u64) -> i128 {
        // Through i64 (host times 292 years apart at most): f64 to and from i128 are library
        // calls, and `round` is one on x86-64's baseline.
        i128::from(round(
            (to_ns as i128 - from_ns as i128) as i64 as f64 / self.ns_per_tick,
        ))
    }

    /// Adds a synchronisation pair: `device_ticks` read at host time `host_ns`.
    pub fn add_sync_point(&mut self, host_ns: u64, device_ticks: u64) {
        let masked = self.masked(device_ticks);
        let ticks = match self.pairs.back() {
            None => masked,
            Some(last) => self.unwrap_near(
                masked,
                last.ticks + self.ticks_between(last.host_ns, host_ns),
            ),
        };
        let pair = Pair { host_ns, ticks };
        let first = *self.first.get_or_insert(pair);
        if host_ns.saturating_sub(first.host_ns) >= MIN_RATE_BASELINE_NS && ticks != first.ticks {
            let measured = (host_ns - first.host_ns) as f64 / (ticks - first.ticks) as f64;
            if (measured / self.nominal_ns_per_tick - 1.0).abs() <= MAX_RATE_DEVIATION {
                self.ns_per_tick = measured;
            }
        }
        if self
            .pairs
            .back()
            .is_some_and(|last| host_ns <= last.host_ns)
        {
            self.increasing = false;
        }
        if self.pairs.len() == MAX_PAIRS {
            self.pairs.pop_front();
        }
        self.pairs.push_back(pair);
    }

    /// The host time of device timestamp `device_ticks`, known to lie near host time
    /// `near_host_ns` (within half a wrap period); `None` before the first synchronisation pair.
    pub fn to_host_ns(&self, device_ticks: u64, near_host_ns: u64) -> Option<u64> {
        let pair = self.nearest(near_host_ns)?;
        let guess = pair.ticks + self.ticks_between(pair.host_ns, near_host_ns);
        let ticks = self.unwrap_near(self.masked(device_ticks), guess);
        // Within half a wrap of the guess, so within i64 of the pair (see `ticks_between`).
        let delta_ns = i128::from(round((ticks - pair.ticks) as i64 as f64 * self.ns_per_tick));
        Some((pair.host_ns as i128 + delta_ns).max(0) as u64)
    }

    /// The pair whose host time is nearest to `host_ns` (the earlier of two as near).
    fn nearest(&self, host_ns: u64) -> Option<&Pair> {
        let distance = |p: &&Pair| p.host_ns.abs_diff(host_ns);
        if !self.increasing || self.pairs.len() <= SCANNED_PAIRS {
            return self.pairs.iter().min_by_key(distance);
        }
        let after = self.pairs.partition_point(|p| p.host_ns < host_ns);
        let before = after.checked_sub(1).and_then(|i| self.pairs.get(i));
        before
            .into_iter()
            .chain(self.pairs.get(after))
            .min_by_key(distance)
    }

    /// The time from device timestamp `from` to the later timestamp `to`, in nanoseconds: less
    /// than a wrap period, whatever the valid bits of either.
    pub fn elapsed_ns(&self, from: u64, to: u64) -> u64 {
        let ticks = (self.masked(to) - self.masked(from)) & (self.modulus() - 1);
        round(ticks as u64 as f64 * self.ns_per_tick).max(0) as u64
    }

    /// The rate in use, in nanoseconds per tick, and the nominal one.
    pub fn rate(&self) -> (f64, f64) {
        (self.ns_per_tick, self.nominal_ns_per_tick)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A simulated device: a counter at `hz * (1 + drift)` that started at `origin` ticks when
    /// the host clock read `host0`, reporting `bits` valid bits.
    struct Sim {
        hz: f64,
        drift: f64,
        origin: u64,
        host0: u64,
        bits: u32,
    }

    impl Sim {
        fn ticks_at(&self, host_ns: u64) -> u64 {
            let elapsed = (host_ns - self.host0) as f64 * 1e-9;
            let ticks =
                self.origin as u128 + (elapsed * self.hz * (1.0 + self.drift)).round() as u128;
            let mask = if self.bits == 64 {
                u64::MAX as u128
            } else {
                (1u128 << self.bits) - 1
            };
            (ticks & mask) as u64
        }
    }

    #[test]
    fn rejects_impossible_clocks() {
        assert!(DeviceClock::new(0, 32).is_err());
        assert!(DeviceClock::new(1000, 0).is_err());
        assert!(DeviceClock::new(1000, 65).is_err());
        assert!(
            DeviceClock::new(1000, 64)
                .unwrap()
                .to_host_ns(5, 5)
                .is_none()
        );
    }

    #[test]
    fn epoch_scale_host_times_keep_nanosecond_precision() {
        // A tool clock in Unix epoch nanoseconds (about 2^60): beyond f64's 2^53 integers.
        let host0 = 1_763_700_000_123_456_789u64;
        let mut clock = DeviceClock::new(1_000_000_000, 64).unwrap();
        clock.add_sync_point(host0, 5_000);
        for delta in [1u64, 7, 1_000, 123_457] {
            assert_eq!(
                clock.to_host_ns(5_000 + delta, host0 + delta),
                Some(host0 + delta)
            );
        }
    }

    #[test]
    fn a_counter_reset_does_not_poison_the_rate() {
        let mut clock = DeviceClock::new(1_000_000, 48).unwrap();
        clock.add_sync_point(1_000_000_000, 10_000_000);
        // 200 ms later the counter reads near zero: it was reset.
        clock.add_sync_point(1_200_000_000, 3);
        let (rate, nominal) = clock.rate();
        assert_eq!(rate, nominal);
    }

    #[test]
    fn a_32_bit_counter_that_wraps_many_times_converts_exactly() {
        // 19.2 MHz wraps a 32-bit counter every 223.7 s; run for an hour with a pair a minute.
        let sim = Sim {
            hz: 19.2e6,
            drift: 0.0,
            origin: 0xFFFF_F000,
            host0: 5_000_000_000,
            bits: 32,
        };
        let mut clock = DeviceClock::new(19_200_000, 32).unwrap();
        for minute in 0..60u64 {
            let h = sim.host0 + minute * 60_000_000_000;
            clock.add_sync_point(h, sim.ticks_at(h));
        }
        for probe in [1u64, 250, 999, 3_599] {
            let h = sim.host0 + probe * 1_000_000_000 + 123_456;
            let got = clock.to_host_ns(sim.ticks_at(h), h + 40_000_000).unwrap();
            assert!(got.abs_diff(h) <= 100, "at {probe} s: {got} vs {h}");
        }
    }

    proptest! {
        /// The nearest pair by bisection (host times increasing) is the one a scan of every
        /// pair finds, for any pairs and any time asked about.
        #[test]
        fn bisection_finds_the_pair_a_scan_finds(
            gaps in proptest::collection::vec(1u64..1_000_000_000, 1..80),
            start in 0u64..1u64 << 62,
            asked in proptest::collection::vec(0u64..1u64 << 63, 1..20),
        ) {
            let mut clock = DeviceClock::new(1_000_000_000, 64).unwrap();
            let mut host = start;
            for (i, gap) in gaps.iter().enumerate() {
                host += gap;
                clock.add_sync_point(host, i as u64 * 1000);
            }
            prop_assert!(clock.increasing);
            for t in asked.into_iter().chain(clock.pairs.iter().map(|p| p.host_ns)) {
                let scanned = clock.pairs.iter().min_by_key(|p| p.host_ns.abs_diff(t));
                prop_assert_eq!(
                    clock.nearest(t).map(|p| (p.host_ns, p.ticks)),
                    scanned.map(|p| (p.host_ns, p.ticks))
                );
            }
        }

        /// Any frequency, valid-bit width (whose wrap period exceeds twice the sync interval),
        /// origin and drift: conversions land within 2 µs of the truth, and later device
        /// timestamps never convert to earlier host times.
        #[test]
        fn conversions_track_the_device(
            mhz in 1u64..5_000,
            bits in 28u32..=64,
            origin in any::<u64>(),
            drift_ppm in -100i32..=100,
            host0 in 1_000_000_000u64..1_000_000_000_000,
            sync_ms in 1u64..500,
            probes in prop::collection::vec(0u64..20_000_000_000, 1..20),
        ) {
            let hz = mhz as f64 * 1e6;
            let wrap_ns = if bits == 64 { f64::INFINITY } else { 2f64.powi(bits as i32) / hz * 1e9 };
            prop_assume!(wrap_ns > 4.0 * sync_ms as f64 * 1e6);
            let sim = Sim { hz, drift: drift_ppm as f64 * 1e-6, origin, host0, bits };
            let mut clock = DeviceClock::new(mhz * 1_000_000, bits).unwrap();
            let span = 20_000_000_000u64;
            let mut h = host0;
            while h <= host0 + span {
                clock.add_sync_point(h, sim.ticks_at(h));
                h += sync_ms * 1_000_000;
            }
            let mut probes = probes;
            probes.sort();
            let mut last = 0u64;
            for p in probes {
                let truth = host0 + p;
                let near = truth + (wrap_ns / 8.0).min(1e6) as u64;
                let got = clock.to_host_ns(sim.ticks_at(truth), near).unwrap();
                // 2 µs, plus the tick quantum of slow clocks.
                let tolerance = 2_000 + (1e9 / hz) as u64;
                prop_assert!(got.abs_diff(truth) <= tolerance, "{got} vs {truth}");
                prop_assert!(got + tolerance >= last);
                last = got;
            }
        }
    }
}
