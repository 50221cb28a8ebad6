//! libpti's own device resources, per context: timestamp events and timestamp slots.
//!
//! - **Events**: where the program passed no signal event, a command is timed by an event of
//!   libpti's; a copy of timestamps signals one too. libpti keeps pools of [`POOL_SIZE`]
//!   host-visible events with kernel timestamps, and reuses an event once its command is recorded
//!   (reset by the host first: libpti never resets in a program's list). An event another tool
//!   took out of a command's slot (and signals later, after its own) is *retired*: reused only
//!   once it has signalled ([`retire`]).
//! - **Slots**: host memory for one `ze_kernel_timestamp_result_t` each, which a device copy of
//!   timestamps writes; taken from chunks of [`CHUNK_SLOTS`].
//!
//! A context's resources are destroyed just before the program destroys the context, so none
//! outlives it.

use rustc_hash::FxHashMap as HashMap;

use pti_sys::level_zero::*;

use super::source::signalled;
use super::tracer::{internal, loader};
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Events per pool.
const POOL_SIZE: u32 = 64;

/// Slots per host allocation.
const CHUNK_SLOTS: usize = 256;

/// Bytes of one slot.
pub(super) const SLOT_BYTES: usize = size_of::<ze_kernel_timestamp_result_t>();

#[derive(Default)]
struct ContextResources {
    pools: Vec<usize>,
    free: Vec<usize>,
    /// Events another tool signals after its own: free once signalled.
    retired: Vec<usize>,
    /// Every event of these pools, free or not (destroyed with the context).
    all: Vec<usize>,
    chunks: Vec<usize>,
    free_slots: Vec<usize>,
    /// Events without timestamps, of a pool and counter-based (0: none yet), and the pool of
    /// the first (see `pools`).
    probes: [usize; 2],
    probe_pool: usize,
}

static RESOURCES: WriterLock<Option<HashMap<usize, ContextResources>>> = WriterLock::new(None);

/// The lock of the resources, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &RESOURCES
}

fn with<R>(context: ze_context_handle_t, f: impl FnOnce(&mut ContextResources) -> R) -> R {
    f(RESOURCES
        .lock()
        .get_or_insert_with(HashMap::default)
        .entry(context as usize)
        .or_default())
}

/// A free event of libpti's in `context`, creating a pool when none is left; `None` if the
/// driver would not create one.
pub(super) fn take(context: ze_context_handle_t) -> Option<ze_event_handle_t> {
    let found = with(context, |c| {
        if c.free.is_empty() {
            reclaim(c);
        }
        c.free.pop()
    });
    if let Some(event) = found {
        return Some(event as ze_event_handle_t);
    }
    // The driver is called without the lock held.
    let (pool, events) = create_pool(context)?;
    with(context, |c| {
        c.pools.push(pool as usize);
        c.all.extend(events.iter().map(|e| *e as usize));
        let (first, rest) = events.split_first()?;
        c.free.extend(rest.iter().map(|e| *e as usize));
        Some(*first)
    })
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

/// Frees the retired events that have signalled (the other tool's command is past them).
fn reclaim(c: &mut ContextResources) {
    let mut i = 0;
    while i < c.retired.len() {
        let event = c.retired[i] as ze_event_handle_t;
        if signalled(event) == Ok(true) {
            c.retired.swap_remove(i);
            reset(event);
            c.free.push(event as usize);
        } else {
            i += 1;
        }
    }
}

/// Gives back an event of libpti's once its command is recorded: reset, and free for reuse.
pub(super) fn give(context: ze_context_handle_t, event: ze_event_handle_t) {
    reset(event);
    with(context, |c| c.free.push(event as usize));
}

/// Retires an event of libpti's that another tool took out of a command's slot: it signals it
/// later, after its own event; until then it is not reused.
pub(super) fn retire(context: ze_context_handle_t, event: ze_event_handle_t) {
    with(context, |c| c.retired.push(event as usize));
}

/// Resets an event of libpti's so that it can signal again (a host reset: libpti never resets
/// in a program's list).
pub(super) fn reset(event: ze_event_handle_t) {
    if let Some(reset) = loader().and_then(|l| l.zeEventHostReset) {
        // SAFETY: an event of libpti's own pools, not in use by the device.
        internal(|| unsafe { reset(event) });
    }
}

/// A timestamp slot in `context`'s host memory; `None` if the driver would not allocate.
pub(super) fn slot(context: ze_context_handle_t) -> Option<usize> {
    if let Some(slot) = with(context, |c| c.free_slots.pop()) {
        return Some(slot);
    }
    let alloc = loader()?.zeMemAllocHost?;
    let desc = ze_host_mem_alloc_desc_t {
        stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
        pNext: core::ptr::null(),
        flags: 0,
    };
    let mut chunk: *mut core::ffi::c_void = core::ptr::null_mut();
    // SAFETY: a context the program uses, a valid descriptor, and a writable pointer.
    let status =
        internal(|| unsafe { alloc(context, &desc, CHUNK_SLOTS * SLOT_BYTES, 64, &mut chunk) });
    if status != ZE_RESULT_SUCCESS || chunk.is_null() {
        return None;
    }
    let base = chunk as usize;
    with(context, |c| {
        c.chunks.push(base);
        c.free_slots
            .extend((1..CHUNK_SLOTS).map(|i| base + i * SLOT_BYTES));
    });
    Some(base)
}

/// Gives back a slot once its timestamps are read.
pub(super) fn give_slot(context: ze_context_handle_t, slot: usize) {
    // Cleared, so that a copy that never ran reads as no timestamps.
    // SAFETY: libpti's slot of one timestamp result, which no device command writes any more.
    unsafe { core::ptr::write_bytes(slot as *mut u8, 0, SLOT_BYTES) };
    with(context, |c| c.free_slots.push(slot));
}

/// An event of libpti's in `context` without timestamps, of a pool (`device` None) or
/// counter-based (created on `device`), to ask the driver what it answers for such an event.
pub(super) fn probe(
    context: ze_context_handle_t,
    device: Option<ze_device_handle_t>,
) -> Option<ze_event_handle_t> {
    let kind = usize::from(device.is_some());
    let known = with(context, |c| c.probes[kind]);
    if known != 0 {
        return Some(known as ze_event_handle_t);
    }
    let (event, pool) = match device {
        None => create_probe_in_pool(context)?,
        Some(device) => (create_counter_based_probe(context, device)?, 0),
    };
    with(context, |c| {
        c.probes[kind] = event as usize;
        if pool != 0 {
            c.probe_pool = pool;
        }
    });
    Some(event)
}

fn create_probe_in_pool(context: ze_context_handle_t) -> Option<(ze_event_handle_t, usize)> {
    let l = loader()?;
    let (create_pool, create_event) = (l.zeEventPoolCreate?, l.zeEventCreate?);
    let desc = ze_event_pool_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        pNext: core::ptr::null(),
        flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        count: 1,
    };
    let mut pool: ze_event_pool_handle_t = core::ptr::null_mut();
    // SAFETY: a context the program uses, a valid descriptor, and no device list.
    let status =
        internal(|| unsafe { create_pool(context, &desc, 0, core::ptr::null_mut(), &mut pool) });
    if status != ZE_RESULT_SUCCESS || pool.is_null() {
        return None;
    }
    let desc = ze_event_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
        pNext: core::ptr::null(),
        index: 0,
        signal: ZE_EVENT_SCOPE_FLAG_HOST,
        wait: ZE_EVENT_SCOPE_FLAG_HOST,
    };
    let mut event: ze_event_handle_t = core::ptr::null_mut();
    // SAFETY: the pool just created and a valid descriptor.
    let status = internal(|| unsafe { create_event(pool, &desc, &mut event) });
    (status == ZE_RESULT_SUCCESS && !event.is_null()).then_some((event, pool as usize))
}

