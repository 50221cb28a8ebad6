//! Command queues as libpti knows them: context, device, and whether libpti turned profiling on.
//!
//! Device timestamps need profiling, so while a device view is enabled, queues are created with
//! `CL_QUEUE_PROFILING_ENABLE` added (see the creation overrides). The program must not notice:
//! `clGetCommandQueueInfo` reports the properties it asked for, and its own events on such a queue
//! answer `clGetEventProfilingInfo` with `CL_PROFILING_INFO_NOT_AVAILABLE`, as they would have.
//!
//! Every queue created through the layer is registered (also while nothing is traced, so that a
//! later enable finds it); a queue the layer did not see created is looked up from the runtime
//! on first use. An entry leaves the registry when the queue's last reference is released.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use pti_sys::opencl::*;

use super::devices::{self, Device};
use super::query;
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// What libpti knows of one queue.
pub(super) struct QueueInfo {
    pub(super) context: cl_context,
    pub(super) device: Arc<Device>,
    /// Commands on this queue carry device timestamps (the program's profiling, or libpti's).
    pub(super) profiled: bool,
    /// libpti added profiling: queries must not show it.
    pub(super) profiling_added: bool,
    /// The property list the program passed, where libpti changed it (for
    /// `CL_QUEUE_PROPERTIES_ARRAY`); empty for a NULL list.
    pub(super) original_properties: Option<Box<[cl_queue_properties]>>,
    /// A critical event said that this queue's commands get no device records.
    pub(super) warned_unprofiled: AtomicBool,
    /// The queue executes its commands in order (no `CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`
    /// when libpti last looked), so they complete in order; harvests rely on it.
    pub(super) in_order: AtomicBool,
}

// SAFETY: the handles are opaque values passed back to the runtime, which allows OpenCL objects
// to be used from any thread; the one mutable field is atomic.
unsafe impl Send for QueueInfo {}
// SAFETY: as above.
unsafe impl Sync for QueueInfo {}

/// Every queue libpti knows (`T`: [`QueueInfo`]), by handle.
struct Registry<T> {
    by_handle: HashMap<usize, Arc<T>>,
    /// The queue found last, also in `by_handle`: a program's loop enqueues on one queue (or a
    /// few), and comparing its handle costs less than hashing it.
    last: Option<(usize, Arc<T>)>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            by_handle: HashMap::default(),
            last: None,
        }
    }
}

impl<T> Registry<T> {
    /// The queue found last, compared inline (the lookup of every enqueue), the hash out of line.
    #[inline(always)]
    fn get(&mut self, queue: usize) -> Option<&Arc<T>> {
        if self.last.as_ref().is_some_and(|(h, _)| *h == queue) {
            return self.last.as_ref().map(|(_, info)| info);
        }
        self.get_other(queue)
    }

    #[inline(never)]
    fn get_other(&mut self, queue: usize) -> Option<&Arc<T>> {
        let info = self.by_handle.get(&queue)?;
        self.last = Some((queue, info.clone()));
        self.last.as_ref().map(|(_, info)| info)
    }

    fn insert(&mut self, queue: usize, info: Arc<T>) -> Option<Arc<T>> {
        self.forget_last(queue);
        self.by_handle.insert(queue, info)
    }

    fn remove(&mut self, queue: usize) -> Option<Arc<T>> {
        self.forget_last(queue);
        self.by_handle.remove(&queue)
    }

    /// A handle whose entry changes is no longer the last found (its handle may come back as
    /// another queue).
    fn forget_last(&mut self, queue: usize) {
        if self.last.as_ref().is_some_and(|(h, _)| *h == queue) {
            self.last = None;
        }
    }
}

static QUEUES: WriterLock<Option<Registry<QueueInfo>>> = WriterLock::new(None);

/// The lock of this module, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &QUEUES
}

/// Live queues whose profiling libpti added: while 0, the masking overrides do nothing.
static PROFILING_ADDED: AtomicUsize = AtomicUsize::new(0);

#[inline(always)]
fn with_queues<R>(f: impl FnOnce(&mut Registry<QueueInfo>) -> R) -> R {
    f(QUEUES.lock().get_or_insert_with(Registry::default))
}

/// Whether `queue` executes in order, as the runtime says (out of order if it cannot say).
fn is_in_order(queue: cl_command_queue) -> bool {
    query::queue::<cl_command_queue_properties>(queue, CL_QUEUE_PROPERTIES)
        .is_some_and(|p| p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0)
}

/// After `clSetCommandQueueProperty` (which may switch out-of-order execution on or off).
pub(super) fn properties_changed(queue: cl_command_queue) {
    if let Some(info) = with_queues(|q| q.get(queue as usize).cloned()) {
        info.in_order.store(is_in_order(queue), Ordering::Relaxed);
    }
}

