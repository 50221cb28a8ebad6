//! The View API (`pti_view.h`): buffered records of calls and device work, delivered to a
//! function in batches ([`Records`]), each record a typed [`Record`] over libpti's C layout
//! (`pti_abi::records`, the walk libpti's own buffers use).
//!
//! libpti has one pair of buffer callbacks per process, so at most one [`Views`] lives at a
//! time: a second [`Views::start`] fails with `PTI_ERROR_BAD_ARGUMENT`.
//! Buffers are allocated here (1 MiB, 8-byte aligned), handed to libpti, and freed once their
//! records were delivered. Records are delivered on the thread that completed the buffer (a
//! flush, or the thread whose buffer filled up).

use core::ffi::CStr;
use std::alloc::Layout;
use std::sync::{Arc, Mutex};

use pti_abi::*;

use crate::error::{Error, check};
use crate::ffi;

/// The size of each buffer lent to libpti.
const BUFFER_SIZE: usize = 1 << 20;

fn buffer_layout() -> Layout {
    Layout::from_size_align(BUFFER_SIZE, 8).expect("a valid layout")
}

type Handler = dyn Fn(Records<'_>) + Send + Sync;

/// The function records go to while a [`Views`] lives.
static HANDLER: Mutex<Option<Arc<Handler>>> = Mutex::new(None);

pub use pti_abi::records::{Record, Records};

/// Enabled views, their records going to one function. Dropping it disables them, flushes (the
/// last records are delivered) and stops delivering.
pub struct Views {
    kinds: Vec<pti_view_kind>,
}

impl Views {
    /// Sets libpti's buffer callbacks to deliver records to `f` and enables `kinds`. Fails with
    /// `PTI_ERROR_BAD_ARGUMENT` if another [`Views`] lives (one pair of buffer callbacks per
    /// process), or with libpti's answer to an enable (then nothing stays enabled).
    pub fn start(
        kinds: &[pti_view_kind],
        f: impl Fn(Records<'_>) + Send + Sync + 'static,
    ) -> Result<Views, Error> {
        {
            let mut handler = HANDLER.lock().unwrap_or_else(|e| e.into_inner());
            if handler.is_some() {
                return Err(Error::from_code(3));
            }
            *handler = Some(Arc::new(f));
        }
        let mut views = Views { kinds: Vec::new() };
        // SAFETY: two functions of the C signatures, callable from any thread.
        check(unsafe { ffi::libpti_ptiViewSetCallbacks(Some(requested), Some(completed)) })?;
        for kind in kinds {
            // SAFETY: plain values.
            check(unsafe { ffi::libpti_ptiViewEnable(*kind as u32) })?;
            views.kinds.push(*kind);
        }
        Ok(views)
    }

    /// Delivers every finished record now (`ptiFlushAllViews`).
    pub fn flush(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        check(unsafe { ffi::libpti_ptiFlushAllViews() })
    }
}

impl Drop for Views {
    fn drop(&mut self) {
        for kind in &self.kinds {
            // SAFETY: plain values.
            let _ = unsafe { ffi::libpti_ptiViewDisable(*kind as u32) };
        }
        let _ = self.flush();
        *HANDLER.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Pushes `id` on this thread's stack of external correlation IDs of `kind`: the calls the thread
/// makes until it is popped get a `PTI_VIEW_EXTERNAL_CORRELATION` record naming it.
pub fn push_external_correlation(kind: pti_view_external_kind, id: u64) -> Result<(), Error> {
    // SAFETY: plain values.
    check(unsafe { ffi::libpti_ptiViewPushExternalCorrelationId(kind as u32, id) })
}

/// Pops the last ID pushed for `kind` on this thread (`PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY` when
/// none is).
pub fn pop_external_correlation(kind: pti_view_external_kind) -> Result<u64, Error> {
    let mut id = 0u64;
    // SAFETY: a writable ID.
    check(unsafe { ffi::libpti_ptiViewPopExternalCorrelationId(kind as u32, &mut id) })?;
    Ok(id)
}

/// The name of function `api_id` of API group `group` (`pti_api_group_id`), from the stable ID
/// tables; `None` for an ID they do not name.
pub fn api_name(group: pti_api_group_id, api_id: u32) -> Option<&'static CStr> {
    let mut name: *const core::ffi::c_char = core::ptr::null();
    // SAFETY: a writable pointer; libpti writes a static string on success.
    let ok = unsafe { ffi::libpti_ptiViewGetApiIdName(group as u32, api_id, &mut name) } == 0;
    // SAFETY: libpti's names are NUL-terminated and live as long as the library.
    (ok && !name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}

/// How many records of `kind` were lost for want of buffer space, in the whole process.
pub fn dropped_count(kind: pti_view_kind) -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiViewGetDroppedRecordCount(kind as u32, &mut n) })?;
    Ok(n)
}

/// How many device records wait for their work to complete (delivered by a later flush).
pub fn pending_device_records() -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiViewGetPendingDeviceRecordCount(&mut n) })?;
    Ok(n)
}

/// `buffer_requested`: a new buffer (none, and libpti counts the records it cannot write, if
/// memory is short).
unsafe extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize) {
    // SAFETY: a non-zero size.
    let memory = unsafe { std::alloc::alloc(buffer_layout()) };
    // SAFETY: libpti passes two writable out-parameters.
    unsafe {
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER_SIZE };
    }
}

/// `buffer_completed`: delivers the buffer's records, then frees it.
unsafe extern "C" fn completed(buffer: *mut u8, size: usize, used: usize) {
    if buffer.is_null() {
        return;
    }
    let handler = HANDLER.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(handler) = handler {
        // SAFETY: a buffer `requested` allocated, of `size` bytes, `used` of them filled by
        // libpti with records, unchanged while they are delivered.
        let records = unsafe { Records::new(buffer, used.min(size)) };
        // A panic must not unwind into libpti.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(records)));
    }
    if size == BUFFER_SIZE {
        // SAFETY: allocated by `requested` with this layout, handed back once.
        unsafe { std::alloc::dealloc(buffer, buffer_layout()) };
    }
}
