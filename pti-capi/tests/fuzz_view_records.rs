//! Fuzzing `ptiViewGetNextRecord` with proptest, for a fixed time (`PTI_FUZZ_SECONDS`, default
//! 20 s): random bytes, streams of valid records of every kind (whole, truncated, with bit
//! flips, overwritten kinds and spliced ranges), random lengths and random starting record
//! pointers (NULL, inside, at the end, before and after the buffer, misaligned, wild).
//!
//! Every buffer is copied into memory between two `PROT_NONE` guard pages, twice: once ending
//! at the guard after it (a read past `buffer + valid_bytes` faults) and once starting at the
//! guard before it (a read before `buffer` faults). A fault prints the input and fails the test.
//! Every call's result is checked against a model of the documented walk (`pti_view.h`): the
//! result is one of its three codes; a record handed out lies inside the buffer, 8-aligned, with
//! the whole record of its kind within `valid_bytes`, after the previous one; a failed call
//! leaves `*record` alone; and every walk ends within `valid_bytes / 8 + 2` steps.
//!
//! It runs under `cargo test` on every change; the cargo-fuzz target `fuzz/fuzz_targets/
//! next_record.rs` walks the same model of record sizes (`record_sizes`) coverage-guided. A
//! failure prints proptest's minimal (shrunk) input and the seed (`PTI_FUZZ_SEED` repeats a run).

use core::ffi::c_void;
use core::ptr;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use pti::pti::pti_result;
use pti::view::{pti_view_record_base, ptiViewGetNextRecord};
use pti_core::view::abi::*;

/// Bytes between the guard pages (the largest buffer).
const DATA_PAGES: usize = 2;

/// Cases per proptest run; runs repeat until the time is spent.
const BATCH: u32 = 512;

mod record_sizes;
use record_sizes::record_size;

/// Every kind that has records.
const KINDS: [u32; 16] = [
    1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 0x10001, 0x10002, 0x10003, 0x10004, 0x10005,
];

/// The model above is written out independently of the library; a kind added to the ABI
/// without it here would make the model disagree with a correct walk (the cargo-fuzz target
/// `next_record` found exactly that when PTI_VIEW_EXT_LOSS came).
#[test]
fn the_model_knows_every_kind_of_the_abi() {
    for kind in pti_view_kind::ALL
        .into_iter()
        .chain(pti_view_kind::EXTENSIONS)
    {
        assert_eq!(record_size(kind as u32), kind.record_size(), "{kind:?}");
        assert_eq!(
            KINDS.contains(&(kind as u32)),
            kind.record_size().is_some(),
            "{kind:?}"
        );
    }
}

// === inputs ===

/// Where the walk starts: `*record` before the first call.
#[derive(Clone, Debug)]
enum Start {
    Null,
    /// `buffer + offset` (negative: before the buffer; may be past the end).
    Offset(isize),
    /// An arbitrary address.
    Wild(usize),
}

