//! `pti_ext.h`: libpti's extensions to the PTI API.
//!
//! - critical-event counts, so a tool can see what went wrong even without a subscriber;
//! - emitted- and dropped-record counts, so a tool can reconcile emitted = delivered + dropped;
//! - the count of device commands whose records are still to come;
//! - how many functions of each API group are intercepted, and how many calls passed untraced
//!   because a panic inside libpti switched tracing off on their thread;
//! - simulated calls: a test backend that runs a function through the same dispatch as a real
//!   intercepted call, so tools (and libpti's own tests) can exercise their callbacks without a
//!   GPU runtime.

use core::ffi::{CStr, c_char, c_void};

use pti_core::callback::critical;
use pti_core::dispatch::{self, CallInfo};
use pti_core::view::{self, abi::pti_view_kind};
use pti_core::{Error, ResultCode, session};

use crate::boundary::{export, out_ptr};
use crate::pti::pti_result;
use crate::raw::{RawApiGroup, RawResult, RawViewKind};
use crate::view::{pti_backend_ctx_t, traced_group};

/// How many critical events with code `event` libpti raised since the process started, whether
/// or not a subscriber received them.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or `event` is no pti_result. `*count` is
/// written only on success. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiCallbackGetCriticalEventCount(
    event: RawResult,
    count: *mut u64,
) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let code = ResultCode::from_raw(event.0).ok_or(Error::BadArgument("unknown pti_result"))?;
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
        unsafe { out.write(critical::count(code)) };
        Ok(())
    })
}

/// How many records of view `kind` libpti dropped since the process started (or since fork(),
/// in a child) because buffer_requested provided no buffer, or one too small for the record.
/// Every record libpti emits is either handed to buffer_completed or counted here, so
/// emitted = delivered + dropped. Each run of drops on a thread also raises the critical event
/// PTI_ERROR_RECORDS_DROPPED.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or `kind` is INVALID, RESERVED or unknown.
/// `*count` is written only on success. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetDroppedRecordCount(
    kind: RawViewKind,
    count: *mut u64,
) -> pti_result {
    // SAFETY: the caller's contract.
    unsafe { count_of_kind(kind, count, view::dropped_count) }
}

/// How many records of view `kind` libpti emitted since the process started (or since fork(), in
/// a child): written to a buffer, or dropped. Counted where each record is made, per thread,
/// so that a tool can check its own accounting: once the program's threads are quiet (after its
/// last wait) and ptiFlushAllViews returned, emitted = records handed to buffer_completed +
/// ptiViewGetDroppedRecordCount, for every kind, also kinds enabled and disabled while calls ran.
/// Read while records are being written, it may miss the latest few.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or `kind` is INVALID, RESERVED or unknown.
/// `*count` is written only on success. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetEmittedRecordCount(
    kind: RawViewKind,
    count: *mut u64,
) -> pti_result {
    // SAFETY: the caller's contract.
    unsafe { count_of_kind(kind, count, view::emitted_count) }
}

/// Writes `of(kind)` to `*count`, for the per-kind counts: PTI_ERROR_BAD_ARGUMENT if `count` is
/// NULL or misaligned or `kind` labels no record.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
unsafe fn count_of_kind(
    kind: RawViewKind,
    count: *mut u64,
    of: fn(pti_view_kind) -> u64,
) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let kind = pti_view_kind::from_raw(kind.0)
            .filter(|k| k.record_size().is_some())
            .ok_or(Error::BadArgument("not a record kind"))?;
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
        unsafe { out.write(of(kind)) };
        Ok(())
    })
}

/// How many device commands (kernels, copies, fills, barriers), submitted while a device view
/// was enabled, have no record yet: their work has not completed, or completed after the last
/// harvest (flushes and the program's own waits harvest; libpti never waits for device work).
/// Each holds one reference of libpti's to its event, given back when its record is written, so
/// after the program's last wait and a flush this is 0.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetPendingDeviceRecordCount(count: *mut u64) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let pending = session::pending_device_commands() as u64;
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
        unsafe { out.write(pending) };
        Ok(())
    })
}

/// Pauses collection: from now on no call or command is recorded, in any view, until
/// ptiViewResume. Views stay enabled, and what a resume needs is kept
/// up (queues and event pools created meanwhile get profiling, kernel names are learned);
/// commands submitted before the pause still get their records, and loss records are still
/// written. Pauses do not nest: the last call wins. `PTI_START_PAUSED=1` starts the process
/// paused. Returns PTI_SUCCESS (also when already paused). Thread-safe; async-signal-unsafe.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewPause() -> pti_result {
    export(|| {
        session::set_paused(true);
        Ok(())
    })
}

/// Resumes collection paused by ptiViewPause or `PTI_START_PAUSED=1`. Returns
/// PTI_SUCCESS (also when not paused). Thread-safe; async-signal-unsafe.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewResume() -> pti_result {
    export(|| {
        session::set_paused(false);
        Ok(())
    })
}

/// Whether collection is paused: writes 1 or 0 to `*paused`.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `paused` is NULL. Thread-safe.
///
/// # Safety
/// `paused` must be NULL or point to writable storage for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewIsPaused(paused: *mut u32) -> pti_result {
    export(|| {
        let out = out_ptr(paused, "paused must not be NULL")?;
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint32_t.
        unsafe { out.write(session::is_paused() as u32) };
        Ok(())
    })
}

