//! The fixture's objects behind the handles, and the count of those alive (for leak checks).
//!
//! A handle is a `Box` turned into a raw pointer; `destroy` turns it back. The driver and its one
//! device are statics. Nothing here validates handles: a test double trusts its callers.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, Once};

use pti_sys::level_zero::*;

use crate::exec::Command;

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
}

const KINDS: [(Kind, &str); 9] = [
    (Kind::Context, "contexts"),
    (Kind::Queue, "queues"),
    (Kind::List, "lists"),
    (Kind::Pool, "pools"),
    (Kind::Event, "events"),
    (Kind::Fence, "fences"),
    (Kind::Module, "modules"),
    (Kind::Kernel, "kernels"),
    (Kind::Allocation, "allocations"),
];

static LIVE: [AtomicI64; 9] = [const { AtomicI64::new(0) }; 9];

pub(crate) fn created(kind: Kind) {
    LIVE[kind as usize].fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn destroyed(kind: Kind) {
    LIVE[kind as usize].fetch_sub(1, Ordering::Relaxed);
}

extern "C" fn report_at_exit() {
    let Some(path) = std::env::var_os("ZE_SIM_REPORT") else {
        return;
    };
    let mut line = String::from("LIVE");
    for (kind, name) in KINDS {
        line.push_str(&format!(
            " {name} {}",
            LIVE[kind as usize].load(Ordering::Relaxed)
        ));
    }
    // Not an object, but as bad as a leak: commands that would have waited forever.
    line.push_str(&format!(
        " stuck {}",
        crate::exec::STUCK.load(Ordering::Relaxed)
    ));
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Registers the exit report, once.
pub(crate) fn report_live_objects_at_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a plain function of this library, run by glibc at exit.
        unsafe { libc::atexit(report_at_exit) };
    });
}

/// Turns an object into a handle of type `H`.
pub(crate) fn into_handle<T, H>(kind: Kind, object: T) -> *mut H {
    created(kind);
    Box::into_raw(Box::new(object)).cast()
}

/// The object behind a handle.
///
/// # Safety
/// `handle` came from [`into_handle`] with the same `T` and was not destroyed.
pub(crate) unsafe fn object<'a, T, H>(handle: *mut H) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*handle.cast::<T>() }
}

/// Destroys the object behind a handle.
///
/// # Safety
/// As [`object`]; the handle is not used again.
pub(crate) unsafe fn destroy<T, H>(kind: Kind, handle: *mut H) {
    if handle.is_null() {
        return;
    }
    destroyed(kind);
    // SAFETY: the caller's contract.
    drop(unsafe { Box::from_raw(handle.cast::<T>()) });
}

/// The one driver and the one device: addresses of these statics are their handles.
pub(crate) static DRIVER: u8 = 0;
pub(crate) static DEVICE: u8 = 0;

pub(crate) fn driver_handle() -> ze_driver_handle_t {
    (&raw const DRIVER).cast_mut().cast()
}

pub(crate) fn device_handle() -> ze_device_handle_t {
    (&raw const DEVICE).cast_mut().cast()
}

pub(crate) struct Context;

pub(crate) struct Queue;

pub(crate) struct List {
    pub(crate) immediate: bool,
    pub(crate) commands: Mutex<Vec<Command>>,
}

pub(crate) struct Pool {
    pub(crate) flags: ze_event_pool_flags_t,
}

pub(crate) struct Event {
    /// Whether `zeEventQueryKernelTimestamp` answers for it (a pool's or a counter-based event's
    /// timestamp flag, unless `ZE_SIM_MINIMAL` has `kernel-timestamps`).
    pub(crate) timestamps: bool,
    /// Counter-based (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`): of no pool,
    /// re-armed by each command that signals it, never reset or signalled from the host.
    pub(crate) counter_based: bool,
    pub(crate) signaled: AtomicBool,
    /// Device ticks (full width) of the last command that signalled it.
    pub(crate) span: Mutex<Option<(u64, u64)>>,
}

impl Event {
    pub(crate) fn new(timestamps: bool, counter_based: bool) -> Self {
        Self {
            timestamps,
            counter_based,
            signaled: AtomicBool::new(false),
            span: Mutex::new(None),
        }
    }

    /// Signals it for a command that ran over these device ticks.
    pub(crate) fn signal(&self, start: u64, end: u64) {
        *self.span.lock().unwrap() = Some((start, end));
        self.signaled.store(true, Ordering::Release);
    }

    /// Back to not signalled, without timestamps.
    pub(crate) fn reset(&self) {
        self.signaled.store(false, Ordering::Release);
        *self.span.lock().unwrap() = None;
    }

    /// A counter-based event follows the latest command that signals it: from the time that
    /// command is appended to a regular list, or starts, until it ends, the event is pending
    /// again, and its former timestamps are gone. Other events keep their state until reset.
    pub(crate) fn rearm(&self) {
        if self.counter_based {
            self.reset();
        }
    }
}

pub(crate) struct Fence {
    pub(crate) signaled: AtomicBool,
}

pub(crate) struct Module;

pub(crate) struct Kernel {
    pub(crate) name: std::ffi::CString,
    pub(crate) args: Mutex<HashMap<u32, Vec<u8>>>,
    pub(crate) group_size: Mutex<[u32; 3]>,
}

/// Live allocations: address -> (memory type, size).
pub(crate) static ALLOCATIONS: Mutex<Option<HashMap<usize, (ze_memory_type_t, usize)>>> =
    Mutex::new(None);
