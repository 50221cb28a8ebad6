//! `pti_metrics.h`: Intel PTI 1.2's metrics API, types and entry points, answered "not
//! supported" (`super::unsupported` says how and why). The header is generated from this file;
//! the types are Intel's layouts, so a tool built against either header passes the same bytes.
#![allow(unused_variables)] // No handle can be valid: the entry points read no argument but one.

use core::ffi::{c_char, c_void};

use pti_core::view::abi::{PTI_MAX_DEVICE_UUID_SIZE, pti_device_handle_t};

use super::unsupported::METRICS;
use crate::pti::pti_result;

/// A device's PCI address.
#[repr(C)]
pub struct pti_pci_properties_t {
    /// PCI domain.
    pub _domain: u8,
    /// PCI bus.
    pub _bus: u8,
    /// PCI device.
    pub _device: u8,
    /// PCI function.
    pub _function: u8,
}

/// A device that offers metrics, as `ptiMetricsGetDevices` lists it.
#[repr(C)]
pub struct pti_device_properties_t {
    /// The device.
    pub _handle: pti_device_handle_t,
    /// Its PCI address.
    pub _address: pti_pci_properties_t,
    /// Its model name.
    pub _model_name: *const c_char,
    /// Its UUID.
    pub _uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
}

/// A metric.
pub type pti_metric_handle_t = *mut c_void;

/// The type of a metric's values.
#[repr(u32)]
pub enum pti_metric_value_type {
    /// `ui32`.
    PTI_METRIC_VALUE_TYPE_UINT32 = 0,
    /// `ui64`.
    PTI_METRIC_VALUE_TYPE_UINT64 = 1,
    /// `fp32`.
    PTI_METRIC_VALUE_TYPE_FLOAT32 = 2,
    /// `fp64`.
    PTI_METRIC_VALUE_TYPE_FLOAT64 = 3,
    /// `b8`.
    PTI_METRIC_VALUE_TYPE_BOOL8 = 4,
    /// A string.
    PTI_METRIC_VALUE_TYPE_STRING = 5,
    /// An 8-bit unsigned value.
    PTI_METRIC_VALUE_TYPE_UINT8 = 6,
    /// A 16-bit unsigned value.
    PTI_METRIC_VALUE_TYPE_UINT16 = 7,
    /// Keeps the enum 32 bits wide; never a value.
    PTI_METRIC_VALUE_TYPE_FORCE_UINT32 = 0x7fff_ffff,
}

/// What a metric measures.
#[repr(u32)]
pub enum pti_metric_type {
    /// A duration.
    PTI_METRIC_TYPE_DURATION = 0,
    /// An event count.
    PTI_METRIC_TYPE_EVENT = 1,
    /// An event count.
    PTI_METRIC_TYPE_EVENT_WITH_RANGE = 2,
    /// A throughput.
    PTI_METRIC_TYPE_THROUGHPUT = 3,
    /// A timestamp.
    PTI_METRIC_TYPE_TIMESTAMP = 4,
    /// A flag.
    PTI_METRIC_TYPE_FLAG = 5,
    /// A ratio.
    PTI_METRIC_TYPE_RATIO = 6,
    /// A raw value.
    PTI_METRIC_TYPE_RAW = 7,
    /// An instruction pointer.
    PTI_METRIC_TYPE_IP = 0x7fff_fffe,
    /// Keeps the enum 32 bits wide; never a value.
    PTI_METRIC_TYPE_FORCE_UINT32 = 0x7fff_ffff,
}

/// One metric value, read as its `pti_metric_value_type` says.
#[repr(C)]
pub union pti_value_t {
    /// A 32-bit unsigned value.
    pub ui32: u32,
    /// A 64-bit unsigned value.
    pub ui64: u64,
    /// A 32-bit float.
    pub fp32: f32,
    /// A 64-bit float.
    pub fp64: f64,
    /// A boolean.
    pub b8: bool,
}

/// A metric's description.
#[repr(C)]
pub struct pti_metric_properties_t {
    /// The metric.
    pub _handle: pti_metric_handle_t,
    /// Its name.
    pub _name: *const c_char,
    /// Its description.
    pub _description: *const c_char,
    /// What it measures.
    pub _metric_type: pti_metric_type,
    /// The type of its values.
    pub _value_type: pti_metric_value_type,
    /// Its units.
    pub _units: *const c_char,
}

/// A metric group.
pub type pti_metrics_group_handle_t = *mut c_void;

