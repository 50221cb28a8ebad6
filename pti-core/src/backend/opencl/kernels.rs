//! Kernel names, for the `_kernel_name` of launch callbacks and the name of kernel records, and
//! the reports of kernel objects created and destroyed to kernel-object callbacks ([`report`]).
//!
//! The name comes from the runtime (`CL_KERNEL_FUNCTION_NAME`) and is interned, so the pointer
//! handed out stays valid. Each thread remembers its last few kernels (in its `ThreadState`);
//! the memory is trusted only while no kernel has been created since ([`created`] moves a
//! generation counter), because a released kernel's handle may come back as a different kernel.

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicU64, Ordering};

use pti_sys::opencl::{CL_KERNEL_FUNCTION_NAME, CL_SUCCESS, cl_kernel};

use super::next;
use crate::api::{ApiGroup, ApiId, Domain, Site};
use crate::callback::KernelObject;
use crate::callback::device as callbacks;
use crate::dispatch::CallScope;
use crate::intern::intern;
use crate::recent;
use crate::thread;

/// Tells kernel-object callbacks of `kernel` (NULL at the ENTER of a creation) of `program`,
/// created (`created`) or destroyed by the call `api_id` of `scope`, at `site` (`status` at EXIT).
pub(super) fn report(
    (created, site): (bool, Site),
    api_id: ApiId,
    scope: &CallScope,
    (kernel, program): (cl_kernel, *mut c_void),
    status: Option<i32>,
) {
    if !callbacks::listening(Domain::KernelObjects) {
        return;
    }
    let mut event = KernelObject::new(created, site, ApiGroup::OpenCl, api_id);
    event.correlation_id = scope.correlation_id();
    event.return_code = status;
    event.kernel = kernel.cast();
    event.module = program;
    event.name = (created && !kernel.is_null())
        .then(|| name(kernel))
        .flatten();
    callbacks::kernel_object(&event);
}

/// Whether callbacks listen for kernel objects (so that `clReleaseKernel` asks whether it
/// destroys its kernel only then).
pub(super) fn listened() -> bool {
    callbacks::listening(Domain::KernelObjects)
}

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// A kernel was created: names remembered so far may belong to released handles.
pub(super) fn created() {
    GENERATION.fetch_add(1, Ordering::Release);
}

/// The name of `kernel`, or `None` if the runtime does not give one. Inlined into each launch,
/// the runtime's answer out of line: the call's frame cost a launch about 15 instructions
/// (issue 39).
#[inline(always)]
pub(super) fn name(kernel: cl_kernel) -> Option<&'static CStr> {
    if kernel.is_null() {
        return None;
    }
    let key = (GENERATION.load(Ordering::Acquire), kernel as usize);
    // The thread's state, as the launch's dispatch found it just before: one lookup of it.
    match thread::with(|s| recent::recall_in(&s.kernel_names, key)).flatten() {
        Some(name) => Some(name),
        None => name_not_remembered(kernel, key),
    }
}

/// [`name`] of a kernel this thread has not named lately: asked of the runtime, and remembered.
#[cold]
#[inline(never)]
fn name_not_remembered(kernel: cl_kernel, key: (u64, usize)) -> Option<&'static CStr> {
    let name = query(kernel)?;
    thread::with(|s| recent::remember_in(&s.kernel_names, key, name));
    Some(name)
}

/// Asks the runtime for the name of `kernel`.
fn query(kernel: cl_kernel) -> Option<&'static CStr> {
    let get_info = next::dispatch().clGetKernelInfo?;
    let mut size = 0usize;
    // SAFETY: a size query (no value buffer) for a kernel handle the program passed to a launch.
    let status = unsafe {
        get_info(
            kernel,
            CL_KERNEL_FUNCTION_NAME,
            0,
            core::ptr::null_mut(),
            &mut size,
        )
    };
    if status != CL_SUCCESS || size == 0 {
        return None;
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` has room for the `size` bytes the runtime asked for.
    let status = unsafe {
        get_info(
            kernel,
            CL_KERNEL_FUNCTION_NAME,
            size,
            bytes.as_mut_ptr().cast::<c_void>(),
            core::ptr::null_mut(),
        )
    };
    if status != CL_SUCCESS {
        return None;
    }
    let name = CStr::from_bytes_until_nul(&bytes).ok()?;
    Some(intern(name))
}
