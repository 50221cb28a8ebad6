//! `pti.h`: result codes and their names. The handle types and `PTI_MAX_DEVICE_UUID_SIZE` that
//! `pti.h` also declares come from `pti-abi/src/handles.rs`; the versions from [`crate::version`].

use core::ffi::{CStr, c_char};

use pti_core::ResultCode;

use crate::boundary::export;
use crate::raw::RawResult;

/// The result of every libpti function.
///
/// The values 0..=258 are those of Intel PTI 1.2; codes 98..159 and 250..258 belong to its
/// metrics and PC-sampling APIs, whose entry points libpti answers with "not supported".
/// libpti's own codes start at 300; a code, once published, is never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_result {
    /// Success.
    PTI_SUCCESS = 0,
    /// ptiViewGetNextRecord: no record follows.
    PTI_STATUS_END_OF_BUFFER = 1,
    /// The function is not implemented.
    PTI_ERROR_NOT_IMPLEMENTED = 2,
    /// A NULL pointer, an unknown enum value, or a stale, foreign or never-issued handle.
    PTI_ERROR_BAD_ARGUMENT = 3,
    /// Buffer callbacks were not set before a view was enabled.
    PTI_ERROR_NO_CALLBACKS_SET = 4,
    /// Pop from an empty external-correlation stack.
    PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY = 5,
    /// A timestamp could not be taken or converted.
    PTI_ERROR_BAD_TIMESTAMP = 6,
    /// The API ID names no function of the given group.
    PTI_ERROR_BAD_API_ID = 7,
    /// No device view is enabled.
    PTI_ERROR_NO_GPU_VIEWS_ENABLED = 8,
    /// A driver or runtime call made by libpti failed.
    PTI_ERROR_DRIVER = 50,
    /// Interception of a backend could not be set up.
    PTI_ERROR_TRACING_NOT_INITIALIZED = 51,
    /// Level Zero local (per-kernel) profiling is not supported.
    PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED = 52,
    /// Metrics: enabling collection failed.
    PTI_ERROR_METRICS_ENABLE_FAILED = 98,
    /// Metrics: collection cannot be enabled at run time on this device or driver.
    PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED = 99,
    /// Metrics: collection is not running.
    PTI_ERROR_METRICS_COLLECTION_NOT_ENABLED = 100,
    /// Metrics: collection is not stopped.
    PTI_ERROR_METRICS_COLLECTION_NOT_DISABLED = 101,
    /// Metrics: collection is not paused.
    PTI_ERROR_METRICS_COLLECTION_NOT_PAUSED = 102,
    /// Metrics: collection is already paused.
    PTI_ERROR_METRICS_COLLECTION_ALREADY_PAUSED = 103,
    /// Metrics: collection is already running.
    PTI_ERROR_METRICS_COLLECTION_ALREADY_ENABLED = 104,
    /// Metrics: the collection configuration is invalid.
    PTI_ERROR_METRICS_BAD_COLLECTION_CONFIGURATION = 105,
    /// Metrics: nothing was collected to calculate from.
    PTI_ERROR_METRICS_NO_DATA_COLLECTED = 106,
    /// Metrics scope: a requested metric is in no metric group.
    PTI_ERROR_METRICS_SCOPE_METRIC_NOT_FOUND = 151,
    /// Metrics scope: the requested metrics span several metric groups.
    PTI_ERROR_METRICS_SCOPE_NOT_A_SINGLE_GROUP = 152,
    /// Metrics scope: out of memory.
    PTI_ERROR_METRICS_SCOPE_OUT_OF_MEMORY = 153,
    /// Metrics scope: the buffer cannot hold even one collection.
    PTI_ERROR_METRICS_SCOPE_COLLECTION_BUFFER_TOO_SMALL = 154,
    /// Metrics scope: the buffer is too small.
    PTI_ERROR_METRICS_SCOPE_INSUFFICIENT_BUFFER = 155,
    /// Metrics scope: the collection buffer is invalid.
    PTI_ERROR_METRICS_SCOPE_INVALID_COLLECTION_BUFFER = 156,
    /// Metrics scope, a warning: the buffer was filled in part.
    PTI_WARN_METRICS_SCOPE_PARTIAL_BUFFER = 157,
    /// Metrics scope, a warning: the current buffer is not finalised.
    PTI_WARN_BUFFER_NOT_FINALIZED = 158,
    /// Metrics scope: the requested devices are not all of one type.
    PTI_ERROR_METRICS_SCOPE_DEVICE_TYPE_NOT_UNIFORM = 159,
    /// An internal error, including a panic caught inside libpti.
    PTI_ERROR_INTERNAL = 200,
    /// PC sampling: another handle is enabled.
    PTI_ERROR_PC_SAMPLING_ALREADY_ENABLED = 250,
    /// PC sampling: the handle is not configured.
    PTI_ERROR_PC_SAMPLING_NOT_CONFIGURED = 251,
    /// PC sampling: the handle is already configured.
    PTI_ERROR_PC_SAMPLING_ALREADY_CONFIGURED = 252,
    /// PC sampling: collection is already running.
    PTI_ERROR_PC_SAMPLING_ALREADY_STARTED = 253,
    /// PC sampling: collection has not started.
    PTI_ERROR_PC_SAMPLING_NOT_STARTED = 254,
    /// PC sampling: collection is already stopped.
    PTI_ERROR_PC_SAMPLING_ALREADY_STOPPED = 255,
    /// PC sampling: collection is not stopped.
    PTI_ERROR_PC_SAMPLING_NOT_STOPPED = 256,
    /// PC sampling is not supported on this system (no device with EU stall sampling).
    PTI_ERROR_PC_SAMPLING_UNSUPPORTED = 257,
    /// PC sampling: configuring the device failed.
    PTI_ERROR_PC_SAMPLING_CONFIGURATION_FAIL = 258,
    /// libpti: ptiCallbackSubscribe found every subscriber slot taken (32 at most).
    PTI_ERROR_TOO_MANY_SUBSCRIBERS = 300,
    /// libpti, raised as a critical event: a subscriber callback written in Rust panicked. The
    /// panic was caught and the traced program continues.
    PTI_ERROR_CALLBACK_PANICKED = 301,
    /// libpti, raised as a critical event: view records were dropped because buffer_requested
    /// provided no buffer, or one too small; ptiViewGetDroppedRecordCount counts them per kind.
    PTI_ERROR_RECORDS_DROPPED = 302,
    /// libpti, raised as a critical event: libpti's own code panicked where the traced program or
    /// a runtime entered it. The panic was caught and the program's call went on as it would
    /// without libpti; that entry path stops tracing on that thread, and the calls it lets pass
    /// untraced are counted (ptiGetUntracedCallCount).
    PTI_ERROR_TRACING_PANICKED = 303,
    /// libpti, raised as a critical event: libpti's View API and Intel PTI's
    /// (`libpti_view.so.1`) both set buffer callbacks in one process; they share one engine, and
    /// the callbacks set last receive every record.
    PTI_ERROR_TWO_VIEW_CLIENTS = 304,
    /// libpti, raised as a critical event once per function: a function submitted device work of
    /// no record kind (a memory migration, memory advice, ...) while a device view was enabled;
    /// each such command is counted (ptiViewGetUnrecordedCommandCount, PTI_VIEW_EXT_LOSS records).
    PTI_ERROR_COMMANDS_NOT_RECORDED = 305,
    /// Keeps the enum 32 bits wide in every C compiler; never returned.
    PTI_RESULT_FORCE_UINT32 = 0x7fff_ffff,
}

