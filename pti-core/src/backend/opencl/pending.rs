//! Commands submitted but not yet recorded, and their harvest.
//!
//! Each pending command holds one reference to its event (injected by libpti, or the program's,
//! retained). A harvest asks each event, without waiting, whether its command has completed;
//! completed ones get their record written on the harvesting thread and their reference
//! released, exactly once, because a harvest takes the commands it looks at out of the list.
//! Harvests run after the program's own waits (`clFinish`, `clWaitForEvents`, blocking calls),
//! at every flush, and when the list has grown (never a wait the program did not ask for).

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pti_sys::opencl::*;

use super::commands::{self, Work};
use super::query;
use super::queues::QueueInfo;
use crate::api::{ApiGroup, ApiId};
use crate::backend::timing::DeviceTimes;
use crate::result::ResultCode;
use crate::sync::backoff::Backoff;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::device::{self, Command, Synchronization};
use crate::{critical, thread, view};

/// A command awaiting its record.
pub(super) struct Pending {
    pub(super) event: cl_event,
    /// libpti created the event (the program passed none).
    pub(super) injected: bool,
    pub(super) queue_handle: cl_command_queue,
    pub(super) queue: Arc<QueueInfo>,
    pub(super) work: Work,
    pub(super) api_id: ApiId,
    pub(super) correlation_id: u32,
    pub(super) thread_id: u32,
    /// Host time at which the enqueue call began.
    pub(super) enter: u64,
}

// SAFETY: the handles are opaque values passed back to the runtime, which allows OpenCL objects
// to be used from any thread.
unsafe impl Send for Pending {}

static PENDING: WriterLock<Vec<Pending>> = WriterLock::new(Vec::new());

/// Commands in [`PENDING`] (read without the lock, to skip empty harvests).
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Harvests between taking commands out and writing their records, on all threads.
static HARVESTING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's share of [`HARVESTING`]: a harvest may write a record whose buffer refill
    /// runs tool code that flushes, and that flush must not wait for its own thread.
    static DEPTH: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Counts a harvest in [`HARVESTING`] and [`DEPTH`] while it lives.
struct Harvesting;

impl Harvesting {
    fn begin() -> Self {
        HARVESTING.fetch_add(1, Ordering::Acquire);
        let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
        Harvesting
    }
}

impl Drop for Harvesting {
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        HARVESTING.fetch_sub(1, Ordering::Release);
    }
}

fn own_depth() -> usize {
    DEPTH.try_with(core::cell::Cell::get).unwrap_or(0)
}

/// Size of the list at which an enqueue harvests (doubles while commands stay unfinished).
static HARVEST_AT: AtomicUsize = AtomicUsize::new(MIN_HARVEST_AT);
const MIN_HARVEST_AT: usize = 256;

/// Leaves a command pending; harvests first if the list has grown.
pub(super) fn add(p: Pending) {
    let count = {
        let mut list = PENDING.lock();
        list.push(p);
        COUNT.store(list.len(), Ordering::Relaxed);
        list.len()
    };
    if count >= HARVEST_AT.load(Ordering::Relaxed) {
        harvest();
        let left = COUNT.load(Ordering::Relaxed);
        HARVEST_AT.store((left * 2).max(MIN_HARVEST_AT), Ordering::Relaxed);
    }
}

/// Records a command whose call blocked until it completed; one the runtime does not report
/// complete yet (its event may lag the data) is left pending instead.
pub(super) fn complete_now(p: Pending) {
    match check(p.event) {
        Check::Running => add(p),
        done => {
            let _harvesting = Harvesting::begin();
            finish(p, done);
        }
    }
}

/// The lock of the list, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &PENDING
}

/// In the child after `fork()` (the lock released again): the pending commands and their
/// events are the parent's (it records them); the child forgets them without touching the
/// runtime. Harvests that other threads of the parent had under way do not exist here; one of
/// the forking thread's own (a tool callback that forked) does.
pub(super) fn fork_child() {
    PENDING.lock().clear();
    COUNT.store(0, Ordering::Relaxed);
    HARVESTING.store(own_depth(), Ordering::Relaxed);
}

/// Number of commands awaiting their records.
pub(crate) fn count() -> usize {
    COUNT.load(Ordering::Relaxed)
}

