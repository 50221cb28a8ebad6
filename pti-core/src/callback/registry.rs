//! The subscriber table and the functions that change it (the writers).
//!
//! Subscribers live in [`MAX_SUBSCRIBERS`] fixed slots that readers reach without a lock:
//! a slot's `serial` is nonzero exactly while a live subscriber occupies it, `ACTIVE` has one
//! bit per such slot, and the handler and enables are read through atomics. Writers serialise on
//! one mutex, which no reader ever takes and under which no callback ever runs.
//!
//! Removing a subscriber is the delicate part (see [`super::deliver`] for the reader's half):
//! 1. under the lock, clear the slot's serial and `ACTIVE` bit and recompute the interest table;
//! 2. issue [`barrier::heavy`], so that every reader either sees the cleared serial or has its
//!    in-flight announcement visible to us;
//! 3. wait until no thread announces the slot, then free the handler and free the slot.
//!
//! Called from inside a callback, step 3 is skipped (waiting there could deadlock two threads that
//! unsubscribe each other's subscribers); the slot stays *draining* and a later writer frees it
//! once no thread announces it any more.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::ptr;

use parking_lot::Mutex;

use super::{Handler, MAX_SUBSCRIBERS, SubscriberId};
use crate::api::{ApiGroup, ApiId, Domain};
use crate::interest::{self, CALLBACKS, CELLS};
use crate::result::Error;
use crate::sync::barrier;
use crate::{fault, ids, thread};

const ENABLE_WORDS: usize = CELLS.div_ceil(64);

/// One subscriber slot, as readers see it.
pub(crate) struct Slot {
    /// Serial of the live subscriber here; 0 while the slot is free or draining.
    pub(crate) serial: AtomicU64,
    /// The subscriber's handler; valid while `serial` is nonzero and until the slot is freed.
    handler: AtomicPtr<Handler>,
    /// Critical events enabled.
    pub(crate) critical: AtomicBool,
    /// One bit per interest cell (see [`interest::cell`]).
    enables: [AtomicU64; ENABLE_WORDS],
}

impl Slot {
    const fn new() -> Self {
        Slot {
            serial: AtomicU64::new(0),
            handler: AtomicPtr::new(ptr::null_mut()),
            critical: AtomicBool::new(false),
            enables: [const { AtomicU64::new(0) }; ENABLE_WORDS],
        }
    }

    /// Whether the subscriber here enabled interest cell `cell`.
    #[inline(always)]
    pub(crate) fn is_enabled(&self, cell: usize) -> bool {
        self.enables[cell / 64].load(Ordering::Relaxed) & (1 << (cell % 64)) != 0
    }

    fn set_enabled(&self, cell: usize, on: bool) {
        let bit = 1u64 << (cell % 64);
        if on {
            self.enables[cell / 64].fetch_or(bit, Ordering::Relaxed);
        } else {
            self.enables[cell / 64].fetch_and(!bit, Ordering::Relaxed);
        }
    }

    /// The handler of the subscriber here.
    ///
    /// # Safety
    /// The caller announced this slot in its thread record, issued [`barrier::light`], and then
    /// saw `serial` still equal to the serial it read before: the handler cannot be freed until
    /// the caller retracts the announcement.
    #[inline(always)]
    pub(crate) unsafe fn handler(&self) -> &Handler {
        // SAFETY: per the contract the pointer was stored by subscribe before `serial` was
        // published (Release, read with Acquire by the caller) and is freed only after every
        // announcement of the slot was retracted.
        unsafe { &*self.handler.load(Ordering::Acquire) }
    }
}

/// The slots, indexed by [`SubscriberId::slot`].
pub(crate) static SLOTS: [Slot; MAX_SUBSCRIBERS] = [const { Slot::new() }; MAX_SUBSCRIBERS];

/// Bit k set: slot k holds a live subscriber. Readers iterate its bits.
pub(crate) static ACTIVE: AtomicU32 = AtomicU32::new(0);

/// Some live subscriber enabled critical events.
pub(crate) static CRITICAL_LISTENERS: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    Live(u64),
    /// Removed; its handler may still run on some thread, so the slot is not reused yet.
    Draining,
}

/// What only writers see, under [`REGISTRY`].
struct Registry {
    states: [SlotState; MAX_SUBSCRIBERS],
    last_serial: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    states: [SlotState::Free; MAX_SUBSCRIBERS],
    last_serial: 0,
});

impl Registry {
    fn check_live(&self, id: SubscriberId) -> Result<(), Error> {
        match self.states.get(id.slot()) {
            Some(SlotState::Live(serial)) if *serial == id.serial => Ok(()),
            _ => Err(Error::BadArgument(
                "unknown, stale or foreign subscriber handle",
            )),
        }
    }

    fn live_slots(&self) -> impl Iterator<Item = &'static Slot> + '_ {
        self.states
            .iter()
            .zip(&SLOTS)
            .filter(|(state, _)| matches!(state, SlotState::Live(_)))
            .map(|(_, slot)| slot)
    }

    /// Sets the callback interest of `cell` to "some live subscriber enabled it".
    fn recompute_cell(&self, cell: usize) {
        interest::set(
            cell,
            CALLBACKS,
            self.live_slots().any(|s| s.is_enabled(cell)),
        );
    }

    fn recompute_critical(&self) {
        let any = self
            .live_slots()
            .any(|s| s.critical.load(Ordering::Relaxed));
        CRITICAL_LISTENERS.store(any, Ordering::Relaxed);
    }

