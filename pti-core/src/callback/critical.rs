//! Critical events: what libpti raises when it loses or corrupts data or stops collecting.
//!
//! Any part of libpti calls [`raise`] with a result code and a message. The event is counted
//! always (see [`count`]), whether or not anybody listens, and delivered to the subscribers that
//! enabled `PTI_DOMAIN_PTI_CRITICAL_EVENT`, on the raising thread:
//! - raised outside any callback, it is delivered at once;
//! - raised while a callback runs on the thread (a callback that flushes, a Rust callback that
//!   panicked), it is queued and delivered when the outermost callback has returned, so no
//!   callback is re-entered on its own thread;
//! - raised while a critical event is being delivered on the thread, it is counted only, so
//!   delivery cannot recurse.
//!
//! Every event also goes to the user's log, when `PTI_LOG` names one (`crate::log`), so users
//! of tools that do not listen still learn of it.
//!
//! Never call [`raise`] while holding the writers' lock: delivery runs callbacks.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use super::deliver;
use crate::result::ResultCode;
use crate::thread::{self, ThreadState};

static COUNTS: [AtomicU64; ResultCode::ALL.len()] =
    [const { AtomicU64::new(0) }; ResultCode::ALL.len()];

/// Raises a critical event: counts it and delivers it to the subscribers that listen.
///
/// Meant for libpti's own components; a tool receives critical events, it does not raise them.
pub fn raise(code: ResultCode, message: fmt::Arguments<'_>) {
    COUNTS[code.index()].fetch_add(1, Ordering::Relaxed);
    crate::log::critical(code, &message);
    if !deliver::critical_listeners() {
        return;
    }
    thread::with(|state| {
        if state.in_critical.get() {
            return;
        }
        if state.in_callback.get() {
            state.defer_critical(code, message.to_string());
        } else {
            deliver_now(code, &message.to_string(), state);
        }
    });
}

fn deliver_now(code: ResultCode, message: &str, state: &ThreadState) {
    state.in_critical.set(true);
    deliver::critical_event(code, message, state);
    state.in_critical.set(false);
}

/// Delivers the events queued while callbacks ran on this thread (called when the outermost
/// callback returned). Events raised during this delivery are counted, not queued.
pub(crate) fn deliver_deferred(state: &ThreadState) {
    for (code, message) in state.take_deferred_critical() {
        deliver_now(code, &message, state);
    }
}

/// How many critical events with `code` were raised since the process started.
pub fn count(code: ResultCode) -> u64 {
    COUNTS[code.index()].load(Ordering::Relaxed)
}
