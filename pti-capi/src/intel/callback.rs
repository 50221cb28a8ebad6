//! Intel PTI 1.2's Callback API (Intel's `pti_callback.h`), under the names
//! `libpti_intel_ptiCallback*` that `libpti_view.so.1` forwards to.
//!
//! Intel shipped a Callback API of its own under the names of the proposal libpti implements:
//! the same `ptiCallbackSubscribe`, other arguments. Both live on one engine subscriber table:
//! an Intel subscriber is an engine subscriber whose handler translates engine events into
//! Intel's 7-argument callback, filtered by the tool's ENTER/EXIT flags per domain.
//!
//! | domain | here |
//! | --- | --- |
//! | `DRIVER_API` (1023) | every Level Zero and OpenCL call; `cb_data` is a [`pti_callback_driver_api_data`] |
//! | `INTERNAL_EVENT` (1025) | libpti's critical events; `cb_data` is a [`pti_internal_callback_data`] |
//! | `GPU_OPERATION_APPENDED` (4), `GPU_OPERATION_COMPLETED` (6), `KERNEL_CREATED` (8), `KERNEL_DESTROYED` (9) | not yet: `PTI_ERROR_NOT_IMPLEMENTED` |
//! | the other declared domains | `PTI_ERROR_NOT_IMPLEMENTED`, as Intel's library answers |
//!
//! What may be touched from here: `pti_core::session` (subscribe, enable) and the boundary
//! helpers of this crate; nothing of the proposal's C types (`crate::callback`).

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use pti_core::callback::SubscriberId;
use pti_core::{Domain, Error, Event, ResultCode, Site, session};

use crate::boundary::{guard, guard_or, guard_status, out_ptr};
use crate::callback::subscriber_id;
use crate::pti::pti_result;
use crate::view::pti_api_group_id;

/// Intel's callback domains (`pti_callback_domain` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_cb_domain {
    /// Not a domain.
    PTI_CB_DOMAIN_INVALID = 0,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED = 1,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_MODULE_LOADED = 2,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED = 3,
    /// A kernel or memory operation appended to a command list (not yet in libpti).
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED = 4,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED = 5,
    /// Operations found completed (not yet in libpti).
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED = 6,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION = 7,
    /// Around kernel creation (not yet in libpti).
    PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED = 8,
    /// Around kernel destruction (not yet in libpti).
    PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED = 9,
    /// ENTER and EXIT of every Level Zero and OpenCL call (declared only by Intel 1.2).
    PTI_CB_DOMAIN_DRIVER_API = 1023,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_INTERNAL_THREADS = 1024,
    /// libpti's critical events (declared only by Intel 1.2).
    PTI_CB_DOMAIN_INTERNAL_EVENT = 1025,
}

/// Intel's callback phases (`pti_callback_phase` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_cb_phase {
    /// Not a phase.
    PTI_CB_PHASE_INVALID = 0,
    /// Before the driver function runs.
    PTI_CB_PHASE_API_ENTER = 1,
    /// After the driver function returned.
    PTI_CB_PHASE_API_EXIT = 2,
    /// An internal thread started (not used by libpti: it starts none).
    PTI_CB_PHASE_INTERNAL_THREAD_START = 3,
    /// An internal thread ended (not used by libpti).
    PTI_CB_PHASE_INTERNAL_THREAD_END = 4,
    /// An internal event.
    PTI_CB_PHASE_INTERNAL_EVENT = 5,
}

/// How grave an internal event is (`pti_internal_event_type` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_internal_event_type {
    /// For information.
    PTI_INTERNAL_EVENT_TYPE_INFO = 0,
    /// Some records are missing or inexact; collection goes on.
    PTI_INTERNAL_EVENT_TYPE_WARNING = 1,
    /// Data collected from now on is not to be trusted.
    PTI_INTERNAL_EVENT_TYPE_CRITICAL = 2,
}