    /// Frees draining slots that no thread announces any more; returns their handlers so the
    /// caller drops them after unlocking (a handler's drop is user code and may call back in).
    fn reclaim(&mut self) -> Vec<Handler> {
        let mut garbage = Vec::new();
        if !self.states.contains(&SlotState::Draining) {
            return garbage;
        }
        // Orders the clearing of each draining slot's serial (done under this lock earlier)
        // before our reading of the announcements, as in step 2 of the module docs.
        barrier::heavy();
        for k in 0..MAX_SUBSCRIBERS {
            if self.states[k] == SlotState::Draining && !announced_anywhere(k) {
                garbage.push(take_handler(k));
                self.states[k] = SlotState::Free;
            }
        }
        garbage
    }
}

fn announced_anywhere(k: usize) -> bool {
    let mut found = false;
    thread::for_each_record(|r| found |= r.is_in_flight(k));
    found
}

fn take_handler(k: usize) -> Handler {
    let p = SLOTS[k].handler.swap(ptr::null_mut(), Ordering::Relaxed);
    debug_assert!(!p.is_null());
    // SAFETY: `p` came from Box::into_raw in subscribe; the slot is draining and unannounced,
    // so no reader holds it, and the swap makes this the only owner.
    *unsafe { Box::from_raw(p) }
}

fn wait_until_unannounced(k: usize) {
    thread::for_each_record(|r| {
        let mut spins = 0u32;
        while r.is_in_flight(k) {
            spins += 1;
            if spins < 64 {
                core::hint::spin_loop();
            } else if spins < 128 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    });
}

/// Adds a subscriber with nothing enabled.
pub fn subscribe(handler: Handler) -> Result<SubscriberId, Error> {
    fault::point("subscribe");
    let (result, garbage) = {
        let mut reg = REGISTRY.lock();
        barrier::init();
        let garbage = reg.reclaim();
        let result = match reg.states.iter().position(|s| *s == SlotState::Free) {
            None => Err(Error::TooManySubscribers),
            Some(k) => {
                reg.last_serial += 1;
                let serial = reg.last_serial;
                let slot = &SLOTS[k];
                for word in &slot.enables {
                    word.store(0, Ordering::Relaxed);
                }
                slot.critical.store(false, Ordering::Relaxed);
                slot.handler
                    .store(Box::into_raw(Box::new(handler)), Ordering::Relaxed);
                // Release: a reader that sees the serial sees the handler and the cleared enables.
                slot.serial.store(serial, Ordering::Release);
                ACTIVE.fetch_or(1 << k, Ordering::Release);
                reg.states[k] = SlotState::Live(serial);
                Ok(SubscriberId {
                    slot: k as u8,
                    serial,
                })
            }
        };
        (result, garbage)
    };
    drop(garbage);
    result
}

/// Removes a subscriber. See the module docs for what is guaranteed when it returns.
pub fn unsubscribe(id: SubscriberId) -> Result<(), Error> {
    fault::point("unsubscribe");
    let k = id.slot();
    {
        let mut reg = REGISTRY.lock();
        reg.check_live(id)?;
        let slot = &SLOTS[k];
        slot.serial.store(0, Ordering::SeqCst);
        ACTIVE.fetch_and(!(1 << k), Ordering::SeqCst);
        reg.states[k] = SlotState::Draining;
        for (w, word) in slot.enables.iter().enumerate() {
            let mut bits = word.swap(0, Ordering::Relaxed);
            while bits != 0 {
                reg.recompute_cell(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        slot.critical.store(false, Ordering::Relaxed);
        reg.recompute_critical();
    }
    barrier::heavy();
    if thread::with(|s| s.in_callback.get()).unwrap_or(false) {
        return Ok(());
    }
    wait_until_unannounced(k);
    let handler = {
        let mut reg = REGISTRY.lock();
        // A writer's reclaim may have freed (and even reused) the slot while we waited.
        (reg.states[k] == SlotState::Draining).then(|| {
            reg.states[k] = SlotState::Free;
            take_handler(k)
        })
    };
    drop(handler);
    Ok(())
}

/// Enables or disables the callback of one function for one subscriber.
///
/// Checks, in this order: the subscriber, then that `api_id` names a function of `group`.
pub fn enable(id: SubscriberId, group: ApiGroup, api_id: ApiId, on: bool) -> Result<(), Error> {
    fault::point("enable");
    let reg = REGISTRY.lock();
    reg.check_live(id)?;
    let cell = interest::cell(group, api_id)
        .filter(|_| ids::is_valid(group, api_id))
        .ok_or(Error::BadApiId {
            group: group as u32,
            id: api_id,
        })?;
    SLOTS[id.slot()].set_enabled(cell, on);
    reg.recompute_cell(cell);
    Ok(())
}

/// Enables or disables every function of `domain`'s groups, or critical events.
pub fn enable_domain(id: SubscriberId, domain: Domain, on: bool) -> Result<(), Error> {
    fault::point("enable_domain");
    let reg = REGISTRY.lock();
    reg.check_live(id)?;
    let slot = &SLOTS[id.slot()];
    if domain == Domain::CriticalEvent {
        slot.critical.store(on, Ordering::Relaxed);
        reg.recompute_critical();
        return Ok(());
    }
    for &group in domain.groups() {
        for (api_id, _) in ids::iter(group) {
            let cell = interest::cell(group, api_id).expect("table IDs have cells");
            slot.set_enabled(cell, on);
            reg.recompute_cell(cell);
        }
    }
    Ok(())
}
