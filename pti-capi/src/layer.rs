//! The OpenCL loader-layer exports (`clGetLayerInfo`, `clInitLayer`, `clInitLayerWithProperties`,
//! `clDeinitLayer`), declared by the Khronos `CL/cl_layer.h`, not by a libpti header. The Khronos
//! loader skips a layer unless it exports all four; ocl-icd uses the first two.
//!
//! Also here: libpti's constructor, which puts libpti into `OPENCL_LAYERS` when the library is
//! loaded, so that a program that links or preloads libpti is traced without further setup.

use core::ffi::{CStr, c_void};
use std::os::unix::ffi::OsStrExt;

use pti_core::backend::opencl::layer;
use pti_sys::opencl::cl_icd::cl_icd_dispatch;
use pti_sys::opencl::cl_layer::{cl_layer_info, cl_layer_properties};
use pti_sys::opencl::{CL_INVALID_VALUE, CL_OUT_OF_HOST_MEMORY, cl_int, cl_uint};

use crate::boundary::guard_or;

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
    guard_or(CL_OUT_OF_HOST_MEMORY, || {
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
    guard_or(CL_OUT_OF_HOST_MEMORY, || {
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
    guard_or(CL_OUT_OF_HOST_MEMORY, || {
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
    guard_or(CL_OUT_OF_HOST_MEMORY, layer::deinit_layer)
}

/// The path of the file libpti was loaded from, if it is a shared object that exports the
/// layer entry points (not so for a program that linked the static library).
fn own_path() -> Option<String> {
    let mut info = core::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let here = clGetLayerInfo as *const c_void;
    // SAFETY: `here` is an address inside this library; `info` is writable.
    if unsafe { libc::dladdr(here, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded and filled `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returns a NUL-terminated path that lives as long as the object is loaded.
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    // The loader will dlopen this path: it must lead back to this very library.
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD only looks up an object already loaded.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: a live handle and a NUL-terminated symbol name.
    let found = unsafe { libc::dlsym(handle, c"clGetLayerInfo".as_ptr()) };
    // SAFETY: balances the reference RTLD_NOLOAD took.
    unsafe { libc::dlclose(handle) };
    if !core::ptr::eq(found, here) {
        return None;
    }
    // A relative path (`LD_PRELOAD=./libpti.so`) would name another file after a chdir.
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::fs::canonicalize(path).ok()?
    };
    absolute.to_str().map(str::to_string)
}

/// Whether the process has one thread (the environment may be changed safely).
fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
}

fn same_file(a: &str, b: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Adds libpti to `OPENCL_LAYERS` (keeping what is there), unless `PTI_OPENCL_LAYER=0`, the
/// library is not a loadable layer, or other threads run (changing the environment then could
/// race with their reads of it; a launcher sets `OPENCL_LAYERS` itself instead). Processes the
/// program starts inherit the variable, and so load libpti as a layer too (passing calls through
/// untouched while no tool in them listens).
fn announce_layer() {
    if std::env::var_os("PTI_OPENCL_LAYER").is_some_and(|v| v == "0") {
        return;
    }
    let Some(path) = own_path() else { return };
    if !single_threaded() {
        return;
    }
    let current = std::env::var("OPENCL_LAYERS").ok();
    let Some(value) = layer::layers_with(current.as_deref(), &path, same_file) else {
        return;
    };
    let Ok(value) = std::ffi::CString::new(value) else {
        return;
    };
    // SAFETY: NUL-terminated name and value; the process has one thread, so nothing reads the
    // environment concurrently.
    unsafe { libc::setenv(c"OPENCL_LAYERS".as_ptr(), value.as_ptr(), 1) };
}

extern "C" fn on_load() {
    let _ = std::panic::catch_unwind(announce_layer);
}

/// Runs [`on_load`] when the library is loaded, before the program's `main` for a linked or
/// preloaded libpti.
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;
