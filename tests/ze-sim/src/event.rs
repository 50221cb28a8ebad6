//! Event pools and events, with the three behaviours of Intel's driver (compute-runtime's
//! `Event`, `CounterBasedMode`):
//!
//! - **Regular events** are signalled when the command that signals them completes, and stay
//!   signalled, with that command's kernel timestamps, until reset by the host
//!   (`zeEventHostReset`) or in a list (`zeCommandListAppendEventReset`). Signalled again without
//!   a reset, they keep reporting the earlier completion until the new command overwrites their
//!   timestamps.
//! - **Counter-based events** (`ze_event_pool_counter_based_exp_desc_t` first in a pool's
//!   `pNext`, `zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`) follow the latest append
//!   that signals them: each such append re-arms them (`NOT_READY` until that command completes,
//!   whether or not the earlier one did), with fresh timestamp storage on an immediate list; on a
//!   regular list each execution re-arms them and the storage is *not* cleared, so the earlier
//!   execution's timestamps remain readable meanwhile (`prepareInOrderCommandList`). Their
//!   timestamps are written [`crate::config::Config::ts_lag_ns`] after their completion, and
//!   `zeEventQueryKernelTimestamp` skips the status check for them: it polls up to
//!   `ZE_SIM_TS_TIMEOUT_MS` for the timestamps and answers `NOT_READY` without them
//!   (`EventImp::queryKernelTimestamp`, `isTimestampPopulated`). A new one reports completion
//!   (`reportEmptyCbEventAsReady`). They are for in-order lists only; the host may neither reset
//!   (`ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`) nor signal them, nor a list reset them
//!   (`ZE_RESULT_ERROR_INVALID_ARGUMENT`).
//! - **Implicit counter-based mode**: a regular event signalled by an append to an in-order
//!   immediate list becomes counter-based (timestamp events too), unless it is of an IPC pool
//!   (`handleCounterBasedEventOperations`); signalled on another list or reset in a list, it
//!   leaves that mode for good; a host reset returns it to its first state. `ZE_SIM_IMPLICIT_CB=0`
//!   turns the mode off, as on platforms with DC flush.
//!
//! `KERNEL_MAPPED_TIMESTAMP` pools keep device ticks for `zeEventQueryKernelTimestamp` (as the
//! driver does) and give host nanoseconds through `zeEventQueryKernelTimestampsExt`.

use std::sync::{Arc, Mutex, MutexGuard};

use pti_sys::level_zero::*;

use crate::clock;
use crate::config::config;
use crate::engine::world_changed;
use crate::objects::{Kind, into_handle};
use crate::report;

/// Intel's counter-based flags (`ze_event_pool_counter_based_exp_flags_t`, and the same bits
/// of `zeEventCounterBasedCreate` and `zexCounterBasedEventCreate2`).
pub(crate) const CB_IMMEDIATE: u32 = 1;
pub(crate) const CB_NON_IMMEDIATE: u32 = 2;

/// The kind of timestamps an event keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timestamps {
    None,
    /// Kernel timestamps in device ticks.
    Kernel,
    /// Kernel timestamps, also mapped to the host clock (`KERNEL_MAPPED_TIMESTAMP`,
    /// `ZE_EVENT_COUNTER_BASED_FLAG_HOST_TIMESTAMP`).
    Mapped,
}

/// compute-runtime's `CounterBasedMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Explicit,
    InitiallyDisabled,
    ImplicitlyEnabled,
    ImplicitlyDisabled,
}

pub(crate) struct Pool {
    /// The flags as the program created the pool (what `zeEventPoolGetFlags` answers).
    pub(crate) flags: ze_event_pool_flags_t,
    /// The counter-based flags of the descriptor first in its `pNext` (None: a regular pool).
    pub(crate) counter_based: Option<u32>,
}

/// A counter's arming: its timestamps (device ticks), once written, and the host time from which
/// they are readable.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    arming: u64,
    ts: Option<(u64, u64)>,
    at: u64,
}

/// Armings whose timestamps are kept (a wait or a copy captured at an append refers to its own
/// arming's storage, compute-runtime's per-append timestamp nodes).
const STAMPS: usize = 64;

