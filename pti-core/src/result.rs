//! Result codes and the error type of the core.
//!
//! [`ResultCode`] lists every `pti_result` value libpti can return or raise as a critical event:
//! the codes of the published PTI view API and our own, which start at 300 and are never reused.
//! [`Error`] is what fallible core functions return; each variant maps to one code.

use core::ffi::CStr;

/// Every `pti_result` code, with the values of `pti.h`.
///
/// Codes 100..=159 and 250..=257 belong to PTI's metrics and PC-sampling APIs, which libpti does
/// not implement; they are left out, and their numbers are never given another meaning.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultCode {
    /// The call succeeded.
    Success = 0,
    /// `ptiViewGetNextRecord` reached the end of the buffer.
    StatusEndOfBuffer = 1,
    /// The function is not implemented.
    ErrorNotImplemented = 2,
    /// A NULL pointer, unknown enum value, or stale or foreign handle was passed.
    ErrorBadArgument = 3,
    /// Buffer callbacks were not set before a view was enabled.
    ErrorNoCallbacksSet = 4,
    /// Pop from an empty external-correlation stack.
    ErrorExternalIdQueueEmpty = 5,
    /// A timestamp could not be taken or converted.
    ErrorBadTimestamp = 6,
    /// The API ID names no function of the given group.
    ErrorBadApiId = 7,
    /// No device view is enabled.
    ErrorNoGpuViewsEnabled = 8,
    /// A driver or runtime call made by libpti failed.
    ErrorDriver = 50,
    /// Interception of a backend could not be set up.
    ErrorTracingNotInitialized = 51,
    /// Level Zero local (per-kernel) profiling is not supported.
    ErrorL0LocalProfilingNotSupported = 52,
    /// An internal error, including a panic caught at the C boundary.
    ErrorInternal = 200,
    /// libpti extension: every subscriber slot is taken (see `MAX_SUBSCRIBERS`).
    ErrorTooManySubscribers = 300,
    /// libpti extension, raised as a critical event: a Rust subscriber callback panicked; the
    /// panic was caught and the traced program continues.
    ErrorCallbackPanicked = 301,
    /// libpti extension, raised as a critical event: view records were dropped because no buffer
    /// could be had; `ptiViewGetDroppedRecordCount` counts them per kind.
    ErrorRecordsDropped = 302,
    /// libpti extension, raised as a critical event: libpti's own code panicked where the traced
    /// program or a runtime entered it (a traced call, a tracing-layer callback, an XPTI
    /// notification, a loader-layer entry). The panic was caught and the program's call went on
    /// as it would without libpti; that entry path stops tracing on that thread, and what it
    /// skips is counted (`ptiGetUntracedCallCount`).
    ErrorTracingPanicked = 303,
    /// libpti extension, raised as a critical event: libpti's View API and Intel PTI's
    /// (`libpti_view.so.1`) both set buffer callbacks in one process. They share one engine: the
    /// callbacks set last receive every record (docs/compatibility.md).
    ErrorTwoViewClients = 304,
    /// libpti extension, raised as a critical event once per function: a function submitted
    /// device work of no record kind (a memory migration, memory advice, ...) while a device
    /// view was enabled; each such command is counted (`ptiViewGetUnrecordedCommandCount`, and
    /// PTI_VIEW_EXT_LOSS records).
    ErrorCommandsNotRecorded = 305,
}

impl ResultCode {
    /// Every code, in numeric order.
    pub const ALL: [ResultCode; 19] = [
        ResultCode::Success,
        ResultCode::StatusEndOfBuffer,
        ResultCode::ErrorNotImplemented,
        ResultCode::ErrorBadArgument,
        ResultCode::ErrorNoCallbacksSet,
        ResultCode::ErrorExternalIdQueueEmpty,
        ResultCode::ErrorBadTimestamp,
        ResultCode::ErrorBadApiId,
        ResultCode::ErrorNoGpuViewsEnabled,
        ResultCode::ErrorDriver,
        ResultCode::ErrorTracingNotInitialized,
        ResultCode::ErrorL0LocalProfilingNotSupported,
        ResultCode::ErrorInternal,
        ResultCode::ErrorTooManySubscribers,
        ResultCode::ErrorCallbackPanicked,
        ResultCode::ErrorRecordsDropped,
        ResultCode::ErrorTracingPanicked,
        ResultCode::ErrorTwoViewClients,
        ResultCode::ErrorCommandsNotRecorded,
    ];

