//! Device timestamps onto the host clock, as both backends convert them (see `DeviceClock` for
//! the unwrapping and rate arithmetic underneath). Per device, in two steps:
//!
//! - a **base** mapping: synchronisation pairs (a host time and the device timer read together:
//!   `clGetDeviceAndHostTimer`, `zeDeviceGetGlobalTimestamps`) in a [`DeviceClock`], refreshed at
//!   most every [`RESYNC_NS`] when records are written; for a timer that cannot be read beside
//!   the host clock (a driver without `zeDeviceGetGlobalTimestamps`), the first command converted
//!   as the one pair; or, for a device without a timer (PoCL), device nanoseconds as they are;
//! - a **shift** from the commands themselves: a command cannot reach the device before the call
//!   that submitted it began, so each command's earliest device timestamp, mapped, bounds the
//!   shift from below. The shift is the largest bound of the last [`OFFSET_WINDOW_NS`] (older
//!   bounds expire, so a drifting clock is followed). Without a timer the shift *is* the offset
//!   between the clocks; with one it only corrects the base mapping forward, by the error of a
//!   synchronisation pair and the drift since it.
//!
//! Without a timer, the tightest bounds come from the commands' QUEUED times (stamped inside the
//! enqueue call), but reading QUEUED is a runtime query (1.3 µs on NVIDIA's OpenCL). So QUEUED
//! is read only for an **anchor**: each of a device's first [`FIRST_ANCHORS`] commands, then the
//! first command converted after `PTI_CLOCK_ANCHOR_NS` ([`DEFAULT_ANCHOR_INTERVAL_NS`]) of its
//! own calls' time since the last anchor ([`Timing::last_anchor`]); the other commands' START
//! times still bound the shift from below, but only an anchor's bound starts a new window, so the
//! looser START bounds never replace an anchor's. The error this leaves (docs/BENCHMARKS.md,
//! issue 39) is the least delay between an anchor's call and its QUEUED stamp, plus the drift of
//! the device's clock over a window.
//!
//! A command's times are converted after its own bound is applied, so no command appears to
//! start before the call that submitted it. The backend owns the lock around a [`Timing`] and
//! reads the pairs (runtime calls) without holding it. A command that cannot change the state
//! (most commands between anchors) is converted without the lock, from the shift the backend
//! keeps beside it ([`Timing::published_shift`], [`Timing::convert_unchanged`]).

use crate::clock::DeviceClock;

/// How often, at most, a device with a timer gets a new synchronisation pair.
pub(crate) const RESYNC_NS: u64 = 100_000_000;

/// How long a lower bound from a command is trusted.
pub(crate) const OFFSET_WINDOW_NS: u64 = 1_000_000_000;

/// The first commands of a device are all anchors: the first bounds are loose (a first call is
/// slow) and would otherwise stand for a whole interval.
pub(crate) const FIRST_ANCHORS: u32 = 64;

/// The default anchor interval: 1 ms keeps the conversion within the error measured with every
/// command anchored, to within the noise of those measurements (docs/BENCHMARKS.md, issue 39),
/// for one QUEUED query per millisecond of submissions instead of one per command.
pub(crate) const DEFAULT_ANCHOR_INTERVAL_NS: u64 = 1_000_000;

/// The base mapping of device timestamps (see the module docs).
#[derive(Debug)]
enum Base {
    /// No pair read yet: the timer's nominal frequency and valid bits.
    Unprobed {
        ticks_per_second: u64,
        valid_bits: u32,
    },
    /// The device has a timer: synchronisation pairs.
    Timer { clock: DeviceClock, last_sync: u64 },
    /// A timer of known rate that cannot be read beside the host clock (a driver without
    /// `zeDeviceGetGlobalTimestamps`): the first command converted anchors it, as if it started
    /// when its call began; its rate gives every duration. The shift corrects it forward.
    Anchorless {
        ticks_per_second: u64,
        valid_bits: u32,
    },
    /// No device timer: device nanoseconds as they are.
    Identity,
}

/// One device's conversion state.
#[derive(Debug)]
pub(crate) struct Timing {
    base: Base,
    /// Added to base-mapped times; the largest lower bound of the current window.
    shift: i128,
    /// When the window began (0: no bound yet).
    shift_set_at: u64,
    /// The call time of the last anchor (a command converted with its QUEUED time; 0: none).
    last_anchor: u64,
    /// Anchors converted so far, up to [`FIRST_ANCHORS`].
    anchors: u32,
}

