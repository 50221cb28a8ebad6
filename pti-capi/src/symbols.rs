//! The second name of every function of libpti's C API: `libpti_<name>`, the symbol that
//! libpti's headers bind a tool's calls to (`PTI_SYMBOL` in `pti.h`).
//!
//! Why: the dynamic linker resolves a name by load order, and other libraries in a process may
//! export the same C names with other meanings: the Intel-PTI-compatible library (`libpti_view.so.1`) exports
//! Intel's `ptiCallbackSubscribe` (other arguments) and Intel's behaviour under the names libpti
//! uses too. A tool built against libpti's headers must reach libpti whatever was loaded first:
//! its calls go to `libpti_ptiCallbackSubscribe`, a name only libpti exports. The plain names
//! stay exported as well (programs built before, tools that look functions up by name).
//!
//! Each alias calls the function it names and does nothing else. `tests/c_abi.rs` checks that
//! every exported `pti*` function has its alias, and that nothing else is exported.

#![allow(clippy::missing_safety_doc, unused_unsafe)]

use core::ffi::{c_char, c_void};

use crate::callback::{pti_api_id, pti_callback_function, pti_callback_subscriber};
use crate::ext::pti_simulated_call_body;
use crate::pti::pti_result;
use crate::raw::*;
use crate::version::pti_version;
use crate::view::{
    pti_backend_ctx_t, pti_fptr_buffer_completed, pti_fptr_buffer_requested,
    pti_fptr_get_timestamp, pti_view_record_base,
};

forwarding_exports! { "under the name libpti's headers bind to";
    version::own_ptiVersionString as libpti_ptiVersionString() -> *const c_char;
    version::own_ptiVersion as libpti_ptiVersion() -> pti_version;
    pti::own_ptiResultTypeToString as libpti_ptiResultTypeToString(result_value: RawResult) -> *const c_char;
    view::own_ptiViewSetCallbacks as libpti_ptiViewSetCallbacks(fptr_bufferRequested: pti_fptr_buffer_requested, fptr_bufferCompleted: pti_fptr_buffer_completed) -> pti_result;
    view::own_ptiViewEnable as libpti_ptiViewEnable(view_kind: RawViewKind) -> pti_result;
    view::ptiViewDisable as libpti_ptiViewDisable(view_kind: RawViewKind) -> pti_result;
    view::ptiViewGPULocalAvailable as libpti_ptiViewGPULocalAvailable() -> pti_result;
    view::ptiFlushAllViews as libpti_ptiFlushAllViews() -> pti_result;
    view::ptiViewGetNextRecord as libpti_ptiViewGetNextRecord(buffer: *mut u8, valid_bytes: usize, record: *mut *mut pti_view_record_base) -> pti_result;
    view::ptiViewPushExternalCorrelationId as libpti_ptiViewPushExternalCorrelationId(external_kind: RawExternalKind, external_id: u64) -> pti_result;
    view::ptiViewPopExternalCorrelationId as libpti_ptiViewPopExternalCorrelationId(external_kind: RawExternalKind, p_external_id: *mut u64) -> pti_result;
    view::own_ptiViewOverheadKindToString as libpti_ptiViewOverheadKindToString(kind: RawOverheadKind) -> *const c_char;
    view::own_ptiViewMemoryTypeToString as libpti_ptiViewMemoryTypeToString(kind: RawMemoryType) -> *const c_char;
    view::ptiViewMemcpyTypeToString as libpti_ptiViewMemcpyTypeToString(kind: RawMemcpyType) -> *const c_char;
    view::own_ptiViewGetTimestamp as libpti_ptiViewGetTimestamp() -> u64;
    view::own_ptiViewSetTimestampCallback as libpti_ptiViewSetTimestampCallback(fptr_timestampRequested: pti_fptr_get_timestamp) -> pti_result;
    view::ptiViewGetApiIdName as libpti_ptiViewGetApiIdName(kind: RawApiGroup, unique_id: u32, name: *mut *const c_char) -> pti_result;
    view::ptiViewEnableDriverApi as libpti_ptiViewEnableDriverApi(enable: u32, api_group_id: RawApiGroup, api_id: u32) -> pti_result;
    view::ptiViewEnableRuntimeApi as libpti_ptiViewEnableRuntimeApi(enable: u32, api_group_id: RawApiGroup, api_id: u32) -> pti_result;
    view::ptiViewEnableDriverApiClass as libpti_ptiViewEnableDriverApiClass(enable: u32, api_class: RawApiClass, group: RawApiGroup) -> pti_result;
    view::ptiViewEnableRuntimeApiClass as libpti_ptiViewEnableRuntimeApiClass(enable: u32, api_class: RawApiClass, group: RawApiGroup) -> pti_result;
    callback::own_ptiCallbackSubscribe as libpti_ptiCallbackSubscribe(subscriber: *mut pti_callback_subscriber, callback: pti_callback_function, user_data: *mut c_void) -> pti_result;
    callback::own_ptiCallbackUnsubscribe as libpti_ptiCallbackUnsubscribe(subscriber: pti_callback_subscriber) -> pti_result;
    callback::own_ptiCallbackEnableDomain as libpti_ptiCallbackEnableDomain(enable: u32, subscriber: pti_callback_subscriber, domain: RawDomain) -> pti_result;
    callback::ptiCallbackEnable as libpti_ptiCallbackEnable(enable: u32, subscriber: pti_callback_subscriber, api_group_id: RawApiGroup, api_id: pti_api_id) -> pti_result;
    ext::ptiCallbackGetCriticalEventCount as libpti_ptiCallbackGetCriticalEventCount(event: RawResult, count: *mut u64) -> pti_result;
    ext::ptiViewGetDroppedRecordCount as libpti_ptiViewGetDroppedRecordCount(kind: RawViewKind, count: *mut u64) -> pti_result;
    ext::ptiViewGetEmittedRecordCount as libpti_ptiViewGetEmittedRecordCount(kind: RawViewKind, count: *mut u64) -> pti_result;
    ext::ptiViewGetUnrecordedCommandCount as libpti_ptiViewGetUnrecordedCommandCount(api_group_id: RawApiGroup, api_id: u32, count: *mut u64) -> pti_result;
    ext::ptiViewGetPendingDeviceRecordCount as libpti_ptiViewGetPendingDeviceRecordCount(count: *mut u64) -> pti_result;
    ext::ptiViewPause as libpti_ptiViewPause() -> pti_result;
    ext::ptiViewResume as libpti_ptiViewResume() -> pti_result;
    ext::ptiViewIsPaused as libpti_ptiViewIsPaused(paused: *mut u32) -> pti_result;
    ext::ptiGetInterceptedFunctionCount as libpti_ptiGetInterceptedFunctionCount(api_group_id: RawApiGroup, count: *mut u32) -> pti_result;
    ext::ptiGetUntracedCallCount as libpti_ptiGetUntracedCallCount(api_group_id: RawApiGroup, count: *mut u64) -> pti_result;
    ext::ptiSimulateApiCall as libpti_ptiSimulateApiCall(api_group_id: RawApiGroup, api_id: u32, args: *const c_void, kernel_name: *const c_char, context: pti_backend_ctx_t, body: pti_simulated_call_body, user_data: *mut c_void, return_code: *mut i32) -> pti_result;
}