/// The execution status of `event` (`CL_COMPLETE`, a negative error, or still running).
fn status(event: cl_event) -> Option<cl_int> {
    query::event(event, CL_EVENT_COMMAND_EXECUTION_STATUS)
}

/// Writes the records of every pending command that has completed; never waits.
pub(super) fn harvest() {
    if COUNT.load(Ordering::Relaxed) == 0 {
        return;
    }
    let _harvesting = Harvesting::begin();
    let taken = core::mem::take(&mut *PENDING.lock());
    let mut unfinished = Vec::new();
    let mut finished = Vec::new();
    for p in taken {
        match check(p.event) {
            Check::Running => unfinished.push(p),
            done => finished.push((p, done)),
        }
    }
    {
        let mut list = PENDING.lock();
        list.append(&mut unfinished);
        COUNT.store(list.len(), Ordering::Relaxed);
    }
    for (p, done) in finished {
        finish(p, done);
    }
}

/// A harvest whose records are all written when it returns, also those of harvests that other
/// threads had under way: what a flush needs. From tool code (a buffer or critical-event
/// callback, which may run inside a harvest), it waits for nobody, as the buffer flush does.
pub(super) fn harvest_all() {
    harvest();
    if crate::thread::with(|s| s.in_callback.get()).unwrap_or(false) {
        return;
    }
    let mut backoff = Backoff::default();
    while HARVESTING.load(Ordering::Acquire) > own_depth() {
        backoff.snooze();
    }
}

