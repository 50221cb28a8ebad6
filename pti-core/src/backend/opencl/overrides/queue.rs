//! Queue calls: creation adds profiling while a device view is enabled (and says so when the
//! runtime refuses it), queries of the queue's properties and of its events' profiling hide what
//! libpti added, and a released queue is forgotten. The program's release of an event whose
//! command awaits its record keeps the event alive for it (`retained`).
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function;
//! `next_fn` is the next layer's entry for the same function.

#![allow(non_snake_case, clippy::too_many_arguments)]

use core::ffi::c_void;

use pti_sys::opencl::cl_function_types::*;
use pti_sys::opencl::*;

use super::super::next::Next;
use super::super::{commands, query, queues, retained};
use crate::callback::critical;
use crate::dispatch::CallScope;
use crate::result::ResultCode;
use crate::view;

fn profiling_refused(queue_kind: &str) {
    critical::raise(
        ResultCode::ErrorTracingNotInitialized,
        format_args!(
            "the OpenCL runtime refused a {queue_kind} with profiling added by libpti; the queue \
             was created as the program asked, and its commands get no device records"
        ),
    );
}

fn register_as_created(queue: cl_command_queue, context: cl_context, device: cl_device_id) {
    let properties: cl_command_queue_properties =
        query::queue(queue, CL_QUEUE_PROPERTIES).unwrap_or(0);
    let profiled = properties & CL_QUEUE_PROFILING_ENABLE != 0;
    queues::register(queue, context, device, profiled, false, None);
}

pub(in crate::backend::opencl) unsafe fn clCreateCommandQueue(
    scope: &mut CallScope,
    next_fn: Next<clCreateCommandQueue_t>,
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    let add = view::any_device_view_configured()
        && properties & (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE) == 0;
    if add {
        // SAFETY: the program's arguments, with profiling added to its properties.
        let queue = scope.call_next(|| unsafe {
            next_fn(
                context,
                device,
                properties | CL_QUEUE_PROFILING_ENABLE,
                errcode_ret,
            )
        });
        if !queue.is_null() {
            queues::register(queue, context, device, true, true, None);
            return queue;
        }
        profiling_refused("command queue");
    }
    // SAFETY: the program's arguments, unchanged.
    let queue = scope.call_next(|| unsafe { next_fn(context, device, properties, errcode_ret) });
    if !queue.is_null() {
        register_as_created(queue, context, device);
    }
    queue
}

/// Both `clCreateCommandQueueWithProperties` and its KHR alias.
unsafe fn create_with_properties(
    scope: &CallScope,
    next_fn: Next<clCreateCommandQueueWithProperties_t>,
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    if view::any_device_view_configured() {
        // SAFETY: the program's zero-terminated list (or NULL), as the API requires.
        if let Some((changed, original)) = unsafe { queues::properties_with_profiling(properties) }
        {
            // SAFETY: the program's arguments, with profiling added to its property list.
            let queue = scope
                .call_next(|| unsafe { next_fn(context, device, changed.as_ptr(), errcode_ret) });
            if !queue.is_null() {
                queues::register(queue, context, device, true, true, Some(original));
                return queue;
            }
            profiling_refused("command queue with properties");
        }
    }
    // SAFETY: the program's arguments, unchanged.
    let queue = scope.call_next(|| unsafe { next_fn(context, device, properties, errcode_ret) });
    if !queue.is_null() {
        register_as_created(queue, context, device);
    }
    queue
}

pub(in crate::backend::opencl) unsafe fn clCreateCommandQueueWithProperties(
    scope: &mut CallScope,
    next_fn: Next<clCreateCommandQueueWithProperties_t>,
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: the program's arguments (see the module docs).
    unsafe { create_with_properties(scope, next_fn, context, device, properties, errcode_ret) }
}

