//! Extension addresses: `clGetExtensionFunctionAddress[ForPlatform]` hand out libpti's wrapper
//! of the runtime's function (see `extensions`).
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function;
//! `next_fn` is the next layer's entry for the same function.

#![allow(non_snake_case, clippy::too_many_arguments)]

use core::ffi::{c_char, c_void};

use pti_sys::opencl::cl_function_types::*;

use super::super::extensions;
use super::super::next::Next;
use crate::dispatch::CallScope;

pub(in crate::backend::opencl) unsafe fn clGetExtensionFunctionAddress(
    scope: &mut CallScope,
    next_fn: Next<clGetExtensionFunctionAddress_t>,
    func_name: *const c_char,
) -> *mut c_void {
    // SAFETY: the program's argument, unchanged.
    let function = scope.call_next(|| unsafe { next_fn(func_name) });
    // SAFETY: `func_name` is the program's NUL-terminated name (or NULL).
    unsafe { extensions::hand_out(core::ptr::null_mut(), func_name, function) }
}

pub(in crate::backend::opencl) unsafe fn clGetExtensionFunctionAddressForPlatform(
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
