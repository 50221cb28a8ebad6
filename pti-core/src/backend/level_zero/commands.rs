//! Device commands on Level Zero command lists, from the append that records them to the record
//! of each execution.
//!
//! - An append is *prepared* in its prologue ([`prepare`]): when the call is traced and the
//!   command's view is enabled, the command gets a timing event: the program's own if its pool has
//!   host-visible kernel timestamps (libpti adds those to the pools the program creates while a
//!   device view is enabled, see `hooks`), else one of libpti's, put in the call's parameters
//!   (the program's event, if any, is then signalled by a barrier appended right after, so it
//!   still fires). On a regular list libpti's event is reset by the list itself before the
//!   command, so every execution times afresh. The epilogue ([`complete`]) puts the program's
//!   argument back before the EXIT callbacks.
//! - On an immediate list the command is pending at once (recorded at once on a synchronous
//!   one); on a regular list it is kept with the list (`objects::Recorded`) and becomes pending at
//!   each execution of the list ([`executing`], [`executed`]), with the correlation ID of the
//!   execute call. The first execution's record carries the operation ID the append reported to
//!   GPU-operation callbacks; later executions get fresh ones.
//! - Subscribers of GPU operations hear of each prepared append at its ENTER and EXIT
//!   ([`Appending`]), and of its completion when its record is written.
//! - Drivers that implement less are met with what they do implement: without
//!   `zeEventQueryStatus`, events are polled with `zeEventHostSynchronize(event, 0)`; without
//!   kernel timestamps, a command is timed by the host clock, from the start of the call that
//!   submitted it to when libpti saw it complete (a critical event says so once for each).
//! - A pending command is recorded when its event has signalled ([`ZeCommand`], harvested as in
//!   `backend::device::pending`), unless the event still holds the timestamps already recorded from it
//!   (a previous execution's, not yet reset on the device): then it is not done yet.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, Ordering};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use pti_sys::level_zero::*;

use super::devices::{self, Device};
use super::events;
use super::objects::{self, List, Recorded};
use super::tracer::{internal, loader};
use crate::api::{ApiGroup, ApiId};
use crate::backend::device::command::{Appending, Finished, Submission, Work};
use crate::backend::device::pending::{self, Pending, PendingCommand};
use crate::callback::device::next_operation_id;
use crate::dispatch::open;
use crate::result::ResultCode;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view::abi::{pti_view_kind, pti_view_memory_type};
use crate::view::device::{self as records, Engine, Execution};
use crate::{Site, clock, critical, fault, runtime_task, thread, view};

/// A command waiting for its event.
pub(super) struct ZeCommand {
    event: ze_event_handle_t,
    /// Give `event` back to libpti's pool when recorded (an immediate list's injected event).
    give_back: bool,
    /// The program's event that a barrier signals after `event` (NULL if none).
    program: ze_event_handle_t,
    list: ze_command_list_handle_t,
    context: ze_context_handle_t,
    device: Arc<Device>,
    engine: Engine,
    /// The append call that put it on its list (its correlation ID and thread are the record's).
    submission: Submission,
    /// On a regular list, the execution it belongs to (recorded in
    /// PTI_VIEW_EXT_COMMAND_EXECUTION).
    execution: Option<Execution>,
    /// Host times: the append call, and the start of the call that submitted it (the lower bound
    /// of its device times).
    appended: u64,
    submitted: u64,
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread.
unsafe impl Send for ZeCommand {}

pub(super) static PENDING: Pending<ZeCommand> = Pending::new();

/// The kernel timestamps last recorded from each event, with the event's context: an event that
/// still holds them has not signalled again yet.
static LAST_SEEN: WriterLock<Option<HashMap<usize, Seen>>> = WriterLock::new(None);

/// What [`LAST_SEEN`] keeps of an event: its context, and the start and end last recorded.
type Seen = (usize, u64, u64);

/// The locks of this module, for the fork handlers (the pending list's two, then `LAST_SEEN`).
pub(super) fn fork_locks() -> [&'static dyn ForkLock; 3] {
    let [poll, list] = PENDING.fork_locks();
    [poll, list, &LAST_SEEN]
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

impl ZeCommand {
    /// Whether this command is timed by, or signals, the program's `event`.
    pub(super) fn uses(&self, event: ze_event_handle_t) -> bool {
        self.event == event || self.program == event
    }
}

/// How a command's completion was timed.
pub(super) enum Timed {
    /// By the driver's kernel timestamps.
    Kernel(ze_kernel_timestamp_result_t),
    /// By the host clock, for a driver without kernel timestamps: from the start of the call that
    /// submitted the command to when libpti saw it complete.
    Host { seen: u64 },
}

/// The driver does not implement `zeEventQueryStatus`: events are polled with
/// `zeEventHostSynchronize(event, 0)`.
static NO_QUERY_STATUS: AtomicBool = AtomicBool::new(false);

/// The driver gave no kernel timestamps for some event (`zeEventQueryKernelTimestamp` not
/// implemented, for every event or for that one): said once; each such command is timed by the
/// host. Asked again for every command, as a driver may lack them for some events only.
static NO_KERNEL_TIMESTAMPS: AtomicBool = AtomicBool::new(false);

/// Whether a status says the driver lacks the entry point (the loader says the same for an
/// entry point its driver table leaves empty).
fn unimplemented(status: ze_result_t) -> bool {
    matches!(
        status,
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE | ZE_RESULT_ERROR_UNSUPPORTED_VERSION
    )
}

/// Says once that the driver lacks `what`, and what libpti does instead.
fn fall_back(flag: &AtomicBool, what: &str, instead: &str) {
    if !flag.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorDriver,
            format_args!("the Level Zero driver does not implement {what}: libpti {instead}"),
        );
    }
}

