//! `pti_metrics_scope.h`: Intel PTI 1.2's per-kernel metrics ("metrics scope") API, types and
//! entry points, answered "not supported" (`super::unsupported` says how and why). The header is
//! generated from this file, with Intel's layouts.
#![allow(unused_variables)] // No handle can be valid: the entry points read no argument but one.

use core::ffi::{c_char, c_void};

use pti_core::view::abi::{pti_backend_queue_t, pti_device_handle_t};

use super::metrics::{pti_metric_value_type, pti_value_t};
use super::unsupported::METRICS_SCOPE;
use crate::pti::pti_result;
use crate::raw::RawMetricsScopeMode;

/// Opaque: tools never dereference a metrics-scope handle.
pub struct _pti_scope_collection_handle_t {
    _private: [u8; 0],
}

/// A metrics-scope collection.
pub type pti_scope_collection_handle_t = *mut _pti_scope_collection_handle_t;

/// Which scopes are collected.
#[repr(u32)]
pub enum pti_metrics_scope_mode_t {
    /// Not a mode.
    PTI_METRICS_SCOPE_INVALID_MODE = 0,
    /// One scope per kernel.
    PTI_METRICS_SCOPE_AUTO_KERNEL = 1,
    /// Scopes the tool marks.
    PTI_METRICS_SCOPE_USER = 2,
    /// Keeps the enum 32 bits wide; never a value.
    PTI_METRICS_SCOPE_MODE_FORCE_UINT32 = 0x7fff_ffff,
}

/// A collection buffer's description.
#[repr(C)]
pub struct pti_metrics_scope_collection_buffer_properties_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// The device.
    pub _device_handle: pti_device_handle_t,
    /// How many scopes the buffer holds.
    pub _num_scopes: usize,
    /// The buffer's size in bytes.
    pub _buffer_size: usize,
    /// Host time of the first scope's append.
    pub _host_time_first_scope_append: u64,
    /// Host time of the last scope's append.
    pub _host_time_last_scope_append: u64,
    /// The metric group collected.
    pub _metric_group_name: *const c_char,
}

/// The metrics of one kernel.
#[repr(C)]
pub struct pti_metrics_scope_record_t {
    /// The kernel's `_kernel_id`.
    pub _kernel_id: u64,
    /// The queue it ran on.
    pub _queue: pti_backend_queue_t,
    /// The kernel's name.
    pub _kernel_name: *const c_char,
    /// Its values, as the metadata describes them.
    pub _metrics_values: *mut pti_value_t,
}

/// What the values of every record are.
#[repr(C)]
pub struct pti_metrics_scope_record_metadata_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// How many values each record has.
    pub _metrics_count: usize,
    /// The type of its values.
    pub _value_types: *mut pti_metric_value_type,
    /// The name of each value.
    pub _metric_names: *mut *const c_char,
    /// The units of each value.
    pub _metric_units: *mut *const c_char,
}

/// Creates a collection: PTI_ERROR_BAD_ARGUMENT for a NULL out-pointer, else
/// PTI_ERROR_NOT_IMPLEMENTED; no handle is written.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeEnable(
    scope_collection_handle: *mut pti_scope_collection_handle_t,
) -> pti_result {
    METRICS_SCOPE.answer(|| {
        if scope_collection_handle.is_null() {
            pti_result::PTI_ERROR_BAD_ARGUMENT
        } else {
            pti_result::PTI_ERROR_NOT_IMPLEMENTED
        }
    })
}

/// Configures a collection: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeConfigure(
    scope_collection_handle: pti_scope_collection_handle_t,
    collection_mode: RawMetricsScopeMode,
    devices_to_profile: *mut pti_device_handle_t,
    device_count: u32,
    metric_names: *mut *const c_char,
    metric_count: usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Estimates a buffer size: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeQueryCollectionBufferSize(
    scope_collection_handle: pti_scope_collection_handle_t,
    scopes_number: usize,
    estimated_buffer_size: *mut usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Sets the buffer size: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeSetCollectionBufferSize(
    scope_collection_handle: pti_scope_collection_handle_t,
    buffer_size: usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Starts collecting: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeStartCollection(
    scope_collection_handle: pti_scope_collection_handle_t,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Stops collecting: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeStopCollection(
    scope_collection_handle: pti_scope_collection_handle_t,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Destroys a collection: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeDisable(
    scope_collection_handle: pti_scope_collection_handle_t,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Counts the collection buffers: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeGetCollectionBuffersCount(
    scope_collection_handle: pti_scope_collection_handle_t,
    buffer_count: *mut usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Hands out a collection buffer: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeGetCollectionBuffer(
    scope_collection_handle: pti_scope_collection_handle_t,
    buffer_index: usize,
    buffer: *mut *mut c_void,
    buffer_size: *mut usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Describes a collection buffer: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeGetCollectionBufferProperties(
    scope_collection_handle: pti_scope_collection_handle_t,
    collection_buffer: *mut c_void,
    props: *mut pti_metrics_scope_collection_buffer_properties_t,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Sizes the metrics of a buffer: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeQueryMetricsBufferSize(
    scope_collection_handle: pti_scope_collection_handle_t,
    collection_buffer: *mut c_void,
    required_metrics_buffer_size: *mut usize,
    records_count: *mut usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Calculates the metrics of a buffer: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeCalculateMetrics(
    scope_collection_handle: pti_scope_collection_handle_t,
    collection_buffer: *mut c_void,
    metrics_buffer: *mut c_void,
    metrics_buffer_size: usize,
    records_count: *mut usize,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}

/// Describes the records' values: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeGetMetricsMetadata(
    scope_collection_handle: pti_scope_collection_handle_t,
    metadata: *mut pti_metrics_scope_record_metadata_t,
) -> pti_result {
    METRICS_SCOPE.no_handle()
}
