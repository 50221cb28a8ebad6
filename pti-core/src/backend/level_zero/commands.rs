//! Device commands on Level Zero command lists, from the append that submits or records one to
//! its record.
//!
//! - An append is *prepared* in its prologue ([`prepare`]): when the call is traced and the
//!   command's view is enabled, libpti decides how to time it ([`Source`]): with an event of its
//!   own put in the signal slot where the program passed none, else with the event the program
//!   passed (which has kernel timestamps: libpti adds them to the pools and counter-based events
//!   the program creates while a device view is enabled, see `pools`). Before the append may
//!   change one of the program's events that a command still being timed reads, `guards` records
//!   or copies that command first. The epilogue ([`complete`]) puts the program's argument back
//!   before the EXIT callbacks, and notices another tool that swapped the event after libpti's
//!   prologue (the command then signals that tool's event, whose timestamps libpti copies right
//!   away).
//! - On an immediate list the command is pending at once (recorded at once on a synchronous
//!   one); on a regular list, or an immediate list capturing a graph, it is kept with the list
//!   (`objects::Recorded`) and becomes pending at each execution of the list or replay of the
//!   graph (`executions`), with the correlation ID of the execute call.
//! - Subscribers of GPU operations hear of each prepared append at its ENTER and EXIT
//!   ([`Appending`]), and of its completion when its record is written.
//! - A pending command is recorded when its source has the timestamps ([`ZeCommand`], harvested
//!   as in `backend::device::pending`; commands of an in-order list are settled by the newest
//!   completed one, without a status query each).

use core::sync::atomic::{AtomicBool, Ordering};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use pti_sys::level_zero::*;

use super::devices::{self, Device};
use super::objects::{self, List, Recorded};
use super::source::{self, Source, Timed};
use super::tracer::{internal, loader};
use super::{events, guards};
use crate::api::{ApiGroup, ApiId};
use crate::backend::device::command::{Appending, Finished, Submission, Work};
use crate::backend::device::pending::{self, Pending, PendingCommand};
use crate::callback::critical;
use crate::callback::device::next_operation_id;
use crate::dispatch::open;
use crate::result::ResultCode;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread::ThreadState;
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view::abi::{pti_view_kind, pti_view_memory_type};
use crate::view::device::{self as records, Engine, Execution};
use crate::{Site, clock, fault, thread, view};

/// libpti's resources a pending command gives back when it is recorded (or lost).
#[derive(Default)]
pub(super) struct GiveBack {
    pub(super) events: Vec<ze_event_handle_t>,
    pub(super) slots: Vec<usize>,
    /// A snapshot list the command's timestamps were copied by (destroyed with its last user).
    pub(super) snapshot: Option<Arc<super::executions::Snapshot>>,
}

// SAFETY: handles are opaque values passed back to the driver; slots are libpti's memory.
unsafe impl Send for GiveBack {}

impl GiveBack {
    fn give(self, context: ze_context_handle_t) {
        for e in self.events {
            events::give(context, e);
        }
        for s in self.slots {
            events::give_slot(context, s);
        }
    }
}

/// A command waiting for its timestamps.
pub(super) struct ZeCommand {
    pub(super) source: Source,
    pub(super) give_back: GiveBack,
    pub(super) list: ze_command_list_handle_t,
    pub(super) context: ze_context_handle_t,
    pub(super) device: Arc<Device>,
    pub(super) engine: Engine,
    /// The append call that put it on its list (its correlation ID and thread are the record's).
    pub(super) submission: Submission,
    /// On a regular list or a graph, the execution it belongs to (recorded in
    /// PTI_VIEW_EXT_COMMAND_EXECUTION).
    pub(super) execution: Option<Execution>,
    /// Host times: the append call, and the start of the call that submitted it (the lower bound
    /// of its device times).
    pub(super) appended: u64,
    pub(super) submitted: u64,
    /// The in-order stream its source completes in (None: no order to rely on).
    pub(super) stream: Option<usize>,
    /// Its source is an event of the program's that earlier executions signalled too (a regular
    /// list's): timestamps already recorded from it mean "not yet".
    pub(super) reexecuted: bool,
    /// Its claim on the program's event it reads, if it reads one (see `guards`).
    pub(super) reader: Option<guards::Reader>,
    /// A snapshot that resets its event before its execution runs: until the snapshot has run,
    /// the event still shows the earlier execution's signal (see `executions`).
    pub(super) gate: Option<Arc<super::executions::Snapshot>>,
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread.
unsafe impl Send for ZeCommand {}

pub(super) static PENDING: Pending<ZeCommand> = Pending::new();

/// The kernel timestamps last recorded from each event of the program's a re-executed command
/// reads, with the event's context: an event that still holds them has not signalled again yet
/// (a regular event is not reset between executions unless the program resets it).
static LAST_SEEN: WriterLock<Option<HashMap<usize, Seen>>> = WriterLock::new(None);

/// What [`LAST_SEEN`] keeps of an event: its context, and the start and end last recorded.
type Seen = (usize, u64, u64);

/// The locks of this module, for the fork handlers (the pending list's, then `LAST_SEEN`).
pub(super) fn fork_locks() -> Vec<&'static dyn ForkLock> {
    let mut locks = PENDING.fork_locks();
    locks.push(&LAST_SEEN);
    locks
}

