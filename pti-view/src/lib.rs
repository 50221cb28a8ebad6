//! # libpti_view.so.1: Intel PTI 1.2's ABI over libpti's one engine
//!
//! Tools built against Intel's PTI link `libpti_view.so.1`. This library exports the same 69
//! functions (66 `pti*`, 3 `xpti*`) and holds no state and no logic: each export calls the
//! function `libpti_intel_<name>` of `libpti.so.0` with its arguments, where the Intel face of
//! the engine lives (`pti-capi/src/intel/`). So a process has one engine however many faces its
//! tools use, and `libpti.so` stays its only OpenCL layer, XPTI subscriber and Level Zero tracer.
//!
//! Arguments cross as what they are at the machine level (32-bit enums, pointers, sizes); the
//! C types are in the Intel-compatible headers. `tests/c_abi.rs` checks the export list against
//! Intel's library and that every forwarded name resolves in `libpti.so`.

#![allow(non_snake_case)]

use core::ffi::{c_char, c_uint, c_void};

/// `pti_version`, returned by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pti_version {
    /// Major.
    pub _major: u32,
    /// Minor.
    pub _minor: u32,
    /// Patch.
    pub _patch: u32,
}

/// Any pointer argument: to data, to a function, or a handle.
type Ptr = *mut c_void;

/// Defines each export as a call of `libpti_intel_<name>` in libpti.so.
macro_rules! forward {
    ($($name:ident => $target:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        unsafe extern "C" {
            $(fn $target($($arg: $ty),*) -> $ret;)*
        }
        $(
            #[doc = concat!("Intel's `", stringify!($name), "`: libpti's `", stringify!($target), "`.")]
            ///
            /// # Safety
            /// As Intel's PTI documents the function.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: the same function with the same arguments, in libpti.so.
                unsafe { $target($($arg),*) }
            }
        )*
    };
}

