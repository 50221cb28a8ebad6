//! Extension functions (USM, host pipes, command buffers, ...): the runtime hands out their
//! addresses through `clGetExtensionFunctionAddress[ForPlatform]`, so they never pass the
//! dispatch table. The hook of those two calls records the runtime's address and hands out
//! libpti's wrapper instead; the wrapper finds the runtime's function again from its first
//! OpenCL object.
//!
//! Every object of an ICD starts with a pointer to that ICD's dispatch table, the same for all
//! its objects, so that pointer (the *key*) tells which runtime owns a call. Per function, up to
//! [`RUNTIMES`] keys are remembered; an address asked for without a platform is remembered
//! under [`ANY`], and used for objects of runtimes not seen otherwise.

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};

use super::next::{Entry, Next};
use super::wrappers::Ext;
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Runtimes remembered per extension function.
pub(super) const RUNTIMES: usize = 8;

/// The key of addresses obtained without a platform (never a real dispatch table's address).
const ANY: *mut c_void = core::ptr::dangling_mut::<c_void>();

struct Slot {
    key: AtomicPtr<c_void>,
    function: AtomicPtr<c_void>,
}

impl Slot {
    const fn empty() -> Self {
        Slot {
            key: AtomicPtr::new(core::ptr::null_mut()),
            function: AtomicPtr::new(core::ptr::null_mut()),
        }
    }
}

static TABLE: [[Slot; RUNTIMES]; Ext::ALL.len()] =
    [const { [const { Slot::empty() }; RUNTIMES] }; Ext::ALL.len()];

/// Serialises registrations (lookups take no lock).
static REGISTER: WriterLock<()> = WriterLock::new(());

/// The lock of registrations, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &REGISTER
}

/// The dispatch key of OpenCL object `object` (NULL for NULL).
///
/// # Safety
/// `object` is NULL or a live OpenCL object, which ICD objects begin with a dispatch pointer.
unsafe fn key_of(object: *mut c_void) -> *mut c_void {
    if object.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: the caller's contract; the ICD loader reads the same pointer for every call.
    unsafe { object.cast::<*mut c_void>().read() }
}

/// Remembers that runtime `key` implements `ext` at `function`.
fn register(ext: Ext, key: *mut c_void, function: *mut c_void) -> bool {
    let _guard = REGISTER.lock();
    let slots = &TABLE[ext as usize];
    let slot = slots
        .iter()
        .find(|s| s.key.load(Ordering::Relaxed) == key)
        .or_else(|| {
            slots
                .iter()
                .find(|s| s.key.load(Ordering::Relaxed).is_null())
        });
    let Some(slot) = slot else {
        return false;
    };
    // The function first: a reader that sees the key (Acquire) sees its function.
    slot.function.store(function, Ordering::Relaxed);
    slot.key.store(key, Ordering::Release);
    true
}

/// The runtime's function for `ext` (typed by its `opencl-sys` alias `T`) on calls whose first
/// OpenCL object is `object` (NULL if the call has none); `None` if no runtime gave it.
pub(super) fn resolve<T: Entry>(ext: Ext, object: *mut c_void) -> Option<Next<T>> {
    const { assert!(size_of::<Next<T>>() == size_of::<*mut c_void>()) };
    // SAFETY: `object` is the first OpenCL object the program passed to this extension call.
    let key = unsafe { key_of(object) };
    let slots = &TABLE[ext as usize];
    let mut any = None;
    let mut used = 0;
    for slot in slots {
        let k = slot.key.load(Ordering::Acquire);
        if k.is_null() {
            break;
        }
        used += 1;
        let function = slot.function.load(Ordering::Relaxed);
        if k == key {
            return Some(as_fn(function));
        }
        if k == ANY {
            any = Some(function);
        }
    }
    let fallback = match (any, used) {
        (Some(f), _) => f,
        // One runtime only: its objects may carry a dispatch pointer other than its platform's.
        (None, 1) => slots[0].function.load(Ordering::Relaxed),
        _ => return None,
    };
    Some(as_fn(fallback))
}

fn as_fn<F: Copy>(function: *mut c_void) -> F {
    // SAFETY: `F` is the function-pointer type of the extension function whose runtime address
    // this is (never NULL: registered addresses are checked); sizes were checked by the caller.
    unsafe { core::mem::transmute_copy::<*mut c_void, F>(&function) }
}

/// What `clGetExtensionFunctionAddress[ForPlatform]` returns to the program: libpti's wrapper
/// when it wraps `name` and the runtime has it, else the runtime's answer.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `platform` is NULL or a platform the runtime gave.
pub(super) unsafe fn hand_out(
    platform: *mut c_void,
    name: *const c_char,
    function: *mut c_void,
) -> *mut c_void {
    if function.is_null() || name.is_null() {
        return function;
    }
    // SAFETY: the caller's contract.
    let name = unsafe { CStr::from_ptr(name) };
    let Some(ext) = Ext::ALL.into_iter().find(|e| e.name() == name) else {
        return function;
    };
    let key = if platform.is_null() {
        ANY
    } else {
        // SAFETY: the caller's contract.
        unsafe { key_of(platform) }
    };
    if register(ext, key, function) {
        ext.wrapper()
    } else {
        // More runtimes than slots: this one's calls go untraced.
        function
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake OpenCL object: its first word is its runtime's dispatch key.
    #[repr(C)]
    struct Object {
        key: *mut c_void,
    }

    #[test]
    fn each_runtime_s_objects_reach_that_runtime_s_function() {
        let ext = Ext::clEnqueueMemcpyINTEL;
        let (key_a, key_b) = (0x1000 as *mut c_void, 0x2000 as *mut c_void);
        let (fn_a, fn_b) = (0xa0 as *mut c_void, 0xb0 as *mut c_void);
        let mut platform_a = Object { key: key_a };
        let mut platform_b = Object { key: key_b };
        let name = ext.name().as_ptr();
        // SAFETY: fake objects whose first word is a key, and a NUL-terminated name.
        unsafe {
            assert_eq!(
                hand_out((&raw mut platform_a).cast(), name, fn_a),
                ext.wrapper()
            );
            // One runtime known: objects with another key still reach it.
            let mut stranger = Object {
                key: 0x3000 as *mut c_void,
            };
            assert_eq!(resolve_raw(ext, (&raw mut stranger).cast()), Some(fn_a));
            assert_eq!(
                hand_out((&raw mut platform_b).cast(), name, fn_b),
                ext.wrapper()
            );
            let mut queue_b = Object { key: key_b };
            assert_eq!(resolve_raw(ext, (&raw mut queue_b).cast()), Some(fn_b));
            // Two runtimes known: an object of neither is refused, not guessed.
            assert_eq!(resolve_raw(ext, (&raw mut stranger).cast()), None);
            // Not wrapped, or not provided: the runtime's answer goes back unchanged.
            assert_eq!(
                hand_out((&raw mut platform_a).cast(), c"clFooINTEL".as_ptr(), fn_a),
                fn_a
            );
            assert!(hand_out((&raw mut platform_a).cast(), name, core::ptr::null_mut()).is_null());
        }
    }

    fn resolve_raw(ext: Ext, object: *mut c_void) -> Option<*mut c_void> {
        resolve::<Option<*mut c_void>>(ext, object)
    }
}
