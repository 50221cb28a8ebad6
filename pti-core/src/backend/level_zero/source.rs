//! Where libpti reads a command's device timestamps ([`Source`]), and how it reads them.
//!
//! libpti never changes what the program sees of its events (docs/ARCHITECTURE.md, "Level Zero
//! timing"): a command the program gave an event signals that event, with its own timestamps.
//! So a command is timed by one of:
//! - **its own event of libpti's** ([`Source::Own`]), put in its signal slot where the program
//!   passed none (the command would have signalled nothing);
//! - **the event it signals** ([`Source::Borrowed`]), the program's (or another tool's), which
//!   has kernel timestamps: read on the host once its status says done. libpti guards it
//!   (`guards`): before anything the program does could change it (a reset, a reuse, an
//!   append that re-arms it), libpti records the command or copies its timestamps first;
//! - **a copy of its timestamps in libpti's memory** ([`Source::Copied`]), made on the device by
//!   a command of libpti's (`zeCommandListAppendQueryKernelTimestamps`, a built-in kernel of the
//!   driver) that signals an event of libpti's when done: where the event would otherwise change
//!   before libpti could read it.
//!
//! Reading follows what the driver guarantees (compute-runtime, `EventImp::queryKernelTimestamp`):
//! timestamps are asked only once the status says done (a query on a counter-based event that is
//! not done polls for seconds), and a query that answers `ZE_RESULT_NOT_READY` after the status
//! said done (a counter-based event's timestamps are written after its counter) is asked again at
//! the next harvest: the command stays pending.

use core::sync::atomic::{AtomicBool, Ordering};

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::callback::critical;
use crate::clock;
use crate::result::ResultCode;

/// How a command's device timestamps are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// libpti's own event, in the command's signal slot.
    Own(ze_event_handle_t),
    /// The event the command signals, which is not libpti's.
    Borrowed(ze_event_handle_t),
    /// A copy of the timestamps at `slot` (libpti's host memory, one
    /// `ze_kernel_timestamp_result_t`), written when libpti's event `done` signals.
    Copied {
        slot: usize,
        done: ze_event_handle_t,
    },
    /// Nothing libpti can read: each execution is counted lost, with this reason.
    Untimed(&'static str),
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread; the slot is libpti's own memory, read only after the device wrote it.
unsafe impl Send for Source {}

impl Source {
    /// The event whose status says the timestamps are there.
    pub(super) fn status_event(&self) -> Option<ze_event_handle_t> {
        match *self {
            Source::Own(e) | Source::Borrowed(e) => Some(e),
            Source::Copied { done, .. } => Some(done),
            Source::Untimed(_) => None,
        }
    }

    /// The program's (or another tool's) event this source reads, if any.
    pub(super) fn borrowed(&self) -> Option<ze_event_handle_t> {
        match *self {
            Source::Borrowed(e) => Some(e),
            _ => None,
        }
    }

    /// Whether `event` is read or waited for by this source.
    pub(super) fn uses(&self, event: ze_event_handle_t) -> bool {
        match *self {
            Source::Own(e) | Source::Borrowed(e) => e == event,
            Source::Copied { done, .. } => done == event,
            Source::Untimed(_) => false,
        }
    }
}

/// A command's completion as its source tells it.
pub(super) enum Timed {
    /// The driver's kernel timestamps (device ticks).
    Kernel(ze_kernel_timestamp_result_t),
    /// By the host clock, for a driver without kernel timestamps: when libpti saw it complete.
    Host { seen: u64 },
}

/// The driver does not implement `zeEventQueryStatus`: events are polled with
/// `zeEventHostSynchronize(event, 0)`.
static NO_QUERY_STATUS: AtomicBool = AtomicBool::new(false);

/// The driver gave no kernel timestamps for some event: said once; each such command is timed by
/// the host.
static NO_KERNEL_TIMESTAMPS: AtomicBool = AtomicBool::new(false);

/// Whether a status says the driver lacks the entry point (the loader says the same for an entry
/// point its driver table leaves empty).
pub(super) fn unimplemented(status: ze_result_t) -> bool {
    matches!(
        status,
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE | ZE_RESULT_ERROR_UNSUPPORTED_VERSION
    )
}

/// Says once that the driver lacks `what`, and what libpti does instead.
fn fall_back(flag: &AtomicBool, what: &str, instead: &str) {
    if !flag.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorDriver,
            format_args!("the Level Zero driver does not implement {what}: libpti {instead}"),
        );
    }
}

