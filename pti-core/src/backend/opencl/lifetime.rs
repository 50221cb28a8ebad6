//! OpenCL across the process's life: the code below the layer stays mapped while libpti may call
//! it, and a tool hears when libpti came too late to be loaded as a layer.
//!
//! - [`pin_objects_below`]: libpti calls the layer below long after the program's last OpenCL
//!   call (it harvests device records at flushes and at exit). A program that `dlclose`s the
//!   OpenCL loader would unmap that code and turn the next flush into a crash, so when the layer
//!   is initialised, every object the table below points into is made undeletable
//!   (`RTLD_NODELETE`). A later `dlopen` of the loader finds it still loaded and initialised.
//! - [`check_late_load`]: the loader reads `OPENCL_LAYERS` once, at the program's first OpenCL
//!   call. If a loader that supports layers is mapped, the layer is not initialised, and the
//!   variable does not name libpti, the loader will never load libpti: libpti was loaded after
//!   the program started (a tool `dlopen`ed it, or other threads were running, so its
//!   constructor left the environment alone). That is said once with a critical event.
//!
//! Touches only the dynamic linker (`dladdr`, `dl_iterate_phdr`, `dlopen(RTLD_NOLOAD)`), always
//! under [`linker_lock`], the environment (read) and critical events.

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use pti_sys::opencl::cl_icd::cl_icd_dispatch;

use crate::critical;
use crate::result::{Error, ResultCode};
use crate::sync::writer_lock::{ForkLock, WriterGuard, WriterLock};

/// Held around libpti's own queries of the dynamic linker, and by the fork handlers across
/// `fork()`. glibc does not reset the lock of `dl_iterate_phdr` in a child: a child forked while
/// another thread was inside libpti's query would wait for that lock forever at its first flush
/// (`tests/c/fork_exit.c` found it). Holding this lock across `fork()` makes sure no libpti
/// thread is inside.
static LINKER: WriterLock<()> = WriterLock::new(());

/// Takes the lock of libpti's dynamic-linker queries (see [`LINKER`]).
pub(super) fn linker_lock() -> WriterGuard<'static, ()> {
    LINKER.lock()
}

/// The lock the fork handlers take.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &LINKER
}

/// The object (`dli_fname`) and its base address holding `address`, if any.
fn object_of(address: *const c_void) -> Option<(*mut c_void, &'static CStr)> {
    let mut info = core::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the linker's tables and writes `info`.
    if unsafe { libc::dladdr(address, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded and filled `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the linker; objects made undeletable (or libpti's
    // own, itself NODELETE) stay mapped, and the path is used before anything can unload.
    Some((info.dli_fbase, unsafe { CStr::from_ptr(info.dli_fname) }))
}

/// Makes every object that an entry of `table` (its first `entries` words) points into
/// undeletable; returns how many objects it pinned.
///
/// # Safety
/// `table` points to at least `entries` readable pointer-sized words.
pub(super) unsafe fn pin_objects_below(table: *const cl_icd_dispatch, entries: usize) -> usize {
    // SAFETY: the caller's contract; the words are function pointers or NULL, read as addresses.
    let words = unsafe { core::slice::from_raw_parts(table.cast::<*const c_void>(), entries) };
    let _linker = linker_lock();
    let mut bases: Vec<*mut c_void> = Vec::new();
    for &word in words.iter().chain([&table.cast::<c_void>()]) {
        if word.is_null() {
            continue;
        }
        let Some((base, path)) = object_of(word) else {
            continue;
        };
        if bases.contains(&base) {
            continue;
        }
        bases.push(base);
        // SAFETY: a NUL-terminated path of an object that is loaded; RTLD_NOLOAD never loads
        // anything, and RTLD_NODELETE keeps it mapped after every handle is closed. The handle
        // is deliberately never closed.
        unsafe {
            libc::dlopen(
                path.as_ptr(),
                libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            )
        };
    }
    bases.len()
}

static LATE_REPORTED: AtomicBool = AtomicBool::new(false);

/// Whether `OPENCL_LAYERS` names the file libpti was loaded from.
fn layers_name_libpti() -> bool {
    let own = {
        let _linker = linker_lock();
        object_of(layers_name_libpti as *const c_void)
    };
    let Some((_, own)) = own else {
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

/// Says whether OpenCL can still be traced, now that a tool asked for something that concerns
/// it (`explicit`: it named the OpenCL group). It cannot when a loader with layer support is
/// mapped, the layer is not initialised, and `OPENCL_LAYERS` does not name libpti (see the
/// module docs); then a critical event says so, once, and an explicit request gets
/// `PTI_ERROR_TRACING_NOT_INITIALIZED` (its enable still stands). With `PTI_OPENCL_LAYER=0`
/// the user chose this: no event, no error.
pub(crate) fn check_late_load(explicit: bool) -> Result<(), Error> {
    if super::layer::is_initialized()
        || std::env::var_os("PTI_OPENCL_LAYER").is_some_and(|v| v == "0")
    {
        return Ok(());
    }
    let Some(loader) = super::layer::mapped_layer_capable_loader() else {
        return Ok(());
    };
    if layers_name_libpti() {
        return Ok(()); // the loader loads libpti at the program's first OpenCL call
    }
    if !LATE_REPORTED.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "OpenCL is not traced: the OpenCL loader {loader} is loaded but OPENCL_LAYERS \
                 does not name libpti, so the loader will not load libpti's layer (libpti was \
                 loaded after the program started, by dlopen or with other threads running); \
                 preload libpti (LD_PRELOAD) or set OPENCL_LAYERS to its path before the program \
                 starts"
            ),
        );
    }
    if explicit {
        return Err(Error::TracingNotInitialized(
            "OpenCL was loaded before libpti's layer could be announced (see the critical event)",
        ));
    }
    Ok(())
}
