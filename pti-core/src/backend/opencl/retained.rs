//! The program's events whose commands await their records, and the references libpti holds to
//! them, hidden from the program's `clGetEventInfo(CL_EVENT_REFERENCE_COUNT)`.
//!
//! libpti reads a command's times after the program's wait, from the program's own event, which
//! must then still exist. Most programs release their events after that wait, so libpti takes a
//! reference of its own only when it must: when the program releases an event whose command is
//! still pending ([`released_by_program`], from the program's `clReleaseEvent`, before the
//! release goes on). A program that waits first costs no retain and no release of libpti's
//! (issue 39: two runtime calls per command). Every program release must pass through
//! [`released_by_program`] for that to hold. Where libpti knows one may not, [`hold_all`]
//! retains every tracked event, and from then on each event is retained when its command is
//! submitted (as every event was before issue 39's change): when a caught panic switches a
//! thread's dispatch off (`boundary`; that thread's calls then pass untraced), and when a second
//! OpenCL loader, which libpti does not trace, initialises the layer. A release libpti cannot
//! know of (the runtime's entry point called directly, bypassing the loader, for an event made
//! through it) is outside this: docs/limits.md says so.
//!
//! The lock is held across libpti's retain or release and across the program's count query, so
//! the runtime's count and this table always agree when the answer is adjusted. That means the
//! runtime is called under the lock; it must not call back into the layer from those calls
//! (retain, release and an info query do not run program code). The program's own release is
//! made after the lock is released. Deadlock exposure: the lock is also taken in the program's
//! `clReleaseEvent` while any event is tracked, so a runtime that held a lock of its own during
//! an event callback that releases an event, and needed that lock in libpti's calls, would stand
//! still; no runtime libpti is tested on does.

use core::sync::atomic::{AtomicUsize, Ordering};
use rustc_hash::FxHashMap as HashMap;

use pti_sys::opencl::{CL_SUCCESS, cl_event, cl_int, cl_uint};

use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Per tracked event, the references libpti holds to it (0 or 1), and whether each new event is
/// retained at once (after [`hold_all`]).
///
/// An event no longer tracked keeps its entry, marked [`UNTRACKED`], until no event is tracked
/// (the table is then cleared at once) or such entries outnumber the tracked ones (they are then
/// swept out): marking an entry costs a lookup, where removing it cost a harvest about 60
/// instructions more per event (issue 39), and a program that waits and then releases its
/// events leaves nothing tracked at each wait.
struct Table {
    held: Option<HashMap<usize, cl_uint>>,
    eager: bool,
    /// Entries marked [`UNTRACKED`].
    untracked: usize,
}

/// The mark of an entry whose event is no longer tracked: as if it were absent.
const UNTRACKED: cl_uint = cl_uint::MAX;

/// Untracked entries kept at least, before a sweep.
const SWEEP_AFTER: usize = 64;

static TABLE: WriterLock<Table> = WriterLock::new(Table {
    held: None,
    eager: false,
    untracked: 0,
});

/// Events in [`TABLE`]: while 0, the program's releases and count queries pass untouched.
static TRACKED: AtomicUsize = AtomicUsize::new(0);

/// The lock of the table, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &TABLE
}

/// Notes `event`, the program's, whose command is now pending; `retain` (libpti's retain of it)
/// runs at once only after [`hold_all`]. Returns `false` if that retain failed (then the event is
/// not tracked).
pub(super) fn track(event: cl_event, retain: impl FnOnce() -> bool) -> bool {
    let mut table = TABLE.lock();
    let refs = if table.eager {
        if !retain() {
            return false;
        }
        1
    } else {
        0
    };
    let held = table.held.get_or_insert_with(HashMap::default);
    match held.insert(event as usize, refs) {
        None => {
            TRACKED.fetch_add(1, Ordering::Relaxed);
        }
        // A handle the runtime gave again, its old entry marked: tracked anew.
        Some(UNTRACKED) => {
            table.untracked -= 1;
            TRACKED.fetch_add(1, Ordering::Relaxed);
        }
        Some(_) => {}
    }
    true
}

/// Called with the program's `clReleaseEvent(event)` before it goes on: where the event's
/// command is pending and libpti holds no reference, `retain` takes one, so that the program's
/// release cannot destroy the event before its record is written. Returns whether the release
/// is to go on: `false` only where that retain failed, and then libpti keeps the program's
/// reference instead (given back with its record, as a retained one: the program's count
/// queries see it gone, the runtime's status of a release of a live event is `CL_SUCCESS`).
pub(super) fn released_by_program(event: cl_event, retain: impl FnOnce() -> bool) -> bool {
    if TRACKED.load(Ordering::Relaxed) == 0 {
        return true;
    }
    let mut table = TABLE.lock();
    match table
        .held
        .as_mut()
        .and_then(|h| h.get_mut(&(event as usize)))
    {
        // (An untracked entry's mark is not 0: its release goes on.)
        Some(refs) if *refs == 0 => {
            *refs = 1;
            retain()
        }
        _ => true,
    }
}

