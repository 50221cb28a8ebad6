//! Command lists and queues: what an append, an execution and a host synchronisation do.
//!
//! - An **immediate list** submits each append to its engine at once and returns before the
//!   command ran (a synchronous one, `ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS`, after it ran).
//! - A **regular list** keeps its commands; each execution on a queue
//!   (`zeCommandQueueExecuteCommandLists`) or on an immediate list
//!   (`zeCommandListImmediateAppendCommandListsExp`) submits them again, re-arming their
//!   counter-based events. Executions of lists on one queue run in order.
//! - An immediate list **capturing** a graph (`graph`) records its appends instead of submitting
//!   them: nothing runs and no event changes until the graph is replayed.
//! - Lists are in order with `ZE_COMMAND_LIST_FLAG_IN_ORDER` (regular) or
//!   `ZE_COMMAND_QUEUE_FLAG_IN_ORDER` (immediate); otherwise their commands run in any order
//!   between barriers (see `engine`).
//! - A mutable list (`ze_mutable_command_list_exp_desc_t` in the descriptor's `pNext`) numbers
//!   the commands the program asks IDs for (`mutable`); a cloneable one can be cloned.
//! - Appends check what Intel's driver checks of their events (see `event`) and refuse kernels
//!   on a copy engine's list (`ZE_RESULT_ERROR_INVALID_ARGUMENT`).

use std::sync::{Arc, Mutex, MutexGuard};

use pti_sys::level_zero::*;

use crate::device::Device;
use crate::engine::{Segment, Submission, deadline, wait_until};
use crate::event::Event;
use crate::exec::{Command, Work, arm};
use crate::graph::Graph;
use crate::objects::{Fence, object, shared};

/// What a list is made of; mutable parts behind [`List::state`].
pub(crate) struct List {
    pub(crate) immediate: bool,
    pub(crate) in_order: bool,
    pub(crate) synchronous: bool,
    pub(crate) mutable: bool,
    pub(crate) cloneable: bool,
    pub(crate) device: &'static Device,
    pub(crate) ordinal: u32,
    state: Mutex<ListState>,
}

#[derive(Default)]
pub(crate) struct ListState {
    /// A regular list's commands.
    pub(crate) commands: Vec<Command>,
    pub(crate) closed: bool,
    /// The graph an immediate list is capturing into.
    pub(crate) capture: Option<Arc<Graph>>,
    /// Mutable lists: the ID the next command gets (asked by `zeCommandListGetNextCommandIdExp`).
    pub(crate) next_id: Option<u64>,
    /// Mutable lists: the last ID handed out.
    pub(crate) last_id: u64,
    /// Submissions of this list not known to have run (an immediate list's appends, a regular
    /// list's executions).
    pub(crate) in_flight: Vec<Arc<Submission>>,
}

impl List {
    pub(crate) fn new(
        immediate: bool,
        in_order: bool,
        synchronous: bool,
        device: &'static Device,
        ordinal: u32,
    ) -> Self {
        List {
            immediate,
            in_order,
            synchronous,
            mutable: false,
            cloneable: false,
            device,
            ordinal,
            state: Mutex::new(ListState::default()),
        }
    }

