//! The connection to the Level Zero loader and its tracing layer.
//!
//! libpti does not link the loader: [`attach`] opens `libze_loader.so.1` (the one the program
//! uses, or loads it), looks up the functions it needs, initialises Level Zero, creates a tracer
//! and registers a prologue and an epilogue for every function the loader's tracing layer offers
//! (`callbacks`). The tracing layer only exists if `ZE_ENABLE_TRACING_LAYER=1` was set before the
//! loader's first `zeInit` in the process; libpti's constructor sets it when libpti is loaded
//! first.
//!
//! libpti's own Level Zero calls (event pools, timestamps, queries) pass through the same
//! tracing layer: they are made inside `internal`, which makes their prologues and epilogues
//! do nothing, so they are neither traced nor taken for the program's.
//!
//! Every prologue and epilogue runs behind the panic boundary of `crate::boundary`
//! ([`prologue`], [`epilogue`]). The tracing layer makes the real call whatever they do, so a
//! panic can only lose tracing: a prologue that panics leaves the call untraced (what it opened
//! is dropped, the program's arguments are as the program passed them: hooks change them last),
//! an epilogue that panics drops the call's EXIT and records. After one, the thread's Level Zero
//! calls pass untraced, counted.

#![allow(non_snake_case)] // the loader functions keep their C names

use core::cell::Cell;
use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::OnceLock;

use pti_sys::level_zero::*;

use super::callbacks;
use crate::api::{ApiGroup, ApiId};
use crate::boundary::{self, Entry};
use crate::callback::critical;
use crate::dispatch::{CallInfo, open};
use crate::fault;
use crate::result::ResultCode;

/// The loader functions libpti calls itself.
pub(super) struct Loader {
    pub(super) zeDeviceGetProperties: zeDeviceGetProperties_t,
    pub(super) zeDeviceGetGlobalTimestamps: zeDeviceGetGlobalTimestamps_t,
    pub(super) zeDevicePciGetPropertiesExt: zeDevicePciGetPropertiesExt_t,
    pub(super) zeEventPoolCreate: zeEventPoolCreate_t,
    pub(super) zeEventPoolDestroy: zeEventPoolDestroy_t,
    pub(super) zeEventCreate: zeEventCreate_t,
    pub(super) zeEventDestroy: zeEventDestroy_t,
    pub(super) zeEventHostReset: zeEventHostReset_t,
    pub(super) zeEventQueryStatus: zeEventQueryStatus_t,
    pub(super) zeEventHostSynchronize: zeEventHostSynchronize_t,
    pub(super) zeEventQueryKernelTimestamp: zeEventQueryKernelTimestamp_t,
    pub(super) zeCommandListAppendBarrier: zeCommandListAppendBarrier_t,
    pub(super) zeCommandListAppendEventReset: zeCommandListAppendEventReset_t,
    pub(super) zeCommandListAppendQueryKernelTimestamps: zeCommandListAppendQueryKernelTimestamps_t,
    pub(super) zeCommandListAppendMemoryCopy: zeCommandListAppendMemoryCopy_t,
    pub(super) zeCommandListCreate: zeCommandListCreate_t,
    pub(super) zeCommandListClose: zeCommandListClose_t,
    pub(super) zeCommandListDestroy: zeCommandListDestroy_t,
    pub(super) zeCommandQueueExecuteCommandLists: zeCommandQueueExecuteCommandLists_t,
    pub(super) zeDeviceGetCommandQueueGroupProperties: zeDeviceGetCommandQueueGroupProperties_t,
    pub(super) zeDriverGetExtensionFunctionAddress: zeDriverGetExtensionFunctionAddress_t,
    pub(super) zeMemAllocHost: zeMemAllocHost_t,
    pub(super) zeMemFree: zeMemFree_t,
    pub(super) zeMemGetAllocProperties: zeMemGetAllocProperties_t,
    pub(super) zeKernelGetName: zeKernelGetName_t,
}

// SAFETY: function pointers into the loader, which stays loaded (libpti never closes it).
unsafe impl Sync for Loader {}
// SAFETY: as above.
unsafe impl Send for Loader {}

