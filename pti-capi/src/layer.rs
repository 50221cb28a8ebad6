//! The OpenCL loader-layer exports (`clGetLayerInfo`, `clInitLayer`, `clInitLayerWithProperties`,
//! `clDeinitLayer`), declared by the Khronos `CL/cl_layer.h`, not by a libpti header. The Khronos
//! loader skips a layer unless it exports all four; ocl-icd uses the first two.

use core::ffi::c_void;

use pti_core::backend::opencl::layer;
use pti_sys::opencl::cl_icd::cl_icd_dispatch;
use pti_sys::opencl::cl_layer::{cl_layer_info, cl_layer_properties};
use pti_sys::opencl::{CL_INVALID_VALUE, cl_int, cl_uint};

use pti_core::boundary::Entry;

use crate::boundary::runtime_entry;

/// `clGetLayerInfo`: the layer's API version (`CL_LAYER_API_VERSION_100`) and name.
///
/// # Safety
/// `param_value` is NULL or writable for `param_value_size` bytes; `param_value_size_ret` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    runtime_entry(Entry::OpenClLayer, || {
        // SAFETY: the loader's arguments, with the contract stated above.
        unsafe {
            layer::get_layer_info(
                param_name,
                param_value_size,
                param_value,
                param_value_size_ret,
            )
        }
    })
}

/// `clInitLayer`: takes the dispatch table of the layer below and returns libpti's.
///
/// # Safety
/// `target_dispatch` is NULL or a table of `num_entries` entries; the outputs NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    runtime_entry(Entry::OpenClLayer, || {
        // SAFETY: the loader's arguments, with the contract stated above.
        unsafe {
            layer::init_layer(
                num_entries,
                target_dispatch,
                num_entries_ret,
                layer_dispatch_ret,
            )
        }
    })
}

/// `clInitLayerWithProperties`: as [`clInitLayer`]; libpti defines no layer properties, so any
/// list other than NULL or an empty one is refused with `CL_INVALID_VALUE`.
///
/// # Safety
/// As [`clInitLayer`]; `properties` is NULL or a zero-terminated list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayerWithProperties(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
    properties: *const cl_layer_properties,
) -> cl_int {
    runtime_entry(Entry::OpenClLayer, || {
        // SAFETY: NULL or a zero-terminated list (the caller's contract): its first entry.
        if !properties.is_null() && unsafe { properties.read() } != 0 {
            return CL_INVALID_VALUE;
        }
        // SAFETY: the loader's arguments, with the contract stated above.
        unsafe {
            layer::init_layer(
                num_entries,
                target_dispatch,
                num_entries_ret,
                layer_dispatch_ret,
            )
        }
    })
}

/// `clDeinitLayer`: the loader shuts down; records of completed commands are written, and
/// commands still running are counted as lost.
#[unsafe(no_mangle)]
pub extern "C" fn clDeinitLayer() -> cl_int {
    runtime_entry(Entry::OpenClLayer, layer::deinit_layer)
}
