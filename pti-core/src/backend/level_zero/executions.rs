//! Executions of recorded commands: regular lists run on a queue
//! (`zeCommandQueueExecuteCommandLists`) or on an immediate list
//! (`zeCommandListImmediateAppendCommandLists…`), and graphs replayed on an immediate list
//! (`zeCommandListAppendGraph…`). Each execution makes every recorded command pending again,
//! timed as it was recorded (`objects::Recorded::source`), with the execute call's correlation ID
//! in a PTI_VIEW_EXT_COMMAND_EXECUTION record.
//!
//! An execution signals the recorded commands' events again. Before it runs ([`before`]):
//! - the commands of earlier executions (or anywhere) still reading those events are recorded
//!   if done;
//! - libpti's own events of the recording are reset by the host (libpti never resets in a
//!   program's list), so that each execution times afresh;
//! - where an earlier execution has not completed (the program submits again without waiting,
//!   as UR command buffers and SYCL graphs do), libpti runs a **snapshot** just before, on the
//!   same queue or immediate list: a small list of its own ([`Snapshot`]) that waits for the
//!   earlier execution's events, copies their timestamps into libpti's memory, resets libpti's
//!   events, and signals an event of libpti's; the earlier commands are then timed by the copies.
//!   It relies on a queue (or an immediate list) running what it is given in order, as Level
//!   Zero's executions of command lists do. A copy engine cannot run the copies (built-in
//!   kernels): there, the earlier execution's records are counted lost.

use rustc_hash::FxHashSet as HashSet;
use std::sync::Arc;

use crate::thread_stack::{LocalStack, ThreadStack};

use pti_sys::level_zero::*;

use super::commands::{self, PENDING, ZeCommand};
use super::objects::{List, Recorded, Recording};
use super::source::Source;
use super::tracer::{internal, loader};
use super::{devices, events};
use crate::api::ApiId;
use crate::backend::device::pending::{self, PendingCommand};
use crate::callback::critical;
use crate::dispatch::open;
use crate::result::ResultCode;
use crate::view::device::{Engine, Execution};
use crate::{runtime_task, thread, view};

/// Recorded commands about to run.
pub(super) struct Batch {
    /// The list the records name as their queue's list: the regular list, or the immediate list
    /// replaying a graph.
    pub(super) list: Arc<List>,
    pub(super) commands: Vec<Recorded>,
    /// The program's events an execution signals or resets.
    pub(super) changes: Vec<ze_event_handle_t>,
    /// libpti's events an execution signals.
    pub(super) own: Vec<ze_event_handle_t>,
    /// Its commands complete in order.
    pub(super) in_order: bool,
    /// How many times the call runs it.
    pub(super) times: usize,
}

impl Batch {
    /// What a recording holds, to run on behalf of `list`.
    pub(super) fn of(list: Arc<List>, recording: &Recording, in_order: bool, times: usize) -> Self {
        // libpti's events the commands are timed by (a clone's are its source's).
        let own = recording
            .commands
            .iter()
            .filter_map(|r| match r.source {
                Source::Own(e) | Source::Copied { done: e, .. } => Some(e),
                Source::Borrowed(_) | Source::Untimed(_) => None,
            })
            .collect();
        Batch {
            commands: recording.commands.clone(),
            changes: recording.changes().collect(),
            own,
            list,
            in_order,
            times,
        }
    }
}

/// Where an execution runs.
#[derive(Clone)]
pub(super) enum Target {
    Queue(ze_command_queue_handle_t),
    Immediate(Arc<List>),
}

impl Target {
    fn device_and_ordinal(&self) -> (ze_device_handle_t, u32) {
        match self {
            Target::Queue(q) => {
                let (device, engine) = super::objects::queue(*q);
                (device, engine.ordinal)
            }
            Target::Immediate(l) => (l.device, l.engine.ordinal),
        }
    }
}

// SAFETY: handles are opaque values passed back to the driver.
unsafe impl Send for Target {}

