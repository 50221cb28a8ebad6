//! Device commands: what an enqueue call submits, and how its override makes sure the command can
//! be timed.
//!
//! [`submit`] wraps the real call of every enqueue override. When the call is traced and the view
//! for its kind of work is enabled, it hands the runtime an event (the program's, or one libpti
//! injects and the program never sees), makes sure the event outlives the program's release of
//! it (`retained`), and leaves the command pending until it completes (see `pending`). Otherwise
//! it passes the call on untouched.

use std::sync::Arc;

use pti_sys::opencl::*;

use super::pending::{ClCommand, PENDING};
use super::queues::{self, QueueInfo};
use super::{next, retained};
use crate::Site;
use crate::api::{ApiGroup, ApiId, Domain};
pub(super) use crate::backend::device::command::Work;
use crate::backend::device::command::{Appending, Submission};
use crate::boundary::{self, Entry};
use crate::callback::critical;
use crate::callback::device::{self as callbacks, next_operation_id};
use crate::dispatch::{CallResult, CallScope};
use crate::result::ResultCode;
use crate::thread::{self, ThreadState};
use crate::view::abi::{pti_view_kind, pti_view_memory_type};
use crate::view::emit;
use crate::{clock, correlation, fault, interest, view};

/// Memory of an OpenCL memory object (buffer or image).
pub(super) const OBJECT: pti_view_memory_type = pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_DEVICE;

/// The memory kind of host pointer `ptr` used on `queue` (USM kinds where the runtime knows).
pub(super) fn pointer_memory(
    queue: &QueueInfo,
    ptr: *const core::ffi::c_void,
) -> pti_view_memory_type {
    queue.device.info.memory_type(queue.context, ptr)
}

/// The first 8 bytes of a fill pattern of `size` bytes, little-endian.
///
/// # Safety
/// `pattern` is NULL or readable for `size` bytes, as the fill functions require.
pub(super) unsafe fn pattern_value(pattern: *const core::ffi::c_void, size: usize) -> u64 {
    if pattern.is_null() {
        return 0;
    }
    let mut bytes = [0u8; 8];
    let n = size.min(8);
    // SAFETY: the caller guarantees `size >= n` readable bytes at `pattern`.
    unsafe { core::ptr::copy_nonoverlapping(pattern.cast::<u8>(), bytes.as_mut_ptr(), n) };
    u64::from_le_bytes(bytes)
}

/// Product of a 3-D region (`NULL` counts as empty).
///
/// # Safety
/// `region` is NULL or readable for three `size_t`, as the rect and image functions require.
pub(super) unsafe fn region_volume(region: *const usize) -> u64 {
    if region.is_null() {
        return 0;
    }
    // SAFETY: the caller guarantees three readable values.
    let r = unsafe { core::slice::from_raw_parts(region, 3) };
    r.iter().fold(1u64, |acc, v| acc.saturating_mul(*v as u64))
}

/// Size in bytes of one element of `image` (0 if the runtime does not say).
pub(super) fn image_element_size(image: cl_mem) -> u64 {
    super::query::image::<usize>(image, CL_IMAGE_ELEMENT_SIZE).map_or(0, |s| s as u64)
}

/// One enqueue call, as its hook describes it to [`submit`].
pub(super) struct Enqueue<'a> {
    pub(super) scope: &'a CallScope,
    pub(super) api_id: ApiId,
    pub(super) queue: cl_command_queue,
    /// The program's `event` argument (NULL: it wants none).
    pub(super) event: *mut cl_event,
    /// The call returns only once the command has completed.
    pub(super) blocking: bool,
}

