//! The `ur.call` stream: every Unified Runtime call, as a runtime-API call of group SYCL whose
//! API ID is the call's UR function ID (`function_with_args_begin/end`, with the UR parameter
//! struct as `_args` and the `ur_result_t` as `_return_code`).
//!
//! Calls are opened and closed through the dispatch's two-step entry (`dispatch::open`), which
//! makes an opened call the *runtime call* of its thread: the OpenCL and Level Zero calls made
//! inside it take its correlation ID, and so do their device records. Begin and end meet by the
//! notification's instance number, on the thread that makes the call.

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::HashSet;
use std::sync::OnceLock;

use pti_sys::xpti::function_with_args_t;

use super::{memory, tasks};
use crate::api::{ApiGroup, ApiId};
use crate::callback::critical;
use crate::dispatch::{CallInfo, open};
use crate::ids;
use crate::result::ResultCode;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread_stack::{LocalStack, ThreadStack};

thread_local! {
    /// Calls open on this thread: their tokens, by instance.
    static OPEN: ThreadStack<u64, usize> = const { ThreadStack::new() };
    /// `urEnqueue*` calls open on this thread (traced or not), by instance.
    static ENQUEUES: ThreadStack<u64, ()> = const { ThreadStack::new() };
}

/// IDs below this are looked up in bitsets; the table's IDs all are.
const BITSET_IDS: usize = 512;

/// One bit per UR function ID.
struct IdSet([u64; BITSET_IDS / 64]);

impl IdSet {
    fn of(pick: impl Fn(&[u8]) -> bool) -> Self {
        let mut bits = [0u64; BITSET_IDS / 64];
        for (id, name) in ids::iter(ApiGroup::Sycl) {
            if (id as usize) < BITSET_IDS && pick(name.to_bytes()) {
                bits[id as usize / 64] |= 1 << (id % 64);
            }
        }
        IdSet(bits)
    }

    fn contains(&self, id: ApiId) -> bool {
        (id as usize) < BITSET_IDS && self.0[id as usize / 64] & (1 << (id % 64)) != 0
    }
}

/// The `urEnqueue*` functions, whose parameter struct starts with the queue
/// (`ur_queue_handle_t* phQueue`), and among them the kernel launches.
fn enqueues() -> &'static (IdSet, IdSet) {
    static SETS: OnceLock<(IdSet, IdSet)> = OnceLock::new();
    SETS.get_or_init(|| {
        (
            IdSet::of(|n| n.starts_with(b"urEnqueue")),
            IdSet::of(|n| n.starts_with(b"urEnqueueKernelLaunch")),
        )
    })
}

/// Whether anyone listens to a kernel-launch function (so its `_kernel_name` is of use).
pub(super) fn launches_listened() -> bool {
    static LAUNCHES: OnceLock<Vec<ApiId>> = OnceLock::new();
    LAUNCHES
        .get_or_init(|| {
            ids::iter(ApiGroup::Sycl)
                .filter(|(id, _)| enqueues().1.contains(*id))
                .map(|(id, _)| id)
                .collect()
        })
        .iter()
        .any(|id| crate::interest::load(ApiGroup::Sycl, *id) != 0)
}

/// UR function IDs outside libpti's table that were reported already (one bit each; the few
/// beyond the bitset in a set).
static UNKNOWN: [AtomicU64; BITSET_IDS / 64] = [const { AtomicU64::new(0) }; BITSET_IDS / 64];
static UNKNOWN_HIGH: WriterLock<Option<HashSet<u32>>> = WriterLock::new(None);

/// The lock of this module, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &UNKNOWN_HIGH
}

/// Whether a `urEnqueue*` call is open on this thread: commands submitted now belong to the
/// SYCL task that made it.
pub(super) fn in_enqueue() -> bool {
    ENQUEUES.depth() > 0
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

/// The runtime's name of the called function.
fn function_name(data: &function_with_args_t) -> &CStr {
    if data.function_name.is_null() {
        c""
    } else {
        // SAFETY: the runtime's NUL-terminated function name, valid during the notification.
        unsafe { CStr::from_ptr(data.function_name) }
    }
}

/// Reports, once per ID, a UR function the table does not know.
fn unknown(id: u32, data: &function_with_args_t) {
    let first = if (id as usize) < BITSET_IDS {
        let bit = 1u64 << (id % 64);
        UNKNOWN[id as usize / 64].fetch_or(bit, Ordering::Relaxed) & bit == 0
    } else {
        UNKNOWN_HIGH
            .lock()
            .get_or_insert_with(HashSet::new)
            .insert(id)
    };
    if first {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "the Unified Runtime function {} (ID {id}) is newer than libpti's SYCL API-ID \
                 table: its calls are not traced",
                function_name(data).to_string_lossy()
            ),
        );
    }
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
    let known = ids::is_valid(ApiGroup::Sycl, id);
    let (enqueue_ids, launch_ids) = enqueues();
    let (enqueue, launch) = if known {
        (enqueue_ids.contains(id), launch_ids.contains(id))
    } else {
        unknown(id, data);
        let name = function_name(data).to_bytes();
        (
            name.starts_with(b"urEnqueue"),
            name.starts_with(b"urEnqueueKernelLaunch"),
        )
    };
    if enqueue {
        ENQUEUES.push(instance, ());
    }
    let token = if known {
        open::begin(ApiGroup::Sycl, id, || CallInfo {
            args: data.args_data,
            kernel_name: tasks::innermost_kernel_name().filter(|_| launch),
            context: core::ptr::null_mut(),
        })
    } else {
        0
    };
    // The task's enqueue time and queue are taken inside the call (after its start time).
    if enqueue {
        // SAFETY: an enqueue call's parameter struct.
        tasks::enqueue_begun(unsafe { queue_of(data.args_data) }, launch);
    }
    memory::call_begun(id, token);
    if token != 0 {
        OPEN.push(instance, token);
    }
}

/// `function_with_args_end`.
///
/// # Safety
/// As [`begun`]; `ret_data` points at the call's `ur_result_t` (or is NULL).
pub(super) unsafe fn ended(instance: u64, data: *const function_with_args_t) {
    if ENQUEUES.close(instance).is_some() {
        tasks::publish();
    }
    let Some((token, _)) = OPEN.close(instance) else {
        return;
    };
    // SAFETY: the caller's contract.
    let result = unsafe {
        match data.as_ref() {
            Some(d) if !d.ret_data.is_null() => *d.ret_data.cast::<i32>(),
            _ => 0,
        }
    };
    open::end(token, result, core::ptr::null_mut());
}