/// A snapshot list of libpti's and the event it signals when its copies are done; destroyed,
/// and the event given back, with the last command it timed or waits for.
pub(super) struct Snapshot {
    list: ze_command_list_handle_t,
    pub(super) done: ze_event_handle_t,
    context: ze_context_handle_t,
    /// libpti's events it resets on the device (after copying what the earlier execution left
    /// in them).
    resets: Vec<ze_event_handle_t>,
}

impl Snapshot {
    /// Whether it has run (its copies made, its resets done).
    pub(super) fn done(&self) -> bool {
        super::source::signalled(self.done) != Ok(false)
    }
}

thread_local! {
    /// Per execution call in progress on this thread, by token: the snapshot run just before
    /// it. Until it has run, the execution's commands timed by an event it resets must not be
    /// asked about: that event still holds the earlier execution's signal.
    static GATES: ThreadStack<usize, Arc<Snapshot>> = const { ThreadStack::new() };
}

// SAFETY: handles are opaque values passed back to the driver.
unsafe impl Send for Snapshot {}
// SAFETY: as above; nothing in it changes after creation.
unsafe impl Sync for Snapshot {}

impl Drop for Snapshot {
    fn drop(&mut self) {
        events::give(self.context, self.done);
        if let Some(destroy) = loader().and_then(|l| l.zeCommandListDestroy) {
            // SAFETY: libpti's own list, whose execution has completed (its event signalled).
            internal(|| unsafe { destroy(self.list) });
        }
    }
}

/// Before an execution of `batches` on `target` by the call `token` (module docs).
pub(super) fn before(batches: &[Batch], target: &Target, token: usize) {
    let own: HashSet<usize> = batches
        .iter()
        .flat_map(|b| b.own.iter().map(|e| *e as usize))
        .collect();
    let changes: HashSet<usize> = batches
        .iter()
        .flat_map(|b| b.changes.iter().map(|e| *e as usize))
        .collect();
    if own.is_empty() && changes.is_empty() {
        return;
    }
    let pick = |c: &ZeCommand| {
        c.source
            .status_event()
            .is_some_and(|e| own.contains(&(e as usize)))
            || c.source
                .borrowed()
                .is_some_and(|e| changes.contains(&(e as usize)))
    };
    PENDING.harvest_matching(pick);
    let running = PENDING.take_where(pick);
    let in_snapshot: HashSet<usize> = running
        .iter()
        .filter_map(|c| c.source.status_event())
        .map(|e| e as usize)
        .filter(|e| own.contains(e))
        .collect();
    // libpti's events no earlier command still uses: reset now, on the host.
    for &e in own.iter().filter(|e| !in_snapshot.contains(e)) {
        events::reset(e as ze_event_handle_t);
    }
    if !running.is_empty() {
        let resets: Vec<ze_event_handle_t> = in_snapshot
            .iter()
            .map(|&e| e as ze_event_handle_t)
            .collect();
        if let Some(gate) = snapshot(running, &resets, target) {
            GATES.push(token, gate);
        }
    }
}

/// Counts `commands` lost, saying `why` once for them.
fn lose(commands: Vec<ZeCommand>, why: &str) {
    let n = commands.len();
    for mut c in commands {
        view::count_lost(c.view());
        // libpti's events may still be signalled by the device: not reused.
        for e in std::mem::take(&mut c.give_back.events) {
            events::retire(c.context, e);
        }
        core::mem::forget(c.give_back);
    }
    critical::raise(
        ResultCode::ErrorRecordsDropped,
        format_args!("{why}: {n} record(s) of the earlier execution are lost"),
    );
}