/// Runs `enqueue` (the real call, made through [`CallScope::call_next`], given the event pointer
/// to pass and returning what the wrapper returns and the call's status), timing the command it
/// submits when that is wanted. `work` describes the command; it is asked only when the command
/// will be recorded.
pub(super) fn submit<R: CallResult>(
    call: Enqueue<'_>,
    work: impl FnOnce(&QueueInfo) -> Work,
    enqueue: impl FnOnce(*mut cl_event) -> (R, cl_int),
) -> R {
    let real_call = |event| call.scope.call_next_keeping(|| enqueue(event), |(r, _)| *r);
    let Some((queue, work)) = wanted(&call, work) else {
        return real_call(call.event).0;
    };
    let mut own: cl_event = core::ptr::null_mut();
    let slot: *mut cl_event = if call.event.is_null() {
        &mut own
    } else {
        call.event
    };
    let operation_id = next_operation_id();
    // Described to the subscribers of GPU operations only while there are some.
    let appending = callbacks::listening(Domain::GpuOperations).then(|| Appending {
        group: ApiGroup::OpenCl,
        api_id: call.api_id,
        correlation_id: call.scope.correlation_id(),
        context: queue.context.cast(),
        list: core::ptr::null_mut(),
        queue: call.queue.cast(),
        device: queue.device.identity.device,
        immediate: true,
        operation: work.operation(ApiGroup::OpenCl, call.api_id, operation_id),
    });
    if let Some(appending) = &appending {
        appending.report(Site::Enter, None);
    }
    let enter = call.scope.start_or_now();
    let (result, status) = real_call(slot);
    let exit = call.scope.real_call_returned();
    if let Some(appending) = &appending {
        appending.report(Site::Exit, Some(status));
    }
    if status != CL_SUCCESS {
        return result;
    }
    // SAFETY: `slot` is libpti's own event variable or the program's `event` argument, which the
    // runtime has just written on success.
    let event = unsafe { slot.read() };
    let (group, api_id, correlation_id) =
        (ApiGroup::OpenCl, call.api_id, call.scope.correlation_id());
    let submission = match call.scope.thread() {
        state @ Some(_) => Submission::on(state, group, api_id, correlation_id, operation_id, work),
        None => Submission::now(group, api_id, correlation_id, operation_id, work),
    };
    let submitted = Submitted {
        handle: call.queue,
        program_event: call.event,
        blocking: call.blocking,
    };
    submitted.pend(queue, || submission, event, (enter, exit));
    result
}

/// The records-only path of an enqueue call: [`submit`] and the dispatch around it in one
/// function, for the common case of a tool that only collects views. Returns `None`, before
/// making the real call and without any effect, where it does not apply; the wrapper then takes
/// the general path (`trace_call`, the override, [`submit`]).
///
/// It applies while the call's interest is a device view's (and the API view's, if enabled)
/// only, no overhead is measured, nobody listens to GPU operations, and the command will be
/// recorded as [`wanted`] decides without counting a loss or raising an event (a known, profiled
/// queue whose device's view is enabled). It does what the general path does, in the same
/// order: the same correlation ID, times, command, pending entry and API record; a panic at
/// each of the dispatch's fault points has the same effect as there (see `dispatch`'s module
/// docs: the real call is made exactly once, a command or record it could not complete is left
/// out).
#[inline(always)]
pub(super) fn submit_records_only(
    api_id: ApiId,
    queue: cl_command_queue,
    event: *mut cl_event,
    blocking: bool,
    work: impl FnOnce(&QueueInfo) -> Work,
    enqueue: impl FnOnce(*mut cl_event) -> cl_int,
) -> Option<cl_int> {
    let interest = interest::load(ApiGroup::OpenCl, api_id);
    if interest & !(interest::API_RECORDS | interest::DEVICE) != 0
        || interest & interest::DEVICE == 0
        || view::is_enabled(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD)
        || callbacks::listening(Domain::GpuOperations)
    {
        return None;
    }
    let call = Submitted {
        handle: queue,
        program_event: event,
        blocking,
    };
    thread::with(|state| records_only_on(state, interest, api_id, call, work, enqueue)).flatten()
}