/// Forgets `event` once its command is recorded (or given up), giving back libpti's reference
/// to it, if it took one, through `release`.
pub(super) fn untrack(event: cl_event, release: impl Fn()) {
    let mut table = TABLE.lock();
    let table = &mut *table;
    let Some(held) = table.held.as_mut() else {
        return;
    };
    let refs = match held.get_mut(&(event as usize)) {
        Some(refs) if *refs != UNTRACKED => core::mem::replace(refs, UNTRACKED),
        _ => return,
    };
    table.untracked += 1;
    let tracked = TRACKED.fetch_sub(1, Ordering::Relaxed) - 1;
    if tracked == 0 || table.untracked > SWEEP_AFTER.max(tracked) {
        tidy(table, tracked);
    }
    for _ in 0..refs {
        release();
    }
}

/// Takes the marked entries out of the table: all of them at once where no event is tracked
/// (out of line, so that the mark itself saves fewer registers).
#[cold]
#[inline(never)]
fn tidy(table: &mut Table, tracked: usize) {
    if let Some(held) = table.held.as_mut() {
        match tracked {
            0 => held.clear(),
            _ => held.retain(|_, refs| *refs != UNTRACKED),
        }
    }
    table.untracked = 0;
}

/// Retains (through `retain`) every tracked event libpti holds no reference to, and has every
/// later one retained when it is tracked: for when the program's releases may no longer pass
/// through [`released_by_program`] (see the module docs). Returns how many could not be retained
/// (they stay tracked; the caller says so).
pub(crate) fn hold_all(retain: impl Fn(cl_event) -> bool) -> usize {
    let mut table = TABLE.lock();
    table.eager = true;
    let mut failed = 0;
    // Untracked entries are skipped: their mark is not 0.
    for (event, refs) in table.held.iter_mut().flatten() {
        if *refs == 0 {
            match retain(*event as cl_event) {
                true => *refs = 1,
                false => failed += 1,
            }
        }
    }
    failed
}