fn create_counter_based_probe(
    context: ze_context_handle_t,
    device: ze_device_handle_t,
) -> Option<ze_event_handle_t> {
    let create = super::extension::driver_function::<zeEventCounterBasedCreate_t>(
        c"zeEventCounterBasedCreate",
    )
    .flatten()?;
    let desc = ze_event_counter_based_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_COUNTER_BASED_DESC,
        pNext: core::ptr::null(),
        flags: ZE_EVENT_COUNTER_BASED_FLAG_IMMEDIATE | ZE_EVENT_COUNTER_BASED_FLAG_HOST_VISIBLE,
        signal: ZE_EVENT_SCOPE_FLAG_HOST,
        wait: ZE_EVENT_SCOPE_FLAG_HOST,
    };
    let mut event: ze_event_handle_t = core::ptr::null_mut();
    // SAFETY: the driver's function, a context and device the program uses, a valid descriptor.
    let status = internal(|| unsafe { create(context, device, &desc, &mut event) });
    (status == ZE_RESULT_SUCCESS && !event.is_null()).then_some(event)
}

/// Destroys libpti's events, pools and slots of `context` (the program is destroying it).
pub(super) fn destroy_context(context: ze_context_handle_t) {
    let Some(c) = RESOURCES
        .lock()
        .get_or_insert_with(HashMap::default)
        .remove(&(context as usize))
    else {
        return;
    };
    let Some(l) = loader() else { return };
    let probes = c.probes.into_iter().filter(|&p| p != 0);
    for event in c.all.into_iter().chain(probes) {
        if let Some(destroy) = l.zeEventDestroy {
            // SAFETY: an event of libpti's pools, not used again.
            internal(|| unsafe { destroy(event as ze_event_handle_t) });
        }
    }
    let probe_pool = (c.probe_pool != 0).then_some(c.probe_pool);
    for pool in c.pools.into_iter().chain(probe_pool) {
        if let Some(destroy) = l.zeEventPoolDestroy {
            // SAFETY: a pool of libpti's, whose events are destroyed.
            internal(|| unsafe { destroy(pool as ze_event_pool_handle_t) });
        }
    }
    for chunk in c.chunks {
        if let Some(free) = l.zeMemFree {
            // SAFETY: libpti's own allocation in this context, not used again.
            internal(|| unsafe { free(context, chunk as *mut core::ffi::c_void) });
        }
    }
}

/// In the child after `fork()`: the parent's resources are not the child's to use or destroy.
pub(super) fn forget_in_child() {
    *RESOURCES.lock() = None;
}