/// Whether `event` has signalled: `zeEventQueryStatus`, or `zeEventHostSynchronize(event, 0)`
/// where the driver lacks it.
fn signalled(event: ze_event_handle_t) -> Result<bool, ze_result_t> {
    let l = loader().ok_or(ZE_RESULT_ERROR_UNINITIALIZED)?;
    if !NO_QUERY_STATUS.load(Ordering::Relaxed) {
        let status = l
            .zeEventQueryStatus
            .map_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, |query| {
                // SAFETY: an event that times a pending command, alive while it is pending.
                internal(|| unsafe { query(event) })
            });
        match status {
            ZE_RESULT_NOT_READY => return Ok(false),
            ZE_RESULT_SUCCESS => return Ok(true),
            s if unimplemented(s) => fall_back(
                &NO_QUERY_STATUS,
                "zeEventQueryStatus",
                "polls events with zeEventHostSynchronize(event, 0) instead",
            ),
            error => return Err(error),
        }
    }
    let sync = l
        .zeEventHostSynchronize
        .ok_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
    // SAFETY: as above; a timeout of 0 only looks.
    match internal(|| unsafe { sync(event, 0) }) {
        ZE_RESULT_NOT_READY => Ok(false),
        ZE_RESULT_SUCCESS => Ok(true),
        error => Err(error),
    }
}

impl PendingCommand for ZeCommand {
    type Outcome = Result<Timed, ze_result_t>;

    fn poll(&self) -> Option<Self::Outcome> {
        match signalled(self.event) {
            Ok(false) => return None,
            Ok(true) => {}
            Err(error) => return Some(Err(error)),
        }
        let query = loader()?.zeEventQueryKernelTimestamp;
        // SAFETY: all-zero bytes are a valid timestamp result (integers).
        let mut ts: ze_kernel_timestamp_result_t = unsafe { core::mem::zeroed() };
        let status = query.map_or(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, |query| {
            // SAFETY: the same event, and a writable result.
            internal(|| unsafe { query(self.event, &mut ts) })
        });
        match status {
            ZE_RESULT_SUCCESS if already_seen(self.event, &ts) => None,
            ZE_RESULT_SUCCESS => Some(Ok(Timed::Kernel(ts))),
            s if unimplemented(s) => {
                fall_back(
                    &NO_KERNEL_TIMESTAMPS,
                    "zeEventQueryKernelTimestamp (for some event)",
                    "times such device commands by the host clock instead (from the call that \
                     submitted each to when libpti saw it complete)",
                );
                Some(Ok(Timed::Host { seen: clock::now() }))
            }
            error => Some(Err(error)),
        }
    }

