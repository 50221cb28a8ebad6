//! The `ur.call` stream: every Unified Runtime call, as a runtime-API call of group SYCL whose
//! API ID is the call's UR function ID (`function_with_args_begin/end`, with the UR parameter
//! struct as `_args` and the `ur_result_t` as `_return_code`).
//!
//! Calls are opened and closed through the dispatch's two-step entry (`dispatch::open`), which
//! makes an opened call the *runtime call* of its thread: the OpenCL and Level Zero calls made
//! inside it take its correlation ID, and so do their device records. Begin and end meet by the
//! notification's instance number, on the thread that makes the call.

use core::cell::RefCell;
use core::ffi::c_void;
use std::collections::HashSet;

use pti_sys::xpti::function_with_args_t;

use super::{memory, tasks};
use crate::api::{ApiGroup, ApiId};
use crate::critical;
use crate::dispatch::{CallInfo, open};
use crate::ids;
use crate::result::ResultCode;
use crate::sync::writer_lock::{ForkLock, WriterLock};

thread_local! {
    /// Calls open on this thread: (instance, token).
    static OPEN: RefCell<Vec<(u64, usize)>> = const { RefCell::new(Vec::new()) };
}

/// UR function IDs outside libpti's table that were reported already.
static UNKNOWN: WriterLock<Option<HashSet<u32>>> = WriterLock::new(None);

/// The lock of this module, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &UNKNOWN
}

/// Whether `id` is one of the `urEnqueue*` functions, whose parameter struct starts with the
/// queue (`ur_queue_handle_t* phQueue`).
fn is_enqueue(id: ApiId) -> bool {
    ids::name(ApiGroup::Sycl, id).is_some_and(|n| n.to_bytes().starts_with(b"urEnqueue"))
}

/// The queue handle of an enqueue call's parameter struct.
///
/// # Safety
/// `args` is NULL or the parameter struct of a `urEnqueue*` call that is running.
unsafe fn queue_of(args: *const c_void) -> usize {
    if args.is_null() {
        return 0;
    }
    // SAFETY: the caller's contract: the struct's first field points at the queue argument.
    unsafe {
        let field = *args.cast::<*const *mut c_void>();
        if field.is_null() { 0 } else { *field as usize }
    }
}

fn unknown(id: u32, data: &function_with_args_t) {
    let mut known = UNKNOWN.lock();
    if !known.get_or_insert_with(HashSet::new).insert(id) {
        return;
    }
    drop(known);
    let name = if data.function_name.is_null() {
        Default::default()
    } else {
        // SAFETY: the runtime's NUL-terminated function name.
        unsafe { core::ffi::CStr::from_ptr(data.function_name) }.to_string_lossy()
    };
    critical::raise(
        ResultCode::ErrorTracingNotInitialized,
        format_args!(
            "the Unified Runtime function {name} (ID {id}) is newer than libpti's SYCL API-ID \
             table: its calls are not traced"
        ),
    );
}

/// `function_with_args_begin`.
///
/// # Safety
/// `data` is the notification's user data, valid while it runs.
pub(super) unsafe fn begun(instance: u64, data: *const function_with_args_t) {
    if data.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let data = unsafe { &*data };
    let id = data.function_id;
    if !ids::is_valid(ApiGroup::Sycl, id) {
        unknown(id, data);
        return;
    }
    let token = open::begin(ApiGroup::Sycl, id, || CallInfo {
        args: data.args_data,
        kernel_name: tasks::current().and_then(|t| t.kernel_name).filter(|_| {
            ids::name(ApiGroup::Sycl, id)
                .is_some_and(|n| n.to_bytes().starts_with(b"urEnqueueKernelLaunch"))
        }),
        context: core::ptr::null_mut(),
    });
    // The task's enqueue time is taken inside the call (after its start time).
    if is_enqueue(id) {
        // SAFETY: an enqueue call's parameter struct.
        tasks::enqueue_begun(unsafe { queue_of(data.args_data) });
    }
    memory::call_begun(id, token);
    if token != 0 {
        let _ = OPEN.try_with(|o| o.borrow_mut().push((instance, token)));
    }
}

/// `function_with_args_end`.
///
/// # Safety
/// As [`begun`]; `ret_data` points at the call's `ur_result_t` (or is NULL).
pub(super) unsafe fn ended(instance: u64, data: *const function_with_args_t) {
    let token = OPEN
        .try_with(|o| {
            let mut o = o.borrow_mut();
            let i = o.iter().rposition(|(n, _)| *n == instance)?;
            let token = o[i].1;
            o.truncate(i);
            Some(token)
        })
        .ok()
        .flatten();
    let Some(token) = token else { return };
    // SAFETY: the caller's contract.
    let result = unsafe {
        match data.as_ref() {
            Some(d) if !d.ret_data.is_null() => *d.ret_data.cast::<i32>(),
            _ => 0,
        }
    };
    open::end(token, result, core::ptr::null_mut());
}
