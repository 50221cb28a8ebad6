//! Intel PTI 1.2's View API, version and result names on the Intel face: the names
//! `libpti_intel_<name>` that `libpti_view.so.1` forwards to.
//!
//! Most functions are libpti's own (the View API is the published one on both faces). What
//! differs on the Intel face:
//! - timestamps are on Intel's default clock, the epoch (see `super::clock`), unless the tool
//!   sets its own;
//! - only the view kinds of Intel's `pti_view_kind` can be enabled: libpti's extension kinds
//!   (`PTI_VIEW_EXT_*`, from 0x10000) answer PTI_ERROR_BAD_ARGUMENT, so no record of a kind
//!   outside Intel's enum reaches an Intel-built tool;
//! - `ptiVersion` says 1.2.0, the PTI API level implemented; unknown result codes are named
//!   "INVALID", overhead kinds and memory types as Intel's library names them;
//! - kernel names are demangled once its tool set buffer callbacks, and Level Zero kernels are
//!   recorded as GPU kernels whatever their device's type (Intel's collector does so);
//! - enabling the overhead view makes overhead records one per traced call, as Intel's are
//!   (process-wide: the faces share one engine).

#![allow(unused_unsafe)]

use core::ffi::c_char;

use pti_core::ResultCode;

use crate::boundary::export;
use crate::intel::clock;
use crate::intel::faces::Face;
use crate::pti::{metrics_code_name, pti_result};
use crate::raw::*;
use crate::version::{PTI_VERSION_MAJOR, PTI_VERSION_MINOR, PTI_VERSION_PATCH, pti_version};
use crate::view::{
    pti_fptr_buffer_completed, pti_fptr_buffer_requested, pti_fptr_get_timestamp,
    pti_view_record_base,
};

/// The PTI API level the Intel face implements.
pub const INTEL_PTI_VERSION: pti_version = pti_version {
    _major: PTI_VERSION_MAJOR,
    _minor: PTI_VERSION_MINOR,
    _patch: PTI_VERSION_PATCH,
};

/// The highest view kind of Intel PTI 1.2's `pti_view_kind` (PTI_VIEW_COMMUNICATION).
const LAST_INTEL_VIEW_KIND: u32 = 12;

forwarding_exports! { "on Intel PTI's face: libpti's, unchanged";
    view::ptiViewDisable as libpti_intel_ptiViewDisable(view_kind: RawViewKind) -> pti_result;
    view::ptiViewGPULocalAvailable as libpti_intel_ptiViewGPULocalAvailable() -> pti_result;
    view::ptiFlushAllViews as libpti_intel_ptiFlushAllViews() -> pti_result;
    view::ptiViewGetNextRecord as libpti_intel_ptiViewGetNextRecord(buffer: *mut u8, valid_bytes: usize, record: *mut *mut pti_view_record_base) -> pti_result;
    view::ptiViewPushExternalCorrelationId as libpti_intel_ptiViewPushExternalCorrelationId(external_kind: RawExternalKind, external_id: u64) -> pti_result;
    view::ptiViewPopExternalCorrelationId as libpti_intel_ptiViewPopExternalCorrelationId(external_kind: RawExternalKind, p_external_id: *mut u64) -> pti_result;
    view::ptiViewMemcpyTypeToString as libpti_intel_ptiViewMemcpyTypeToString(kind: RawMemcpyType) -> *const c_char;
    view::ptiViewEnableRuntimeApi as libpti_intel_ptiViewEnableRuntimeApi(enable: u32, api_group_id: RawApiGroup, api_id: u32) -> pti_result;
    view::ptiViewEnableDriverApiClass as libpti_intel_ptiViewEnableDriverApiClass(enable: u32, api_class: RawApiClass, group: RawApiGroup) -> pti_result;
    view::ptiViewEnableRuntimeApiClass as libpti_intel_ptiViewEnableRuntimeApiClass(enable: u32, api_class: RawApiClass, group: RawApiGroup) -> pti_result;
}

/// What the Intel face changes for the whole process once a tool uses it (the faces share one
/// engine): records on Intel's clock, kernel names demangled, every Level Zero kernel recorded
/// as a GPU kernel whatever the device's type, fills named `…(M2D)`, as Intel PTI 1.2 does.
pub(crate) fn adopt_intel_habits() {
    clock::activate();
    pti_core::view::demangle_kernel_names();
    pti_core::view::level_zero_cpu_kernels_as_gpu();
    pti_core::view::name_fills_as_intel();
    pti_core::ids::write_level_zero_ids_as_intel();
}

/// Intel's `ptiViewGetApiIdName`: libpti's, on Intel's numbers (the Level Zero functions Intel
/// numbered after libpti have Intel's number here, and libpti's own number of them is
/// PTI_ERROR_BAD_API_ID, as on Intel's library).
///
/// # Safety
/// `name` must be NULL or point to writable storage for one `const char*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_ptiViewGetApiIdName(
    kind: RawApiGroup,
    unique_id: u32,
    name: *mut *const c_char,
) -> pti_result {
    let Some(ours) = ours_of_intel(kind, unique_id) else {
        return pti_result::PTI_ERROR_BAD_API_ID;
    };
    // SAFETY: the caller's contract, passed on.
    unsafe { crate::view::own_ptiViewGetApiIdName(kind, ours, name) }
}