impl Timing {
    /// A device whose timer counts `ticks_per_second` with `valid_bits` bits: its first
    /// synchronisation pair decides between a timer and no timer.
    pub(crate) fn new(ticks_per_second: u64, valid_bits: u32) -> Self {
        Timing {
            base: Base::Unprobed {
                ticks_per_second,
                valid_bits,
            },
            shift: 0,
            shift_set_at: 0,
            last_anchor: 0,
            anchors: 0,
        }
    }

    /// The call time of the last anchor (0: none yet), or `None` where the device has a timer
    /// (its commands are never anchors). A command whose call began at least
    /// `PTI_CLOCK_ANCHOR_NS` (`switches::anchor_interval_ns`) from it should be one: a backend then reads its QUEUED time (see
    /// the module docs and `DeviceRegistry::wants_anchor`).
    pub(crate) fn last_anchor(&self) -> Option<u64> {
        match self.base {
            Base::Timer { .. } => None,
            // Still among the first anchors: the next command is one too.
            _ if self.anchors < FIRST_ANCHORS => Some(0),
            _ => Some(self.last_anchor),
        }
    }

    /// Whether a new synchronisation pair is due for a command whose call began at `enter`
    /// (none yet, or the last is old by then: the commands' time, not a clock read per command).
    pub(crate) fn needs_pair(&self, enter: u64) -> bool {
        match &self.base {
            Base::Unprobed { .. } => true,
            Base::Timer { last_sync, .. } => enter.saturating_sub(*last_sync) >= RESYNC_NS,
            Base::Anchorless { .. } | Base::Identity => false,
        }
    }

    /// Takes a synchronisation pair `(host time, device ticks)`, or learns from `None` on the
    /// first try that the device has no timer.
    pub(crate) fn add_pair(&mut self, pair: Option<(u64, u64)>) {
        self.base.add_pair(pair);
    }
}

/// Device timestamps of one command, as the runtime reports them (0: not reported).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceTimes {
    pub(crate) queued: u64,
    pub(crate) submit: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// The earliest of these is the earliest the backend ever reads (an anchor: QUEUED read on
    /// OpenCL, or any command of a backend that reads no earlier time than START): its bound may
    /// start a new window (see the module docs).
    pub(crate) anchor: bool,
}

impl DeviceTimes {
    /// Whether the times read (not 0) come in the order a command goes through them: queued,
    /// submitted, started, ended (equal times are in order).
    pub(crate) fn in_order(&self) -> bool {
        // Each time against the latest read before it: a plain chain of comparisons, which a
        // command pays for at every record (an iterator over the four cost it twice as much).
        let mut latest = self.queued;
        for v in [self.submit, self.start, self.end] {
            if v != 0 {
                if v < latest {
                    return false;
                }
                latest = v;
            }
        }
        true
    }

    /// The bound a command that is no anchor and has only START and END read (END not before
    /// START) sets on its device's shift: it cannot have started before its enqueue call began
    /// at `enter`. `None` for any other command (its conversion takes the general path).
    #[inline]
    fn start_bound(&self, enter: u64) -> Option<i128> {
        let plain = !self.anchor && self.queued == 0 && self.submit == 0 && self.end >= self.start;
        plain.then(|| enter as i128 - self.start as i128)
    }
}

/// [`Timing::published_shift`] of a device whose commands are converted under the lock only.
pub(crate) const NO_SHIFT: i64 = i64::MIN;

/// START and END of a command that has only those, moved by `shift` (never before 0).
#[inline]
fn shifted(shift: i128, t: &DeviceTimes) -> HostTimes {
    let shifted = |v: u64| (v as i128 + shift).max(0) as u64;
    HostTimes {
        queued: None,
        submit: None,
        start: shifted(t.start),
        end: shifted(t.end),
    }
}