/// In the child after `fork()`: the parent's commands and events are forgotten.
pub(super) fn forget_in_child() {
    PENDING.forget_in_child();
    *LAST_SEEN.lock() = None;
}

fn already_seen(event: ze_event_handle_t, ts: &ze_kernel_timestamp_result_t) -> bool {
    LAST_SEEN
        .lock()
        .as_ref()
        .and_then(|m| m.get(&(event as usize)).copied())
        .is_some_and(|(_, start, end)| (start, end) == (ts.global.kernelStart, ts.global.kernelEnd))
}

fn seen(event: ze_event_handle_t, context: ze_context_handle_t, ts: &ze_kernel_timestamp_result_t) {
    LAST_SEEN
        .lock()
        .get_or_insert_with(HashMap::default)
        .insert(
            event as usize,
            (context as usize, ts.global.kernelStart, ts.global.kernelEnd),
        );
}

/// Forgets what was recorded from `event` (the program resets or destroys it).
pub(super) fn forget_seen(event: ze_event_handle_t) {
    if let Some(m) = LAST_SEEN.lock().as_mut() {
        m.remove(&(event as usize));
    }
}

impl ZeCommand {
    /// Whether a snapshot before its execution has not run yet.
    fn gated(&self) -> bool {
        self.gate.as_ref().is_some_and(|g| !g.done())
    }

    /// A re-executed command's timestamps that are those of an earlier execution: not yet.
    fn stale(&self, outcome: &Option<Result<Timed, ze_result_t>>) -> bool {
        match (self.reexecuted, &self.source, outcome) {
            (true, Source::Borrowed(e), Some(Ok(Timed::Kernel(ts)))) => already_seen(*e, ts),
            _ => false,
        }
    }
}

impl PendingCommand for ZeCommand {
    type Outcome = Result<Timed, ze_result_t>;

    fn poll(&self) -> Option<Self::Outcome> {
        if self.gated() {
            return None;
        }
        let outcome = source::poll(&self.source);
        if self.stale(&outcome) {
            return None;
        }
        outcome
    }

    fn completed(&self) -> Option<bool> {
        if self.gated() {
            return Some(false);
        }
        let event = self.source.status_event()?;
        source::signalled(event).ok()
    }

    fn read(&self) -> Option<Self::Outcome> {
        if self.gated() {
            return None;
        }
        let outcome = source::read(&self.source);
        if self.stale(&outcome) {
            return None;
        }
        outcome
    }