forward! {
    ptiVersionString => libpti_intel_ptiVersionString() -> *const c_char;
    ptiVersion => libpti_intel_ptiVersion() -> pti_version;
    ptiResultTypeToString => libpti_intel_ptiResultTypeToString(code: u32) -> *const c_char;

    ptiViewSetCallbacks => libpti_intel_ptiViewSetCallbacks(requested: Ptr, completed: Ptr) -> u32;
    ptiViewEnable => libpti_intel_ptiViewEnable(kind: u32) -> u32;
    ptiViewDisable => libpti_intel_ptiViewDisable(kind: u32) -> u32;
    ptiViewGPULocalAvailable => libpti_intel_ptiViewGPULocalAvailable() -> u32;
    ptiFlushAllViews => libpti_intel_ptiFlushAllViews() -> u32;
    ptiViewGetNextRecord => libpti_intel_ptiViewGetNextRecord(buffer: Ptr, valid_bytes: usize, record: Ptr) -> u32;
    ptiViewPushExternalCorrelationId => libpti_intel_ptiViewPushExternalCorrelationId(kind: u32, id: u64) -> u32;
    ptiViewPopExternalCorrelationId => libpti_intel_ptiViewPopExternalCorrelationId(kind: u32, id: Ptr) -> u32;
    ptiViewOverheadKindToString => libpti_intel_ptiViewOverheadKindToString(kind: u32) -> *const c_char;
    ptiViewMemoryTypeToString => libpti_intel_ptiViewMemoryTypeToString(kind: u32) -> *const c_char;
    ptiViewMemcpyTypeToString => libpti_intel_ptiViewMemcpyTypeToString(kind: u32) -> *const c_char;
    ptiViewGetTimestamp => libpti_intel_ptiViewGetTimestamp() -> u64;
    ptiViewSetTimestampCallback => libpti_intel_ptiViewSetTimestampCallback(callback: Ptr) -> u32;
    ptiViewGetApiIdName => libpti_intel_ptiViewGetApiIdName(group: u32, id: u32, name: Ptr) -> u32;
    ptiViewEnableDriverApi => libpti_intel_ptiViewEnableDriverApi(enable: u32, group: u32, id: u32) -> u32;
    ptiViewEnableRuntimeApi => libpti_intel_ptiViewEnableRuntimeApi(enable: u32, group: u32, id: u32) -> u32;
    ptiViewEnableDriverApiClass => libpti_intel_ptiViewEnableDriverApiClass(enable: u32, class: u32, group: u32) -> u32;
    ptiViewEnableRuntimeApiClass => libpti_intel_ptiViewEnableRuntimeApiClass(enable: u32, class: u32, group: u32) -> u32;

    ptiCallbackSubscribe => libpti_intel_ptiCallbackSubscribe(subscriber: Ptr, callback: Ptr, user_data: Ptr) -> u32;
    ptiCallbackUnsubscribe => libpti_intel_ptiCallbackUnsubscribe(subscriber: Ptr) -> u32;
    ptiCallbackEnableDomain => libpti_intel_ptiCallbackEnableDomain(subscriber: Ptr, domain: u32, enter: u32, exit: u32) -> u32;
    ptiCallbackDisableDomain => libpti_intel_ptiCallbackDisableDomain(subscriber: Ptr, domain: u32) -> u32;
    ptiCallbackDisableAllDomains => libpti_intel_ptiCallbackDisableAllDomains(subscriber: Ptr) -> u32;
    ptiCallbackDomainTypeToString => libpti_intel_ptiCallbackDomainTypeToString(domain: u32) -> *const c_char;
    ptiCallbackPhaseTypeToString => libpti_intel_ptiCallbackPhaseTypeToString(phase: u32) -> *const c_char;

    ptiMetricsGetDevices => libpti_intel_ptiMetricsGetDevices(devices: Ptr, count: Ptr) -> u32;
    ptiMetricsGetMetricGroups => libpti_intel_ptiMetricsGetMetricGroups(device: Ptr, groups: Ptr, count: Ptr) -> u32;
    ptiMetricsGetMetricsProperties => libpti_intel_ptiMetricsGetMetricsProperties(group: Ptr, metrics: Ptr) -> u32;
    ptiMetricsConfigureCollection => libpti_intel_ptiMetricsConfigureCollection(device: Ptr, params: Ptr, count: u32) -> u32;
    ptiMetricsStartCollection => libpti_intel_ptiMetricsStartCollection(device: Ptr) -> u32;
    ptiMetricsStartCollectionPaused => libpti_intel_ptiMetricsStartCollectionPaused(device: Ptr) -> u32;
    ptiMetricsPauseCollection => libpti_intel_ptiMetricsPauseCollection(device: Ptr) -> u32;
    ptiMetricsResumeCollection => libpti_intel_ptiMetricsResumeCollection(device: Ptr) -> u32;
    ptiMetricsStopCollection => libpti_intel_ptiMetricsStopCollection(device: Ptr) -> u32;
    ptiMetricsGetCalculatedData => libpti_intel_ptiMetricsGetCalculatedData(device: Ptr, group: Ptr, values: Ptr, count: Ptr) -> u32;
    ptiMetricsEnable => libpti_intel_ptiMetricsEnable(device: Ptr) -> u32;
    ptiMetricsDisable => libpti_intel_ptiMetricsDisable(device: Ptr) -> u32;

    ptiMetricsScopeEnable => libpti_intel_ptiMetricsScopeEnable(scope: Ptr) -> u32;
    ptiMetricsScopeConfigure => libpti_intel_ptiMetricsScopeConfigure(scope: Ptr, mode: u32, devices: Ptr, device_count: u32, names: Ptr, name_count: usize) -> u32;
    ptiMetricsScopeQueryCollectionBufferSize => libpti_intel_ptiMetricsScopeQueryCollectionBufferSize(scope: Ptr, scopes: usize, size: Ptr) -> u32;
    ptiMetricsScopeSetCollectionBufferSize => libpti_intel_ptiMetricsScopeSetCollectionBufferSize(scope: Ptr, size: usize) -> u32;
    ptiMetricsScopeStartCollection => libpti_intel_ptiMetricsScopeStartCollection(scope: Ptr) -> u32;
    ptiMetricsScopeStopCollection => libpti_intel_ptiMetricsScopeStopCollection(scope: Ptr) -> u32;
    ptiMetricsScopeDisable => libpti_intel_ptiMetricsScopeDisable(scope: Ptr) -> u32;
    ptiMetricsScopeGetCollectionBuffersCount => libpti_intel_ptiMetricsScopeGetCollectionBuffersCount(scope: Ptr, count: Ptr) -> u32;
    ptiMetricsScopeGetCollectionBuffer => libpti_intel_ptiMetricsScopeGetCollectionBuffer(scope: Ptr, index: usize, buffer: Ptr, size: Ptr) -> u32;
    ptiMetricsScopeGetCollectionBufferProperties => libpti_intel_ptiMetricsScopeGetCollectionBufferProperties(scope: Ptr, buffer: Ptr, props: Ptr) -> u32;
    ptiMetricsScopeQueryMetricsBufferSize => libpti_intel_ptiMetricsScopeQueryMetricsBufferSize(scope: Ptr, buffer: Ptr, size: Ptr, records: Ptr) -> u32;
    ptiMetricsScopeCalculateMetrics => libpti_intel_ptiMetricsScopeCalculateMetrics(scope: Ptr, buffer: Ptr, metrics: Ptr, size: usize, records: Ptr) -> u32;
    ptiMetricsScopeGetMetricsMetadata => libpti_intel_ptiMetricsScopeGetMetricsMetadata(scope: Ptr, metadata: Ptr) -> u32;

    ptiPcSamplingEnable => libpti_intel_ptiPcSamplingEnable(handle: Ptr) -> u32;
    ptiPcSamplingConfigure => libpti_intel_ptiPcSamplingConfigure(handle: Ptr, devices: Ptr, count: usize, period_ns: u32) -> u32;
    ptiPcSamplingQueryCollectionBufferSize => libpti_intel_ptiPcSamplingQueryCollectionBufferSize(handle: Ptr, size: Ptr) -> u32;
    ptiPcSamplingSetCollectionBufferSize => libpti_intel_ptiPcSamplingSetCollectionBufferSize(handle: Ptr, size: usize) -> u32;
    ptiPcSamplingStartCollection => libpti_intel_ptiPcSamplingStartCollection(handle: Ptr) -> u32;
    ptiPcSamplingStopCollection => libpti_intel_ptiPcSamplingStopCollection(handle: Ptr) -> u32;
    ptiPcSamplingGetStallReasons => libpti_intel_ptiPcSamplingGetStallReasons(handle: Ptr, reasons: Ptr, count: Ptr) -> u32;
    ptiPcSamplingGetProfiledDevices => libpti_intel_ptiPcSamplingGetProfiledDevices(handle: Ptr, devices: Ptr, count: Ptr) -> u32;
    ptiPcSamplingGetObservedKernelHandles => libpti_intel_ptiPcSamplingGetObservedKernelHandles(handle: Ptr, device: Ptr, kernels: Ptr, count: Ptr) -> u32;
    ptiPcSamplingGetObservedKernelInfo => libpti_intel_ptiPcSamplingGetObservedKernelInfo(handle: Ptr, device: Ptr, kernel: u64, info: Ptr) -> u32;
    ptiPcSamplingGetSamplesPerInstruction => libpti_intel_ptiPcSamplingGetSamplesPerInstruction(handle: Ptr, device: Ptr, kernel: u64, instructions: Ptr, instruction_count: usize, samples: Ptr, sample_count: usize) -> u32;
    ptiPcSamplingGetDeviceStatus => libpti_intel_ptiPcSamplingGetDeviceStatus(handle: Ptr, device: Ptr, status: Ptr) -> u32;
    ptiPcSamplingDisable => libpti_intel_ptiPcSamplingDisable(handle: Ptr) -> u32;

    xptiTraceFinish => libpti_intel_xptiTraceFinish(stream: *const c_char) -> ();
    xptiQuerySubscriberStreamDetailLevel => libpti_intel_xptiQuerySubscriberStreamDetailLevel(stream: *const c_char, level: Ptr) -> bool;
}

unsafe extern "C" {
    fn libpti_intel_xptiTraceInit(
        major: c_uint,
        minor: c_uint,
        version: *const c_char,
        stream: *const c_char,
    );
}

/// XPTI's `xptiTraceInit`: libpti's subscriber.
///
/// # Safety
/// As the XPTI framework calls it: `stream` NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn xptiTraceInit(
    major: c_uint,
    minor: c_uint,
    version: *const c_char,
    stream: *const c_char,
) {
    // SAFETY: the same function with the same arguments, in libpti.so.
    unsafe { libpti_intel_xptiTraceInit(major, minor, version, stream) }
}
