//! The program's event pools and counter-based events, as libpti makes them and as the program
//! sees them.
//!
//! A command the program gives an event is timed by that event's kernel timestamps (libpti never
//! replaces a program's event: `source`). So while a device view is enabled, libpti asks the
//! driver for kernel timestamps on the pools and counter-based events the program creates
//! without them ([`upgrade_pool`], [`upgrade_counter_based`]): host-visible kernel timestamps,
//! the only difference a device sees (a timestamp write where a plain completion write was). Not
//! for IPC pools (the driver refuses timestamps with IPC), pools whose descriptor chain holds
//! anything but the counter-based descriptor (libpti would not know what it combines with), nor
//! when `PTI_LEVEL_ZERO_KEEP_EVENT_POOLS=1`.
//!
//! The program sees none of it: `zeEventPoolGetFlags` answers the flags it asked for
//! ([`program_flags`]), and its own timestamp queries on such events answer what the driver
//! answers for an event without timestamps: libpti asks the driver with an event of its own that
//! has none (a *probe*, [`probe_query`]), so the answer is the driver's, whatever it is.

use core::ffi::c_void;

use pti_sys::level_zero::*;

use super::objects::{self, Event, Pool};
use super::{events, tracer};
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view;

/// The kernel-timestamp flags of a pool, either kind.
const TIMESTAMPS: ze_event_pool_flags_t =
    ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP;

/// Counter-based creation flags (`ze_event_counter_based_flags_t`, whose bits Intel's
/// `zexCounterBasedEventCreate2` shares): IPC, and the two timestamp kinds.
pub(super) const CB_IPC: u32 = 8;
pub(super) const CB_DEVICE_TIMESTAMP: u32 = 16;
pub(super) const CB_HOST_TIMESTAMP: u32 = 32;

/// Whether libpti adds timestamps to what the program creates now.
fn upgrading() -> bool {
    tracer::upgrades_event_pools() && view::any_device_view_configured()
}

/// The first structure of a descriptor chain, if it is the counter-based pool descriptor (the
/// only place the driver looks for it), and whether anything else is chained.
///
/// # Safety
/// `next` is NULL or a chain of Level Zero structures.
unsafe fn chain(next: *const c_void) -> (bool, bool) {
    if next.is_null() {
        return (false, false);
    }
    // A chain that is no chain (another tool's descriptor, say): something libpti does not know.
    if !next
        .cast::<ze_event_pool_counter_based_exp_desc_t>()
        .is_aligned()
    {
        return (false, true);
    }
    // SAFETY: the first structure of a chain starts with its type and the next one's address.
    let first = unsafe { &*next.cast::<ze_event_pool_counter_based_exp_desc_t>() };
    if first.stype == ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC {
        (true, !first.pNext.is_null())
    } else {
        (false, true)
    }
}

/// The flags libpti creates a pool of the program's descriptor `desc` with (`None`: as asked),
/// and whether the pool is counter-based.
///
/// # Safety
/// `desc` is the program's descriptor.
pub(super) unsafe fn upgrade_pool(
    desc: &ze_event_pool_desc_t,
) -> (Option<ze_event_pool_flags_t>, bool) {
    // SAFETY: the descriptor's chain, as the caller promises.
    let (counter_based, other) = unsafe { chain(desc.pNext) };
    let upgrade =
        upgrading() && !other && desc.flags & ZE_EVENT_POOL_FLAG_IPC == 0 && !readable(desc.flags);
    // Kernel timestamps (unless the program asked for either kind), host-visible.
    let timestamps = if desc.flags & TIMESTAMPS == 0 {
        ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
    } else {
        0
    };
    let flags = desc.flags | timestamps | ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    (upgrade.then_some(flags), counter_based)
}

/// Whether the host can read the kernel timestamps of a pool's events (`KERNEL_TIMESTAMP` or
/// `KERNEL_MAPPED_TIMESTAMP`, whose events hold device ticks too, and host-visible).
fn readable(flags: ze_event_pool_flags_t) -> bool {
    flags & TIMESTAMPS != 0 && flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE != 0
}

/// A pool was created: what the program asked for, and what libpti made of it.
pub(super) fn pool_created(
    pool: ze_event_pool_handle_t,
    context: ze_context_handle_t,
    program_flags: ze_event_pool_flags_t,
    made: ze_event_pool_flags_t,
    counter_based: bool,
) {
    objects::pool_created(
        pool,
        Pool {
            context: context as usize,
            program_flags,
            timestamps: readable(made),
            upgraded: program_flags & TIMESTAMPS == 0 && made & TIMESTAMPS != 0,
            counter_based,
        },
    );
}

/// The counter-based creation flags libpti creates an event of the program's `flags` with
/// (`None`: as asked).
pub(super) fn upgrade_counter_based(flags: u32) -> Option<u32> {
    let timestamps = CB_DEVICE_TIMESTAMP | CB_HOST_TIMESTAMP;
    (upgrading() && flags & CB_IPC == 0 && flags & timestamps == 0)
        .then_some(flags | CB_DEVICE_TIMESTAMP)
}

/// A counter-based event was created with `made` flags for the program's `asked`.
pub(super) fn counter_based_created(
    event: ze_event_handle_t,
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    asked: u32,
    made: u32,
) {
    let timestamps = CB_DEVICE_TIMESTAMP | CB_HOST_TIMESTAMP;
    objects::event_created(
        event,
        Event {
            context: context as usize,
            device: device as usize,
            timestamps: made & timestamps != 0,
            upgraded: asked & timestamps == 0 && made & timestamps != 0,
            counter_based: true,
        },
    );
}

/// The flags a pool's program asked for.
pub(super) fn program_flags(pool: ze_event_pool_handle_t) -> Option<ze_event_pool_flags_t> {
    objects::pool(pool).map(|p| p.program_flags)
}

thread_local! {
    /// Per query of the program's in progress on this thread, by token: the event it asked
    /// about, replaced by a probe.
    static PROBED: ThreadStack<usize, ze_event_handle_t> = const { ThreadStack::new() };
}

/// In the prologue of a timestamp query of the program's (`event` is its argument): an event
/// whose timestamps libpti added is replaced by a probe without any, so that the driver answers
/// as it would have (module docs).
pub(super) fn probe_query(token: usize, event: &mut ze_event_handle_t) {
    if tracer::is_internal() {
        return;
    }
    let Some(info) = objects::event(*event).filter(|e| e.upgraded) else {
        return;
    };
    let Some(probe) = events::probe(
        info.context as ze_context_handle_t,
        info.counter_based
            .then_some(info.device as ze_device_handle_t),
    ) else {
        return;
    };
    if PROBED.push(token, *event) {
        *event = probe;
    }
}

/// In the epilogue of that query: the program's event back.
pub(super) fn unprobe_query(token: usize, event: &mut ze_event_handle_t) {
    if let Some(original) = PROBED.take(token) {
        *event = original;
    }
}