/// [`submit_records_only`] with the calling thread's state.
#[inline(always)]
fn records_only_on(
    state: &ThreadState,
    interest: u8,
    api_id: ApiId,
    call: Submitted,
    work: impl FnOnce(&QueueInfo) -> Work,
    enqueue: impl FnOnce(*mut cl_event) -> cl_int,
) -> Option<cl_int> {
    // Calls from callbacks, and calls after a panic here, are the general path's to pass on.
    if state.in_callback.get() || boundary::is_off(Entry::Dispatch) {
        return None;
    }
    let (queue, work) = records_only_wanted(call.handle, work)?;
    let group = ApiGroup::OpenCl;
    let prepared = boundary::catch(Entry::Dispatch, || {
        fault::point("dispatch.enter");
        let clock = clock::Source::current();
        let correlation_id = correlation::for_call(group, state);
        (clock, correlation_id, clock.now())
    });
    let Some((clock, correlation_id, start)) = prepared else {
        // Untraced, as the general path leaves a call whose ENTER panicked.
        return Some(enqueue(call.program_event));
    };
    let mut own: cl_event = core::ptr::null_mut();
    let slot: *mut cl_event = if call.program_event.is_null() {
        &mut own
    } else {
        call.program_event
    };
    // As the general path's override: a panic before the real call leaves the call as the
    // program made it, without its command, and still writes the call's API record.
    let submitting =
        boundary::catch(Entry::Dispatch, || fault::point("override.before_call")).is_some();
    let status = enqueue(if submitting { slot } else { call.program_event });
    let exit = clock.now();
    if submitting {
        let _ = boundary::catch(Entry::Dispatch, || {
            fault::point("override.after_call");
            if status != CL_SUCCESS {
                return;
            }
            let operation_id = next_operation_id();
            // SAFETY: `slot` is libpti's own event variable or the program's `event` argument,
            // which the runtime has just written on success.
            let event = unsafe { slot.read() };
            call.pend(
                queue,
                || {
                    Submission::on(
                        Some(state),
                        group,
                        api_id,
                        correlation_id,
                        operation_id,
                        work,
                    )
                },
                event,
                (start, exit),
            );
        });
    }
    let _ = boundary::catch(Entry::Dispatch, || {
        fault::point("dispatch.exit");
        if interest & interest::API_RECORDS != 0 {
            let record = emit::ApiCall {
                group,
                api_id,
                correlation_id,
                start,
                end: exit,
                status: status as u32,
            };
            emit::api_record(state, &record);
        }
    });
    Some(status)
}

/// [`wanted`] for [`submit_records_only`]: `None` also where the general path would count a
/// loss or warn (an unknown or unprofiled queue, an untimed barrier), so that it does.
#[inline(always)]
fn records_only_wanted(
    queue: cl_command_queue,
    work: impl FnOnce(&QueueInfo) -> Work,
) -> Option<(Arc<QueueInfo>, Work)> {
    let queue = queues::lookup(queue)?;
    if !queue.profiled {
        return None;
    }
    let work = work(&queue);
    if !view::is_enabled(work.view(queue.device.is_cpu))
        || (matches!(work, Work::Barrier { .. }) && queue.device.info.barriers_untimed())
    {
        return None;
    }
    Some((queue, work))
}

/// Where a command was submitted, as its pending entry needs to know.
#[derive(Clone, Copy)]
struct Submitted {
    /// Its queue.
    handle: cl_command_queue,
    /// The program's `event` argument (NULL: it wants none).
    program_event: *mut cl_event,
    /// Its call returned only once it had completed.
    blocking: bool,
}

impl Submitted {
    /// Leaves the command just submitted with `event` pending (or records it now, after a
    /// blocking call), its program's event tracked; counts it lost where the runtime gave no
    /// event or it cannot be kept. `times` are when its call began and returned. Inlined, with
    /// the submission built where the command is (each copy of OpenCL's 248-byte command cost
    /// about 29 instructions).
    #[inline(always)]
    fn pend(
        self,
        queue: Arc<QueueInfo>,
        submission: impl FnOnce() -> Submission,
        event: cl_event,
        times: (u64, u64),
    ) {
        let injected = self.program_event.is_null();
        // SAFETY: an event the runtime has just returned for this command.
        if event.is_null() || (!injected && !unsafe { track(event) }) {
            submission().lost(
                queue.device.is_cpu,
                ResultCode::ErrorDriver,
                if event.is_null() {
                    "the OpenCL runtime gave no event for it"
                } else {
                    "the OpenCL runtime could not retain its event"
                },
            );
            return;
        }
        let pending = ClCommand {
            event,
            injected,
            queue_handle: self.handle,
            queue,
            submission: submission(),
            enter: times.0,
            exit: times.1,
        };
        if self.blocking {
            PENDING.complete_now(pending);
            // A blocking call is a wait for its queue: its earlier commands have completed (in
            // order) or may have, and are recorded now rather than at the next wait or flush.
            PENDING.harvest_home_soon(self.handle as usize);
        } else {
            PENDING.add(pending);
        }
    }
}

