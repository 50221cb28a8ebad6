//! The shape every export shares: the panic boundary and the pointer checks.
//!
//! - [`guard`] runs an export's body: a panic becomes `PTI_ERROR_INTERNAL`, an `Err` its code.
//! - [`guard_or`] does the same for exports that return a value instead of a `pti_result`.
//! - [`guard_runtime_entry`] runs an entry point that a runtime (not a tool) calls: the OpenCL
//!   loader's layer functions, XPTI's subscriber functions.
//! - [`out_ptr`] checks an out-parameter; exports write it only after everything succeeded.

use core::panic::AssertUnwindSafe;
use core::ptr::NonNull;

use pti_core::boundary::Entry;
use pti_core::{Error, session};

use crate::pti::pti_result;

/// Runs an export's body at the C boundary (after libpti's load-time work, see
/// `load::ensure_loaded`).
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Error>) -> pti_result {
    crate::load::ensure_loaded();
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => pti_result::PTI_SUCCESS,
        Ok(Err(error)) => error.code().into(),
        Err(_) => pti_result::PTI_ERROR_INTERNAL,
    }
}

/// Runs an export's body that may succeed with a status other than PTI_SUCCESS.
pub(crate) fn guard_status(body: impl FnOnce() -> Result<pti_result, Error>) -> pti_result {
    crate::load::ensure_loaded();
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(error)) => error.code().into(),
        Err(_) => pti_result::PTI_ERROR_INTERNAL,
    }
}

/// Runs the body of an export that returns a value; a panic yields `fallback`.
pub(crate) fn guard_or<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    crate::load::ensure_loaded();
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Runs the body of an entry point that a runtime calls (`entry`): the fork handlers are in place
/// before a backend takes its first lock, and a panic becomes the critical event
/// `PTI_ERROR_TRACING_PANICKED` (see `pti_core::boundary`) and `fallback`.
pub(crate) fn guard_runtime_entry<T>(entry: Entry, fallback: T, body: impl FnOnce() -> T) -> T {
    crate::load::ensure_loaded();
    session::install_fork_handlers();
    pti_core::boundary::catch(entry, body).unwrap_or(fallback)
}

/// Checks an out-parameter: not NULL and aligned for `T`.
pub(crate) fn out_ptr<T>(p: *mut T, what: &'static str) -> Result<NonNull<T>, Error> {
    NonNull::new(p)
        .filter(|p| p.as_ptr().is_aligned())
        .ok_or(Error::BadArgument(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_and_errors_become_codes() {
        assert_eq!(guard(|| Ok(())), pti_result::PTI_SUCCESS);
        assert_eq!(
            guard(|| Err(Error::BadArgument("x"))),
            pti_result::PTI_ERROR_BAD_ARGUMENT
        );
        assert_eq!(guard(|| panic!("boom")), pti_result::PTI_ERROR_INTERNAL);
        assert_eq!(guard_or(7, || panic!("boom")), 7);
    }

    #[test]
    fn out_pointers_must_be_non_null_and_aligned() {
        let mut word = 0u64;
        assert!(out_ptr(&mut word as *mut u64, "w").is_ok());
        assert!(out_ptr(core::ptr::null_mut::<u64>(), "w").is_err());
        let misaligned = (&mut word as *mut u64 as *mut u8).wrapping_add(1) as *mut u64;
        assert!(out_ptr(misaligned, "w").is_err());
    }
}
