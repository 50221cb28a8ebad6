//! Device commands on Level Zero command lists, from the append that records them to the record
//! of each execution.
//!
//! - An append is *prepared* in its prologue ([`prepare`]): when the call is traced and the
//!   command's view is enabled, the command gets a timing event: the program's own if its pool has
//!   kernel timestamps, else one of libpti's, put in the call's parameters (the program's event,
//!   if any, is then signalled by a barrier appended right after, so it still fires). The
//!   epilogue ([`complete`]) puts the program's argument back before the EXIT callbacks.
//! - On an immediate list the command is pending at once; on a regular list it is kept with the
//!   list (`objects::Recorded`) and becomes pending at each execution of the list
//!   ([`executing`], [`executed`]), with the correlation ID of the execute call.
//! - A pending command is recorded when its event has signalled ([`ZeCommand`], harvested as in
//!   `backend::pending`).

use core::cell::RefCell;
use std::sync::Arc;

use pti_sys::level_zero::*;

use super::devices::{self, Device};
use super::events;
use super::objects::{self, List, Recorded};
use super::tracer::{internal, loader};
use crate::api::{ApiGroup, ApiId};
use crate::backend::pending::{Pending, PendingCommand};
use crate::backend::work::{Finished, Work};
use crate::dispatch::open;
use crate::result::ResultCode;
use crate::view::abi::{pti_view_kind, pti_view_memory_type};
use crate::{clock, critical, thread, view};

/// A command waiting for its event.
pub(super) struct ZeCommand {
    event: ze_event_handle_t,
    /// Give `event` back to libpti's pool when recorded (an immediate list's injected event).
    give_back: bool,
    list: ze_command_list_handle_t,
    context: ze_context_handle_t,
    device: Arc<Device>,
    work: Work,
    api_id: ApiId,
    correlation_id: u32,
    thread_id: u32,
    /// Host times: the append call, the call that submitted it (the append, or the execute),
    /// and the start of that call (the lower bound of its device times).
    appended: u64,
    submitted: u64,
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread.
unsafe impl Send for ZeCommand {}

pub(super) static PENDING: Pending<ZeCommand> = Pending::new();

impl ZeCommand {
    /// The event that times the command.
    pub(super) fn event(&self) -> ze_event_handle_t {
        self.event
    }
}

impl PendingCommand for ZeCommand {
    type Outcome = Result<ze_kernel_timestamp_result_t, ze_result_t>;

    fn poll(&self) -> Option<Self::Outcome> {
        let l = loader()?;
        let status = l.zeEventQueryStatus?;
        // SAFETY: an event that times this command, alive while it is pending.
        match internal(|| unsafe { status(self.event) }) {
            ZE_RESULT_NOT_READY => None,
            ZE_RESULT_SUCCESS => {
                let query = l.zeEventQueryKernelTimestamp?;
                // SAFETY: all-zero bytes are a valid timestamp result (integers).
                let mut ts: ze_kernel_timestamp_result_t = unsafe { core::mem::zeroed() };
                // SAFETY: the same event, and a writable result.
                let status = internal(|| unsafe { query(self.event, &mut ts) });
                Some(if status == ZE_RESULT_SUCCESS {
                    Ok(ts)
                } else {
                    Err(status)
                })
            }
            error => Some(Err(error)),
        }
    }

    fn finish(self, outcome: Self::Outcome) {
        if self.give_back {
            events::give(self.context, self.event);
        }
        let ts = match outcome {
            Ok(ts) => ts,
            Err(code) => {
                let view = self.view();
                let total = view::count_lost(view);
                critical::raise(
                    ResultCode::ErrorDriver,
                    format_args!(
                        "no kernel timestamps for a Level Zero command ({}, correlation ID {}): \
                         the driver answered 0x{code:x}; the {view:?} record is lost ({total} so \
                         far)",
                        self.work
                            .name(ApiGroup::LevelZero, self.api_id)
                            .to_string_lossy(),
                        self.correlation_id
                    ),
                );
                return;
            }
        };
        let h = self
            .device
            .to_host(ts.global.kernelStart, ts.global.kernelEnd, self.submitted);
        Finished {
            work: self.work,
            group: ApiGroup::LevelZero,
            api_id: self.api_id,
            correlation_id: self.correlation_id,
            thread_id: self.thread_id,
            queue: self.list.cast(),
            context: self.context.cast(),
            device: &self.device.identity,
            device_is_cpu: self.device.is_cpu,
            event: if self.give_back {
                core::ptr::null_mut()
            } else {
                self.event.cast()
            },
            // The conversion keeps the start at or after the submitting call's start.
            append: self.appended,
            submit: self.submitted,
            start: h.start,
            end: h.end,
        }
        .record();
    }

