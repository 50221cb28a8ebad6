//! Annotations: what a program says about itself through Intel's ITT API (tasks, markers,
//! frames, events), kept as `PTI_VIEW_EXT_ANNOTATION` records on libpti's clock; and the
//! communication that oneCCL describes through ITT, as `PTI_VIEW_COMMUNICATION` records.
//!
//! The C face, the collector interface that ITT's static part loads (`INTEL_LIBITTNOTIFY64`),
//! is pti-capi's `itt` module: it reads ITT's structures and calls the functions here with
//! interned names. This module keeps the open ranges (per thread for nested tasks, frames and
//! events; by ID for overlapped tasks, which may end on another thread) and writes a record when
//! a range ends, if collection ran when it began (a range begun while paused is not recorded,
//! as a command submitted while paused is not).
//!
//! Communication: oneCCL 2021.14 (read at its commit b382bf76, `src/sched/sched_timer.cpp`,
//! `src/coll/coll.cpp`) opens a task in the domain `oneCCL::API` around each collective, named
//! by the operation (`allreduce`, `allgatherv`, `reduce_scatter`, `alltoall`, `bcast`, `barrier`,
//! `send`, `recv`, ...; `allreduce_small` and the like on its SYCL fast path), and adds the bytes
//! as the metadata `send_size` right after the begin; newer versions add `comm_id`. Each such
//! task, once ended, is also a communication record with those sizes. Tested with the `ittapi`
//! package emitting these names, not against oneCCL itself.

use core::cell::{Cell, RefCell};
use core::ffi::{CStr, c_char};
use std::collections::HashMap;

use crate::recent::{Recent, recall, remember};
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::abi::{pti_view_annotation_type, pti_view_kind};
use crate::{clock, thread, view};

/// The ITT domain whose tasks are oneCCL's collectives.
pub const ONECCL_DOMAIN: &CStr = c"oneCCL::API";

/// The copy of an ITT name (a domain, a task name, a metadata key) that lives as long as libpti:
/// the program's strings may be freed (Python frees ITT's at exit), records keep theirs.
pub fn name(text: &CStr) -> &'static CStr {
    crate::intern::intern(text)
}

thread_local! {
    /// The names this thread interned lately, by the address of the program's string.
    static NAMES: Recent<usize, &'static CStr, 8> = const { Cell::new([None; 8]) };
}

/// [`name`] of the C string at `text`, remembered per thread by its address (a program's loop
/// passes the same domain and string handle every time) and checked against the bytes there,
/// since the program may free a string and make another at the same address.
///
/// # Safety
/// `text` points to a NUL-terminated string.
pub unsafe fn name_at(text: *const c_char) -> &'static CStr {
    // SAFETY: the caller's contract.
    let here = unsafe { CStr::from_ptr(text) };
    if let Some(known) = recall(&NAMES, text as usize)
        && known == here
    {
        return known;
    }
    let interned = name(here);
    remember(&NAMES, text as usize, interned);
    interned
}

/// Whether a range beginning now may be of use: the tool enabled the annotation view or the
/// communication view (paused or not). Otherwise the ITT face returns at once.
#[inline]
pub fn wanted() -> bool {
    view::is_configured(pti_view_kind::PTI_VIEW_EXT_ANNOTATION)
        || view::is_configured(pti_view_kind::PTI_VIEW_COMMUNICATION)
}

/// Whether this thread has a nested range open (an end without one has nothing to do).
#[inline]
pub fn any_open() -> bool {
    NESTED.try_with(|n| !n.borrow().is_empty()).unwrap_or(false)
}

/// The path of the libpti the process loaded first, if it is not the one holding `own` (an
/// address in this copy): ITT's static part loads its collector by the path
/// `INTEL_LIBITTNOTIFY64` names, which may be another file than the libpti the tools use (a
/// wheel's, found through `LD_LIBRARY_PATH` elsewhere); that one must get the annotations.
pub fn first_libpti_elsewhere(own: *const core::ffi::c_void) -> Option<String> {
    let (_, mine) = crate::linker::object_of(own)?;
    let mine = std::fs::canonicalize(mine.to_string_lossy().as_ref()).ok()?;
    crate::linker::mapped_objects()
        .into_iter()
        .find(|path| crate::linker::file_name(path).starts_with("libpti.so"))
        .filter(|first| std::fs::canonicalize(first).ok().as_ref() != Some(&mine))
}

/// A range that began and has not ended.
#[derive(Clone, Copy)]
struct Open {
    kind: pti_view_annotation_type,
    domain: &'static CStr,
    name: &'static CStr,
    start: u64,
    id: u64,
    parent: u64,
    /// Collection ran when it began: it is recorded when it ends.
    recorded: bool,
    /// Metadata added while it was the innermost range of its domain on its thread.
    send: u64,
    recv: u64,
    communicator: u64,
}

