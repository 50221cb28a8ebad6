//! libpti's own queries of OpenCL objects: fixed-size properties of devices, queues, events,
//! kernels and images, and profiling timestamps, read through the next layer's table (never through libpti's
//! wrappers, so they are neither traced nor seen by subscribers).
//!
//! Every query passes a handle the runtime returned or the program passed through the loader
//! (see the backend's module docs) and room for exactly one value.

use core::ffi::c_void;
use core::mem::MaybeUninit;

use pti_sys::opencl::*;

use super::next;

/// One value written by a `clGet*Info`-shaped entry, called with `(size, value, size_ret)`:
/// the value if the call succeeded and wrote exactly `size_of::<T>()` bytes, else the status.
fn value<T: Copy>(get: impl FnOnce(usize, *mut c_void, *mut usize) -> cl_int) -> Result<T, cl_int> {
    let mut value = MaybeUninit::<T>::uninit();
    let mut size = 0usize;
    let status = get(size_of::<T>(), value.as_mut_ptr().cast(), &mut size);
    match status {
        // SAFETY: the runtime wrote exactly a `T` (checked by size), and `T` is plain data.
        CL_SUCCESS if size == size_of::<T>() => Ok(unsafe { value.assume_init() }),
        CL_SUCCESS => Err(CL_INVALID_VALUE),
        error => Err(error),
    }
}

/// A fixed-size property of `device`.
pub(super) fn device<T: Copy>(device: cl_device_id, param: cl_device_info) -> Option<T> {
    let get = next::dispatch().clGetDeviceInfo?;
    // SAFETY: see the module docs; `value` passes room for one `T`.
    value(|size, v, ret| unsafe { get(device, param, size, v, ret) }).ok()
}

/// A fixed-size property of `queue`.
pub(super) fn queue<T: Copy>(queue: cl_command_queue, param: cl_command_queue_info) -> Option<T> {
    let get = next::dispatch().clGetCommandQueueInfo?;
    // SAFETY: see the module docs; `value` passes room for one `T`.
    value(|size, v, ret| unsafe { get(queue, param, size, v, ret) }).ok()
}

/// A fixed-size property of `event`.
pub(super) fn event<T: Copy>(event: cl_event, param: cl_event_info) -> Option<T> {
    let get = next::dispatch().clGetEventInfo?;
    // SAFETY: see the module docs; `value` passes room for one `T`.
    value(|size, v, ret| unsafe { get(event, param, size, v, ret) }).ok()
}

/// A fixed-size property of `kernel`.
pub(super) fn kernel<T: Copy>(kernel: cl_kernel, param: cl_kernel_info) -> Option<T> {
    let get = next::dispatch().clGetKernelInfo?;
    // SAFETY: see the module docs; `value` passes room for one `T`.
    value(|size, v, ret| unsafe { get(kernel, param, size, v, ret) }).ok()
}

/// A fixed-size property of `image`.
pub(super) fn image<T: Copy>(image: cl_mem, param: cl_image_info) -> Option<T> {
    let get = next::dispatch().clGetImageInfo?;
    // SAFETY: see the module docs; `value` passes room for one `T`.
    value(|size, v, ret| unsafe { get(image, param, size, v, ret) }).ok()
}

/// One profiling timestamp of `event`, or the runtime's status (`CL_PROFILING_INFO_NOT_AVAILABLE`
/// while the command runs, or when its queue does not profile).
pub(super) fn profiling(event: cl_event, what: cl_profiling_info) -> Result<cl_ulong, cl_int> {
    let get = next::dispatch()
        .clGetEventProfilingInfo
        .ok_or(CL_INVALID_OPERATION)?;
    // SAFETY: see the module docs; `value` passes room for one `cl_ulong`.
    value(|size, v, ret| unsafe { get(event, what, size, v, ret) })
}