/// How the attempt to trace Level Zero ended.
#[derive(Debug)]
pub enum Attachment {
    /// The tracer is enabled; `functions` functions have callbacks.
    Attached {
        /// Functions whose prologue and epilogue are registered.
        functions: usize,
    },
    /// No Level Zero in this process (no loader, or no driver): nothing to trace.
    Absent(String),
    /// Level Zero is there but cannot be traced (the tracing layer is not loaded).
    Failed(String),
    /// The user told libpti to leave Level Zero alone (`PTI_LEVEL_ZERO=0`): not even `zeInit`.
    Disabled,
}

static STATE: OnceLock<Attachment> = OnceLock::new();

/// The tracer, which lives as long as the process (the layer calls libpti until it ends, so it
/// is never destroyed). Kept here so that it stays reachable rather than leaked: valgrind's
/// memcheck (`tests/valgrind.rs`) counts a tracer whose handle was dropped as definitely lost.
static TRACER: AtomicPtr<_zel_tracer_handle_t> = AtomicPtr::new(core::ptr::null_mut());

/// `PTI_LEVEL_ZERO_KEEP_EVENT_POOLS=1`, read at attach: the program's event pools stay as it
/// creates them.
static KEEP_EVENT_POOLS: AtomicBool = AtomicBool::new(false);

/// Whether event pools the program creates while a device view is enabled get host-visible kernel
/// timestamps (see `hooks`).
pub(super) fn upgrades_event_pools() -> bool {
    !KEEP_EVENT_POOLS.load(Ordering::Relaxed)
}

/// Published before the tracer is enabled, so that the first traced calls find it.
static LOADER: OnceLock<Loader> = OnceLock::new();