/// An event's state.
#[derive(Debug)]
struct State {
    mode: Mode,
    /// A regular event's completion, and its timestamps.
    signaled: bool,
    ts: Option<(u64, u64)>,
    /// Counter mode: the latest arming, and the latest completed one (completions come in
    /// order: counter-based events are for in-order lists).
    armed: u64,
    done: u64,
    /// Counter mode: the recent armings' timestamp storage, oldest first.
    stamps: std::collections::VecDeque<Stamp>,
}

impl State {
    fn stamp(&self, arming: u64) -> Option<&Stamp> {
        self.stamps.iter().rev().find(|s| s.arming == arming)
    }

    /// Leaves the implicit counter-based mode for good (compute-runtime's
    /// `disableImplicitCounterBasedMode`): the event is a regular one again, signalled if its
    /// latest arming completed, with that arming's timestamps. Armings already captured by waits
    /// and copies keep their storage.
    fn leave_counter_mode(&mut self) {
        if self.mode == Mode::ImplicitlyEnabled {
            self.signaled = self.done >= self.armed;
            self.ts = self.stamp(self.armed).and_then(|x| x.ts);
        }
        if self.mode != Mode::Explicit {
            self.mode = Mode::ImplicitlyDisabled;
        }
    }

    /// Counter mode: the latest arming's timestamps, if written and readable now.
    fn current(&self) -> Option<(u64, u64)> {
        let s = self.stamp(self.armed)?;
        s.ts.filter(|_| clock::host_ns() >= s.at)
    }
}

pub(crate) struct Event {
    pub(crate) timestamps: Timestamps,
    /// Explicitly counter-based: with the list kinds it may signal on.
    pub(crate) cb_flags: Option<u32>,
    pub(crate) ipc: bool,
    state: Mutex<State>,
    /// Commands submitted and not yet run that signal it or wait for it.
    in_flight: std::sync::atomic::AtomicUsize,
}

/// How an append left a command's signal event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arming {
    /// A regular event: signalled at completion.
    Regular,
    /// Counter mode: completes with this arming only.
    Counter(u64),
}

