//! The XPTI subscriber entry points of Intel's `libpti_view.so.1`, on the Intel face.
//!
//! Intel's library is itself an XPTI subscriber. `libpti_view.so.1` exports the same three
//! functions, so `XPTI_SUBSCRIBERS` may name it as Intel's documentation says; they reach
//! `libpti.so`'s subscriber, the process's only one: when both libraries are named, the
//! framework initialises a stream twice with the same callback, and refuses the second
//! registration as a duplicate (`pti_core::backend::sycl::stream_initialised`).

use core::ffi::{c_char, c_uint, c_void};

/// `xptiTraceInit` of `libpti_view.so.1`: libpti's.
///
/// # Safety
/// As `crate::xpti::xptiTraceInit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_xptiTraceInit(
    major_version: c_uint,
    minor_version: c_uint,
    version_str: *const c_char,
    stream_name: *const c_char,
) {
    // SAFETY: the same contract.
    unsafe { crate::xpti::xptiTraceInit(major_version, minor_version, version_str, stream_name) }
}

/// `xptiTraceFinish` of `libpti_view.so.1`: libpti's.
///
/// # Safety
/// As `crate::xpti::xptiTraceFinish`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_xptiTraceFinish(stream_name: *const c_char) {
    // SAFETY: the same contract.
    unsafe { crate::xpti::xptiTraceFinish(stream_name) }
}

/// `xptiQuerySubscriberStreamDetailLevel` (newer XPTI frameworks ask each subscriber the detail
/// it wants of a stream): libpti states no preference (returns false, `level` untouched), so
/// the framework keeps its default.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_xptiQuerySubscriberStreamDetailLevel(
    stream_name: *const c_char,
    level: *mut c_void,
) -> bool {
    let _ = (stream_name, level);
    false
}
