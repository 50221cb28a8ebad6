//! `pti_version.h`: which version is which. Two numbers live here, and they differ:
//!
//! - `PTI_VERSION_*`: the PTI API level the headers declare (Intel PTI 1.2's), which tools
//!   built for Intel's PTI test with `#if` (older kineto does). The Intel face's `ptiVersion`
//!   (`libpti_view.so.1`) answers it.
//! - `LIBPTI_VERSION_*`: libpti's own release, the crate version, answered by `libpti.so`'s
//!   `ptiVersion` and `ptiVersionString` and named by the SONAME `libpti.so.<major>`.

use core::ffi::{CStr, c_char};

/// The PTI API level the headers declare, major part (Intel PTI 1.2).
pub const PTI_VERSION_MAJOR: u32 = 1;
/// The PTI API level the headers declare, minor part.
pub const PTI_VERSION_MINOR: u32 = 2;
/// The PTI API level the headers declare, patch part.
pub const PTI_VERSION_PATCH: u32 = 0;
/// The PTI API level as a string.
pub const PTI_VERSION_STRING: &str = "1.2.0";

/// libpti's major version. Changes when the ABI of `libpti.so` breaks; its SONAME is
/// `libpti.so.<major>`.
pub const LIBPTI_VERSION_MAJOR: u32 = 0;
/// libpti's minor version. Changes when features are added compatibly.
pub const LIBPTI_VERSION_MINOR: u32 = 1;
/// libpti's patch version.
pub const LIBPTI_VERSION_PATCH: u32 = 0;
/// libpti's version as a string.
pub const LIBPTI_VERSION_STRING: &str = "0.1.0";

/// A version as numbers, as `ptiVersion` returns it.
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

const LIBPTI_VERSION: pti_version = pti_version {
    _major: LIBPTI_VERSION_MAJOR,
    _minor: LIBPTI_VERSION_MINOR,
    _patch: LIBPTI_VERSION_PATCH,
};

/// The crate version as a C string: the one source of `ptiVersionString`.
const LIBPTI_VERSION_CSTR: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("the crate version contains a NUL"),
    };

/// The version of the library answering, as a static NUL-terminated string,
/// `"<major>.<minor>.<patch>"`: libpti's own (`LIBPTI_VERSION_STRING`) from `libpti.so`, the
/// PTI API level (`PTI_VERSION_STRING`) from `libpti_view.so.1`. Never NULL; the string lives
/// as long as the library is loaded. Thread-safe.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiVersionString() -> *const c_char {
    crate::caller::pass_caller!(0, crate::caller::version_string)
}

/// libpti's `ptiVersionString`, documented above.
pub(crate) extern "C" fn own_ptiVersionString() -> *const c_char {
    LIBPTI_VERSION_CSTR.as_ptr()
}

/// The version of the library answering, as numbers: libpti's own (`LIBPTI_VERSION_*`) from
/// `libpti.so`, the PTI API level (`PTI_VERSION_*`) from `libpti_view.so.1`. Thread-safe.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiVersion() -> pti_version {
    crate::caller::pass_caller!(0, crate::caller::version)
}

/// libpti's `ptiVersion`, documented above.
pub(crate) extern "C" fn own_ptiVersion() -> pti_version {
    LIBPTI_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpti_version_constants_match_the_crate_version() {
        let expected = env!("CARGO_PKG_VERSION");
        assert_eq!(LIBPTI_VERSION_STRING, expected);
        assert_eq!(
            format!("{LIBPTI_VERSION_MAJOR}.{LIBPTI_VERSION_MINOR}.{LIBPTI_VERSION_PATCH}"),
            expected
        );
        // SAFETY: ptiVersionString returns a static NUL-terminated string.
        let from_c = unsafe { CStr::from_ptr(ptiVersionString()) };
        assert_eq!(from_c.to_str().unwrap(), expected);
        assert_eq!(pti_core::VERSION, expected);
    }

    #[test]
    fn api_level_constants_agree() {
        assert_eq!(
            format!("{PTI_VERSION_MAJOR}.{PTI_VERSION_MINOR}.{PTI_VERSION_PATCH}"),
            PTI_VERSION_STRING
        );
    }
}
