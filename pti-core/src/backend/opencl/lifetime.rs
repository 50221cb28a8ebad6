//! OpenCL across the process's life: the code below the layer stays mapped while libpti may call
//! it, and a tool hears when libpti came too late to be loaded as a layer.
//!
//! - [`pin_objects_below`]: libpti calls the layer below long after the program's last OpenCL
//!   call (it harvests device records at flushes and at exit). A program that `dlclose`s the
//!   OpenCL loader would unmap that code and turn the next flush into a crash, so when the layer
//!   is initialised, every object the table below points into is made undeletable
//!   (`RTLD_NODELETE`). A later `dlopen` of the loader finds it still loaded and initialised.
//! - [`check_late_load`]: the loader reads `OPENCL_LAYERS` once, at the program's first OpenCL
//!   call. If a loader that supports layers is mapped and the layer is not initialised, the
//!   loader will never load libpti when the variable does not name libpti (libpti was loaded
//!   after the program started: a tool `dlopen`ed it, or other threads were running, so its
//!   constructor left the environment alone), or when it names libpti but the loader already
//!   loaded its drivers (a single-threaded program `dlopen`ed libpti after its first OpenCL
//!   call: the constructor set the variable too late). That is said once with a critical event.
//!
//! Touches only the dynamic linker (through `crate::linker`, which asks it under its lock), the
//! environment (read) and critical events.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, Ordering};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use pti_sys::opencl::cl_icd::cl_icd_dispatch;

use crate::backend::contract::Activation;
use crate::callback::critical;
use crate::linker;
use crate::result::{Error, ResultCode};

/// Makes every object that an entry of `table` (its first `entries` words) points into
/// undeletable; returns how many objects it pinned.
///
/// # Safety
/// `table` points to at least `entries` readable pointer-sized words.
pub(super) unsafe fn pin_objects_below(table: *const cl_icd_dispatch, entries: usize) -> usize {
    // SAFETY: the caller's contract; the words are function pointers or NULL, read as addresses.
    let words = unsafe { core::slice::from_raw_parts(table.cast::<*const c_void>(), entries) };
    linker::pin_objects_of(words.iter().copied().chain([table.cast::<c_void>()]))
}

static LATE_REPORTED: AtomicBool = AtomicBool::new(false);

/// Whether `OPENCL_LAYERS` names the file libpti was loaded from.
fn layers_name_libpti() -> bool {
    let Some((_, own)) = linker::object_of(layers_name_libpti as *const c_void) else {
        return false;
    };
    let Ok(own) = std::fs::metadata(std::ffi::OsStr::from_bytes(own.to_bytes())) else {
        return false;
    };
    std::env::var_os("OPENCL_LAYERS").is_some_and(|list| {
        list.to_string_lossy().split(':').any(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.dev() == own.dev() && m.ino() == own.ino())
        })
    })
}

/// The ICD drivers the OpenCL loader would load (`OCL_ICD_FILENAMES`, then the `.icd` files of
/// `OCL_ICD_VENDORS` or `/etc/OpenCL/vendors`), by file name.
fn icd_drivers() -> Vec<String> {
    let mut names: Vec<String> = std::env::var("OCL_ICD_FILENAMES")
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let vendors = std::env::var("OCL_ICD_VENDORS").unwrap_or_else(|_| "/etc/OpenCL/vendors".into());
    let files: Vec<std::path::PathBuf> = match std::fs::read_dir(&vendors) {
        Ok(dir) => dir.flatten().map(|e| e.path()).collect(),
        Err(_) => vec![vendors.into()],
    };
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "icd"))
    {
        if let Ok(text) = std::fs::read_to_string(file) {
            names.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_string),
            );
        }
    }
    names
        .iter()
        .map(|n| linker::file_name(n).to_string())
        .collect()
}

/// A driver of the OpenCL loader that is mapped: the loader loads its drivers when the program
/// makes its first OpenCL call, reading `OPENCL_LAYERS` then too; so a mapped driver means that
/// call was made. (A program that loads a driver library itself, outside the loader, would be
/// taken for one that called OpenCL.)
fn mapped_driver() -> Option<String> {
    let drivers = icd_drivers();
    linker::mapped_objects()
        .into_iter()
        .find(|path| drivers.iter().any(|d| linker::file_name(path) == d))
}

/// Says whether OpenCL can still be traced, now that a tool asked for something that concerns
/// it (`why`). It cannot when a loader with layer support is mapped, the layer is not
/// initialised, and `OPENCL_LAYERS` does not name libpti or the loader's drivers are loaded
/// already (see the module docs); then a critical
/// event says so, once, and a request that named OpenCL gets `PTI_ERROR_TRACING_NOT_INITIALIZED`
/// (its enable still stands). With `PTI_OPENCL_LAYER=0` the user chose this: no event, no error.
pub(super) fn check_late_load(why: Activation) -> Result<(), Error> {
    if super::layer::is_initialized()
        || std::env::var_os("PTI_OPENCL_LAYER").is_some_and(|v| v == "0")
    {
        return Ok(());
    }
    let Some(loader) = super::layer::mapped_layer_capable_loader() else {
        return Ok(());
    };
    let initialised_without_us = if layers_name_libpti() {
        // The loader loads libpti at the program's first OpenCL call, unless that call was
        // made already: then one of the drivers it loads at that call is mapped.
        match mapped_driver() {
            None => return Ok(()),
            Some(driver) => Some(driver),
        }
    } else {
        None
    };
    if !LATE_REPORTED.swap(true, Ordering::Relaxed) {
        let why = match &initialised_without_us {
            Some(driver) => format!(
                "OPENCL_LAYERS names libpti, but the loader had read it already: its driver \
                 {driver} is loaded, so the program's first OpenCL call came before libpti \
                 (dlopen'ed later)"
            ),
            None => "OPENCL_LAYERS does not name libpti, so the loader will not load libpti's \
                     layer (libpti was loaded after the program started, by dlopen or with \
                     other threads running)"
                .to_string(),
        };
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "OpenCL is not traced: the OpenCL loader {loader} is loaded but {why}; preload \
                 libpti (LD_PRELOAD) or set OPENCL_LAYERS to its path before the program starts"
            ),
        );
    }
    if why == Activation::Named {
        return Err(Error::TracingNotInitialized(
            "OpenCL was loaded before libpti's layer could be announced (see the critical event)",
        ));
    }
    Ok(())
}
