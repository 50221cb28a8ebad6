//! Loom models of the record-buffer hand-off between a thread's writer and flushers
//! (`src/sync/handoff.rs`, the protocol at the top of `src/view/buffer.rs`).
//!
//! The models compile the library's own `handoff.rs` and its primitive facade `shim.rs` into this
//! test crate (`#[path]`), so under `cfg(loom)` they run the real protocol code with loom's
//! atomics, `UnsafeCell` and `SeqCst` fences standing in for the membarrier pair. Loom's
//! `UnsafeCell` fails the model if the flusher touches the slot while the writer is inside its
//! section (or the other way round); the models also check that every record the writer appended
//! ends up exactly once in what a flusher took, in a buffer the writer handed back full, in the
//! writer's buffer at the end, or among the dropped ones.
//!
//! Run with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p pti-core --test loom_handoff --release --target-dir target/loom -- --nocapture
//! ```
//!
//! Each model prints how many interleavings (loom iterations) it explored.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};

use loom::sync::{Arc, Mutex};

#[path = "../src/sync/shim.rs"]
#[allow(dead_code, unused_imports)]
mod shim;

#[path = "../src/sync/handoff.rs"]
#[allow(dead_code)]
mod handoff;

use handoff::HandOff;

/// A modelled buffer: the records in it and its capacity (in records).
#[derive(Debug)]
struct Buf {
    records: Vec<u32>,
    capacity: usize,
}

/// What the writer's side ends with: buffers it handed back full, and records it dropped.
#[derive(Default)]
struct WriterLog {
    handed_back: Vec<Vec<u32>>,
    dropped: Vec<u32>,
}

/// Appends `record` as `buffer.rs`'s `append` does: in the section, write it if it fits, else
/// take the full buffer out; outside the section hand that back and get a fresh one (or none:
/// then the record is dropped); install the fresh one in a second section.
fn append(
    slot: &HandOff<Option<Buf>>,
    record: u32,
    fresh: &mut dyn FnMut() -> Option<Buf>,
    log: &mut WriterLog,
) {
    loop {
        // SAFETY: the writer thread is the only one that calls `write` on this slot, and the
        // section does not re-enter it.
        let full = unsafe {
            slot.write(|lent| match lent {
                Some(b) if b.records.len() < b.capacity => {
                    b.records.push(record);
                    None
                }
                other => Some(other.take()),
            })
        };
        let Some(full) = full else { return };
        if let Some(full) = full {
            log.handed_back.push(full.records);
        }
        let Some(new) = fresh() else {
            log.dropped.push(record);
            return;
        };
        // SAFETY: as above.
        unsafe {
            slot.write(|lent| {
                if lent.is_none() {
                    *lent = Some(new);
                }
            })
        };
    }
}

/// One flush of one slot, as `buffer.rs`'s `collect` does it; `FLUSHERS` serialises flushers
/// as FLUSH_LOCK does.
fn flush(slot: &HandOff<Option<Buf>>, flushers: &Mutex<()>) -> Option<Vec<u32>> {
    let _serial = flushers.lock().unwrap();
    slot.announce_flush();
    assert!(
        handoff::flush_barrier(),
        "the modelled barrier always succeeds"
    );
    // SAFETY: announced, barrier returned true, and `flushers` makes this the only flusher.
    let taken = unsafe { slot.take(|lent| lent.take()) };
    slot.end_flush();
    taken.map(|b| b.records)
}

/// Checks that `0..records` each appear exactly once in `found`.
fn assert_each_once(mut found: Vec<u32>, records: u32) {
    found.sort_unstable();
    assert_eq!(
        found,
        (0..records).collect::<Vec<_>>(),
        "a record was lost or duplicated"
    );
}

/// Runs `model` under loom with at most `preemptions` preemptions per interleaving (`None`:
/// every interleaving; `LOOM_MAX_PREEMPTIONS` overrides), and prints how many it explored.
fn check(name: &str, preemptions: Option<usize>, model: impl Fn() + Sync + Send + 'static) {
    static ITERATIONS: AtomicUsize = AtomicUsize::new(0);
    let before = ITERATIONS.load(Ordering::SeqCst);
    let started = std::time::Instant::now();
    let mut builder = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        builder.preemption_bound = preemptions;
    }
    let bound = builder.preemption_bound;
    builder.check(move || {
        ITERATIONS.fetch_add(1, Ordering::SeqCst);
        model();
    });
    // Tests in this file run one after the other (see `check`'s callers): the delta is ours.
    println!(
        "{name}: {} interleavings explored (preemption bound {bound:?}) in {:.1?}",
        ITERATIONS.load(Ordering::SeqCst) - before,
        started.elapsed()
    );
}

/// A writer appends three records into one-record buffers (the third request is refused) while
/// a flusher takes the buffer once.
fn writer_and_one_flush() {
    const RECORDS: u32 = 3;
    let slot = Arc::new(HandOff::new(Some(Buf {
        records: Vec::new(),
        capacity: 1,
    })));
    let flushers = Arc::new(Mutex::new(()));
    let writer = {
        let slot = slot.clone();
        loom::thread::spawn(move || {
            let mut requests = 0;
            let mut fresh = || {
                requests += 1;
                (requests != 2).then(|| Buf {
                    records: Vec::new(),
                    capacity: 1,
                })
            };
            let mut log = WriterLog::default();
            for record in 0..RECORDS {
                append(&slot, record, &mut fresh, &mut log);
            }
            log
        })
    };
    let taken = flush(&slot, &flushers);
    let log = writer.join().unwrap();
    // Everything has joined: a last flush by this thread takes what is left.
    let rest = flush(&slot, &flushers);
    let mut found: Vec<u32> = log.handed_back.into_iter().flatten().collect();
    found.extend(taken.into_iter().flatten());
    found.extend(rest.into_iter().flatten());
    found.extend(&log.dropped);
    assert_each_once(found, RECORDS);
}

/// Two flushers (serialised between themselves) race one writer appending two records into a
/// two-record buffer.
fn writer_and_two_flushers() {
    const RECORDS: u32 = 2;
    let slot = Arc::new(HandOff::new(Some(Buf {
        records: Vec::new(),
        capacity: 2,
    })));
    let flushers = Arc::new(Mutex::new(()));
    let writer = {
        let slot = slot.clone();
        loom::thread::spawn(move || {
            let mut fresh = || {
                Some(Buf {
                    records: Vec::new(),
                    capacity: 2,
                })
            };
            let mut log = WriterLog::default();
            for record in 0..RECORDS {
                append(&slot, record, &mut fresh, &mut log);
            }
            log
        })
    };
    let other = {
        let (slot, flushers) = (slot.clone(), flushers.clone());
        loom::thread::spawn(move || flush(&slot, &flushers))
    };
    let taken = flush(&slot, &flushers);
    let log = writer.join().unwrap();
    let taken_by_other = other.join().unwrap();
    let rest = flush(&slot, &flushers);
    let mut found: Vec<u32> = log.handed_back.into_iter().flatten().collect();
    for t in [taken, taken_by_other, rest] {
        found.extend(t.into_iter().flatten());
    }
    found.extend(&log.dropped);
    assert_each_once(found, RECORDS);
}

// One #[test] runs every model in turn, so that the printed interleaving counts are not mixed
// up by the test harness running models in parallel.
#[test]
fn handoff_models() {
    // Small enough to explore exhaustively.
    check("writer and one flush", None, writer_and_one_flush);
    // Exhaustive exploration takes more than five minutes; three preemptions take seconds.
    check(
        "writer and two serialised flushers",
        Some(3),
        writer_and_two_flushers,
    );
}