/// Runs a snapshot of `running` (and resets libpti's events `resets`) on `target`, before the
/// execution the caller is about to make; returns it.
fn snapshot(
    running: Vec<ZeCommand>,
    resets: &[ze_event_handle_t],
    target: &Target,
) -> Option<Arc<Snapshot>> {
    let (device, ordinal) = target.device_and_ordinal();
    let context = running[0].context;
    if device.is_null() || !devices::computes(device, ordinal) {
        lose(
            running,
            "a Level Zero command list was executed again, on a copy engine, before its previous \
             execution completed, and libpti cannot copy timestamps there",
        );
        return None;
    }
    match build(&running, resets, context, device, ordinal) {
        Some((snapshot, slots)) if submit(&snapshot, target) => {
            let snapshot = Arc::new(snapshot);
            for (mut c, slot) in running.into_iter().zip(slots) {
                c.source = Source::Copied {
                    slot,
                    done: snapshot.done,
                };
                c.give_back.slots.push(slot);
                c.give_back.snapshot = Some(snapshot.clone());
                c.stream = None;
                c.reader = None;
                PENDING.add(c);
            }
            Some(snapshot)
        }
        _ => {
            lose(
                running,
                "a Level Zero command list was executed again before its previous execution \
                 completed, and libpti could not copy that execution's timestamps",
            );
            None
        }
    }
}

/// Builds the snapshot list; returns it and the slot of each command, in order.
fn build(
    running: &[ZeCommand],
    resets: &[ze_event_handle_t],
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    ordinal: u32,
) -> Option<(Snapshot, Vec<usize>)> {
    let l = loader()?;
    let (create, close) = (l.zeCommandListCreate?, l.zeCommandListClose?);
    let (query, copy) = (
        l.zeCommandListAppendQueryKernelTimestamps?,
        l.zeCommandListAppendMemoryCopy?,
    );
    let (reset, barrier) = (
        l.zeCommandListAppendEventReset?,
        l.zeCommandListAppendBarrier?,
    );
    let desc = ze_command_list_desc_t {
        stype: ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
        pNext: core::ptr::null(),
        commandQueueGroupOrdinal: ordinal,
        flags: ZE_COMMAND_LIST_FLAG_IN_ORDER,
    };
    let mut list: ze_command_list_handle_t = core::ptr::null_mut();
    // SAFETY: the program's context and device, a valid descriptor, a writable handle.
    if internal(|| unsafe { create(context, device, &desc, &mut list) }) != ZE_RESULT_SUCCESS {
        return None;
    }
    let done = events::take(context)?;
    let snapshot = Snapshot {
        list,
        done,
        context,
        resets: resets.to_vec(),
    };
    let mut slots = Vec::with_capacity(running.len());
    for c in running {
        let slot = events::slot(context)?;
        slots.push(slot);
        let status = match c.source {
            Source::Own(mut e) | Source::Borrowed(mut e) => {
                let mut wait = e;
                // SAFETY: libpti's list; the event the earlier execution signals, to copy and
                // wait for; libpti's slot of one result.
                internal(|| unsafe {
                    query(
                        list,
                        1,
                        &mut e,
                        slot as *mut core::ffi::c_void,
                        core::ptr::null(),
                        core::ptr::null_mut(),
                        1,
                        &mut wait,
                    )
                })
            }
            Source::Copied {
                slot: from,
                mut done,
            } => {
                // SAFETY: libpti's list and slots; the copy's event to wait for.
                internal(|| unsafe {
                    copy(
                        list,
                        slot as *mut core::ffi::c_void,
                        from as *const core::ffi::c_void,
                        events::SLOT_BYTES,
                        core::ptr::null_mut(),
                        1,
                        &mut done,
                    )
                })
            }
            Source::Untimed(_) => ZE_RESULT_SUCCESS,
        };
        if status != ZE_RESULT_SUCCESS {
            return None;
        }
    }
    for &e in resets {
        // SAFETY: libpti's list and one of libpti's events.
        if internal(|| unsafe { reset(list, e) }) != ZE_RESULT_SUCCESS {
            return None;
        }
    }
    // SAFETY: libpti's list; its event, signalled once everything before has run.
    let status = internal(|| unsafe { barrier(list, done, 0, core::ptr::null_mut()) });
    // SAFETY: libpti's list.
    if status != ZE_RESULT_SUCCESS || internal(|| unsafe { close(list) }) != ZE_RESULT_SUCCESS {
        return None;
    }
    Some((snapshot, slots))
}

