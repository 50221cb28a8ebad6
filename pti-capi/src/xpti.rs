//! The XPTI subscriber exports (`xptiTraceInit`, `xptiTraceFinish`), which the XPTI framework of
//! the SYCL runtime calls in every subscriber `XPTI_SUBSCRIBERS` names, declared by XPTI's
//! `xpti_data_types.h`, not by a libpti header. The work is `pti_core::backend::sycl`'s.

use core::ffi::{CStr, c_char, c_uint};

use pti_core::backend::sycl;

use pti_core::boundary::Entry;

use crate::boundary::runtime_entry;

/// `xptiTraceInit`: the framework opened `stream_name` (of the given version); libpti registers
/// for its events if it is one it traces. A NULL stream name is ignored.
///
/// # Safety
/// `stream_name` is NULL or a NUL-terminated string; `version_str` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn xptiTraceInit(
    major_version: c_uint,
    minor_version: c_uint,
    version_str: *const c_char,
    stream_name: *const c_char,
) {
    let _ = (major_version, minor_version, version_str);
    runtime_entry(Entry::Xpti, || {
        if !stream_name.is_null() {
            // SAFETY: the caller's contract.
            sycl::stream_initialised(unsafe { CStr::from_ptr(stream_name) });
        }
    })
}

/// `xptiTraceFinish`: the framework closes `stream_name` (the runtime shuts down). A NULL stream
/// name is ignored.
///
/// # Safety
/// `stream_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn xptiTraceFinish(stream_name: *const c_char) {
    runtime_entry(Entry::Xpti, || {
        if !stream_name.is_null() {
            // SAFETY: the caller's contract.
            sycl::stream_finished(unsafe { CStr::from_ptr(stream_name) });
        }
    })
}
