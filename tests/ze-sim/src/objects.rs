//! The driver's objects behind the handles, and the count of those alive (for leak checks).
//!
//! A handle is an `Arc` turned into a raw pointer ([`into_handle`]); destroying the object drops
//! that reference ([`destroy`]). Commands in flight hold references of their own ([`shared`]),
//! so an object the program destroys while the device still uses it stays valid for the
//! device: a real driver's behaviour then is undefined, this one's is not, and the report counts
//! it (`destroyed_in_use`). Nothing here validates handles: a test double trusts its callers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use pti_sys::level_zero::*;

/// Kinds of objects whose live count is reported.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Context,
    Queue,
    List,
    Pool,
    Event,
    Fence,
    Module,
    Kernel,
    Allocation,
    Graph,
    ExecutableGraph,
}

/// The kinds, in the order the report lists them, with their names there.
pub(crate) const KINDS: [(Kind, &str); 11] = [
    (Kind::Context, "contexts"),
    (Kind::Queue, "queues"),
    (Kind::List, "lists"),
    (Kind::Pool, "pools"),
    (Kind::Event, "events"),
    (Kind::Fence, "fences"),
    (Kind::Module, "modules"),
    (Kind::Kernel, "kernels"),
    (Kind::Allocation, "allocations"),
    (Kind::Graph, "graphs"),
    (Kind::ExecutableGraph, "executable_graphs"),
];

static LIVE: [AtomicI64; 11] = [const { AtomicI64::new(0) }; 11];

pub(crate) fn created(kind: Kind) {
    LIVE[kind as usize].fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn destroyed(kind: Kind) {
    LIVE[kind as usize].fetch_sub(1, Ordering::Relaxed);
}

/// Live objects of `kind`.
pub(crate) fn live(kind: Kind) -> i64 {
    LIVE[kind as usize].load(Ordering::Relaxed)
}

/// Turns an object into a handle of type `H`.
pub(crate) fn into_handle<T, H>(kind: Kind, object: Arc<T>) -> *mut H {
    created(kind);
    Arc::into_raw(object).cast_mut().cast()
}

/// The object behind a handle.
///
/// # Safety
/// `handle` came from [`into_handle`] with the same `T` and was not destroyed (or is held by a
/// command in flight).
pub(crate) unsafe fn object<'a, T, H>(handle: *mut H) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*handle.cast::<T>().cast_const() }
}

/// A reference of its own to the object behind a handle, for a command in flight.
///
/// # Safety
/// As [`object`].
pub(crate) unsafe fn shared<T, H>(handle: *mut H) -> Arc<T> {
    let ptr = handle.cast::<T>().cast_const();
    // SAFETY: the handle holds one strong reference (the caller's contract); this adds one.
    unsafe {
        Arc::increment_strong_count(ptr);
        Arc::from_raw(ptr)
    }
}

/// Destroys the object behind a handle (drops the handle's reference); counts it destroyed in
/// use when commands in flight still hold it (`busy`: for an event, whose other holders may be
/// lists that merely record it, the caller says; else any other reference is a command's).
///
/// # Safety
/// As [`object`]; the handle is not used again.
pub(crate) unsafe fn destroy_checked<T, H>(kind: Kind, handle: *mut H, busy: Option<bool>) {
    if handle.is_null() {
        return;
    }
    destroyed(kind);
    // SAFETY: the caller's contract: the handle's own reference.
    let object = unsafe { Arc::from_raw(handle.cast::<T>().cast_const()) };
    if busy.unwrap_or(Arc::strong_count(&object) > 1) {
        crate::report::count(crate::report::Counter::DestroyedInUse);
    }
    drop(object);
}

/// [`destroy_checked`] for an object only commands in flight hold.
///
/// # Safety
/// As [`destroy_checked`].
pub(crate) unsafe fn destroy<T, H>(kind: Kind, handle: *mut H) {
    // SAFETY: the caller's contract.
    unsafe { destroy_checked::<T, H>(kind, handle, None) }
}

pub(crate) struct Context;

pub(crate) struct Module;

pub(crate) struct Kernel {
    pub(crate) name: std::ffi::CString,
    pub(crate) args: Mutex<HashMap<u32, Vec<u8>>>,
    pub(crate) group_size: Mutex<[u32; 3]>,
}

pub(crate) struct Fence {
    pub(crate) signaled: std::sync::atomic::AtomicBool,
}

/// Live allocations: address -> (memory type, size).
pub(crate) static ALLOCATIONS: Mutex<Option<HashMap<usize, (ze_memory_type_t, usize)>>> =
    Mutex::new(None);
