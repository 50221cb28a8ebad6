//! Intel PTI 1.2's metrics, metrics-scope and PC-sampling entry points, which libpti does not
//! implement: no device libpti reaches offers it a metrics or sampling source it reads.
//!
//! Each entry point checks its arguments like Intel's, then answers what Intel's library
//! answers on a system without a supported device; none ever reports a success that collects
//! nothing:
//! - metrics: `ptiMetricsEnable` answers PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED;
//!   `ptiMetricsGetDevices` lists no device (count 0, PTI_SUCCESS: a true answer to a query);
//!   every function taking a device or group handle gets PTI_ERROR_BAD_ARGUMENT, as no handle
//!   can be one libpti listed; `ptiMetricsDisable` undoes nothing and succeeds;
//! - metrics scope: `ptiMetricsScopeEnable` answers PTI_ERROR_NOT_IMPLEMENTED and writes no
//!   handle; functions taking a scope handle get PTI_ERROR_BAD_ARGUMENT;
//! - PC sampling: `ptiPcSamplingEnable` answers PTI_ERROR_PC_SAMPLING_UNSUPPORTED; functions
//!   taking a sampling handle get PTI_ERROR_BAD_ARGUMENT.
//!
//! The first use of each API in a process raises a critical event saying so (domain
//! PTI_DOMAIN_PTI_CRITICAL_EVENT, or Intel's PTI_CB_DOMAIN_INTERNAL_EVENT). Struct pointers are
//! taken untyped: libpti never reads through them.

use core::ffi::{c_char, c_void};
use core::sync::atomic::{AtomicBool, Ordering};

use pti_core::{ResultCode, critical};

use crate::pti::pti_result;

/// An API family libpti answers as unsupported.
struct Family {
    name: &'static str,
    reported: AtomicBool,
}

static METRICS: Family = Family::new("metrics (pti_metrics.h)");
static METRICS_SCOPE: Family = Family::new("metrics scope (pti_metrics_scope.h)");
static PC_SAMPLING: Family = Family::new("PC sampling (pti_pc_sampling.h)");

impl Family {
    const fn new(name: &'static str) -> Self {
        Family {
            name,
            reported: AtomicBool::new(false),
        }
    }

    /// Raises the family's critical event the first time it is used.
    fn used(&self) {
        if !self.reported.swap(true, Ordering::Relaxed) {
            critical::raise(
                ResultCode::ErrorNotImplemented,
                format_args!(
                    "Intel PTI's {} API is not supported by libpti: no device it reaches offers \
                     a source it reads; nothing is collected (docs/compatibility.md)",
                    self.name
                ),
            );
        }
    }

    /// The answer to a call that must name a handle libpti issued: none exist.
    fn no_handle(&self) -> pti_result {
        self.used();
        pti_result::PTI_ERROR_BAD_ARGUMENT
    }
}

/// Defines entry points that take a handle of `family` first and answer PTI_ERROR_BAD_ARGUMENT.
macro_rules! handle_taking {
    ($family:ident: $($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[doc = concat!("Intel's `", stringify!($name), "`: no handle can be valid; ")]
        #[doc = "PTI_ERROR_BAD_ARGUMENT (see the module docs)."]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($arg: $ty),*) -> pti_result {
            let _ = ($($arg,)*);
            crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || $family.no_handle())
        }
    )*};
}

/// Intel's `ptiMetricsGetDevices`: no device offers metrics to libpti. With `devices` NULL it
/// stores the count (0); with a buffer it stores 0 devices. PTI_ERROR_BAD_ARGUMENT if
/// `device_count` is NULL.
///
/// # Safety
/// `device_count` must be NULL or point to a writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_ptiMetricsGetDevices(
    devices: *mut c_void,
    device_count: *mut u32,
) -> pti_result {
    let _ = devices;
    crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || {
        METRICS.used();
        if device_count.is_null() || !device_count.is_aligned() {
            return pti_result::PTI_ERROR_BAD_ARGUMENT;
        }
        // SAFETY: checked non-NULL and aligned; the caller passes a writable uint32_t.
        unsafe { device_count.write(0) };
        pti_result::PTI_SUCCESS
    })
}

handle_taking! { METRICS:
    libpti_intel_ptiMetricsGetMetricGroups(device: *mut c_void, groups: *mut c_void, group_count: *mut u32);
    libpti_intel_ptiMetricsGetMetricsProperties(group: *mut c_void, metrics: *mut c_void);
    libpti_intel_ptiMetricsConfigureCollection(device: *mut c_void, params: *mut c_void, group_count: u32);
    libpti_intel_ptiMetricsStartCollection(device: *mut c_void);
    libpti_intel_ptiMetricsStartCollectionPaused(device: *mut c_void);
    libpti_intel_ptiMetricsPauseCollection(device: *mut c_void);
    libpti_intel_ptiMetricsResumeCollection(device: *mut c_void);
    libpti_intel_ptiMetricsStopCollection(device: *mut c_void);
    libpti_intel_ptiMetricsGetCalculatedData(device: *mut c_void, group: *mut c_void, values: *mut c_void, value_count: *mut u32);
}