    fn finish(&mut self, outcome: Self::Outcome, state: Option<&ThreadState>) {
        if let (Ok(Timed::Kernel(ts)), Some(e)) = (&outcome, self.source.borrowed()) {
            seen(e, self.context, ts);
        }
        let (give_back, context) = (core::mem::take(&mut self.give_back), self.context);
        // Records are written without holding libpti's resources: give back afterwards.
        let (start, end) = match outcome {
            Ok(Timed::Kernel(ts)) => {
                let h = devices::to_host(
                    &self.device,
                    ts.global.kernelStart,
                    ts.global.kernelEnd,
                    self.submitted,
                );
                (h.start, h.end)
            }
            Ok(Timed::Host { seen }) => (self.submitted, seen.max(self.submitted)),
            Err(_) if matches!(self.source, Source::Untimed(_)) => {
                let Source::Untimed(why) = self.source else {
                    return;
                };
                untimed(
                    self.submission.view(devices::records_as_cpu(&self.device)),
                    why,
                );
                give_back.give(context);
                return;
            }
            Err(code) => {
                let why = match self.source {
                    Source::Untimed(why) => why.to_string(),
                    Source::Copied { .. } => format!(
                        "the copy libpti made of its timestamps found none (0x{code:x}): the \
                         event it signals was reset or re-armed before the copy ran"
                    ),
                    _ => format!("the Level Zero driver gave no kernel timestamps (0x{code:x})"),
                };
                self.submission.lost(
                    devices::records_as_cpu(&self.device),
                    ResultCode::ErrorRecordsDropped,
                    &why,
                );
                give_back.give(context);
                return;
            }
        };
        Finished {
            submission: &self.submission,
            queue: self.list.cast(),
            context: self.context.cast(),
            device: &self.device.identity,
            device_is_cpu: devices::records_as_cpu(&self.device),
            engine: self.engine,
            event: match self.source {
                Source::Borrowed(e) => e.cast(),
                _ => core::ptr::null_mut(),
            },
            // The conversion keeps the start at or after the submitting call's start.
            append: self.appended,
            submit: self.submitted,
            start,
            end,
        }
        .record(state);
        if let Some(execution) = &self.execution {
            let operation_id = self.submission.operation_id;
            thread::with_or_any(state, |state| {
                records::command_execution(state, operation_id, execution)
            });
        }
        give_back.give(context);
    }

    fn view(&self) -> pti_view_kind {
        self.submission.view(devices::records_as_cpu(&self.device))
    }

    fn in_order_stream(&self) -> Option<usize> {
        self.stream
    }

    const SETTLED_BY_STREAM: bool = true;
}

/// An append between its prologue and its epilogue.
struct Prepared {
    list: Arc<List>,
    work: Work,
    api_id: ApiId,
    source: Source,
    /// The program's signal event (NULL if none).
    program: ze_event_handle_t,
    /// What libpti left in the signal slot (its event, or the program's).
    left: ze_event_handle_t,
    /// The program's event may still show an earlier use when this command completes: its
    /// timestamps are copied right after the command instead of read from it.
    copy_after: bool,
    entered: u64,
    /// The command's operation ID, reported at ENTER and carried by its (first) record.
    operation_id: u64,
}

impl Prepared {
    /// What GPU-operation callbacks hear of this append.
    fn appending(&self, token: usize) -> Appending {
        let list = &self.list;
        Appending {
            group: ApiGroup::LevelZero,
            api_id: self.api_id,
            correlation_id: open::correlation_id(token),
            context: list.context.cast(),
            list: list.handle.cast(),
            queue: if list.immediate {
                list.handle.cast()
            } else {
                core::ptr::null_mut()
            },
            device: list.device.cast(),
            immediate: list.immediate,
            operation: self
                .work
                .operation(ApiGroup::LevelZero, self.api_id, self.operation_id),
        }
    }
}

thread_local! {
    /// Appends between their prologue and epilogue, by token.
    static PREPARED: ThreadStack<usize, Prepared> = const { ThreadStack::new() };
}

/// The memory kind of `ptr` in `context`, from `zeMemGetAllocProperties`.
pub(super) fn memory_type(
    context: ze_context_handle_t,
    ptr: *const core::ffi::c_void,
) -> pti_view_memory_type {
    let get = loader().and_then(|l| l.zeMemGetAllocProperties);
    let Some(get) = get.filter(|_| !context.is_null()) else {
        return pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY;
    };
    // SAFETY: all-zero bytes are a valid properties structure.
    let mut props: ze_memory_allocation_properties_t = unsafe { core::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    // SAFETY: a context and a pointer the program passed to a call; a writable structure.
    let status = internal(|| unsafe { get(context, ptr, &mut props, core::ptr::null_mut()) });
    match (status, props.type_) {
        (ZE_RESULT_SUCCESS, ZE_MEMORY_TYPE_HOST) => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_HOST,
        (ZE_RESULT_SUCCESS, ZE_MEMORY_TYPE_DEVICE) => {
            pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_DEVICE
        }
        (ZE_RESULT_SUCCESS, ZE_MEMORY_TYPE_SHARED) => {
            pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_SHARED
        }
        _ => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY,
    }
}

/// A command libpti cannot time, for `why`: counted lost, and said once per reason.
fn untimed(view: pti_view_kind, why: &'static str) {
    static SAID: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    let total = view::count_lost(view);
    let first = {
        let mut said = SAID
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = why.as_ptr() as usize;
        let first = !said.contains(&key);
        if first {
            said.push(key);
        }
        first
    };
    if first {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "Level Zero commands are not timed: {why}; their records are lost and counted \
                 per view ({total} so far in {view:?}); said once for this reason"
            ),
        );
    }
}

