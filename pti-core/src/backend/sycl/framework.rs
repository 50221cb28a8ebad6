//! The XPTI framework as libpti's subscriber uses it: its functions, resolved by name from the
//! framework the runtime loaded (libpti does not link it), and readers of what events carry:
//! payloads (name, source file, line) and metadata (key-value pairs, a C++ map that pti-sys's
//! accessor copies out).
//!
//! Every reader tolerates what it does not expect (NULL pointers, unknown metadata types,
//! unknown IDs) by answering `None`: XPTI data is the runtime's, and its shape changes between
//! versions.

#![allow(non_snake_case)] // the framework functions keep their C names

use core::ffi::{CStr, c_char, c_void};
use std::sync::OnceLock;

use pti_sys::xpti::*;

/// The framework functions libpti calls.
pub(super) struct Framework {
    pub(super) xptiRegisterStream: xptiRegisterStream_fn,
    pub(super) xptiRegisterCallback: xptiRegisterCallback_fn,
    xptiQueryPayload: xptiQueryPayload_fn,
    xptiQueryMetadata: xptiQueryMetadata_fn,
    xptiLookupString: xptiLookupString_fn,
    xptiLookupObject: xptiLookupObject_fn,
}

static FRAMEWORK: OnceLock<Option<Framework>> = OnceLock::new();

/// The framework, resolved on first use; `None` if the functions cannot be found (a framework
/// too old or too new for libpti: reported by the caller).
pub(super) fn get() -> Option<&'static Framework> {
    FRAMEWORK.get_or_init(resolve).as_ref()
}

/// Looks the functions up in the dispatcher `XPTI_FRAMEWORK_DISPATCHER` names (already loaded by
/// the runtime, so it is only found, never loaded), else anywhere in the process.
fn resolve() -> Option<Framework> {
    let mut handle = libc::RTLD_DEFAULT;
    if let Some(path) = std::env::var_os("XPTI_FRAMEWORK_DISPATCHER") {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(path) = std::ffi::CString::new(path.as_bytes()) {
            // SAFETY: a NUL-terminated path; RTLD_NOLOAD only finds an object already loaded
            // (libpti keeps the reference: the framework outlives its subscribers).
            let found = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
            if !found.is_null() {
                handle = found;
            }
        }
    }
    let symbol = |name: &CStr| {
        // SAFETY: a live handle (or RTLD_DEFAULT) and a NUL-terminated name.
        let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!address.is_null()).then_some(address)
    };
    macro_rules! function {
        ($name:ident: $ty:ty) => {{
            let address = symbol(
                CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()).ok()?,
            )?;
            // SAFETY: the framework exports `$name` with the signature `$ty` declares
            // (pti-sys's hand-written declaration of the XPTI header).
            unsafe { core::mem::transmute::<*mut c_void, $ty>(address) }
        }};
    }
    Some(Framework {
        xptiRegisterStream: function!(xptiRegisterStream: xptiRegisterStream_fn),
        xptiRegisterCallback: function!(xptiRegisterCallback: xptiRegisterCallback_fn),
        xptiQueryPayload: function!(xptiQueryPayload: xptiQueryPayload_fn),
        xptiQueryMetadata: function!(xptiQueryMetadata: xptiQueryMetadata_fn),
        xptiLookupString: function!(xptiLookupString: xptiLookupString_fn),
        xptiLookupObject: function!(xptiLookupObject: xptiLookupObject_fn),
    })
}

/// A C string the framework or runtime owns, if not NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that lives at least as long as `'a`.
unsafe fn c_str<'a>(p: *const c_char) -> Option<&'a CStr> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

/// Where an event comes from: its payload's name, source file and line.
pub(super) struct Origin<'a> {
    pub(super) name: Option<&'a CStr>,
    pub(super) source_file: Option<&'a CStr>,
    pub(super) line: u32,
}

/// A metadata value, read by its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Value<'a> {
    Text(&'a [u8]),
    Number(u64),
}

impl<'a> Value<'a> {
    pub(super) fn number(self) -> Option<u64> {
        match self {
            Value::Number(n) => Some(n),
            Value::Text(_) => None,
        }
    }
}

/// Most metadata entries read from one event (the runtime sends fewer than ten).
const MAX_ENTRIES: usize = 32;

