//! Fuzzes the record walk: pti-core's `next_record` / `next_record_raw` (pti-abi's walk), the
//! `Records` iterator, and the C entry point `ptiViewGetNextRecord` (pti-capi's rlib), over
//! arbitrary bytes, at every misalignment of the buffer, from arbitrary starting positions.
//!
//! Input: `[misalignment, start selector, 8 bytes of start value, buffer bytes...]`.
//!
//! Checked: nothing crashes or reads outside the buffer (the buffer is an exact-size heap
//! allocation, so AddressSanitizer, on by default under cargo fuzz, catches an overread);
//! every record handed out lies inside the buffer, 8-aligned, whole (its kind's size fits
//! before the end), after the previous one; every result equals an independent model of the
//! documented walk (the model of `pti-capi/tests/fuzz_view_records.rs`); the C function and the
//! Rust walk agree; a failed C call leaves `*record` alone; every walk ends within
//! `len / 8 + 2` steps; `Records` yields as many records as the walk.
#![no_main]

use core::ptr;

use libfuzzer_sys::fuzz_target;
use pti::pti::pti_result;
use pti::view::{pti_view_record_base, ptiViewGetNextRecord};
use pti_core::view::{Records, next_record_raw};

/// The model's record sizes, shared with the proptest fuzzer.
#[path = "../../pti-capi/tests/record_sizes/mod.rs"]
mod record_sizes;
use record_sizes::record_size;

/// The documented walk over `bytes` at address `address`: the offset of the record after the
/// one at offset `current` (the first record when `None`); `Ok(None)` at the end; `Err` for a
/// position or bytes that hold no record.
fn model_next(bytes: &[u8], address: usize, current: Option<usize>) -> Result<Option<usize>, ()> {
    let len = bytes.len();
    let first = address.wrapping_neg() & 7;
    let record_at = |at: usize| -> Result<Option<usize>, ()> {
        if at.checked_add(4).is_none_or(|end| end > len) {
            return Ok(None);
        }
        let kind = u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap());
        if kind == 0 {
            return Ok(None);
        }
        let size = record_size(kind).ok_or(())?;
        if len - at < size {
            return Err(());
        }
        Ok(Some(size))
    };
    let next = match current {
        None => first,
        Some(at) => {
            if at < first || at >= len || !(at - first).is_multiple_of(8) {
                return Err(());
            }
            match record_at(at)? {
                Some(size) => at + size,
                None => return Err(()),
            }
        }
    };
    Ok(record_at(next)?.map(|_| next))
}

const SUCCESS: pti_result = pti_result::PTI_SUCCESS;
const END: pti_result = pti_result::PTI_STATUS_END_OF_BUFFER;
const BAD: pti_result = pti_result::PTI_ERROR_BAD_ARGUMENT;

/// `ptiViewGetNextRecord` from `current` (an address, 0 for NULL): its result and `*record`.
fn c_next(base: *mut u8, len: usize, current: usize) -> (pti_result, usize) {
    let mut record = current as *mut pti_view_record_base;
    // SAFETY: `base` is readable for `len` bytes; `record` points to a record pointer, which the
    // function compares with the buffer and dereferences only when it lies within.
    let r = unsafe { ptiViewGetNextRecord(base, len, &mut record) };
    (r, record as usize)
}