    fn finish(self, outcome: Self::Outcome) {
        if let Ok(Timed::Kernel(ts)) = &outcome {
            seen(self.event, self.context, ts);
        }
        if self.give_back {
            if self.program.is_null() {
                events::give(self.context, self.event);
            } else {
                events::retire(self.context, self.event, self.program);
            }
        }
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
            Err(code) => {
                self.submission.lost(
                    self.device.is_cpu,
                    ResultCode::ErrorDriver,
                    &format!("the Level Zero driver gave no kernel timestamps (0x{code:x})"),
                );
                return;
            }
        };
        Finished {
            submission: &self.submission,
            queue: self.list.cast(),
            context: self.context.cast(),
            device: &self.device.identity,
            device_is_cpu: self.device.is_cpu,
            engine: self.engine,
            event: if self.give_back {
                core::ptr::null_mut()
            } else {
                self.event.cast()
            },
            // The conversion keeps the start at or after the submitting call's start.
            append: self.appended,
            submit: self.submitted,
            start,
            end,
        }
        .record();
        if let Some(execution) = &self.execution {
            let operation_id = self.submission.operation_id;
            thread::with_any(|state| records::command_execution(state, operation_id, execution));
        }
    }

    fn view(&self) -> pti_view_kind {
        self.submission.view(self.device.is_cpu)
    }
}