/// Commands on lists created before libpti attached: counted, reported once.
fn unknown_list(view: pti_view_kind) {
    static REPORTED: AtomicBool = AtomicBool::new(false);
    let total = view::count_lost(view);
    if !REPORTED.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "Level Zero commands are appended to a command list created before libpti \
                 attached to Level Zero, whose context and device it does not know: their \
                 records are lost and counted per view ({total} so far in {view:?})"
            ),
        );
    }
}

/// Whether the program's `event` was signalled or reset before by a command libpti saw, without
/// a host reset since: on an immediate list, since that reset (`guards::used`); on a recording
/// list, signalled earlier in the recording. Its status may then still show that earlier use when the
/// command that signals it now completes.
fn used_before(event: ze_event_handle_t, list: &List) -> bool {
    if !list.records() {
        return guards::is_dirty(event);
    }
    // A reset alone earlier in the recording runs before the command at each execution; an
    // earlier signal in the same execution is what may still show.
    list.recording().commands.iter().any(|r| r.signal == event)
}

/// Work on an NPU (a device of type `ZE_DEVICE_TYPE_VPU`): no record kind is an NPU's (its
/// commands are no GPU's kernels or copies), so each is counted with the commands of no record
/// kind, and said once.
fn npu_work(api_id: ApiId) {
    static SAID: AtomicBool = AtomicBool::new(false);
    view::loss::tally_unrecorded(ApiGroup::LevelZero, api_id);
    if !SAID.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorCommandsNotRecorded,
            format_args!(
                "Level Zero commands are appended for an NPU (a device of type VPU): the view \
                 API has no record kind for an NPU's work, so each is counted instead \
                 (ptiViewGetUnrecordedCommandCount, PTI_VIEW_EXT_LOSS records); said once"
            ),
        );
    }
}

/// Why a command signalling `event` cannot be timed, if it cannot.
pub(super) fn untimed_because(event: ze_event_handle_t) -> Option<&'static str> {
    match objects::event(event) {
        Some(e) if e.timestamps => None,
        Some(_) => Some(
            "the event it signals has no kernel timestamps (its pool or the event was created \
             before a device view was enabled, or is an IPC one), and libpti does not change a \
             program's events",
        ),
        None => Some(
            "it signals an event libpti did not see created (made before libpti attached to \
             Level Zero, or by another tool's own calls), whose timestamps it cannot know",
        ),
    }
}

/// The prologue of an append (see the module docs). `signal` is the call's signal-event
/// parameter, which receives libpti's event where the program passed none.
pub(super) fn prepare(
    token: usize,
    api_id: ApiId,
    list_handle: ze_command_list_handle_t,
    signal: &mut ze_event_handle_t,
    work: impl FnOnce(Option<&List>) -> Work,
) {
    if token == 0 || !view::any_device_view_configured() {
        return;
    }
    let Some(list) = objects::list(list_handle) else {
        let work = work(None);
        if view::is_enabled(work.view(false)) {
            unknown_list(work.view(false));
        }
        return;
    };
    let work = work(Some(&list));
    let device = devices::get(list.device);
    if device.info.npu {
        return npu_work(api_id);
    }
    let view = work.view(devices::records_as_cpu(&device));
    // An immediate list's command runs now: recorded if collection runs now. A recorded one runs
    // at each execution: prepared whenever the tool enabled the view, even while paused, and
    // recorded for the executions made while collection runs (`executions`).
    let recorded = list.records();
    let wanted = if recorded {
        view::is_configured(view)
    } else {
        view::is_enabled(view)
    };
    if !wanted {
        return;
    }
    let program = *signal;
    let mut copy_after = false;
    if !program.is_null() {
        // The append re-arms or signals the program's event again: what still reads it first.
        guards::before_change(program, &list);
        copy_after = used_before(program, &list);
    }
    let source = if program.is_null() {
        match events::take(list.context) {
            Some(event) => Source::Own(event),
            None => Source::Untimed("libpti could not create a timestamp event"),
        }
    } else {
        match untimed_because(program) {
            None => Source::Borrowed(program),
            Some(why) => Source::Untimed(why),
        }
    };
    let left = match source {
        Source::Own(event) => event,
        _ => program,
    };
    let prepared = Prepared {
        list,
        work,
        api_id,
        source,
        program,
        left,
        copy_after,
        entered: clock::now(),
        operation_id: next_operation_id(),
    };
    let appending = prepared.appending(token);
    let context = prepared.list.context;
    // The argument changes only once the epilogue is sure to find what to put back (and last:
    // a prologue that panics before leaves the program's arguments as they were).
    let kept = PREPARED.push(token, prepared);
    if kept {
        appending.report(Site::Enter, None);
    }
    match (kept, source) {
        (true, Source::Own(event)) => *signal = event,
        (false, Source::Own(event)) => events::give(context, event),
        _ => {}
    }
}

