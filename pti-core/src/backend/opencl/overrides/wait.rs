//! Host waits: each harvests the commands that finished (`clFinish`: those of its queue) and
//! records the wait (host times of the call: its API record's start, and when the runtime's call
//! returned, where the API record now ends too; the harvest after it is libpti's work, which the
//! overhead view counts).
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function;
//! `next_fn` is the next layer's entry for the same function.

#![allow(non_snake_case, clippy::too_many_arguments)]

use core::ffi::c_void;

use pti_sys::opencl::cl_function_types::*;
use pti_sys::opencl::*;

use super::super::next::Next;
use super::super::pending::PENDING;
use super::super::{query, queues};
use crate::api::ApiGroup;
use crate::backend::device::command;
use crate::dispatch::CallScope;
use crate::ids::opencl as ids;
use crate::view::abi::pti_view_synchronization_type;
use crate::view::device::Synchronization;

use super::queue::event_queue;

pub(in crate::backend::opencl) unsafe fn clFinish(
    scope: &mut CallScope,
    next_fn: Next<clFinish_t>,
    command_queue: cl_command_queue,
) -> cl_int {
    let start = scope.start_or_now();
    // SAFETY: the program's argument, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(command_queue) });
    let end = scope.real_call_returned();
    // This queue's commands (and those of any queue that shares its shard); the others are
    // harvested at their own queue's waits, by `clWaitForEvents` or at a flush.
    PENDING.harvest_home_soon(command_queue as usize);
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

pub(in crate::backend::opencl) unsafe fn clWaitForEvents(
    scope: &mut CallScope,
    next_fn: Next<clWaitForEvents_t>,
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    let start = scope.start_or_now();
    // SAFETY: the program's arguments, unchanged.
    let status = scope.call_next(|| unsafe { next_fn(num_events, event_list) });
    let end = scope.real_call_returned();
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

pub(in crate::backend::opencl) unsafe fn clMemBlockingFreeINTEL(
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
