//! The Callback API (`pti_callback.h`): a [`Subscriber`] receives an [`Event`] at the ENTER and
//! EXIT of each call it enabled, and libpti's critical events.
//!
//! Callbacks run on the thread that made the call, possibly several at once: the function is
//! `Fn + Send + Sync`. A panic in it is caught in the callback (it never unwinds into libpti or
//! the traced program) and the call goes on.

use core::ffi::{CStr, c_void};
use core::panic::AssertUnwindSafe;

use crate::error::{Error, check};
use crate::ffi;

/// Which calls or events a subscriber can enable as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Level Zero and OpenCL calls.
    DriverApi = 1,
    /// SYCL runtime (Unified Runtime) calls.
    RuntimeApi = 2,
    /// Events in which libpti loses or corrupts data, or stops collecting.
    CriticalEvent = 3,
}

/// The API a call belongs to (`pti_api_group_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiGroup {
    /// Level Zero.
    LevelZero = 1,
    /// OpenCL.
    OpenCl = 2,
    /// SYCL (the Unified Runtime).
    Sycl = 3,
}

impl ApiGroup {
    fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(ApiGroup::LevelZero),
            2 => Some(ApiGroup::OpenCl),
            3 => Some(ApiGroup::Sycl),
            _ => None,
        }
    }
}

/// Before or after the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// Before the traced function runs.
    Enter,
    /// After it returned.
    Exit,
}

/// A call at its ENTER or EXIT.
#[derive(Debug)]
pub struct ApiCall<'a> {
    /// Its API.
    pub group: ApiGroup,
    /// Its ID in the group's stable table (`pti_driver_opencl_api_ids.h`, ...).
    pub api_id: u32,
    /// Enter or exit.
    pub site: Site,
    /// The function's name.
    pub name: &'a CStr,
    /// The ID the call's records carry.
    pub correlation_id: u32,
    /// For a call that submits a kernel, its name when known.
    pub kernel_name: Option<&'a CStr>,
    /// The backend's context of the call, when known.
    pub context: *mut c_void,
    /// The backend's parameter struct of the call (NULL when the backend gives none): its
    /// fields point at the call's arguments. OpenCL: `pti_cl_params_<function>`
    /// (`pti/pti_cl_params.h`); Level Zero: the tracing layer's `ze_<function>_params_t`; SYCL:
    /// the Unified Runtime's `ur_<function>_params_t`. Valid during the callback only.
    pub args: *const c_void,
    /// At EXIT, the status the call returned (`ze_result_t`, `cl_int` or `ur_result_t`; for
    /// OpenCL creators, the `errcode_ret` value); `None` at ENTER.
    pub return_code: Option<i32>,
}

/// A critical event: libpti lost or corrupted data, or stopped collecting.
#[derive(Debug)]
pub struct CriticalEvent<'a> {
    /// What happened, as a `pti_result` ([`Error::from_code`] names it).
    pub code: u32,
    /// The details, for a human.
    pub message: &'a CStr,
}

/// What a subscriber receives.
#[derive(Debug)]
pub enum Event<'a> {
    /// A call it enabled, at ENTER or EXIT.
    ApiCall(ApiCall<'a>),
    /// A critical event (with [`Domain::CriticalEvent`] enabled).
    Critical(CriticalEvent<'a>),
}

/// How many critical events of kind `code` (a `pti_result`) libpti raised in the process,
/// delivered to a subscriber or not (`PTI_ERROR_BAD_ARGUMENT` for a code that is no event).
pub fn critical_event_count(code: u32) -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiCallbackGetCriticalEventCount(code, &mut n) })?;
    Ok(n)
}

