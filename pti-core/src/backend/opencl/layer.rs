//! The four entry points of an OpenCL loader layer, as `pti-capi` exports them, and the rule
//! that puts libpti into `OPENCL_LAYERS`.
//!
//! Both loaders (ocl-icd 2.3 and the Khronos loader) read `OPENCL_LAYERS` when the program makes
//! its first OpenCL call, `dlopen` each layer, check `clGetLayerInfo(CL_LAYER_API_VERSION)`,
//! and call `clInitLayer` (ocl-icd) or `clInitLayerWithProperties` (Khronos) with the table of
//! the layer below. The layer answers with its own table, which the loader fills in with the
//! entries below it where the layer has none. The Khronos loader calls `clDeinitLayer` when it
//! shuts down.

use core::ffi::{CStr, c_void};
use std::sync::OnceLock;

use pti_sys::opencl::cl_icd::cl_icd_dispatch;
use pti_sys::opencl::cl_layer::{
    CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100, CL_LAYER_NAME, cl_layer_api_version,
    cl_layer_info,
};
use pti_sys::opencl::{CL_INVALID_OPERATION, CL_INVALID_VALUE, CL_SUCCESS, cl_int, cl_uint};

use super::{next, pending, wrappers};
use crate::critical;
use crate::result::ResultCode;

/// The name the layer gives in `clGetLayerInfo(CL_LAYER_NAME)`.
pub const LAYER_NAME: &CStr = c"libpti: tracing and profiling layer";

static LAYER: OnceLock<cl_icd_dispatch> = OnceLock::new();

/// Answers `clGetLayerInfo`.
///
/// # Safety
/// `param_value` is NULL or writable for `param_value_size` bytes; `param_value_size_ret` is
/// NULL or writable.
pub unsafe fn get_layer_info(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let version: cl_layer_api_version = CL_LAYER_API_VERSION_100;
    let bytes: &[u8] = match param_name {
        CL_LAYER_API_VERSION => &version.to_ne_bytes(),
        CL_LAYER_NAME => LAYER_NAME.to_bytes_with_nul(),
        _ => return CL_INVALID_VALUE,
    };
    if !param_value.is_null() {
        if param_value_size < bytes.len() {
            return CL_INVALID_VALUE;
        }
        // SAFETY: the caller's contract, and `bytes.len() <= param_value_size`.
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), param_value.cast::<u8>(), bytes.len())
        };
    }
    if !param_value_size_ret.is_null() {
        // SAFETY: the caller's contract.
        unsafe { param_value_size_ret.write(bytes.len()) };
    }
    CL_SUCCESS
}

/// Answers `clInitLayer` and `clInitLayerWithProperties`: takes the layer below and returns
/// libpti's table.
///
/// # Safety
/// `target_dispatch` is NULL or a dispatch table with `num_entries` entries; the two output
/// pointers are NULL or writable.
pub unsafe fn init_layer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    if target_dispatch.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
        return CL_INVALID_VALUE;
    }
    // SAFETY: the caller's contract.
    let installed = match unsafe { next::install(target_dispatch, num_entries as usize) } {
        Ok(table) => table,
        Err(next::InstallError::OtherTable) => {
            critical::raise(
                ResultCode::ErrorTracingNotInitialized,
                format_args!(
                    "a second OpenCL loader tried to initialise libpti's layer; libpti traces \
                     the first one only, and the second runs without it"
                ),
            );
            return CL_INVALID_OPERATION;
        }
    };
    // The layer's locks are used from now on, traced or not: they must survive fork().
    crate::fork::install_handlers();
    let layer = LAYER.get_or_init(|| wrappers::layer_dispatch(installed));
    // SAFETY: both checked non-NULL above, writable by the caller's contract.
    unsafe {
        num_entries_ret.write(wrappers::DISPATCH_ENTRIES.min(num_entries));
        layer_dispatch_ret.write(layer);
    }
    CL_SUCCESS
}

/// Answers `clDeinitLayer`: writes the records of commands that have completed and lets go of
/// the events of those that have not (their records are counted as lost).
pub fn deinit_layer() -> cl_int {
    pending::abandon_unfinished();
    CL_SUCCESS
}

/// Whether a loader has initialised the layer in this process.
pub fn is_initialized() -> bool {
    next::installed()
}

/// The `OPENCL_LAYERS` value that adds `ours` to `current` (a colon-separated list), or `None`
/// when `current` names it already. `same_file` says whether two paths name one file.
pub fn layers_with(
    current: Option<&str>,
    ours: &str,
    same_file: impl Fn(&str, &str) -> bool,
) -> Option<String> {
    match current.filter(|c| !c.is_empty()) {
        None => Some(ours.to_string()),
        Some(list) if list.split(':').any(|p| p == ours || same_file(p, ours)) => None,
        Some(list) => Some(format!("{list}:{ours}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_appended_once() {
        let never = |_: &str, _: &str| false;
        assert_eq!(
            layers_with(None, "/l/libpti.so.0", never).as_deref(),
            Some("/l/libpti.so.0")
        );
        assert_eq!(
            layers_with(Some(""), "/l/libpti.so.0", never).as_deref(),
            Some("/l/libpti.so.0")
        );
        assert_eq!(
            layers_with(Some("/a/x.so"), "/l/libpti.so.0", never).as_deref(),
            Some("/a/x.so:/l/libpti.so.0")
        );
        assert_eq!(
            layers_with(Some("/a/x.so:/l/libpti.so.0"), "/l/libpti.so.0", never),
            None
        );
        let same = |a: &str, _: &str| a == "/link/libpti.so";
        assert_eq!(
            layers_with(Some("/link/libpti.so"), "/l/libpti.so.0", same),
            None
        );
    }

    #[test]
    fn layer_info_answers_version_and_name_and_checks_sizes() {
        let mut version: cl_layer_api_version = 0;
        let mut size = 0usize;
        // SAFETY: valid outputs of the stated sizes.
        unsafe {
            assert_eq!(
                get_layer_info(
                    CL_LAYER_API_VERSION,
                    4,
                    (&raw mut version).cast(),
                    &mut size
                ),
                CL_SUCCESS
            );
            assert_eq!((version, size), (CL_LAYER_API_VERSION_100, 4));
            assert_eq!(
                get_layer_info(CL_LAYER_NAME, 0, core::ptr::null_mut(), &mut size),
                CL_SUCCESS
            );
            assert_eq!(size, LAYER_NAME.to_bytes_with_nul().len());
            let mut small = [0u8; 4];
            assert_eq!(
                get_layer_info(
                    CL_LAYER_NAME,
                    4,
                    small.as_mut_ptr().cast(),
                    core::ptr::null_mut()
                ),
                CL_INVALID_VALUE
            );
            assert_eq!(
                get_layer_info(0x1234, 0, core::ptr::null_mut(), &mut size),
                CL_INVALID_VALUE
            );
        }
    }
}
