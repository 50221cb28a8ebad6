//! `pti.h`: result codes and the library version.

use core::ffi::{CStr, c_char};

use pti_core::ResultCode;

use crate::boundary::guard_or;
use crate::raw::RawResult;

/// libpti's major version. Changes when the ABI breaks; the SONAME is `libpti.so.<major>`.
pub const PTI_VERSION_MAJOR: u32 = 0;
/// libpti's minor version. Changes when features are added compatibly.
pub const PTI_VERSION_MINOR: u32 = 1;
/// libpti's patch version.
pub const PTI_VERSION_PATCH: u32 = 0;

/// The crate version as a C string: the one source of `ptiVersionString`.
const VERSION_STRING: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("the crate version contains a NUL"),
    };

/// The result of every libpti function.
///
/// The values 0..=200 are those of the published PTI API; codes 100..159 and 250..257 are reserved
/// there for metrics and PC sampling, which libpti does not implement. libpti's own codes start at
/// 300; a code, once published, is never reused.
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
    /// An internal error, including a panic caught inside libpti.
    PTI_ERROR_INTERNAL = 200,
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
        }
    }
}

/// libpti's version, as returned by ptiVersion.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct pti_version {
    /// Major version: changes when the ABI breaks.
    pub _major: u32,
    /// Minor version.
    pub _minor: u32,
    /// Patch version.
    pub _patch: u32,
}

const VERSION: pti_version = pti_version {
    _major: PTI_VERSION_MAJOR,
    _minor: PTI_VERSION_MINOR,
    _patch: PTI_VERSION_PATCH,
};

/// The version as a static NUL-terminated string, `"<major>.<minor>.<patch>"`.
/// Never NULL; the string lives as long as the library is loaded. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn ptiVersionString() -> *const c_char {
    VERSION_STRING.as_ptr()
}

/// The version as numbers. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn ptiVersion() -> pti_version {
    VERSION
}

/// The name of a result code, e.g. "PTI_ERROR_BAD_ARGUMENT", as a static string.
/// A value that is no pti_result yields "UNKNOWN_PTI_RESULT". Never NULL. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn ptiResultTypeToString(result_value: RawResult) -> *const c_char {
    guard_or(c"UNKNOWN_PTI_RESULT".as_ptr(), || {
        ResultCode::from_raw(result_value.0)
            .map_or(c"UNKNOWN_PTI_RESULT", ResultCode::name)
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
    fn version_constants_match_the_crate_version() {
        let expected = env!("CARGO_PKG_VERSION");
        assert_eq!(
            format!("{PTI_VERSION_MAJOR}.{PTI_VERSION_MINOR}.{PTI_VERSION_PATCH}"),
            expected
        );
        // SAFETY: ptiVersionString returns a static NUL-terminated string.
        let from_c = unsafe { CStr::from_ptr(ptiVersionString()) };
        assert_eq!(from_c.to_str().unwrap(), expected);
        assert_eq!(pti_core::VERSION, expected);
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
