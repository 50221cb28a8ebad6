//! TEST FIXTURE, not a loader: lets the Unified Runtime's Level Zero adapters run over Debian's
//! Level Zero loader 1.8.12, the only one that runs on these machines.
//!
//! The adapters (`libur_adapter_level_zero{,_v2}.so`, PyPI `intel-cmplr-lib-ur` 2026.2) embed
//! Level Zero's static-loader front end, which `dlopen`s `$ZEL_LIBRARY_PATH/libze_loader.so.1`
//! and expects a loader of 1.15.13 or later. Over 1.8.12 two things break:
//! 1. The front end calls the loader's `zeLoaderInit`, then its `zeInit`, whose own front end
//!    calls `zeLoaderInit` again. Before 1.15.13 (upstream commit 992950b) every call discovers
//!    the drivers anew: the loader lists the driver twice, turns its intercept layer on between
//!    the two calls, and the adapter ends up handing raw driver handles to loader intercepts
//!    (a segfault in `populateDeviceCacheIfNeeded`).
//! 2. The loader knows API 1.4 only, so the front end's table entries for newer functions stay
//!    empty. The front end caches an empty entry at the first call (which answers "unsupported")
//!    and jumps through it at the second (`zeDeviceGetRootDevice` in `urDeviceGet`: a segfault);
//!    the v2 adapter finds no `zeCommandListImmediateAppendCommandListsExp` and refuses the
//!    driver.
//!
//! Found at `$ZEL_LIBRARY_PATH/libze_loader.so.1`, this library is what the front end opens. It
//! defines only what fixes those two; every other symbol the front end looks up through its
//! handle resolves to the real loader, which it links:
//! - `zeLoaderInit` initialises the real loader through its `zeInit`, whose one-time
//!   initialisation already includes `zeLoaderInit`: the drivers are discovered once.
//! - The getters of the tables that hold functions the adapters call beyond API 1.4 ([`NEWER`])
//!   let the real loader fill its part and note where the front end keeps the table.
//! - `zeInit`, once the real loader is initialised, fills those noted entries the way a program
//!   on this loader reaches newer functions: `zeDriverGetExtensionFunctionAddress`, through the
//!   loader (so that its tracing layer, and a profiler on it, sees the lookup). A function the
//!   driver does not serve gets an entry answering `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`, as a
//!   newer loader's would for a driver without it.
//!
//! Only the entries in [`NEWER`] are written: each exists in the front end's tables because the
//! adapters call it, and tables only grow at their end, so the offsets of the newest headers
//! (the bindings') hold. A test checks that [`NEWER`] covers every function the adapters call
//! that loader 1.8.12 does not export.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{CStr, c_void};
use core::mem::offset_of;
use std::sync::{Mutex, OnceLock};

use pti_sys::level_zero::*;

/// A table the front end asks for by its getter, and the functions newer than API 1.4 in it
/// that the adapters call: (offset of the entry, function name).
pub struct Newer {
    /// The getter's name, `zeGet…ProcAddrTable`.
    pub getter: &'static CStr,
    /// The entries to fill.
    pub entries: &'static [(usize, &'static CStr)],
}

/// The one function in [`NEWER`] that returns a handle rather than a result: a driver without
/// it has no default context, which its entry then says (NULL).
const RETURNS_A_HANDLE: &CStr = c"zeDriverGetDefaultContext";

