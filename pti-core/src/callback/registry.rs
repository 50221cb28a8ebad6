//! The subscriber table and the functions that change it (the writers).
//!
//! Subscribers live in [`MAX_SUBSCRIBERS`] fixed slots that readers reach without a lock:
//! a slot's `serial` is nonzero exactly while a live subscriber occupies it, `ACTIVE` has one
//! bit per such slot, and the handler and enables are read through atomics. Writers serialise on
//! one [`WriterLock`], which no reader ever takes and under which no user code ever runs
//! (callbacks, handler drops and critical events all happen after it is released).
//!
//! Removing a subscriber is the delicate part (see [`super::deliver`] for the reader's half):
//! 1. under the lock, clear the slot's serial and `ACTIVE` bit, mark the slot
//!    `Draining(serial)` and recompute the interest table;
//! 2. issue [`barrier::heavy`], so that every reader either sees the cleared serial or has its
//!    in-flight announcement visible to us;
//! 3. wait until no thread announces the slot, then free the handler and the slot, if the slot is
//!    still draining *this* subscriber (another writer may have finished the job meanwhile).
//!
//! Called from inside a callback, step 3 is skipped (waiting there could deadlock two threads that
//! unsubscribe each other's subscribers from their callbacks); every later writer frees draining
//! slots that no thread announces any more ([`Registry::reclaim`]).
//!
//! `fork()`: [`fork_prepare`] takes the writers' lock before the fork and the parent and child
//! handlers release it, so the child never inherits a lock held by a thread that does not exist
//! there (see `crate::fork`).
//!
//! These are the engine's functions: tools reach them through the session (`crate::session`),
//! which also tells the backends what an enable means for them.

use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::panic::AssertUnwindSafe;
use std::ptr;

use super::critical;
use super::{Handler, MAX_SUBSCRIBERS, SubscriberId};
use crate::api::{ApiGroup, ApiId, Domain};
use crate::interest::{self, CALLBACKS, CELLS};
use crate::result::{Error, ResultCode};
use crate::sync::backoff::Backoff;
use crate::sync::barrier;
use crate::sync::writer_lock::{WriterGuard, WriterLock};
use crate::{fault, ids, thread};

const ENABLE_WORDS: usize = CELLS.div_ceil(64);

/// One subscriber slot, as readers see it.
pub(crate) struct Slot {
    /// Serial of the live subscriber here; 0 while the slot is free or draining.
    pub(crate) serial: AtomicU64,
    /// The subscriber's handler; valid while `serial` is nonzero and until the slot is freed.
    handler: AtomicPtr<Handler>,
    /// The flag domains enabled: one bit per [`Domain::flag`].
    pub(crate) flags: AtomicU32,
    /// One bit per interest cell (see [`interest::cell`]).
    enables: [AtomicU64; ENABLE_WORDS],
}

impl Slot {
    const fn new() -> Self {
        Slot {
            serial: AtomicU64::new(0),
            handler: AtomicPtr::new(ptr::null_mut()),
            flags: AtomicU32::new(0),
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

/// The flag domains some live subscriber enabled: the union of the live slots' `flags`.
pub(crate) static FLAG_LISTENERS: AtomicU32 = AtomicU32::new(0);

#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    Live(u64),
    /// The subscriber with this serial was removed; its handler may still run on some thread,
    /// so the slot is not reused yet.
    Draining(u64),
}

/// What only writers see, under [`REGISTRY`].
pub(crate) struct Registry {
    states: [SlotState; MAX_SUBSCRIBERS],
    last_serial: u64,
}

static REGISTRY: WriterLock<Registry> = WriterLock::new(Registry {
    states: [SlotState::Free; MAX_SUBSCRIBERS],
    last_serial: 0,
});

/// Handlers removed under the lock, dropped after it is released (a drop is user code).
type Garbage = Vec<Handler>;

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

    fn recompute_flags(&self) {
        let any = self
            .live_slots()
            .fold(0, |all, s| all | s.flags.load(Ordering::Relaxed));
        FLAG_LISTENERS.store(any, Ordering::Relaxed);
    }

    /// Frees draining slots that no thread announces any more, moving their handlers to
    /// `garbage`. Every writer calls it, so slots left draining by an unsubscribe made inside a
    /// callback come back as soon as possible.
    fn reclaim(&mut self, garbage: &mut Garbage) {
        if !self
            .states
            .iter()
            .any(|s| matches!(s, SlotState::Draining(_)))
        {
            return;
        }
        // Orders the clearing of each draining slot's serial (done under this lock earlier)
        // before our reading of the announcements, as in step 2 of the module docs. Without a
        // barrier nothing may be freed.
        if !barrier::heavy() {
            return;
        }
        for k in 0..MAX_SUBSCRIBERS {
            if matches!(self.states[k], SlotState::Draining(_)) && !announced_anywhere(k) {
                garbage.push(take_handler(k));
                self.states[k] = SlotState::Free;
            }
        }
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
        let mut backoff = Backoff::default();
        while r.is_in_flight(k) {
            backoff.snooze();
        }
    });
}