/// The same times on the host clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostTimes {
    pub(crate) queued: Option<u64>,
    pub(crate) submit: Option<u64>,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl Base {
    /// Takes a synchronisation pair (or learns, on the first try, that there is none).
    fn add_pair(&mut self, pair: Option<(u64, u64)>) {
        match (self, pair) {
            (base @ Base::Unprobed { .. }, Some((host, ticks))) => {
                let Base::Unprobed {
                    ticks_per_second,
                    valid_bits,
                } = *base
                else {
                    return;
                };
                *base = Base::synced(ticks_per_second, valid_bits, host, ticks);
            }
            (base @ Base::Unprobed { .. }, None) => {
                let Base::Unprobed {
                    ticks_per_second,
                    valid_bits,
                } = *base
                else {
                    return;
                };
                // Nanoseconds over 64 bits are what a device without a timer reports.
                *base = if ticks_per_second == 1_000_000_000 && valid_bits >= 64 {
                    Base::Identity
                } else {
                    Base::Anchorless {
                        ticks_per_second,
                        valid_bits,
                    }
                };
            }
            // Pairs read on several threads may arrive out of order: only newer ones are taken.
            (Base::Timer { clock, last_sync }, Some((host, ticks))) if host > *last_sync => {
                clock.add_sync_point(host, ticks);
                *last_sync = host;
            }
            _ => {}
        }
    }

    /// Nanoseconds from device timestamp `from` to the later `to`.
    fn elapsed(&self, from: u64, to: u64) -> i128 {
        match self {
            Base::Timer { clock, .. } => clock.elapsed_ns(from, to) as i128,
            Base::Unprobed { .. } | Base::Anchorless { .. } | Base::Identity => {
                to.saturating_sub(from) as i128
            }
        }
    }

    fn map(&self, ticks: u64, near: u64) -> i128 {
        match self {
            Base::Timer { clock, .. } => clock.to_host_ns(ticks, near).unwrap_or(near) as i128,
            Base::Unprobed { .. } | Base::Anchorless { .. } | Base::Identity => ticks as i128,
        }
    }

    /// An anchorless timer anchored: device tick `ticks` taken to be host time `host`.
    fn anchor(&mut self, host: u64, ticks: u64) {
        let Base::Anchorless {
            ticks_per_second,
            valid_bits,
        } = *self
        else {
            return;
        };
        *self = Base::synced(ticks_per_second, valid_bits, host, ticks);
    }

    /// A timer of this rate and width whose first synchronisation pair is `(host, ticks)`; no
    /// timer if the rate and width make no clock.
    fn synced(ticks_per_second: u64, valid_bits: u32, host: u64, ticks: u64) -> Base {
        match DeviceClock::new(ticks_per_second, valid_bits) {
            Ok(mut clock) => {
                clock.add_sync_point(host, ticks);
                Base::Timer {
                    clock,
                    last_sync: host,
                }
            }
            Err(_) => Base::Identity,
        }
    }
}

impl Timing {
    /// Converts one command's times; `enter` is the host time at which the call that submitted
    /// it began.
    #[inline]
    pub(crate) fn convert(&mut self, t: &DeviceTimes, enter: u64) -> HostTimes {
        self.between_anchors(t, enter)
            .unwrap_or_else(|| self.convert_any(t, enter))
    }

    /// The conversion of most commands of a device without a timer (NVIDIA's and PoCL's OpenCL),
    /// on its own because it is most of them: no anchor, only START and END read, inside the
    /// current window. The same arithmetic as [`Timing::convert_any`] takes for them, without the
    /// cases they never meet; `None` for any other command.
    #[inline]
    fn between_anchors(&mut self, t: &DeviceTimes, enter: u64) -> Option<HostTimes> {
        let bound = t.start_bound(enter)?;
        let in_window = matches!(self.base, Base::Identity)
            && self.shift_set_at != 0
            && enter.saturating_sub(self.shift_set_at) < OFFSET_WINDOW_NS;
        if !in_window {
            return None;
        }
        if bound > self.shift {
            self.shift = bound;
            self.shift_set_at = enter.max(1);
        }
        Some(shifted(self.shift, t))
    }

    /// The shift that [`Timing::convert_unchanged`] may use without the lock, or [`NO_SHIFT`]:
    /// that of a device without a timer once a command has bounded it (and where it fits 64
    /// bits). The backend keeps it beside its lock, refreshed after each conversion.
    pub(crate) fn published_shift(&self) -> i64 {
        match self.base {
            Base::Identity if self.shift_set_at != 0 => i64::try_from(self.shift)
                .ok()
                .filter(|s| *s != NO_SHIFT)
                .unwrap_or(NO_SHIFT),
            _ => NO_SHIFT,
        }
    }

