//! The `sycl.experimental.mem_alloc` stream: the runtime's USM allocations and releases, as
//! records of libpti's extension view `PTI_VIEW_EXT_MEMORY_ALLOCATION`.
//!
//! The stream's documentation promises a `mem_alloc_data_t` as user data; the runtime sends a C
//! string instead ("usm::alignedAlloc"). libpti reads neither: what it records comes from the
//! event's metadata (`memory_ptr`, `memory_size`, `sycl_device_name`) and payload (the name),
//! which the runtime fills in either case, so a change of the user data cannot mislead it.
//! The kind of memory and the correlation ID come from the Unified Runtime call that does the work
//! inside the operation (`urUSMDeviceAlloc`, `urUSMSharedAlloc`, `urUSMHostAlloc`, `urUSMFree`;
//! not the queries the runtime makes on the way); a release gets the size and kind its allocation
//! was recorded with.

use std::collections::HashMap;

use pti_sys::xpti::trace_event_data_t;

use super::framework::{self, Value};
use crate::api::{ApiGroup, ApiId};
use crate::dispatch::open;
use crate::intern::intern;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::view::abi::{pti_view_kind, pti_view_memory_operation, pti_view_memory_type};
use crate::view::device::{self, MemoryEvent};
use crate::{clock, ids, thread, view};

/// An operation between its begin and end notifications.
struct Open {
    operation: pti_view_memory_operation,
    start: u64,
    memory: pti_view_memory_type,
    correlation_id: u32,
}

thread_local! {
    /// Operations open on this thread, by instance.
    static OPEN: ThreadStack<u64, Open> = const { ThreadStack::new() };
}

/// Live allocations by address: (bytes, kind), for their releases.
static LIVE: WriterLock<Option<HashMap<u64, (u64, pti_view_memory_type)>>> = WriterLock::new(None);

/// The lock of this module, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &LIVE
}

fn enabled() -> bool {
    view::is_enabled(pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION)
}

/// `mem_alloc_begin` / `mem_release_begin`.
pub(super) fn begun(operation: pti_view_memory_operation, instance: u64) {
    if !enabled() {
        return;
    }
    let open = Open {
        operation,
        start: clock::now(),
        memory: pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY,
        correlation_id: 0,
    };
    OPEN.push(instance, open);
}

/// A Unified Runtime call `id` (open as `token`) begins: inside an open operation, it is the one
/// doing the work.
pub(super) fn call_begun(id: ApiId, token: usize) {
    OPEN.with_top(|op| {
        let memory = match ids::name(ApiGroup::Sycl, id).map(|n| n.to_bytes()) {
            Some(b"urUSMHostAlloc") => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_HOST,
            Some(b"urUSMDeviceAlloc") => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_DEVICE,
            Some(b"urUSMSharedAlloc") => pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_SHARED,
            Some(b"urUSMFree") => op.memory,
            // Queries the runtime makes on the way (device info, ...) are not the operation.
            _ => return,
        };
        op.memory = memory;
        if op.correlation_id == 0 && token != 0 {
            op.correlation_id = open::correlation_id(token);
        }
    });
}

/// `mem_alloc_end` / `mem_release_end`: the record.
///
/// # Safety
/// `event` is the event of the running notification (or NULL).
pub(super) unsafe fn ended(instance: u64, event: *mut trace_event_data_t) {
    let Some((op, _)) = OPEN.close(instance) else {
        return;
    };
    let mut event_info = MemoryEvent {
        operation: op.operation,
        memory: op.memory,
        start: op.start,
        end: clock::now(),
        address: 0,
        bytes: 0,
        name: None,
        device_name: None,
        thread_id: 0,
        correlation_id: op.correlation_id,
    };
    if let Some(fw) = framework::get() {
        // SAFETY: the caller's contract.
        unsafe {
            event_info.name = fw.origin(event).and_then(|o| o.name).map(intern);
            fw.metadata(event, |key, value| match (key.to_bytes(), value) {
                (b"memory_ptr", Value::Number(n)) => event_info.address = n,
                (b"memory_size", Value::Number(n)) => event_info.bytes = n,
                (b"sycl_device_name", Value::Text(t)) => {
                    event_info.device_name =
                        std::str::from_utf8(t).ok().map(crate::intern::intern_str)
                }
                _ => {}
            });
        }
    }
    remember(&mut event_info);
    thread::with(|state| {
        event_info.thread_id = state.thread_id();
        device::memory_allocation(state, &event_info);
    });
}

/// Keeps an allocation's size and kind for its release, and gives them to the release.
fn remember(e: &mut MemoryEvent) {
    let mut live = LIVE.lock();
    let live = live.get_or_insert_with(HashMap::new);
    match e.operation {
        pti_view_memory_operation::PTI_VIEW_MEMORY_OPERATION_ALLOCATION if e.address != 0 => {
            live.insert(e.address, (e.bytes, e.memory));
        }
        pti_view_memory_operation::PTI_VIEW_MEMORY_OPERATION_RELEASE => {
            if let Some((bytes, memory)) = live.remove(&e.address) {
                e.bytes = e.bytes.max(bytes);
                if e.memory == pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY {
                    e.memory = memory;
                }
            }
        }
        _ => {}
    }
}

/// In the child after `fork()`.
pub(super) fn forget_in_child() {
    *LIVE.lock() = None;
}