thread_local! {
    /// This thread's open nested ranges, innermost last.
    static NESTED: RefCell<Vec<Open>> = const { RefCell::new(Vec::new()) };
}

/// An ITT task ID whole (`__itt_id`'s three words): programs make IDs that share the first word
/// (`__itt_id_make(&object, n)`), so overlapped tasks are matched on all three.
pub type TaskId = [u64; 3];

/// Open overlapped tasks, by domain and whole ID (they may end on another thread, in any
/// order).
static OVERLAPPED: WriterLock<Vec<(usize, TaskId, Open)>> = WriterLock::new(Vec::new());

/// Objects the C face made for ITT (domains and string handles), by the address of their
/// interned name, as addresses (see [`made`]).
static MADE: WriterLock<Option<HashMap<(u8, usize), usize>>> = WriterLock::new(None);

/// The names of ITT's legacy events, by their number less one.
static EVENTS: WriterLock<Vec<&'static CStr>> = WriterLock::new(Vec::new());

/// The locks of this module, for the fork handlers.
pub(crate) fn fork_locks() -> [&'static dyn ForkLock; 3] {
    [&OVERLAPPED, &EVENTS, &MADE]
}

/// The object of kind `kind` (a number the caller chooses: one per kind of object) made for
/// `name`, or the one `make` builds now, kept for the life of the process. For the ITT face,
/// whose domains and string handles must stay valid while the program runs; the lock is one the
/// fork handlers take, so a fork while another thread makes one cannot leave it held.
pub fn made(kind: u8, name: &'static CStr, make: impl FnOnce() -> usize) -> usize {
    *MADE
        .lock()
        .get_or_insert_with(HashMap::default)
        .entry((kind, name.as_ptr() as usize))
        .or_insert_with(make)
}

/// Whether a range beginning now is to be recorded: the annotation view collects, or, for
/// oneCCL's domain, the communication view does.
fn collecting(domain: &CStr) -> bool {
    view::is_enabled(pti_view_kind::PTI_VIEW_EXT_ANNOTATION)
        || (domain == ONECCL_DOMAIN && view::is_enabled(pti_view_kind::PTI_VIEW_COMMUNICATION))
}

fn open(
    kind: pti_view_annotation_type,
    domain: &'static CStr,
    name: &'static CStr,
    (id, parent): (u64, u64),
) -> Open {
    Open {
        kind,
        domain,
        name,
        start: clock::now(),
        id,
        parent,
        recorded: collecting(domain),
        send: 0,
        recv: 0,
        communicator: 0,
    }
}

/// `__itt_task_begin`: a task of `domain` named `name` begins on this thread, nested in the
/// ones open there. `id` and `parent` are the task IDs the program gave (0 for none).
pub fn task_begin(domain: &'static CStr, name: &'static CStr, id: u64, parent: u64) {
    begin_nested(open(
        pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_TASK,
        domain,
        name,
        (id, parent),
    ));
}

/// `__itt_task_end`: the innermost task of `domain` open on this thread ends. Without one,
/// nothing happens (ITT's own rule).
pub fn task_end(domain: &'static CStr) {
    end_nested(|o| {
        o.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_TASK && o.domain == domain
    });
}

/// `__itt_frame_begin_v3`: a frame of `domain` begins on this thread.
pub fn frame_begin(domain: &'static CStr, id: u64) {
    begin_nested(open(
        pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_FRAME,
        domain,
        domain,
        (id, 0),
    ));
}

/// `__itt_frame_end_v3`: the innermost frame of `domain` open on this thread ends.
pub fn frame_end(domain: &'static CStr) {
    end_nested(|o| {
        o.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_FRAME && o.domain == domain
    });
}

/// Opens `range` on this thread, inside the ranges open there.
fn begin_nested(range: Open) {
    let _ = NESTED.try_with(|n| n.borrow_mut().push(range));
}

/// Ends the innermost range open on this thread that `matches`, and writes it (its depth: how
/// many ranges were open around it). Returns whether one was open.
fn end_nested(matches: impl Fn(&Open) -> bool) -> bool {
    let end = clock::now();
    let ended = NESTED.try_with(|n| {
        let mut n = n.borrow_mut();
        let at = n.iter().rposition(&matches)?;
        Some((n.remove(at), at as u32))
    });
    let Ok(Some((range, depth))) = ended else {
        return false;
    };
    write(&range, end, depth);
    true
}

