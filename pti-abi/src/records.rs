//! Walking the records of a buffer: the logic of `ptiViewGetNextRecord`, and [`Records`], the
//! iterator Rust code uses (pti-core's buffers, the `libpti` crate's views).
//!
//! Records lie back to back from the first 8-aligned address of the buffer ([`first_offset`]);
//! each one's `_view_kind` gives its size. The walk reads nothing but 4-byte kinds within the
//! given length, so arbitrary bytes, lengths and positions yield an answer, never an
//! out-of-bounds read: a record that runs past the end or an unknown kind is
//! [`NotARecord`]; the end of the bytes, or a record of kind `PTI_VIEW_INVALID` (a zeroed
//! tail), ends the walk. It works on raw memory ([`next_record_raw`]) because a buffer's bytes
//! are not all initialised (the bytes before the first record, the padding inside records), so no
//! `&[u8]` may cover them.

use core::marker::PhantomData;
use core::mem::size_of;

use crate::*;

/// Why the bytes or position given to the walk hold no record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotARecord(pub &'static str);

/// Offset of the first record in a buffer that starts at `address`.
#[inline]
pub fn first_offset(address: usize) -> usize {
    address.wrapping_neg() & 7
}

/// What a 4-byte `_view_kind` says of its record: its size, or one of the markers below.
type SizeEntry = u16;
/// `PTI_VIEW_INVALID`: the records end (a zeroed tail).
const END: SizeEntry = 0;
/// A value that is no kind.
const UNKNOWN: SizeEntry = SizeEntry::MAX;
/// `PTI_VIEW_RESERVED`: a kind without records.
const RESERVED: SizeEntry = SizeEntry::MAX - 1;

/// The first extension kind's value; the extensions' values follow it densely.
const EXTENSION_BASE: u32 = pti_view_kind::EXTENSIONS[0] as u32;

/// Slots of [`SIZES`]: the published kinds by value (INVALID at 0), then the extensions.
const PUBLISHED: usize = pti_view_kind::ALL.len() + 1;
const SLOTS: usize = PUBLISHED + pti_view_kind::EXTENSIONS.len();

/// Each kind's record size, by [`slot`]: the walk's one lookup per record (a `match` over the
/// kinds per step cost a tool more than libpti's writing of the record).
const SIZES: [SizeEntry; SLOTS] = {
    let mut sizes = [UNKNOWN; SLOTS];
    sizes[0] = END;
    let mut i = 0;
    while i < SLOTS - 1 {
        let kind = if i < pti_view_kind::ALL.len() {
            pti_view_kind::ALL[i]
        } else {
            pti_view_kind::EXTENSIONS[i - pti_view_kind::ALL.len()]
        };
        let at = slot(kind as u32);
        assert!(
            at < SLOTS && sizes[at] == UNKNOWN,
            "kinds are dense and distinct"
        );
        sizes[at] = match kind.record_size() {
            Some(size) => {
                assert!(size > 0 && size < RESERVED as usize);
                size as SizeEntry
            }
            None => RESERVED,
        };
        i += 1;
    }
    sizes
};

/// The slot of raw kind `raw` in [`SIZES`] (out of range for values that are no kind).
#[inline(always)]
const fn slot(raw: u32) -> usize {
    if (raw as usize) < PUBLISHED {
        raw as usize
    } else if raw >= EXTENSION_BASE {
        (raw - EXTENSION_BASE) as usize + PUBLISHED
    } else {
        SLOTS
    }
}

/// The size of the record that starts at `at`; `None` where the records end.
///
/// # Safety
/// `base` is readable for `len` bytes, of which the four at `at` (if they lie within) are
/// initialised.
#[inline(always)]
unsafe fn record_at(base: *const u8, len: usize, at: usize) -> Result<Option<usize>, NotARecord> {
    if at.checked_add(4).is_none_or(|end| end > len) {
        return Ok(None);
    }
    // SAFETY: [at, at + 4) lies within the readable, initialised bytes (checked, contract).
    let raw = unsafe { base.add(at).cast::<u32>().read_unaligned() };
    let size = match SIZES.get(slot(raw)).copied().unwrap_or(UNKNOWN) {
        END => return Ok(None),
        UNKNOWN => return Err(NotARecord("not a record: unknown view kind")),
        RESERVED => return Err(NotARecord("not a record: reserved view kind")),
        size => size as usize,
    };
    if len - at < size {
        return Err(NotARecord("the record runs past the valid bytes"));
    }
    Ok(Some(size))
}

