//! The layer below libpti: the dispatch table the loader handed to `clInitLayer`, copied once.
//!
//! Wrappers and libpti's own runtime queries call through it, so libpti's queries never pass its
//! own wrappers (they are neither traced nor seen by subscribers).

use std::sync::OnceLock;

use pti_sys::opencl::cl_icd::cl_icd_dispatch;

use crate::api::ApiId;
use crate::callback::critical;
use crate::result::ResultCode;

/// Number of pointer-sized entries of `cl_icd_dispatch`.
pub(super) const TABLE_ENTRIES: usize =
    size_of::<cl_icd_dispatch>() / size_of::<*const core::ffi::c_void>();

static NEXT: OnceLock<cl_icd_dispatch> = OnceLock::new();

/// A table without entries: what wrappers see before the layer is initialised.
// SAFETY: every field is an `Option` of a function pointer, for which all zero bits are `None`,
// or an `intptr_t`, for which they are 0.
static EMPTY: cl_icd_dispatch = unsafe { core::mem::zeroed() };

/// The next layer's table (empty before [`install`]).
#[inline(always)]
pub(super) fn dispatch() -> &'static cl_icd_dispatch {
    NEXT.get().unwrap_or(&EMPTY)
}

/// Whether the layer has been initialised.
pub(super) fn installed() -> bool {
    NEXT.get().is_some()
}

/// Why a table could not be installed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum InstallError {
    /// A different table is installed already (a second loader in the process).
    OtherTable,
}

/// Copies the first `entries` entries of `target` (the rest stay empty) and makes them the next
/// layer. Installing the same table again is accepted; another one is refused.
///
/// # Safety
/// `target` must point at a dispatch table with at least `entries` readable entries.
pub(super) unsafe fn install(
    target: *const cl_icd_dispatch,
    entries: usize,
) -> Result<&'static cl_icd_dispatch, InstallError> {
    let mut copy = EMPTY;
    let n = entries.min(TABLE_ENTRIES);
    // SAFETY: the caller guarantees `n <= entries` readable pointer-sized entries at `target`;
    // `copy` has TABLE_ENTRIES >= n entries; both are arrays of pointer-sized fields.
    unsafe {
        core::ptr::copy_nonoverlapping(target.cast::<usize>(), (&raw mut copy).cast::<usize>(), n);
    }
    let installed = NEXT.get_or_init(|| copy);
    if same_table(installed, &copy) {
        Ok(installed)
    } else {
        Err(InstallError::OtherTable)
    }
}

fn same_table(a: &cl_icd_dispatch, b: &cl_icd_dispatch) -> bool {
    let words = |t: &cl_icd_dispatch| {
        // SAFETY: the table is TABLE_ENTRIES pointer-sized fields, read as integers.
        unsafe {
            core::slice::from_raw_parts(
                (t as *const cl_icd_dispatch).cast::<usize>(),
                TABLE_ENTRIES,
            )
        }
        .to_vec()
    };
    words(a) == words(b)
}

/// Reports a call that found no next-layer entry: the wrapper then fails the call.
#[cold]
pub(super) fn missing(api_id: ApiId) {
    let name = crate::ids::name(crate::api::ApiGroup::OpenCl, api_id)
        .map_or("an OpenCL function".into(), |n| n.to_string_lossy());
    critical::raise(
        ResultCode::ErrorTracingNotInitialized,
        format_args!(
            "{name} was called through libpti's OpenCL layer, but the layer below provides no \
             entry for it; the call fails with CL_INVALID_OPERATION"
        ),
    );
}

/// The function-pointer type inside an `Option` alias of `opencl-sys` (`clX_t`): what overrides get
/// as their `next_fn`.
pub(super) trait Entry {
    /// The function-pointer type.
    type Fn: Copy;
}

impl<F: Copy> Entry for Option<F> {
    type Fn = F;
}

/// The next layer's entry for a function typed by the `opencl-sys` alias `T`.
pub(super) type Next<T> = <T as Entry>::Fn;
