//! Walking the records of a buffer, for `ptiViewGetNextRecord` and pti-core's buffers: the walk
//! and the typed [`Record`]s live in the leaf crate `pti-abi` (`pti_abi::records`), shared with
//! the `libpti` crate; here its refusals become libpti's [`Error::BadArgument`].

use crate::result::Error;

pub(crate) use pti_abi::records::first_offset;
pub use pti_abi::records::{Record, Records};

/// The offset of the record after the one at `current` (the first record when `None`), or
/// `None` at the end of the records, in the `len` bytes at `base` (see
/// [`pti_abi::records::next_record_raw`]); a position or bytes holding no record are
/// [`Error::BadArgument`].
///
/// # Safety
/// `base` must be readable for `len` bytes; the bytes of the records' `_view_kind` fields must be
/// initialised (any other byte need not be).
pub unsafe fn next_record_raw(
    base: *const u8,
    len: usize,
    current: Option<usize>,
) -> Result<Option<usize>, Error> {
    // SAFETY: the caller's contract is the walk's.
    unsafe { pti_abi::records::next_record_raw(base, len, current) }
        .map_err(|e| Error::BadArgument(e.0))
}

/// [`next_record_raw`] over a byte slice (whose bytes are all initialised).
pub fn next_record(bytes: &[u8], current: Option<usize>) -> Result<Option<usize>, Error> {
    // SAFETY: a slice is readable and initialised for its whole length.
    unsafe { next_record_raw(bytes.as_ptr(), bytes.len(), current) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResultCode;

    #[test]
    fn a_position_that_holds_no_record_is_a_bad_argument() {
        let bytes = [0u64; 4];
        // SAFETY: reinterpreting initialised u64s as bytes.
        let bytes = unsafe { core::slice::from_raw_parts(bytes.as_ptr().cast::<u8>(), 32) };
        let e = next_record(bytes, Some(4)).unwrap_err();
        assert_eq!(e.code(), ResultCode::ErrorBadArgument);
    }
}