/// The offset of the record after the one at `current` (the first record when `None`), or
/// `None` at the end of the records, in the `len` bytes at `base`.
///
/// `current` must be the offset of a record this walk returned: one beyond the bytes, not
/// 8-aligned from the first record, or not a whole record is [`NotARecord`].
///
/// # Safety
/// `base` must be readable for `len` bytes; the bytes of the records' `_view_kind` fields must be
/// initialised (any other byte need not be).
#[inline]
pub unsafe fn next_record_raw(
    base: *const u8,
    len: usize,
    current: Option<usize>,
) -> Result<Option<usize>, NotARecord> {
    let first = first_offset(base as usize);
    let next = match current {
        None => first,
        Some(at) => {
            if at < first || at >= len || !(at - first).is_multiple_of(8) {
                return Err(NotARecord(
                    "the record pointer does not point at a record of this buffer",
                ));
            }
            // SAFETY: the caller's contract.
            match unsafe { record_at(base, len, at) }? {
                Some(size) => at + size,
                None => {
                    return Err(NotARecord("the record pointer does not point at a record"));
                }
            }
        }
    };
    // SAFETY: the caller's contract.
    Ok(unsafe { record_at(base, len, next) }?.map(|_| next))
}

/// [`next_record_raw`] for a walk that goes well, as a tool's walk of its buffers does: the
/// offset of the next record, or `None` for anything else (the end of the records, or a position
/// or record the walk refuses, which [`next_record_raw`] then tells apart). It builds no error, so
/// a tool's loop pays only for the checks.
///
/// # Safety
/// As [`next_record_raw`].
#[inline(always)]
pub unsafe fn next_record_quick(
    base: *const u8,
    len: usize,
    current: Option<usize>,
) -> Option<usize> {
    let first = first_offset(base as usize);
    let next = match current {
        None => first,
        // A record lies 8-aligned in memory (so at or after the first: `first` is the least
        // offset that is).
        Some(at) if (base as usize).wrapping_add(at) & 7 == 0 => {
            // SAFETY: the caller's contract.
            let size = quick_size(unsafe { kind_at(base, len, at) }?)?;
            // No overflow: the kind read ends within `len` readable bytes (so `at < len <=
            // isize::MAX`), and a size is below 2^16. A current record that runs past the bytes
            // leaves no kind to read after it: the full walk says so.
            at + size
        }
        Some(_) => return None,
    };
    // SAFETY: the caller's contract.
    let size = quick_size(unsafe { kind_at(base, len, next) }?)?;
    (len - next >= size).then_some(next)
}

/// The raw kind at `at`, where its four bytes lie within the `len` at `base`.
///
/// # Safety
/// As [`record_at`].
#[inline(always)]
unsafe fn kind_at(base: *const u8, len: usize, at: usize) -> Option<u32> {
    if len.checked_sub(at)? < 4 {
        return None;
    }
    // SAFETY: [at, at + 4) lies within the readable, initialised bytes (checked, contract).
    Some(unsafe { base.add(at).cast::<u32>().read_unaligned() })
}

/// [`SIZES`] for the quick walk: 0 for the end of the records and for every value that is no
/// record's kind, so that one test tells a record from the rest.
const QUICK_SIZES: [SizeEntry; SLOTS] = {
    let mut sizes = SIZES;
    let mut i = 0;
    while i < SLOTS {
        if sizes[i] == UNKNOWN || sizes[i] == RESERVED {
            sizes[i] = 0;
        }
        i += 1;
    }
    sizes
};

/// The size of a record of raw kind `raw`; `None` for the end of the records and for values
/// that are no record's kind.
#[inline(always)]
fn quick_size(raw: u32) -> Option<usize> {
    let size = QUICK_SIZES.get(slot(raw)).copied().unwrap_or(0);
    (size != 0).then_some(size as usize)
}

/// [`next_record_raw`] over a byte slice (whose bytes are all initialised).
pub fn next_record(bytes: &[u8], current: Option<usize>) -> Result<Option<usize>, NotARecord> {
    // SAFETY: a slice is readable and initialised for its whole length.
    unsafe { next_record_raw(bytes.as_ptr(), bytes.len(), current) }
}

