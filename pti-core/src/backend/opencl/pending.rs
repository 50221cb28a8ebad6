//! OpenCL commands awaiting their records (the list and its harvest are
//! `backend::device::pending`'s): each holds libpti's event (injected, given back when its record is
//! written) or the program's (tracked in `retained` until then, so that it outlives the program's
//! release).

use std::sync::Arc;

use pti_sys::opencl::*;

use super::queues::QueueInfo;
use super::{commands, devices, query};
use crate::backend::device::command::{Finished, Submission, Work};
use crate::backend::device::pending::{Pending, PendingCommand};
use crate::backend::device::switches;
use crate::backend::device::timing::DeviceTimes;
use crate::callback::critical;
use crate::result::ResultCode;
use crate::thread::ThreadState;
use crate::view;
use crate::view::abi::pti_view_kind;
use crate::view::device::Engine;

/// A command awaiting its record.
pub(super) struct ClCommand {
    pub(super) event: cl_event,
    /// libpti created the event (the program passed none).
    pub(super) injected: bool,
    pub(super) queue_handle: cl_command_queue,
    pub(super) queue: Arc<QueueInfo>,
    /// The enqueue call that submitted it.
    pub(super) submission: Submission,
    /// Host time at which the enqueue call began.
    pub(super) enter: u64,
    /// Host time at which it returned (the command's submit time, unless the runtime's SUBMIT
    /// is read: `PTI_OPENCL_TIMESTAMPS=all`).
    pub(super) exit: u64,
}

// SAFETY: the handles are opaque values passed back to the runtime, which allows OpenCL objects
// to be used from any thread.
unsafe impl Send for ClCommand {}

/// The OpenCL commands awaiting their records.
pub(super) static PENDING: Pending<ClCommand> = Pending::for_harvester();

/// What a poll learnt of a completed command.
pub(super) enum Outcome {
    /// Completed, with its END time.
    Ended(u64),
    /// Completed or failed without times: the runtime's answer.
    NoTimes(cl_int),
}

/// The execution status of `event` (`CL_COMPLETE`, a negative error, or still running).
fn status(event: cl_event) -> Option<cl_int> {
    query::event(event, CL_EVENT_COMMAND_EXECUTION_STATUS)
}

/// The other timestamps of a command whose END is known, read from the runtime only where they
/// are needed (0: not read): START always; QUEUED for an anchor of a device that has no timer
/// read beside the host clock (NVIDIA's, PoCL's: one command per millisecond of submissions,
/// see `timing`); SUBMIT, and QUEUED of every command, only where `PTI_OPENCL_TIMESTAMPS=all`
/// asks for them.
fn device_times(event: cl_event, end: u64, anchors: bool) -> Result<DeviceTimes, cl_int> {
    let all = switches::opencl_all_timestamps();
    let read = |wanted: bool, what| {
        if wanted {
            query::profiling(event, what).unwrap_or(0)
        } else {
            0
        }
    };
    Ok(DeviceTimes {
        queued: read(all || anchors, CL_PROFILING_COMMAND_QUEUED),
        submit: read(all, CL_PROFILING_COMMAND_SUBMIT),
        start: query::profiling(event, CL_PROFILING_COMMAND_START)?,
        end,
        // Where QUEUED was asked for and the runtime has none, START is the earliest there is.
        anchor: all || anchors,
    })
}

impl PendingCommand for ClCommand {
    type Outcome = Outcome;

    /// A command's END timestamp exists exactly when it has completed (the profiling query fails
    /// before), so one query tells most commands apart; only when it fails is the execution
    /// status asked (a failed command, or one that completed between the two queries).
    #[inline]
    fn poll(&self) -> Option<Outcome> {
        match query::profiling(self.event, CL_PROFILING_COMMAND_END) {
            Ok(end) => Some(Outcome::Ended(end)),
            Err(code) => match status(self.event) {
                Some(s) if s < 0 => Some(Outcome::NoTimes(s)),
                Some(CL_COMPLETE) => Some(
                    match query::profiling(self.event, CL_PROFILING_COMMAND_END) {
                        Ok(end) => Outcome::Ended(end),
                        Err(_) => Outcome::NoTimes(code),
                    },
                ),
                _ => None,
            },
        }
    }