/// `__itt_task_begin_overlapped`: a task that may overlap others of its thread, and end on any
/// thread, by `(domain, id)` (the record keeps the ID's first word).
pub fn overlapped_begin(domain: &'static CStr, name: &'static CStr, id: TaskId, parent: u64) {
    let task = open(
        pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_OVERLAPPED_TASK,
        domain,
        name,
        (id[0], parent),
    );
    OVERLAPPED.lock().push((domain.as_ptr() as usize, id, task));
}

/// `__itt_task_end_overlapped`: the overlapped task `(domain, id)` ends (the latest begun, if
/// the program began two with the same ID).
pub fn overlapped_end(domain: &'static CStr, id: TaskId) {
    let end = clock::now();
    let key = domain.as_ptr() as usize;
    let task = {
        let mut open = OVERLAPPED.lock();
        let Some(at) = open.iter().rposition(|(d, i, _)| *d == key && *i == id) else {
            return;
        };
        open.swap_remove(at).2
    };
    write(&task, end, 0);
}

/// `__itt_marker`: an instant of `domain` named `name`.
pub fn marker(domain: &'static CStr, name: &'static CStr, id: u64) {
    let mark = open(
        pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_MARKER,
        domain,
        name,
        (id, 0),
    );
    let depth = NESTED.try_with(|n| n.borrow().len() as u32).unwrap_or(0);
    write(&mark, mark.start, depth);
}

/// `__itt_metadata_add` with an unsigned number: `send_size`, `recv_size` and `comm_id` are kept
/// on the innermost task of `domain` open on this thread (its communication record carries
/// them); other keys are not kept.
pub fn metadata_u64(domain: &CStr, key: &CStr, value: u64) {
    let _ = NESTED.try_with(|n| {
        let mut n = n.borrow_mut();
        let Some(task) = n.iter_mut().rev().find(|o| o.domain == domain) else {
            return;
        };
        match key.to_bytes() {
            b"send_size" => task.send = value,
            b"recv_size" => task.recv = value,
            b"comm_id" => task.communicator = value,
            _ => {}
        }
    });
}

/// `__itt_event_create`: the number of the legacy event named `name` (from 1; the same name
/// gets the same number).
pub fn event_create(name: &'static CStr) -> i32 {
    let mut events = EVENTS.lock();
    if let Some(at) = events.iter().position(|e| *e == name) {
        return at as i32 + 1;
    }
    events.push(name);
    events.len() as i32
}

/// The domain of the legacy events.
const EVENT_DOMAIN: &CStr = c"ITT event";

/// `__itt_event_start`: event `event` begins on this thread. Returns 0, or -1 for an unknown
/// event.
pub fn event_start(event: i32) -> i32 {
    if !wanted() {
        return 0;
    }
    let Some(name) = event_name(event) else {
        return -1;
    };
    begin_nested(open(
        pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_EVENT,
        EVENT_DOMAIN,
        name,
        (event as u64, 0),
    ));
    0
}

/// `__itt_event_end`: the innermost open event `event` on this thread ends. Returns 0, or -1 when
/// none is open.
pub fn event_end(event: i32) -> i32 {
    let ended = end_nested(|o| {
        o.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_EVENT && o.id == event as u64
    });
    if ended { 0 } else { -1 }
}

fn event_name(event: i32) -> Option<&'static CStr> {
    let index = usize::try_from(event.checked_sub(1)?).ok()?;
    EVENTS.lock().get(index).copied()
}

/// Writes the records of a range that ended at `end` (none if collection did not run when it
/// began): an annotation, and for a task of oneCCL's domain a communication record.
fn write(range: &Open, end: u64, depth: u32) {
    if !range.recorded {
        return;
    }
    thread::with_any(|state| {
        view::annotation::annotation(
            state,
            &view::annotation::Annotation {
                kind: range.kind,
                domain: range.domain,
                name: range.name,
                start: range.start,
                end,
                id: range.id,
                parent: range.parent,
                depth,
            },
        );
        if range.domain == ONECCL_DOMAIN
            && range.kind != pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_MARKER
        {
            view::annotation::communication(
                state,
                &view::annotation::Communication {
                    name: range.name,
                    start: range.start,
                    end,
                    send: range.send,
                    recv: range.recv,
                    communicator: range.communicator,
                },
            );
        }
    });
}

