//! Mutable command lists ("ZE_experimental_mutable_command_list" 1.1) and list clones
//! (`zeCommandListCreateCloneExp`), served through `zeDriverGetExtensionFunctionAddress`, as an
//! older driver serves them to a loader that predates them.
//!
//! A regular list created with `ze_mutable_command_list_exp_desc_t` in its descriptor's `pNext`
//! numbers the command appended after each `zeCommandListGetNextCommandIdExp`; updates change
//! the kernel's arguments, group count or size, the kernel itself, the signal event or the wait
//! events of the numbered command, for the executions that follow (the specification asks the
//! program to have synchronised the list's executions first). A clone (of a closed list created
//! with `ZE_COMMAND_LIST_FLAG_EXP_CLONEABLE`) holds the same commands, closed.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::c_void;
use std::sync::Arc;

use pti_sys::level_zero::*;

use crate::exec::{Command, Work};
use crate::list::{List, event, wait_list};
use crate::objects::{Kernel, Kind, into_handle, object};

/// The mutable list behind `h`, if it is one.
unsafe fn mutable(h: ze_command_list_handle_t) -> Result<&'static List, ze_result_t> {
    if h.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    // SAFETY: a list of this driver.
    let list: &List = unsafe { object(h) };
    if list.mutable {
        Ok(list)
    } else {
        Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }
}

/// Applies `change` to command `id` of list `h`.
unsafe fn update(
    h: ze_command_list_handle_t,
    id: u64,
    change: impl FnOnce(&mut Command) -> ze_result_t,
) -> ze_result_t {
    // SAFETY: the caller's list.
    let list = match unsafe { mutable(h) } {
        Ok(l) => l,
        Err(e) => return e,
    };
    let mut state = list.state();
    match state.commands.iter_mut().find(|c| c.id == id && id != 0) {
        Some(command) => change(command),
        None => ZE_RESULT_ERROR_INVALID_ARGUMENT,
    }
}