/// One change to a stream of records.
#[derive(Clone, Debug)]
enum Mutation {
    FlipBit {
        at: usize,
        bit: u8,
    },
    SetByte {
        at: usize,
        value: u8,
    },
    /// Writes a kind (known, INVALID, RESERVED or any) at an offset.
    SetKind {
        at: usize,
        kind: u32,
    },
    /// Copies `len` bytes from `from` over `to`.
    Splice {
        from: usize,
        to: usize,
        len: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
}

#[derive(Clone, Debug)]
struct Input {
    /// The buffer's bytes: all of them are its `valid_bytes`.
    bytes: Vec<u8>,
    start: Start,
    /// Also call with a NULL buffer and this `valid_bytes`.
    null_buffer_len: Option<usize>,
}

/// A kind to write: mostly known ones, sometimes INVALID, RESERVED or anything.
fn kind() -> impl Strategy<Value = u32> {
    prop_oneof![
        8 => prop::sample::select(KINDS.to_vec()),
        1 => Just(0u32),
        1 => Just(4u32),
        1 => any::<u32>(),
        1 => 13u32..20,
    ]
}

/// One valid record of a known kind, its other bytes random.
fn record() -> impl Strategy<Value = Vec<u8>> {
    (prop::sample::select(KINDS.to_vec()), any::<u64>()).prop_map(|(kind, seed)| {
        let size = record_size(kind).unwrap();
        let mut bytes: Vec<u8> = (0..size)
            .map(|i| (seed.rotate_left(i as u32 * 7) as u8) ^ (i as u8))
            .collect();
        bytes[..4].copy_from_slice(&kind.to_ne_bytes());
        bytes
    })
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::SetByte { at, value }),
        (any::<usize>(), kind()).prop_map(|(at, kind)| Mutation::SetKind { at, kind }),
        (any::<usize>(), any::<usize>(), 0usize..200)
            .prop_map(|(from, to, len)| Mutation::Splice { from, to, len }),
        (any::<usize>(), 0usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    if len == 0 {
        if let Mutation::Insert { bytes: b, .. } = m {
            bytes.extend_from_slice(b);
        }
        return;
    }
    match *m {
        Mutation::FlipBit { at, bit } => bytes[at % len] ^= 1 << bit,
        Mutation::SetByte { at, value } => bytes[at % len] = value,
        Mutation::SetKind { at, kind } => {
            // At an 8-aligned offset mostly, where the walk looks.
            let at = (at % len) & !7;
            for (i, b) in kind.to_ne_bytes().into_iter().enumerate() {
                if at + i < len {
                    bytes[at + i] = b;
                }
            }
        }
        Mutation::Splice { from, to, len: n } => {
            let (from, to) = (from % len, to % len);
            let n = n.min(len - from).min(len - to);
            bytes.copy_within(from..from + n, to);
        }
        Mutation::Delete { at, len: n } => {
            let at = at % len;
            bytes.drain(at..(at + n).min(len));
        }
        Mutation::Insert { at, bytes: ref b } => {
            let at = at % (len + 1);
            bytes.splice(at..at, b.iter().copied());
        }
    }
}

/// The largest buffer the guarded region holds.
fn max_len() -> usize {
    DATA_PAGES * page_size()
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let stream = (
        prop_oneof![3 => Just(0usize), 1 => 1usize..8],
        prop::collection::vec(record(), 0..24),
        prop_oneof![Just(0usize), (0usize..8).prop_map(|n| n * 8), 0usize..64],
        any::<bool>(),
        prop_oneof![
            1 => Just(Vec::new()),
            2 => prop::collection::vec(mutation(), 1..4)
        ],
        prop_oneof![3 => Just(None), 1 => any::<usize>().prop_map(Some)],
    )
        .prop_map(|(pad, records, tail, tail_random, mutations, cut)| {
            let mut bytes: Vec<u8> = (0..pad as u8).map(|i| i.wrapping_mul(37)).collect();
            for r in &records {
                bytes.extend_from_slice(r);
            }
            // A zeroed tail (what a tool's fresh buffer has after the records), or garbage.
            bytes.extend((0..tail).map(|i| if tail_random { i as u8 | 1 } else { 0 }));
            for m in &mutations {
                apply(&mut bytes, m);
            }
            if let Some(cut) = cut {
                bytes.truncate(cut % (bytes.len() + 1));
            }
            bytes
        });
    let words = prop::collection::vec(
        prop_oneof![kind().prop_map(u32::to_ne_bytes), any::<[u8; 4]>()],
        0..200,
    )
    .prop_map(|w| w.concat());
    prop_oneof![
        5 => stream,
        2 => prop::collection::vec(any::<u8>(), 0..600),
        2 => words,
        1 => prop::collection::vec(Just(0u8), 0..64),
    ]
    .prop_map(|mut b| {
        b.truncate(max_len());
        b
    })
}

fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        6 => Just(Start::Null),
        3 => (0isize..2000).prop_map(|o| Start::Offset(o & !7)),
        2 => (-64isize..2100).prop_map(Start::Offset),
        1 => any::<isize>().prop_map(Start::Offset),
        1 => prop_oneof![
            Just(1usize),
            Just(8usize),
            Just(usize::MAX),
            Just(usize::MAX & !7),
            any::<usize>()
        ]
        .prop_map(Start::Wild),
    ]
}

