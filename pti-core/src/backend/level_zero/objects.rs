//! What libpti learns of the program's Level Zero objects from their creation calls: kernel names,
//! command lists (context, device, kind, order, and what a regular list or a graph capture
//! recorded), queues, event pools and events (their flags as the program asked and as libpti
//! made them), graphs.
//!
//! Entries are made in the creation calls' epilogues, also while nothing is traced (so a later
//! enable knows the objects), and removed in the destruction calls' prologues.

use core::ffi::{CStr, c_void};
use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pti_sys::level_zero::*;

use super::source::Source;
use super::tracer::{internal, loader};
use crate::backend::device::command::Submission;
use crate::intern::intern;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::view::device::Engine;

/// A command recorded on a regular list or in a graph: it runs each time the list is executed or
/// the graph replayed.
#[derive(Clone, Copy)]
pub(super) struct Recorded {
    /// The append that recorded it (every execution's record keeps its correlation ID and
    /// thread; the execute call is named by a PTI_VIEW_EXT_COMMAND_EXECUTION record).
    pub(super) submission: Submission,
    /// How each execution is timed.
    pub(super) source: Source,
    /// The event the command signals (libpti's or the program's; NULL if none).
    pub(super) signal: ze_event_handle_t,
    /// Host time of the append call.
    pub(super) appended: u64,
    /// Its mutable command ID (0: none).
    pub(super) id: u64,
}

// SAFETY: handles are opaque values passed back to the driver, which allows Level Zero objects
// to be used from any thread.
unsafe impl Send for Recorded {}

/// What a regular list (or a capturing immediate list) has recorded.
#[derive(Default)]
pub(super) struct Recording {
    pub(super) commands: Vec<Recorded>,
    /// Events the list signals or resets in commands without a record of their own (resets,
    /// signals): an execution changes them.
    pub(super) touched: Vec<ze_event_handle_t>,
    /// libpti's events and slots the recording holds (given back with it).
    pub(super) events: Vec<ze_event_handle_t>,
    pub(super) slots: Vec<usize>,
    /// Mutable lists: the ID the driver gives the next command appended.
    pub(super) next_id: Option<u64>,
    /// An immediate list capturing a graph: its appends are recorded here, not run.
    pub(super) capturing: bool,
    /// The recording is another's (a clone's commands are its source's): it gives nothing back.
    pub(super) borrowed: bool,
}

// SAFETY: as for `Recorded`.
unsafe impl Send for Recording {}

impl Recording {
    /// Every event an execution of the recording signals or resets.
    pub(super) fn changes(&self) -> impl Iterator<Item = ze_event_handle_t> + '_ {
        self.commands
            .iter()
            .map(|r| r.signal)
            .chain(self.touched.iter().copied())
            .filter(|e| !e.is_null())
    }
}

/// A command list.
pub(super) struct List {
    pub(super) handle: ze_command_list_handle_t,
    pub(super) context: ze_context_handle_t,
    pub(super) device: ze_device_handle_t,
    pub(super) immediate: bool,
    /// In order (`ZE_COMMAND_LIST_FLAG_IN_ORDER`, or an immediate list's
    /// `ZE_COMMAND_QUEUE_FLAG_IN_ORDER`): its commands complete in the order appended.
    pub(super) in_order: bool,
    /// An immediate list's engine (its descriptor's ordinal and index); 0, 0 for a regular list,
    /// whose commands run on the engine of the queue that executes it.
    pub(super) engine: Engine,
    /// An immediate list in synchronous mode: its commands have completed when the append
    /// returns.
    pub(super) synchronous: bool,
    recording: Mutex<Recording>,
}

impl List {
    /// What the list recorded. Never held while calling the driver or tool code; nothing panics
    /// while holding it, and a poisoned lock is used as it is.
    pub(super) fn recording(&self) -> MutexGuard<'_, Recording> {
        self.recording
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether its appends are recorded (a regular list, or an immediate list capturing).
    pub(super) fn records(&self) -> bool {
        !self.immediate || self.recording().capturing
    }
}

// SAFETY: as for `Recorded`; the mutable part is behind a mutex.
unsafe impl Send for List {}
// SAFETY: as above.
unsafe impl Sync for List {}

/// An event pool as the program created it, and as libpti made it.
#[derive(Clone, Copy)]
pub(super) struct Pool {
    pub(super) context: usize,
    /// The flags the program asked for (what `zeEventPoolGetFlags` answers).
    pub(super) program_flags: ze_event_pool_flags_t,
    /// Its events have kernel timestamps (the program's, or libpti's upgrade).
    pub(super) timestamps: bool,
    /// libpti added the timestamps.
    pub(super) upgraded: bool,
    /// Counter-based (its descriptor first in `pNext`).
    pub(super) counter_based: bool,
}

/// An event of the program's.
#[derive(Clone, Copy)]
pub(super) struct Event {
    pub(super) context: usize,
    /// A counter-based event's device (0 for an event of a pool).
    pub(super) device: usize,
    /// It has kernel timestamps the host can read.
    pub(super) timestamps: bool,
    /// libpti added them: the program's queries of them answer as without.
    pub(super) upgraded: bool,
    /// Counter-based (explicitly).
    pub(super) counter_based: bool,
}

/// A graph's recorded commands (shared by the graph and its executable instances).
pub(super) type GraphCommands = Arc<Mutex<Recording>>;

