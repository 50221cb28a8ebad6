//! The overrides: functions whose wrappers do more than trace. Each override has the name of its
//! function and receives the call's scope, the next layer's entry and the program's arguments,
//! and makes the real call itself, through [`CallScope::call_next`] (or [`submit`], which does),
//! so that the dispatch's panic boundary around it (`dispatch::run_override`) never makes the
//! real call twice nor skips it. The wrapper generator gives an override to every function named
//! here.
//!
//! - queue creation adds profiling while a device view is enabled, and queue queries hide it;
//! - enqueue calls go through [`submit`], which times the command they submit;
//! - host waits harvest finished commands and record the wait;
//! - extension-address queries hand out libpti's wrappers;
//! - kernel creation invalidates remembered kernel names.
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function;
//! `next_fn` is the next layer's entry for the same function.

#![allow(non_snake_case, clippy::too_many_arguments)]

use core::ffi::{c_char, c_void};

use pti_sys::opencl::cl_function_types::*;
use pti_sys::opencl::*;
use pti_sys::opencl_extra::*;

use super::commands::{
    self, Enqueue, OBJECT, Work, image_element_size, pattern_value, pointer_memory, region_volume,
    submit,
};
use super::next::Next;
use super::pending::PENDING;
use super::{errcode, extensions, kernels, query, queues, retained};
use crate::api::{ApiGroup, Site};
use crate::backend::device::command;
use crate::callback::critical;
use crate::dispatch::CallScope;
use crate::ids::opencl as ids;
use crate::result::ResultCode;
use crate::view::abi::{pti_view_memory_type, pti_view_synchronization_type};
use crate::view::device::{Launch, Synchronization};
use crate::{clock, view};

const MEMORY: pti_view_memory_type = pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY;

/// `(value, status)` for calls whose status is their return value.
fn returned(status: cl_int) -> (cl_int, cl_int) {
    (status, status)
}

fn enqueue(
    scope: &CallScope,
    api_id: u32,
    queue: cl_command_queue,
    event: *mut cl_event,
    blocking: cl_bool,
) -> Enqueue<'_> {
    Enqueue {
        scope,
        api_id,
        queue,
        event,
        blocking: blocking != CL_FALSE,
    }
}

// ---------------------------------------------------------------------------------------------
// Queues

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

