//! The extension route: functions a program obtains through `zeDriverGetExtensionFunctionAddress`.
//!
//! Functions newer than the loader (on loader 1.8.12, every function of spec 1.5 and later) and
//! Intel's `zex*` extensions reach the program as the driver's own addresses, so the loader's
//! tracing layer never sees their calls. libpti hands out its wrapper instead
//! (`callbacks::extension_wrappers`, generated for the functions of
//! `xtask::level_zero::EXTENSION_ROUTE`): the wrapper runs the same prologue and epilogue as the
//! tracing layer would, around the driver's function.
//!
//! A wrapper cannot carry data, so each function has [`SLOTS`] copies, one per driver address it
//! may stand for (several drivers may each serve the function): the first request for a
//! driver's address takes a free slot and keeps the address there for the life of the process.
//! Beyond `SLOTS` drivers, the driver's address is handed out unwrapped, its calls untraced; a
//! critical event says so once.
//!
//! This module touches the generated callbacks and critical events only.

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use super::callbacks;
use crate::critical;
use crate::result::ResultCode;

/// Wrapper copies per function (the generator emits `::<0>` to `::<3>`).
pub(super) const SLOTS: usize = 4;

/// Functions with wrappers (the length of `callbacks::extension_wrappers()`).
const FUNCTIONS: usize = 10;

/// `ORIGINALS[function][slot]`: the driver address a wrapper stands for; NULL while free.
static ORIGINALS: [[AtomicPtr<c_void>; SLOTS]; FUNCTIONS] =
    [const { [const { AtomicPtr::new(core::ptr::null_mut()) }; SLOTS] }; FUNCTIONS];

/// The driver's function that slot `slot` of wrapped function `function` stands for, typed `F`
/// (its `pti-sys` alias, an `Option`): `None` if the slot is free (a wrapper called before it
/// was handed out, which cannot happen: the slot is filled before the wrapper leaves libpti).
///
/// # Safety
/// `F` must be the `Option` of the function-pointer type of function `function`.
pub(super) unsafe fn original<F: Copy>(function: usize, slot: usize) -> F {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    let address = ORIGINALS[function][slot].load(Ordering::Acquire);
    // SAFETY: `F` is an `Option` of a function pointer, whose NULL is `None`, as the caller
    // promises; the slot only ever holds NULL or the driver's address of that function.
    unsafe { core::mem::transmute_copy::<*mut c_void, F>(&address) }
}

/// What the program gets for the driver's `address` of extension function `name`: libpti's
/// wrapper if libpti wraps `name` and has a slot for this address, else `address` itself.
pub(super) fn hand_out(name: &CStr, address: *mut c_void) -> *mut c_void {
    if address.is_null() {
        return address;
    }
    let wrappers = callbacks::extension_wrappers();
    let Some(function) = wrappers.iter().position(|(n, _)| *n == name) else {
        return address;
    };
    for (slot, original) in ORIGINALS[function].iter().enumerate() {
        let taken = match original.compare_exchange(
            core::ptr::null_mut(),
            address,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(current) => current == address,
        };
        if taken {
            return wrappers[function].1[slot].cast_mut();
        }
    }
    static REPORTED: AtomicBool = AtomicBool::new(false);
    if !REPORTED.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "{} Level Zero drivers serve {}: libpti wraps the first {SLOTS}; calls through the \
                 others' addresses are not traced",
                SLOTS + 1,
                name.to_string_lossy()
            ),
        );
    }
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_table_matches_the_generated_wrappers() {
        assert_eq!(callbacks::extension_wrappers().len(), FUNCTIONS);
    }
}