/// Runs the snapshot on `target`, before what the program submits there next.
fn submit(snapshot: &Snapshot, target: &Target) -> bool {
    let mut list = snapshot.list;
    let status = match target {
        Target::Queue(queue) => {
            let Some(execute) = loader().and_then(|l| l.zeCommandQueueExecuteCommandLists) else {
                return false;
            };
            // SAFETY: the program's queue and libpti's closed list.
            internal(|| unsafe { execute(*queue, 1, &mut list, core::ptr::null_mut()) })
        }
        Target::Immediate(immediate) => {
            let append = super::extension::driver_function::<
                zeCommandListImmediateAppendCommandListsExp_t,
            >(c"zeCommandListImmediateAppendCommandListsExp")
            .flatten();
            let Some(append) = append else {
                return false;
            };
            // SAFETY: the program's immediate list and libpti's closed list.
            internal(|| unsafe {
                append(
                    immediate.handle,
                    1,
                    &mut list,
                    core::ptr::null_mut(),
                    0,
                    core::ptr::null_mut(),
                )
            })
        }
    };
    status == ZE_RESULT_SUCCESS
}

/// Who ran recorded commands: the call, its queue or immediate list, and the engine.
pub(super) struct Executor {
    pub(super) api_id: ApiId,
    /// The queue or immediate list that ran them.
    pub(super) queue: *mut core::ffi::c_void,
    pub(super) engine: Engine,
}

/// Numbers executions, to tell the in-order streams of two executions apart.
static EXECUTIONS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(1);

/// After a call ran `batches`: each recorded command pending once per execution, its record
/// with the append call's correlation ID and thread (as Intel PTI's), the execution in a
/// PTI_VIEW_EXT_COMMAND_EXECUTION record. A list passed several times to one call signals its
/// events several times in one submission: the records of all but its last run there are lost
/// (counted, said).
pub(super) fn after(batches: Vec<Batch>, token: usize, entered: u64, by: &Executor) {
    let gate = GATES.take(token);
    let correlation_id = open::correlation_id(token);
    let thread_id = thread::with(|s| s.thread_id()).unwrap_or(0);
    let task = runtime_task::current();
    for batch in batches {
        let device = devices::get(batch.list.device);
        if batch.times > 1 && !batch.commands.is_empty() {
            for r in &batch.commands {
                for _ in 1..batch.times {
                    view::count_lost(r.submission.view(devices::records_as_cpu(&device)));
                }
            }
            critical::raise(
                ResultCode::ErrorRecordsDropped,
                format_args!(
                    "a Level Zero command list was passed {} times to one call that executes \
                     command lists: its commands signal their events {} times in one \
                     submission, and are recorded once; {} records are lost",
                    batch.times,
                    batch.times,
                    (batch.times - 1) * batch.commands.len()
                ),
            );
        }
        let execution = Execution {
            correlation_id,
            thread_id,
            api_id: by.api_id,
            submitted: entered,
            queue: by.queue,
        };
        let stream = batch
            .in_order
            .then(|| EXECUTIONS.fetch_add(1, core::sync::atomic::Ordering::Relaxed) << 1 | 1);
        for r in &batch.commands {
            let mut r = *r;
            // The task that appended it; else the one that runs the list.
            r.submission.task = r.submission.task.or(task);
            let mut command =
                commands::executed_command(&batch.list, &r, &device, by.engine, execution, stream);
            command.gate = gate
                .as_ref()
                .filter(|g| {
                    command
                        .source
                        .status_event()
                        .is_some_and(|e| g.resets.contains(&e))
                })
                .cloned();
            if let Source::Untimed(_) = command.source {
                pending::finish(command, Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE));
            } else {
                PENDING.add(command);
            }
        }
    }
}

/// A call that ran nothing after all (it failed): its snapshot's gate is dropped.
pub(super) fn abandoned(token: usize) {
    GATES.take(token);
}

/// Gives the recorded commands of later executions fresh operation IDs: an ID names one record.
pub(super) fn renumber(recording: &mut Recording) {
    for r in recording.commands.iter_mut() {
        r.submission.operation_id = crate::callback::device::next_operation_id();
    }
}
