//! libpti's own timestamp events: where the program passed no signal event, or one from a pool
//! without host-visible kernel timestamps, a command is timed with an event of libpti's. Per
//! context, libpti keeps pools of [`POOL_SIZE`] host-visible events with kernel timestamps and
//! reuses events once their command is recorded (reset first). A context's pools are destroyed
//! just before the program destroys the context, so none outlives it.
//!
//! An event that a barrier waits on (the one that signals the program's own event after the
//! command, see `commands`) is *retired* when its command is recorded, not freed: the barrier may
//! not have seen it yet, and resetting it would hold the barrier forever. It is freed once the
//! program's event has been seen signalled (the barrier is past it), and never reused if the
//! program destroys or resets its event before that.

use rustc_hash::FxHashMap as HashMap;

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Events per pool.
const POOL_SIZE: u32 = 64;

#[derive(Default)]
struct ContextEvents {
    pools: Vec<usize>,
    free: Vec<usize>,
    /// (libpti's event, the program's event a barrier signals after it).
    retired: Vec<(usize, usize)>,
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
    {
        let mut all = EVENTS.lock();
        if let Some(c) = all
            .get_or_insert_with(HashMap::default)
            .get_mut(&(context as usize))
        {
            if c.free.is_empty() {
                reclaim(c);
            }
            if let Some(event) = c.free.pop() {
                return Some(event as ze_event_handle_t);
            }
        }
    }
    // The driver is called without the lock held.
    let (pool, events) = create_pool(context)?;
    let mut all = EVENTS.lock();
    let entry = all
        .get_or_insert_with(HashMap::default)
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

/// Frees the retired events whose program events have signalled. The lock is held while the
/// driver is asked, so that the program cannot destroy its event meanwhile (its destruction
/// takes the lock first, in [`program_event_going`]).
fn reclaim(c: &mut ContextEvents) {
    let Some(status) = loader().and_then(|l| l.zeEventQueryStatus) else {
        return;
    };
    let mut i = 0;
    while i < c.retired.len() {
        let (ours, program) = c.retired[i];
        // SAFETY: the program's event is alive: its destruction would have removed this entry.
        let signalled =
            internal(|| unsafe { status(program as ze_event_handle_t) }) == ZE_RESULT_SUCCESS;
        if signalled {
            c.retired.swap_remove(i);
            reset(ours as ze_event_handle_t);
            c.free.push(ours);
        } else {
            i += 1;
        }
    }
}

/// Retires an event of libpti's whose command is recorded but which a barrier waits on before it
/// signals the program's `program` event (see the module docs).
pub(super) fn retire(
    context: ze_context_handle_t,
    ours: ze_event_handle_t,
    program: ze_event_handle_t,
) {
    if let Some(c) = EVENTS
        .lock()
        .get_or_insert_with(HashMap::default)
        .get_mut(&(context as usize))
    {
        c.retired.push((ours as usize, program as usize));
    }
}

/// The program is about to reset or destroy its event `program`: libpti's events retired for it
/// are freed if it has signalled (its barrier is past them), else never reused (they go with
/// their context).
pub(super) fn program_event_going(program: ze_event_handle_t) {
    let mut all = EVENTS.lock();
    let Some(all) = all.as_mut() else { return };
    let status = loader().and_then(|l| l.zeEventQueryStatus);
    let mut signalled = None;
    for c in all.values_mut() {
        while let Some(i) = c.retired.iter().position(|r| r.1 == program as usize) {
            let (ours, _) = c.retired.swap_remove(i);
            let done = *signalled.get_or_insert_with(|| {
                status.is_some_and(|s| {
                    // SAFETY: the program's event is alive until the call this runs before.
                    internal(|| unsafe { s(program) }) == ZE_RESULT_SUCCESS
                })
            });
            if done {
                reset(ours as ze_event_handle_t);
                c.free.push(ours);
            }
        }
    }
}

/// Gives back an event of libpti's once its command is recorded: reset, and free for reuse.
pub(super) fn give(context: ze_context_handle_t, event: ze_event_handle_t) {
    reset(event);
    if let Some(c) = EVENTS
        .lock()
        .get_or_insert_with(HashMap::default)
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
        .get_or_insert_with(HashMap::default)
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

/// In the child after `fork()`: the parent's pools are not the child's to use or destroy.
pub(super) fn forget_in_child() {
    *EVENTS.lock() = None;
}
