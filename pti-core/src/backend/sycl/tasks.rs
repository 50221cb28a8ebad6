//! The `sycl` stream: queues, whose IDs the records name, and tasks, whose node, instance,
//! queue, source location and times the device records of their commands carry ([`SyclTag`]).
//!
//! A task is open on the thread that enqueues it, from `task_begin` to `task_end`; the Unified
//! Runtime enqueue call inside it (`calls`) completes its tag (queue, enqueue time), and the
//! OpenCL or Level Zero command the driver backend submits meanwhile takes the tag, which this
//! module tells the engine ([`publish`], `runtime_task`) whenever it changes.

use core::ffi::CStr;
use std::collections::HashMap;

use pti_sys::xpti::trace_event_data_t;

use super::framework::{self, Value};
use crate::intern::intern;
use crate::sycl_tag::SyclTag;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view::abi::PTI_INVALID_QUEUE_ID;
use crate::{clock, runtime_task, view};

/// SYCL queue IDs by the Unified Runtime handle of their queue (queues come and go, and a
/// handle may be reused by a later queue).
static QUEUES: WriterLock<Option<HashMap<usize, u64>>> = WriterLock::new(None);

thread_local! {
    /// Tasks being enqueued on this thread (innermost last), by instance.
    static TASKS: ThreadStack<u64, SyclTag> = const { ThreadStack::new() };
}

/// The lock of this module, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &QUEUES
}

/// A queue's `queue_handle` and `queue_id` metadata.
///
/// # Safety
/// `event` is the event of a running notification.
unsafe fn queue_of(event: *mut trace_event_data_t) -> Option<(usize, u64)> {
    let fw = framework::get()?;
    let (mut handle, mut id) = (None, None);
    // SAFETY: the caller's contract.
    unsafe {
        fw.metadata(event, |key, value| match key.to_bytes() {
            b"queue_handle" => handle = value.number(),
            b"queue_id" => id = value.number(),
            _ => {}
        })
    };
    Some((handle? as usize, id?))
}

/// `queue_create`.
///
/// # Safety
/// As [`queue_of`].
pub(super) unsafe fn queue_created(event: *mut trace_event_data_t) {
    // SAFETY: the caller's contract.
    if let Some((handle, id)) = unsafe { queue_of(event) } {
        QUEUES
            .lock()
            .get_or_insert_with(HashMap::new)
            .insert(handle, id);
    }
}

/// `queue_destroy`.
///
/// # Safety
/// As [`queue_of`].
pub(super) unsafe fn queue_destroyed(event: *mut trace_event_data_t) {
    // SAFETY: the caller's contract.
    if let Some((handle, id)) = unsafe { queue_of(event) }
        && let Some(queues) = QUEUES.lock().as_mut()
        && queues.get(&handle) == Some(&id)
    {
        queues.remove(&handle);
    }
}

/// The SYCL ID of the queue whose Unified Runtime handle is `handle`.
fn queue_id(handle: usize) -> Option<u64> {
    QUEUES.lock().as_ref()?.get(&handle).copied()
}

fn interned(text: &[u8]) -> Option<&'static CStr> {
    let text = std::str::from_utf8(text).ok()?;
    (!text.is_empty()).then(|| crate::intern::intern_str(text))
}

/// Whether tags are of use: a device view is enabled (records), or a tool listens to the kernel
/// launches (their `_kernel_name`).
fn wanted() -> bool {
    view::any_device_view_configured() || super::calls::launches_listened()
}

/// A line number as records give it: 0 when unknown (XPTI's is `u32::MAX` then).
fn line(n: u64) -> u64 {
    if n >= u64::from(u32::MAX) { 0 } else { n }
}

/// `task_begin`: the task's tag, kept while it is enqueued (only while something could use it).
///
/// # Safety
/// As [`queue_of`].
pub(super) unsafe fn task_begun(event: *mut trace_event_data_t, instance: u64) {
    if event.is_null() || !wanted() {
        return;
    }
    let Some(fw) = framework::get() else { return };
    let now = clock::now();
    // SAFETY: the caller's contract: the event is valid during the notification.
    let node_id = unsafe { (*event).unique_id };
    let mut tag = SyclTag {
        node_id,
        invocation_id: instance as u32,
        queue_id: PTI_INVALID_QUEUE_ID,
        task_begin: now,
        enqueue_begin: 0,
        source_file: None,
        line: 0,
        kernel_name: None,
    };
    // SAFETY: as above.
    if let Some(origin) = unsafe { fw.origin(event) } {
        tag.kernel_name = origin.name.map(intern);
        tag.source_file = origin.source_file.map(intern);
        tag.line = line(u64::from(origin.line));
    }
    // Metadata, where present, is more precise than the payload.
    // SAFETY: as above.
    unsafe {
        fw.metadata(event, |key, value| match (key.to_bytes(), value) {
            (b"kernel_name", Value::Text(t)) => tag.kernel_name = interned(t).or(tag.kernel_name),
            (b"sym_source_file_name", Value::Text(t)) => {
                tag.source_file = interned(t).or(tag.source_file)
            }
            (b"sym_line_no", Value::Number(n)) => tag.line = line(n),
            (b"queue_id", Value::Number(n)) => tag.queue_id = n,
            _ => {}
        })
    };
    TASKS.push(instance, tag);
    publish();
}

/// `task_end`: the task and any opened inside it and never ended.
pub(super) fn task_ended(instance: u64) {
    if TASKS.close(instance).is_some() {
        publish();
    }
}

/// A Unified Runtime enqueue call (a kernel `launch` or not) begins on queue `handle` inside
/// the current task: the task's queue (the handle's, which names the queue that really
/// submits; the event's metadata may be a shared event's), and for a launch its enqueue time.
pub(super) fn enqueue_begun(handle: usize, launch: bool) {
    TASKS.with_top(|tag| {
        if launch && tag.enqueue_begin == 0 {
            tag.enqueue_begin = clock::now();
        }
        if let Some(id) = queue_id(handle) {
            tag.queue_id = id;
        }
    });
    publish();
}

/// The SYCL kernel name of the innermost task open on this thread, if it has one.
pub(super) fn innermost_kernel_name() -> Option<&'static CStr> {
    TASKS.with_top(|tag| tag.kernel_name).flatten()
}

/// Tells the engine which task the driver commands submitted on this thread now belong to: the
/// innermost open task, while one of its `urEnqueue*` calls is open (work submitted outside such
/// a call, or after a task whose end the runtime skipped, is not the task's). Called whenever a
/// task or an enqueue call begins or ends.
pub(super) fn publish() {
    let tag = if super::calls::in_enqueue() {
        TASKS.with_top(|tag| *tag)
    } else {
        None
    };
    runtime_task::set_current(tag);
}

/// In the child after `fork()`.
pub(super) fn forget_in_child() {
    *QUEUES.lock() = None;
}