/// `cb_data` of a `PTI_CB_DOMAIN_DRIVER_API` callback: one Level Zero or OpenCL call. A libpti
/// definition (Intel declares the domain without data); its first four fields are those of
/// Intel's `pti_callback_kernel_data`.
#[repr(C)]
pub struct pti_callback_driver_api_data {
    /// Always `PTI_CB_DOMAIN_DRIVER_API`.
    pub _domain: pti_cb_domain,
    /// `PTI_CB_PHASE_API_ENTER` or `PTI_CB_PHASE_API_EXIT`.
    pub _phase: pti_cb_phase,
    /// At EXIT, the call's status (`ze_result_t` or `cl_int`); 0 at ENTER.
    pub _return_code: u32,
    /// The ID the view records of this call carry.
    pub _correlation_id: u32,
    /// The function's name, a static string.
    pub _api_name: *const c_char,
    /// The backend's parameter struct: the tracing layer's `ze_*_params_t` or libpti's
    /// `pti_cl_params.h`; NULL where the backend gives none.
    pub _args: *const c_void,
    /// For a call that submits a kernel, its name when known; else NULL.
    pub _kernel_name: *const c_char,
}

/// `cb_data` of a `PTI_CB_DOMAIN_INTERNAL_EVENT` callback (Intel's layout).
#[repr(C)]
pub struct pti_internal_callback_data {
    /// Always `PTI_CB_DOMAIN_INTERNAL_EVENT`.
    pub _domain: pti_cb_domain,
    /// Always `PTI_CB_PHASE_INTERNAL_EVENT`.
    pub _phase: pti_cb_phase,
    /// A `pti_internal_event_type`.
    pub _detail: u32,
    /// What happened, for a human: libpti's result-code name, a colon, and the details.
    pub _message: *const c_char,
}

/// Intel's callback: `(domain, driver_api_group_id, driver_api_id, backend_context, cb_data,
/// global_user_data, instance_user_data)`. `instance_user_data` points at a word that is NULL
/// at ENTER and kept until the EXIT of the same call.
pub type pti_intel_callback_function = Option<IntelCallback>;

/// The function of a [`pti_intel_callback_function`].
pub type IntelCallback = unsafe extern "C" fn(
    domain: pti_cb_domain,
    driver_api_group_id: pti_api_group_id,
    driver_api_id: u32,
    backend_context: *mut c_void,
    cb_data: *mut c_void,
    global_user_data: *mut c_void,
    instance_user_data: *mut *mut c_void,
);

/// Which phases a subscriber wants, per implemented domain: bit 0 ENTER, bit 1 EXIT.
#[derive(Default)]
struct Phases {
    driver_api: AtomicU32,
    internal_event: AtomicU32,
}

const ENTER: u32 = 1;
const EXIT: u32 = 2;

/// A tool's callback with its user data and wishes.
struct Tool {
    function: IntelCallback,
    user_data: *mut c_void,
    phases: Phases,
}

// SAFETY: Intel's API documents that callbacks run on any thread; the tool owns `user_data`
// and its synchronisation, libpti only hands the pointer back.
unsafe impl Send for Tool {}
// SAFETY: as above; `phases` are atomics.
unsafe impl Sync for Tool {}

impl Tool {
    fn call(&self, event: Event<'_>) {
        match event {
            Event::ApiCall {
                domain: Domain::DriverApi,
                group,
                api_id,
                data,
            } => {
                let (phase, bit) = match data.site() {
                    Site::Enter => (pti_cb_phase::PTI_CB_PHASE_API_ENTER, ENTER),
                    Site::Exit => (pti_cb_phase::PTI_CB_PHASE_API_EXIT, EXIT),
                };
                if self.phases.driver_api.load(Ordering::Relaxed) & bit == 0 {
                    return;
                }
                let mut cb = pti_callback_driver_api_data {
                    _domain: pti_cb_domain::PTI_CB_DOMAIN_DRIVER_API,
                    _phase: phase,
                    _return_code: data.return_code().unwrap_or(0) as u32,
                    _correlation_id: data.correlation_id(),
                    _api_name: data.api_name().as_ptr(),
                    _args: data.args(),
                    _kernel_name: data.kernel_name().map_or(core::ptr::null(), CStr::as_ptr),
                };
                let context = data.context();
                // The call's word for this subscriber: zero at ENTER, kept until EXIT; a u64
                // holds a pointer on every target libpti builds for (64-bit only).
                let instance = data.local_data() as *mut u64 as *mut *mut c_void;
                // SAFETY: the tool registered this function with Intel's signature; every
                // pointer is valid for the duration of the call.
                unsafe {
                    (self.function)(
                        pti_cb_domain::PTI_CB_DOMAIN_DRIVER_API,
                        group.into(),
                        api_id,
                        context,
                        &mut cb as *mut _ as *mut c_void,
                        self.user_data,
                        instance,
                    )
                }
            }
            Event::Critical(data) => {
                if self.phases.internal_event.load(Ordering::Relaxed) == 0 {
                    return;
                }
                let mut cb = pti_internal_callback_data {
                    _domain: pti_cb_domain::PTI_CB_DOMAIN_INTERNAL_EVENT,
                    _phase: pti_cb_phase::PTI_CB_PHASE_INTERNAL_EVENT,
                    _detail: severity(data.code()) as u32,
                    _message: data.message().as_ptr(),
                };
                let mut instance: *mut c_void = core::ptr::null_mut();
                // SAFETY: as above; `instance` lives on this frame for the call.
                unsafe {
                    (self.function)(
                        pti_cb_domain::PTI_CB_DOMAIN_INTERNAL_EVENT,
                        pti_api_group_id::PTI_API_GROUP_RESERVED,
                        0,
                        core::ptr::null_mut(),
                        &mut cb as *mut _ as *mut c_void,
                        self.user_data,
                        &mut instance,
                    )
                }
            }
            _ => {}
        }
    }
}