    /// The conversion of a command that changes nothing in its device's state, from the
    /// device's [`Timing::published_shift`] alone (no lock): on a device without a timer, a
    /// command that is no anchor, has only START and END read, ends after it starts, and whose
    /// own bound is within the shift. That is most commands between anchors, and what
    /// [`Timing::convert`] returns for them with that shift (whether the window has expired or
    /// not: only an anchor starts a new one). `None` for any other command, which then goes
    /// through [`Timing::convert`].
    #[inline]
    pub(crate) fn convert_unchanged(shift: i64, t: &DeviceTimes, enter: u64) -> Option<HostTimes> {
        if shift == NO_SHIFT {
            return None;
        }
        let within = t.start_bound(enter)? <= shift as i128;
        within.then(|| shifted(shift as i128, t))
    }

    /// [`Timing::convert`] of any command (out of line: its registers and branches stay off the
    /// common path).
    #[inline(never)]
    fn convert_any(&mut self, t: &DeviceTimes, enter: u64) -> HostTimes {
        let earliest = [t.queued, t.submit, t.start]
            .into_iter()
            .find(|v| *v != 0)
            .unwrap_or(t.start);
        self.base.anchor(enter, earliest);
        // Mapped once, and reused below where START is the earliest (Level Zero's commands):
        // a mapping is the costly part of a conversion on a device with a timer.
        let start = self.base.map(t.start, enter);
        let earliest = if earliest == t.start {
            start
        } else {
            self.base.map(earliest, enter)
        };
        // This command cannot have reached the device before its enqueue call began.
        let bound = enter as i128 - earliest;
        let bound = match self.base {
            // A device timer is believed except where a command proves it early.
            Base::Timer { .. } => bound.max(0),
            Base::Unprobed { .. } | Base::Anchorless { .. } | Base::Identity => bound,
        };
        // The window is kept in the commands' time (their calls'), not the harvest's.
        let expired =
            self.shift_set_at == 0 || enter.saturating_sub(self.shift_set_at) >= OFFSET_WINDOW_NS;
        // Without a timer, only an anchor's tight bound (from its QUEUED time on OpenCL) starts
        // a window: a START bound, later than its call by the launch latency, would move every
        // record early by as much until the next anchor.
        let anchor = t.anchor;
        let starts_window = match self.base {
            Base::Timer { .. } => expired,
            _ => self.shift_set_at == 0 || (expired && anchor),
        };
        if anchor {
            self.last_anchor = self.last_anchor.max(enter);
            self.anchors = (self.anchors + 1).min(FIRST_ANCHORS);
        }
        if starts_window || bound > self.shift {
            self.shift = bound;
            self.shift_set_at = enter.max(1);
        }
        let shifted = |v: i128| (v + self.shift).max(0) as u64;
        let map = |v: u64| shifted(self.base.map(v, enter));
        let nonzero = |v: u64| (v != 0).then_some(v);
        // The end follows the start by the command's duration (a command may run longer than
        // half a wrap period, so unwrapping its end near its call could put it before its start).
        let end = start + self.base.elapsed(t.start, t.end);
        HostTimes {
            queued: nonzero(t.queued).map(map),
            submit: nonzero(t.submit).map(map),
            start: shifted(start),
            end: shifted(end),
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
            last_anchor: 0,
            anchors: 0,
        }
    }

    fn times(queued: u64, start: u64, end: u64) -> DeviceTimes {
        DeviceTimes {
            queued,
            submit: queued,
            start,
            end,
            anchor: true,
        }
    }