    fn view(&self) -> pti_view_kind {
        self.work.view(self.device.is_cpu)
    }
}

/// An append between its prologue and its epilogue.
struct Prepared {
    token: usize,
    list: Arc<List>,
    work: Work,
    api_id: ApiId,
    /// libpti's event, put in place of the program's.
    ours: Option<ze_event_handle_t>,
    /// The program's signal event (NULL if none).
    program: ze_event_handle_t,
    entered: u64,
}

thread_local! {
    static PREPARED: RefCell<Vec<Prepared>> = const { RefCell::new(Vec::new()) };
}

/// The memory kind of `ptr` in `context`, from `zeMemGetAllocProperties`.
pub(super) fn memory_type(
    context: ze_context_handle_t,
    ptr: *const core::ffi::c_void,
) -> pti_view_memory_type {
    let Some(get) = loader().and_then(|l| l.zeMemGetAllocProperties) else {
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

/// The prologue of an append (see the module docs). `signal` is the call's signal-event
/// parameter, which may be replaced by libpti's event.
pub(super) fn prepare(
    token: usize,
    api_id: ApiId,
    list_handle: ze_command_list_handle_t,
    signal: &mut ze_event_handle_t,
    work: impl FnOnce(&List) -> Work,
) {
    if token == 0 || !view::any_device_view() {
        return;
    }
    let Some(list) = objects::list(list_handle) else {
        return;
    };
    let work = work(&list);
    let device = devices::get(list.device);
    let view = work.view(device.is_cpu);
    if !view::is_enabled(view) {
        return;
    }
    let program = *signal;
    let ours = if !program.is_null() && objects::event_has_timestamps(program) {
        None
    } else {
        let Some(event) = events::take(list.context) else {
            let total = view::count_lost(view);
            critical::raise(
                ResultCode::ErrorDriver,
                format_args!(
                    "libpti could not create a timestamp event for a Level Zero command ({}): its \
                     {view:?} record is lost ({total} so far)",
                    work.name(ApiGroup::LevelZero, api_id).to_string_lossy()
                ),
            );
            return;
        };
        *signal = event;
        Some(event)
    };
    let prepared = Prepared {
        token,
        list,
        work,
        api_id,
        ours,
        program,
        entered: clock::now(),
    };
    let _ = PREPARED.try_with(|p| p.borrow_mut().push(prepared));
}

/// The epilogue of an append: the program's argument back, and the command pending (immediate
/// list) or kept with its list (regular list).
pub(super) fn complete(token: usize, result: ze_result_t, signal: &mut ze_event_handle_t) {
    if token == 0 {
        return;
    }
    let prepared = PREPARED
        .try_with(|p| {
            let mut p = p.borrow_mut();
            let i = p.iter().rposition(|x| x.token == token)?;
            Some(p.remove(i))
        })
        .ok()
        .flatten();
    let Some(prepared) = prepared else { return };
    if prepared.ours.is_some() {
        *signal = prepared.program;
    }
    if result != ZE_RESULT_SUCCESS {
        if let Some(ours) = prepared.ours {
            events::give(prepared.list.context, ours);
        }
        return;
    }
    let list = &prepared.list;
    if let (Some(ours), false) = (prepared.ours, prepared.program.is_null()) {
        signal_after(list.handle, prepared.program, ours);
    }
    let event = prepared.ours.unwrap_or(prepared.program);
    if list.immediate {
        PENDING.add(ZeCommand {
            event,
            give_back: prepared.ours.is_some(),
            list: list.handle,
            context: list.context,
            device: devices::get(list.device),
            work: prepared.work,
            api_id: prepared.api_id,
            correlation_id: open::correlation_id(token),
            thread_id: thread::with(|s| s.thread_id()).unwrap_or(0),
            appended: prepared.entered,
            submitted: prepared.entered,
        });
    } else if let Ok(mut recorded) = list.recorded.lock() {
        recorded.push(Recorded {
            work: prepared.work,
            api_id: prepared.api_id,
            event,
            owned: prepared.ours.is_some(),
            appended: prepared.entered,
        });
    }
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
    // SAFETY: the program's list and event, and one event to wait for.
    let status = internal(|| unsafe { barrier(list, program, 1, &mut wait) });
    if status != ZE_RESULT_SUCCESS {
        critical::raise(
            ResultCode::ErrorDriver,
            format_args!(
                "libpti could not append the barrier that signals the program's event after its \
                 command (0x{status:x}); the program's event will not be signalled"
            ),
        );
    }
}

/// Before a regular list runs again: the records of its previous execution are written (or
/// counted lost if it has not completed), and libpti's events reset for this one.
pub(super) fn executing(list: &List) {
    let handle = list.handle;
    PENDING.harvest_where(|c| c.list == handle);
    let unfinished = PENDING.take_where(|c| c.list == handle);
    if !unfinished.is_empty() {
        let n = unfinished.len();
        for c in unfinished {
            view::count_lost(c.view());
        }
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a Level Zero command list was executed again before its previous execution \
                 completed: {n} records of that execution are lost"
            ),
        );
    }
    if let Ok(recorded) = list.recorded.lock() {
        for r in recorded.iter().filter(|r| r.owned) {
            events::reset(r.event);
        }
    }
}

/// After a regular list was submitted: each of its commands is pending, with the execute call's
/// correlation ID.
pub(super) fn executed(list: &List, token: usize, entered: u64) {
    let Ok(recorded) = list.recorded.lock() else {
        return;
    };
    let device = devices::get(list.device);
    let correlation_id = open::correlation_id(token);
    let thread_id = thread::with(|s| s.thread_id()).unwrap_or(0);
    for r in recorded.iter() {
        PENDING.add(ZeCommand {
            event: r.event,
            give_back: false,
            list: list.handle,
            context: list.context,
            device: device.clone(),
            work: r.work,
            api_id: r.api_id,
            correlation_id,
            thread_id,
            appended: r.appended,
            submitted: entered,
        });
    }
}

/// A list being reset or destroyed: its recorded commands go, libpti's events back to the pool.
pub(super) fn forget_recorded(list: &List) {
    PENDING.harvest_where(|c| c.list == list.handle);
    let handle = list.handle;
    for c in PENDING.take_where(|c| c.list == handle) {
        view::count_lost(c.view());
    }
    if let Ok(mut recorded) = list.recorded.lock() {
        for r in recorded.drain(..).filter(|r| r.owned) {
            events::give(list.context, r.event);
        }
    }
}

/// The program is about to reset or destroy `event`: its command's record is written now if it
/// has completed, else counted lost.
pub(super) fn event_going(event: ze_event_handle_t) {
    PENDING.harvest_where(|c| c.event == event);
    let lost = PENDING.take_where(|c| c.event == event);
    if !lost.is_empty() {
        for c in &lost {
            view::count_lost(c.view());
        }
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "the program reset or destroyed a Level Zero event before its command completed: \
                 {} record(s) lost",
                lost.len()
            ),
        );
    }
}

/// The program is about to destroy `context`: records of completed commands are written, those
/// of the others counted lost, and libpti's events in it destroyed.
pub(super) fn context_going(context: ze_context_handle_t) {
    PENDING.harvest_where(|c| c.context == context);
    let lost = PENDING.take_where(|c| c.context == context);
    for c in &lost {
        view::count_lost(c.view());
    }
    if !lost.is_empty() {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a Level Zero context was destroyed with {} commands not completed: their records \
                 are lost",
                lost.len()
            ),
        );
    }
    events::destroy_context(context);
}
