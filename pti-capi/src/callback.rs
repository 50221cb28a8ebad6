//! `pti_callback.h`: the Callback API.
//!
//! A subscriber handle is an encoded number, never a pointer libpti dereferences, so a stale,
//! foreign or never-issued handle is detected and rejected with PTI_ERROR_BAD_ARGUMENT.

use core::ffi::{c_char, c_void};
use core::mem::{offset_of, size_of};

use pti_core::callback::SubscriberId;
use pti_core::session;
use pti_core::{ApiCallbackData, CriticalEventData, Domain, Error, Event};

use crate::boundary::{export, out_ptr};
use crate::pti::pti_result;
use crate::raw::{RawApiGroup, RawDomain};
use crate::view::{pti_api_group_id, pti_backend_ctx_t, traced_group};

/// Callback domains.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_callback_domain {
    /// Not a domain.
    PTI_DOMAIN_INVALID = 0,
    /// Level Zero and OpenCL calls.
    PTI_DOMAIN_DRIVER_API = 1,
    /// SYCL runtime (Unified Runtime) calls.
    PTI_DOMAIN_RUNTIME_API = 2,
    /// Events inside libpti that lose or corrupt data or stop collection.
    PTI_DOMAIN_PTI_CRITICAL_EVENT = 3,
}

impl From<Domain> for pti_callback_domain {
    fn from(domain: Domain) -> Self {
        match domain {
            Domain::DriverApi => pti_callback_domain::PTI_DOMAIN_DRIVER_API,
            Domain::RuntimeApi => pti_callback_domain::PTI_DOMAIN_RUNTIME_API,
            Domain::CriticalEvent => pti_callback_domain::PTI_DOMAIN_PTI_CRITICAL_EVENT,
            // Engine domains of the Intel face: never enabled through this API.
            Domain::GpuOperations | Domain::KernelObjects => {
                pti_callback_domain::PTI_DOMAIN_INVALID
            }
        }
    }
}

/// Where in a traced call a callback is made.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_callback_site {
    /// Before the traced function runs.
    PTI_SITE_ENTER = 0,
    /// After the traced function returned.
    PTI_SITE_EXIT = 1,
}

/// An API ID from the stable tables (`pti_driver_levelzero_api_ids.h`,
/// `pti_driver_opencl_api_ids.h`, `pti_runtime_sycl_api_ids.h`).
pub type pti_api_id = u32;

/// Opaque: tools never dereference a subscriber handle.
pub struct _pti_callback_subscriber {
    _private: [u8; 0],
}

/// A subscription, from ptiCallbackSubscribe until ptiCallbackUnsubscribe.
pub type pti_callback_subscriber = *mut _pti_callback_subscriber;

/// What an API callback receives as `cb_data`: one traced call at ENTER or EXIT.
///
/// Valid only during the callback, and private to it: each subscriber gets its own copy.
#[repr(C)]
pub struct pti_apicall_callback_data {
    /// PTI_SITE_ENTER or PTI_SITE_EXIT.
    pub _site: pti_callback_site,
    /// The function's name, a static string, e.g. "clEnqueueNDRangeKernel".
    pub _api_name: *const c_char,
    /// The backend's parameter struct of the call, or NULL if the backend provides none.
    pub _args: *const c_void,
    /// For calls that submit a kernel, its name when known; else NULL.
    pub _kernel_name: *const c_char,
    /// EXIT only: points at the call's status (ze_result_t, cl_int or ur_result_t); else NULL.
    pub _return_code: *const c_void,
    /// The Level Zero or OpenCL context when known, else NULL.
    pub _backend_context_handle: pti_backend_ctx_t,
    /// The same ID that the view records of this call carry.
    pub _correlation_id: u32,
    /// This subscriber's slot for this call: 0 at ENTER, kept until EXIT.
    pub _local_data: *mut u64,
}

/// What a PTI_DOMAIN_PTI_CRITICAL_EVENT callback receives as `cb_data`.
#[repr(C)]
pub struct pti_critical_event_callback_data {
    /// What happened, as a result code (e.g. PTI_ERROR_CALLBACK_PANICKED).
    pub _pti_event: pti_result,
    /// Details for a human; valid during the callback only.
    pub _message: *mut c_char,
}

// The core writes these structs; the header declares them. They must be the same bytes.
const _: () = {
    assert!(size_of::<pti_apicall_callback_data>() == size_of::<ApiCallbackData>());
    let core = ApiCallbackData::FIELD_OFFSETS;
    assert!(offset_of!(pti_apicall_callback_data, _site) == core[0]);
    assert!(offset_of!(pti_apicall_callback_data, _api_name) == core[1]);
    assert!(offset_of!(pti_apicall_callback_data, _args) == core[2]);
    assert!(offset_of!(pti_apicall_callback_data, _kernel_name) == core[3]);
    assert!(offset_of!(pti_apicall_callback_data, _return_code) == core[4]);
    assert!(offset_of!(pti_apicall_callback_data, _backend_context_handle) == core[5]);
    assert!(offset_of!(pti_apicall_callback_data, _correlation_id) == core[6]);
    assert!(offset_of!(pti_apicall_callback_data, _local_data) == core[7]);
    assert!(size_of::<pti_critical_event_callback_data>() == size_of::<CriticalEventData>());
    let core = CriticalEventData::FIELD_OFFSETS;
    assert!(offset_of!(pti_critical_event_callback_data, _pti_event) == core[0]);
    assert!(offset_of!(pti_critical_event_callback_data, _message) == core[1]);
};

