//! Errors: a `pti_result` other than `PTI_SUCCESS`, with libpti's name for it.

use core::ffi::CStr;

use crate::ffi;

/// A libpti function answered with `code` (a `pti_result`), named `name`
/// (`PTI_ERROR_BAD_ARGUMENT`, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("libpti: {name} ({code})")]
pub struct Error {
    /// The `pti_result` value.
    pub code: u32,
    /// Its name, as `ptiResultTypeToString` gives it.
    pub name: String,
}

impl Error {
    /// The error of result `code`.
    pub fn from_code(code: u32) -> Self {
        // SAFETY: ptiResultTypeToString returns a static NUL-terminated string for any value.
        let name = unsafe { CStr::from_ptr(ffi::libpti_ptiResultTypeToString(code)) };
        Error {
            code,
            name: name.to_string_lossy().into_owned(),
        }
    }
}

/// `Ok` for `PTI_SUCCESS` (0), else the [`Error`].
pub(crate) fn check(code: u32) -> Result<(), Error> {
    match code {
        0 => Ok(()),
        _ => Err(Error::from_code(code)),
    }
}