impl From<ResultCode> for pti_result {
    fn from(code: ResultCode) -> Self {
        use pti_result::*;
        match code {
            ResultCode::Success => PTI_SUCCESS,
            ResultCode::StatusEndOfBuffer => PTI_STATUS_END_OF_BUFFER,
            ResultCode::ErrorNotImplemented => PTI_ERROR_NOT_IMPLEMENTED,
            ResultCode::ErrorBadArgument => PTI_ERROR_BAD_ARGUMENT,
            ResultCode::ErrorNoCallbacksSet => PTI_ERROR_NO_CALLBACKS_SET,
            ResultCode::ErrorExternalIdQueueEmpty => PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY,
            ResultCode::ErrorBadTimestamp => PTI_ERROR_BAD_TIMESTAMP,
            ResultCode::ErrorBadApiId => PTI_ERROR_BAD_API_ID,
            ResultCode::ErrorNoGpuViewsEnabled => PTI_ERROR_NO_GPU_VIEWS_ENABLED,
            ResultCode::ErrorDriver => PTI_ERROR_DRIVER,
            ResultCode::ErrorTracingNotInitialized => PTI_ERROR_TRACING_NOT_INITIALIZED,
            ResultCode::ErrorL0LocalProfilingNotSupported => {
                PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED
            }
            ResultCode::ErrorInternal => PTI_ERROR_INTERNAL,
            ResultCode::ErrorTooManySubscribers => PTI_ERROR_TOO_MANY_SUBSCRIBERS,
            ResultCode::ErrorCallbackPanicked => PTI_ERROR_CALLBACK_PANICKED,
            ResultCode::ErrorRecordsDropped => PTI_ERROR_RECORDS_DROPPED,
            ResultCode::ErrorTracingPanicked => PTI_ERROR_TRACING_PANICKED,
            ResultCode::ErrorTwoViewClients => PTI_ERROR_TWO_VIEW_CLIENTS,
            ResultCode::ErrorCommandsNotRecorded => PTI_ERROR_COMMANDS_NOT_RECORDED,
        }
    }
}