/// How many functions of `api_group_id` libpti intercepts in this process, so that a tool can
/// tell what it will see: for LEVELZERO, the functions whose prologue and epilogue the loader's
/// tracing layer accepted (every function the installed loader's tracing layer offers); for
/// OPENCL, the entries of libpti's layer dispatch table (those the loader and the layers below
/// provide; the USM extension functions, wrapped when the program asks for their address, are
/// not counted). 0 while the group is not intercepted (its runtime not loaded or not initialised
/// yet, or, for Level Zero, before a tool enabled something that attaches the tracer). SYCL is
/// not intercepted in this version: 0.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or the group is not LEVELZERO, OPENCL or
/// SYCL. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiGetInterceptedFunctionCount(
    api_group_id: RawApiGroup,
    count: *mut u32,
) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let group = traced_group(api_group_id)?;
        let n = session::intercepted_functions(group);
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint32_t.
        unsafe { out.write(u32::try_from(n).unwrap_or(u32::MAX)) };
        Ok(())
    })
}

/// How many calls of `api_group_id` passed untraced since the process started because libpti's
/// own code panicked where a runtime or the program entered it and tracing of that entry was
/// switched off on the calling thread (each such panic raised the critical event
/// PTI_ERROR_TRACING_PANICKED). For LEVELZERO, calls through the loader's tracing layer; for
/// OPENCL, calls through the layer's wrappers (simulated calls of any group count here too); for
/// SYCL, notifications of the runtime's XPTI framework. 0 in a healthy process: these are the
/// calls whose callbacks and records were lost to a bug in libpti.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or misaligned or the group is not
/// LEVELZERO, OPENCL or SYCL. `*count` is written only on success. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiGetUntracedCallCount(
    api_group_id: RawApiGroup,
    count: *mut u64,
) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let group = traced_group(api_group_id)?;
        let n = pti_core::boundary::untraced_calls(group);
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// How many commands function `api_id` of `api_group_id` submitted, in successful calls made
/// while a device view was enabled, that got no record because libpti has no record kind for
/// them (memory migrations, memory advice, command-buffer executions, semaphore and
/// acquire/release enqueues, ...: docs/view-api.md lists them). The first such command of each
/// function raises the critical event PTI_ERROR_COMMANDS_NOT_RECORDED; PTI_VIEW_EXT_LOSS records
/// itemise them. Every command of a traced call is thus either recorded, counted here, or
/// counted by ptiViewGetDroppedRecordCount. Since the process started (or fork(), in a child);
/// 0 for functions that submit no such command.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `count` is NULL or misaligned or the group is not
/// LEVELZERO, OPENCL or SYCL, and PTI_ERROR_BAD_API_ID if the group has no function `api_id`.
/// `*count` is written only on success. Thread-safe.
///
/// # Safety
/// `count` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetUnrecordedCommandCount(
    api_group_id: RawApiGroup,
    api_id: u32,
    count: *mut u64,
) -> pti_result {
    export(|| {
        let out = out_ptr(count, "count must not be NULL")?;
        let group = traced_group(api_group_id)?;
        if !pti_core::ids::is_valid(group, api_id) {
            return Err(Error::BadApiId {
                group: api_group_id.0,
                id: api_id,
            });
        }
        let n = view::unrecorded_count(group, api_id);
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// The body of a simulated call: what the "traced function" does. Returns its status.
pub type pti_simulated_call_body = Option<unsafe extern "C" fn(user_data: *mut c_void) -> i32>;

/// Runs `body(user_data)` as if libpti had intercepted function `api_id` of `api_group_id`.
///
/// Subscribers receive ENTER before the body and EXIT after it, with `_args`, `_kernel_name` and
/// `_backend_context_handle` as given and `_return_code` pointing at the body's status, exactly
/// as for a real call. `body` may be NULL (status 0); it may itself make simulated calls.
/// Like any traced call made from inside a callback, one made there runs untraced.
///
/// Returns PTI_ERROR_BAD_ARGUMENT for a group other than LEVELZERO, OPENCL or SYCL and
/// PTI_ERROR_BAD_API_ID for an ID the group's table does not name; then the body does not run.
/// On success, `*return_code` (if not NULL) receives the body's status. `kernel_name` must be
/// NULL or a NUL-terminated string. Thread-safe.
///
/// # Safety
/// `kernel_name` must be NULL or a NUL-terminated string, `return_code` NULL or writable storage
/// for one `int32_t`, and `body`, if not NULL, a function safe to call with `user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiSimulateApiCall(
    api_group_id: RawApiGroup,
    api_id: u32,
    args: *const c_void,
    kernel_name: *const c_char,
    context: pti_backend_ctx_t,
    body: pti_simulated_call_body,
    user_data: *mut c_void,
    return_code: *mut i32,
) -> pti_result {
    export(|| {
        let group = traced_group(api_group_id)?;
        let out = match return_code.is_null() {
            true => None,
            false => Some(out_ptr(return_code, "return_code is misaligned")?),
        };
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let kernel_name = (!kernel_name.is_null()).then(|| unsafe { CStr::from_ptr(kernel_name) });
        let info = CallInfo {
            args,
            kernel_name,
            context,
        };
        let status = dispatch::simulate_call(group, api_id, info, || match body {
            // SAFETY: the tool passes a function with this signature and its own user data.
            Some(f) => unsafe { f(user_data) },
            None => 0,
        })?;
        if let Some(out) = out {
            // SAFETY: checked non-NULL and aligned; the caller passes storage for one int32_t.
            unsafe { out.write(status) };
        }
        Ok(())
    })
}