/// Registers a queue the program just created.
pub(super) fn register(
    queue: cl_command_queue,
    context: cl_context,
    device: cl_device_id,
    profiled: bool,
    profiling_added: bool,
    original_properties: Option<Box<[cl_queue_properties]>>,
) {
    let info = Arc::new(QueueInfo {
        context,
        device: devices::get(device),
        profiled,
        profiling_added,
        original_properties,
        warned_unprofiled: AtomicBool::new(false),
        in_order: AtomicBool::new(is_in_order(queue)),
    });
    if profiling_added {
        PROFILING_ADDED.fetch_add(1, Ordering::Relaxed);
    }
    let old = with_queues(|q| q.insert(queue as usize, info));
    if old.is_some_and(|o| o.profiling_added) {
        PROFILING_ADDED.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Forgets a queue whose last reference is gone.
pub(super) fn forget(queue: cl_command_queue) {
    let old = with_queues(|q| q.remove(queue as usize));
    if old.is_some_and(|o| o.profiling_added) {
        PROFILING_ADDED.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What libpti knows of `queue`, asking the runtime if the layer did not see it created.
/// Inlined into each enqueue, the runtime's answer out of line: the call's frame cost a launch
/// about 15 instructions (issue 39).
#[inline(always)]
pub(super) fn lookup(queue: cl_command_queue) -> Option<Arc<QueueInfo>> {
    if queue.is_null() {
        return None;
    }
    match with_queues(|q| q.get(queue as usize).cloned()) {
        Some(info) => Some(info),
        None => lookup_unknown(queue),
    }
}

/// [`lookup`] of a queue the layer did not see created: registered from the runtime's answers.
#[cold]
#[inline(never)]
fn lookup_unknown(queue: cl_command_queue) -> Option<Arc<QueueInfo>> {
    let context: cl_context = query::queue(queue, CL_QUEUE_CONTEXT)?;
    let device: cl_device_id = query::queue(queue, CL_QUEUE_DEVICE)?;
    let properties: cl_command_queue_properties =
        query::queue(queue, CL_QUEUE_PROPERTIES).unwrap_or(0);
    register(
        queue,
        context,
        device,
        properties & CL_QUEUE_PROFILING_ENABLE != 0,
        false,
        None,
    );
    with_queues(|q| q.get(queue as usize).cloned())
}

/// The context of `queue`, for the callbacks' `_backend_context_handle` (NULL if unknown).
pub(super) fn context_of(queue: cl_command_queue) -> *mut c_void {
    lookup(queue).map_or(core::ptr::null_mut(), |q| q.context)
}

/// Whether some live queue had profiling added by libpti.
#[inline]
pub(super) fn any_profiling_added() -> bool {
    PROFILING_ADDED.load(Ordering::Relaxed) != 0
}

/// Whether libpti added profiling to `queue`.
pub(super) fn profiling_added(queue: cl_command_queue) -> bool {
    any_profiling_added()
        && with_queues(|q| q.get(queue as usize).is_some_and(|i| i.profiling_added))
}

/// The properties list to create a queue with so that it profiles: `None` when `list` (a
/// zero-terminated key/value list, or NULL) asks for profiling already, or for a device-side
/// queue, where profiling is not libpti's to add.
///
/// # Safety
/// `list` is NULL or a zero-terminated list of key/value pairs, as the OpenCL API requires.
pub(super) unsafe fn properties_with_profiling(
    list: *const cl_queue_properties,
) -> Option<(Vec<cl_queue_properties>, Box<[cl_queue_properties]>)> {
    let mut original = Vec::new();
    if !list.is_null() {
        let mut i = 0;
        loop {
            // SAFETY: the list is zero-terminated (the caller's contract); reading stops at the
            // terminating key.
            let key = unsafe { list.add(i).read() };
            if key == 0 {
                break;
            }
            // SAFETY: a non-zero key is followed by its value.
            let value = unsafe { list.add(i + 1).read() };
            original.extend([key, value]);
            i += 2;
        }
    }
    let props_key = CL_QUEUE_PROPERTIES as cl_queue_properties;
    let mut changed = original.clone();
    match changed.chunks_exact_mut(2).find(|kv| kv[0] == props_key) {
        Some(kv) if kv[1] & (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE) != 0 => return None,
        Some(kv) => kv[1] |= CL_QUEUE_PROFILING_ENABLE,
        None => changed.extend([props_key, CL_QUEUE_PROFILING_ENABLE]),
    }
    changed.push(0);
    if !list.is_null() {
        original.push(0);
    }
    Some((changed, original.into_boxed_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_queue_found_is_forgotten_when_its_handle_changes() {
        let mut r = Registry::<&str>::default();
        assert!(r.get(1).is_none());
        r.insert(1, Arc::new("first"));
        r.insert(2, Arc::new("other"));
        assert_eq!(r.get(1).map(|i| **i), Some("first"));
        // The handle is released and comes back as another queue.
        assert_eq!(r.remove(1).map(|i| *i), Some("first"));
        assert!(r.get(1).is_none());
        r.insert(1, Arc::new("second"));
        assert_eq!(r.get(1).map(|i| **i), Some("second"));
        // Replaced while it is the last found.
        r.insert(1, Arc::new("third"));
        assert_eq!(r.get(1).map(|i| **i), Some("third"));
        assert_eq!(r.get(2).map(|i| **i), Some("other"));
        assert_eq!(r.get(1).map(|i| **i), Some("third"));
    }

    #[test]
    fn profiling_is_added_to_property_lists_that_lack_it() {
        let key = CL_QUEUE_PROPERTIES as cl_queue_properties;
        // SAFETY: NULL and zero-terminated lists.
        unsafe {
            let (changed, original) = properties_with_profiling(core::ptr::null()).unwrap();
            assert_eq!(changed, [key, CL_QUEUE_PROFILING_ENABLE, 0]);
            assert!(original.is_empty());

            let list = [
                0x1094, /* CL_QUEUE_SIZE */
                64,
                key,
                CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                0,
            ];
            let (changed, original) = properties_with_profiling(list.as_ptr()).unwrap();
            assert_eq!(
                changed,
                [
                    0x1094,
                    64,
                    key,
                    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE,
                    0
                ]
            );
            assert_eq!(&*original, &list);

            let profiled = [key, CL_QUEUE_PROFILING_ENABLE, 0];
            assert!(properties_with_profiling(profiled.as_ptr()).is_none());
            let on_device = [
                key,
                CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                0,
            ];
            assert!(properties_with_profiling(on_device.as_ptr()).is_none());
        }
    }
}