/// Every function the two adapters call that loader 1.8.12 does not have, by table.
pub const NEWER: [Newer; 7] = [
    Newer {
        getter: c"zeGetDriverProcAddrTable",
        entries: &[(
            offset_of!(ze_driver_dditable_t, pfnGetDefaultContext),
            c"zeDriverGetDefaultContext",
        )],
    },
    Newer {
        getter: c"zeGetDeviceProcAddrTable",
        entries: &[
            (
                offset_of!(ze_device_dditable_t, pfnGetRootDevice),
                c"zeDeviceGetRootDevice",
            ),
            (
                offset_of!(ze_device_dditable_t, pfnGetVectorWidthPropertiesExt),
                c"zeDeviceGetVectorWidthPropertiesExt",
            ),
            (
                offset_of!(ze_device_dditable_t, pfnSynchronize),
                c"zeDeviceSynchronize",
            ),
        ],
    },
    Newer {
        getter: c"zeGetCommandListProcAddrTable",
        entries: &[
            (
                offset_of!(ze_command_list_dditable_t, pfnHostSynchronize),
                c"zeCommandListHostSynchronize",
            ),
            (
                offset_of!(ze_command_list_dditable_t, pfnIsImmediate),
                c"zeCommandListIsImmediate",
            ),
            (
                offset_of!(
                    ze_command_list_dditable_t,
                    pfnAppendLaunchKernelWithArguments
                ),
                c"zeCommandListAppendLaunchKernelWithArguments",
            ),
        ],
    },
    Newer {
        getter: c"zeGetCommandListExpProcAddrTable",
        entries: &[(
            offset_of!(
                ze_command_list_exp_dditable_t,
                pfnImmediateAppendCommandListsExp
            ),
            c"zeCommandListImmediateAppendCommandListsExp",
        )],
    },
    Newer {
        getter: c"zeGetEventProcAddrTable",
        entries: &[
            (
                offset_of!(ze_event_dditable_t, pfnCounterBasedGetIpcHandle),
                c"zeEventCounterBasedGetIpcHandle",
            ),
            (
                offset_of!(ze_event_dditable_t, pfnCounterBasedOpenIpcHandle),
                c"zeEventCounterBasedOpenIpcHandle",
            ),
            (
                offset_of!(ze_event_dditable_t, pfnCounterBasedCloseIpcHandle),
                c"zeEventCounterBasedCloseIpcHandle",
            ),
        ],
    },
    Newer {
        getter: c"zeGetImageProcAddrTable",
        entries: &[(
            offset_of!(ze_image_dditable_t, pfnViewCreateExt),
            c"zeImageViewCreateExt",
        )],
    },
    Newer {
        getter: c"zeGetPhysicalMemProcAddrTable",
        entries: &[(
            offset_of!(ze_physical_mem_dditable_t, pfnGetProperties),
            c"zePhysicalMemGetProperties",
        )],
    },
];

thread_local! {
    /// Whether this thread is inside the real loader's `zeInit`, called from here: the real
    /// loader's own front end then calls the getters and `zeLoaderInit` below (it finds this
    /// library first when loaded as its dependency), for tables of its own, older layout.
    static INSIDE_INIT: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Calls the real loader's `zeInit` with `flags`, marking this thread as inside it.
fn real_init(flags: ze_init_flags_t) -> ze_result_t {
    let init = real(c"zeInit");
    if init.is_null() {
        return ZE_RESULT_ERROR_UNINITIALIZED;
    }
    // SAFETY: the real loader's zeInit, whose signature this is.
    let init: unsafe extern "C" fn(ze_init_flags_t) -> ze_result_t =
        unsafe { core::mem::transmute(init) };
    INSIDE_INIT.set(true);
    // SAFETY: the caller's flags, passed on.
    let result = unsafe { init(flags) };
    INSIDE_INIT.set(false);
    result
}

/// The front end's tables noted by the getters and not filled yet: (address, index in
/// [`NEWER`]).
static PENDING: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// The real loader's `name`, or NULL.
fn real(name: &CStr) -> *mut c_void {
    static LOADER: OnceLock<usize> = OnceLock::new();
    let handle = *LOADER.get_or_init(|| {
        // SAFETY: a NUL-terminated name; RTLD_NOLOAD only finds the loader this library links
        // (loaded under that name; this library's own name and soname differ).
        let handle = unsafe {
            libc::dlopen(
                c"libze_loader.so.1".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_NOLOAD,
            )
        };
        handle as usize
    });
    if handle == 0 {
        return core::ptr::null_mut();
    }
    // SAFETY: a handle from dlopen and a NUL-terminated name.
    unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr()) }
}

/// What an entry for a function the driver does not serve answers, whatever it is passed (the
/// caller's arguments are ignored, which the C calling convention allows).
unsafe extern "C" fn unsupported() -> ze_result_t {
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
}

/// The entry of [`RETURNS_A_HANDLE`] when the driver does not serve it: no handle.
unsafe extern "C" fn no_handle() -> *mut c_void {
    core::ptr::null_mut()
}

/// `zeLoaderInit`: initialises the real loader once, through its `zeInit` (see the module docs).
///
/// That `zeInit` calls `zeLoaderInit` itself, and finds this one first when the real loader was
/// loaded as this library's dependency: that nested call goes to the real `zeLoaderInit`.
#[unsafe(no_mangle)]
pub extern "C" fn zeLoaderInit() -> ze_result_t {
    if INSIDE_INIT.get() {
        let real_init = real(c"zeLoaderInit");
        if real_init.is_null() {
            return ZE_RESULT_ERROR_UNINITIALIZED;
        }
        // SAFETY: the real loader's zeLoaderInit, which takes nothing.
        let real_init: unsafe extern "C" fn() -> ze_result_t =
            unsafe { core::mem::transmute(real_init) };
        // SAFETY: called as the real loader's own initialisation calls it.
        return unsafe { real_init() };
    }
    // 0 asks for every driver type.
    real_init(0)
}