/// Whether `event` has signalled: `zeEventQueryStatus`, or `zeEventHostSynchronize(event, 0)`
/// where the driver lacks it.
pub(super) fn signalled(event: ze_event_handle_t) -> Result<bool, ze_result_t> {
    let l = loader().ok_or(ZE_RESULT_ERROR_UNINITIALIZED)?;
    if !NO_QUERY_STATUS.load(Ordering::Relaxed) {
        let status = l
            .zeEventQueryStatus
            .map_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, |query| {
                // SAFETY: an event that times a pending command, alive while it is pending.
                internal(|| unsafe { query(event) })
            });
        match status {
            ZE_RESULT_NOT_READY => return Ok(false),
            ZE_RESULT_SUCCESS => return Ok(true),
            s if unimplemented(s) => fall_back(
                &NO_QUERY_STATUS,
                "zeEventQueryStatus",
                "polls events with zeEventHostSynchronize(event, 0) instead",
            ),
            error => return Err(error),
        }
    }
    let sync = l
        .zeEventHostSynchronize
        .ok_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
    // SAFETY: as above; a timeout of 0 only looks.
    match internal(|| unsafe { sync(event, 0) }) {
        ZE_RESULT_NOT_READY => Ok(false),
        ZE_RESULT_SUCCESS => Ok(true),
        error => Err(error),
    }
}

/// The kernel timestamps of `event`, whose status said done: `None` while the driver answers
/// `NOT_READY` (asked again later).
pub(super) fn event_timestamps(event: ze_event_handle_t) -> Option<Result<Timed, ze_result_t>> {
    let query = loader()?.zeEventQueryKernelTimestamp;
    // SAFETY: all-zero bytes are a valid timestamp result (integers).
    let mut ts: ze_kernel_timestamp_result_t = unsafe { core::mem::zeroed() };
    let status = query.map_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, |query| {
        // SAFETY: an event alive while its command is pending, and a writable result.
        internal(|| unsafe { query(event, &mut ts) })
    });
    match status {
        ZE_RESULT_SUCCESS => Some(Ok(Timed::Kernel(ts))),
        ZE_RESULT_NOT_READY => None,
        s if unimplemented(s) => {
            fall_back(
                &NO_KERNEL_TIMESTAMPS,
                "zeEventQueryKernelTimestamp (for some event)",
                "times such device commands by the host clock instead (from the call that \
                 submitted each to when libpti saw it complete)",
            );
            Some(Ok(Timed::Host { seen: clock::now() }))
        }
        error => Some(Err(error)),
    }
}

/// The timestamps a device copy wrote at `slot` (its `done` event has signalled). A copy of an
/// event that held none (reset before the copy ran) reads as zeros: an error.
pub(super) fn slot_timestamps(slot: usize) -> Result<Timed, ze_result_t> {
    // SAFETY: the slot is libpti's host memory of one timestamp result, which the device wrote
    // before signalling the copy's event (read after that, with a volatile read: the device, not
    // this thread, wrote it).
    let ts = unsafe { core::ptr::read_volatile(slot as *const ze_kernel_timestamp_result_t) };
    if ts.global.kernelStart == 0 && ts.global.kernelEnd == 0 {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    Ok(Timed::Kernel(ts))
}

/// Where `source` stands, without waiting: `None` while its command runs (or its timestamps are
/// not written yet).
pub(super) fn poll(source: &Source) -> Option<Result<Timed, ze_result_t>> {
    let event = source.status_event()?;
    match signalled(event) {
        Ok(false) => None,
        Ok(true) => read(source),
        Err(error) => Some(Err(error)),
    }
}

/// The timestamps of a source whose command is known to have completed (its status, or that of
/// a later command of its in-order stream, said so).
pub(super) fn read(source: &Source) -> Option<Result<Timed, ze_result_t>> {
    match *source {
        Source::Own(e) | Source::Borrowed(e) => event_timestamps(e),
        Source::Copied { slot, done } => match signalled(done) {
            // A copy is its own command: it may lag the command it copies.
            Ok(false) => None,
            Ok(true) => Some(slot_timestamps(slot)),
            Err(error) => Some(Err(error)),
        },
        Source::Untimed(_) => Some(Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)),
    }
}