/// A subscriber's callback.
///
/// Called on the thread that made the traced call (API domains) or that raised the event
/// (critical events), possibly on several threads at once. `group_id` and `api_id` name the
/// function; for critical events they are PTI_API_GROUP_RESERVED and 0. `cb_data` points to a
/// pti_apicall_callback_data for the API domains and to a pti_critical_event_callback_data for
/// PTI_DOMAIN_PTI_CRITICAL_EVENT, valid during the call only. A callback must return normally:
/// leaving it with longjmp, a C++ exception or pthread_exit is undefined behaviour.
pub type pti_callback_function = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        domain: pti_callback_domain,
        group_id: pti_api_group_id,
        api_id: u32,
        cb_data: *mut c_void,
    ),
>;

/// A C callback and its user data, callable from any thread.
struct CCallback {
    function:
        unsafe extern "C" fn(*mut c_void, pti_callback_domain, pti_api_group_id, u32, *mut c_void),
    user_data: *mut c_void,
}

// SAFETY: the C API documents that callbacks run on any thread, possibly concurrently; the tool
// owns `user_data` and its synchronisation. libpti only passes the pointer back.
unsafe impl Send for CCallback {}
// SAFETY: as above.
unsafe impl Sync for CCallback {}

impl CCallback {
    fn call(&self, event: Event<'_>) {
        let (domain, group, api_id, data) = match event {
            Event::ApiCall {
                domain,
                group,
                api_id,
                data,
            } => (
                domain.into(),
                group.into(),
                api_id,
                data as *mut ApiCallbackData as *mut c_void,
            ),
            Event::Critical(data) => (
                pti_callback_domain::PTI_DOMAIN_PTI_CRITICAL_EVENT,
                pti_api_group_id::PTI_API_GROUP_RESERVED,
                0,
                data as *mut CriticalEventData as *mut c_void,
            ),
            // An event kind this C ABI does not describe: a C callback could not read it.
            _ => return,
        };
        // SAFETY: the tool registered this function with this signature; `data` has the layout
        // of the struct the domain promises (checked above) and lives for the call.
        unsafe { (self.function)(self.user_data, domain, group, api_id, data) }
    }
}

/// The subscriber a C handle of either face's Callback API names (an encoded number, never
/// dereferenced); NULL is refused, anything else is checked where it is used.
pub(crate) fn subscriber_id<T>(handle: *mut T) -> Result<SubscriberId, Error> {
    if handle.is_null() {
        return Err(Error::BadArgument("subscriber must not be NULL"));
    }
    Ok(SubscriberId::from_raw(handle as usize as u64))
}

/// Creates a subscriber that will receive `callback(user_data, ...)` for what it enables;
/// nothing is enabled yet.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `subscriber` or `callback` is NULL, and
/// PTI_ERROR_TOO_MANY_SUBSCRIBERS when 32 subscribers exist. `*subscriber` is written only on
/// success. Thread-safe; may be called from inside a callback.
///
/// # Safety
/// `subscriber` must be NULL or point to writable storage for one handle, and `callback` must
/// be safe to call with `user_data` from any thread until ptiCallbackUnsubscribe returns.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiCallbackSubscribe(
    subscriber: *mut pti_callback_subscriber,
    callback: pti_callback_function,
    user_data: *mut c_void,
) -> pti_result {
    crate::caller::pass_caller!(3, crate::caller::callback_subscribe)
}

/// libpti's `ptiCallbackSubscribe`, documented above.
pub(crate) unsafe extern "C" fn own_ptiCallbackSubscribe(
    subscriber: *mut pti_callback_subscriber,
    callback: pti_callback_function,
    user_data: *mut c_void,
) -> pti_result {
    export(|| {
        let out = out_ptr(subscriber, "subscriber must not be NULL")?;
        let function = callback.ok_or(Error::BadArgument("callback must not be NULL"))?;
        let c = CCallback {
            function,
            user_data,
        };
        let id = session::subscribe(Box::new(move |event| c.call(event)))?;
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one handle.
        unsafe { out.write(id.to_raw() as usize as pti_callback_subscriber) };
        Ok(())
    })
}