/// An append between its prologue and its epilogue.
struct Prepared {
    list: Arc<List>,
    work: Work,
    api_id: ApiId,
    /// libpti's event, put in place of the program's.
    ours: Option<ze_event_handle_t>,
    /// The program's signal event (NULL if none).
    program: ze_event_handle_t,
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

/// Counts a command whose record cannot be had; `why` goes into the critical event.
fn lost(view: pti_view_kind, work: &Work, api_id: ApiId, why: &str) {
    let total = view::count_lost(view);
    critical::raise(
        ResultCode::ErrorRecordsDropped,
        format_args!(
            "a Level Zero command ({}) is not timed: {why}; its {view:?} record is lost ({total} \
             so far)",
            work.name(ApiGroup::LevelZero, api_id).to_string_lossy()
        ),
    );
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

/// The prologue of an append (see the module docs). `signal` is the call's signal-event
/// parameter, which may be replaced by libpti's event.
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
    let view = work.view(device.is_cpu);
    // An immediate list's command runs now: recorded if collection runs now. A regular list's
    // runs at each execution: prepared whenever the tool enabled the view, even while paused,
    // and recorded for the executions made while collection runs (`hooks`).
    let wanted = if list.immediate {
        view::is_enabled(view)
    } else {
        view::is_configured(view)
    };
    if !wanted {
        return;
    }
    let program = *signal;
    let ours = if !program.is_null() && objects::event_has_timestamps(program) {
        None
    } else {
        let Some(event) = events::take(list.context) else {
            lost(
                view,
                &work,
                api_id,
                "libpti could not create a timestamp event",
            );
            return;
        };
        // A regular list runs again: the event is reset by the list itself, before the command.
        if !list.immediate && !reset_in_list(list.handle, event) {
            events::give(list.context, event);
            lost(
                view,
                &work,
                api_id,
                "libpti could not append the reset of its event",
            );
            return;
        }
        Some(event)
    };
    let (immediate, context) = (list.immediate, list.context);
    let prepared = Prepared {
        list,
        work,
        api_id,
        ours,
        program,
        entered: clock::now(),
        operation_id: next_operation_id(),
    };
    let appending = prepared.appending(token);
    // The argument changes only once the epilogue is sure to find what to put back (and last:
    // a prologue that panics before leaves the program's arguments as they were).
    let kept = PREPARED.push(token, prepared);
    if kept {
        appending.report(Site::Enter, None);
    }
    match (kept, ours) {
        (true, Some(event)) => *signal = event,
        // A regular list holds the reset appended for it: the event goes with the list.
        (false, Some(event)) if immediate => events::give(context, event),
        _ => {}
    }
}

/// Appends the reset of libpti's `event` to a regular list.
fn reset_in_list(list: ze_command_list_handle_t, event: ze_event_handle_t) -> bool {
    let Some(append) = loader().and_then(|l| l.zeCommandListAppendEventReset) else {
        return false;
    };
    // SAFETY: the program's list, being appended to by this thread, and an event of libpti's.
    internal(|| unsafe { append(list, event) }) == ZE_RESULT_SUCCESS
}

/// The epilogue of an append: the program's argument back, and the command pending (immediate
/// list) or kept with its list (regular list).
pub(super) fn complete(token: usize, result: ze_result_t, signal: &mut ze_event_handle_t) {
    if token == 0 {
        return;
    }
    fault::point("level_zero.append_epilogue");
    let Some(prepared) = PREPARED.take(token) else {
        return;
    };
    if prepared.ours.is_some() {
        *signal = prepared.program;
    }
    prepared
        .appending(token)
        .report(Site::Exit, Some(result as i32));
    let list = &prepared.list;
    if result != ZE_RESULT_SUCCESS {
        if let Some(ours) = prepared.ours {
            // A regular list may hold the reset appended before the failed command: the event
            // goes with the list, not back to the pool.
            if list.immediate {
                events::give(list.context, ours);
            }
        }
        return;
    }
    let paired = match prepared.ours {
        Some(ours) if !prepared.program.is_null() => {
            signal_after(list.handle, prepared.program, ours);
            prepared.program
        }
        _ => core::ptr::null_mut(),
    };
    let event = prepared.ours.unwrap_or(prepared.program);
    let submission = Submission::now(
        ApiGroup::LevelZero,
        prepared.api_id,
        open::correlation_id(token),
        prepared.operation_id,
        prepared.work,
    );
    if list.immediate {
        let command = ZeCommand {
            event,
            give_back: prepared.ours.is_some(),
            program: paired,
            list: list.handle,
            context: list.context,
            device: devices::get(list.device),
            engine: list.engine,
            submission,
            execution: None,
            appended: prepared.entered,
            submitted: prepared.entered,
        };
        if list.synchronous {
            PENDING.complete_now(command);
        } else {
            PENDING.add(command);
        }
    } else {
        list.recorded().push(Recorded {
            submission,
            event,
            program: paired,
            owned: prepared.ours.is_some(),
            appended: prepared.entered,
        });
    }
}

/// What must still happen for the program when an append's epilogue panicked before
/// [`complete`] took its command: the program's event, replaced by libpti's in the prologue, is
/// signalled after the command all the same (else the program would wait for it for ever). The
/// command's record is lost, counted.
pub(super) fn rescue(token: usize, result: ze_result_t) {
    let Some(prepared) = PREPARED.take(token) else {
        return;
    };
    if let (Some(ours), ZE_RESULT_SUCCESS) = (prepared.ours, result) {
        if !prepared.program.is_null() {
            signal_after(prepared.list.handle, prepared.program, ours);
        }
    }
    view::count_lost(prepared.work.view(false));
}

/// Appends a barrier that signals the program's event once libpti's has signalled, so that the
/// program's own event still fires after its command.
fn signal_after(
    list: ze_command_list_handle_t,
    program: ze_event_handle_t,
    ours: ze_event_handle_t,
) {
    let Some(barrier) = loader().and_then(|l| l.zeCommandListAppendBarrier) else {
        return;
    };
    let mut wait = ours;
    // SAFETY: the program's list, and one event to wait for.
    let status = internal(|| unsafe { barrier(list, program, 1, &mut wait) });
    if status != ZE_RESULT_SUCCESS {
        critical::raise(
            ResultCode::ErrorDriver,
            format_args!(
                "libpti could not append the barrier that signals the program's event after its \
                 command (0x{status:x}); the program's event will not be signalled. Set \
                 PTI_LEVEL_ZERO=0 and leave ZE_ENABLE_TRACING_LAYER unset to run without libpti's \
                 Level Zero tracing"
            ),
        );
    }
}

/// Before a regular list runs again: the records of its previous execution are written, or
/// counted lost if it has not completed (its events are about to be reset by the list).
pub(super) fn executing(list: &List) {
    let handle = list.handle;
    PENDING.harvest_matching(|c| c.list == handle);
    let unfinished = PENDING.take_where(|c| c.list == handle);
    if !unfinished.is_empty() {
        let n = unfinished.len();
        for c in unfinished {
            view::count_lost(c.view());
        }
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a Level Zero command list was executed again before libpti saw its previous \
                 execution complete: {n} records of that execution are lost (wait for an \
                 execution, or flush, before running the list again to keep them)"
            ),
        );
    }
}

/// Where and by which call regular lists were executed.
pub(super) struct Executor {
    pub(super) api_id: ApiId,
    /// The queue or immediate list that ran them.
    pub(super) queue: *mut c_void,
    pub(super) engine: Engine,
}