/// The epilogue of an append: the program's argument back, and the command pending (immediate
/// list) or kept with its list (regular list, graph capture).
pub(super) fn complete(token: usize, result: ze_result_t, signal: &mut ze_event_handle_t) {
    if token == 0 {
        return;
    }
    fault::point("level_zero.append_epilogue");
    let Some(prepared) = PREPARED.take(token) else {
        return;
    };
    // What the driver got, before libpti puts the program's argument back. The loader runs the
    // epilogues in the order of the prologues: where another tool's prologue, after libpti's,
    // replaced libpti's event, that tool's epilogue, still to come, expects its own event in
    // the slot (and puts back what it found there): the slot is left to it.
    let actual = *signal;
    if let (Source::Own(_), true) = (prepared.source, actual == prepared.left) {
        *signal = prepared.program;
    }
    prepared
        .appending(token)
        .report(Site::Exit, Some(result as i32));
    let list = &prepared.list;
    if result != ZE_RESULT_SUCCESS {
        // Nothing was appended: libpti's event is free again.
        if let Source::Own(event) = prepared.source {
            events::give(list.context, event);
        }
        return;
    }
    if !actual.is_null() && !list.records() {
        guards::used(actual);
    }
    let mut give_back = GiveBack::default();
    // An event used before may still show that earlier use when this command completes: a
    // signal not reset yet, or a reset not run yet (an earlier command may even still be running,
    // its signal to come). Its status cannot tell this command's completion.
    let stale = matches!(prepared.source, Source::Borrowed(_)) && prepared.copy_after;
    let source = if stale && !list.in_order {
        Source::Untimed(
            "it signals an event of the program's that was signalled or reset before without a \
             host reset, on a list that is not in order: the event cannot tell when this command \
             completed, nor can a copy of its timestamps be ordered after it",
        )
    } else if let (Source::Borrowed(event), true) = (prepared.source, stale) {
        // The event may still show an earlier use: the command's own timestamps are copied
        // right after it (in order: after it completed).
        match guards::copy(list, event) {
            Some((slot, done)) => {
                give_back.slots.push(slot);
                give_back.events.push(done);
                Source::Copied { slot, done }
            }
            None => Source::Untimed(
                "it signals an event of the program's that was signalled or reset before without \
                 a host reset, and libpti cannot copy the timestamps on this list (a copy \
                 engine's, or a mutable command ID is pending)",
            ),
        }
    } else if actual != prepared.left && !actual.is_null() {
        // Another tool's prologue, after libpti's, swapped the event: the command signals that
        // tool's event, which the tool signals ours (or the program's) from later. libpti's
        // event is free only once signalled; the command's timestamps are copied right away
        // (before that tool's epilogue appends its own commands).
        if let Source::Own(event) = prepared.source {
            events::retire(list.context, event);
        }
        match guards::copy(list, actual) {
            Some((slot, done)) => {
                give_back.slots.push(slot);
                give_back.events.push(done);
                Source::Copied { slot, done }
            }
            None => Source::Untimed(
                "another tool replaced its signal event with its own, whose timestamps libpti \
                 cannot copy on this list (a copy engine's)",
            ),
        }
    } else {
        prepared.source
    };
    let submission = Submission::now(
        ApiGroup::LevelZero,
        prepared.api_id,
        open::correlation_id(token),
        prepared.operation_id,
        prepared.work,
    );
    if list.records() {
        let mut recording = list.recording();
        let id = recording.next_id.take().unwrap_or(0);
        if !recording.borrowed {
            recording.events.append(&mut give_back.events);
            recording.slots.append(&mut give_back.slots);
            if let Source::Own(event) = source {
                recording.events.push(event);
            }
        }
        recording.commands.push(Recorded {
            submission,
            source,
            signal: actual,
            appended: prepared.entered,
            id,
        });
        return;
    }
    if let Source::Own(event) = source {
        give_back.events.push(event);
    }
    let command = ZeCommand {
        source,
        give_back,
        list: list.handle,
        context: list.context,
        device: devices::get(list.device),
        engine: list.engine,
        submission,
        execution: None,
        appended: prepared.entered,
        submitted: prepared.entered,
        stream: list.in_order.then_some(list.handle as usize),
        reexecuted: false,
        reader: source.borrowed().map(guards::Reader::new),
        gate: None,
    };
    if let Source::Untimed(_) = command.source {
        pending::finish(command, Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE));
    } else if list.synchronous {
        PENDING.complete_now(command);
    } else {
        PENDING.add(command);
    }
}