impl Event {
    pub(crate) fn new(timestamps: Timestamps, cb_flags: Option<u32>, ipc: bool) -> Self {
        Event {
            timestamps,
            cb_flags,
            ipc,
            state: Mutex::new(State {
                mode: if cb_flags.is_some() {
                    Mode::Explicit
                } else {
                    Mode::InitiallyDisabled
                },
                signaled: false,
                ts: None,
                armed: 0,
                done: 0,
                stamps: std::collections::VecDeque::new(),
            }),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// A submitted command uses it (until [`Event::unused`]).
    pub(crate) fn used(&self) {
        self.in_flight
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A command that used it has run.
    pub(crate) fn unused(&self) {
        self.in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a command submitted and not yet run uses it.
    pub(crate) fn in_use(&self) -> bool {
        self.in_flight.load(std::sync::atomic::Ordering::Relaxed) > 0
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its state, for a report of a command that waits for ever.
    pub(crate) fn describe(&self) -> String {
        let s = self.state();
        format!(
            "{:?}, signalled {}, armed {}, done {}",
            s.mode, s.signaled, s.armed, s.done
        )
    }

    pub(crate) fn mode(&self) -> Mode {
        self.state().mode
    }

    fn counter(mode: Mode) -> bool {
        matches!(mode, Mode::Explicit | Mode::ImplicitlyEnabled)
    }

    /// Whether the event is counter-based now (explicitly or implicitly).
    pub(crate) fn is_counter_based(&self) -> bool {
        Self::counter(self.mode())
    }

    /// Decides the mode of an event an append is about to signal (compute-runtime's
    /// `handleCounterBasedEventOperations`): `Err` for an explicitly counter-based event the
    /// list may not signal.
    pub(crate) fn before_signal_append(
        &self,
        in_order: bool,
        immediate: bool,
        capturing: bool,
    ) -> Result<(), ze_result_t> {
        let mut s = self.state();
        if let Some(flags) = self.cb_flags {
            // No cmdlist-type flag means IMMEDIATE.
            let flags = if flags & (CB_IMMEDIATE | CB_NON_IMMEDIATE) == 0 {
                CB_IMMEDIATE
            } else {
                flags
            };
            let fits = if immediate && !capturing {
                flags & CB_IMMEDIATE != 0
            } else {
                flags & CB_NON_IMMEDIATE != 0 || capturing
            };
            return if in_order && fits {
                Ok(())
            } else {
                Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
            };
        }
        if config().implicit_cb && !self.ipc {
            if in_order && immediate && !capturing {
                if s.mode == Mode::InitiallyDisabled {
                    s.mode = Mode::ImplicitlyEnabled;
                    // Its state carries over into the counter: a signalled event stays complete
                    // until the append re-arms it.
                    s.done = s.armed;
                }
            } else {
                s.leave_counter_mode();
            }
        }
        Ok(())
    }

    /// A list about to reset the event (`appendEventReset`): leaves the implicit mode for good;
    /// `Err` for an explicitly counter-based event.
    pub(crate) fn before_reset_append(&self) -> Result<(), ze_result_t> {
        let mut s = self.state();
        match s.mode {
            Mode::Explicit => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            _ => {
                s.leave_counter_mode();
                Ok(())
            }
        }
    }

    /// A regular list's wait on an event not yet counter-based leaves it regular for good.
    pub(crate) fn before_wait_on_regular_list(&self) {
        let mut s = self.state();
        if s.mode == Mode::InitiallyDisabled && config().implicit_cb {
            s.mode = Mode::ImplicitlyDisabled;
        }
    }

    /// Arms the event for a command about to be submitted that signals it. `fresh`: new
    /// timestamp storage (an immediate append); a regular list's execution keeps the former
    /// timestamps readable until the command overwrites them.
    pub(crate) fn arm(&self, fresh: bool) -> Arming {
        let mut s = self.state();
        if !Self::counter(s.mode) {
            return Arming::Regular;
        }
        let (ts, at) = match (fresh, s.stamp(s.armed)) {
            (false, Some(previous)) => (previous.ts, previous.at),
            _ => (None, 0),
        };
        s.armed += 1;
        let arming = s.armed;
        s.stamps.push_back(Stamp { arming, ts, at });
        if s.stamps.len() > STAMPS {
            s.stamps.pop_front();
        }
        Arming::Counter(arming)
    }

    /// What a wait on the event waits for, from now: a regular event's signal, or a counter's
    /// current arming.
    pub(crate) fn wait_target(&self) -> Arming {
        let s = self.state();
        if Self::counter(s.mode) {
            Arming::Counter(s.armed)
        } else {
            Arming::Regular
        }
    }

    /// Whether a wait for `target` is over (a counter's wait compares the counter with the value
    /// it captured: later armings do not hold it back).
    pub(crate) fn reached(&self, target: Arming) -> bool {
        let s = self.state();
        match target {
            Arming::Regular => s.signaled,
            Arming::Counter(g) => s.done >= g,
        }
    }

    /// The command armed `arming` completed over device ticks `start..end`.
    pub(crate) fn complete(&self, arming: Arming, start: u64, end: u64) {
        {
            let mut s = self.state();
            match arming {
                Arming::Regular => {
                    s.signaled = true;
                    s.ts = Some((start, end));
                }
                Arming::Counter(g) => {
                    s.done = s.done.max(g);
                    let at = clock::host_ns() + config().ts_lag_ns;
                    if let Some(stamp) = s.stamps.iter_mut().rev().find(|x| x.arming == g) {
                        stamp.ts = Some((start, end));
                        stamp.at = at;
                    }
                    // Armed in counter mode, completed after the event left it: it signals as
                    // a regular event does, if it was the latest use.
                    if !Self::counter(s.mode) && g == s.armed {
                        s.signaled = true;
                        s.ts = Some((start, end));
                    }
                }
            }
        }
        world_changed();
    }

    /// A reset by a list, when it executes.
    pub(crate) fn device_reset(&self) {
        {
            let mut s = self.state();
            s.signaled = false;
            s.ts = None;
        }
        world_changed();
    }

    /// `zeEventHostReset`.
    pub(crate) fn host_reset(&self) -> ze_result_t {
        {
            let mut s = self.state();
            match s.mode {
                Mode::Explicit => return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                Mode::ImplicitlyEnabled => s.mode = Mode::InitiallyDisabled,
                Mode::InitiallyDisabled | Mode::ImplicitlyDisabled => {}
            }
            s.signaled = false;
            s.ts = None;
            s.done = s.armed;
            s.stamps.clear();
        }
        world_changed();
        ZE_RESULT_SUCCESS
    }

    /// `zeEventHostSignal`.
    pub(crate) fn host_signal(&self) -> ze_result_t {
        {
            let mut s = self.state();
            if Self::counter(s.mode) {
                return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
            }
            s.signaled = true;
        }
        world_changed();
        ZE_RESULT_SUCCESS
    }

    /// `zeEventQueryStatus`: completed or not.
    pub(crate) fn completed(&self) -> bool {
        let s = self.state();
        if Self::counter(s.mode) {
            s.done >= s.armed
        } else {
            s.signaled
        }
    }

    /// The timestamps readable now, if any: for a counter, once written; for a regular event,
    /// once signalled (what it holds then).
    fn readable(&self) -> Option<Option<(u64, u64)>> {
        let s = self.state();
        if Self::counter(s.mode) {
            s.current().map(Some)
        } else {
            s.signaled.then_some(s.ts)
        }
    }

    /// `zeEventQueryKernelTimestamp` for an event with timestamps: device ticks, or `None`
    /// (`NOT_READY`). A counter-based event's timestamps are polled for up to
    /// `ZE_SIM_TS_TIMEOUT_MS`, as the driver does, without looking at its status; a query that
    /// had to poll is counted (a profiler should ask only after the status says done).
    pub(crate) fn kernel_timestamps(&self) -> Option<(u64, u64)> {
        if let Some(ts) = self.readable() {
            return Some(ts.unwrap_or((0, 0)));
        }
        if !self.is_counter_based() {
            return None;
        }
        report::count(report::Counter::TimestampPolls);
        let deadline = clock::host_ns().saturating_add(config().ts_timeout_ns);
        loop {
            if let Some(ts) = self.readable() {
                return Some(ts.unwrap_or((0, 0)));
            }
            if clock::host_ns() >= deadline {
                return None;
            }
            std::thread::yield_now();
        }
    }

    /// What a copy of its timestamps (`zeCommandListAppendQueryKernelTimestamps`) reads when it
    /// executes, for the copy appended when the event stood at `arming`: that arming's storage
    /// (zeros when cleared).
    pub(crate) fn raw_timestamps(&self, arming: Arming) -> (u64, u64) {
        let s = self.state();
        let ts = match arming {
            Arming::Counter(g) => s.stamp(g).and_then(|x| x.ts),
            Arming::Regular => s.ts,
        };
        ts.unwrap_or((0, 0))
    }

    /// Whether the timestamps of the counter armed `arming` have been written (what the copy of
    /// timestamps waits for, implicitly, for a counter-based event).
    pub(crate) fn timestamps_written(&self, arming: Arming) -> bool {
        let s = self.state();
        match arming {
            Arming::Regular => true,
            Arming::Counter(g) => {
                s.done >= g
                    && s.stamp(g)
                        .is_none_or(|x| x.ts.is_some() && clock::host_ns() >= x.at)
            }
        }
    }
}

/// Creates an event of `pool` into a handle.
pub(crate) fn create_in_pool(pool: &Pool) -> ze_event_handle_t {
    let asked = if pool.flags & ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP != 0 {
        Timestamps::Mapped
    } else if pool.flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP != 0 {
        Timestamps::Kernel
    } else {
        Timestamps::None
    };
    let event = Event::new(
        with_minimal(asked),
        pool.counter_based,
        pool.flags & ZE_EVENT_POOL_FLAG_IPC != 0,
    );
    into_handle(Kind::Event, Arc::new(event))
}

/// The timestamps an event gets, given what it asked for: none when the driver lacks them
/// (`ZE_SIM_MINIMAL=kernel-timestamps`: the flag is ignored).
pub(crate) fn with_minimal(asked: Timestamps) -> Timestamps {
    if config().minimal.kernel_timestamps {
        Timestamps::None
    } else {
        asked
    }
}
