//! libpti's own timestamp events: where the program passed no signal event, or one from a pool
//! without kernel timestamps, a command is timed with an event of libpti's. Per context, libpti
//! keeps pools of [`POOL_SIZE`] host-visible events with kernel timestamps and reuses events once
//! their command is recorded (reset first). A context's pools are destroyed just before the
//! program destroys the context, so none outlives it.

use std::collections::HashMap;

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Events per pool.
const POOL_SIZE: u32 = 64;

#[derive(Default)]
struct ContextEvents {
    pools: Vec<usize>,
    free: Vec<usize>,
    /// Every event of these pools, free or not (destroyed with the context).
    all: Vec<usize>,
}

static EVENTS: WriterLock<Option<HashMap<usize, ContextEvents>>> = WriterLock::new(None);

/// The lock of the pools, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &EVENTS
}

/// A free event of libpti's in `context`, creating a pool when none is left; `None` if the
/// driver would not create one.
pub(super) fn take(context: ze_context_handle_t) -> Option<ze_event_handle_t> {
    if let Some(event) = EVENTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .get_mut(&(context as usize))
        .and_then(|c| c.free.pop())
    {
        return Some(event as ze_event_handle_t);
    }
    // The driver is called without the lock held.
    let (pool, events) = create_pool(context)?;
    let mut all = EVENTS.lock();
    let entry = all
        .get_or_insert_with(HashMap::new)
        .entry(context as usize)
        .or_default();
    entry.pools.push(pool as usize);
    entry.all.extend(events.iter().map(|e| *e as usize));
    let (first, rest) = events.split_first()?;
    entry.free.extend(rest.iter().map(|e| *e as usize));
    Some(*first)
}

fn create_pool(
    context: ze_context_handle_t,
) -> Option<(ze_event_pool_handle_t, Vec<ze_event_handle_t>)> {
    let l = loader()?;
    let (create_pool, create_event) = (l.zeEventPoolCreate?, l.zeEventCreate?);
    let desc = ze_event_pool_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        pNext: core::ptr::null(),
        flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
        count: POOL_SIZE,
    };
    let mut pool: ze_event_pool_handle_t = core::ptr::null_mut();
    // SAFETY: a context the program uses, a valid descriptor, and no device list (all of them).
    let status =
        internal(|| unsafe { create_pool(context, &desc, 0, core::ptr::null_mut(), &mut pool) });
    if status != ZE_RESULT_SUCCESS || pool.is_null() {
        return None;
    }
    let mut events = Vec::with_capacity(POOL_SIZE as usize);
    for index in 0..POOL_SIZE {
        let desc = ze_event_desc_t {
            stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
            pNext: core::ptr::null(),
            index,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
        };
        let mut event: ze_event_handle_t = core::ptr::null_mut();
        // SAFETY: the pool just created, an index within it, and a valid descriptor.
        let status = internal(|| unsafe { create_event(pool, &desc, &mut event) });
        if status == ZE_RESULT_SUCCESS && !event.is_null() {
            events.push(event);
        }
    }
    (!events.is_empty()).then_some((pool, events))
}

/// Gives back an event of libpti's once its command is recorded: reset, and free for reuse.
pub(super) fn give(context: ze_context_handle_t, event: ze_event_handle_t) {
    reset(event);
    if let Some(c) = EVENTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .get_mut(&(context as usize))
    {
        c.free.push(event as usize);
    }
}

/// Resets an event of libpti's so that it can signal again.
pub(super) fn reset(event: ze_event_handle_t) {
    if let Some(reset) = loader().and_then(|l| l.zeEventHostReset) {
        // SAFETY: an event of libpti's own pools.
        internal(|| unsafe { reset(event) });
    }
}

/// Destroys libpti's events and pools of `context` (the program is destroying it).
pub(super) fn destroy_context(context: ze_context_handle_t) {
    let Some(c) = EVENTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .remove(&(context as usize))
    else {
        return;
    };
    let Some(l) = loader() else { return };
    for event in c.all {
        if let Some(destroy) = l.zeEventDestroy {
            // SAFETY: an event of libpti's pools, not used again.
            internal(|| unsafe { destroy(event as ze_event_handle_t) });
        }
    }
    for pool in c.pools {
        if let Some(destroy) = l.zeEventPoolDestroy {
            // SAFETY: a pool of libpti's, whose events are destroyed.
            internal(|| unsafe { destroy(pool as ze_event_pool_handle_t) });
        }
    }
}