pub(super) unsafe fn clCreateCommandQueue(
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

pub(super) unsafe fn clCreateCommandQueueWithProperties(
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

pub(super) unsafe fn clCreateCommandQueueWithPropertiesKHR(
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

pub(super) unsafe fn clGetCommandQueueInfo(
    scope: &mut CallScope,
    next_fn: Next<clGetCommandQueueInfo_t>,
    command_queue: cl_command_queue,
    param_name: cl_command_queue_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    if param_name == CL_QUEUE_PROPERTIES_ARRAY && queues::profiling_added(command_queue) {
        if let Some(original) =
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
pub(super) unsafe fn clSetCommandQueueProperty(
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
pub(super) unsafe fn clGetEventInfo(
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

pub(super) unsafe fn clReleaseCommandQueue(
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

pub(super) unsafe fn clGetEventProfilingInfo(
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
fn event_queue(event: cl_event) -> Option<cl_command_queue> {
    query::event(event, CL_EVENT_COMMAND_QUEUE).filter(|q: &cl_command_queue| !q.is_null())
}

// ---------------------------------------------------------------------------------------------
// Kernels

pub(super) unsafe fn clCreateKernel(
    scope: &mut CallScope,
    next_fn: Next<clCreateKernel_t>,
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let at = (program, ids::clCreateKernel);
    created_kernels(scope, at, |scope| {
        // SAFETY: the program's arguments (the wrapper's status variable in `errcode_ret`).
        let kernel = scope.call_next(|| unsafe { next_fn(program, kernel_name, errcode_ret) });
        // SAFETY: NULL, the wrapper's status variable, or the program's `errcode_ret`, written.
        (kernel, vec![kernel], unsafe { errcode::read(errcode_ret) })
    })
}

/// Runs `create`, a call that creates kernels of `program` (returning what the call returns,
/// the kernels, and its status), telling kernel-object callbacks at its ENTER and EXIT.
fn created_kernels<R>(
    scope: &mut CallScope,
    (program, api_id): (cl_program, crate::api::ApiId),
    create: impl FnOnce(&mut CallScope) -> (R, Vec<cl_kernel>, cl_int),
) -> R {
    let at = |site| (true, site);
    let none = core::ptr::null_mut();
    kernels::report(at(Site::Enter), api_id, scope, (none, program.cast()), None);
    let (result, created, status) = create(scope);
    kernels::created();
    if created.iter().all(|k| k.is_null()) {
        kernels::report(
            at(Site::Exit),
            api_id,
            scope,
            (none, program.cast()),
            Some(status),
        );
    }
    for kernel in created.into_iter().filter(|k| !k.is_null()) {
        kernels::report(
            at(Site::Exit),
            api_id,
            scope,
            (kernel, program.cast()),
            Some(status),
        );
    }
    result
}

pub(super) unsafe fn clCreateKernelsInProgram(
    scope: &mut CallScope,
    next_fn: Next<clCreateKernelsInProgram_t>,
    program: cl_program,
    num_kernels: cl_uint,
    kernels_out: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    let at = (program, ids::clCreateKernelsInProgram);
    created_kernels(scope, at, |scope| {
        // SAFETY: the program's arguments, unchanged.
        let status = scope
            .call_next(|| unsafe { next_fn(program, num_kernels, kernels_out, num_kernels_ret) });
        let made = if status == CL_SUCCESS && !kernels_out.is_null() && kernels::listened() {
            // SAFETY: on success the runtime wrote `num_kernels` kernels to the program's array.
            unsafe { core::slice::from_raw_parts(kernels_out, num_kernels as usize) }.to_vec()
        } else {
            Vec::new()
        };
        (status, made, status)
    })
}

pub(super) unsafe fn clCloneKernel(
    scope: &mut CallScope,
    next_fn: Next<clCloneKernel_t>,
    source_kernel: cl_kernel,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let program = if kernels::listened() {
        query::kernel(source_kernel, CL_KERNEL_PROGRAM).unwrap_or(core::ptr::null_mut())
    } else {
        core::ptr::null_mut()
    };
    created_kernels(scope, (program, ids::clCloneKernel), |scope| {
        // SAFETY: the program's argument (the wrapper's status variable in `errcode_ret`).
        let kernel = scope.call_next(|| unsafe { next_fn(source_kernel, errcode_ret) });
        // SAFETY: NULL, the wrapper's status variable, or the program's `errcode_ret`, written.
        (kernel, vec![kernel], unsafe { errcode::read(errcode_ret) })
    })
}

pub(super) unsafe fn clReleaseKernel(
    scope: &mut CallScope,
    next_fn: Next<clReleaseKernel_t>,
    kernel: cl_kernel,
) -> cl_int {
    // Only a release of the last reference destroys the kernel.
    let last = kernels::listened()
        && query::kernel::<cl_uint>(kernel, CL_KERNEL_REFERENCE_COUNT) == Some(1);
    let destroyed = |site| (false, site);
    let api_id = ids::clReleaseKernel;
    let handles = (kernel, core::ptr::null_mut());
    if last {
        kernels::report(destroyed(Site::Enter), api_id, scope, handles, None);
    }
    // SAFETY: the program's argument, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(kernel) });
    if last {
        kernels::report(destroyed(Site::Exit), api_id, scope, handles, Some(status));
    }
    status
}

/// The launch of an NDRange: `work_dim` dimensions of `global` work-items, in work-groups of
/// `local` (NULL: the runtime chooses).
///
/// # Safety
/// `global` and `local` are NULL or point at `work_dim` sizes when `work_dim` is 1 to 3.
unsafe fn nd_range(work_dim: cl_uint, global: *const usize, local: *const usize) -> Launch {
    if global.is_null() || !(1..=3).contains(&work_dim) {
        return Launch::default();
    }
    let read = |p: *const usize| {
        let mut out = [0u64; 3];
        for (d, o) in out.iter_mut().enumerate().take(work_dim as usize) {
            // SAFETY: `d` < `work_dim` entries, as the caller promises.
            *o = unsafe { *p.add(d) } as u64;
        }
        out
    };
    Launch::nd_range(
        work_dim,
        read(global),
        (!local.is_null()).then(|| read(local)),
    )
}

pub(super) unsafe fn clEnqueueNDRangeKernel(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueNDRangeKernel_t>,
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueNDRangeKernel,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| Work::Kernel {
            name: kernels::name(kernel).unwrap_or(c"<unnamed kernel>"),
            kernel: kernel.cast(),
            // SAFETY: the program's size arrays, NULL or of `work_dim` entries (checked 1 to 3).
            launch: unsafe { nd_range(work_dim, global_work_size, local_work_size) },
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    kernel,
                    work_dim,
                    global_work_offset,
                    global_work_size,
                    local_work_size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueTask(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueTask_t>,
    command_queue: cl_command_queue,
    kernel: cl_kernel,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(scope, ids::clEnqueueTask, command_queue, event, CL_FALSE),
        |_| Work::Kernel {
            name: kernels::name(kernel).unwrap_or(c"<unnamed kernel>"),
            kernel: kernel.cast(),
            // One work-item in one work-group.
            launch: Launch::nd_range(1, [1, 0, 0], Some([1, 0, 0])),
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    kernel,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueNativeKernel(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueNativeKernel_t>,
    command_queue: cl_command_queue,
    user_func: Option<unsafe extern "C" fn(*mut c_void)>,
    args: *mut c_void,
    cb_args: usize,
    num_mem_objects: cl_uint,
    mem_list: *const cl_mem,
    args_mem_loc: *mut *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueNativeKernel,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| Work::Kernel {
            name: c"clEnqueueNativeKernel",
            kernel: core::ptr::null_mut(),
            launch: Launch::default(),
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    user_func,
                    args,
                    cb_args,
                    num_mem_objects,
                    mem_list,
                    args_mem_loc,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Copies

fn copy(src: pti_view_memory_type, dst: pti_view_memory_type, bytes: u64) -> Work {
    Work::Copy { src, dst, bytes }
}

pub(super) unsafe fn clEnqueueReadBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueReadBuffer_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueReadBuffer,
            command_queue,
            event,
            blocking_read,
        ),
        |q| copy(OBJECT, pointer_memory(q, ptr), size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    blocking_read,
                    offset,
                    size,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueWriteBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueWriteBuffer_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueWriteBuffer,
            command_queue,
            event,
            blocking_write,
        ),
        |q| copy(pointer_memory(q, ptr), OBJECT, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    blocking_write,
                    offset,
                    size,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueCopyBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueCopyBuffer_t>,
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueCopyBuffer,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| copy(OBJECT, OBJECT, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    src_buffer,
                    dst_buffer,
                    src_offset,
                    dst_offset,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueReadBufferRect(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueReadBufferRect_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_read: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueReadBufferRect,
            command_queue,
            event,
            blocking_read,
        ),
        |q| {
            // SAFETY: `region` is NULL or three values, as the API requires.
            let bytes = unsafe { region_volume(region) };
            copy(OBJECT, pointer_memory(q, ptr), bytes)
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    blocking_read,
                    buffer_origin,
                    host_origin,
                    region,
                    buffer_row_pitch,
                    buffer_slice_pitch,
                    host_row_pitch,
                    host_slice_pitch,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueWriteBufferRect(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueWriteBufferRect_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_write: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueWriteBufferRect,
            command_queue,
            event,
            blocking_write,
        ),
        |q| {
            // SAFETY: `region` is NULL or three values, as the API requires.
            let bytes = unsafe { region_volume(region) };
            copy(pointer_memory(q, ptr), OBJECT, bytes)
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    blocking_write,
                    buffer_origin,
                    host_origin,
                    region,
                    buffer_row_pitch,
                    buffer_slice_pitch,
                    host_row_pitch,
                    host_slice_pitch,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueCopyBufferRect(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueCopyBufferRect_t>,
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueCopyBufferRect,
            command_queue,
            event,
            CL_FALSE,
        ),
        // SAFETY: `region` is NULL or three values, as the API requires.
        |_| copy(OBJECT, OBJECT, unsafe { region_volume(region) }),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    src_buffer,
                    dst_buffer,
                    src_origin,
                    dst_origin,
                    region,
                    src_row_pitch,
                    src_slice_pitch,
                    dst_row_pitch,
                    dst_slice_pitch,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

/// Bytes of an image region: pixels times the image's element size.
///
/// # Safety
/// `region` is NULL or three values.
unsafe fn image_bytes(image: cl_mem, region: *const usize) -> u64 {
    // SAFETY: the caller's contract.
    let pixels = unsafe { region_volume(region) };
    pixels.saturating_mul(image_element_size(image))
}

pub(super) unsafe fn clEnqueueReadImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueReadImage_t>,
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueReadImage,
            command_queue,
            event,
            blocking_read,
        ),
        |q| {
            // SAFETY: `region` is NULL or three values, as the API requires.
            let bytes = unsafe { image_bytes(image, region) };
            copy(OBJECT, pointer_memory(q, ptr), bytes)
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    image,
                    blocking_read,
                    origin,
                    region,
                    row_pitch,
                    slice_pitch,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueWriteImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueWriteImage_t>,
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueWriteImage,
            command_queue,
            event,
            blocking_write,
        ),
        |q| {
            // SAFETY: `region` is NULL or three values, as the API requires.
            let bytes = unsafe { image_bytes(image, region) };
            copy(pointer_memory(q, ptr), OBJECT, bytes)
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    image,
                    blocking_write,
                    origin,
                    region,
                    input_row_pitch,
                    input_slice_pitch,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueCopyImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueCopyImage_t>,
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueCopyImage,
            command_queue,
            event,
            CL_FALSE,
        ),
        // SAFETY: `region` is NULL or three values, as the API requires.
        |_| copy(OBJECT, OBJECT, unsafe { image_bytes(src_image, region) }),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    src_image,
                    dst_image,
                    src_origin,
                    dst_origin,
                    region,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueCopyImageToBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueCopyImageToBuffer_t>,
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueCopyImageToBuffer,
            command_queue,
            event,
            CL_FALSE,
        ),
        // SAFETY: `region` is NULL or three values, as the API requires.
        |_| copy(OBJECT, OBJECT, unsafe { image_bytes(src_image, region) }),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    src_image,
                    dst_buffer,
                    src_origin,
                    region,
                    dst_offset,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueCopyBufferToImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueCopyBufferToImage_t>,
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueCopyBufferToImage,
            command_queue,
            event,
            CL_FALSE,
        ),
        // SAFETY: `region` is NULL or three values, as the API requires.
        |_| copy(OBJECT, OBJECT, unsafe { image_bytes(dst_image, region) }),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    src_buffer,
                    dst_image,
                    src_offset,
                    dst_origin,
                    region,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueMapBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMapBuffer_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    let mapped = submit(
        enqueue(
            scope,
            ids::clEnqueueMapBuffer,
            command_queue,
            event,
            blocking_map,
        ),
        |_| copy(OBJECT, MEMORY, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            let mapped = unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    blocking_map,
                    map_flags,
                    offset,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                    errcode_ret,
                )
            };
            // SAFETY: NULL, libpti's status variable or the program's, just written.
            (mapped, unsafe { errcode::read(errcode_ret) })
        },
    );
    commands::mapped(mapped, || size as u64);
    mapped
}

pub(super) unsafe fn clEnqueueMapImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMapImage_t>,
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: `region` is NULL or three values, as the API requires.
    let bytes = || unsafe { image_bytes(image, region) };
    let mapped = submit(
        enqueue(
            scope,
            ids::clEnqueueMapImage,
            command_queue,
            event,
            blocking_map,
        ),
        |_| copy(OBJECT, MEMORY, bytes()),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            let mapped = unsafe {
                next_fn(
                    command_queue,
                    image,
                    blocking_map,
                    map_flags,
                    origin,
                    region,
                    image_row_pitch,
                    image_slice_pitch,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                    errcode_ret,
                )
            };
            // SAFETY: NULL, libpti's status variable or the program's, just written.
            (mapped, unsafe { errcode::read(errcode_ret) })
        },
    );
    commands::mapped(mapped, bytes);
    mapped
}

pub(super) unsafe fn clEnqueueUnmapMemObject(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueUnmapMemObject_t>,
    command_queue: cl_command_queue,
    memobj: cl_mem,
    mapped_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let bytes = commands::unmapped(mapped_ptr);
    submit(
        enqueue(
            scope,
            ids::clEnqueueUnmapMemObject,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| copy(MEMORY, OBJECT, bytes),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    memobj,
                    mapped_ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueSVMMemcpy(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueSVMMemcpy_t>,
    command_queue: cl_command_queue,
    blocking_copy: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueSVMMemcpy,
            command_queue,
            event,
            blocking_copy,
        ),
        |q| {
            copy(
                pointer_memory(q, src_ptr),
                pointer_memory(q, dst_ptr),
                size as u64,
            )
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    blocking_copy,
                    dst_ptr,
                    src_ptr,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueSVMMap(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueSVMMap_t>,
    command_queue: cl_command_queue,
    blocking_map: cl_bool,
    flags: cl_map_flags,
    svm_ptr: *mut c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let status = submit(
        enqueue(
            scope,
            ids::clEnqueueSVMMap,
            command_queue,
            event,
            blocking_map,
        ),
        |q| copy(pointer_memory(q, svm_ptr), MEMORY, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    blocking_map,
                    flags,
                    svm_ptr,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    );
    if status == CL_SUCCESS {
        commands::mapped(svm_ptr, || size as u64);
    }
    status
}

pub(super) unsafe fn clEnqueueSVMUnmap(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueSVMUnmap_t>,
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let bytes = commands::unmapped(svm_ptr);
    submit(
        enqueue(
            scope,
            ids::clEnqueueSVMUnmap,
            command_queue,
            event,
            CL_FALSE,
        ),
        |q| copy(MEMORY, pointer_memory(q, svm_ptr), bytes),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    svm_ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueMemcpyINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMemcpyINTEL_t>,
    command_queue: cl_command_queue,
    blocking: cl_bool,
    dst_ptr: *mut c_void,
    src_ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueMemcpyINTEL,
            command_queue,
            event,
            blocking,
        ),
        |q| {
            copy(
                pointer_memory(q, src_ptr),
                pointer_memory(q, dst_ptr),
                size as u64,
            )
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    blocking,
                    dst_ptr,
                    src_ptr,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueReadGlobalVariableINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueReadGlobalVariableINTEL_t>,
    command_queue: cl_command_queue,
    program: cl_program,
    name: *const c_char,
    blocking_read: cl_bool,
    size: usize,
    offset: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueReadGlobalVariableINTEL,
            command_queue,
            event,
            blocking_read,
        ),
        |q| copy(OBJECT, pointer_memory(q, ptr), size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    program,
                    name,
                    blocking_read,
                    size,
                    offset,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueWriteGlobalVariableINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueWriteGlobalVariableINTEL_t>,
    command_queue: cl_command_queue,
    program: cl_program,
    name: *const c_char,
    blocking_write: cl_bool,
    size: usize,
    offset: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueWriteGlobalVariableINTEL,
            command_queue,
            event,
            blocking_write,
        ),
        |q| copy(pointer_memory(q, ptr), OBJECT, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    program,
                    name,
                    blocking_write,
                    size,
                    offset,
                    ptr,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueReadHostPipeINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueReadHostPipeINTEL_t>,
    command_queue: cl_command_queue,
    program: cl_program,
    pipe_symbol: *const c_char,
    blocking_read: cl_bool,
    ptr: *mut c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueReadHostPipeINTEL,
            command_queue,
            event,
            blocking_read,
        ),
        |q| copy(OBJECT, pointer_memory(q, ptr), size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    program,
                    pipe_symbol,
                    blocking_read,
                    ptr,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueWriteHostPipeINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueWriteHostPipeINTEL_t>,
    command_queue: cl_command_queue,
    program: cl_program,
    pipe_symbol: *const c_char,
    blocking_write: cl_bool,
    ptr: *const c_void,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueWriteHostPipeINTEL,
            command_queue,
            event,
            blocking_write,
        ),
        |q| copy(pointer_memory(q, ptr), OBJECT, size as u64),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    program,
                    pipe_symbol,
                    blocking_write,
                    ptr,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Fills

pub(super) unsafe fn clEnqueueFillBuffer(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueFillBuffer_t>,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueFillBuffer,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| {
            // SAFETY: `pattern` is readable for `pattern_size` bytes, as the API requires.
            let value = unsafe { pattern_value(pattern, pattern_size) };
            Work::Fill {
                memory: OBJECT,
                bytes: size as u64,
                value,
            }
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    buffer,
                    pattern,
                    pattern_size,
                    offset,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueFillImage(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueFillImage_t>,
    command_queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueFillImage,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| {
            // SAFETY: `region` holds three values and `fill_color` four 32-bit components, as
            // the API requires.
            let (bytes, value) =
                unsafe { (image_bytes(image, region), pattern_value(fill_color, 16)) };
            Work::Fill {
                memory: OBJECT,
                bytes,
                value,
            }
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    image,
                    fill_color,
                    origin,
                    region,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueSVMMemFill(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueSVMMemFill_t>,
    command_queue: cl_command_queue,
    svm_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueSVMMemFill,
            command_queue,
            event,
            CL_FALSE,
        ),
        |q| {
            // SAFETY: `pattern` is readable for `pattern_size` bytes, as the API requires.
            let value = unsafe { pattern_value(pattern, pattern_size) };
            Work::Fill {
                memory: pointer_memory(q, svm_ptr),
                bytes: size as u64,
                value,
            }
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    svm_ptr,
                    pattern,
                    pattern_size,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueMemFillINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMemFillINTEL_t>,
    command_queue: cl_command_queue,
    dst_ptr: *mut c_void,
    pattern: *const c_void,
    pattern_size: usize,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueMemFillINTEL,
            command_queue,
            event,
            CL_FALSE,
        ),
        |q| {
            // SAFETY: `pattern` is readable for `pattern_size` bytes, as the API requires.
            let value = unsafe { pattern_value(pattern, pattern_size) };
            Work::Fill {
                memory: pointer_memory(q, dst_ptr),
                bytes: size as u64,
                value,
            }
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    dst_ptr,
                    pattern,
                    pattern_size,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueMemsetINTEL(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMemsetINTEL_t>,
    command_queue: cl_command_queue,
    dst_ptr: *mut c_void,
    value: cl_int,
    size: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueMemsetINTEL,
            command_queue,
            event,
            CL_FALSE,
        ),
        |q| Work::Fill {
            memory: pointer_memory(q, dst_ptr),
            bytes: size as u64,
            value: u64::from(value as u8),
        },
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    dst_ptr,
                    value,
                    size,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Barriers and markers (device-side synchronisation, with device times)

fn barrier(wait_events: cl_uint) -> Work {
    Work::Barrier {
        kind: pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_EXECUTION,
        wait_events,
    }
}

pub(super) unsafe fn clEnqueueMarker(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMarker_t>,
    command_queue: cl_command_queue,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(scope, ids::clEnqueueMarker, command_queue, event, CL_FALSE),
        |_| barrier(0),
        // SAFETY: the program's arguments, with libpti's event where it passed none.
        |event| returned(unsafe { next_fn(command_queue, event) }),
    )
}

pub(super) unsafe fn clEnqueueMarkerWithWaitList(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueMarkerWithWaitList_t>,
    command_queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueMarkerWithWaitList,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| barrier(num_events_in_wait_list),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

pub(super) unsafe fn clEnqueueBarrierWithWaitList(
    scope: &mut CallScope,
    next_fn: Next<clEnqueueBarrierWithWaitList_t>,
    command_queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    submit(
        enqueue(
            scope,
            ids::clEnqueueBarrierWithWaitList,
            command_queue,
            event,
            CL_FALSE,
        ),
        |_| barrier(num_events_in_wait_list),
        |event| {
            // SAFETY: the program's arguments, with libpti's event where it passed none.
            returned(unsafe {
                next_fn(
                    command_queue,
                    num_events_in_wait_list,
                    event_wait_list,
                    event,
                )
            })
        },
    )
}

// ---------------------------------------------------------------------------------------------
// Host waits: harvest what finished, and record the wait (host times of the call)

pub(super) unsafe fn clFinish(
    scope: &mut CallScope,
    next_fn: Next<clFinish_t>,
    command_queue: cl_command_queue,
) -> cl_int {
    let start = clock::now();
    // SAFETY: the program's argument, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(command_queue) });
    let end = clock::now();
    PENDING.harvest_soon();
    command::host_wait(scope.correlation_id(), (start, end), || Synchronization {
        kind: pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_QUEUE,
        group: ApiGroup::OpenCl,
        api_id: ids::clFinish,
        context: queues::context_of(command_queue),
        queue: command_queue,
        event: core::ptr::null_mut(),
        start,
        end,
        thread_id: 0,
        correlation_id: 0,
        wait_events: 0,
        status: status as u32,
    });
    status
}

pub(super) unsafe fn clWaitForEvents(
    scope: &mut CallScope,
    next_fn: Next<clWaitForEvents_t>,
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    let start = clock::now();
    // SAFETY: the program's arguments, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(num_events, event_list) });
    let end = clock::now();
    PENDING.harvest_soon();
    command::host_wait(scope.correlation_id(), (start, end), || {
        let first = if num_events > 0 && !event_list.is_null() && status == CL_SUCCESS {
            // SAFETY: the list holds `num_events` valid events (the runtime accepted them).
            unsafe { event_list.read() }
        } else {
            core::ptr::null_mut()
        };
        let (context, queue) = if first.is_null() {
            (core::ptr::null_mut(), core::ptr::null_mut())
        } else {
            (
                query::event(first, CL_EVENT_CONTEXT).unwrap_or(core::ptr::null_mut()),
                event_queue(first).unwrap_or(core::ptr::null_mut()),
            )
        };
        Synchronization {
            kind: pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_EVENT,
            group: ApiGroup::OpenCl,
            api_id: ids::clWaitForEvents,
            context,
            queue,
            event: first,
            start,
            end,
            thread_id: 0,
            correlation_id: 0,
            wait_events: num_events,
            status: status as u32,
        }
    });
    status
}

pub(super) unsafe fn clMemBlockingFreeINTEL(
    scope: &mut CallScope,
    next_fn: Next<clMemBlockingFreeINTEL_t>,
    context: cl_context,
    ptr: *mut c_void,
) -> cl_int {
    // SAFETY: the program's arguments, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(context, ptr) });
    // The free waited for the commands using the memory: some may have finished.
    PENDING.harvest_soon();
    status
}

// ---------------------------------------------------------------------------------------------
// Extension addresses

pub(super) unsafe fn clGetExtensionFunctionAddress(
    scope: &mut CallScope,
    next_fn: Next<clGetExtensionFunctionAddress_t>,
    func_name: *const c_char,
) -> *mut c_void {
    // SAFETY: the program's argument, unchanged.
    let function = scope.call_next(|| unsafe { next_fn(func_name) });
    // SAFETY: `func_name` is the program's NUL-terminated name (or NULL).
    unsafe { extensions::hand_out(core::ptr::null_mut(), func_name, function) }
}

pub(super) unsafe fn clGetExtensionFunctionAddressForPlatform(
    scope: &mut CallScope,
    next_fn: Next<clGetExtensionFunctionAddressForPlatform_t>,
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    // SAFETY: the program's arguments, unchanged.
    let function = scope.call_next(|| unsafe { next_fn(platform, func_name) });
    // SAFETY: a platform the program got from the runtime, and its NUL-terminated name.
    unsafe { extensions::hand_out(platform, func_name, function) }
}