    pub(crate) fn with_flags(mut self, mutable: bool, cloneable: bool) -> Self {
        self.mutable = mutable;
        self.cloneable = cloneable;
        self
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, ListState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A clone of a closed list: its properties and commands.
    pub(crate) fn clone_list(&self) -> List {
        let state = self.state();
        List {
            state: Mutex::new(ListState {
                commands: state.commands.clone(),
                closed: true,
                ..ListState::default()
            }),
            ..List::new(
                self.immediate,
                self.in_order,
                self.synchronous,
                self.device,
                self.ordinal,
            )
            .with_flags(self.mutable, self.cloneable)
        }
    }

    /// Submits commands of this list (`fresh`: an immediate append's new timestamp storage) on
    /// its engine; waits for them if the list is synchronous.
    fn submit(&self, commands: Vec<Command>, fresh: bool) {
        let segment = Segment {
            in_order: self.in_order,
            commands: arm(commands, fresh),
        };
        let submission = Submission::new(vec![segment], None, None);
        self.device.engine(self.ordinal).submit(submission.clone());
        self.keep(submission.clone());
        if self.synchronous {
            submission.wait(u64::MAX);
        }
    }

    /// Remembers a submission for the list's synchronisation, forgetting those that have run.
    pub(crate) fn keep(&self, submission: Arc<Submission>) {
        let mut state = self.state();
        state.in_flight.retain(|s| !s.done());
        state.in_flight.push(submission);
    }

    /// Waits until everything submitted of this list has run, or `deadline`.
    pub(crate) fn wait(&self, deadline: u64) -> bool {
        let in_flight = self.state().in_flight.clone();
        wait_until(deadline, || in_flight.iter().all(|s| s.done()))
    }
}

/// A queue: its engine, its mode, and what it was last given.
pub(crate) struct Queue {
    pub(crate) device: &'static Device,
    pub(crate) ordinal: u32,
    pub(crate) synchronous: bool,
    in_flight: Mutex<Vec<Arc<Submission>>>,
}

impl Queue {
    pub(crate) fn new(device: &'static Device, ordinal: u32, synchronous: bool) -> Self {
        Queue {
            device,
            ordinal,
            synchronous,
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// Runs regular lists, in order, then signals `fence`.
    pub(crate) fn execute(&self, lists: &[&List], fence: Option<Arc<Fence>>) -> ze_result_t {
        let mut segments = Vec::new();
        for list in lists {
            if list.immediate {
                return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            }
            segments.push(Segment {
                in_order: list.in_order,
                commands: arm(list.state().commands.clone(), false),
            });
        }
        let submission = Submission::new(segments, None, fence);
        self.device.engine(self.ordinal).submit(submission.clone());
        for list in lists {
            list.keep(submission.clone());
        }
        {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            in_flight.retain(|s| !s.done());
            in_flight.push(submission.clone());
        }
        if self.synchronous {
            submission.wait(u64::MAX);
        }
        ZE_RESULT_SUCCESS
    }

    /// Waits until everything executed on the queue has run, or `timeout` (ns).
    pub(crate) fn synchronize(&self, timeout: u64) -> ze_result_t {
        let in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if wait_until(deadline(timeout), || in_flight.iter().all(|s| s.done())) {
            ZE_RESULT_SUCCESS
        } else {
            ZE_RESULT_NOT_READY
        }
    }
}

/// The event behind a handle (None for NULL).
///
/// # Safety
/// `handle` is NULL or an event of this driver.
pub(crate) unsafe fn event(handle: ze_event_handle_t) -> Option<Arc<Event>> {
    // SAFETY: the caller's contract.
    (!handle.is_null()).then(|| unsafe { shared(handle) })
}

/// The events of a wait list.
///
/// # Safety
/// `waits` holds `n` events (or is NULL when `n` is 0).
pub(crate) unsafe fn wait_list(n: u32, waits: *const ze_event_handle_t) -> Vec<Arc<Event>> {
    if n == 0 || waits.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(waits, n as usize) }
        .iter()
        // SAFETY: as above: events of this driver (NULL entries are skipped).
        .filter_map(|&h| unsafe { event(h) })
        .collect()
}

/// Appends a command: recorded into a capture or a regular list, or submitted (immediate).
///
/// # Safety
/// `h` is a list of this driver, `signal` NULL or an event of it, `waits` events of it.
pub(crate) unsafe fn append(
    h: ze_command_list_handle_t,
    work: Work,
    signal: ze_event_handle_t,
    waits: Vec<Arc<Event>>,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: the caller's contract.
    let list: &List = unsafe { object(h) };
    // SAFETY: the caller's contract.
    let signal = unsafe { event(signal) };
    let capture = list.state().capture.clone();
    let mut command = Command {
        work,
        signal,
        waits,
        id: 0,
    };
    if let Some(graph) = capture {
        // Recorded, not executed: nothing is checked or armed until the graph runs.
        graph.record(command);
        return ZE_RESULT_SUCCESS;
    }
    if let Err(status) = check(list, &command) {
        return status;
    }
    if list.immediate {
        list.submit(vec![command], true);
    } else {
        let mut state = list.state();
        command.id = state.next_id.take().unwrap_or(0);
        state.commands.push(command);
    }
    ZE_RESULT_SUCCESS
}

/// What Intel's driver checks of an append (and the event modes it sets, see `event`).
pub(crate) fn check(list: &List, command: &Command) -> Result<(), ze_result_t> {
    if list.device.engine(list.ordinal).copy_only && !command.work.runs_on_copy_engine() {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    if let Work::Reset(event) = &command.work {
        event.before_reset_append()?;
    }
    if let Some(signal) = &command.signal {
        signal.before_signal_append(list.in_order, list.immediate, false)?;
    }
    if !list.immediate {
        for wait in &command.waits {
            wait.before_wait_on_regular_list();
        }
    }
    Ok(())
}

/// Runs regular lists (or a graph's commands) on immediate list `h`, after `waits`, with
/// `signal` spanning the whole run.
///
/// # Safety
/// As [`append`].
pub(crate) unsafe fn run_on_immediate(
    h: ze_command_list_handle_t,
    segments: Vec<(bool, Vec<Command>)>,
    signal: ze_event_handle_t,
    waits: Vec<Arc<Event>>,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: the caller's contract.
    let list: &List = unsafe { object(h) };
    if !list.immediate {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contract.
    let signal = unsafe { event(signal) };
    if let Some(e) = &signal
        && let Err(status) = e.before_signal_append(list.in_order, true, false)
    {
        return status;
    }
    let wait = Command {
        work: Work::Wait,
        signal: None,
        waits,
        id: 0,
    };
    let mut all = vec![Segment {
        in_order: true,
        commands: arm(vec![wait], true),
    }];
    for (in_order, commands) in segments {
        all.push(Segment {
            in_order,
            commands: arm(commands, false),
        });
    }
    let span = signal.map(|e| {
        let arming = e.arm(true);
        (e, arming)
    });
    let submission = Submission::new(all, span, None);
    list.device.engine(list.ordinal).submit(submission.clone());
    list.keep(submission.clone());
    if list.synchronous {
        submission.wait(u64::MAX);
    }
    ZE_RESULT_SUCCESS
}
