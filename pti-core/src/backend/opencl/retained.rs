//! The program's events that libpti holds a reference to (until their commands are recorded),
//! so that the program's `clGetEventInfo(CL_EVENT_REFERENCE_COUNT)` answers without libpti's.
//!
//! The lock is held across libpti's retain or release and across the program's count query, so
//! the runtime's count and this table always agree when the answer is adjusted. That means the
//! runtime is called under the lock; it must not call back into the layer from those calls
//! (retain, release and an info query do not run program code).

use core::sync::atomic::{AtomicUsize, Ordering};
use rustc_hash::FxHashMap as HashMap;
use std::collections::hash_map::Entry;

use pti_sys::opencl::{CL_SUCCESS, cl_event, cl_int, cl_uint};

use crate::sync::writer_lock::{ForkLock, WriterLock};

static HELD: WriterLock<Option<HashMap<usize, cl_uint>>> = WriterLock::new(None);

/// References held in [`HELD`], all events together: while 0, queries pass untouched.
static TOTAL: AtomicUsize = AtomicUsize::new(0);

/// The lock of the table, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &HELD
}

/// Runs `retain` (libpti's retain of `event`) and, if it succeeded, notes the reference.
pub(super) fn hold(event: cl_event, retain: impl FnOnce() -> bool) -> bool {
    let mut held = HELD.lock();
    if !retain() {
        return false;
    }
    *held
        .get_or_insert_with(HashMap::default)
        .entry(event as usize)
        .or_insert(0) += 1;
    TOTAL.fetch_add(1, Ordering::Relaxed);
    true
}

/// Runs `release` (libpti's release of `event`) and forgets the reference.
pub(super) fn let_go(event: cl_event, release: impl FnOnce()) {
    let mut held = HELD.lock();
    release();
    let Some(map) = held.as_mut() else { return };
    // One lookup for the count and its removal.
    if let Entry::Occupied(mut n) = map.entry(event as usize) {
        *n.get_mut() -= 1;
        if *n.get() == 0 {
            n.remove();
        }
        TOTAL.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs the program's reference-count query `query` (which writes the count through `value`
/// when it is not NULL) and takes libpti's references out of the answer.
///
/// # Safety
/// `value` is NULL or points at the `cl_uint` the query writes.
pub(super) unsafe fn count_query(
    event: cl_event,
    value: *mut cl_uint,
    query: impl FnOnce() -> cl_int,
) -> cl_int {
    if TOTAL.load(Ordering::Relaxed) == 0 {
        return query();
    }
    let held = HELD.lock();
    let status = query();
    let ours = held
        .as_ref()
        .and_then(|m| m.get(&(event as usize)))
        .copied()
        .unwrap_or(0);
    if status == CL_SUCCESS && !value.is_null() && ours > 0 {
        // SAFETY: the caller's contract; the runtime has just written the count there.
        unsafe { value.write_unaligned(value.read_unaligned().saturating_sub(ours)) };
    }
    status
}
