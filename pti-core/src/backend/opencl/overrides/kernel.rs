//! Kernel calls: creation and cloning tell kernel-object callbacks and remember names for the
//! launches' records; a release forgets them.
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function;
//! `next_fn` is the next layer's entry for the same function.

#![allow(non_snake_case, clippy::too_many_arguments)]

use core::ffi::c_char;

use pti_sys::opencl::cl_function_types::*;
use pti_sys::opencl::*;

use super::super::next::Next;
use super::super::{errcode, kernels, query};
use crate::api::Site;
use crate::dispatch::CallScope;
use crate::ids::opencl as ids;

pub(in crate::backend::opencl) unsafe fn clCreateKernel(
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

pub(in crate::backend::opencl) unsafe fn clCreateKernelsInProgram(
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

pub(in crate::backend::opencl) unsafe fn clCloneKernel(
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

pub(in crate::backend::opencl) unsafe fn clReleaseKernel(
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