/// Gives up on every pending command without asking the runtime anything (at loader shutdown or
/// process exit the runtime may be gone): each is counted as lost, per view when the list can be
/// had within a few milliseconds (a thread still running may hold it), and one critical event
/// says how many and why.
pub(super) fn abandon(why: &str) {
    let n = COUNT.swap(0, Ordering::Relaxed);
    if n == 0 {
        return;
    }
    let mut counted = false;
    for _ in 0..20 {
        if let Some(mut list) = PENDING.try_lock() {
            for p in list.drain(..) {
                view::count_lost(p.work.view(p.queue.device.is_cpu));
            }
            counted = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    critical::raise(
        ResultCode::ErrorRecordsDropped,
        format_args!(
            "{why} with {n} OpenCL commands whose records were not written (still running, or \
             not harvested by a flush or a wait since they completed); they are lost{}",
            if counted {
                " (counted in ptiViewGetDroppedRecordCount)"
            } else {
                ", and not counted per view: another thread held the list"
            }
        ),
    );
}

/// Where a command stands, found with as few runtime calls as possible: its END timestamp
/// exists exactly when it has completed (the profiling query fails before), so one query tells
/// most commands apart; only when it fails is the execution status asked.
enum Check {
    Running,
    /// Completed, with its END time.
    Ended(u64),
    /// Completed or failed without times: the runtime's answer.
    NoTimes(cl_int),
}

fn check(event: cl_event) -> Check {
    match query::profiling(event, CL_PROFILING_COMMAND_END) {
        Ok(end) => Check::Ended(end),
        Err(code) => match status(event) {
            Some(s) if s < 0 => Check::NoTimes(s),
            // It may have completed between the two queries: ask for END once more.
            Some(CL_COMPLETE) => match query::profiling(event, CL_PROFILING_COMMAND_END) {
                Ok(end) => Check::Ended(end),
                Err(_) => Check::NoTimes(code),
            },
            _ => Check::Running,
        },
    }
}

/// The other timestamps of a command whose END is known.
fn device_times(event: cl_event, end: u64) -> Result<DeviceTimes, cl_int> {
    Ok(DeviceTimes {
        queued: query::profiling(event, CL_PROFILING_COMMAND_QUEUED).unwrap_or(0),
        submit: query::profiling(event, CL_PROFILING_COMMAND_SUBMIT).unwrap_or(0),
        start: query::profiling(event, CL_PROFILING_COMMAND_START)?,
        end,
    })
}

/// Writes the record of a completed command and releases its event.
fn finish(p: Pending, done: Check) {
    let times = match done {
        Check::Ended(end) => device_times(p.event, end),
        Check::NoTimes(code) => Err(code),
        Check::Running => Err(CL_INVALID_OPERATION),
    };
    // SAFETY: libpti's one reference to this event, given back once: the command is done.
    unsafe { commands::release(p.event, p.injected) };
    let view = p.work.view(p.queue.device.is_cpu);
    let host = times.map(|t| (t, p.queue.device.to_host(&t, p.enter)));
    let (t, Some(h)) = (match host {
        Ok(pair) => pair,
        Err(code) => return lost(&p, view, code),
    }) else {
        return lost(&p, view, CL_PROFILING_INFO_NOT_AVAILABLE);
    };
    // Without a reported QUEUED time, the command was appended when its call began (or, if
    // the device reports an earlier submission, then).
    let submit = h.submit.unwrap_or(h.start);
    let append = h.queued.unwrap_or(p.enter.min(submit));
    let device_order = [t.queued, t.submit, t.start, t.end];
    let reported: Vec<u64> = device_order.into_iter().filter(|v| *v != 0).collect();
    if !reported.windows(2).all(|w| w[0] <= w[1]) {
        critical::raise(
            ResultCode::ErrorBadTimestamp,
            format_args!(
                "an OpenCL command ({}) reported device timestamps out of order (queued {}, \
                 submit {}, start {}, end {}); its record carries them as converted",
                p.work.name(p.api_id).to_string_lossy(),
                t.queued,
                t.submit,
                t.start,
                t.end
            ),
        );
    }
    let command = Command {
        queue: p.queue_handle,
        context: p.queue.context,
        device: &p.queue.device.identity,
        name: p.work.name(p.api_id),
        correlation_id: p.correlation_id,
        thread_id: p.thread_id,
        append,
        submit,
        start: h.start,
        end: h.end,
    };
    let written = thread::with(|state| match p.work {
        Work::Kernel { .. } => device::kernel(state, p.queue.device.is_cpu, &command),
        Work::Copy { src, dst, bytes } => device::memory_copy(state, &command, src, dst, bytes),
        Work::Fill {
            memory,
            bytes,
            value,
        } => device::memory_fill(state, &command, memory, bytes, value),
        Work::Barrier { kind, wait_events } => device::synchronization(
            state,
            &Synchronization {
                kind,
                group: ApiGroup::OpenCl,
                api_id: p.api_id,
                context: p.queue.context,
                queue: p.queue_handle,
                event: if p.injected {
                    core::ptr::null_mut()
                } else {
                    p.event
                },
                start: h.start,
                end: h.end,
                thread_id: p.thread_id,
                correlation_id: p.correlation_id,
                wait_events,
                status: CL_SUCCESS as u32,
            },
        ),
    });
    if written.is_none() {
        // The thread's state is gone (a wait in a thread-local destructor): nowhere to write.
        let total = view::count_lost(view);
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a {view:?} record was completed on a thread that is exiting and could not be \
                 written ({total} lost so far)"
            ),
        );
    }
}

/// Counts the record of a command whose times could not be had, and says why. A device that
/// gives no timestamps for barriers (NVIDIA's) is told once and remembered, so that its later
/// barriers are counted without an event injected for them.
fn lost(p: &Pending, view: crate::view::abi::pti_view_kind, code: cl_int) {
    let total = view::count_lost(view);
    let barrier = matches!(p.work, Work::Barrier { .. });
    if barrier && code == CL_PROFILING_INFO_NOT_AVAILABLE {
        if p.queue.device.learn_barriers_untimed() {
            critical::raise(
                ResultCode::ErrorDriver,
                format_args!(
                    "this OpenCL device gives no timestamps for barriers \
                     ({} answered CL_PROFILING_INFO_NOT_AVAILABLE): its barriers get no \
                     synchronisation records and are counted as dropped \
                     (ptiViewGetDroppedRecordCount; {total} so far)",
                    p.work.name(p.api_id).to_string_lossy()
                ),
            );
        }
        return;
    }
    critical::raise(
        ResultCode::ErrorDriver,
        format_args!(
            "no device timestamps for an OpenCL command ({}, correlation ID {}): the runtime \
             answered {code}; the {view:?} record is lost ({total} so far)",
            p.work.name(p.api_id).to_string_lossy(),
            p.correlation_id
        ),
    );
}