type Handler = dyn Fn(&Event<'_>) + Send + Sync;

/// A subscription: created with nothing enabled; dropping it unsubscribes, and no callback of it
/// starts afterwards (see `ptiCallbackUnsubscribe` for calls already running on other threads,
/// which it waits for when dropped outside a callback).
pub struct Subscriber {
    handle: *mut c_void,
    /// The function, at a stable address the C callback reaches through `user_data`.
    handler: *mut Box<Handler>,
}

// SAFETY: the handle is an opaque token libpti accepts from any thread; the handler is Send +
// Sync and only read through shared references until drop.
unsafe impl Send for Subscriber {}
// SAFETY: as above; every method takes &self and libpti's functions are thread-safe.
unsafe impl Sync for Subscriber {}

impl Subscriber {
    /// A subscriber that calls `f` for what it enables. Fails with libpti's
    /// `PTI_ERROR_TOO_MANY_SUBSCRIBERS` when 32 exist.
    pub fn new(f: impl Fn(&Event<'_>) + Send + Sync + 'static) -> Result<Self, Error> {
        let handler: *mut Box<Handler> = Box::into_raw(Box::new(Box::new(f)));
        let mut handle = core::ptr::null_mut();
        // SAFETY: a writable handle, a callback of the C signature, and user data that stays
        // valid until unsubscribe returned (freed in drop, after it).
        let code = unsafe {
            ffi::libpti_ptiCallbackSubscribe(&mut handle, Some(trampoline), handler.cast())
        };
        if let Err(e) = check(code) {
            // SAFETY: libpti refused it: nothing refers to the handler.
            drop(unsafe { Box::from_raw(handler) });
            return Err(e);
        }
        Ok(Subscriber { handle, handler })
    }

    /// Enables (or disables) every call of `domain`, or critical events.
    pub fn enable_domain(&self, domain: Domain, on: bool) -> Result<(), Error> {
        // SAFETY: a live handle.
        check(unsafe {
            ffi::libpti_ptiCallbackEnableDomain(u32::from(on), self.handle, domain as u32)
        })
    }

    /// Enables (or disables) one function, by group and ID (`PTI_ERROR_BAD_API_ID` for an ID the
    /// group's table does not name).
    pub fn enable(&self, group: ApiGroup, api_id: u32, on: bool) -> Result<(), Error> {
        // SAFETY: a live handle.
        check(unsafe {
            ffi::libpti_ptiCallbackEnable(u32::from(on), self.handle, group as u32, api_id)
        })
    }
}

thread_local! {
    /// How many subscriber callbacks this thread is inside (they can nest: a callback's own
    /// traced call calls back).
    static IN_CALLBACK: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
}

impl Drop for Subscriber {
    /// Unsubscribes. Outside a callback, libpti waits for this subscriber's callbacks running on
    /// other threads, and the function is freed. Inside a callback (this subscriber's or
    /// another's) libpti cannot wait (the running callback may be this one), so the function
    /// is leaked: a callback still running must find it.
    fn drop(&mut self) {
        // SAFETY: a live handle, given back once.
        let code = unsafe { ffi::libpti_ptiCallbackUnsubscribe(self.handle) };
        let inside = IN_CALLBACK.with(core::cell::Cell::get) > 0;
        if code == 0 && !inside {
            // SAFETY: unsubscribed outside a callback: no callback of it starts again, and those
            // running have returned.
            drop(unsafe { Box::from_raw(self.handler) });
        }
        // Otherwise the handler is leaked rather than freed under a callback that may still run.
    }
}

/// The C callback: builds the [`Event`] and calls the subscriber's function, catching a panic.
unsafe extern "C" fn trampoline(
    user_data: *mut c_void,
    domain: u32,
    group: u32,
    api_id: u32,
    cb_data: *mut c_void,
) {
    if user_data.is_null() || cb_data.is_null() {
        return;
    }
    // SAFETY: `user_data` is the handler Subscriber::new passed, alive until unsubscribed.
    let handler = unsafe { &*user_data.cast::<Box<Handler>>() };
    let event = if domain == Domain::CriticalEvent as u32 {
        // SAFETY: libpti passes a critical event's data in that domain.
        let data = unsafe { &*cb_data.cast::<ffi::CriticalEventData>() };
        if data.message.is_null() {
            return;
        }
        Event::Critical(CriticalEvent {
            code: data.event,
            // SAFETY: a NUL-terminated message, valid during the callback.
            message: unsafe { CStr::from_ptr(data.message) },
        })
    } else {
        // SAFETY: libpti passes a call's data in the API domains.
        let data = unsafe { &*cb_data.cast::<ffi::ApiCallData>() };
        let (Some(group), false) = (ApiGroup::from_raw(group), data.api_name.is_null()) else {
            return;
        };
        Event::ApiCall(ApiCall {
            group,
            api_id,
            site: if data.site == 0 {
                Site::Enter
            } else {
                Site::Exit
            },
            // SAFETY: NUL-terminated names, valid during the callback (static in libpti).
            name: unsafe { CStr::from_ptr(data.api_name) },
            kernel_name: (!data.kernel_name.is_null())
                // SAFETY: as above.
                .then(|| unsafe { CStr::from_ptr(data.kernel_name) }),
            correlation_id: data.correlation_id,
            context: data.backend_context,
            args: data.args,
            // SAFETY: at EXIT libpti points at the call's 4-byte status, valid during the
            // callback.
            return_code: (!data.return_code.is_null())
                .then(|| unsafe { data.return_code.cast::<i32>().read_unaligned() }),
        })
    };
    IN_CALLBACK.with(|n| n.set(n.get() + 1));
    // A panic must not unwind into libpti: it is dropped here, and the call goes on.
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| handler(&event)));
    IN_CALLBACK.with(|n| n.set(n.get() - 1));
}