#[derive(Default)]
struct Registry {
    kernels: HashMap<usize, &'static CStr>,
    /// Each kernel's group size, as last set (`zeKernelSetGroupSize`).
    group_sizes: HashMap<usize, [u32; 3]>,
    lists: HashMap<usize, Arc<List>>,
    /// Queue -> (context, device, engine).
    queues: HashMap<usize, (usize, usize, Engine)>,
    pools: HashMap<usize, Pool>,
    events: HashMap<usize, Event>,
    /// Graphs and executable graphs -> their recorded commands.
    graphs: HashMap<usize, GraphCommands>,
    executables: HashMap<usize, GraphCommands>,
}

static REGISTRY: WriterLock<Option<Registry>> = WriterLock::new(None);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    f(REGISTRY.lock().get_or_insert_with(Registry::default))
}

/// The lock of the registry, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &REGISTRY
}

// === kernels ===

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

/// The program set `kernel`'s group size.
pub(super) fn group_size_set(kernel: ze_kernel_handle_t, size: [u32; 3]) {
    with(|r| r.group_sizes.insert(kernel as usize, size));
}

/// `kernel`'s group size as last set; 0s if never set (the driver's default).
pub(super) fn group_size(kernel: ze_kernel_handle_t) -> [u32; 3] {
    with(|r| r.group_sizes.get(&(kernel as usize)).copied()).unwrap_or_default()
}

/// The name of `kernel`: learnt at its creation, or asked of the driver.
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

// === lists and queues ===

/// What a list creation tells.
pub(super) struct NewList {
    pub(super) handle: ze_command_list_handle_t,
    pub(super) context: ze_context_handle_t,
    pub(super) device: ze_device_handle_t,
    pub(super) immediate: bool,
    pub(super) in_order: bool,
    pub(super) engine: Engine,
    pub(super) synchronous: bool,
}

/// A command list was created; `recording` is what it starts with (a clone's).
pub(super) fn list_created(new: NewList, recording: Recording) {
    let list = Arc::new(List {
        handle: new.handle,
        context: new.context,
        device: new.device,
        immediate: new.immediate,
        in_order: new.in_order,
        engine: new.engine,
        synchronous: new.synchronous,
        recording: Mutex::new(recording),
    });
    with(|r| r.lists.insert(new.handle as usize, list));
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

/// The device and engine of queue `handle` (NULL and 0, 0 if its creation was not seen).
pub(super) fn queue(handle: ze_command_queue_handle_t) -> (ze_device_handle_t, Engine) {
    with(|r| {
        r.queues
            .get(&(handle as usize))
            .map(|q| (q.1 as ze_device_handle_t, q.2))
    })
    .unwrap_or((core::ptr::null_mut(), Engine::default()))
}

/// The engine of queue `handle` (0, 0 if its creation was not seen).
pub(super) fn queue_engine(handle: ze_command_queue_handle_t) -> Engine {
    queue(handle).1
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

// === event pools and events ===

/// An event pool was created.
pub(super) fn pool_created(pool: ze_event_pool_handle_t, info: Pool) {
    with(|r| r.pools.insert(pool as usize, info));
}

/// The pool `handle`, if its creation was seen.
pub(super) fn pool(handle: ze_event_pool_handle_t) -> Option<Pool> {
    with(|r| r.pools.get(&(handle as usize)).copied())
}

/// An event pool is being destroyed.
pub(super) fn pool_destroyed(pool: ze_event_pool_handle_t) {
    with(|r| r.pools.remove(&(pool as usize)));
}

/// An event was created from `pool`.
pub(super) fn pool_event_created(event: ze_event_handle_t, pool: ze_event_pool_handle_t) {
    with(|r| {
        if let Some(p) = r.pools.get(&(pool as usize)).copied() {
            r.events.insert(
                event as usize,
                Event {
                    context: p.context,
                    device: 0,
                    timestamps: p.timestamps,
                    upgraded: p.upgraded,
                    counter_based: p.counter_based,
                },
            );
        }
    });
}

/// A counter-based event of no pool was created.
pub(super) fn event_created(event: ze_event_handle_t, info: Event) {
    with(|r| r.events.insert(event as usize, info));
}

/// The program's event `handle`, if its creation was seen.
pub(super) fn event(handle: ze_event_handle_t) -> Option<Event> {
    with(|r| r.events.get(&(handle as usize)).copied())
}

/// An event is being destroyed.
pub(super) fn event_destroyed(event: ze_event_handle_t) {
    with(|r| r.events.remove(&(event as usize)));
}

// === graphs ===

/// A graph holds `commands`, captured.
pub(super) fn graph_captured(graph: *mut c_void, commands: Recording) {
    with(|r| {
        r.graphs
            .insert(graph as usize, Arc::new(Mutex::new(commands)))
    });
}

/// An executable graph was instantiated from `graph`: it runs the graph's commands.
pub(super) fn graph_instantiated(graph: *mut c_void, executable: *mut c_void) {
    with(|r| {
        if let Some(commands) = r.graphs.get(&(graph as usize)).cloned() {
            r.executables.insert(executable as usize, commands);
        }
    });
}

/// The commands an executable graph runs.
pub(super) fn executable(executable: *mut c_void) -> Option<GraphCommands> {
    with(|r| r.executables.get(&(executable as usize)).cloned())
}

/// A graph or an executable graph is being destroyed.
pub(super) fn graph_destroyed(handle: *mut c_void) {
    with(|r| {
        r.graphs.remove(&(handle as usize));
        r.executables.remove(&(handle as usize));
    });
}

/// In the child after `fork()`: the parent's objects are not the child's to use.
pub(super) fn forget_in_child() {
    *REGISTRY.lock() = None;
}