/// How a metric group samples.
#[repr(u32)]
pub enum pti_metrics_group_type {
    /// Sampled at events.
    PTI_METRIC_GROUP_TYPE_EVENT_BASED = 0x01,
    /// Sampled in time.
    PTI_METRIC_GROUP_TYPE_TIME_BASED = 0x02,
    /// Traced.
    PTI_METRIC_GROUP_TYPE_TRACE_BASED = 0x04,
    /// Keeps the enum 32 bits wide; never a value.
    PTI_METRIC_GROUP_TYPE_FORCE_UINT32 = 0x7fff_ffff,
}

/// A metric group's description.
#[repr(C)]
pub struct pti_metrics_group_properties_t {
    /// The group.
    pub _handle: pti_metrics_group_handle_t,
    /// How it samples.
    pub _type: pti_metrics_group_type,
    /// Its hardware domain.
    pub _domain: u32,
    /// How many metrics it has.
    pub _metric_count: u32,
    /// Its metrics, `_metric_count` of them.
    pub _metric_properties: *mut pti_metric_properties_t,
    /// Its name.
    pub _name: *const c_char,
    /// Its description.
    pub _description: *const c_char,
}

/// What to collect of one metric group.
#[repr(C)]
pub struct pti_metrics_group_collection_params_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// The group to collect.
    pub _group_handle: pti_metrics_group_handle_t,
    /// The sampling interval, in ns.
    pub _sampling_interval: u32,
    /// The aggregation window, in ns.
    pub _time_aggr_window: u64,
}

/// Lists the devices that offer metrics: none to libpti. With `devices` NULL it stores the
/// count (0); with a buffer it stores 0 devices. PTI_ERROR_BAD_ARGUMENT if `device_count` is
/// NULL.
///
/// # Safety
/// `device_count` must be NULL or point to a writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_ptiMetricsGetDevices(
    devices: *mut pti_device_properties_t,
    device_count: *mut u32,
) -> pti_result {
    METRICS.answer(|| {
        if device_count.is_null() || !device_count.is_aligned() {
            return pti_result::PTI_ERROR_BAD_ARGUMENT;
        }
        // SAFETY: checked non-NULL and aligned; the caller passes a writable uint32_t.
        unsafe { device_count.write(0) };
        pti_result::PTI_SUCCESS
    })
}

/// Lists a device's metric groups: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsGetMetricGroups(
    device_handle: pti_device_handle_t,
    metrics_groups: *mut pti_metrics_group_properties_t,
    metrics_group_count: *mut u32,
) -> pti_result {
    METRICS.no_handle()
}

/// Describes a group's metrics: PTI_ERROR_BAD_ARGUMENT, no group can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsGetMetricsProperties(
    metrics_group_handle: pti_metrics_group_handle_t,
    metrics: *mut pti_metric_properties_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Configures collection on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsConfigureCollection(
    device_handle: pti_device_handle_t,
    metrics_group_collection_params: *mut pti_metrics_group_collection_params_t,
    metrics_group_count: u32,
) -> pti_result {
    METRICS.no_handle()
}

/// Starts collection on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsStartCollection(
    device_handle: pti_device_handle_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Starts collection paused on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsStartCollectionPaused(
    device_handle: pti_device_handle_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Pauses collection on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsPauseCollection(
    device_handle: pti_device_handle_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Resumes collection on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsResumeCollection(
    device_handle: pti_device_handle_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Stops collection on a device: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsStopCollection(
    device_handle: pti_device_handle_t,
) -> pti_result {
    METRICS.no_handle()
}

/// Calculates collected values: PTI_ERROR_BAD_ARGUMENT, no device can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsGetCalculatedData(
    device_handle: pti_device_handle_t,
    metrics_group_handle: pti_metrics_group_handle_t,
    metrics_values_buffer: *mut pti_value_t,
    metrics_values_count: *mut u32,
) -> pti_result {
    METRICS.no_handle()
}

/// Enables metrics at run time on a device, or on all when NULL (Intel PTI 1.2):
/// PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsEnable(device_handle: pti_device_handle_t) -> pti_result {
    METRICS.answer(|| pti_result::PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED)
}

/// Undoes `ptiMetricsEnable` (Intel PTI 1.2): nothing was enabled, so PTI_SUCCESS, as Intel's
/// library answers a disable without an enable.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsDisable(device_handle: pti_device_handle_t) -> pti_result {
    METRICS.answer(|| pti_result::PTI_SUCCESS)
}
