//! `errcode_ret`: how the wrappers of functions that report their status through it (the
//! creators, `clEnqueueMapBuffer`, ...) learn that status for the EXIT callbacks and API record.
//!
//! A traced call whose caller passed NULL gets libpti's own status variable instead, which the
//! caller never sees; an untraced call passes the caller's pointer on unchanged.

use core::ptr;

use pti_sys::opencl::{CL_INVALID_OPERATION, CL_SUCCESS, cl_int};

use crate::dispatch::CallScope;

/// Where the next layer writes the status: the caller's `errcode_ret`, or `own` for a traced
/// call whose caller passed NULL.
#[inline(always)]
pub(super) fn slot(scope: &CallScope, errcode_ret: *mut cl_int, own: &mut cl_int) -> *mut cl_int {
    if errcode_ret.is_null() && scope.is_traced() {
        own
    } else {
        errcode_ret
    }
}

/// The status the next layer wrote at `slot` (`CL_SUCCESS` when there is nowhere to read it).
///
/// # Safety
/// `slot` is NULL or valid for reads: libpti's own variable, or the caller's `errcode_ret`,
/// which the OpenCL API requires to be NULL or writable (the runtime has just written it).
#[inline(always)]
pub(super) unsafe fn read(slot: *const cl_int) -> cl_int {
    if slot.is_null() {
        CL_SUCCESS
    } else {
        // SAFETY: see the function's contract.
        unsafe { slot.read() }
    }
}

/// What a creator returns when the layer below has no entry for it: NULL, and
/// `CL_INVALID_OPERATION` in `errcode_ret`.
///
/// # Safety
/// `errcode_ret` is NULL or writable, as the OpenCL API requires of the caller.
#[cold]
pub(super) unsafe fn unavailable<T>(errcode_ret: *mut cl_int) -> *mut T {
    if !errcode_ret.is_null() {
        // SAFETY: see the function's contract.
        unsafe { errcode_ret.write(CL_INVALID_OPERATION) };
    }
    ptr::null_mut()
}