impl Framework {
    /// The payload of `event`.
    ///
    /// # Safety
    /// `event` is an event the framework passed to a callback that is still running.
    pub(super) unsafe fn origin<'a>(&self, event: *mut trace_event_data_t) -> Option<Origin<'a>> {
        if event.is_null() {
            return None;
        }
        // SAFETY: the caller's contract; the framework returns its payload or NULL.
        let payload = unsafe { (self.xptiQueryPayload)(event) };
        if payload.is_null() {
            return None;
        }
        // SAFETY: a payload of the framework's, whose strings it keeps registered for the life of
        // the process.
        unsafe {
            Some(Origin {
                name: c_str((*payload).name),
                source_file: c_str((*payload).source_file),
                line: (*payload).line_no,
            })
        }
    }

    /// Calls `each(key, value)` for the metadata entries of `event` that can be read.
    ///
    /// The map is read without the framework's lock. The runtime adds an event's metadata when it
    /// makes the event, before notifying; an event that several submissions share (one source
    /// location) gets no new keys later, as `xptiAddMetadata` refuses duplicates. What remains
    /// is the first submissions from one location on two threads at once, one adding keys while
    /// the other's notification reads them: libpti accepts that window (see ARCHITECTURE.md).
    ///
    /// # Safety
    /// As [`Framework::origin`], and no thread adds keys to the event's metadata meanwhile.
    pub(super) unsafe fn metadata<'a>(
        &self,
        event: *mut trace_event_data_t,
        mut each: impl FnMut(&'a CStr, Value<'a>),
    ) {
        if event.is_null() {
            return;
        }
        // SAFETY: the caller's contract.
        let map = unsafe { (self.xptiQueryMetadata)(event) };
        let mut keys = [0 as string_id_t; MAX_ENTRIES];
        let mut values = [0 as object_id_t; MAX_ENTRIES];
        // SAFETY: the event's metadata map (or NULL), not changed meanwhile (the caller's
        // contract); room for MAX_ENTRIES entries.
        let n = unsafe {
            pti_xpti_metadata_entries(map, keys.as_mut_ptr(), values.as_mut_ptr(), MAX_ENTRIES)
        };
        for i in 0..n.min(MAX_ENTRIES) {
            // SAFETY: IDs the framework registered; it returns NULL / an empty object for others.
            let (key, object) = unsafe {
                (
                    c_str((self.xptiLookupString)(keys[i])),
                    (self.xptiLookupObject)(values[i]),
                )
            };
            let (Some(key), Some(value)) = (key, read(object)) else {
                continue;
            };
            each(key, value);
        }
    }
}

/// A metadata object's value, if its type is one libpti reads.
fn read<'a>(object: object_data_t) -> Option<Value<'a>> {
    if object.data.is_null() || object.size == 0 {
        return None;
    }
    // SAFETY: the framework keeps `size` bytes at `data` for the life of the process.
    let bytes: &'a [u8] = unsafe { core::slice::from_raw_parts(object.data.cast(), object.size) };
    match object.type_ {
        metadata_type::STRING => Some(Value::Text(
            bytes.split(|b| *b == 0).next().unwrap_or(bytes),
        )),
        metadata_type::SIGNED_INTEGER
        | metadata_type::UNSIGNED_INTEGER
        | metadata_type::BOOLEAN
            if bytes.len() <= 8 =>
        {
            let mut le = [0u8; 8];
            le[..bytes.len()].copy_from_slice(bytes);
            Some(Value::Number(u64::from_le_bytes(le)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(type_: u8, bytes: &'static [u8]) -> object_data_t {
        object_data_t {
            size: bytes.len(),
            data: bytes.as_ptr().cast(),
            type_,
        }
    }

    #[test]
    fn metadata_values_are_read_by_type_and_odd_ones_skipped() {
        assert_eq!(
            read(object(metadata_type::STRING, b"AMD EPYC")),
            Some(Value::Text(b"AMD EPYC"))
        );
        assert_eq!(
            read(object(metadata_type::STRING, b"cut\0here")),
            Some(Value::Text(b"cut"))
        );
        assert_eq!(
            read(object(
                metadata_type::UNSIGNED_INTEGER,
                &[3, 0, 0, 0, 0, 0, 0, 0]
            )),
            Some(Value::Number(3))
        );
        assert_eq!(
            read(object(metadata_type::BOOLEAN, &[1])),
            Some(Value::Number(1))
        );
        assert_eq!(read(object(metadata_type::SIGNED_INTEGER, &[0; 16])), None);
        assert_eq!(read(object(metadata_type::FLOATING, &[0; 8])), None);
        assert_eq!(read(object(metadata_type::BINARY, b"xy")), None);
        assert_eq!(
            read(object_data_t {
                size: 4,
                data: core::ptr::null(),
                type_: metadata_type::STRING
            }),
            None
        );
    }
}