fn input() -> impl Strategy<Value = Input> {
    (
        bytes(),
        start(),
        prop_oneof![
            4 => Just(None),
            1 => prop_oneof![Just(0usize), Just(usize::MAX), any::<usize>()].prop_map(Some)
        ],
    )
        .prop_map(|(bytes, start, null_buffer_len)| Input {
            bytes,
            start,
            null_buffer_len,
        })
}

// === the guarded region ===

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// `DATA_PAGES` read-write pages between two `PROT_NONE` pages, for the life of the process.
struct Guarded {
    data: *mut u8,
    len: usize,
}

fn guarded() -> &'static Guarded {
    static LEAKED: std::sync::OnceLock<Guarded> = std::sync::OnceLock::new();
    LEAKED.get_or_init(|| {
        let page = page_size();
        let total = (DATA_PAGES + 2) * page;
        // SAFETY: an anonymous private mapping; no file, no fixed address.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                total,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap of the guarded region");
        // SAFETY: the pages after the first guard page lie within the mapping just made.
        let data = unsafe { base.cast::<u8>().add(page) };
        // SAFETY: as above; only the data pages become accessible.
        let rc = unsafe {
            libc::mprotect(
                data.cast::<c_void>(),
                DATA_PAGES * page,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        assert_eq!(rc, 0, "mprotect of the data pages");
        GUARD_LO.store(base as usize, Ordering::Relaxed);
        GUARD_HI.store(data as usize + DATA_PAGES * page, Ordering::Relaxed);
        Guarded {
            data,
            len: DATA_PAGES * page,
        }
    })
}

// SAFETY: the region is mapped for the life of the process, and only the one test thread that
// walks buffers writes to it.
unsafe impl Sync for Guarded {}
// SAFETY: as for Sync.
unsafe impl Send for Guarded {}

static GUARD_LO: AtomicUsize = AtomicUsize::new(0);
static GUARD_HI: AtomicUsize = AtomicUsize::new(0);
/// The input being walked, for the fault handler.
static CURRENT: AtomicPtr<Input> = AtomicPtr::new(ptr::null_mut());

extern "C" fn on_fault(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = page_size();
    let lo = GUARD_LO.load(Ordering::Relaxed);
    let hi = GUARD_HI.load(Ordering::Relaxed);
    let which = if (lo..lo + page).contains(&address) {
        "the guard page BEFORE the buffer (an underread)"
    } else if (hi..hi + page).contains(&address) {
        "the guard page AFTER the buffer (an overread)"
    } else {
        "no guard page"
    };
    let input = CURRENT.load(Ordering::Relaxed);
    // A crash path: formatting allocates, which is acceptable here (the walk holds no lock).
    let text = if input.is_null() {
        "(no input)".to_string()
    } else {
        // SAFETY: the pointer is set to a live input only around the calls into libpti.
        format!("{:#?}", unsafe { &*input })
    };
    let message = format!(
        "\nfuzz_view_records: signal {signal} reading {address:#x}, in {which}, while walking \
         this input (not shrunk: a fault cannot be shrunk in-process):\n{text}\n"
    );
    // SAFETY: writing a buffer we own to stderr, then leaving at once.
    unsafe {
        libc::write(2, message.as_ptr().cast(), message.len());
        libc::_exit(86);
    }
}

fn install_fault_handler() {
    for signal in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: a zeroed sigaction is valid; the handler has the SA_SIGINFO signature.
        unsafe {
            let mut action: libc::sigaction = core::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(libc::sigaction(signal, &action, ptr::null_mut()), 0);
        }
    }
}