/// Removes a subscriber.
///
/// When it returns, no callback of the subscriber will start again. Called outside a callback,
/// it also waits until callbacks of the subscriber running on other threads have returned, so
/// the tool may free `user_data` afterwards; do not hold a lock the callback takes while calling
/// it, and do not make a callback wait for the thread that calls it. Called from inside a
/// callback, it does not wait (that could deadlock): a callback that another thread was just
/// starting may still run once, so free `user_data` only after a later unsubscribe from outside
/// any callback, or keep it alive.
///
/// Returns PTI_ERROR_BAD_ARGUMENT for NULL and for a stale, foreign or never-issued handle.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiCallbackUnsubscribe(subscriber: pti_callback_subscriber) -> pti_result {
    crate::caller::pass_caller!(1, crate::caller::callback_unsubscribe)
}

/// libpti's `ptiCallbackUnsubscribe`, documented above.
pub(crate) extern "C" fn own_ptiCallbackUnsubscribe(
    subscriber: pti_callback_subscriber,
) -> pti_result {
    export(|| session::unsubscribe(subscriber_id(subscriber)?))
}

/// Enables (`enable` != 0) or disables (`enable` == 0) callbacks for every function of a
/// domain: PTI_DOMAIN_DRIVER_API (Level Zero and OpenCL), PTI_DOMAIN_RUNTIME_API (SYCL), or
/// PTI_DOMAIN_PTI_CRITICAL_EVENT.
///
/// Takes effect from the next ENTER of a call; a call already past its ENTER keeps its EXIT.
/// Returns PTI_ERROR_BAD_ARGUMENT for a bad handle or a domain that is not one of the three.
/// Thread-safe; may be called from inside a callback.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiCallbackEnableDomain(
    enable: u32,
    subscriber: pti_callback_subscriber,
    domain: RawDomain,
) -> pti_result {
    crate::caller::pass_caller!(4, crate::caller::callback_enable_domain)
}

/// libpti's `ptiCallbackEnableDomain`, documented above.
pub(crate) extern "C" fn own_ptiCallbackEnableDomain(
    enable: u32,
    subscriber: pti_callback_subscriber,
    domain: RawDomain,
) -> pti_result {
    export(|| {
        let id = subscriber_id(subscriber)?;
        let domain =
            Domain::from_raw(domain.0).ok_or(Error::BadArgument("unknown callback domain"))?;
        session::enable_domain(id, domain, enable != 0)
    })
}

/// Enables (`enable` != 0) or disables (`enable` == 0) the callback for one function, named by
/// its API group (LEVELZERO, OPENCL or SYCL) and its ID in that group's table.
///
/// Checks, in order: the handle and group (PTI_ERROR_BAD_ARGUMENT), then the ID
/// (PTI_ERROR_BAD_API_ID for an ID the group's table does not name). Takes effect from the next
/// ENTER of a call. Thread-safe; may be called from inside a callback.
#[unsafe(no_mangle)]
pub extern "C" fn ptiCallbackEnable(
    enable: u32,
    subscriber: pti_callback_subscriber,
    api_group_id: RawApiGroup,
    api_id: pti_api_id,
) -> pti_result {
    export(|| {
        let id = subscriber_id(subscriber)?;
        let group = traced_group(api_group_id)?;
        session::enable_callback(id, group, api_id, enable != 0)
    })
}

#[cfg(test)]
mod tests {
    use core::ptr;

    use super::*;

    unsafe extern "C" fn ignore(
        _: *mut c_void,
        _: pti_callback_domain,
        _: pti_api_group_id,
        _: u32,
        _: *mut c_void,
    ) {
    }

    #[test]
    fn a_panic_inside_an_export_becomes_internal_error() {
        let mut handle: pti_callback_subscriber = ptr::null_mut();
        pti_core::fault::panic_at_next_point();
        // SAFETY: `handle` is a valid out-parameter and `ignore` does nothing.
        let r = unsafe { ptiCallbackSubscribe(&mut handle, Some(ignore), ptr::null_mut()) };
        assert_eq!(r, pti_result::PTI_ERROR_INTERNAL);
        assert!(handle.is_null(), "out-parameter written on failure");
        // The library still works afterwards.
        assert_eq!(
            // SAFETY: as above.
            unsafe { ptiCallbackSubscribe(&mut handle, Some(ignore), ptr::null_mut()) },
            pti_result::PTI_SUCCESS
        );
        pti_core::fault::panic_at_next_point();
        assert_eq!(
            ptiCallbackEnableDomain(1, handle, RawDomain(1)),
            pti_result::PTI_ERROR_INTERNAL
        );
        pti_core::fault::panic_at_next_point();
        assert_eq!(
            ptiCallbackEnable(1, handle, RawApiGroup(2), 1),
            pti_result::PTI_ERROR_INTERNAL
        );
        pti_core::fault::panic_at_next_point();
        assert_eq!(
            ptiCallbackUnsubscribe(handle),
            pti_result::PTI_ERROR_INTERNAL
        );
        assert_eq!(ptiCallbackUnsubscribe(handle), pti_result::PTI_SUCCESS);
    }
}
