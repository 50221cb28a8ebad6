//! Critical events: what libpti raises when it loses or corrupts data or stops collecting.
//!
//! Any part of libpti calls [`raise`] with a result code and a message. The event is counted
//! always (see [`count`]), whether or not anybody listens, and delivered to the subscribers that
//! enabled `PTI_DOMAIN_PTI_CRITICAL_EVENT`, on the raising thread. An event raised while one is
//! being delivered on the same thread (for example by a critical-event callback that panics) is
//! counted but not delivered, so delivery cannot recurse.
//!
//! Never call [`raise`] while holding a lock that a callback could need: callbacks run inside it.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::callback::deliver;
use crate::result::ResultCode;
use crate::thread;

static COUNTS: [AtomicU64; ResultCode::ALL.len()] =
    [const { AtomicU64::new(0) }; ResultCode::ALL.len()];

/// Raises a critical event: counts it and delivers it to the subscribers that listen.
pub fn raise(code: ResultCode, message: fmt::Arguments<'_>) {
    COUNTS[code.index()].fetch_add(1, Ordering::Relaxed);
    thread::with(|state| {
        if state.in_critical.replace(true) {
            return;
        }
        deliver::critical_event(code, message, state);
        state.in_critical.set(false);
    });
}

/// How many critical events with `code` were raised since the process started.
pub fn count(code: ResultCode) -> u64 {
    COUNTS[code.index()].load(Ordering::Relaxed)
}