// === the model ===

/// The walk as `pti_view.h` documents it, over `bytes` at address `address`: the offset of the
/// record after `current` (the first when NULL), `None` for END_OF_BUFFER, `Err` for
/// BAD_ARGUMENT. Records start at the first 8-aligned address and lie back to back.
///
/// A `*record` that is 8-aligned from the first record and holds a whole record of a known kind
/// is taken for one: the function cannot tell it from a record in the middle of another without
/// walking the buffer from its start, so the model (like libpti) accepts it.
fn model_next(bytes: &[u8], address: usize, current: usize) -> Result<Option<usize>, ()> {
    let len = bytes.len();
    let first = address.wrapping_neg() & 7;
    // The record at `at`: Ok(None) where the records end (fewer than 4 bytes, or INVALID).
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
    let next = if current == 0 {
        first
    } else {
        let at = current.wrapping_sub(address);
        if at < first || at >= len || !(at - first).is_multiple_of(8) {
            return Err(());
        }
        match record_at(at)? {
            Some(size) => at + size,
            None => return Err(()),
        }
    };
    Ok(record_at(next)?.map(|_| next))
}

// === the test ===

thread_local! {
    static WALKED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn call(buffer: *mut u8, valid_bytes: usize, record: *mut *mut pti_view_record_base) -> u32 {
    // SAFETY: `buffer` is NULL or readable for `valid_bytes` bytes (the guarded region), and
    // `record` is NULL or points to a record pointer (whose value the function compares, never
    // dereferences unless it lies within the buffer).
    unsafe { ptiViewGetNextRecord(buffer, valid_bytes, record) as u32 }
}

const SUCCESS: u32 = pti_result::PTI_SUCCESS as u32;
const END: u32 = pti_result::PTI_STATUS_END_OF_BUFFER as u32;
const BAD: u32 = pti_result::PTI_ERROR_BAD_ARGUMENT as u32;

fn check(input: &Input) -> Result<(), TestCaseError> {
    let region = guarded();
    let len = input.bytes.len();
    prop_assert!(len <= region.len);
    CURRENT.store(input as *const Input as *mut Input, Ordering::Relaxed);
    // Ending at the guard page after, then starting at the guard page before.
    for (placement, buffer) in [
        (
            "ends at the guard page",
            region.data.wrapping_add(region.len - len),
        ),
        ("starts at the guard page", region.data),
    ] {
        // SAFETY: `len` bytes from `buffer` lie within the data pages.
        unsafe { ptr::copy_nonoverlapping(input.bytes.as_ptr(), buffer, len) };
        let address = buffer as usize;

        // NULL arguments.
        let mut record: *mut pti_view_record_base = ptr::null_mut();
        prop_assert_eq!(call(buffer, len, ptr::null_mut()), BAD, "NULL record");
        if let Some(n) = input.null_buffer_len {
            prop_assert_eq!(call(ptr::null_mut(), n, &mut record), BAD, "NULL buffer");
            prop_assert!(record.is_null());
        }

        // The walk.
        let mut current = match input.start {
            Start::Null => 0usize,
            Start::Offset(o) => address.wrapping_add_signed(o),
            Start::Wild(a) => a,
        };
        let bound = len / 8 + 2;
        let mut steps = 0;
        let mut records = 0u64;
        loop {
            let mut record = current as *mut pti_view_record_base;
            let result = call(buffer, len, &mut record);
            let want = model_next(&input.bytes, address, current);
            let got = record as usize;
            match want {
                Ok(Some(offset)) => {
                    prop_assert_eq!(
                        result,
                        SUCCESS,
                        "{}: step {} from {:#x}: want the record at offset {}",
                        placement,
                        steps,
                        current,
                        offset
                    );
                    prop_assert_eq!(got, address + offset, "{}: step {}", placement, steps);
                }
                Ok(None) => prop_assert_eq!(result, END, "{}: step {}", placement, steps),
                Err(()) => prop_assert_eq!(result, BAD, "{}: step {}", placement, steps),
            }
            if result != SUCCESS {
                prop_assert_eq!(got, current, "{}: *record changed on failure", placement);
                break;
            }
            // Inside the buffer, aligned, whole, and after the previous record.
            prop_assert!(
                got >= address && got < address + len,
                "{placement}: outside"
            );
            prop_assert_eq!(got % 8, 0, "{}: misaligned record", placement);
            let at = got - address;
            let kind = u32::from_ne_bytes(input.bytes[at..at + 4].try_into().unwrap());
            let size = record_size(kind);
            prop_assert!(size.is_some(), "{placement}: record of kind {kind}");
            prop_assert!(
                at + size.unwrap() <= len,
                "{placement}: record runs past the end"
            );
            if current >= address && current < address + len {
                prop_assert!(got > current, "{placement}: the walk went backwards");
            }
            records += 1;
            current = got;
            steps += 1;
            prop_assert!(steps <= bound, "{placement}: no end after {steps} steps");
        }
        WALKED.with(|w| {
            let (inputs, total) = w.get();
            w.set((inputs + u64::from(records > 0), total + records));
        });
    }
    CURRENT.store(ptr::null_mut(), Ordering::Relaxed);
    Ok(())
}

/// The seconds to fuzz for: `PTI_FUZZ_SECONDS`, default 20.
fn fuzz_seconds() -> f64 {
    match std::env::var("PTI_FUZZ_SECONDS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("PTI_FUZZ_SECONDS={s:?} is not a number of seconds")),
        Err(_) => 20.0,
    }
}

/// The base seed: `PTI_FUZZ_SEED`, else from the clock.
fn fuzz_seed() -> u64 {
    match std::env::var("PTI_FUZZ_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("PTI_FUZZ_SEED={s:?} is not a u64")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    }
}

#[test]
fn next_record_never_reads_outside_the_buffer_and_follows_the_model() {
    // The sizes the model assumes keep records 8-aligned back to back.
    for kind in KINDS {
        assert_eq!(record_size(kind).unwrap() % 8, 0, "kind {kind}");
    }
    install_fault_handler();
    let seconds = fuzz_seconds();
    let seed = fuzz_seed();
    println!("fuzz_view_records: seed {seed} (PTI_FUZZ_SEED={seed} repeats this run)");
    let strategy = input();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let mut inputs = 0u64;
    let mut batch = 0u64;
    while Instant::now() < deadline {
        let mut runner = TestRunner::new(Config {
            cases: BATCH,
            failure_persistence: None,
            rng_seed: RngSeed::Fixed(seed.wrapping_add(batch)),
            max_shrink_iters: 100_000,
            ..Config::default()
        });
        match runner.run(&strategy, |input| check(&input)) {
            Ok(()) => inputs += u64::from(BATCH),
            Err(TestError::Fail(why, minimal)) => panic!(
                "fuzz_view_records: failure after {inputs} inputs (seed {seed}, batch {batch}); \
                 minimal failing input (shrunk by proptest):\n{minimal:#?}\n{why}"
            ),
            Err(TestError::Abort(why)) => panic!("fuzz_view_records: aborted: {why}"),
        }
        batch += 1;
    }
    let (with_records, records) = WALKED.with(Cell::get);
    println!(
        "fuzz_view_records: {inputs} inputs in {:.1} s, 0 failures ({} walks over 2 guard \
         placements; {with_records} walks handed out records, {records} records in all)",
        started.elapsed().as_secs_f64(),
        2 * inputs,
    );
    // A fuzzer that never reached a record would check nothing of the success path.
    assert!(
        with_records * 10 > inputs,
        "only {with_records} of {} walks returned a record",
        2 * inputs
    );
}