pub(in crate::backend::opencl) unsafe fn clCreateCommandQueueWithPropertiesKHR(
    scope: &mut CallScope,
    next_fn: Next<clCreateCommandQueueWithPropertiesKHR_t>,
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    // SAFETY: the program's arguments (see the module docs); the KHR entry has the core one's
    // signature (`cl_queue_properties_khr` is `cl_queue_properties`).
    unsafe { create_with_properties(scope, next_fn, context, device, properties, errcode_ret) }
}

pub(in crate::backend::opencl) unsafe fn clGetCommandQueueInfo(
    scope: &mut CallScope,
    next_fn: Next<clGetCommandQueueInfo_t>,
    command_queue: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    if param_name == CL_QUEUE_PROPERTIES_ARRAY
        && queues::profiling_added(command_queue)
        && let Some(original) =
            queues::lookup(command_queue).and_then(|q| q.original_properties.clone())
    {
        // SAFETY: the program's output arguments, NULL or as large as it says.
        return unsafe {
            answer(
                &original,
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        };
    }
    // SAFETY: the program's arguments, unchanged.
    let status = scope.call_next(|| unsafe {
        next_fn(
            command_queue,
            param_name,
            param_value_size,
            param_value,
            param_value_size_ret,
        )
    });
    if status != CL_SUCCESS || param_value.is_null() || !queues::profiling_added(command_queue) {
        return status;
    }
    match param_name {
        CL_QUEUE_PROPERTIES if param_value_size >= size_of::<cl_command_queue_properties>() => {
            let value = param_value.cast::<cl_command_queue_properties>();
            // SAFETY: the runtime has just written a `cl_command_queue_properties` there.
            unsafe { value.write_unaligned(value.read_unaligned() & !CL_QUEUE_PROFILING_ENABLE) };
        }
        // A queue created without a list: a runtime may build one from the properties.
        CL_QUEUE_PROPERTIES_ARRAY => {
            let mut written = 0usize;
            if !param_value_size_ret.is_null() {
                // SAFETY: the runtime has just written the size there.
                written = unsafe { param_value_size_ret.read() };
            }
            let n = written.min(param_value_size) / size_of::<cl_queue_properties>();
            let list = param_value.cast::<cl_queue_properties>();
            for i in (0..n.saturating_sub(1)).step_by(2) {
                // SAFETY: `i + 1 < n` entries the runtime has just written.
                unsafe {
                    if list.add(i).read_unaligned() == CL_QUEUE_PROPERTIES as cl_queue_properties {
                        let v = list.add(i + 1);
                        v.write_unaligned(v.read_unaligned() & !CL_QUEUE_PROFILING_ENABLE);
                    }
                }
            }
        }
        _ => {}
    }
    status
}

/// `clSetCommandQueueProperty` (OpenCL 1.0): on a queue whose profiling libpti added, the
/// program may not turn it off (libpti's records need it) and does not see it in the old value.
pub(in crate::backend::opencl) unsafe fn clSetCommandQueueProperty(
    scope: &mut CallScope,
    next_fn: Next<clSetCommandQueueProperty_t>,
    command_queue: cl_command_queue,
    properties: cl_command_queue_properties,
    enable: cl_bool,
    old_properties: *mut cl_command_queue_properties,
) -> cl_int {
    let added = queues::profiling_added(command_queue);
    let properties = if added && enable == CL_FALSE {
        properties & !CL_QUEUE_PROFILING_ENABLE
    } else {
        properties
    };
    // SAFETY: the program's arguments, with libpti's profiling kept on its queue.
    let status =
        scope.call_next(|| unsafe { next_fn(command_queue, properties, enable, old_properties) });
    if status == CL_SUCCESS {
        queues::properties_changed(command_queue);
    }
    if status == CL_SUCCESS && added && !old_properties.is_null() {
        // SAFETY: the runtime has just written the old properties there.
        unsafe { old_properties.write(old_properties.read() & !CL_QUEUE_PROFILING_ENABLE) };
    }
    status
}

/// `clGetEventInfo`: the reference count of a program's event that libpti holds until its
/// command is recorded is answered without libpti's reference.
pub(in crate::backend::opencl) unsafe fn clGetEventInfo(
    scope: &mut CallScope,
    next_fn: Next<clGetEventInfo_t>,
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let query = || {
        // SAFETY: the program's arguments, unchanged.
        scope.call_next(|| unsafe {
            next_fn(
                event,
                param_name,
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        })
    };
    if param_name != CL_EVENT_REFERENCE_COUNT || param_value_size < size_of::<cl_uint>() {
        return query();
    }
    // SAFETY: a non-NULL `param_value` holds at least one `cl_uint` (checked above).
    unsafe { retained::count_query(event, param_value.cast(), query) }
}

/// Answers an info query with `values`, as the runtime would.
///
/// # Safety
/// `param_value` is NULL or writable for `param_value_size` bytes; `size_ret` NULL or writable.
unsafe fn answer(
    values: &[cl_queue_properties],
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let size = size_of_val(values);
    if !param_value.is_null() {
        if param_value_size < size {
            return CL_INVALID_VALUE;
        }
        // SAFETY: the caller's contract, and `size <= param_value_size`.
        unsafe {
            core::ptr::copy_nonoverlapping(
                values.as_ptr().cast::<u8>(),
                param_value.cast::<u8>(),
                size,
            )
        };
    }
    if !size_ret.is_null() {
        // SAFETY: the caller's contract.
        unsafe { size_ret.write(size) };
    }
    CL_SUCCESS
}

pub(in crate::backend::opencl) unsafe fn clReleaseCommandQueue(
    scope: &mut CallScope,
    next_fn: Next<clReleaseCommandQueue_t>,
    command_queue: cl_command_queue,
) -> cl_int {
    let last = query::queue::<cl_uint>(command_queue, CL_QUEUE_REFERENCE_COUNT) == Some(1);
    // SAFETY: the program's argument, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(command_queue) });
    // A queue whose profiling libpti added stays known (until a new queue takes its address):
    // its program's events may still be asked for profiling info, which must stay hidden.
    if status == CL_SUCCESS && last && !queues::profiling_added(command_queue) {
        queues::forget(command_queue);
    }
    status
}

pub(in crate::backend::opencl) unsafe fn clGetEventProfilingInfo(
    scope: &mut CallScope,
    next_fn: Next<clGetEventProfilingInfo_t>,
    event: cl_event,
    param_name: cl_profiling_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    // The program's own events on a queue it did not ask to profile answer as they would have.
    if queues::any_profiling_added() && event_queue(event).is_some_and(queues::profiling_added) {
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    // SAFETY: the program's arguments, unchanged.
    scope.call_next(|| unsafe {
        next_fn(
            event,
            param_name,
            param_value_size,
            param_value,
            param_value_size_ret,
        )
    })
}

/// The queue of `event` (`None` for user events and on error).
pub(super) fn event_queue(event: cl_event) -> Option<cl_command_queue> {
    query::event(event, CL_EVENT_COMMAND_QUEUE).filter(|q: &cl_command_queue| !q.is_null())
}

/// `clReleaseEvent`: an event whose command awaits its record is retained first (hidden from the
/// program's count queries), so that its times can still be read after the program lets it go.
pub(in crate::backend::opencl) unsafe fn clReleaseEvent(
    scope: &mut CallScope,
    next_fn: Next<clReleaseEvent_t>,
    event: cl_event,
) -> cl_int {
    crate::fault::point("opencl.release_event");
    // SAFETY: an event the program still holds a reference to (its release is not yet made).
    if !retained::released_by_program(event, || unsafe { commands::retain(event) }) {
        // libpti keeps the program's reference instead, given back with the command's record.
        return CL_SUCCESS;
    }
    // SAFETY: the program's argument, unchanged.
    scope.call_next(|| unsafe { next_fn(event) })
}
