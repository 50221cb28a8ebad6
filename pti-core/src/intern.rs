//! Interned names: the `const char*` that records and callbacks hand out (kernel names, the names
//! of memory operations) must stay valid until libpti is unloaded, so each distinct name is
//! copied once into memory that is never freed. Names are few (one per kernel and operation
//! kind), so the set stays small.

use core::ffi::CStr;
use std::collections::HashSet;
use std::ffi::CString;

use crate::sync::writer_lock::{ForkLock, WriterLock};

static NAMES: WriterLock<Option<HashSet<&'static CStr>>> = WriterLock::new(None);

/// The lock of the names, for the fork handlers.
pub(crate) fn fork_lock() -> &'static dyn ForkLock {
    &NAMES
}

/// The interned copy of `name`.
pub(crate) fn intern(name: &CStr) -> &'static CStr {
    let mut names = NAMES.lock();
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static CStr = Box::leak(CString::from(name).into_boxed_c_str());
    names.insert(leaked);
    leaked
}

/// The interned copy of `text`, cut at its first NUL if it has one.
pub(crate) fn intern_str(text: &str) -> &'static CStr {
    let bytes = text.split('\0').next().unwrap_or_default();
    // Cut at the first NUL, so there is none left: never the default.
    let owned = CString::new(bytes).unwrap_or_default();
    intern(&owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_share_one_copy() {
        let a = intern(c"vector_add");
        let b = intern_str("vector_add");
        assert_eq!(a.as_ptr(), b.as_ptr());
        assert_eq!(intern_str("cut\0here"), c"cut");
        assert_ne!(intern(c"other").as_ptr(), a.as_ptr());
    }
}
