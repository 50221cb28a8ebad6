//! Kernel names as Intel PTI writes them: demangled.
//!
//! Intel PTI demangles kernel names (Itanium C++ ABI, as `abi::__cxa_demangle` does) and drops
//! the `typeinfo name for ` that SYCL's kernel names (the type of a lambda) demangle to. libpti's
//! own face keeps the driver's names; the Intel face turns demangling on when its tool sets
//! buffer callbacks, process-wide (the faces share one engine and its records).
//!
//! The C++ runtime's `__cxa_demangle` is used when the process has it (a C++ program has), so
//! the text is what Intel's library writes; else the `cpp_demangle` crate. A name that does not
//! demangle is kept as it is. Each name is demangled once (names are interned).

use core::ffi::{CStr, c_char, c_int};
use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::intern::intern_str;

static ON: AtomicBool = AtomicBool::new(false);

/// From now on, kernel records carry demangled names (the Intel face's default).
pub fn demangle_kernel_names() {
    ON.store(true, Ordering::Relaxed);
}

/// `name` as records write it now: demangled once [`demangle_kernel_names`] was called. Asked
/// for every kernel record, so the switch's check is inlined and the rest is not.
#[inline]
pub(crate) fn kernel_name(name: &'static CStr) -> &'static CStr {
    if !ON.load(Ordering::Relaxed) {
        return name;
    }
    remembered_demangled(name)
}

/// [`kernel_name`] once the switch is on: each name demangled once, then remembered.
#[inline(never)]
fn remembered_demangled(name: &'static CStr) -> &'static CStr {
    static SEEN: Mutex<Option<HashMap<usize, &'static CStr>>> = Mutex::new(None);
    let key = name.as_ptr() as usize;
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let map = seen.get_or_insert_with(HashMap::new);
    if let Some(done) = map.get(&key) {
        return done;
    }
    let done = demangled(name).map_or(name, |text| intern_str(&text));
    map.insert(key, done);
    done
}

/// The demangled text of `name`, without a leading `typeinfo name for `; None if it does not
/// demangle.
fn demangled(name: &CStr) -> Option<String> {
    let text = cxa_demangle(name).or_else(|| {
        let symbol = cpp_demangle::Symbol::new(name.to_bytes()).ok()?;
        symbol
            .demangle(&cpp_demangle::DemangleOptions::default())
            .ok()
    })?;
    Some(
        text.strip_prefix("typeinfo name for ")
            .unwrap_or(&text)
            .to_string(),
    )
}

/// `char* __cxa_demangle(const char*, char*, size_t*, int*)`.
type CxaDemangle =
    unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// The process's C++ runtime demangler, looked up once.
fn cxa() -> Option<CxaDemangle> {
    static CXA: OnceLock<usize> = OnceLock::new();
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the loaded objects.
    let address = *CXA.get_or_init(|| unsafe {
        libc::dlsym(libc::RTLD_DEFAULT, c"__cxa_demangle".as_ptr()) as usize
    });
    // SAFETY: a non-NULL `__cxa_demangle` has this signature (the Itanium C++ ABI).
    (address != 0).then(|| unsafe { core::mem::transmute::<usize, CxaDemangle>(address) })
}

fn cxa_demangle(name: &CStr) -> Option<String> {
    demangle_with(cxa()?, name)
}

fn demangle_with(demangle: CxaDemangle, name: &CStr) -> Option<String> {
    let mut status: c_int = -1;
    // SAFETY: a NUL-terminated name; NULL buffer and length ask for a malloc'd result.
    let out = unsafe {
        demangle(
            name.as_ptr(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            &mut status,
        )
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: on success the result is a NUL-terminated string from malloc, freed once here.
    let text = unsafe { CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    unsafe { libc::free(out.cast()) };
    (status == 0).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_demangle_as_intel_pti_writes_them() {
        let d = |s: &CStr| demangled(s);
        assert_eq!(
            d(c"_Z4vaddPKfS0_Pf").as_deref(),
            Some("vadd(float const*, float const*, float*)")
        );
        // SYCL's kernel names are a lambda's type: Intel PTI drops "typeinfo name for ".
        assert_eq!(
            d(c"_ZTSZ4mainEUlvE_").as_deref(),
            Some("main::{lambda()#1}")
        );
        assert_eq!(d(c"vadd"), None, "a C name stays as it is");
    }

    /// The fallback (a process without a C++ runtime) writes what the runtime would.
    #[test]
    fn the_crate_demangles_as_the_cpp_runtime_does() {
        // SAFETY: dlopen and dlsym with NUL-terminated names; the library stays loaded.
        let runtime = unsafe {
            let lib = libc::dlopen(c"libstdc++.so.6".as_ptr(), libc::RTLD_NOW);
            assert!(!lib.is_null(), "libstdc++.so.6 is needed to compare with");
            let f = libc::dlsym(lib, c"__cxa_demangle".as_ptr());
            assert!(!f.is_null());
            core::mem::transmute::<*mut core::ffi::c_void, CxaDemangle>(f)
        };
        for name in [
            c"_Z4vaddPKfS0_Pf",
            c"_ZTSZ4mainEUlvE_",
            c"_ZN2ns6kernelIiEEvT_",
        ] {
            let ours = cpp_demangle::Symbol::new(name.to_bytes())
                .unwrap()
                .demangle(&cpp_demangle::DemangleOptions::default())
                .unwrap();
            assert_eq!(Some(ours), demangle_with(runtime, name), "{name:?}");
        }
    }
}