/// What must still happen when an append's epilogue panicked before [`complete`] took its
/// command: libpti's event, put in the slot, stays with the driver's command (never reused); the
/// record is lost, counted.
pub(super) fn rescue(token: usize, _result: ze_result_t) {
    let Some(prepared) = PREPARED.take(token) else {
        return;
    };
    if let Source::Own(event) = prepared.source {
        events::retire(prepared.list.context, event);
    }
    view::count_lost(prepared.work.view(false));
}

/// Takes out the pending commands `pick` selects after a last harvest, and counts those that
/// have not completed as lost, with a critical event saying `why` ("{n} records lost" follows).
/// Their events of libpti's are not reused: the device may still signal them.
pub(super) fn settle(pick: impl Fn(&ZeCommand) -> bool, why: &str) -> usize {
    PENDING.harvest_matching(&pick);
    let lost = PENDING.take_where(&pick);
    let n = lost.len();
    for c in lost {
        view::count_lost(c.view());
        core::mem::forget(c.give_back);
    }
    if n > 0 {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!("{why}: {n} record(s) of commands not completed are lost"),
        );
    }
    n
}

/// A list being reset or destroyed: the pending commands of its executions are settled, and
/// what it recorded forgotten (libpti's events and slots back to their context, unless one may
/// still be in use).
pub(super) fn forget_recorded(list: &List) {
    let handle = list.handle;
    let unfinished = settle(
        |c| c.list == handle,
        "the program reset or destroyed a Level Zero command list before libpti saw its \
         commands complete",
    );
    let recording = core::mem::take(&mut *list.recording());
    if unfinished == 0 && !recording.borrowed {
        for e in recording.events {
            events::give(list.context, e);
        }
        for s in recording.slots {
            events::give_slot(list.context, s);
        }
    }
}

/// The program is about to reset or destroy its `event`: the record of a command it times is
/// written now if the command has completed, else counted lost.
pub(super) fn event_going(event: ze_event_handle_t) {
    guards::cleaned(event);
    settle(
        |c| c.source.borrowed() == Some(event),
        "the program reset or destroyed a Level Zero event before libpti saw its command \
         complete",
    );
    forget_seen(event);
}

/// The program is about to destroy `context`: records of completed commands are written, those
/// of the others counted lost, and libpti's resources in it destroyed.
pub(super) fn context_going(context: ze_context_handle_t) {
    settle(
        |c| c.context == context,
        "a Level Zero context was destroyed before libpti saw its commands complete",
    );
    // Harvests on other threads may still be giving back events of this context.
    pending::wait_for_other_harvests();
    for list in objects::lists_in(context) {
        *list.recording() = Default::default();
    }
    events::destroy_context(context);
    if let Some(m) = LAST_SEEN.lock().as_mut() {
        m.retain(|_, v| v.0 != context as usize);
    }
}

/// A pending command of an execution of `list`'s recorded command `r`.
pub(super) fn executed_command(
    list: &List,
    r: &Recorded,
    device: &Arc<Device>,
    engine: Engine,
    execution: Execution,
    stream: Option<usize>,
) -> ZeCommand {
    ZeCommand {
        source: r.source,
        give_back: GiveBack::default(),
        list: list.handle,
        context: list.context,
        device: device.clone(),
        engine,
        submission: r.submission,
        execution: Some(execution),
        appended: r.appended,
        submitted: execution.submitted,
        stream,
        reexecuted: true,
        reader: r.source.borrowed().map(guards::Reader::new),
        gate: None,
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// What a pending Level Zero command costs in libpti's memory (docs/BENCHMARKS.md, issue 39):
    /// its entry in the list, besides the event it holds (libpti's, from its own pools, or the
    /// program's).
    #[test]
    fn a_pending_command_holds_at_most_416_bytes() {
        let entry = size_of::<ZeCommand>();
        println!("pending Level Zero command: {entry} bytes");
        assert!(entry <= 416, "{entry}");
    }
}