/// Intel's `ptiViewEnableDriverApi`: libpti's, on Intel's numbers (as
/// [`libpti_intel_ptiViewGetApiIdName`]).
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewEnableDriverApi(
    enable: u32,
    api_group_id: RawApiGroup,
    api_id: u32,
) -> pti_result {
    let Some(ours) = ours_of_intel(api_group_id, api_id) else {
        return pti_result::PTI_ERROR_BAD_API_ID;
    };
    crate::view::own_ptiViewEnableDriverApi(enable, api_group_id, ours)
}

/// libpti's ID for Intel's `id` of the group `raw` names: Level Zero's (for LEVELZERO and ALL,
/// whose other groups have no ID that high) are renumbered, the others are libpti's. `None` for
/// libpti's own number of a function Intel numbers otherwise.
fn ours_of_intel(raw: RawApiGroup, id: u32) -> Option<u32> {
    use pti_core::api::ApiGroup;
    let level_zero = raw.0 == ApiGroup::LevelZero as u32
        || raw.0 == pti_core::view::abi::pti_api_group_id::PTI_API_GROUP_ALL as u32;
    if !level_zero {
        return Some(id);
    }
    match pti_core::ids::from_intel(ApiGroup::LevelZero, id) {
        Some(ours) => Some(ours),
        // Unknown to libpti too: its own function answers with the right error.
        None if !pti_core::ids::is_valid(ApiGroup::LevelZero, id) => Some(id),
        None => None,
    }
}

/// Intel's `ptiViewSetCallbacks`: libpti's, on Intel's clock.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewSetCallbacks(
    fptr_bufferRequested: pti_fptr_buffer_requested,
    fptr_bufferCompleted: pti_fptr_buffer_completed,
) -> pti_result {
    adopt_intel_habits();
    let result =
        crate::view::set_callbacks(Face::Intel, fptr_bufferRequested, fptr_bufferCompleted);
    if result == pti_result::PTI_SUCCESS {
        // As Intel's library: a buffer is asked for now, and every flush hands buffers back,
        // empty ones too.
        export(pti_core::view::lend_buffers_as_intel);
    }
    result
}

/// Intel's `ptiViewOverheadKindToString`: Intel PTI 1.2's names ("BUFFER_DRIVER" for DRIVER,
/// "Instrumentation" for TIME, as its library answers); "INVALID" for other values.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewOverheadKindToString(kind: RawOverheadKind) -> *const c_char {
    let name = match kind.0 {
        1 => c"UNKNOWN",
        2 => c"RESOURCE",
        3 => c"BUFFER_FLUSH",
        4 => c"BUFFER_DRIVER",
        5 => c"Instrumentation",
        _ => c"INVALID",
    };
    name.as_ptr()
}

/// Intel's `ptiViewMemoryTypeToString`: Intel PTI's names ("Host (User Allocated)" for MEMORY,
/// "Host (Driver Allocated)", "Device", "Shared"); "INVALID" for other values.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewMemoryTypeToString(kind: RawMemoryType) -> *const c_char {
    let name = match kind.0 {
        0 => c"Host (User Allocated)",
        1 => c"Host (Driver Allocated)",
        2 => c"Device",
        3 => c"Shared",
        _ => c"INVALID",
    };
    name.as_ptr()
}

/// Intel's `ptiViewEnable`: libpti's, for the kinds of Intel's enum only.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewEnable(view_kind: RawViewKind) -> pti_result {
    if view_kind.0 > LAST_INTEL_VIEW_KIND {
        return pti_result::PTI_ERROR_BAD_ARGUMENT;
    }
    adopt_intel_habits();
    if view_kind.0 == pti_core::view::abi::pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD as u32 {
        // Intel PTI writes one overhead record per traced call.
        pti_core::view::overhead_per_call();
    }
    crate::view::own_ptiViewEnable(view_kind)
}

/// Intel's `ptiViewGetTimestamp`: the time on the records' clock (the epoch unless the tool set
/// its own).
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewGetTimestamp() -> u64 {
    clock::activate();
    crate::view::own_ptiViewGetTimestamp()
}

/// Intel's `ptiViewSetTimestampCallback`: the tool's clock replaces the epoch clock.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiViewSetTimestampCallback(
    fptr_timestampRequested: pti_fptr_get_timestamp,
) -> pti_result {
    crate::view::own_ptiViewSetTimestampCallback(fptr_timestampRequested)
}

/// Intel's `ptiVersionString`: "1.2.0" (`PTI_VERSION_STRING`).
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiVersionString() -> *const c_char {
    c"1.2.0".as_ptr()
}

/// Intel's `ptiVersion`: 1.2.0.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiVersion() -> pti_version {
    INTEL_PTI_VERSION
}

/// Intel's `ptiResultTypeToString`: the code's name, "INVALID" for a value that is none.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiResultTypeToString(result_value: RawResult) -> *const c_char {
    export(|| {
        ResultCode::from_raw(result_value.0)
            .map(ResultCode::name)
            .or_else(|| metrics_code_name(result_value.0))
            .unwrap_or(c"INVALID")
            .as_ptr()
    })
}