    #[test]
    fn times_are_in_order_when_each_read_one_follows_the_one_before() {
        let at = |queued, submit, start, end| DeviceTimes {
            queued,
            submit,
            start,
            end,
            anchor: false,
        };
        assert!(at(1, 2, 3, 4).in_order());
        assert!(at(5, 5, 5, 5).in_order());
        // Times not read (0) are skipped, wherever they are.
        assert!(at(0, 0, 3, 4).in_order());
        assert!(at(2, 0, 3, 4).in_order());
        assert!(at(0, 0, 0, 0).in_order());
        assert!(!at(0, 0, 4, 3).in_order());
        assert!(!at(5, 0, 3, 4).in_order());
        assert!(!at(1, 6, 3, 4).in_order());
        assert!(!at(7, 0, 0, 4).in_order());
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

    /// Times of a command on a device 1_000_000 ns behind the host, started 5_000 ns after its
    /// call began (`enter`); with `queued`, queued `lag` ns after it.
    fn launched(enter: u64, lag: u64, queued: bool) -> DeviceTimes {
        let device = enter - 1_000_000;
        DeviceTimes {
            queued: if queued { device + lag } else { 0 },
            submit: 0,
            start: device + 5_000,
            end: device + 6_000,
            anchor: queued,
        }
    }

    #[test]
    fn the_first_commands_then_one_per_interval_are_anchors() {
        let mut t = timing(Base::Identity);
        let interval = crate::backend::device::switches::anchor_interval_ns();
        assert_eq!(t.last_anchor(), Some(0), "the first command is an anchor");
        let mut enter = 10_000_000;
        for _ in 0..FIRST_ANCHORS {
            assert_eq!(t.last_anchor(), Some(0));
            t.convert(&launched(enter, 100, true), enter);
            enter += 1_000;
        }
        // Now one per interval: the next is wanted `interval` after the last anchor's call.
        let last = t.last_anchor().unwrap();
        assert_eq!(last, enter - 1_000);
        t.convert(&launched(enter, 0, false), enter);
        assert_eq!(
            t.last_anchor(),
            Some(last),
            "a START-only command is no anchor"
        );
        assert!(enter.abs_diff(last) < interval);
        // A device with a timer never wants one.
        let mut clock = DeviceClock::new(1_000_000_000, 64).unwrap();
        clock.add_sync_point(5_000_000, 2_000_000);
        let timed = timing(Base::Timer {
            clock,
            last_sync: 5_000_000,
        });
        assert_eq!(timed.last_anchor(), None);
    }

    #[test]
    fn start_bounds_between_anchors_never_replace_an_anchors_bound() {
        let mut t = timing(Base::Identity);
        // An anchor queued 100 ns after its call: the offset is known to 100 ns.
        let enter = 10_000_000;
        let h = t.convert(&launched(enter, 100, true), enter);
        assert_eq!(h.start, enter + 5_000 - 100);
        // Commands without QUEUED, even once the window has expired, keep that offset: their
        // START bounds (5_000 ns late) would move every record 4_900 ns early.
        for later in [enter + 1_000_000, enter + OFFSET_WINDOW_NS + 1] {
            let h = t.convert(&launched(later, 0, false), later);
            assert_eq!(h.start, later + 5_000 - 100, "at {later}");
        }
        // The next anchor after the window's end starts a new window with its own bound.
        let next = enter + OFFSET_WINDOW_NS + 2_000_000;
        let h = t.convert(&launched(next, 300, true), next);
        assert_eq!(h.start, next + 5_000 - 300);
    }

    #[test]
    fn without_sampled_anchors_every_command_starts_a_window_once_it_expired() {
        // Level Zero without a timer read beside the host: START is all there is, so every
        // command anchors, and a clock whose offset shrinks is followed once the window ends.
        let mut t = timing(Base::Identity);
        let enter = 10_000_000;
        let mut times = launched(enter, 0, false);
        times.anchor = true;
        let h = t.convert(&times, enter);
        assert_eq!(h.start, enter);
        // 2 s later the device clock is 3_000 ns further ahead: its commands start "before"
        // their calls by the old offset, until the window expires and this bound replaces it.
        let later = enter + 2 * OFFSET_WINDOW_NS;
        let mut times = launched(later, 0, false);
        times.start += 3_000;
        times.end += 3_000;
        times.anchor = true;
        let h = t.convert(&times, later);
        assert_eq!(h.start, later);
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
            anchor: true,
        };
        let h = t.convert(&only_start, 1_000);
        assert_eq!(
            (h.queued, h.submit, h.start, h.end),
            (None, None, 1_000, 1_200)
        );
    }

    #[test]
    fn a_long_command_ends_after_it_starts_across_a_wrap() {
        // 16-bit kernel timestamps at 1 GHz wrap every 65_536 ns; a command that runs 40_000 ns
        // (more than half a wrap) and starts right after its call.
        let mut clock = DeviceClock::new(1_000_000_000, 16).unwrap();
        clock.add_sync_point(1_000_000, 1_000_000 & 0xffff);
        let mut t = timing(Base::Timer {
            clock,
            last_sync: 1_000_000,
        });
        let (start, end) = (1_000_100u64, 1_040_100u64);
        let h = t.convert(&times(0, start & 0xffff, end & 0xffff), 1_000_000);
        assert_eq!((h.start, h.end), (start, end));
    }

    #[test]
    fn synchronisation_pairs_out_of_order_are_ignored() {
        let mut t = Timing::new(1_000_000_000, 64);
        t.add_pair(Some((2_000_000, 1_000_000)));
        t.add_pair(Some((1_000_000, 999_999_999))); // older, and wrong: not taken
        let h = t.convert(&times(0, 1_000_100, 1_000_200), 2_000_000);
        assert_eq!((h.start, h.end), (2_000_100, 2_000_200));
    }