/// The queue and work of a command that will be recorded, or `None` to pass the call through.
fn wanted(
    call: &Enqueue<'_>,
    work: impl FnOnce(&QueueInfo) -> Work,
) -> Option<(Arc<QueueInfo>, Work)> {
    if !call.scope.is_traced() || !view::any_device_view() {
        return None;
    }
    let queue = queues::lookup(call.queue)?;
    let work = work(&queue);
    let view = work.view(queue.device.is_cpu);
    if !view::is_enabled(view) {
        return None;
    }
    if matches!(work, Work::Barrier { .. }) && queue.device.info.barriers_untimed() {
        // Said once, when the device first gave no times for a barrier; counted each time.
        view::count_lost(view);
        return None;
    }
    if !queue.profiled {
        let lost = view::count_lost(view);
        if !queue
            .warned_unprofiled
            .swap(true, core::sync::atomic::Ordering::Relaxed)
        {
            critical::raise(
                ResultCode::ErrorTracingNotInitialized,
                format_args!(
                    "OpenCL queue {:p} was created without profiling before a device view was \
                     enabled, so its commands get no device records ({lost} {view:?} records \
                     lost so far; see ptiViewGetDroppedRecordCount)",
                    call.queue
                ),
            );
        }
        return None;
    }
    Some((queue, work))
}

/// Notes the program's event of a command now pending, so that the program's release of it
/// before its record is written keeps it alive (see `retained`).
///
/// # Safety
/// `event` is a live event the runtime gave.
unsafe fn track(event: cl_event) -> bool {
    // SAFETY: the caller's contract.
    retained::track(event, || unsafe { retain(event) })
}

/// Takes a reference of libpti's to `event`, hidden from the program's reference-count queries
/// (see `retained`).
///
/// # Safety
/// `event` is a live event.
pub(super) unsafe fn retain(event: cl_event) -> bool {
    let Some(retain) = next::dispatch().clRetainEvent else {
        return false;
    };
    // SAFETY: the caller's contract.
    unsafe { retain(event) == CL_SUCCESS }
}

/// Retains every program event whose command is pending, and from now on each one as it is
/// submitted: run when the program's releases may pass unseen (a panic switched a thread's
/// dispatch off, or a second loader, not traced, started; see `retained`).
pub(super) fn hold_all() {
    // SAFETY: the tracked events are live: their commands are pending, and libpti holds a
    // reference to any the program released.
    let failed = retained::hold_all(|event| unsafe { retain(event) });
    if failed > 0 {
        critical::raise(
            ResultCode::ErrorDriver,
            format_args!(
                "the OpenCL runtime could not retain {failed} of the program's events whose \
                 commands await their records; if the program releases one on a thread libpti \
                 no longer sees, reading its times may fail"
            ),
        );
    }
}

/// Gives back libpti's reference to an event once its command is recorded: its own injected one
/// (`injected`), or the program's event is forgotten (and libpti's retain of it given back, if it
/// took one).
///
/// # Safety
/// The command's record is written and its event no longer read; called once per command.
#[inline]
pub(super) unsafe fn release(event: cl_event, injected: bool) {
    let Some(release) = next::dispatch().clReleaseEvent else {
        return;
    };
    if injected {
        // SAFETY: libpti's own event, given back once.
        unsafe { release(event) };
    } else {
        forget(event, release);
    }
}

/// The program's event of a recorded command is no longer tracked (out of line: the injected
/// event's path stays small enough to be inlined into the harvest).
#[inline(never)]
fn forget(event: cl_event, release: unsafe extern "C" fn(cl_event) -> cl_int) {
    // SAFETY: libpti's retain of the program's event, if it took one, given back once.
    retained::untrack(event, || unsafe {
        release(event);
    });
}

/// Sizes of mapped regions, by mapped address, for the records of their unmaps.
static MAPPED: crate::sync::writer_lock::WriterLock<Option<std::collections::HashMap<usize, u64>>> =
    crate::sync::writer_lock::WriterLock::new(None);

/// The lock of the map sizes, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn crate::sync::writer_lock::ForkLock {
    &MAPPED
}

/// Remembers the size of a region just mapped (while the tool enabled the copy view, paused or
/// not: its unmap may come after a resume).
pub(super) fn mapped(ptr: *mut core::ffi::c_void, bytes: impl FnOnce() -> u64) {
    if ptr.is_null() || !view::is_configured(pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY) {
        return;
    }
    let bytes = bytes();
    MAPPED
        .lock()
        .get_or_insert_with(Default::default)
        .insert(ptr as usize, bytes);
}

/// The size of a region being unmapped (0 if its map was not seen).
pub(super) fn unmapped(ptr: *mut core::ffi::c_void) -> u64 {
    MAPPED
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&(ptr as usize)))
        .unwrap_or(0)
}
