//! Delivering events to subscribers: the readers' half of the subscriber protocol.
//!
//! To call the subscriber in slot k, a thread
//! 1. reads the slot's serial (0: nobody there);
//! 2. announces k in its [`ThreadRecord`](crate::thread::ThreadRecord) and issues
//!    [`barrier::light`];
//! 3. reads the serial again: if it changed, the subscriber was removed (or replaced) meanwhile,
//!    and the thread backs off without calling;
//! 4. calls the handler, then retracts the announcement.
//!
//! Against the writer's "clear serial; `barrier::heavy`; wait for announcements", either the
//! reader sees the cleared serial in step 3, or the writer sees the announcement and waits for
//! step 4 to finish. So no callback passes step 3 after unsubscribe returned, and no handler is
//! freed while it runs. After a thread's first traced call (which allocates its record), nothing
//! here takes a lock or allocates, except when a critical event is delivered.
//!
//! Critical events raised on a thread while it runs a callback are queued and delivered when the
//! outermost callback has returned, so a callback is never re-entered on its own thread.

use core::mem::MaybeUninit;
use core::panic::AssertUnwindSafe;
use core::sync::atomic::Ordering;
use std::ffi::CString;

use super::critical;
use super::registry::{ACTIVE, FLAG_LISTENERS, SLOTS};
use super::{ApiCallbackData, CriticalEventData, Event, MAX_SUBSCRIBERS};
use crate::api::{ApiGroup, ApiId, Domain};
use crate::fault;
use crate::result::ResultCode;
use crate::sync::barrier;
use crate::thread::ThreadState;

/// Calls the subscriber in slot `k` with `event` if it is still the one with `serial`.
/// Returns whether it was called.
#[inline(always)]
fn invoke(k: usize, serial: u64, state: &ThreadState, event: Event<'_>) -> bool {
    let slot = &SLOTS[k];
    let record = state.record();
    let owned = record.announce(k);
    barrier::light();
    if slot.serial.load(Ordering::Acquire) != serial {
        if owned {
            record.retract(k);
        }
        return false;
    }
    // SAFETY: we announced k, issued the light barrier, and then saw the same serial again.
    let handler = unsafe { slot.handler() };
    let was_in_callback = state.in_callback.replace(true);
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        fault::point("callback");
        handler(event)
    }));
    if outcome.is_err() {
        // Queued while `in_callback` is still set; delivered just below or by an outer callback.
        critical::raise(
            ResultCode::ErrorCallbackPanicked,
            format_args!("the callback of subscriber slot {k} panicked; the panic was caught"),
        );
    }
    state.in_callback.set(was_in_callback);
    if owned {
        record.retract(k);
    }
    if !was_in_callback && state.has_deferred_critical() {
        critical::deliver_deferred(state);
    }
    true
}

/// Takes the lowest set bit out of `mask` and returns its position.
#[inline(always)]
fn pop_lowest(mask: &mut u32) -> usize {
    let k = mask.trailing_zeros() as usize;
    *mask &= *mask - 1;
    k
}

/// What one traced call remembers between ENTER and EXIT for the callbacks.
pub(crate) struct CallbackFrame {
    /// Slots that received the ENTER.
    delivered: u32,
    /// For each delivered slot, the serial of the subscriber that received the ENTER: only that
    /// subscriber gets the EXIT, not one that took the slot over in between.
    serials: [MaybeUninit<u64>; MAX_SUBSCRIBERS],
    /// Each subscriber's `local_data`, written at ENTER before its first use.
    local: [MaybeUninit<u64>; MAX_SUBSCRIBERS],
}

impl CallbackFrame {
    pub(crate) const fn new() -> Self {
        CallbackFrame {
            delivered: 0,
            serials: [MaybeUninit::uninit(); MAX_SUBSCRIBERS],
            local: [MaybeUninit::uninit(); MAX_SUBSCRIBERS],
        }
    }

    /// ENTER: delivers to every live subscriber that enabled interest cell `cell`.
    #[inline(always)]
    pub(crate) fn enter(
        &mut self,
        cell: usize,
        group: ApiGroup,
        api_id: ApiId,
        data: &ApiCallbackData,
        state: &ThreadState,
    ) {
        let mut active = ACTIVE.load(Ordering::Acquire);
        while active != 0 {
            let k = pop_lowest(&mut active);
            let slot = &SLOTS[k];
            let serial = slot.serial.load(Ordering::Acquire);
            if serial == 0 || !slot.is_enabled(cell) {
                continue;
            }
            let mut data = data.duplicate();
            data.local_data = self.local[k].write(0);
            let event = Event::ApiCall {
                domain: group.domain(),
                group,
                api_id,
                data: &mut data,
            };
            if invoke(k, serial, state, event) {
                self.delivered |= 1 << k;
                self.serials[k].write(serial);
            }
        }
    }

    /// EXIT: delivers to the subscribers that received the ENTER and are still subscribed.
    #[inline(always)]
    pub(crate) fn exit(
        &mut self,
        group: ApiGroup,
        api_id: ApiId,
        data: &ApiCallbackData,
        state: &ThreadState,
    ) {
        let mut pending = self.delivered;
        while pending != 0 {
            let k = pop_lowest(&mut pending);
            // SAFETY: bit k of `delivered` is set only after `serials[k]` was written at ENTER.
            let serial = unsafe { self.serials[k].assume_init() };
            if SLOTS[k].serial.load(Ordering::Acquire) != serial {
                continue;
            }
            let mut data = data.duplicate();
            data.local_data = self.local[k].as_mut_ptr();
            let event = Event::ApiCall {
                domain: group.domain(),
                group,
                api_id,
                data: &mut data,
            };
            invoke(k, serial, state, event);
        }
    }
}

/// The flag domains some live subscriber enabled (bits of [`Domain::flag`]).
#[inline(always)]
pub(crate) fn flag_listeners() -> u32 {
    FLAG_LISTENERS.load(Ordering::Relaxed)
}

/// Whether any subscriber listens for critical events.
pub(crate) fn critical_listeners() -> bool {
    Domain::CriticalEvent
        .flag()
        .is_some_and(|bit| flag_listeners() & bit != 0)
}

/// Calls `call(k, serial)` for every live subscriber that enabled the flag domain `domain`.
fn each_flagged(domain: Domain, mut call: impl FnMut(usize, u64)) {
    let Some(bit) = domain.flag() else {
        return;
    };
    let mut active = ACTIVE.load(Ordering::Acquire);
    while active != 0 {
        let k = pop_lowest(&mut active);
        let slot = &SLOTS[k];
        let serial = slot.serial.load(Ordering::Acquire);
        if serial != 0 && slot.flags.load(Ordering::Relaxed) & bit != 0 {
            call(k, serial);
        }
    }
}

/// Delivers the event `make` builds to every subscriber that enabled the flag domain `domain`.
pub(crate) fn flagged<'e>(domain: Domain, state: &ThreadState, make: impl Fn() -> Event<'e>) {
    each_flagged(domain, |k, serial| {
        invoke(k, serial, state, make());
    });
}

/// Delivers a critical event to the subscribers that enabled critical events.
pub(crate) fn critical_event(code: ResultCode, message: &str, state: &ThreadState) {
    // NULs replaced, so there is none left: never the default.
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    each_flagged(Domain::CriticalEvent, |k, serial| {
        let mut data = CriticalEventData {
            code,
            message: text.as_ptr(),
        };
        invoke(k, serial, state, Event::Critical(&mut data));
    });
}
