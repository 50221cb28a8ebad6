//! The extension route: functions a program obtains through `zeDriverGetExtensionFunctionAddress`.
//!
//! Functions newer than the loader (on loader 1.8.12, every function of spec 1.5 and later) and
//! Intel's own extensions (`zex*`, the older `…Exp` graph functions) reach the program as the
//! driver's own addresses, so the loader's tracing layer never sees their calls. libpti hands out
//! its wrapper instead (`callbacks::extension_wrappers`, generated for the functions of
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
use crate::callback::critical;
use crate::result::ResultCode;

/// Wrapper copies per function (the generator's `SLOTS`, which emits `::<0>` to `::<3>`).
pub(super) const SLOTS: usize = 4;

/// Functions with wrappers.
const FUNCTIONS: usize = callbacks::EXTENSION_FUNCTIONS;

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

/// The driver libpti saw last (from `zeDriverGet`, or a lookup of an extension function), to
/// look up extension functions for its own use.
static DRIVER: AtomicPtr<c_void> = AtomicPtr::new(core::ptr::null_mut());

/// Remembers the program's `driver` (the first one it uses keeps the place).
pub(super) fn saw_driver(driver: *mut c_void) {
    if !driver.is_null() {
        let _ = DRIVER.compare_exchange(
            core::ptr::null_mut(),
            driver,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// The driver's extension function `name`, typed `F` (its `pti-sys` alias, an `Option`), for
/// libpti's own calls: the address the driver gave the program, else asked of the driver.
pub(super) fn driver_function<F: Copy>(name: &CStr) -> Option<F> {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    let wrappers = callbacks::extension_wrappers();
    let given = wrappers.iter().position(|(n, _)| *n == name).and_then(|f| {
        ORIGINALS[f]
            .iter()
            .map(|o| o.load(Ordering::Acquire))
            .find(|a| !a.is_null())
    });
    let address = match given {
        Some(a) => a,
        None => {
            let driver = DRIVER.load(Ordering::Acquire);
            let lookup = super::tracer::loader()?.zeDriverGetExtensionFunctionAddress?;
            let mut address: *mut c_void = core::ptr::null_mut();
            // SAFETY: a driver the program uses, a NUL-terminated name, a writable address; an
            // internal call, so libpti hands out nothing for it.
            let status = super::tracer::internal(|| unsafe {
                lookup(driver.cast(), name.as_ptr(), &mut address)
            });
            if status != pti_sys::level_zero::ZE_RESULT_SUCCESS || address.is_null() {
                return None;
            }
            address
        }
    };
    // SAFETY: `F` is the `Option` of the function-pointer type of `name`, as the caller
    // promises; the address is the driver's function of that name.
    Some(unsafe { core::mem::transmute_copy::<*mut c_void, F>(&address) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_driver_address_keeps_its_slot_and_a_fifth_is_handed_out_unwrapped() {
        let name = c"zeCommandListHostSynchronize";
        let wrappers = callbacks::extension_wrappers();
        let function = wrappers.iter().position(|(n, _)| *n == name).unwrap();
        // Fake driver addresses: handed out, never called.
        let address = |i: usize| (0x1000 * (i + 1)) as *mut c_void;
        for i in 0..SLOTS {
            assert_eq!(
                hand_out(name, address(i)),
                wrappers[function].1[i].cast_mut()
            );
        }
        // The same address again gets the same wrapper; a fifth driver's is left as it is.
        assert_eq!(
            hand_out(name, address(1)),
            wrappers[function].1[1].cast_mut()
        );
        assert_eq!(hand_out(name, address(SLOTS)), address(SLOTS));
        // Names libpti does not wrap, and NULL, pass through.
        assert_eq!(hand_out(c"zeSomethingElse", address(0)), address(0));
        assert!(hand_out(name, core::ptr::null_mut()).is_null());
        // SAFETY: `zeCommandListHostSynchronize_t` is the alias of this function.
        let original: pti_sys::level_zero::zeCommandListHostSynchronize_t =
            unsafe { original(function, 2) };
        assert_eq!(original.map(|f| f as *mut c_void), Some(address(2)));
    }
}
