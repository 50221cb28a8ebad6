//! libpti's own questions to the dynamic linker: which objects are mapped, which object holds an
//! address, and pinning an object so that it is never unmapped.
//!
//! Every question is asked under one lock, [`LINKER`], which the fork handlers hold across
//! `fork()`. The reason is glibc's: `dl_iterate_phdr` takes the linker's load lock, and a child
//! forked while another thread was inside it inherits that lock held, so the child's first walk
//! waits for ever (`tests/c/fork_exit.c` found it with a flush of the OpenCL backend;
//! `pti-core/tests/fork.rs` forks while flushes walk). With the lock held across `fork()`, no
//! libpti thread is inside the linker when the child is made. Backends ask through this module
//! only, never `dl_iterate_phdr` or `dladdr` themselves.
//!
//! Touches only the dynamic linker; takes no other lock of libpti and runs no tool code.

use core::ffi::{CStr, c_void};

use crate::sync::writer_lock::{ForkLock, WriterLock};

/// Held around every question to the dynamic linker, and across `fork()` (see the module docs).
static LINKER: WriterLock<()> = WriterLock::new(());

/// The lock the fork handlers take.
pub(crate) fn fork_lock() -> &'static dyn ForkLock {
    &LINKER
}

/// Paths of the objects mapped into the process (the program itself, whose name is empty, left
/// out).
pub(crate) fn mapped_objects() -> Vec<String> {
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: glibc passes a valid `dl_phdr_info` for each object, and `data` is the vector
        // passed to dl_iterate_phdr below, used by this thread only.
        let (info, paths) = unsafe { (&*info, &mut *data.cast::<Vec<String>>()) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a NUL-terminated path owned by the linker for the object's lifetime.
            let name = unsafe { CStr::from_ptr(info.dlpi_name) };
            if !name.is_empty() {
                paths.push(name.to_string_lossy().into_owned());
            }
        }
        0
    }
    let mut paths: Vec<String> = Vec::new();
    let _linker = LINKER.lock();
    // SAFETY: `collect` only reads the info glibc gives and appends to `paths`.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut paths).cast()) };
    paths
}

/// The file name (last path component) of a mapped object's path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether an object whose file name starts with `prefix` (`libsycl.so`) is mapped.
pub(crate) fn is_mapped(prefix: &str) -> bool {
    mapped_objects()
        .iter()
        .any(|path| file_name(path).starts_with(prefix))
}

/// The object holding `address`: its base address and path (`dli_fbase`, `dli_fname`).
pub(crate) fn object_of(address: *const c_void) -> Option<(*mut c_void, &'static CStr)> {
    let _linker = LINKER.lock();
    object_of_locked(address)
}

fn object_of_locked(address: *const c_void) -> Option<(*mut c_void, &'static CStr)> {
    let mut info = core::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the linker's tables and writes `info`.
    if unsafe { libc::dladdr(address, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded and filled `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the linker. Callers use it for objects that stay
    // mapped (pinned ones, libpti's own, which is NODELETE) or before anything can unload them.
    Some((info.dli_fbase, unsafe { CStr::from_ptr(info.dli_fname) }))
}

/// Makes every object that one of `addresses` points into undeletable (`RTLD_NODELETE`): it stays
/// mapped after the program closed every handle to it. Returns how many objects it pinned.
pub(crate) fn pin_objects_of(addresses: impl Iterator<Item = *const c_void>) -> usize {
    let _linker = LINKER.lock();
    let mut bases: Vec<*mut c_void> = Vec::new();
    for address in addresses.filter(|a| !a.is_null()) {
        let Some((base, path)) = object_of_locked(address) else {
            continue;
        };
        if bases.contains(&base) {
            continue;
        }
        bases.push(base);
        // SAFETY: a NUL-terminated path of an object that is loaded; RTLD_NOLOAD never loads
        // anything, and RTLD_NODELETE keeps it mapped after every handle is closed. The handle
        // is deliberately never closed.
        unsafe {
            libc::dlopen(
                path.as_ptr(),
                libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            )
        };
    }
    bases.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_library_is_mapped_and_holds_its_functions() {
        assert!(is_mapped("libc.so"));
        assert!(!is_mapped("libnot-a-library-of-this-process.so"));
        let (_, path) = object_of(libc::getpid as *const c_void).expect("getpid is in libc");
        assert!(file_name(&path.to_string_lossy()).starts_with("libc.so"));
    }
}