thread_local! {
    static INTERNAL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` as libpti's own Level Zero calls: their callbacks do nothing.
pub(super) fn internal<R>(f: impl FnOnce() -> R) -> R {
    let previous = INTERNAL.try_with(|i| i.replace(true)).unwrap_or(false);
    let result = f();
    let _ = INTERNAL.try_with(|i| i.set(previous));
    result
}

/// Whether the calling thread is inside [`internal`].
pub(super) fn is_internal() -> bool {
    INTERNAL.try_with(Cell::get).unwrap_or(false)
}

/// The loader functions, once attached.
pub(super) fn loader() -> Option<&'static Loader> {
    LOADER.get()
}

/// Attaches to Level Zero, once; later calls return the first outcome.
pub fn attach() -> &'static Attachment {
    STATE.get_or_init(|| {
        if std::env::var_os("PTI_LEVEL_ZERO").is_some_and(|v| v == "0") {
            return Attachment::Disabled;
        }
        let attachment = internal(try_attach);
        if let Attachment::Failed(why) = &attachment {
            critical::raise(
                ResultCode::ErrorTracingNotInitialized,
                format_args!("Level Zero calls cannot be traced: {why}"),
            );
        }
        attachment
    })
}

/// The outcome of an attempt so far, without attempting.
pub fn attachment() -> Option<&'static Attachment> {
    STATE.get()
}

fn symbol(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: a live handle from dlopen and a NUL-terminated name.
    unsafe { libc::dlsym(handle, name.as_ptr()) }
}

/// A loader function typed by its `pti-sys` alias `F` (`None` if the loader lacks it).
fn function<F: Copy>(handle: *mut c_void, name: &CStr) -> Option<F> {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    let address = symbol(handle, name);
    // SAFETY: `F` is the `Option` of the function-pointer type the loader exports under this
    // name (NULL is `None`); sizes are checked above.
    (!address.is_null()).then(|| unsafe { core::mem::transmute_copy::<*mut c_void, F>(&address) })
}

fn try_attach() -> Attachment {
    let keep = std::env::var_os("PTI_LEVEL_ZERO_KEEP_EVENT_POOLS").is_some_and(|v| v == "1");
    KEEP_EVENT_POOLS.store(keep, Ordering::Relaxed);
    // SAFETY: a NUL-terminated library name; the loader, once loaded, is never closed.
    let handle = unsafe {
        libc::dlopen(
            c"libze_loader.so.1".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_GLOBAL,
        )
    };
    if handle.is_null() {
        return Attachment::Absent("libze_loader.so.1 is not installed".into());
    }
    let init: zeInit_t = function::<zeInit_t>(handle, c"zeInit").flatten();
    let create: zelTracerCreate_t =
        function::<zelTracerCreate_t>(handle, c"zelTracerCreate").flatten();
    let enable: zelTracerSetEnabled_t =
        function::<zelTracerSetEnabled_t>(handle, c"zelTracerSetEnabled").flatten();
    let (Some(init), Some(create), Some(enable)) = (init, create, enable) else {
        return Attachment::Failed(
            "the Level Zero loader lacks zeInit or the tracer functions".into(),
        );
    };
    let status = initialise(handle, init);
    if status != ZE_RESULT_SUCCESS {
        return Attachment::Absent(format!("zeInit found no Level Zero driver (0x{status:x})"));
    }
    // A loader that exports zelEnableTracingLayer (1.32 does, 1.8.12 does not) loads its tracing
    // layer now, whatever the environment was
    // at the program's first zeInit.
    if let Some(enable_layer) =
        function::<zelEnableTracingLayer_t>(handle, c"zelEnableTracingLayer").flatten()
    {
        // SAFETY: no arguments; the loader is initialised (zeInit above).
        let status = unsafe { enable_layer() };
        if status != ZE_RESULT_SUCCESS {
            critical::raise(
                ResultCode::ErrorTracingNotInitialized,
                format_args!("zelEnableTracingLayer returned 0x{status:x}"),
            );
        }
    }
    let desc = zel_tracer_desc_t {
        stype: ZEL_STRUCTURE_TYPE_TRACER_DESC,
        pNext: core::ptr::null(),
        pUserData: core::ptr::null_mut(),
    };
    let mut tracer: zel_tracer_handle_t = core::ptr::null_mut();
    // SAFETY: a valid descriptor and a writable handle.
    let status = unsafe { create(&desc, &mut tracer) };
    if status != ZE_RESULT_SUCCESS || tracer.is_null() {
        return Attachment::Failed(format!(
            "zelTracerCreate returned 0x{status:x}: the loader's tracing layer is not loaded. \
             ZE_ENABLE_TRACING_LAYER=1 must be set before the program's first zeInit \
             (libpti sets it when it is loaded before Level Zero is used)"
        ));
    }
    TRACER.store(tracer, Ordering::Relaxed);
    let mut functions = 0;
    for (register, prologue, epilogue) in callbacks::callbacks() {
        let address = symbol(handle, register);
        if address.is_null() {
            continue; // an older loader without this function
        }
        type Register = unsafe extern "C" fn(
            zel_tracer_handle_t,
            zel_tracer_reg_t,
            *const c_void,
        ) -> ze_result_t;
        // SAFETY: every `zelTracer<F>RegisterCallback` takes (tracer, kind, callback pointer)
        // and returns a status; the callback is passed as the pointer it is, which the C ABI
        // passes exactly as the typed function pointer the header declares.
        let register: Register = unsafe { core::mem::transmute::<*mut c_void, Register>(address) };
        // SAFETY: the tracer just created, and callbacks with the signatures the layer expects.
        let ok = unsafe {
            register(tracer, ZEL_REGISTER_PROLOGUE, prologue) == ZE_RESULT_SUCCESS
                && register(tracer, ZEL_REGISTER_EPILOGUE, epilogue) == ZE_RESULT_SUCCESS
        };
        functions += usize::from(ok);
    }
    // The functions libpti wraps on the extension route that this loader's layer cannot trace.
    functions += callbacks::extension_wrappers()
        .iter()
        .filter(|(name, _)| !layer_traces(handle, name))
        .count();
    // Published before the first traced call can need it.
    let _ = LOADER.set(Loader {
        zeDeviceGetProperties: function(handle, c"zeDeviceGetProperties").flatten(),
        zeDeviceGetGlobalTimestamps: function(handle, c"zeDeviceGetGlobalTimestamps").flatten(),
        zeDevicePciGetPropertiesExt: function(handle, c"zeDevicePciGetPropertiesExt").flatten(),
        zeEventPoolCreate: function(handle, c"zeEventPoolCreate").flatten(),
        zeEventPoolDestroy: function(handle, c"zeEventPoolDestroy").flatten(),
        zeEventCreate: function(handle, c"zeEventCreate").flatten(),
        zeEventDestroy: function(handle, c"zeEventDestroy").flatten(),
        zeEventHostReset: function(handle, c"zeEventHostReset").flatten(),
        zeEventQueryStatus: function(handle, c"zeEventQueryStatus").flatten(),
        zeEventHostSynchronize: function(handle, c"zeEventHostSynchronize").flatten(),
        zeEventQueryKernelTimestamp: function(handle, c"zeEventQueryKernelTimestamp").flatten(),
        zeCommandListAppendBarrier: function(handle, c"zeCommandListAppendBarrier").flatten(),
        zeCommandListAppendEventReset: function(handle, c"zeCommandListAppendEventReset").flatten(),
        zeCommandListAppendQueryKernelTimestamps: function(
            handle,
            c"zeCommandListAppendQueryKernelTimestamps",
        )
        .flatten(),
        zeCommandListAppendMemoryCopy: function(handle, c"zeCommandListAppendMemoryCopy").flatten(),
        zeCommandListCreate: function(handle, c"zeCommandListCreate").flatten(),
        zeCommandListClose: function(handle, c"zeCommandListClose").flatten(),
        zeCommandListDestroy: function(handle, c"zeCommandListDestroy").flatten(),
        zeCommandQueueExecuteCommandLists: function(handle, c"zeCommandQueueExecuteCommandLists")
            .flatten(),
        zeDeviceGetCommandQueueGroupProperties: function(
            handle,
            c"zeDeviceGetCommandQueueGroupProperties",
        )
        .flatten(),
        zeDriverGetExtensionFunctionAddress: function(
            handle,
            c"zeDriverGetExtensionFunctionAddress",
        )
        .flatten(),
        zeMemAllocHost: function(handle, c"zeMemAllocHost").flatten(),
        zeMemFree: function(handle, c"zeMemFree").flatten(),
        zeMemGetAllocProperties: function(handle, c"zeMemGetAllocProperties").flatten(),
        zeKernelGetName: function(handle, c"zeKernelGetName").flatten(),
    });
    // SAFETY: the tracer just created.
    let status = unsafe { enable(tracer, 1) };
    if status != ZE_RESULT_SUCCESS {
        return Attachment::Failed(format!("zelTracerSetEnabled returned 0x{status:x}"));
    }
    Attachment::Attached { functions }
}

/// Initialises the loader for libpti's own use without deciding which drivers the program sees.
///
/// A modern loader runs `zeInit` once per process, with the first caller's flags (its
/// `ze_lib::context->Init` and the drivers' init under one `call_once`): a `zeInit(0)` of
/// libpti's before the program's `zeInit(ZE_INIT_FLAG_GPU_ONLY)` would leave the program seeing
/// every type of device. Those loaders (1.19 and later) have `zeInitDrivers`, whose own
/// initialisation is separate and which filters drivers per call: libpti uses it, asking for the
/// count only, which leaves `zeInit` to the program. Older loaders (Debian's 1.8.12) call every
/// driver's init again at each `zeInit`, with that call's flags: there `zeInit(0)` decides nothing
/// for the program's later call.
fn initialise(
    handle: *mut c_void,
    init: unsafe extern "C" fn(ze_init_flags_t) -> ze_result_t,
) -> ze_result_t {
    if let Some(init_drivers) = function::<zeInitDrivers_t>(handle, c"zeInitDrivers").flatten() {
        let mut desc = ze_init_driver_type_desc_t {
            stype: ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC,
            pNext: core::ptr::null(),
            flags: ZE_INIT_DRIVER_TYPE_FLAG_GPU | ZE_INIT_DRIVER_TYPE_FLAG_NPU,
        };
        let mut count = 0u32;
        // SAFETY: a count query (no handles asked for) with a valid descriptor.
        let status = unsafe { init_drivers(&mut count, core::ptr::null_mut(), &mut desc) };
        if status == ZE_RESULT_SUCCESS {
            return if count > 0 {
                ZE_RESULT_SUCCESS
            } else {
                ZE_RESULT_ERROR_UNINITIALIZED
            };
        }
    }
    // SAFETY: zeInit may be called any number of times; 0 asks for every driver type.
    unsafe { init(0) }
}

/// Whether the loader `handle` has the tracing layer's register function of `function`.
fn layer_traces(handle: *mut c_void, function: &CStr) -> bool {
    let Some(stem) = function.to_str().ok().and_then(|f| f.strip_prefix("ze")) else {
        return false;
    };
    // `zex*` functions have none: their stem would start with `x`.
    if stem.starts_with('x') {
        return false;
    }
    let Ok(register) = std::ffi::CString::new(format!("zelTracer{stem}RegisterCallback")) else {
        return false;
    };
    !symbol(handle, &register).is_null()
}

/// Whether this process's Level Zero loader can load its tracing layer at run time (it exports
/// `zelEnableTracingLayer`: 1.32 does, 1.8.12 does not): Level Zero work can then be traced from
/// whenever a tool enables it, even if libpti was loaded after the program's first `zeInit`.
/// This is what Intel's PTI calls local collection. Opens the loader if the program has not (as
/// attaching would; it is not initialised by this).
pub fn attaches_at_run_time() -> bool {
    // SAFETY: a NUL-terminated library name; the handle (a reference count) is kept, as the
    // loader's is by `try_attach`: the loader is never closed.
    let handle = unsafe {
        libc::dlopen(
            c"libze_loader.so.1".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_GLOBAL,
        )
    };
    !handle.is_null() && !symbol(handle, c"zelEnableTracingLayer").is_null()
}

/// Runs a prologue's work `open` (opening the call, the `before_` hook; it returns the call's
/// token) behind the panic boundary, and keeps what the epilogue needs in the tracing layer's
/// per-call `instance` slot: NULL when the epilogue has nothing to do (the tracer is switched off
/// on this thread, or the prologue panicked).
#[inline(always)]
pub(super) fn prologue(instance: &mut *mut c_void, open: impl FnOnce() -> usize) {
    if boundary::is_off(Entry::LevelZeroTracer) {
        boundary::count_untraced(ApiGroup::LevelZero);
        *instance = core::ptr::null_mut();
        return;
    }
    let depth = open::depth();
    *instance = match boundary::catch(Entry::LevelZeroTracer, open) {
        Some(token) => to_slot(token),
        None => {
            open::abandon_from(depth);
            core::ptr::null_mut()
        }
    };
}

/// Runs an epilogue's work `close` (the `after_` hook, closing the call) for the call whose
/// prologue left `instance` and returned `result`, behind the panic boundary. It runs even if the
/// tracer was switched off on this thread since the prologue: a hook may have to finish what its
/// prologue began for the program (signal the program's event after an append). If `close`
/// panics, that is done all the same (`commands::rescue`), and the call is dropped without EXIT.
#[inline(always)]
pub(super) fn epilogue(instance: *mut c_void, result: ze_result_t, close: impl FnOnce(usize)) {
    let Some(token) = from_slot(instance) else {
        return;
    };
    let done = boundary::catch(Entry::LevelZeroTracer, || {
        fault::point("level_zero.epilogue");
        close(token)
    });
    if done.is_none() && token != 0 {
        let _ = boundary::catch(Entry::LevelZeroTracer, || {
            super::commands::rescue(token, result)
        });
        open::abandon_from(token - 1);
    }
}

/// Opens the traced call `api_id` (see `dispatch::open`); 0 when it is not traced, or is one of
/// libpti's own calls.
#[inline(always)]
pub(super) fn begin(
    api_id: ApiId,
    args: *const c_void,
    context: impl FnOnce() -> *mut c_void,
    kernel_name: impl FnOnce() -> Option<&'static CStr>,
) -> usize {
    if is_internal() {
        return 0;
    }
    let token = open::begin(ApiGroup::LevelZero, api_id, || CallInfo {
        args,
        kernel_name: kernel_name(),
        context: context(),
    });
    fault::point("level_zero.prologue");
    token
}

/// Closes the call `token` with its status.
#[inline(always)]
pub(super) fn end(token: usize, result: ze_result_t, context: impl FnOnce() -> *mut c_void) {
    if token != 0 {
        open::end(token, result, context());
    }
}

/// The token as the tracing layer's per-call instance slot keeps it: never NULL, which means
/// "nothing to do".
fn to_slot(token: usize) -> *mut c_void {
    ((token << 1) | 1) as *mut c_void
}

/// The token from the instance slot; `None` for NULL.
fn from_slot(slot: *mut c_void) -> Option<usize> {
    (!slot.is_null()).then_some(slot as usize >> 1)
}