/// Intel's grading of a libpti critical event: collection goes on after all of them except a
/// backend whose interception failed and an internal error.
fn severity(code: ResultCode) -> pti_internal_event_type {
    match code {
        ResultCode::ErrorTracingNotInitialized | ResultCode::ErrorInternal => {
            pti_internal_event_type::PTI_INTERNAL_EVENT_TYPE_CRITICAL
        }
        _ => pti_internal_event_type::PTI_INTERNAL_EVENT_TYPE_WARNING,
    }
}

/// The live Intel subscribers by engine ID, so that the enables reach a subscriber's wishes.
/// Touched by subscribe, unsubscribe and the enables only, never on a traced call's path.
static TOOLS: Mutex<Vec<(SubscriberId, Arc<Tool>)>> = Mutex::new(Vec::new());

fn tools() -> std::sync::MutexGuard<'static, Vec<(SubscriberId, Arc<Tool>)>> {
    // A panic while holding it left a consistent Vec: every mutation is one call.
    TOOLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opaque: tools never dereference a subscriber handle.
pub struct _pti_callback_subscriber_intel {
    _private: [u8; 0],
}

/// A subscription of Intel's Callback API (`pti_callback_subscriber_handle`).
pub type pti_callback_subscriber_handle = *mut _pti_callback_subscriber_intel;

fn tool_of(handle: pti_callback_subscriber_handle) -> Result<(SubscriberId, Arc<Tool>), Error> {
    let id = subscriber_id(handle)?;
    let tool = tools()
        .iter()
        .find(|(k, _)| *k == id)
        .map(|(_, t)| t.clone())
        .ok_or(Error::BadArgument(
            "not a live subscriber of Intel's Callback API",
        ))?;
    Ok((id, tool))
}

/// Intel's `ptiCallbackSubscribe`: a subscriber with nothing enabled yet.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `subscriber` or `callback` is NULL. Unlike Intel's
/// library, it does not require a device view to be enabled first.
///
/// # Safety
/// `subscriber` must be NULL or point to storage for one handle; `callback` must be callable
/// with `user_data` from any thread until ptiCallbackUnsubscribe returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_ptiCallbackSubscribe(
    subscriber: *mut pti_callback_subscriber_handle,
    callback: pti_intel_callback_function,
    user_data: *mut c_void,
) -> pti_result {
    guard(|| {
        let out = out_ptr(subscriber, "subscriber must not be NULL")?;
        let function = callback.ok_or(Error::BadArgument("callback must not be NULL"))?;
        let tool = Arc::new(Tool {
            function,
            user_data,
            phases: Phases::default(),
        });
        let handler_tool = tool.clone();
        let id = session::subscribe(Box::new(move |event| handler_tool.call(event)))?;
        tools().push((id, tool));
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one handle.
        unsafe { out.write(id.to_raw() as usize as pti_callback_subscriber_handle) };
        Ok(())
    })
}

/// Intel's `ptiCallbackUnsubscribe`: disables every domain and removes the subscriber. The
/// same guarantees as libpti's own unsubscribe: afterwards no callback of it starts again.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackUnsubscribe(
    subscriber: pti_callback_subscriber_handle,
) -> pti_result {
    guard(|| {
        let (id, _) = tool_of(subscriber)?;
        session::unsubscribe(id)?;
        tools().retain(|(k, _)| *k != id);
        Ok(())
    })
}

/// What enabling a domain means here.
enum Wish {
    /// Delivered: the engine domain behind it and where the subscriber's phases are kept.
    Deliver(Domain, fn(&Phases) -> &AtomicU32),
    /// Declared by Intel's header, not delivered by libpti (yet).
    NotImplemented,
    /// No domain of Intel's header.
    Unknown,
}