/// Checks one step of the walk from `current` (an offset, or `None`): the Rust walk, the C
/// function and the model agree, and a record handed out is inside, aligned, whole and after
/// `current`. Returns the next offset.
fn step(bytes: &[u8], base: *mut u8, current: Option<usize>) -> Option<usize> {
    let len = bytes.len();
    let address = base as usize;
    let want = model_next(bytes, address, current);
    // SAFETY: `base` is readable and initialised for `len` bytes.
    let got = unsafe { next_record_raw(base, len, current) };
    match (&want, &got) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "walk from {current:?}: model {a:?}, walk {b:?}"),
        (Err(()), Err(_)) => {}
        _ => panic!("walk from {current:?}: model {want:?}, walk {got:?}"),
    }
    let c_current = current.map_or(0, |at| address.wrapping_add(at));
    let (r, record) = c_next(base, len, c_current);
    match want {
        Ok(Some(at)) => {
            assert_eq!(r, SUCCESS, "C walk from {current:?}");
            assert_eq!(record, address + at, "C walk from {current:?}");
        }
        Ok(None) => assert_eq!(r, END, "C walk from {current:?}"),
        Err(()) => assert_eq!(r, BAD, "C walk from {current:?}"),
    }
    if r != SUCCESS {
        assert_eq!(record, c_current, "*record changed by a failed call");
    }
    let at = want.ok().flatten()?;
    assert!(at < len, "record at {at} outside {len} bytes");
    assert_eq!((address + at) % 8, 0, "misaligned record at {at}");
    let kind = u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap());
    let size = record_size(kind).expect("a record of a known kind");
    assert!(
        at + size <= len,
        "record at {at} of {size} bytes runs past {len}"
    );
    if let Some(c) = current {
        assert!(at > c, "the walk went backwards: {c} -> {at}");
    }
    Some(at)
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 10 {
        return;
    }
    let misalign = (input[0] & 7) as usize;
    let selector = input[1];
    let value = u64::from_ne_bytes(input[2..10].try_into().unwrap());
    let data = &input[10..];
    let len = data.len();

    // An exact-size allocation: the buffer ends where the allocation ends, so ASan sees any
    // read past `base + len`. (A read into the `misalign` bytes before `base` would not be seen
    // by ASan; the walk takes only offsets from `base`, and the model checks every one.)
    let mut memory: Vec<u8> = Vec::with_capacity(misalign + len);
    memory.extend(core::iter::repeat_n(0xA5u8, misalign));
    memory.extend_from_slice(data);
    assert_eq!(memory.capacity(), misalign + len);
    let base = memory.as_mut_ptr().wrapping_add(misalign);

    // The whole walk from the start.
    let mut current = None;
    let mut records = 0usize;
    let bound = len / 8 + 2;
    for steps in 0.. {
        assert!(
            steps <= bound,
            "no end after {steps} steps over {len} bytes"
        );
        match step(data, base, current) {
            Some(at) => {
                records += 1;
                current = Some(at);
            }
            None => break,
        }
    }

    // Records: as many as the walk (the walk's records, until its end or first refusal). Only
    // counted: no field of a record is read, since arbitrary bytes need not be valid values of
    // the records' enum fields (Records::new's contract is about reading them).
    // SAFETY: readable for `len` bytes, unchanged while the iterator lives; see above.
    let counted = unsafe { Records::new(base, len) }.count();
    assert_eq!(counted, records, "Records and the walk disagree");

    // One step from an arbitrary position: an offset (possibly past the end or misaligned), an
    // offset before the buffer, or any address at all (the C function must only compare it).
    match selector % 4 {
        0 => {}
        1 => {
            let at = (value % (len as u64 + 64)) as usize;
            step(data, base, Some(at));
        }
        2 => {
            let at = ((value as usize) % (len + 64)) & !7;
            step(data, base, Some(at));
        }
        _ => {
            let (r, record) = c_next(base, len, value as usize);
            let address = base as usize;
            if r == SUCCESS {
                assert!(
                    record >= address && record < address + len,
                    "a wild start gave a record outside the buffer"
                );
                // NULL (0) asks for the first record; any other start must be a record of
                // this buffer (an offset from `base`).
                let start = (value != 0).then(|| {
                    (value as usize)
                        .checked_sub(address)
                        .expect("a start before the buffer was accepted")
                });
                assert_eq!(model_next(data, address, start), Ok(Some(record - address)));
            } else {
                assert_eq!(record, value as usize, "*record changed by a failed call");
            }
        }
    }
    // NULL arguments.
    let mut record: *mut pti_view_record_base = ptr::null_mut();
    // SAFETY: NULL buffer / NULL record pointer: the function must refuse them.
    unsafe {
        assert_eq!(ptiViewGetNextRecord(ptr::null_mut(), len, &mut record), BAD);
        assert_eq!(ptiViewGetNextRecord(base, len, ptr::null_mut()), BAD);
    }
    assert!(record.is_null());
});
