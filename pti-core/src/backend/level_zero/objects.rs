//! What libpti learns of the program's Level Zero objects from their creation calls: kernel names,
//! command lists (context, device, immediate or regular, synchronous or not, and the commands
//! recorded on a regular list), queues, and which events the host can read kernel timestamps
//! from.
//!
//! Entries are made in the creation calls' epilogues, also while nothing is traced (so a later
//! enable knows the objects), and removed in the destruction calls' prologues.

use core::ffi::{CStr, c_void};
use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pti_sys::level_zero::*;

use super::tracer::{internal, loader};
use crate::backend::device::command::Submission;
use crate::intern::intern;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::device::Engine;

/// A command recorded on a regular list: it runs each time the list is executed.
#[derive(Clone, Copy)]
pub(super) struct Recorded {
    /// The append that recorded it (every execution's record keeps its correlation ID and
    /// thread; the execute call is named by a PTI_VIEW_EXT_COMMAND_EXECUTION record).
    pub(super) submission: Submission,
    /// The event that times it (libpti's, or the program's when it has kernel timestamps).
    pub(super) event: ze_event_handle_t,
    /// The program's event that a barrier signals after `event` (NULL if none).
    pub(super) program: ze_event_handle_t,
    /// `event` is libpti's (given back when the list is reset or destroyed).
    pub(super) owned: bool,
    /// Host time of the append call.
    pub(super) appended: u64,
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread.
unsafe impl Send for Recorded {}

/// A command list.
pub(super) struct List {
    pub(super) handle: ze_command_list_handle_t,
    pub(super) context: ze_context_handle_t,
    pub(super) device: ze_device_handle_t,
    pub(super) immediate: bool,
    /// An immediate list's engine (its descriptor's ordinal and index); 0, 0 for a regular list,
    /// whose commands run on the engine of the queue that executes it.
    pub(super) engine: Engine,
    /// An immediate list in synchronous mode: its commands have completed when the append
    /// returns.
    pub(super) synchronous: bool,
    /// Commands of a regular list, in order.
    recorded: Mutex<Vec<Recorded>>,
}

impl List {
    /// The commands recorded on a regular list. Never held while calling the driver or tool
    /// code; nothing panics while holding it, and a poisoned lock is used as it is.
    pub(super) fn recorded(&self) -> MutexGuard<'_, Vec<Recorded>> {
        self.recorded.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

// SAFETY: as for `Recorded`; the mutable part is behind a mutex.
unsafe impl Send for List {}
// SAFETY: as above.
unsafe impl Sync for List {}

#[derive(Default)]
struct Registry {
    kernels: HashMap<usize, &'static CStr>,
    /// Each kernel's group size, as last set (`zeKernelSetGroupSize`).
    group_sizes: HashMap<usize, [u32; 3]>,
    lists: HashMap<usize, Arc<List>>,
    /// Queue -> (context, device, engine).
    queues: HashMap<usize, (usize, usize, Engine)>,
    /// Pools whose events the host can read kernel timestamps from.
    timestamp_pools: HashMap<usize, bool>,
    /// Events of those pools.
    timestamp_events: HashMap<usize, bool>,
}

static REGISTRY: WriterLock<Option<Registry>> = WriterLock::new(None);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    f(REGISTRY.lock().get_or_insert_with(Registry::default))
}

/// The lock of the registry, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &REGISTRY
}

/// A kernel was created with `name`.
pub(super) fn kernel_created(kernel: ze_kernel_handle_t, name: &CStr) {
    let name = intern(name);
    with(|r| r.kernels.insert(kernel as usize, name));
}

/// A kernel is being destroyed.
pub(super) fn kernel_destroyed(kernel: ze_kernel_handle_t) {
    with(|r| {
        r.kernels.remove(&(kernel as usize));
        r.group_sizes.remove(&(kernel as usize));
    });
}

/// The name of `kernel`: learnt at its creation, or asked of the driver.
/// The program set `kernel`'s group size.
pub(super) fn group_size_set(kernel: ze_kernel_handle_t, size: [u32; 3]) {
    with(|r| r.group_sizes.insert(kernel as usize, size));
}

/// `kernel`'s group size as last set; 0s if never set (the driver's default).
pub(super) fn group_size(kernel: ze_kernel_handle_t) -> [u32; 3] {
    with(|r| r.group_sizes.get(&(kernel as usize)).copied()).unwrap_or_default()
}

