//! Errors: a `pti_result` other than `PTI_SUCCESS`, one variant per code, so that a tool can
//! match on what went wrong; libpti's name of the code (`PTI_ERROR_BAD_ARGUMENT`) is
//! [`Error::name`].
//!
//! The enum is `#[non_exhaustive]`: a later libpti may add codes (never reusing one), and a code
//! this crate does not know arrives as [`Error::Other`]. `tests/error_codes.rs` checks every
//! variant's code and name against the `libpti.so` the crate links.

use core::ffi::CStr;
use core::fmt;

use crate::ffi;

/// A libpti function answered with a `pti_result` other than `PTI_SUCCESS`, or a critical event
/// carries this code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `PTI_ERROR_NOT_IMPLEMENTED` (2): the function is not implemented.
    NotImplemented,
    /// `PTI_ERROR_BAD_ARGUMENT` (3): a NULL pointer, an unknown enum value, or a stale or
    /// foreign handle.
    BadArgument,
    /// `PTI_ERROR_NO_CALLBACKS_SET` (4): a view was enabled before the buffer callbacks were set.
    NoCallbacksSet,
    /// `PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY` (5): nothing of that kind is pushed on this thread.
    ExternalIdQueueEmpty,
    /// `PTI_ERROR_BAD_TIMESTAMP` (6): a timestamp could not be taken or converted.
    BadTimestamp,
    /// `PTI_ERROR_BAD_API_ID` (7): the API ID names no function of the group.
    BadApiId,
    /// `PTI_ERROR_NO_GPU_VIEWS_ENABLED` (8): no device view is enabled.
    NoGpuViewsEnabled,
    /// `PTI_ERROR_DRIVER` (50): a driver or runtime call libpti made failed.
    Driver,
    /// `PTI_ERROR_TRACING_NOT_INITIALIZED` (51): a backend's interception could not be set up
    /// (the setting stands; a critical event says why).
    TracingNotInitialized,
    /// `PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED` (52).
    L0LocalProfilingNotSupported,
    /// `PTI_ERROR_INTERNAL` (200): a bug in libpti, a panic caught at the C boundary included.
    Internal,
    /// `PTI_ERROR_TOO_MANY_SUBSCRIBERS` (300): every subscriber slot is taken.
    TooManySubscribers,
    /// `PTI_ERROR_CALLBACK_PANICKED` (301, a critical event): a callback panicked; the panic was
    /// caught.
    CallbackPanicked,
    /// `PTI_ERROR_RECORDS_DROPPED` (302, a critical event): records were dropped for want of a
    /// buffer.
    RecordsDropped,
    /// `PTI_ERROR_TRACING_PANICKED` (303, a critical event): libpti's own code panicked where
    /// the program entered it; the program's call went on untraced.
    TracingPanicked,
    /// `PTI_ERROR_TWO_VIEW_CLIENTS` (304, a critical event): two View API clients set buffer
    /// callbacks in one process.
    TwoViewClients,
    /// `PTI_ERROR_COMMANDS_NOT_RECORDED` (305, a critical event): device work of no record kind
    /// was submitted, and counted.
    CommandsNotRecorded,
    /// A code this version of the crate does not know.
    Other(u32),
}

/// Every known variant with its code, in numeric order.
const CODES: [(Error, u32); 17] = [
    (Error::NotImplemented, 2),
    (Error::BadArgument, 3),
    (Error::NoCallbacksSet, 4),
    (Error::ExternalIdQueueEmpty, 5),
    (Error::BadTimestamp, 6),
    (Error::BadApiId, 7),
    (Error::NoGpuViewsEnabled, 8),
    (Error::Driver, 50),
    (Error::TracingNotInitialized, 51),
    (Error::L0LocalProfilingNotSupported, 52),
    (Error::Internal, 200),
    (Error::TooManySubscribers, 300),
    (Error::CallbackPanicked, 301),
    (Error::RecordsDropped, 302),
    (Error::TracingPanicked, 303),
    (Error::TwoViewClients, 304),
    (Error::CommandsNotRecorded, 305),
];

impl Error {
    /// Every variant but [`Error::Other`], in the order of their codes.
    pub fn known() -> impl Iterator<Item = Error> {
        CODES.into_iter().map(|(e, _)| e)
    }

    /// The error of result `code` ([`Error::Other`] for a code this crate does not know, and for
    /// `PTI_SUCCESS` and `PTI_STATUS_END_OF_BUFFER`, which are no errors).
    pub fn from_code(code: u32) -> Self {
        CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map_or(Error::Other(code), |(e, _)| *e)
    }

    /// The `pti_result` value.
    pub fn code(&self) -> u32 {
        match self {
            Error::Other(code) => *code,
            known => CODES
                .iter()
                .find(|(e, _)| e == known)
                .map_or(0, |(_, c)| *c),
        }
    }

    /// Its name, as `ptiResultTypeToString` gives it (`PTI_ERROR_BAD_ARGUMENT`).
    pub fn name(&self) -> String {
        // SAFETY: ptiResultTypeToString returns a static NUL-terminated string for any value.
        let name = unsafe { CStr::from_ptr(ffi::libpti_ptiResultTypeToString(self.code())) };
        name.to_string_lossy().into_owned()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "libpti: {} ({})", self.name(), self.code())
    }
}

impl std::error::Error for Error {}

/// `Ok` for `PTI_SUCCESS` (0), else the [`Error`].
pub(crate) fn check(code: u32) -> Result<(), Error> {
    match code {
        0 => Ok(()),
        _ => Err(Error::from_code(code)),
    }
}