/// After a regular list was submitted `times` times by one execute call: each of its commands is
/// pending once, its record with the append call's correlation ID and thread (as Intel PTI's),
/// the execution in a PTI_VIEW_EXT_COMMAND_EXECUTION record (an event holds one execution's
/// timestamps: the records of the other executions are counted lost).
pub(super) fn executed(list: &List, token: usize, entered: u64, times: usize, by: &Executor) {
    let recorded: Vec<Recorded> = {
        let mut kept = list.recorded();
        let now = kept.clone();
        // The next execution's records get fresh operation IDs: an ID names one record.
        for r in kept.iter_mut() {
            r.submission.operation_id = next_operation_id();
        }
        now
    };
    let device = devices::get(list.device);
    let correlation_id = open::correlation_id(token);
    let thread_id = thread::with(|s| s.thread_id()).unwrap_or(0);
    let task = runtime_task::current();
    if times > 1 && !recorded.is_empty() {
        for r in &recorded {
            for _ in 1..times {
                view::count_lost(r.submission.view(device.is_cpu));
            }
        }
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a Level Zero command list was passed {times} times to one \
                 zeCommandQueueExecuteCommandLists: its commands are recorded once, {} records \
                 are lost",
                (times - 1) * recorded.len()
            ),
        );
    }
    for r in recorded {
        PENDING.add(ZeCommand {
            event: r.event,
            give_back: false,
            program: r.program,
            list: list.handle,
            context: list.context,
            device: device.clone(),
            engine: by.engine,
            submission: Submission {
                // The task that appended it; else the one that runs the list.
                task: r.submission.task.or(task),
                ..r.submission
            },
            execution: Some(Execution {
                correlation_id,
                thread_id,
                api_id: by.api_id,
                submitted: entered,
                queue: by.queue,
            }),
            appended: r.appended,
            submitted: entered,
        });
    }
}

/// Takes out the pending commands `pick` selects after a last harvest, and counts those that
/// have not completed as lost, with a critical event saying `why` ("{n} records lost" follows).
/// Their events of libpti's are not reused: the device may still signal them.
fn settle(pick: impl Fn(&ZeCommand) -> bool, why: &str) -> usize {
    PENDING.harvest_matching(&pick);
    let lost = PENDING.take_where(&pick);
    let n = lost.len();
    for c in lost {
        view::count_lost(c.view());
    }
    if n > 0 {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!("{why}: {n} record(s) of commands not completed are lost"),
        );
    }
    n
}

/// A list being reset or destroyed: its pending commands are settled, and a regular list's
/// commands forgotten (libpti's events back to the pool, unless one may still be in use).
pub(super) fn forget_recorded(list: &List) {
    let handle = list.handle;
    let unfinished = settle(
        |c| c.list == handle,
        "the program reset or destroyed a Level Zero command list before libpti saw its \
         commands complete",
    );
    let recorded: Vec<Recorded> = list.recorded().drain(..).collect();
    if unfinished == 0 {
        for r in recorded.iter().filter(|r| r.owned) {
            if r.program.is_null() {
                events::give(list.context, r.event);
            } else {
                events::retire(list.context, r.event, r.program);
            }
        }
    }
}

/// The program is about to reset or destroy its `event`: the record of a command it times (or
/// that signals it) is written now if the command has completed, else counted lost.
pub(super) fn event_going(event: ze_event_handle_t) {
    settle(
        |c| c.uses(event),
        "the program reset or destroyed a Level Zero event before libpti saw its command \
         complete",
    );
    events::program_event_going(event);
    if let Some(m) = LAST_SEEN.lock().as_mut() {
        m.remove(&(event as usize));
    }
}

/// The program is about to destroy `context`: records of completed commands are written, those
/// of the others counted lost, and libpti's events in it destroyed.
pub(super) fn context_going(context: ze_context_handle_t) {
    settle(
        |c| c.context == context,
        "a Level Zero context was destroyed before libpti saw its commands complete",
    );
    // Harvests on other threads may still be giving back events of this context.
    pending::wait_for_other_harvests();
    for list in objects::lists_in(context) {
        list.recorded().clear();
    }
    events::destroy_context(context);
    if let Some(m) = LAST_SEEN.lock().as_mut() {
        m.retain(|_, v| v.0 != context as usize);
    }
}