/// `zeInit`: the real one, then the noted tables' entries filled.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeInit(flags: ze_init_flags_t) -> ze_result_t {
    let result = real_init(flags);
    if result == ZE_RESULT_SUCCESS {
        fill_pending();
    }
    result
}

/// The first driver the real loader reports, or NULL.
fn first_driver() -> ze_driver_handle_t {
    let get = real(c"zeDriverGet");
    if get.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: the real loader's zeDriverGet, whose signature this is.
    let get: unsafe extern "C" fn(*mut u32, *mut ze_driver_handle_t) -> ze_result_t =
        unsafe { core::mem::transmute(get) };
    let (mut count, mut driver) = (1u32, core::ptr::null_mut());
    // SAFETY: room for one handle.
    match unsafe { get(&mut count, &mut driver) } {
        ZE_RESULT_SUCCESS if count > 0 => driver,
        _ => core::ptr::null_mut(),
    }
}

/// The driver's `name` through the loader's `zeDriverGetExtensionFunctionAddress`, or an entry
/// that says the driver lacks it.
fn resolve(driver: ze_driver_handle_t, name: &CStr) -> *const c_void {
    let missing = if name == RETURNS_A_HANDLE {
        no_handle as *const c_void
    } else {
        unsupported as *const c_void
    };
    let lookup = real(c"zeDriverGetExtensionFunctionAddress");
    if driver.is_null() || lookup.is_null() {
        return missing;
    }
    // SAFETY: the real loader's function, whose signature this is.
    let lookup: unsafe extern "C" fn(
        ze_driver_handle_t,
        *const core::ffi::c_char,
        *mut *mut c_void,
    ) -> ze_result_t = unsafe { core::mem::transmute(lookup) };
    let mut f = core::ptr::null_mut();
    // SAFETY: a driver handle from the loader, a NUL-terminated name, room for the address.
    match unsafe { lookup(driver, name.as_ptr(), &mut f) } {
        ZE_RESULT_SUCCESS if !f.is_null() => f,
        _ => missing,
    }
}

/// Fills the entries of every noted table.
fn fill_pending() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    if pending.is_empty() {
        return;
    }
    let driver = first_driver();
    for (table, index) in pending {
        for &(offset, name) in NEWER[index].entries {
            let f = resolve(driver, name);
            // SAFETY: the front end's table, which has this entry (see the module docs); it is
            // filled during the front end's one-time initialisation, before any call reads it.
            unsafe { ((table + offset) as *mut *const c_void).write(f) };
        }
    }
}

/// A getter of a table in [`NEWER`]: the real loader's part, if it has the getter, and the
/// table noted for `zeInit`.
unsafe fn get_table(index: usize, version: ze_api_version_t, table: *mut c_void) -> ze_result_t {
    if table.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let getter = real(NEWER[index].getter);
    let result = if getter.is_null() {
        ZE_RESULT_SUCCESS
    } else {
        // SAFETY: the real loader's getter, whose signature this is (the table type erased).
        let getter: unsafe extern "C" fn(ze_api_version_t, *mut c_void) -> ze_result_t =
            unsafe { core::mem::transmute(getter) };
        // SAFETY: the caller's version and table, passed on.
        unsafe { getter(version, table) }
    };
    if result == ZE_RESULT_SUCCESS && !INSIDE_INIT.get() {
        PENDING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((table as usize, index));
    }
    result
}

/// Defines the exported getter `$name` for entry `$index` of [`NEWER`].
macro_rules! getter {
    ($name:ident, $table:ty, $index:expr) => {
        #[doc = concat!("`", stringify!($name), "`: see [`get_table`].")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            version: ze_api_version_t,
            table: *mut $table,
        ) -> ze_result_t {
            // SAFETY: the caller's table, of the type this getter fills.
            unsafe { get_table($index, version, table.cast()) }
        }
    };
}

getter!(zeGetDriverProcAddrTable, ze_driver_dditable_t, 0);
getter!(zeGetDeviceProcAddrTable, ze_device_dditable_t, 1);
getter!(zeGetCommandListProcAddrTable, ze_command_list_dditable_t, 2);
getter!(
    zeGetCommandListExpProcAddrTable,
    ze_command_list_exp_dditable_t,
    3
);
getter!(zeGetEventProcAddrTable, ze_event_dditable_t, 4);
getter!(zeGetImageProcAddrTable, ze_image_dditable_t, 5);
getter!(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t, 6);