/// One record, typed by its kind. Device records are the `_v2` layouts.
#[derive(Clone, Copy, Debug)]
pub enum Record<'a> {
    /// `PTI_VIEW_DRIVER_API` or `PTI_VIEW_RUNTIME_API`.
    Api(&'a pti_view_record_api),
    /// `PTI_VIEW_DEVICE_GPU_KERNEL` or `PTI_VIEW_DEVICE_CPU_KERNEL`.
    Kernel(&'a pti_view_record_kernel_v2),
    /// `PTI_VIEW_DEVICE_GPU_MEM_COPY`.
    MemoryCopy(&'a pti_view_record_memory_copy_v2),
    /// `PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P`.
    MemoryCopyP2p(&'a pti_view_record_memory_copy_p2p_v2),
    /// `PTI_VIEW_DEVICE_GPU_MEM_FILL`.
    MemoryFill(&'a pti_view_record_memory_fill_v2),
    /// `PTI_VIEW_DEVICE_SYNCHRONIZATION`.
    Synchronization(&'a pti_view_record_synchronization),
    /// `PTI_VIEW_EXTERNAL_CORRELATION`.
    ExternalCorrelation(&'a pti_view_record_external_correlation),
    /// `PTI_VIEW_COLLECTION_OVERHEAD`.
    Overhead(&'a pti_view_record_overhead),
    /// `PTI_VIEW_COMMUNICATION`.
    Communication(&'a pti_view_record_comms),
    /// `PTI_VIEW_EXT_MEMORY_ALLOCATION` (libpti extension).
    MemoryAllocation(&'a pti_view_record_memory_allocation),
    /// `PTI_VIEW_EXT_COMMAND_EXECUTION` (libpti extension).
    CommandExecution(&'a pti_view_record_command_execution),
    /// `PTI_VIEW_EXT_KERNEL_LAUNCH` (libpti extension).
    KernelLaunch(&'a pti_view_record_kernel_launch),
    /// `PTI_VIEW_EXT_LOSS` (libpti extension).
    Loss(&'a pti_view_record_loss),
    /// `PTI_VIEW_EXT_ANNOTATION` (libpti extension).
    Annotation(&'a pti_view_record_annotation),
}

impl Record<'_> {
    /// The name a kernel, copy, fill, communication or annotation record carries (NULL names
    /// give `None`).
    pub fn name(&self) -> Option<&core::ffi::CStr> {
        let name = match self {
            Record::Kernel(k) => k._name,
            Record::MemoryCopy(c) => c._name,
            Record::MemoryCopyP2p(c) => c._name,
            Record::MemoryFill(f) => f._name,
            Record::Communication(c) => c._name,
            Record::Annotation(a) => a._name,
            _ => return None,
        };
        // SAFETY: libpti's names are NUL-terminated and live as long as the library (the
        // contract under which the record was handed out).
        (!name.is_null()).then(|| unsafe { core::ffi::CStr::from_ptr(name) })
    }
}

/// The records of a buffer libpti filled, in order.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    base: *const u8,
    len: usize,
    current: Option<usize>,
    done: bool,
    _buffer: PhantomData<&'a [u8]>,
}

impl<'a> Records<'a> {
    /// Walks the `len` bytes at `base`.
    ///
    /// # Safety
    /// The bytes must hold records libpti wrote (a filled buffer's), unchanged for 'a, so that
    /// every field of every record holds a valid value: the iterator hands out references to the
    /// typed records.
    pub unsafe fn new(base: *const u8, len: usize) -> Self {
        Records {
            base,
            len,
            current: None,
            done: false,
            _buffer: PhantomData,
        }
    }

    /// # Safety
    /// A whole record of type `T` starts at `at` (checked by the walk), 8-aligned, with valid
    /// field values (the contract of [`Records::new`]).
    unsafe fn typed<T>(&self, at: usize) -> &'a T {
        debug_assert!(at + size_of::<T>() <= self.len);
        // SAFETY: per the contract: in bounds, aligned (records start 8-aligned and every record
        // type has alignment 8 or less), valid field values (padding may be uninitialised, which
        // a reference allows), and unchanged for 'a.
        unsafe { &*(self.base.add(at) as *const T) }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        if self.done {
            return None;
        }
        // SAFETY: the contract of `new`: readable bytes, kinds written by libpti.
        let Ok(Some(at)) = (unsafe { next_record_raw(self.base, self.len, self.current) }) else {
            self.done = true;
            return None;
        };
        self.current = Some(at);
        // SAFETY: the walk checked that a whole record starts at `at`.
        let raw = unsafe { self.base.add(at).cast::<u32>().read_unaligned() };
        let kind = pti_view_kind::from_raw(raw)?;
        use pti_view_kind::*;
        // SAFETY: in each arm, the walk checked that a whole record of the kind's type is at `at`.
        Some(unsafe {
            match kind {
                PTI_VIEW_DRIVER_API | PTI_VIEW_RUNTIME_API => Record::Api(self.typed(at)),
                PTI_VIEW_DEVICE_GPU_KERNEL | PTI_VIEW_DEVICE_CPU_KERNEL => {
                    Record::Kernel(self.typed(at))
                }
                PTI_VIEW_DEVICE_GPU_MEM_COPY => Record::MemoryCopy(self.typed(at)),
                PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P => Record::MemoryCopyP2p(self.typed(at)),
                PTI_VIEW_DEVICE_GPU_MEM_FILL => Record::MemoryFill(self.typed(at)),
                PTI_VIEW_DEVICE_SYNCHRONIZATION => Record::Synchronization(self.typed(at)),
                PTI_VIEW_EXTERNAL_CORRELATION => Record::ExternalCorrelation(self.typed(at)),
                PTI_VIEW_COLLECTION_OVERHEAD => Record::Overhead(self.typed(at)),
                PTI_VIEW_COMMUNICATION => Record::Communication(self.typed(at)),
                PTI_VIEW_EXT_MEMORY_ALLOCATION => Record::MemoryAllocation(self.typed(at)),
                PTI_VIEW_EXT_COMMAND_EXECUTION => Record::CommandExecution(self.typed(at)),
                PTI_VIEW_EXT_KERNEL_LAUNCH => Record::KernelLaunch(self.typed(at)),
                PTI_VIEW_EXT_LOSS => Record::Loss(self.typed(at)),
                PTI_VIEW_EXT_ANNOTATION => Record::Annotation(self.typed(at)),
                PTI_VIEW_INVALID | PTI_VIEW_RESERVED => {
                    self.done = true;
                    return None;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    /// The size table says of every value what the kinds themselves say.
    #[test]
    fn the_size_table_agrees_with_the_kinds() {
        let values =
            (0..0x1_0010u32).chain([u32::MAX, u32::MAX - 1, 0x8000_0000, EXTENSION_BASE - 1]);
        for raw in values {
            let mut words = [0u64; 64];
            words[0] = u64::from(raw);
            // SAFETY: 512 initialised bytes; the kind is at offset 0 (little-endian).
            let got = unsafe { record_at(words.as_ptr().cast(), 512, 0) };
            let want = match pti_view_kind::from_raw(raw) {
                None => Err(NotARecord("not a record: unknown view kind")),
                Some(pti_view_kind::PTI_VIEW_INVALID) => Ok(None),
                Some(kind) => match kind.record_size() {
                    None => Err(NotARecord("not a record: reserved view kind")),
                    Some(size) => Ok(Some(size)),
                },
            };
            assert_eq!(got, want, "raw kind {raw:#x}");
        }
    }

    /// An 8-aligned byte buffer of `n` bytes.
    fn aligned(n: usize) -> Vec<u64> {
        vec![0u64; n.div_ceil(8)]
    }

    fn as_bytes(words: &[u64], len: usize) -> &[u8] {
        // SAFETY: reinterpreting initialised u64s as bytes; `len` is within them.
        unsafe { core::slice::from_raw_parts(words.as_ptr() as *const u8, len) }
    }

    fn put_kind(words: &mut [u64], at: usize, kind: u32) {
        // SAFETY: `at + 4` lies within `words` in every use below.
        unsafe {
            (words.as_mut_ptr() as *mut u8)
                .add(at)
                .cast::<u32>()
                .write_unaligned(kind)
        };
    }

    #[test]
    fn walks_records_and_stops_at_the_end_or_a_zeroed_tail() {
        let api = size_of::<pti_view_record_api>();
        let ext = size_of::<pti_view_record_external_correlation>();
        let mut w = aligned(api + ext + 64);
        put_kind(&mut w, 0, pti_view_kind::PTI_VIEW_DRIVER_API as u32);
        put_kind(
            &mut w,
            api,
            pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION as u32,
        );
        let exact = as_bytes(&w, api + ext);
        assert_eq!(next_record(exact, None), Ok(Some(0)));
        assert_eq!(next_record(exact, Some(0)), Ok(Some(api)));
        assert_eq!(next_record(exact, Some(api)), Ok(None));
        let with_zero_tail = as_bytes(&w, api + ext + 64);
        assert_eq!(next_record(with_zero_tail, Some(api)), Ok(None));
        assert_eq!(
            next_record(as_bytes(&w, 0), None),
            Ok(None),
            "an empty buffer"
        );
        assert!(
            next_record(as_bytes(&w, api - 8), None).is_err(),
            "a truncated record"
        );
        assert!(
            next_record(exact, Some(4)).is_err(),
            "not at a record boundary"
        );
        assert!(
            next_record(exact, Some(api + ext)).is_err(),
            "beyond the bytes"
        );
    }

    proptest! {
        /// Arbitrary bytes, lengths and positions: never a panic, never a record that leaves
        /// the bytes.
        #[test]
        fn garbage_is_refused_without_reading_out_of_bounds(
            bytes in prop::collection::vec(any::<u8>(), 0..512),
            shift in 0usize..8,
            len_cut in 0usize..520,
            start in prop::option::of(0usize..600),
        ) {
            let shifted = &bytes[shift.min(bytes.len())..];
            let len = len_cut.min(shifted.len());
            let slice = &shifted[..len];
            // A refusal (NotARecord) and the end are both fine: only a record is checked.
            if let Ok(Some(at)) = next_record(slice, start) {
                let raw = u32::from_ne_bytes(slice[at..at + 4].try_into().unwrap());
                let size = pti_view_kind::from_raw(raw).unwrap().record_size().unwrap();
                prop_assert!(at + size <= slice.len());
            }
        }

        /// The quick walk finds the record the full walk finds, and nothing where it finds none,
        /// in buffers that start at any address (the first record at the first 8-aligned one).
        #[test]
        fn the_quick_walk_is_the_walk(
            kinds in prop::collection::vec(prop::sample::select(&[1u32, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0x10001, 0x10003, 0, 77]), 0..40),
            shift in 1usize..=8,
            filled in any::<bool>(),
            len_cut in 0usize..4096,
            start in prop::option::of(0usize..4096),
            record in prop::option::of(0usize..40),
        ) {
            // Records of the chosen kinds, back to back from the second 8-aligned address (an
            // unknown kind ends what can be laid out); the buffer starts `shift` bytes into the
            // words, so its first record lies `8 - shift` bytes in. The other bytes are zero
            // (a record's kind ends the walk there) or, half the time, a kind at every 4-byte
            // position, so that a position the walk must refuse (misaligned, before the first
            // record, inside one) does not read as the end.
            let mut words = aligned(4096 + 8);
            if filled {
                words.fill(0x0000_0001_0000_0001);
            }
            let (mut at, mut offsets) = (0, Vec::new());
            for kind in kinds {
                let size = pti_view_kind::from_raw(kind).and_then(|k| k.record_size()).unwrap_or(8);
                if at + size > 4096 {
                    break;
                }
                put_kind(&mut words, 8 + at, kind);
                offsets.push(8 - shift + at);
                at += size;
            }
            // Half the positions are those of records laid out (a tool's walk), half arbitrary.
            let start = match record {
                Some(i) if i < offsets.len() => Some(offsets[i]),
                _ => start,
            };
            let len = len_cut.min(4096 + 8 - shift);
            let bytes = &as_bytes(&words, shift + len)[shift..];
            prop_assert_eq!(first_offset(bytes.as_ptr() as usize), (8 - shift) % 8);
            // SAFETY: a slice is readable and initialised for its whole length.
            let quick = unsafe { next_record_quick(bytes.as_ptr(), bytes.len(), start) };
            match next_record(bytes, start) {
                Ok(Some(at)) => prop_assert_eq!(quick, Some(at)),
                _ => prop_assert_eq!(quick, None),
            }
        }
    }
}