/// Intel's `ptiMetricsEnable` (1.2, on-demand enabling; the argument, a device or NULL for all,
/// is not read): PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsEnable(device: *mut c_void) -> pti_result {
    let _ = device;
    crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || {
        METRICS.used();
        pti_result::PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED
    })
}

/// Intel's `ptiMetricsDisable` (1.2): nothing was enabled, so nothing to undo: PTI_SUCCESS, as
/// Intel's library answers a disable without an enable.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsDisable(device: *mut c_void) -> pti_result {
    let _ = device;
    crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || {
        METRICS.used();
        pti_result::PTI_SUCCESS
    })
}

/// Intel's `ptiMetricsScopeEnable`: PTI_ERROR_BAD_ARGUMENT for a NULL out-pointer, else
/// PTI_ERROR_NOT_IMPLEMENTED; no handle is written.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiMetricsScopeEnable(handle: *mut *mut c_void) -> pti_result {
    crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || {
        METRICS_SCOPE.used();
        if handle.is_null() {
            pti_result::PTI_ERROR_BAD_ARGUMENT
        } else {
            pti_result::PTI_ERROR_NOT_IMPLEMENTED
        }
    })
}

handle_taking! { METRICS_SCOPE:
    libpti_intel_ptiMetricsScopeConfigure(scope: *mut c_void, mode: u32, devices: *mut c_void, device_count: u32, metric_names: *const *const c_char, metric_count: usize);
    libpti_intel_ptiMetricsScopeQueryCollectionBufferSize(scope: *mut c_void, scopes: usize, size: *mut usize);
    libpti_intel_ptiMetricsScopeSetCollectionBufferSize(scope: *mut c_void, size: usize);
    libpti_intel_ptiMetricsScopeStartCollection(scope: *mut c_void);
    libpti_intel_ptiMetricsScopeStopCollection(scope: *mut c_void);
    libpti_intel_ptiMetricsScopeDisable(scope: *mut c_void);
    libpti_intel_ptiMetricsScopeGetCollectionBuffersCount(scope: *mut c_void, count: *mut usize);
    libpti_intel_ptiMetricsScopeGetCollectionBuffer(scope: *mut c_void, index: usize, buffer: *mut *mut c_void, size: *mut usize);
    libpti_intel_ptiMetricsScopeGetCollectionBufferProperties(scope: *mut c_void, buffer: *mut c_void, props: *mut c_void);
    libpti_intel_ptiMetricsScopeQueryMetricsBufferSize(scope: *mut c_void, buffer: *mut c_void, size: *mut usize, records: *mut usize);
    libpti_intel_ptiMetricsScopeCalculateMetrics(scope: *mut c_void, buffer: *mut c_void, metrics: *mut c_void, size: usize, records: *mut usize);
    libpti_intel_ptiMetricsScopeGetMetricsMetadata(scope: *mut c_void, metadata: *mut c_void);
}

/// Intel's `ptiPcSamplingEnable`: PTI_ERROR_BAD_ARGUMENT for a NULL out-pointer, else
/// PTI_ERROR_PC_SAMPLING_UNSUPPORTED; no handle is written.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingEnable(handle: *mut *mut c_void) -> pti_result {
    crate::boundary::guard_or(pti_result::PTI_ERROR_INTERNAL, || {
        PC_SAMPLING.used();
        if handle.is_null() {
            pti_result::PTI_ERROR_BAD_ARGUMENT
        } else {
            pti_result::PTI_ERROR_PC_SAMPLING_UNSUPPORTED
        }
    })
}

handle_taking! { PC_SAMPLING:
    libpti_intel_ptiPcSamplingConfigure(handle: *mut c_void, devices: *const *mut c_void, device_count: usize, period_ns: u32);
    libpti_intel_ptiPcSamplingQueryCollectionBufferSize(handle: *mut c_void, size: *mut usize);
    libpti_intel_ptiPcSamplingSetCollectionBufferSize(handle: *mut c_void, size: usize);
    libpti_intel_ptiPcSamplingStartCollection(handle: *mut c_void);
    libpti_intel_ptiPcSamplingStopCollection(handle: *mut c_void);
    libpti_intel_ptiPcSamplingGetStallReasons(handle: *mut c_void, reasons: *mut c_void, count: *mut usize);
    libpti_intel_ptiPcSamplingGetProfiledDevices(handle: *mut c_void, devices: *mut *mut c_void, count: *mut usize);
    libpti_intel_ptiPcSamplingGetObservedKernelHandles(handle: *mut c_void, device: *mut c_void, kernels: *mut u64, count: *mut usize);
    libpti_intel_ptiPcSamplingGetObservedKernelInfo(handle: *mut c_void, device: *mut c_void, kernel: u64, info: *mut c_void);
    libpti_intel_ptiPcSamplingGetSamplesPerInstruction(handle: *mut c_void, device: *mut c_void, kernel: u64, instructions: *mut c_void, instruction_count: usize, samples: *mut u64, sample_count: usize);
    libpti_intel_ptiPcSamplingGetDeviceStatus(handle: *mut c_void, device: *mut c_void, status: *mut c_void);
    libpti_intel_ptiPcSamplingDisable(handle: *mut c_void);
}