/// Drops removed handlers outside the lock. A handler whose drop panics is reported as a
/// critical event; the panic does not escape into the writer that happened to free it.
fn drop_garbage(garbage: Garbage) {
    for handler in garbage {
        if std::panic::catch_unwind(AssertUnwindSafe(move || drop(handler))).is_err() {
            critical::raise(
                ResultCode::ErrorCallbackPanicked,
                format_args!(
                    "dropping a removed subscriber's callback panicked; the panic was caught"
                ),
            );
        }
    }
}

/// Runs `change` under the writers' lock after reclaiming draining slots, then drops the
/// reclaimed handlers once the lock is released.
fn write<R>(change: impl FnOnce(&mut WriterGuard<'_, Registry>) -> R) -> R {
    let mut garbage = Garbage::new();
    let result = {
        let mut reg = REGISTRY.lock();
        reg.reclaim(&mut garbage);
        change(&mut reg)
    };
    drop_garbage(garbage);
    result
}

/// Before `fork()`: takes the writers' lock.
pub(crate) fn fork_prepare() {
    REGISTRY.acquire_for_fork();
}

/// In the parent after `fork()`.
pub(crate) fn fork_parent() {
    // SAFETY: fork_prepare took the lock on this thread, and no guard is held across fork().
    unsafe { REGISTRY.release_after_fork() };
}

/// In the child after `fork()`.
pub(crate) fn fork_child() {
    // SAFETY: as in fork_parent; in the child, the forking thread is the only thread.
    unsafe { REGISTRY.release_after_fork() };
}

/// Adds a subscriber with nothing enabled.
pub(crate) fn subscribe(handler: Handler) -> Result<SubscriberId, Error> {
    fault::point("subscribe");
    write(|reg| {
        barrier::init();
        let k = reg
            .states
            .iter()
            .position(|s| *s == SlotState::Free)
            .ok_or(Error::TooManySubscribers {
                max: MAX_SUBSCRIBERS,
            })?;
        reg.last_serial += 1;
        let serial = reg.last_serial;
        let slot = &SLOTS[k];
        for word in &slot.enables {
            word.store(0, Ordering::Relaxed);
        }
        slot.flags.store(0, Ordering::Relaxed);
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
    })
}

/// Removes a subscriber. See the module docs for what is guaranteed when it returns.
pub(crate) fn unsubscribe(id: SubscriberId) -> Result<(), Error> {
    fault::point("unsubscribe");
    retire(id)?;
    if !barrier::heavy() {
        critical::raise(
            ResultCode::ErrorInternal,
            format_args!(
                "no process-wide memory barrier could be issued while unsubscribing; the \
                 subscriber's callback is kept alive and may still be called briefly"
            ),
        );
        return Ok(());
    }
    if thread::with(|s| s.in_callback.get()).unwrap_or(false) {
        return Ok(());
    }
    wait_until_unannounced(id.slot());
    finish(id);
    Ok(())
}

/// Step 1 of unsubscribe: makes the slot draining and stops new deliveries to it.
fn retire(id: SubscriberId) -> Result<(), Error> {
    let k = id.slot();
    write(|reg| {
        reg.check_live(id)?;
        let slot = &SLOTS[k];
        slot.serial.store(0, Ordering::SeqCst);
        ACTIVE.fetch_and(!(1 << k), Ordering::SeqCst);
        reg.states[k] = SlotState::Draining(id.serial);
        for (w, word) in slot.enables.iter().enumerate() {
            let mut bits = word.swap(0, Ordering::Relaxed);
            while bits != 0 {
                reg.recompute_cell(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        slot.flags.store(0, Ordering::Relaxed);
        reg.recompute_flags();
        Ok(())
    })
}

/// Step 3 of unsubscribe, once nobody announces the slot: frees the handler and the slot.
fn finish(id: SubscriberId) {
    let k = id.slot();
    let handler = write(|reg| {
        // Another writer's reclaim may have freed the slot, and even reused it, while we waited:
        // finish only if it still drains this subscriber.
        (reg.states[k] == SlotState::Draining(id.serial)).then(|| {
            reg.states[k] = SlotState::Free;
            take_handler(k)
        })
    });
    drop_garbage(handler.into_iter().collect());
}

/// Enables or disables the callback of one function for one subscriber.
///
/// Checks, in this order: the subscriber, then that `api_id` names a function of `group`.
pub(crate) fn enable(
    id: SubscriberId,
    group: ApiGroup,
    api_id: ApiId,
    on: bool,
) -> Result<(), Error> {
    fault::point("enable");
    write(|reg| {
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
    })
}

/// Enables or disables every function of `domain`'s groups, or a flag domain.
pub(crate) fn enable_domain(id: SubscriberId, domain: Domain, on: bool) -> Result<(), Error> {
    fault::point("enable_domain");
    write(|reg| {
        reg.check_live(id)?;
        let slot = &SLOTS[id.slot()];
        if let Some(bit) = domain.flag() {
            if on {
                slot.flags.fetch_or(bit, Ordering::Relaxed);
            } else {
                slot.flags.fetch_and(!bit, Ordering::Relaxed);
            }
            reg.recompute_flags();
            return Ok(());
        }
        for &group in domain.groups() {
            for cell in ids::iter(group).filter_map(|(id, _)| interest::cell(group, id)) {
                slot.set_enabled(cell, on);
                reg.recompute_cell(cell);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn handler_present(k: usize) -> bool {
        !SLOTS[k].handler.load(Ordering::Relaxed).is_null()
    }

    /// The interleaving of review finding 1: an unsubscribe that finishes late must not free the
    /// handler of a subscriber that took the slot over and is draining in its turn.
    #[test]
    fn a_late_unsubscribe_does_not_free_a_successor_in_the_same_slot() {
        let s = subscribe(Box::new(|_| {})).unwrap();
        let k = s.slot();
        // T1: unsubscribe(s), everything but the final step.
        retire(s).unwrap();
        assert!(barrier::heavy());
        // T2: a subscribe reclaims the slot (nobody announces it) and takes it over.
        let s2 = subscribe(Box::new(|_| {})).unwrap();
        assert_eq!(s2.slot(), k, "precondition: the lowest free slot is reused");
        // T4 runs s2's callback (announces slot k) while T3 unsubscribes s2 from a callback.
        let (running_tx, running_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let t4 = std::thread::spawn(move || {
            thread::with(|st| {
                assert!(st.record().announce(k));
                running_tx.send(()).unwrap();
                done_rx.recv().unwrap();
                st.record().retract(k);
            })
            .unwrap();
        });
        running_rx.recv().unwrap();
        retire(s2).unwrap();
        // T1 resumes: its final step must leave s2's handler alone.
        finish(s);
        assert!(
            handler_present(k),
            "s2's handler was freed while T4 runs it"
        );
        done_tx.send(()).unwrap();
        t4.join().unwrap();
        finish(s2);
        assert!(!handler_present(k));
        assert!(unsubscribe(s2).is_err());
    }
}