    fn finish(&mut self, outcome: Outcome, state: Option<&ThreadState>) {
        let times = match outcome {
            Outcome::Ended(end) => device_times(
                self.event,
                end,
                devices::wants_anchor(&self.queue.device, self.enter),
            ),
            Outcome::NoTimes(code) => Err(code),
        };
        // SAFETY: libpti's one reference to this event, given back once: the command is done.
        unsafe { commands::release(self.event, self.injected) };
        let t = match times {
            Ok(t) => t,
            Err(code) => return self.lost(code),
        };
        let Some(h) = devices::to_host(&self.queue.device, &t, self.enter) else {
            return self.lost(CL_PROFILING_INFO_NOT_AVAILABLE);
        };
        // Without the runtime's SUBMIT, the command was submitted when its call returned (or
        // when it started, if the converted START is earlier); without its QUEUED, appended when
        // its call began. Never appended after its submission.
        let submit = h.submit.unwrap_or(self.exit.min(h.start));
        let append = h.queued.unwrap_or(self.enter).min(submit);
        if !t.in_order() {
            critical::raise(
                ResultCode::ErrorBadTimestamp,
                format_args!(
                    "an OpenCL command ({}) reported device timestamps out of order (queued {}, \
                     submit {}, start {}, end {}); its record carries them as converted",
                    self.submission.name().to_string_lossy(),
                    t.queued,
                    t.submit,
                    t.start,
                    t.end
                ),
            );
        }
        Finished {
            // OpenCL has no engine index; see `Engine`.
            engine: Engine::default(),
            submission: &self.submission,
            queue: self.queue_handle,
            context: self.queue.context,
            device: &self.queue.device.identity,
            device_is_cpu: self.queue.device.is_cpu,
            event: if self.injected {
                core::ptr::null_mut()
            } else {
                self.event
            },
            append,
            submit,
            start: h.start,
            end: h.end,
        }
        .record(state);
    }

    fn view(&self) -> pti_view_kind {
        self.submission.view(self.queue.device.is_cpu)
    }

    /// Its queue: a wait for the queue harvests the queue's shard (`overrides::wait`).
    fn home(&self) -> usize {
        self.queue_handle as usize
    }

    fn in_order_stream(&self) -> Option<usize> {
        self.queue
            .in_order
            .load(core::sync::atomic::Ordering::Relaxed)
            .then_some(self.queue_handle as usize)
    }
}

impl ClCommand {
    /// Counts the record of a command whose times could not be had, and says why. A device
    /// that gives no timestamps for barriers (NVIDIA's) is told once and remembered, so that its
    /// later barriers are counted without an event injected for them.
    fn lost(&self, code: cl_int) {
        let device = &self.queue.device;
        if matches!(self.submission.work, Work::Barrier { .. })
            && code == CL_PROFILING_INFO_NOT_AVAILABLE
        {
            let total = view::count_lost(self.view());
            if device.info.learn_barriers_untimed() {
                critical::raise(
                    ResultCode::ErrorDriver,
                    format_args!(
                        "this OpenCL device gives no timestamps for barriers \
                         ({} answered CL_PROFILING_INFO_NOT_AVAILABLE): its barriers get no \
                         synchronisation records and are counted as dropped \
                         (ptiViewGetDroppedRecordCount; {total} so far)",
                        self.submission.name().to_string_lossy()
                    ),
                );
            }
            return;
        }
        self.submission.lost(
            device.is_cpu,
            ResultCode::ErrorDriver,
            &format!("the OpenCL runtime gave no device timestamps for it (status {code})"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a pending command costs in libpti's memory (docs/BENCHMARKS.md, issue 39, reports
    /// it): its entry in the list, besides the runtime's event it holds. A change that grows it
    /// is seen here.
    #[test]
    fn a_pending_command_holds_at_most_264_bytes() {
        let entry = size_of::<ClCommand>();
        // A harvest keeps the runtime's answer beside each command it takes.
        let harvested = entry + size_of::<Option<Outcome>>();
        println!("pending OpenCL command: {entry} bytes, {harvested} while harvested");
        assert!(entry <= 264 && harvested <= 264, "{entry}, {harvested}");
    }
}