/// In a child forked without `exec`: the parent's overlapped tasks are the parent's.
pub(crate) fn forget_in_child() {
    OVERLAPPED.lock().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's open nested ranges, by name.
    fn open_names() -> Vec<&'static CStr> {
        NESTED.with(|n| n.borrow().iter().map(|o| o.name).collect())
    }

    #[test]
    fn a_task_end_closes_the_innermost_task_of_its_domain_only() {
        let (outer, inner) = (c"test::outer", c"test::inner");
        task_begin(outer, c"a", 1, 0);
        task_begin(inner, c"b", 2, 1);
        task_begin(outer, c"c", 3, 1);
        assert!(any_open());
        task_end(outer);
        assert_eq!(open_names(), [c"a", c"b"]);
        // A frame of the domain is no task: a task end leaves it open.
        frame_begin(outer, 4);
        task_end(outer);
        assert_eq!(open_names(), [c"b", c"test::outer"]);
        frame_end(outer);
        task_end(inner);
        assert!(!any_open());
        // Nothing open: an end does nothing (ITT's rule).
        task_end(inner);
        assert!(!any_open());
    }

    #[test]
    fn metadata_goes_to_the_innermost_task_of_its_domain() {
        task_begin(ONECCL_DOMAIN, c"allreduce", 0, 0);
        task_begin(c"test::other", c"x", 0, 0);
        metadata_u64(ONECCL_DOMAIN, c"send_size", 4096);
        metadata_u64(ONECCL_DOMAIN, c"comm_id", 7);
        metadata_u64(ONECCL_DOMAIN, c"unknown_key", 1);
        metadata_u64(c"test::none_open", c"send_size", 1);
        let kept = NESTED.with(|n| {
            let n = n.borrow();
            (n[0].send, n[0].recv, n[0].communicator, n[1].send)
        });
        assert_eq!(kept, (4096, 0, 7, 0));
        task_end(c"test::other");
        task_end(ONECCL_DOMAIN);
        assert!(!any_open());
    }

    #[test]
    fn overlapped_tasks_end_by_domain_and_whole_id_latest_first() {
        let domain = name(c"test::overlapped");
        let open_of = |id: TaskId| {
            let key = domain.as_ptr() as usize;
            OVERLAPPED
                .lock()
                .iter()
                .filter(|(d, i, _)| *d == key && *i == id)
                .map(|(_, _, o)| o.name)
                .collect::<Vec<_>>()
        };
        // Two IDs that share their first word, as `__itt_id_make(&object, n)` makes them.
        overlapped_begin(domain, c"first", [9, 1, 0], 0);
        overlapped_begin(domain, c"second", [9, 2, 0], 0);
        overlapped_begin(domain, c"again", [9, 1, 0], 0);
        overlapped_end(domain, [9, 1, 0]);
        assert_eq!(open_of([9, 1, 0]), [c"first"]);
        assert_eq!(open_of([9, 2, 0]), [c"second"]);
        // Another domain's end, or an ID never begun, ends nothing.
        overlapped_end(c"test::elsewhere", [9, 2, 0]);
        overlapped_end(domain, [9, 3, 0]);
        assert_eq!(open_of([9, 2, 0]), [c"second"]);
        overlapped_end(domain, [9, 1, 0]);
        overlapped_end(domain, [9, 2, 0]);
        assert!(open_of([9, 1, 0]).is_empty() && open_of([9, 2, 0]).is_empty());
    }

    #[test]
    fn legacy_events_are_numbered_by_name_from_one() {
        let a = event_create(name(c"test::event a"));
        let b = event_create(name(c"test::event b"));
        assert!(a >= 1 && b == a + 1);
        assert_eq!(event_create(name(c"test::event a")), a);
        assert_eq!(event_name(a), Some(c"test::event a"));
        assert_eq!(
            (event_name(0), event_name(-3), event_name(i32::MAX)),
            (None, None, None)
        );
        // No view wants it: a start is accepted and opens nothing, an end finds nothing open.
        assert_eq!(event_start(a), 0);
        assert_eq!(event_end(a), -1);
    }

    #[test]
    fn a_name_is_read_again_when_its_address_holds_other_bytes() {
        let mut text = *b"first\0";
        // SAFETY: a NUL-terminated buffer.
        let one = unsafe { name_at(text.as_ptr().cast()) };
        assert_eq!(one, c"first");
        text[..5].copy_from_slice(b"other");
        // SAFETY: as above, at the same address.
        let two = unsafe { name_at(text.as_ptr().cast()) };
        assert_eq!(two, c"other");
        // Interned: the copy outlives the program's string.
        assert_ne!(two.as_ptr(), text.as_ptr().cast());
    }

    #[test]
    fn an_object_is_made_once_per_kind_and_name() {
        let n = name(c"test::made");
        let mut calls = 0;
        let first = made(1, n, || {
            calls += 1;
            100
        });
        let again = made(1, n, || {
            calls += 1;
            200
        });
        let other_kind = made(2, n, || 300);
        assert_eq!((first, again, other_kind, calls), (100, 100, 300, 1));
    }
}
