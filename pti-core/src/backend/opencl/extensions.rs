//! Extension functions (USM, host pipes, command buffers, ...): the runtime hands out their
//! addresses through `clGetExtensionFunctionAddress[ForPlatform]`, so they never pass the
//! dispatch table. The hook of those two calls records the runtime's address and hands out
//! libpti's wrapper instead.
//!
//! Each runtime gets a *slot*, and each slot a wrapper of its own (the generated wrappers are
//! generic over the slot), so the address a program holds says which runtime's function to call:
//! nothing is guessed from the call's arguments. A runtime is told apart by its platform's
//! dispatch pointer (the first word of every ICD object, the *key*); an address asked for without
//! a platform is kept under [`ANY`]. Up to [`RUNTIMES`] runtimes per function get wrappers; a
//! further one's address is handed out unwrapped (its calls are not traced).

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicPtr, Ordering};

use super::next::{Entry, Next};
use super::wrappers::Ext;
use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Runtimes per extension function that get a wrapper of their own.
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

/// Serialises registrations (wrappers read without a lock).
static REGISTER: WriterLock<()> = WriterLock::new(());

/// The lock of registrations, for the fork handlers.
pub(super) fn fork_lock() -> &'static dyn ForkLock {
    &REGISTER
}

/// Remembers that runtime `key` implements `ext` at `function`; returns its slot, or `None`
/// when every slot is taken by other runtimes.
fn register(ext: Ext, key: *mut c_void, function: *mut c_void) -> Option<usize> {
    let _guard = REGISTER.lock();
    let slots = &TABLE[ext as usize];
    let slot = slots
        .iter()
        .position(|s| s.key.load(Ordering::Relaxed) == key)
        .or_else(|| {
            slots
                .iter()
                .position(|s| s.key.load(Ordering::Relaxed).is_null())
        })?;
    // The function first: a wrapper that finds the key set (Acquire) finds its function.
    slots[slot].function.store(function, Ordering::Relaxed);
    slots[slot].key.store(key, Ordering::Release);
    Some(slot)
}

/// The runtime's function for `ext` in `slot`, typed by its `opencl-sys` alias `T`; `None` if
/// no runtime was registered there (a wrapper address the program cannot have been given).
pub(super) fn entry<T: Entry>(ext: Ext, slot: usize) -> Option<Next<T>> {
    const { assert!(size_of::<Next<T>>() == size_of::<*mut c_void>()) };
    let s = TABLE[ext as usize].get(slot)?;
    if s.key.load(Ordering::Acquire).is_null() {
        return None;
    }
    let function = s.function.load(Ordering::Relaxed);
    // SAFETY: `Next<T>` is the function-pointer type of the extension function whose runtime
    // address this is (registered addresses are never NULL); sizes are checked above.
    Some(unsafe { core::mem::transmute_copy::<*mut c_void, Next<T>>(&function) })
}

/// What `clGetExtensionFunctionAddress[ForPlatform]` returns to the program: libpti's wrapper
/// when it wraps `name` and the runtime has it, else the runtime's answer.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `platform` is NULL or a platform the runtime gave (an ICD
/// object, which begins with its dispatch pointer; the loader reads it for every platform call).
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
        unsafe { platform.cast::<*mut c_void>().read() }
    };
    register(ext, key, function)
        .and_then(|slot| ext.wrapper(slot))
        .unwrap_or(function)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake platform: its first word is its runtime's dispatch key.
    #[repr(C)]
    struct Platform {
        key: *mut c_void,
    }

    fn entry_raw(ext: Ext, slot: usize) -> Option<*mut c_void> {
        entry::<Option<*mut c_void>>(ext, slot)
    }

    #[test]
    fn each_runtime_gets_its_own_wrapper() {
        let ext = Ext::clEnqueueMemFillINTEL;
        let name = ext.name().as_ptr();
        let mut a = Platform {
            key: 0x1000 as *mut c_void,
        };
        let mut b = Platform {
            key: 0x2000 as *mut c_void,
        };
        let (fn_a, fn_b, fn_any) = (
            0xa0 as *mut c_void,
            0xb0 as *mut c_void,
            0xc0 as *mut c_void,
        );
        // SAFETY: fake platforms whose first word is a key, and a NUL-terminated name.
        let (wa, wb, wa2, wany) = unsafe {
            (
                hand_out((&raw mut a).cast(), name, fn_a),
                hand_out((&raw mut b).cast(), name, fn_b),
                hand_out((&raw mut a).cast(), name, fn_a),
                hand_out(core::ptr::null_mut(), name, fn_any),
            )
        };
        assert_eq!(
            (wa, wb, wa2, wany),
            (
                ext.wrapper(0).unwrap(),
                ext.wrapper(1).unwrap(),
                wa,
                ext.wrapper(2).unwrap()
            )
        );
        assert_eq!(
            [entry_raw(ext, 0), entry_raw(ext, 1), entry_raw(ext, 2)],
            [Some(fn_a), Some(fn_b), Some(fn_any)]
        );
        assert_eq!(entry_raw(ext, 3), None);
        assert_eq!(entry_raw(ext, RUNTIMES), None);
        // SAFETY: as above.
        unsafe {
            // Not wrapped, or not provided: the runtime's answer goes back unchanged.
            assert_eq!(
                hand_out((&raw mut a).cast(), c"clFooINTEL".as_ptr(), fn_a),
                fn_a
            );
            assert!(hand_out((&raw mut a).cast(), name, core::ptr::null_mut()).is_null());
        }
    }

    #[test]
    fn the_generator_made_a_wrapper_for_every_slot() {
        for ext in Ext::ALL {
            assert!(ext.wrapper(RUNTIMES - 1).is_some() && ext.wrapper(RUNTIMES).is_none());
        }
    }

    #[test]
    fn runtimes_beyond_the_slots_are_handed_their_own_function() {
        let ext = Ext::clEnqueueMemsetINTEL;
        let name = ext.name().as_ptr();
        let mut platforms: Vec<Platform> = (1..=RUNTIMES + 1)
            .map(|i| Platform {
                key: (i * 0x100) as *mut c_void,
            })
            .collect();
        let handed: Vec<*mut c_void> = platforms
            .iter_mut()
            // SAFETY: fake platforms, NUL-terminated name.
            .map(|p| unsafe { hand_out((&raw mut *p).cast(), name, 0xf0 as *mut c_void) })
            .collect();
        for (slot, h) in handed.iter().take(RUNTIMES).enumerate() {
            assert_eq!(Some(*h), ext.wrapper(slot));
        }
        assert_eq!(handed[RUNTIMES], 0xf0 as *mut c_void);
    }
}