    /// The code with C value `raw`, or `None` if libpti defines no such code.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| *c as u32 == raw)
    }

    /// Position in [`ResultCode::ALL`], for per-code counters.
    pub fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|c| *c == self)
            .expect("every code is listed in ALL")
    }

    /// The C enumerator's name, e.g. `"PTI_ERROR_BAD_ARGUMENT"`.
    pub const fn name(self) -> &'static CStr {
        match self {
            ResultCode::Success => c"PTI_SUCCESS",
            ResultCode::StatusEndOfBuffer => c"PTI_STATUS_END_OF_BUFFER",
            ResultCode::ErrorNotImplemented => c"PTI_ERROR_NOT_IMPLEMENTED",
            ResultCode::ErrorBadArgument => c"PTI_ERROR_BAD_ARGUMENT",
            ResultCode::ErrorNoCallbacksSet => c"PTI_ERROR_NO_CALLBACKS_SET",
            ResultCode::ErrorExternalIdQueueEmpty => c"PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY",
            ResultCode::ErrorBadTimestamp => c"PTI_ERROR_BAD_TIMESTAMP",
            ResultCode::ErrorBadApiId => c"PTI_ERROR_BAD_API_ID",
            ResultCode::ErrorNoGpuViewsEnabled => c"PTI_ERROR_NO_GPU_VIEWS_ENABLED",
            ResultCode::ErrorDriver => c"PTI_ERROR_DRIVER",
            ResultCode::ErrorTracingNotInitialized => c"PTI_ERROR_TRACING_NOT_INITIALIZED",
            ResultCode::ErrorL0LocalProfilingNotSupported => {
                c"PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED"
            }
            ResultCode::ErrorInternal => c"PTI_ERROR_INTERNAL",
            ResultCode::ErrorTooManySubscribers => c"PTI_ERROR_TOO_MANY_SUBSCRIBERS",
            ResultCode::ErrorCallbackPanicked => c"PTI_ERROR_CALLBACK_PANICKED",
            ResultCode::ErrorRecordsDropped => c"PTI_ERROR_RECORDS_DROPPED",
            ResultCode::ErrorTracingPanicked => c"PTI_ERROR_TRACING_PANICKED",
            ResultCode::ErrorTwoViewClients => c"PTI_ERROR_TWO_VIEW_CLIENTS",
            ResultCode::ErrorCommandsNotRecorded => c"PTI_ERROR_COMMANDS_NOT_RECORDED",
        }
    }
}

/// Why a core function refused or failed.
#[derive(thiserror::Error, Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An argument is invalid: what is wrong with it is in the message.
    #[error("bad argument: {0}")]
    BadArgument(&'static str),
    /// The API ID names no function of the group.
    #[error("API id {id} names no function of group {group}")]
    BadApiId {
        /// The group's C value.
        group: u32,
        /// The rejected ID.
        id: u32,
    },
    /// Every subscriber slot is taken.
    #[error("at most {max} subscribers can exist at once")]
    TooManySubscribers {
        /// How many subscribers can exist at once.
        max: usize,
    },
    /// A view was enabled before the buffer callbacks were set.
    #[error("set the buffer callbacks before enabling a view")]
    NoCallbacksSet,
    /// Pop from an empty external-correlation stack.
    #[error("no external correlation ID of this kind is pushed on this thread")]
    ExternalIdQueueEmpty,
    /// Level Zero local profiling is not available.
    #[error("Level Zero local profiling is not supported")]
    L0LocalProfilingNotSupported,
    /// A backend's interception could not be set up (the setting is applied, but nothing of that
    /// backend will be traced); the reason is also raised as a critical event.
    #[error("tracing could not be set up: {0}")]
    TracingNotInitialized(&'static str),
    /// An internal error (a bug in libpti).
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl Error {
    /// The `pti_result` code a C caller sees for this error.
    pub const fn code(&self) -> ResultCode {
        match self {
            Error::BadArgument(_) => ResultCode::ErrorBadArgument,
            Error::BadApiId { .. } => ResultCode::ErrorBadApiId,
            Error::TooManySubscribers { .. } => ResultCode::ErrorTooManySubscribers,
            Error::NoCallbacksSet => ResultCode::ErrorNoCallbacksSet,
            Error::ExternalIdQueueEmpty => ResultCode::ErrorExternalIdQueueEmpty,
            Error::TracingNotInitialized(_) => ResultCode::ErrorTracingNotInitialized,
            Error::L0LocalProfilingNotSupported => ResultCode::ErrorL0LocalProfilingNotSupported,
            Error::Internal(_) => ResultCode::ErrorInternal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_unique_and_named_after_their_prefix() {
        for pair in ResultCode::ALL.windows(2) {
            assert!((pair[0] as u32) < (pair[1] as u32));
        }
        for code in ResultCode::ALL {
            assert_eq!(ResultCode::from_raw(code as u32), Some(code));
            assert_eq!(ResultCode::ALL[code.index()], code);
            let name = code.name().to_str().unwrap();
            assert!(
                name.starts_with("PTI_SUCCESS")
                    || name.starts_with("PTI_ERROR_")
                    || name.starts_with("PTI_STATUS_")
            );
        }
        assert_eq!(ResultCode::from_raw(9), None);
        assert_eq!(ResultCode::from_raw(100), None);
    }

    #[test]
    fn our_codes_start_at_300() {
        let ours = [
            ResultCode::ErrorTooManySubscribers,
            ResultCode::ErrorCallbackPanicked,
            ResultCode::ErrorRecordsDropped,
            ResultCode::ErrorTracingPanicked,
        ];
        assert!(ours.iter().all(|c| *c as u32 >= 300));
    }
}