unsafe fn next_id(h: ze_command_list_handle_t, out: *mut u64) -> ze_result_t {
    // SAFETY: the caller's list.
    let list = match unsafe { mutable(h) } {
        Ok(l) => l,
        Err(e) => return e,
    };
    if out.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let mut state = list.state();
    if state.closed {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    state.last_id += 1;
    state.next_id = Some(state.last_id);
    // SAFETY: a writable ID, checked above.
    unsafe { *out = state.last_id };
    ZE_RESULT_SUCCESS
}

pub(crate) unsafe extern "C" fn zeCommandListGetNextCommandIdExp(
    h: ze_command_list_handle_t,
    _: *const ze_mutable_command_id_exp_desc_t,
    out: *mut u64,
) -> ze_result_t {
    // SAFETY: the program's list and ID.
    unsafe { next_id(h, out) }
}

pub(crate) unsafe extern "C" fn zeCommandListGetNextCommandIdWithKernelsExp(
    h: ze_command_list_handle_t,
    _: *const ze_mutable_command_id_exp_desc_t,
    _: u32,
    _: *mut ze_kernel_handle_t,
    out: *mut u64,
) -> ze_result_t {
    // SAFETY: the program's list and ID.
    unsafe { next_id(h, out) }
}

/// The fields every mutable descriptor starts with.
#[repr(C)]
struct Header {
    stype: ze_structure_type_t,
    p_next: *const c_void,
}

/// `zeCommandListUpdateMutableCommandsExp`: the descriptors chained after `desc`, each applied
/// to its command.
pub(crate) unsafe extern "C" fn zeCommandListUpdateMutableCommandsExp(
    h: ze_command_list_handle_t,
    desc: *const ze_mutable_commands_exp_desc_t,
) -> ze_result_t {
    if desc.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the program's descriptor and its chain, as the API defines them.
    let mut next = unsafe { (*desc).pNext };
    while !next.is_null() {
        // SAFETY: each chained descriptor starts with its type and the next one.
        let header = unsafe { &*next.cast::<Header>() };
        // SAFETY: the descriptor of the type its header names.
        let status = unsafe { apply(h, header.stype, next) };
        if status != ZE_RESULT_SUCCESS {
            return status;
        }
        next = header.p_next;
    }
    ZE_RESULT_SUCCESS
}

/// Applies one update descriptor of type `stype` at `desc`.
unsafe fn apply(
    h: ze_command_list_handle_t,
    stype: ze_structure_type_t,
    desc: *const c_void,
) -> ze_result_t {
    match stype {
        ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC => {
            // SAFETY: a descriptor of this type.
            let d = unsafe { &*desc.cast::<ze_mutable_kernel_argument_exp_desc_t>() };
            let value = if d.pArgValue.is_null() {
                vec![0; d.argSize]
            } else {
                // SAFETY: the program's argument of `argSize` bytes.
                unsafe { core::slice::from_raw_parts(d.pArgValue.cast::<u8>(), d.argSize) }.to_vec()
            };
            // SAFETY: the caller's list.
            unsafe {
                update(h, d.commandId, |c| match &mut c.work {
                    Work::Kernel { args, .. } => {
                        args.insert(d.argIndex, value);
                        ZE_RESULT_SUCCESS
                    }
                    _ => ZE_RESULT_ERROR_INVALID_ARGUMENT,
                })
            }
        }
        ZE_STRUCTURE_TYPE_MUTABLE_GROUP_COUNT_EXP_DESC => {
            // SAFETY: a descriptor of this type.
            let d = unsafe { &*desc.cast::<ze_mutable_group_count_exp_desc_t>() };
            if d.pGroupCount.is_null() {
                return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            }
            // SAFETY: the program's group count.
            let g = unsafe { *d.pGroupCount };
            // SAFETY: the caller's list.
            unsafe {
                update(h, d.commandId, |c| match &mut c.work {
                    Work::Kernel { groups, .. } => {
                        *groups = [g.groupCountX, g.groupCountY, g.groupCountZ];
                        ZE_RESULT_SUCCESS
                    }
                    _ => ZE_RESULT_ERROR_INVALID_ARGUMENT,
                })
            }
        }
        ZE_STRUCTURE_TYPE_MUTABLE_GROUP_SIZE_EXP_DESC => {
            // SAFETY: a descriptor of this type.
            let d = unsafe { &*desc.cast::<ze_mutable_group_size_exp_desc_t>() };
            // SAFETY: the caller's list.
            unsafe {
                update(h, d.commandId, |c| match &mut c.work {
                    Work::Kernel { size, .. } => {
                        *size = [d.groupSizeX, d.groupSizeY, d.groupSizeZ];
                        ZE_RESULT_SUCCESS
                    }
                    _ => ZE_RESULT_ERROR_INVALID_ARGUMENT,
                })
            }
        }
        // A global offset changes nothing the driver's kernels read.
        ZE_STRUCTURE_TYPE_MUTABLE_GLOBAL_OFFSET_EXP_DESC => ZE_RESULT_SUCCESS,
        _ => ZE_RESULT_ERROR_INVALID_ENUMERATION,
    }
}

pub(crate) unsafe extern "C" fn zeCommandListUpdateMutableCommandSignalEventExp(
    h: ze_command_list_handle_t,
    id: u64,
    signal: ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list.
    let list = match unsafe { mutable(h) } {
        Ok(l) => l,
        Err(e) => return e,
    };
    // SAFETY: the program's event (or NULL).
    let signal = unsafe { event(signal) };
    // The new event is checked as an append to this list would check it.
    if let Some(e) = &signal
        && let Err(status) = e.before_signal_append(list.in_order, false, false)
    {
        return status;
    }
    // SAFETY: the program's list.
    unsafe {
        update(h, id, |c| {
            c.signal = signal;
            ZE_RESULT_SUCCESS
        })
    }
}

pub(crate) unsafe extern "C" fn zeCommandListUpdateMutableCommandWaitEventsExp(
    h: ze_command_list_handle_t,
    id: u64,
    n: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the program's events.
    let waits = unsafe { wait_list(n, waits) };
    // SAFETY: the program's list.
    unsafe {
        update(h, id, |c| {
            if c.waits.len() != n as usize {
                return ZE_RESULT_ERROR_INVALID_SIZE;
            }
            c.waits = waits;
            ZE_RESULT_SUCCESS
        })
    }
}

pub(crate) unsafe extern "C" fn zeCommandListUpdateMutableCommandKernelsExp(
    h: ze_command_list_handle_t,
    n: u32,
    ids: *mut u64,
    kernels: *mut ze_kernel_handle_t,
) -> ze_result_t {
    if n > 0 && (ids.is_null() || kernels.is_null()) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    for i in 0..n as usize {
        // SAFETY: `n` IDs and `n` kernels of this driver.
        let (id, kernel) = unsafe { (*ids.add(i), *kernels.add(i)) };
        // SAFETY: as above.
        let k: &Kernel = unsafe { object(kernel) };
        let (new_name, new_args) = (
            k.name.to_string_lossy().into_owned(),
            k.args.lock().unwrap().clone(),
        );
        // SAFETY: the program's list.
        let status = unsafe {
            update(h, id, |c| match &mut c.work {
                Work::Kernel { name, args, .. } => {
                    *name = new_name;
                    *args = new_args;
                    ZE_RESULT_SUCCESS
                }
                _ => ZE_RESULT_ERROR_INVALID_ARGUMENT,
            })
        };
        if status != ZE_RESULT_SUCCESS {
            return status;
        }
    }
    ZE_RESULT_SUCCESS
}

/// `zeCommandListCreateCloneExp`.
pub(crate) unsafe extern "C" fn zeCommandListCreateCloneExp(
    h: ze_command_list_handle_t,
    out: *mut ze_command_list_handle_t,
) -> ze_result_t {
    if h.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    if out.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a list of this driver.
    let list: &List = unsafe { object(h) };
    if list.immediate || !list.cloneable || !list.state().closed {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: a writable handle, checked above.
    unsafe { *out = into_handle(Kind::List, Arc::new(list.clone_list())) };
    ZE_RESULT_SUCCESS
}
