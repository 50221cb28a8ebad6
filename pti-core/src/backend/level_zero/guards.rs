//! Guards of the program's events that libpti reads ([`Source::Borrowed`]): libpti never depends
//! on a program's event beyond the moment the program could change it.
//!
//! Everything that changes an event goes through a call libpti sees: the host resets or destroys
//! it (`commands::event_going`: the command is recorded if done, else counted lost, as the
//! program reset a running event), or a command re-arms it, signals it again or resets it
//! ([`before_change`], in the prologue of that append, before the driver sees it). In the latter
//! case the commands still reading the event are recorded now if their timestamps are there;
//! otherwise libpti copies the timestamps on the device before the change, with a command of its
//! own appended to the list the change is appended to ([`copy`]): it waits for the event (the
//! pending command's completion: the copy waits for a counter-based event's timestamps implicitly
//! too, compute-runtime's `appendQueryKernelTimestamps`) and runs before the change (the program
//! ordered its change after that completion). On a regular list, or a graph capture, the change
//! runs at each execution: the copy is recorded with it, before it, and the earlier recorded
//! command is timed by the copy from then on.
//!
//! Copies are a built-in kernel of the driver: a copy engine's list cannot run one (its commands
//! are counted lost instead), and neither is one inserted where the program has just asked for a
//! mutable command ID (the driver would give the ID to libpti's copy).

use rustc_hash::FxHashMap as HashMap;

use pti_sys::level_zero::*;

use super::commands::{PENDING, ZeCommand};
use super::devices;
use super::events;
use super::objects::List;
use super::source::Source;
use super::tracer::{internal, loader};
use crate::backend::device::pending::PendingCommand;
use crate::callback::critical;
use crate::result::ResultCode;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view;

/// The program's events pending commands read, with how many read each: an append that changes
/// an event no pending command reads costs one look-up, not a walk of the pending commands.
static READ: WriterLock<Option<HashMap<usize, usize>>> = WriterLock::new(None);

/// A pending command's claim on the program's event it reads ([`Source::Borrowed`]): counted
/// while it lives.
pub(super) struct Reader(usize);

impl Reader {
    pub(super) fn new(event: ze_event_handle_t) -> Self {
        *READ
            .lock()
            .get_or_insert_with(HashMap::default)
            .entry(event as usize)
            .or_default() += 1;
        Reader(event as usize)
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(read) = READ.lock().as_mut()
            && let Some(n) = read.get_mut(&self.0)
        {
            *n -= 1;
            if *n == 0 {
                read.remove(&self.0);
            }
        }
    }
}

/// The program's events signalled or reset on the device since their last host reset, by a
/// command libpti saw: their status may still describe that earlier use (a signal not yet reset,
/// a reset not yet run) while a new command that signals them runs.
static DIRTY: WriterLock<Option<rustc_hash::FxHashSet<usize>>> = WriterLock::new(None);

/// An append signals or resets the program's `event` on the device (an explicitly
/// counter-based event is re-armed by each append: never stale).
pub(super) fn used(event: ze_event_handle_t) {
    if super::objects::event(event).is_some_and(|e| e.counter_based) {
        return;
    }
    DIRTY
        .lock()
        .get_or_insert_with(Default::default)
        .insert(event as usize);
}

/// The program reset `event` on the host, or is destroying it: its status is its own again.
pub(super) fn cleaned(event: ze_event_handle_t) {
    if let Some(dirty) = DIRTY.lock().as_mut() {
        dirty.remove(&(event as usize));
    }
}

/// Whether a command that signals `event` on an immediate list cannot tell its completion by
/// the event's status (see [`used`]).
pub(super) fn is_dirty(event: ze_event_handle_t) -> bool {
    DIRTY
        .lock()
        .as_ref()
        .is_some_and(|d| d.contains(&(event as usize)))
}

/// Whether a pending command reads `event`.
fn is_read(event: ze_event_handle_t) -> bool {
    READ.lock()
        .as_ref()
        .is_some_and(|r| r.contains_key(&(event as usize)))
}

/// The locks of this module, for the fork handlers.
pub(super) fn fork_locks() -> [&'static dyn ForkLock; 2] {
    [&READ, &DIRTY]
}

/// In the child after `fork()`: the parent's pending commands are forgotten, and their claims.
pub(super) fn forget_in_child() {
    *READ.lock() = None;
    *DIRTY.lock() = None;
}