pub(super) fn kernel_name(kernel: ze_kernel_handle_t) -> Option<&'static CStr> {
    if kernel.is_null() {
        return None;
    }
    if let Some(name) = with(|r| r.kernels.get(&(kernel as usize)).copied()) {
        return Some(name);
    }
    let get = loader()?.zeKernelGetName?;
    let mut size = 0usize;
    // SAFETY: a size query for a kernel the program passed to a call.
    let status = internal(|| unsafe { get(kernel, &mut size, core::ptr::null_mut()) });
    if status != ZE_RESULT_SUCCESS || size == 0 {
        return None;
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: room for the `size` bytes the driver asked for.
    let status = internal(|| unsafe { get(kernel, &mut size, bytes.as_mut_ptr().cast()) });
    if status != ZE_RESULT_SUCCESS {
        return None;
    }
    let name = CStr::from_bytes_until_nul(&bytes).ok()?;
    kernel_created(kernel, name);
    with(|r| r.kernels.get(&(kernel as usize)).copied())
}

/// A command list was created (`immediate`, and then `synchronous` or not).
pub(super) fn list_created(
    handle: ze_command_list_handle_t,
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    immediate: bool,
    engine: Engine,
    synchronous: bool,
) {
    let list = Arc::new(List {
        handle,
        context,
        device,
        immediate,
        engine,
        synchronous,
        recorded: Mutex::new(Vec::new()),
    });
    with(|r| r.lists.insert(handle as usize, list));
}

/// The list `handle`, if its creation was seen.
pub(super) fn list(handle: ze_command_list_handle_t) -> Option<Arc<List>> {
    with(|r| r.lists.get(&(handle as usize)).cloned())
}

/// The lists of `context`.
pub(super) fn lists_in(context: ze_context_handle_t) -> Vec<Arc<List>> {
    with(|r| {
        r.lists
            .values()
            .filter(|l| l.context == context)
            .cloned()
            .collect()
    })
}

/// Forgets a list being destroyed, and returns it.
pub(super) fn list_destroyed(handle: ze_command_list_handle_t) -> Option<Arc<List>> {
    with(|r| r.lists.remove(&(handle as usize)))
}

/// The context of list `handle` (NULL if unknown).
pub(super) fn list_context(handle: ze_command_list_handle_t) -> *mut c_void {
    list(handle).map_or(core::ptr::null_mut(), |l| l.context.cast())
}

/// A command queue was created.
pub(super) fn queue_created(
    handle: ze_command_queue_handle_t,
    context: ze_context_handle_t,
    device: ze_device_handle_t,
    engine: Engine,
) {
    with(|r| {
        r.queues
            .insert(handle as usize, (context as usize, device as usize, engine))
    });
}

/// The engine of queue `handle` (0, 0 if its creation was not seen).
pub(super) fn queue_engine(handle: ze_command_queue_handle_t) -> Engine {
    with(|r| r.queues.get(&(handle as usize)).map(|q| q.2)).unwrap_or_default()
}

/// The engine of immediate list `handle` (0, 0 if its creation was not seen).
pub(super) fn immediate_engine(handle: ze_command_list_handle_t) -> Engine {
    with(|r| r.lists.get(&(handle as usize)).map(|l| l.engine)).unwrap_or_default()
}

/// The context of queue `handle` (NULL if unknown).
pub(super) fn queue_context(handle: ze_command_queue_handle_t) -> *mut c_void {
    with(|r| r.queues.get(&(handle as usize)).map(|q| q.0))
        .map_or(core::ptr::null_mut(), |c| c as *mut c_void)
}

/// A queue is being destroyed.
pub(super) fn queue_destroyed(handle: ze_command_queue_handle_t) {
    with(|r| r.queues.remove(&(handle as usize)));
}

/// Whether events of a pool with `flags` give the host kernel timestamps.
pub(super) fn timed_flags(flags: ze_event_pool_flags_t) -> bool {
    let needed = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    flags & needed == needed
}

/// An event pool was created with `flags`.
pub(super) fn pool_created(pool: ze_event_pool_handle_t, flags: ze_event_pool_flags_t) {
    let timestamps = timed_flags(flags);
    with(|r| r.timestamp_pools.insert(pool as usize, timestamps));
}

/// An event pool is being destroyed.
pub(super) fn pool_destroyed(pool: ze_event_pool_handle_t) {
    with(|r| r.timestamp_pools.remove(&(pool as usize)));
}

/// An event was created from `pool`.
pub(super) fn event_created(event: ze_event_handle_t, pool: ze_event_pool_handle_t) {
    with(|r| {
        let timestamps = r
            .timestamp_pools
            .get(&(pool as usize))
            .copied()
            .unwrap_or(false);
        r.timestamp_events.insert(event as usize, timestamps);
    });
}

/// An event is being destroyed.
pub(super) fn event_destroyed(event: ze_event_handle_t) {
    with(|r| r.timestamp_events.remove(&(event as usize)));
}

/// Whether the program's `event` comes from a host-visible pool with kernel timestamps.
pub(super) fn event_has_timestamps(event: ze_event_handle_t) -> bool {
    with(|r| {
        r.timestamp_events
            .get(&(event as usize))
            .copied()
            .unwrap_or(false)
    })
}

/// In the child after `fork()`: the parent's objects are not the child's to use.
pub(super) fn forget_in_child() {
    *REGISTRY.lock() = None;
}
