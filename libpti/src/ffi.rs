//! The functions of `libpti.so` this crate calls, and the callback data layouts of the
//! proposal's `pti_callback.h`. Every function is called under its `libpti_<name>` symbol,
//! which only `libpti.so` exports: another library of the process that exports the plain C
//! names (Intel's PTI, `libpti_view.so.1`) cannot capture these calls.
//!
//! `build.rs` reads the names declared in the `extern` block below to build its link stub:
//! declare every function here, one per line, as `pub(crate) fn libpti_<name>(`.

use core::ffi::{c_char, c_void};

/// `pti_callback_function`.
pub(crate) type Callback = unsafe extern "C" fn(
    user_data: *mut c_void,
    domain: u32,
    group: u32,
    api_id: u32,
    cb_data: *mut c_void,
);

/// `pti_fptr_buffer_requested`.
pub(crate) type BufferRequested = unsafe extern "C" fn(buffer: *mut *mut u8, size: *mut usize);
/// `pti_fptr_buffer_completed`.
pub(crate) type BufferCompleted = unsafe extern "C" fn(buffer: *mut u8, size: usize, used: usize);

unsafe extern "C" {
    pub(crate) fn libpti_ptiVersionString() -> *const c_char;
    pub(crate) fn libpti_ptiViewGetTimestamp() -> u64;
    pub(crate) fn libpti_ptiResultTypeToString(result: u32) -> *const c_char;
    pub(crate) fn libpti_ptiCallbackSubscribe(
        subscriber: *mut *mut c_void,
        callback: Option<Callback>,
        user_data: *mut c_void,
    ) -> u32;
    pub(crate) fn libpti_ptiViewSetCallbacks(
        requested: Option<BufferRequested>,
        completed: Option<BufferCompleted>,
    ) -> u32;
    pub(crate) fn libpti_ptiViewEnable(kind: u32) -> u32;
    pub(crate) fn libpti_ptiViewDisable(kind: u32) -> u32;
    pub(crate) fn libpti_ptiFlushAllViews() -> u32;
    pub(crate) fn libpti_ptiViewPushExternalCorrelationId(kind: u32, id: u64) -> u32;
    pub(crate) fn libpti_ptiViewPopExternalCorrelationId(kind: u32, id: *mut u64) -> u32;
    pub(crate) fn libpti_ptiViewGetApiIdName(
        group: u32,
        api_id: u32,
        name: *mut *const c_char,
    ) -> u32;
    pub(crate) fn libpti_ptiViewGetDroppedRecordCount(kind: u32, count: *mut u64) -> u32;
    pub(crate) fn libpti_ptiViewGetEmittedRecordCount(kind: u32, count: *mut u64) -> u32;
    pub(crate) fn libpti_ptiViewGetPendingDeviceRecordCount(count: *mut u64) -> u32;
    pub(crate) fn libpti_ptiViewPause() -> u32;
    pub(crate) fn libpti_ptiViewResume() -> u32;
    pub(crate) fn libpti_ptiViewIsPaused(paused: *mut u32) -> u32;
    pub(crate) fn libpti_ptiViewEnableDriverApi(enable: u32, group: u32, api_id: u32) -> u32;
    pub(crate) fn libpti_ptiViewEnableRuntimeApi(enable: u32, group: u32, api_id: u32) -> u32;
    pub(crate) fn libpti_ptiViewMemcpyTypeToString(kind: u32) -> *const c_char;
    pub(crate) fn libpti_ptiCallbackGetCriticalEventCount(event: u32, count: *mut u64) -> u32;
    pub(crate) fn libpti_ptiCallbackUnsubscribe(subscriber: *mut c_void) -> u32;
    pub(crate) fn libpti_ptiCallbackEnableDomain(
        enable: u32,
        subscriber: *mut c_void,
        domain: u32,
    ) -> u32;
    pub(crate) fn libpti_ptiCallbackEnable(
        enable: u32,
        subscriber: *mut c_void,
        group: u32,
        api_id: u32,
    ) -> u32;
}

/// `pti_apicall_callback_data`: one call, at ENTER or EXIT.
#[repr(C)]
pub(crate) struct ApiCallData {
    pub(crate) site: u32,
    pub(crate) api_name: *const c_char,
    pub(crate) args: *const c_void,
    pub(crate) kernel_name: *const c_char,
    pub(crate) return_code: *const c_void,
    pub(crate) backend_context: *mut c_void,
    pub(crate) correlation_id: u32,
    pub(crate) local_data: *mut u64,
}

/// `pti_critical_event_callback_data`.
#[repr(C)]
pub(crate) struct CriticalEventData {
    pub(crate) event: u32,
    pub(crate) message: *const c_char,
}

// The layouts `pti_callback.h` asserts (tests/c_abi.rs).
const _: () = {
    assert!(core::mem::size_of::<ApiCallData>() == 64);
    assert!(core::mem::offset_of!(ApiCallData, correlation_id) == 48);
    assert!(core::mem::offset_of!(ApiCallData, local_data) == 56);
    assert!(core::mem::size_of::<CriticalEventData>() == 16);
};