/// In the child after `fork()`: the tracked events are the parent's.
pub(super) fn forget_in_child() {
    let mut table = TABLE.lock();
    table.held = None;
    table.untracked = 0;
    TRACKED.store(0, Ordering::Relaxed);
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
    if TRACKED.load(Ordering::Relaxed) == 0 {
        return query();
    }
    let table = TABLE.lock();
    let status = query();
    let ours = table
        .held
        .as_ref()
        .and_then(|m| m.get(&(event as usize)))
        .copied()
        .filter(|&refs| refs != UNTRACKED)
        .unwrap_or(0);
    if status == CL_SUCCESS && !value.is_null() && ours > 0 {
        // SAFETY: the caller's contract; the runtime has just written the count there.
        unsafe { value.write_unaligned(value.read_unaligned().saturating_sub(ours)) };
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// The table is process-wide: the tests share it, one at a time.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The serial lock, also after another test failed holding it.
    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn event(n: usize) -> cl_event {
        (0x5000_0000 + n * 64) as cl_event
    }

    #[test]
    fn an_event_released_after_its_record_costs_no_retain() {
        let _serial = serial();
        let (retains, releases) = (Cell::new(0), Cell::new(0));
        let retain = || {
            retains.set(retains.get() + 1);
            true
        };
        assert!(track(event(1), retain));
        untrack(event(1), || releases.set(releases.get() + 1));
        // The program's release comes after the record: nothing of libpti's to do.
        assert!(released_by_program(event(1), retain));
        assert_eq!((retains.get(), releases.get()), (0, 0));
    }

    #[test]
    fn an_event_released_while_pending_is_retained_once_and_given_back_at_its_record() {
        let _serial = serial();
        let (retains, releases) = (Cell::new(0), Cell::new(0));
        let retain = || {
            retains.set(retains.get() + 1);
            true
        };
        assert!(track(event(2), retain));
        assert!(released_by_program(event(2), retain));
        // A second release of the program's (it had retained the event itself): one reference
        // of libpti's is enough to keep the event.
        assert!(released_by_program(event(2), retain));
        assert_eq!(retains.get(), 1);
        let mut count = 7;
        // SAFETY: `count` is a cl_uint the query writes.
        unsafe { count_query(event(2), &mut count, || CL_SUCCESS) };
        assert_eq!(count, 6, "libpti's reference is hidden from the program");
        untrack(event(2), || releases.set(releases.get() + 1));
        assert_eq!(releases.get(), 1);
    }

    #[test]
    fn a_release_whose_retain_fails_is_kept_until_the_record() {
        let _serial = serial();
        assert!(track(event(5), || true));
        assert!(
            !released_by_program(event(5), || false),
            "the program's release must not go on"
        );
        let mut count = 1;
        // SAFETY: `count` is a cl_uint the query writes.
        unsafe { count_query(event(5), &mut count, || CL_SUCCESS) };
        assert_eq!(count, 0, "the program sees its reference gone");
        let releases = Cell::new(0);
        untrack(event(5), || releases.set(releases.get() + 1));
        assert_eq!(
            releases.get(),
            1,
            "the program's reference is given back with the record"
        );
    }

    #[test]
    fn after_hold_all_every_event_is_retained_when_tracked() {
        let _serial = serial();
        let retains = Cell::new(0);
        let retain = || {
            retains.set(retains.get() + 1);
            true
        };
        /// Back to lazy retains when the test ends, passed or not (the table is shared).
        struct Lazy;
        impl Drop for Lazy {
            fn drop(&mut self) {
                TABLE.lock().eager = false;
            }
        }
        let _lazy = Lazy;
        assert!(track(event(3), retain));
        assert_eq!(retains.get(), 0);
        assert_eq!(hold_all(|_| retain()), 0);
        assert_eq!(retains.get(), 1, "the tracked event is retained");
        assert!(track(event(4), retain));
        assert_eq!(retains.get(), 2, "a new event is retained at once");
        // Their releases by the program need no more references.
        assert!(released_by_program(event(3), retain));
        assert!(released_by_program(event(4), retain));
        assert_eq!(retains.get(), 2);
        let releases = Cell::new(0);
        untrack(event(3), || releases.set(releases.get() + 1));
        untrack(event(4), || releases.set(releases.get() + 1));
        assert_eq!(releases.get(), 2);
        assert_eq!(TRACKED.load(Ordering::Relaxed), 0, "nothing left tracked");
    }

    /// Entries in the table, marked or not.
    fn entries() -> usize {
        TABLE.lock().held.as_ref().map_or(0, HashMap::len)
    }

    #[test]
    fn an_untracked_event_is_as_if_absent_and_may_be_tracked_again() {
        let _serial = serial();
        // Another event stays tracked, so that the table is not cleared.
        assert!(track(event(10), || true));
        assert!(track(event(11), || true));
        untrack(event(11), || {
            panic!("no reference of libpti's to give back")
        });
        assert_eq!(TRACKED.load(Ordering::Relaxed), 1);
        // The program's release goes on without a retain, its count query is untouched.
        assert!(released_by_program(event(11), || panic!("no retain")));
        let mut count = 3;
        // SAFETY: `count` is a cl_uint the query writes.
        unsafe { count_query(event(11), &mut count, || CL_SUCCESS) };
        assert_eq!(count, 3);
        // Untracked twice: nothing to give back the second time either.
        untrack(event(11), || panic!("untracked already"));
        assert_eq!(TRACKED.load(Ordering::Relaxed), 1);
        // The runtime hands the same handle out again: tracked anew, retained on release.
        assert!(track(event(11), || true));
        assert_eq!(TRACKED.load(Ordering::Relaxed), 2);
        let retains = Cell::new(0);
        assert!(released_by_program(event(11), || {
            retains.set(retains.get() + 1);
            true
        }));
        assert_eq!(retains.get(), 1);
        let releases = Cell::new(0);
        untrack(event(11), || releases.set(releases.get() + 1));
        untrack(event(10), || releases.set(releases.get() + 1));
        assert_eq!(releases.get(), 1);
        assert_eq!(TRACKED.load(Ordering::Relaxed), 0);
        assert_eq!(entries(), 0, "nothing tracked: the table is cleared");
    }

    #[test]
    fn untracked_entries_are_swept_while_an_event_stays_tracked() {
        let _serial = serial();
        assert!(track(event(100), || true));
        let mut most = 0;
        for n in 0..10 * SWEEP_AFTER {
            assert!(track(event(200 + n), || true));
            untrack(event(200 + n), || {});
            most = most.max(entries());
        }
        assert!(
            most <= SWEEP_AFTER + 2,
            "{most} entries for one event tracked"
        );
        untrack(event(100), || {});
        assert_eq!((TRACKED.load(Ordering::Relaxed), entries()), (0, 0));
    }
}
