//! The shape every export shares: the panic boundary and the pointer checks.
//!
//! One idiom, as rustls-ffi's `PanicOrDefault`: [`export`] runs an export's body behind the
//! panic boundary, and what the export returns when the body panicked follows from its return
//! type ([`OnPanic`]: `PTI_ERROR_INTERNAL` for a `pti_result`, 0, `"INVALID"`, ...); a body that
//! returns `Result<_, Error>` gives the error's `pti_result` ([`Returns`]).
//! [`runtime_entry`] is the same for an entry point a runtime (not a tool) calls: the OpenCL
//! loader's layer functions, XPTI's subscriber functions; there a panic is also raised as the
//! critical event `PTI_ERROR_TRACING_PANICKED`.
//! [`out_ptr`] checks an out-parameter; exports write it only after everything succeeded.

use core::ffi::c_char;
use core::panic::AssertUnwindSafe;
use core::ptr::NonNull;

use pti_core::boundary::Entry;
use pti_core::{Error, session};

use crate::pti::pti_result;

/// What an export returns when its body panicked, decided once per return type.
pub(crate) trait OnPanic {
    fn on_panic() -> Self;
}

impl OnPanic for pti_result {
    fn on_panic() -> Self {
        pti_result::PTI_ERROR_INTERNAL
    }
}

impl OnPanic for () {
    fn on_panic() -> Self {}
}

/// A timestamp or a count: 0, which no real one is.
impl OnPanic for u64 {
    fn on_panic() -> Self {
        0
    }
}

/// The name of an enum value: `"INVALID"`, as Intel's PTI names a value it does not know.
impl OnPanic for *const c_char {
    fn on_panic() -> Self {
        c"INVALID".as_ptr()
    }
}

/// An OpenCL status (the loader's layer entry points): `CL_OUT_OF_HOST_MEMORY`, the status that
/// says "the implementation could not do it" without blaming an argument.
impl OnPanic for i32 {
    fn on_panic() -> Self {
        pti_sys::opencl::CL_OUT_OF_HOST_MEMORY
    }
}

/// What an export's body gives, as the export returns it.
pub(crate) trait Returns {
    /// The export's C return type.
    type C: OnPanic;
    fn into_c(self) -> Self::C;
}

/// Success or an error: `PTI_SUCCESS` or the error's code.
impl Returns for Result<(), Error> {
    type C = pti_result;
    fn into_c(self) -> pti_result {
        match self {
            Ok(()) => pti_result::PTI_SUCCESS,
            Err(error) => error.code().into(),
        }
    }
}

/// A status other than `PTI_SUCCESS` that is no error (`PTI_STATUS_END_OF_BUFFER`), or an error.
impl Returns for Result<pti_result, Error> {
    type C = pti_result;
    fn into_c(self) -> pti_result {
        self.unwrap_or_else(|error| error.code().into())
    }
}

/// A value returned as it is.
impl<T: OnPanic> Returns for T {
    type C = T;
    fn into_c(self) -> T {
        self
    }
}

/// Runs an export's body at the C boundary (after libpti's load-time work, see
/// `load::ensure_loaded`). Inlined into each export: one call fewer, and no closure built on the
/// stack, for exports a tool calls often (`ptiViewGetNextRecord` keeps its quick walk outside
/// even that).
#[inline(always)]
pub(crate) fn export<R: Returns>(body: impl FnOnce() -> R) -> R::C {
    crate::load::ensure_loaded();
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(returned) => returned.into_c(),
        Err(_) => R::C::on_panic(),
    }
}

/// Runs the body of an entry point that a runtime calls (`entry`): the fork handlers are in place
/// before a backend takes its first lock, and a panic becomes the critical event
/// `PTI_ERROR_TRACING_PANICKED` (see `pti_core::boundary`) and the return type's [`OnPanic`].
pub(crate) fn runtime_entry<T: OnPanic>(entry: Entry, body: impl FnOnce() -> T) -> T {
    crate::load::ensure_loaded();
    session::install_fork_handlers();
    pti_core::boundary::catch(entry, body).unwrap_or_else(|| T::on_panic())
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
    fn panics_and_errors_become_what_the_return_type_says() {
        assert_eq!(export(|| Ok(())), pti_result::PTI_SUCCESS);
        assert_eq!(
            export(|| -> Result<(), Error> { Err(Error::BadArgument("x")) }),
            pti_result::PTI_ERROR_BAD_ARGUMENT
        );
        let status: pti_result = export(|| -> Result<(), Error> { panic!("boom") });
        assert_eq!(status, pti_result::PTI_ERROR_INTERNAL);
        assert_eq!(
            export(|| Ok(pti_result::PTI_STATUS_END_OF_BUFFER)),
            pti_result::PTI_STATUS_END_OF_BUFFER
        );
        assert_eq!(export(|| -> u64 { panic!("boom") }), 0);
        assert_eq!(export(|| 7u64), 7);
        let name = export(|| -> *const c_char { panic!("boom") });
        // SAFETY: the fallback is a static NUL-terminated string.
        assert_eq!(unsafe { core::ffi::CStr::from_ptr(name) }, c"INVALID");
        assert_eq!(
            export(|| -> i32 { panic!("boom") }),
            pti_sys::opencl::CL_OUT_OF_HOST_MEMORY
        );
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
