//! What libpti does when it is loaded (its constructor), before the program's `main` for a
//! linked or preloaded libpti: it arranges for the runtimes to be interceptable before they
//! initialise, never overriding what the user set, and only while the process has one thread
//! (changing the environment could otherwise race with other threads' reads of it; a launcher
//! that loads libpti later sets the variables itself).
//!
//! - `OPENCL_LAYERS` gets libpti's own path appended (unless `PTI_OPENCL_LAYER=0`): the OpenCL
//!   loader then loads libpti as a layer at the program's first OpenCL call.
//! - `ZE_ENABLE_TRACING_LAYER=1` is set if unset (unless `PTI_LEVEL_ZERO=0`, which also keeps
//!   libpti's tracer from attaching): the Level Zero loader then loads its tracing layer at the
//!   program's first `zeInit`, which libpti's tracer needs.
//! - `XPTI_SUBSCRIBERS` gets libpti's path if it is unset (unless `PTI_SYCL=0`), with
//!   `XPTI_TRACE_ENABLE=1`, `XPTI_FRAMEWORK_DISPATCHER=libxptifw.so.1` (found next to the SYCL
//!   runtime) if unset and `UR_LAYER_TRACING` added to `UR_ENABLE_LAYERS`: the SYCL runtime then
//!   loads libpti as its XPTI subscriber, and the Unified Runtime reports its calls. If another
//!   subscriber is configured, libpti leaves it alone and a critical event says so when a tool
//!   asks for SYCL data.
//!
//! Processes the program starts inherit these variables.

use core::ffi::{CStr, c_void};
use std::os::unix::ffi::OsStrExt;

use pti_core::backend::opencl::layer;
use pti_core::backend::sycl::{self, Setup};

use crate::layer::clGetLayerInfo;

/// The path of the file libpti was loaded from, if it is a shared object that exports the
/// layer entry points.
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

/// Adds libpti to `OPENCL_LAYERS` (keeping what is there), unless `PTI_OPENCL_LAYER=0` or the
/// library is not a loadable layer.
fn announce_layer() {
    if std::env::var_os("PTI_OPENCL_LAYER").is_some_and(|v| v == "0") {
        return;
    }
    let Some(path) = own_path() else { return };
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

/// Sets `ZE_ENABLE_TRACING_LAYER=1` if it is unset, unless `PTI_LEVEL_ZERO=0`.
fn enable_level_zero_tracing_layer() {
    if std::env::var_os("PTI_LEVEL_ZERO").is_some_and(|v| v == "0")
        || std::env::var_os("ZE_ENABLE_TRACING_LAYER").is_some()
    {
        return;
    }
    // SAFETY: NUL-terminated name and value; the process has one thread (checked by the
    // caller), so nothing reads the environment concurrently.
    unsafe { libc::setenv(c"ZE_ENABLE_TRACING_LAYER".as_ptr(), c"1".as_ptr(), 0) };
}

/// Sets `name` to `value` if it is unset.
fn set_if_unset(name: &CStr, value: &CStr) {
    // SAFETY: NUL-terminated name and value; the process has one thread (checked by the
    // caller), so nothing reads the environment concurrently. 0: an existing value stays.
    unsafe { libc::setenv(name.as_ptr(), value.as_ptr(), 0) };
}

/// Makes libpti the XPTI subscriber of a SYCL runtime the process loads later (see the module
/// docs), and says what it found; with `may_write` false (other threads run), only looks.
fn subscribe_to_xpti(may_write: bool) -> Setup {
    if std::env::var_os("PTI_SYCL").is_some_and(|v| v == "0") {
        return Setup::NotConfigured;
    }
    let Some(own) = own_path() else {
        return Setup::NotConfigured;
    };
    let subscribers =
        std::env::var_os("XPTI_SUBSCRIBERS").map(|v| v.to_string_lossy().into_owned());
    match subscribers {
        Some(list) if list.split(',').any(|p| same_file(p.trim(), &own)) => {}
        Some(list) if !list.trim().is_empty() => return Setup::OtherSubscriber(list),
        _ if !may_write => return Setup::NotConfigured,
        _ => {
            let Ok(own) = std::ffi::CString::new(own) else {
                return Setup::NotConfigured;
            };
            // SAFETY: as in set_if_unset; 1: an empty value is replaced.
            unsafe { libc::setenv(c"XPTI_SUBSCRIBERS".as_ptr(), own.as_ptr(), 1) };
        }
    }
    if !may_write {
        return Setup::Subscribed;
    }
    set_if_unset(c"XPTI_TRACE_ENABLE", c"1");
    set_if_unset(c"XPTI_FRAMEWORK_DISPATCHER", c"libxptifw.so.1");
    let layers = match std::env::var_os("UR_ENABLE_LAYERS") {
        // A value that is not UTF-8 is the user's own business: left alone.
        Some(l) => match l.to_str() {
            Some(l) if l.split(';').any(|x| x.trim() == "UR_LAYER_TRACING") => None,
            Some(l) if !l.trim().is_empty() => Some(format!("{l};UR_LAYER_TRACING")),
            Some(_) => Some("UR_LAYER_TRACING".to_string()),
            None => None,
        },
        None => Some("UR_LAYER_TRACING".to_string()),
    };
    if let Some(Ok(layers)) = layers.map(std::ffi::CString::new) {
        // SAFETY: as in set_if_unset; 1: libpti's layer joins the user's.
        unsafe { libc::setenv(c"UR_ENABLE_LAYERS".as_ptr(), layers.as_ptr(), 1) };
    }
    Setup::Subscribed
}

/// The load-time work, once: from libpti's constructor, or from the first call into libpti if
/// that comes first. It can: glibc runs the constructors of libraries preloaded together in the
/// reverse of their order, so a tool preloaded after libpti (`LD_PRELOAD=libpti.so.0:tool.so`)
/// runs its constructor, and calls libpti, before libpti's constructor ran.
///
/// The work re-enters itself: its `dlopen(RTLD_NOLOAD)` of libpti's own path makes glibc run
/// libpti's constructor if it has not run yet, on this thread, inside the `Once`. That inner
/// call must return at once rather than wait for the `Once` it is part of (a deadlock).
///
/// Inlined into every export: once the work is done, one load and a branch (the rest is out of
/// line).
#[inline(always)]
pub(crate) fn ensure_loaded() {
    if !LOADED.is_completed() {
        load_once();
    }
}

/// Done once the load-time work has run (or panicked, caught).
static LOADED: std::sync::Once = std::sync::Once::new();

/// [`ensure_loaded`] until the work is done.
#[cold]
#[inline(never)]
fn load_once() {
    thread_local!(static RUNNING_HERE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) });
    if LOADED.is_completed() || RUNNING_HERE.with(|r| r.replace(true)) {
        return;
    }
    LOADED.call_once(|| {
        let _ = std::panic::catch_unwind(|| {
            let alone = single_threaded();
            if alone {
                announce_layer();
                enable_level_zero_tracing_layer();
            }
            sycl::set_setup(subscribe_to_xpti(alone));
        });
    });
    RUNNING_HERE.with(|r| r.set(false));
}

extern "C" fn on_load() {
    ensure_loaded();
}

/// Runs [`on_load`] when the library is loaded, before the program's `main` for a linked or
/// preloaded libpti.
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;