/// Appends to `list` a copy of `event`'s kernel timestamps into a slot of libpti's, after the
/// event has signalled; returns the slot and libpti's event the copy signals when done. `None`
/// where the list cannot run it (a copy engine's, or a mutable command ID is pending) or the
/// driver refuses.
pub(super) fn copy(list: &List, event: ze_event_handle_t) -> Option<(usize, ze_event_handle_t)> {
    if !devices::computes(list.device, list.engine.ordinal) || list.recording().next_id.is_some() {
        return None;
    }
    let append = loader()?.zeCommandListAppendQueryKernelTimestamps?;
    let slot = events::slot(list.context)?;
    let Some(done) = events::take(list.context) else {
        events::give_slot(list.context, slot);
        return None;
    };
    let mut events = event;
    let mut wait = event;
    // SAFETY: the program's list, being appended to by this thread; one event to copy and to wait
    // for; libpti's slot of one result; libpti's event to signal.
    let status = internal(|| unsafe {
        append(
            list.handle,
            1,
            &mut events,
            slot as *mut core::ffi::c_void,
            core::ptr::null(),
            done,
            1,
            &mut wait,
        )
    });
    if status != ZE_RESULT_SUCCESS {
        events::give(list.context, done);
        events::give_slot(list.context, slot);
        return None;
    }
    Some((slot, done))
}

/// The program's `event` is about to change by a command appended to `list` (a command that
/// signals it, or a reset): what still reads it is recorded or copied first (module docs).
pub(super) fn before_change(event: ze_event_handle_t, list: &List) {
    if list.records() {
        guard_recorded(event, list);
    } else {
        guard_pending(event, list);
    }
}

/// On a regular list (or a capture): the list's earlier commands that read `event` get a copy,
/// recorded before the change.
fn guard_recorded(event: ze_event_handle_t, list: &List) {
    let readers: Vec<usize> = {
        let recording = list.recording();
        (0..recording.commands.len())
            .filter(|&i| recording.commands[i].source == Source::Borrowed(event))
            .collect()
    };
    if readers.is_empty() {
        return;
    }
    // One copy serves every earlier reader (the event holds the latest one's timestamps; the
    // earlier ones were copied when the latest was appended).
    let copied = copy(list, event);
    let mut recording = list.recording();
    for i in readers {
        recording.commands[i].source = match copied {
            Some((slot, done)) => Source::Copied { slot, done },
            None => Source::Untimed(
                "its list resets or signals again the program's event it signals, and libpti \
                 cannot copy the timestamps on that list before (a copy engine's, or a mutable \
                 command ID is pending)",
            ),
        };
    }
    if let Some((slot, done)) = copied
        && !recording.borrowed
    {
        recording.slots.push(slot);
        recording.events.push(done);
    }
}

/// On an immediate list: the pending commands that read `event`, recorded if done, else copied
/// on `list` before the change.
fn guard_pending(event: ze_event_handle_t, list: &List) {
    if !is_read(event) {
        return;
    }
    let pick = |c: &ZeCommand| c.source.borrowed() == Some(event);
    PENDING.harvest_matching(pick);
    let running = PENDING.take_where(pick);
    if running.is_empty() {
        return;
    }
    // The latest reader is the one the event's state is about; earlier ones are past it (a
    // counter-based event follows its latest append), so one copy serves the latest, and the
    // earlier ones are settled by what they read so far.
    for mut command in running {
        match copy(list, event) {
            Some((slot, done)) => {
                command.source = Source::Copied { slot, done };
                command.reader = None;
                command.give_back.slots.push(slot);
                command.give_back.events.push(done);
                // The copy completes in `list`'s order, not the command's.
                command.stream = None;
                PENDING.add(command);
            }
            None => {
                let total = view::count_lost(command.view());
                critical::raise(
                    ResultCode::ErrorRecordsDropped,
                    format_args!(
                        "the program re-armed or reset a Level Zero event on a list where libpti \
                         cannot copy the timestamps of the command still running that signals \
                         it (a copy engine's): its record is lost ({total} so far)"
                    ),
                );
                let events = std::mem::take(&mut command.give_back.events);
                for e in events {
                    events::retire(command.context, e);
                }
            }
        }
    }
}
