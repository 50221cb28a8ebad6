//! Cost of API records, in one run (issue #3).
//!
//! Modes, each a loop of traced calls of an opaque function:
//! - `untraced`: no view, no subscriber (the dispatch fast path);
//! - `api_view`: the API view on: slow path, two host-clock reads, one record;
//! - `subscriber`: one empty subscriber, no view;
//! - `subscriber_api_view`: both: the record's marginal cost on a call traced anyway;
//! - `api_view_free_clock`: the API view with a tool clock that costs almost nothing, which
//!   isolates libpti's own write path from the host clock;
//! - `host_clock`: one read of the host clock (CLOCK_MONOTONIC_RAW).
//!
//! The tool recycles 1 MiB buffers, so the measurement includes buffer hand-offs but not the
//! tool's allocations. After criterion, the modes run interleaved (21 rounds) and the summary
//! compares medians of the same run. Targets: a record costs at most 10 ns amortised; one thread
//! writes at least 50 million API records per second.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

mod common;

use common::{median, time_loop, traced_call};
use criterion::Criterion;
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::view::abi::pti_view_kind;
use pti_core::view::{Buffer, BufferCallbacks, FilledBuffer};
use pti_core::{ApiGroup, Event, Subscriber, clock};

fn host_clock_read(_: u64) -> i32 {
    clock::host_ns() as i32
}

/// Recycles buffers so that steady state allocates nothing; counts records.
struct Recycler {
    pool: Mutex<Vec<Buffer>>,
    records: AtomicU64,
}

impl BufferCallbacks for Recycler {
    fn request(&self) -> Option<Buffer> {
        Some(
            self.pool
                .lock()
                .unwrap()
                .pop()
                .unwrap_or_else(|| Buffer::from_boxed(vec![0u8; 1 << 20].into_boxed_slice())),
        )
    }
    fn complete(&self, filled: FilledBuffer) {
        self.records
            .fetch_add(filled.records().count() as u64, Ordering::Relaxed);
        self.pool.lock().unwrap().push(filled.into_buffer());
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Untraced,
    ApiView,
    Subscriber,
    SubscriberApiView,
    ApiViewFreeClock,
    HostClock,
}

const MODES: [(Mode, &str); 6] = [
    (Mode::Untraced, "untraced"),
    (Mode::ApiView, "api_view"),
    (Mode::Subscriber, "subscriber"),
    (Mode::SubscriberApiView, "subscriber_api_view"),
    (Mode::ApiViewFreeClock, "api_view_free_clock"),
    (Mode::HostClock, "host_clock"),
];

/// Runs `f` with the views, subscribers and clock `mode` needs, then undoes them.
fn with_mode<R>(mode: Mode, f: impl FnOnce(fn(u64) -> i32) -> R) -> R {
    let api_view = matches!(
        mode,
        Mode::ApiView | Mode::SubscriberApiView | Mode::ApiViewFreeClock
    );
    let subscriber = matches!(mode, Mode::Subscriber | Mode::SubscriberApiView).then(|| {
        let s = Subscriber::new(|e: Event<'_>| {
            black_box(&e);
        })
        .unwrap();
        s.enable(ApiGroup::OpenCl, opencl::clFinish, true).unwrap();
        s
    });
    if api_view {
        session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    }
    if mode == Mode::ApiViewFreeClock {
        // A clock that costs one indirect call: isolates the dispatch and the write path.
        clock::set_timestamp_source(Box::new(|| 1_000));
    }
    let call: fn(u64) -> i32 = if mode == Mode::HostClock {
        host_clock_read
    } else {
        traced_call
    };
    let r = f(call);
    clock::clear_timestamp_source();
    if api_view {
        session::disable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
        session::flush().unwrap();
    }
    drop(subscriber);
    r
}

fn summary(rounds: usize, n: u64, recycler: &Recycler) {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
    for _ in 0..rounds {
        for (k, (mode, _)) in MODES.iter().enumerate() {
            samples[k].push(with_mode(*mode, |call| time_loop(call, n)));
        }
    }
    let m: Vec<f64> = samples.into_iter().map(median).collect();
    let [untraced, api, sub, sub_api, free, host] = m[..] else {
        unreachable!()
    };
    println!("\ninterleaved, same run: {rounds} rounds x {n} calls per mode, median ns per call");
    for ((_, name), v) in MODES.iter().zip(&m) {
        println!("{name:<22} {v:>8.2}");
    }
    let record_untraced = api - untraced;
    let record_marginal = sub_api - sub;
    let clock_reads = 2.0 * host;
    let write_only = record_marginal - clock_reads;
    let write_path = free - untraced;
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "A. record on a call traced anyway (subscriber_api_view - subscriber):   {record_marginal:6.2} ns"
    );
    println!(
        "   of which its two host-clock reads (2 x host_clock):                   {clock_reads:6.2} ns"
    );
    println!(
        "   the rest, writing the record (A - clock reads):                       {write_only:6.2} ns"
    );
    println!(
        "B. record on an otherwise untraced call (api_view - untraced):          {record_untraced:6.2} ns"
    );
    println!(
        "C. B with a constant clock: slow path + write (api_view_free_clock - untraced): {write_path:6.2} ns"
    );
    println!(
        "D. records per second, one thread, host clock (1e9 / api_view):           {:.1} million",
        1e9 / api / 1e6
    );
    println!(
        "E. records per second, one thread, constant clock (1e9 / api_view_free_clock): {:.1} million",
        1e9 / free / 1e6
    );
    println!(
        "targets: <= 10 ns per record: {} for the write itself (A - clock reads), {} with its timestamps (A), {} on an untraced call (B); \
         >= 50 million records/s: {} with host-clock timestamps (D), {} with a constant clock (E)",
        verdict(write_only <= 10.0),
        verdict(record_marginal <= 10.0),
        verdict(record_untraced <= 10.0),
        verdict(1e9 / api >= 50e6),
        verdict(1e9 / free >= 50e6),
    );
    println!(
        "records delivered to the tool in this run: {}",
        recycler.records.load(Ordering::Relaxed)
    );
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let recycler = Arc::new(Recycler {
        pool: Mutex::new(Vec::new()),
        records: AtomicU64::new(0),
    });
    session::set_buffer_callbacks(recycler.clone());
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("view");
    for (mode, name) in MODES {
        with_mode(mode, |call| {
            group.bench_function(name, |b| {
                let mut i = 0u64;
                b.iter(|| {
                    i += 1;
                    call(black_box(i))
                })
            });
        });
    }
    group.finish();
    c.final_summary();
    if bench_mode {
        summary(21, 1_000_000, &recycler);
    } else {
        summary(1, 1000, &recycler);
    }
}