fn wish(domain: u32) -> Wish {
    match domain {
        1023 => Wish::Deliver(Domain::DriverApi, |p| &p.driver_api),
        1025 => Wish::Deliver(Domain::CriticalEvent, |p| &p.internal_event),
        1..=9 | 1024 => Wish::NotImplemented,
        _ => Wish::Unknown,
    }
}

/// Sets `subscriber`'s phases of `domain` (0 disables it), answering as Intel's header
/// documents for domains that are not delivered.
fn set_phases(subscriber: pti_callback_subscriber_handle, domain: u32, wanted: u32) -> pti_result {
    guard_status(|| {
        let (id, tool) = tool_of(subscriber)?;
        match wish(domain) {
            Wish::Deliver(engine_domain, phases) => {
                phases(&tool.phases).store(wanted, Ordering::Relaxed);
                session::enable_domain(id, engine_domain, wanted != 0)?;
                Ok(pti_result::PTI_SUCCESS)
            }
            Wish::NotImplemented => Ok(pti_result::PTI_ERROR_NOT_IMPLEMENTED),
            Wish::Unknown => Err(Error::BadArgument("unknown callback domain")),
        }
    })
}

/// Intel's `ptiCallbackEnableDomain`: callbacks of `domain` at ENTER when `enter_cb` != 0, at
/// EXIT when `exit_cb` != 0 (INTERNAL_EVENT has one phase: either flag enables it).
///
/// Returns PTI_ERROR_BAD_ARGUMENT for a bad handle or an unknown domain, and
/// PTI_ERROR_NOT_IMPLEMENTED for a declared domain libpti does not deliver yet.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackEnableDomain(
    subscriber: pti_callback_subscriber_handle,
    domain: u32,
    enter_cb: u32,
    exit_cb: u32,
) -> pti_result {
    let wanted = u32::from(enter_cb != 0) * ENTER + u32::from(exit_cb != 0) * EXIT;
    set_phases(subscriber, domain, wanted)
}

/// Intel's `ptiCallbackDisableDomain`.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDisableDomain(
    subscriber: pti_callback_subscriber_handle,
    domain: u32,
) -> pti_result {
    set_phases(subscriber, domain, 0)
}

/// Intel's `ptiCallbackDisableAllDomains`.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDisableAllDomains(
    subscriber: pti_callback_subscriber_handle,
) -> pti_result {
    for domain in DELIVERED {
        let status = set_phases(subscriber, domain, 0);
        if status != pti_result::PTI_SUCCESS {
            return status;
        }
    }
    pti_result::PTI_SUCCESS
}

/// The domains libpti delivers.
const DELIVERED: [u32; 2] = [1023, 1025];

/// The name of Intel's callback domain `domain`, or "INVALID".
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDomainTypeToString(domain: u32) -> *const c_char {
    guard_or(c"INVALID".as_ptr(), || domain_name(domain).as_ptr())
}

/// The name of Intel's callback phase `phase`, or "INVALID".
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackPhaseTypeToString(phase: u32) -> *const c_char {
    guard_or(c"INVALID".as_ptr(), || phase_name(phase).as_ptr())
}

fn domain_name(domain: u32) -> &'static CStr {
    match domain {
        1 => c"PTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED",
        2 => c"PTI_CB_DOMAIN_DRIVER_MODULE_LOADED",
        3 => c"PTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED",
        4 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED",
        5 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED",
        6 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED",
        7 => c"PTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION",
        8 => c"PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED",
        9 => c"PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED",
        1023 => c"PTI_CB_DOMAIN_DRIVER_API",
        1024 => c"PTI_CB_DOMAIN_INTERNAL_THREADS",
        1025 => c"PTI_CB_DOMAIN_INTERNAL_EVENT",
        _ => c"INVALID",
    }
}

fn phase_name(phase: u32) -> &'static CStr {
    match phase {
        1 => c"PTI_CB_PHASE_API_ENTER",
        2 => c"PTI_CB_PHASE_API_EXIT",
        3 => c"PTI_CB_PHASE_INTERNAL_THREAD_START",
        4 => c"PTI_CB_PHASE_INTERNAL_THREAD_END",
        5 => c"PTI_CB_PHASE_INTERNAL_EVENT",
        _ => c"INVALID",
    }
}
