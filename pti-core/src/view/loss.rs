//! What libpti could not record, kept so that it reaches every kind of tool: the loss table
//! behind the `PTI_VIEW_EXT_LOSS` records, and the count of commands that have no record kind.
//!
//! Every loss is noted here as it happens (a cold path: a record dropped, a device record whose
//! data could not be had, a command of a function without a record kind), keyed by lost kind,
//! reason and function, with its first and last time. While `PTI_VIEW_EXT_LOSS` is enabled, each
//! flush (and the exit hook, before the buffers go back) turns the table into loss records on the
//! flushing thread and empties it. The table is small and bounded: its keys are the kinds times
//! four reasons, plus one per function without a record kind.
//!
//! Commands without a record kind are counted per function ([`unrecorded_count`]); the first one
//! of each function raises the critical event `PTI_ERROR_COMMANDS_NOT_RECORDED`, which also
//! reaches the user's log (`crate::log`).
//!
//! May touch: the buffers (appending loss records), critical events, the clock, the user's log
//! (the totals at exit). Never called with a writer's section open.

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::abi::*;
use super::buffer::append;
use crate::api::{ApiGroup, ApiId};
use crate::callback::critical;
use crate::interest::{self, CELLS};
use crate::result::ResultCode;
use crate::sync::writer_lock::WriterLock;
use crate::thread::ThreadState;
use crate::{clock, ids, log};

/// What one loss record sums up.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    kind: pti_view_kind,
    reason: pti_view_loss_reason,
    group: pti_api_group_id,
    api_id: ApiId,
}

/// Losses of one key since its last loss record.
struct Entry {
    key: Key,
    first: u64,
    last: u64,
    count: u64,
}

/// Most keys the table holds; more cannot happen with today's kinds, reasons and functions, and
/// beyond it losses are still counted by the dropped and unrecorded counters, only not itemised.
const MAX_KEYS: usize = 1024;

static TABLE: WriterLock<Vec<Entry>> = WriterLock::new(Vec::new());

/// Notes one loss of `kind` for `reason` (`function`: the function whose commands have no
/// record kind). Losses of loss records are not noted: they would only be lost again.
pub(crate) fn note(
    kind: pti_view_kind,
    reason: pti_view_loss_reason,
    function: Option<(ApiGroup, ApiId)>,
) {
    if kind == pti_view_kind::PTI_VIEW_EXT_LOSS {
        return;
    }
    let (group, api_id) = function
        .map_or((pti_api_group_id::PTI_API_GROUP_RESERVED, 0), |(g, id)| {
            (g.into(), id)
        });
    let key = Key {
        kind,
        reason,
        group,
        api_id,
    };
    let now = clock::now();
    let mut table = TABLE.lock();
    if let Some(e) = table.iter_mut().find(|e| e.key == key) {
        e.count += 1;
        e.last = now;
    } else if table.len() < MAX_KEYS {
        table.push(Entry {
            key,
            first: now,
            last: now,
            count: 1,
        });
    }
}

/// Writes one loss record per key noted since the last call, on this thread, and empties the
/// table (the flush and the exit hook call it while `PTI_VIEW_EXT_LOSS` is enabled).
pub(crate) fn write_pending(state: &ThreadState) {
    let entries = core::mem::take(&mut *TABLE.lock());
    let kind = pti_view_kind::PTI_VIEW_EXT_LOSS;
    for e in entries {
        append(
            state,
            kind,
            pti_view_record_loss {
                _view_kind: pti_view_record_base::of(kind),
                _reason: e.key.reason,
                _first_timestamp: e.first,
                _last_timestamp: e.last,
                _count: e.count,
                _lost_kind: e.key.kind,
                _api_group: e.key.group,
                _api_id: e.key.api_id,
                _process_id: crate::thread::process_id(),
            },
        );
    }
}

/// Per interest cell: successful calls that submitted a command without a record kind while a
/// device view was enabled.
static UNRECORDED: [AtomicU64; CELLS] = [const { AtomicU64::new(0) }; CELLS];

/// Per group: its functions without a record kind and what their commands are, as the backend
/// describes them (`Backend::unrecorded_work`), for the announcement. Set once, before the
/// first enable.
static WHAT: [OnceLock<&'static [(ApiId, &'static str)]>; 3] = [const { OnceLock::new() }; 3];

/// Keeps the descriptions of `group`'s functions without a record kind.
pub(crate) fn describe(group: ApiGroup, functions: &'static [(ApiId, &'static str)]) {
    let _ = WHAT[group.index()].set(functions);
}

