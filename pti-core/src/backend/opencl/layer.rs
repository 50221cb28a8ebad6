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
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use pti_sys::opencl::cl_icd::cl_icd_dispatch;
use pti_sys::opencl::cl_layer::{
    CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100, CL_LAYER_NAME, cl_layer_api_version,
    cl_layer_info,
};
use pti_sys::opencl::{CL_INVALID_OPERATION, CL_INVALID_VALUE, CL_SUCCESS, cl_int, cl_uint};

use super::{next, pending, wrappers};
use crate::callback::critical;
use crate::result::ResultCode;
use crate::{fault, linker};

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
    fault::point("opencl.layer_init");
    // SAFETY: the caller's contract.
    let installed = match unsafe { next::install(target_dispatch, num_entries as usize) } {
        Ok(table) => table,
        Err(next::InstallError::OtherTable) => {
            // The program's releases through that loader never reach libpti: its events are
            // retained from now on when their commands are submitted (`retained`).
            super::commands::hold_all();
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
    // libpti calls the layer below until the process ends, even after the program closed the
    // loader: keep that code mapped.
    // SAFETY: `install` accepted the table, whose first `num_entries` words are readable.
    unsafe { super::lifetime::pin_objects_below(target_dispatch, num_entries as usize) };
    // A thread whose dispatch a panic switches off releases events without libpti seeing it.
    crate::boundary::before_dispatch_off(super::commands::hold_all);
    let layer = LAYER.get_or_init(|| wrappers::layer_dispatch(installed));
    // SAFETY: both checked non-NULL above, writable by the caller's contract.
    unsafe {
        num_entries_ret.write(wrappers::DISPATCH_ENTRIES.min(num_entries));
        layer_dispatch_ret.write(layer);
    }
    CL_SUCCESS
}

/// Answers `clDeinitLayer`: the loader shuts down (at exit, when the runtimes' own destructors
/// may already have run), so the harvester thread stops and pending commands are counted as lost
/// without calling the runtime.
/// A tool that flushes before the program exits has none.
pub fn deinit_layer() -> cl_int {
    crate::backend::device::harvester::stop();
    pending::PENDING.abandon("OpenCL", "the OpenCL loader shuts down");
    CL_SUCCESS
}

/// The entries of libpti's dispatch table (0 before a loader has initialised the layer).
pub fn intercepted_entries() -> usize {
    LAYER.get().map_or(0, |table| {
        // SAFETY: the table is `TABLE_ENTRIES` pointer-sized fields (function pointers, NULL
        // where the layer below has no entry), read as integers.
        let words = unsafe {
            core::slice::from_raw_parts(
                (table as *const cl_icd_dispatch).cast::<usize>(),
                next::TABLE_ENTRIES,
            )
        };
        words.iter().filter(|w| **w != 0).count()
    })
}

/// Whether a loader has initialised the layer in this process.
pub fn is_initialized() -> bool {
    next::installed()
}

/// Objects mapped into the process when [`check_loaders`] last looked (it looks again only when
/// the number changes).
static MAPPED_OBJECTS: AtomicUsize = AtomicUsize::new(0);
static LOADER_WARNED: AtomicBool = AtomicBool::new(false);

/// Raises a critical event, once, when an OpenCL loader that cannot load layers is mapped into
/// the process while libpti's layer is not initialised: then no OpenCL call is traced, and a
/// tool must hear it rather than see an empty trace. (CUDA's own `libOpenCL.so.1`, for one, has
/// no layer support.) A loader supports layers if it reads `OPENCL_LAYERS`, so its file holds
/// that name. Called at flushes; cheap while nothing new is mapped.
pub(crate) fn check_loaders() {
    if is_initialized() || LOADER_WARNED.load(Ordering::Relaxed) {
        return;
    }
    let objects = linker::mapped_objects();
    if MAPPED_OBJECTS.swap(objects.len(), Ordering::Relaxed) == objects.len() {
        return;
    }
    let Some(loader) = objects
        .into_iter()
        .find(|path| linker::file_name(path).starts_with("libOpenCL.so") && !supports_layers(path))
    else {
        return;
    };
    if !LOADER_WARNED.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "the OpenCL loader {loader} cannot load layers, so libpti's OpenCL layer is not \
                 active and no OpenCL call is traced; put a loader with layer support first \
                 (ocl-icd 2.3 or later, the Khronos ICD loader 2021 or later), for example with \
                 LD_LIBRARY_PATH"
            ),
        );
    }
}

/// The path of a mapped OpenCL loader that supports layers, if one is mapped.
pub(crate) fn mapped_layer_capable_loader() -> Option<String> {
    linker::mapped_objects()
        .into_iter()
        .find(|path| linker::file_name(path).starts_with("libOpenCL.so") && supports_layers(path))
}

fn supports_layers(path: &str) -> bool {
    const NAME: &[u8] = b"OPENCL_LAYERS";
    std::fs::read(path).map_or(true, |bytes| bytes.windows(NAME.len()).any(|w| w == NAME))
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