    #[test]
    fn a_plain_command_is_converted_without_the_lock_once_a_bound_is_set() {
        // START and END only, no anchor: what most commands between anchors read.
        let plain = |start, end| DeviceTimes {
            queued: 0,
            submit: 0,
            start,
            end,
            anchor: false,
        };
        let mut t = timing(Base::Identity);
        assert_eq!(t.published_shift(), NO_SHIFT, "no bound yet");
        assert_eq!(
            Timing::convert_unchanged(NO_SHIFT, &plain(500, 600), 1_000),
            None
        );
        // An anchor: QUEUED 100 for a call at 1,000 sets the shift to 900.
        let anchor = times(100, 150, 200);
        t.convert(&anchor, 1_000);
        let shift = t.published_shift();
        assert_eq!(shift, 900);
        // START 300 of a call at 1,100: bound 800, within the shift.
        let unlocked = Timing::convert_unchanged(shift, &plain(300, 400), 1_100);
        assert_eq!(unlocked, Some(t.convert(&plain(300, 400), 1_100)));
        assert_eq!(unlocked.map(|h| (h.start, h.end)), Some((1_200, 1_300)));
        assert_eq!(t.published_shift(), 900, "nothing changed");
        // At the edge: a bound equal to the shift changes nothing; one above it does.
        assert_eq!(
            Timing::convert_unchanged(shift, &plain(200, 300), 1_100).map(|h| h.start),
            Some(1_100)
        );
        assert_eq!(
            Timing::convert_unchanged(shift, &plain(199, 300), 1_100),
            None
        );
        // Under the lock: a bound above the shift (START 100 at 1,100: 1,000), an anchor, a
        // command whose QUEUED was read, one that ends before it starts.
        assert_eq!(
            Timing::convert_unchanged(shift, &plain(100, 200), 1_100),
            None
        );
        assert_eq!(Timing::convert_unchanged(shift, &anchor, 1_100), None);
        let queued = DeviceTimes {
            queued: 250,
            ..plain(300, 400)
        };
        assert_eq!(Timing::convert_unchanged(shift, &queued, 1_100), None);
        assert_eq!(
            Timing::convert_unchanged(shift, &plain(400, 300), 1_100),
            None
        );
        // A device with a timer never publishes a shift.
        let mut timer = Timing::new(1_000_000_000, 64);
        timer.add_pair(Some((1_000, 500)));
        timer.convert(&plain(600, 700), 1_000);
        assert_eq!(timer.published_shift(), NO_SHIFT);
    }

    proptest::proptest! {
        /// The conversion between anchors gives what the general one gives, and leaves the same
        /// state; so does the conversion without the lock, where it applies, and it applies only
        /// where the general one changes nothing: commands of a device without a timer, anchors
        /// among them, submitted at times that grow (with windows expiring) and reporting times
        /// that drift.
        #[test]
        fn the_conversion_between_anchors_is_the_general_one(
            commands in proptest::collection::vec(
                (0u64..400_000_000, 0u64..3_000, 0u64..50_000, 0u64..100_000, 0u8..8),
                1..200,
            )
        ) {
            let mut fast = timing(Base::Identity);
            let mut general = timing(Base::Identity);
            let mut enter = 1_000_000_000u64;
            for (gap, delay, duration, skew, kind) in commands {
                enter += gap;
                let start = (enter + delay).saturating_sub(skew);
                let t = DeviceTimes {
                    queued: if kind == 0 { start.saturating_sub(delay) } else { 0 },
                    submit: 0,
                    start,
                    end: if kind == 1 { start.saturating_sub(1) } else { start + duration },
                    anchor: kind == 0,
                };
                let unlocked = Timing::convert_unchanged(general.published_shift(), &t, enter);
                let state = |t: &Timing| (t.shift, t.shift_set_at, t.last_anchor, t.anchors);
                let before = state(&general);
                let a = fast.convert(&t, enter);
                let b = general.convert_any(&t, enter);
                proptest::prop_assert_eq!(a, b);
                if let Some(u) = unlocked {
                    // Without the lock: the same times, and rightly nothing to change.
                    proptest::prop_assert_eq!(u, b);
                    proptest::prop_assert_eq!(before, state(&general));
                }
                proptest::prop_assert_eq!(state(&fast), state(&general));
            }
        }
    }
}
