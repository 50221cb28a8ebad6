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
//! step 4 to finish. So no callback starts after unsubscribe returns, and no handler is freed
//! while it runs. Nothing here takes a lock or allocates.

use core::fmt;
use core::mem::MaybeUninit;
use core::panic::AssertUnwindSafe;
use core::sync::atomic::Ordering;
use std::ffi::CString;

use super::registry::{ACTIVE, CRITICAL_LISTENERS, SLOTS};
use super::{ApiCallbackData, CriticalEventData, Event, MAX_SUBSCRIBERS};
use crate::api::{ApiGroup, ApiId};
use crate::result::ResultCode;
use crate::sync::barrier;
use crate::thread::ThreadState;
use crate::{critical, fault};

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
    state.in_callback.set(was_in_callback);
    if owned {
        record.retract(k);
    }
    if outcome.is_err() {
        critical::raise(
            ResultCode::ErrorCallbackPanicked,
            format_args!("the callback of subscriber slot {k} panicked; the panic was caught"),
        );
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
    /// The largest serial among them: a slot reused after ENTER holds a larger one.
    max_serial: u64,
    /// Each subscriber's `local_data`, written at ENTER before its first use.
    local: [MaybeUninit<u64>; MAX_SUBSCRIBERS],
}

impl CallbackFrame {
    pub(crate) const fn new() -> Self {
        CallbackFrame {
            delivered: 0,
            max_serial: 0,
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
                self.max_serial = self.max_serial.max(serial);
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
            let serial = SLOTS[k].serial.load(Ordering::Acquire);
            if serial == 0 || serial > self.max_serial {
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

/// Delivers a critical event to the subscribers that enabled critical events.
pub(crate) fn critical_event(code: ResultCode, message: fmt::Arguments<'_>, state: &ThreadState) {
    if !CRITICAL_LISTENERS.load(Ordering::Relaxed) {
        return;
    }
    let text = CString::new(message.to_string().replace('\0', " ")).expect("NULs were replaced");
    let mut active = ACTIVE.load(Ordering::Acquire);
    while active != 0 {
        let k = pop_lowest(&mut active);
        let slot = &SLOTS[k];
        let serial = slot.serial.load(Ordering::Acquire);
        if serial == 0 || !slot.critical.load(Ordering::Relaxed) {
            continue;
        }
        let mut data = CriticalEventData {
            code,
            message: text.as_ptr(),
        };
        invoke(k, serial, state, Event::Critical(&mut data));
    }
}