fn what(group: ApiGroup, api_id: ApiId) -> &'static str {
    (WHAT[group.index()].get().into_iter().flat_map(|f| f.iter()))
        .find(|(id, _)| *id == api_id)
        .map_or("a command", |(_, what)| *what)
}

/// Counts one command of `api_id`, which has no record kind; the first of the function is
/// announced with a critical event. Called at the EXIT of a successful call.
#[cold]
pub(crate) fn count_unrecorded(group: ApiGroup, api_id: ApiId) {
    if tally_unrecorded(group, api_id) {
        let name = ids::name(group, api_id).map_or("?".into(), |n| n.to_string_lossy());
        critical::raise(
            ResultCode::ErrorCommandsNotRecorded,
            format_args!(
                "{name} submitted {} while a device view was enabled; libpti has no record kind \
                 for it, so each such command is counted instead (ptiViewGetUnrecordedCommandCount, \
                 PTI_VIEW_EXT_LOSS records); said once per function",
                what(group, api_id)
            ),
        );
    }
}

/// Counts one command of `group`'s `api_id` without a record, as [`count_unrecorded`] does, but
/// leaves saying why to the caller (a backend whose reason is not the function's: work on a
/// device of a type no record kind describes). Returns whether it is the function's first.
pub(crate) fn tally_unrecorded(group: ApiGroup, api_id: ApiId) -> bool {
    let Some(cell) = interest::cell(group, api_id) else {
        return false;
    };
    let before = UNRECORDED[cell].fetch_add(1, Ordering::Relaxed);
    note(
        pti_view_kind::PTI_VIEW_INVALID,
        pti_view_loss_reason::PTI_VIEW_LOSS_NO_RECORD_KIND,
        Some((group, api_id)),
    );
    before == 0
}

/// How many commands of `group`'s function `api_id` were submitted, while a device view was
/// enabled, without a record of any kind (their function has none), since the process started
/// (or since fork(), in a child).
pub fn unrecorded_count(group: ApiGroup, api_id: ApiId) -> u64 {
    interest::cell(group, api_id).map_or(0, |c| UNRECORDED[c].load(Ordering::Relaxed))
}

/// Every function with unrecorded commands, and their count (for the exit summary).
pub(crate) fn unrecorded_functions() -> Vec<(ApiGroup, ApiId, u64)> {
    let mut out = Vec::new();
    for group in ApiGroup::ALL {
        for (id, _) in ids::iter(group) {
            let n = unrecorded_count(group, id);
            if n > 0 {
                out.push((group, id, n));
            }
        }
    }
    out
}

/// `fork()` hooks: the table's lock is taken before and released in both processes; the child
/// starts its counts again, as the dropped counts do. The fork handlers take it after every
/// backend's lock, since backends note losses while holding theirs (and nothing is taken under
/// this one).
pub(crate) fn fork_prepare() {
    TABLE.acquire_for_fork();
}

/// In the parent after `fork()`.
pub(crate) fn fork_parent() {
    // SAFETY: fork_prepare took the lock on this thread; no guard is held across fork().
    unsafe { TABLE.release_after_fork() };
}

/// In the child after `fork()`.
pub(crate) fn fork_child() {
    // SAFETY: as in fork_parent; in the child only this thread exists.
    unsafe { TABLE.release_after_fork() };
    TABLE.lock().clear();
    for c in &UNRECORDED {
        c.store(0, Ordering::Relaxed);
    }
}

/// At exit, in the user's log (`crate::log`): one line per kind that lost records (emitted,
/// dropped), and one per function whose commands had no record kind.
pub(crate) fn log_exit_summary() {
    // Nothing lost: no line, and no file opened (a process that had nothing to say leaves no
    // empty log behind).
    for kind in pti_view_kind::ALL
        .into_iter()
        .chain(pti_view_kind::EXTENSIONS)
    {
        if kind.record_size().is_none() {
            continue;
        }
        let dropped = super::dropped_count(kind);
        if dropped > 0 {
            log::line(format_args!(
                "at exit: {dropped} {kind:?} records lost of {} emitted",
                super::emitted_count(kind)
            ));
        }
    }
    for (group, id, n) in unrecorded_functions() {
        let name = ids::name(group, id).map_or("?".into(), |n| n.to_string_lossy());
        log::line(format_args!(
            "at exit: {n} commands of {name} had no record kind (counted, not recorded)"
        ));
    }
}