/// The names of the codes of Intel PTI's metrics, metrics-scope and PC-sampling APIs, which
/// the engine never produces (libpti answers those APIs with "not supported", see
/// `crate::intel`).
pub(crate) fn metrics_code_name(raw: u32) -> Option<&'static CStr> {
    Some(match raw {
        98 => c"PTI_ERROR_METRICS_ENABLE_FAILED",
        99 => c"PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED",
        100 => c"PTI_ERROR_METRICS_COLLECTION_NOT_ENABLED",
        101 => c"PTI_ERROR_METRICS_COLLECTION_NOT_DISABLED",
        102 => c"PTI_ERROR_METRICS_COLLECTION_NOT_PAUSED",
        103 => c"PTI_ERROR_METRICS_COLLECTION_ALREADY_PAUSED",
        104 => c"PTI_ERROR_METRICS_COLLECTION_ALREADY_ENABLED",
        105 => c"PTI_ERROR_METRICS_BAD_COLLECTION_CONFIGURATION",
        106 => c"PTI_ERROR_METRICS_NO_DATA_COLLECTED",
        151 => c"PTI_ERROR_METRICS_SCOPE_METRIC_NOT_FOUND",
        152 => c"PTI_ERROR_METRICS_SCOPE_NOT_A_SINGLE_GROUP",
        153 => c"PTI_ERROR_METRICS_SCOPE_OUT_OF_MEMORY",
        154 => c"PTI_ERROR_METRICS_SCOPE_COLLECTION_BUFFER_TOO_SMALL",
        155 => c"PTI_ERROR_METRICS_SCOPE_INSUFFICIENT_BUFFER",
        156 => c"PTI_ERROR_METRICS_SCOPE_INVALID_COLLECTION_BUFFER",
        157 => c"PTI_WARN_METRICS_SCOPE_PARTIAL_BUFFER",
        158 => c"PTI_WARN_BUFFER_NOT_FINALIZED",
        159 => c"PTI_ERROR_METRICS_SCOPE_DEVICE_TYPE_NOT_UNIFORM",
        250 => c"PTI_ERROR_PC_SAMPLING_ALREADY_ENABLED",
        251 => c"PTI_ERROR_PC_SAMPLING_NOT_CONFIGURED",
        252 => c"PTI_ERROR_PC_SAMPLING_ALREADY_CONFIGURED",
        253 => c"PTI_ERROR_PC_SAMPLING_ALREADY_STARTED",
        254 => c"PTI_ERROR_PC_SAMPLING_NOT_STARTED",
        255 => c"PTI_ERROR_PC_SAMPLING_ALREADY_STOPPED",
        256 => c"PTI_ERROR_PC_SAMPLING_NOT_STOPPED",
        257 => c"PTI_ERROR_PC_SAMPLING_UNSUPPORTED",
        258 => c"PTI_ERROR_PC_SAMPLING_CONFIGURATION_FAIL",
        _ => return None,
    })
}

/// The name of a result code, e.g. "PTI_ERROR_BAD_ARGUMENT", as a static string.
/// A value that is no pti_result yields "UNKNOWN_PTI_RESULT". Never NULL. Thread-safe.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiResultTypeToString(result_value: RawResult) -> *const c_char {
    crate::caller::pass_caller!(1, crate::caller::result_type_to_string)
}

/// libpti's `ptiResultTypeToString`, documented above.
pub(crate) extern "C" fn own_ptiResultTypeToString(result_value: RawResult) -> *const c_char {
    export(|| {
        ResultCode::from_raw(result_value.0)
            .map(ResultCode::name)
            .or_else(|| metrics_code_name(result_value.0))
            .unwrap_or(c"UNKNOWN_PTI_RESULT")
            .as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_code_has_the_same_number_here() {
        for code in ResultCode::ALL {
            assert_eq!(pti_result::from(code) as u32, code as u32, "{code:?}");
        }
    }

    #[test]
    fn result_names() {
        let name = |v| {
            // SAFETY: ptiResultTypeToString returns static NUL-terminated strings.
            unsafe { CStr::from_ptr(ptiResultTypeToString(RawResult(v))) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(0), "PTI_SUCCESS");
        assert_eq!(name(301), "PTI_ERROR_CALLBACK_PANICKED");
        assert_eq!(name(9), "UNKNOWN_PTI_RESULT");
        assert_eq!(name(u32::MAX), "UNKNOWN_PTI_RESULT");
    }
}
