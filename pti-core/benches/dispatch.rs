//! Cost of the dispatch entry around a traced call, in one run:
//! - `baseline`: the loop calling the untraced function;
//! - `nobody_listening`: the same call through `trace_call` with no interest in it;
//! - `one_empty_subscriber`: ENTER and EXIT delivered to one subscriber that does nothing;
//! - `four_empty_subscribers`: the same with four.
//!
//! Targets (issue #2): at most 2 ns added per call with nobody listening, at most 15 ns per call
//! for ENTER+EXIT with one empty subscriber. After criterion's own report, the bench measures the
//! four modes again interleaved (rounds of each, median of the rounds) and prints the added cost
//! against the baseline of the same run: these machines are noisy, so only same-run differences
//! mean much. `docs/BENCHMARKS.md` records the figures and the command.

use std::hint::black_box;

mod common;

use common::{median, time_loop, traced_call, untraced_call};
use criterion::Criterion;
use pti_core::ids::opencl;
use pti_core::{ApiGroup, Event, Subscriber};

fn empty_subscriber() -> Subscriber {
    let s = Subscriber::new(|event: Event<'_>| {
        black_box(&event);
    })
    .expect("subscribe");
    s.enable(ApiGroup::OpenCl, opencl::clFinish, true)
        .expect("enable");
    s
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Baseline,
    Nobody,
    One,
    Four,
}

const MODES: [(Mode, &str); 4] = [
    (Mode::Baseline, "baseline"),
    (Mode::Nobody, "nobody_listening"),
    (Mode::One, "one_empty_subscriber"),
    (Mode::Four, "four_empty_subscribers"),
];

/// Runs `f` with the subscribers that `mode` needs, removing them afterwards.
fn with_mode<R>(mode: Mode, f: impl FnOnce(fn(u64) -> i32) -> R) -> R {
    let subscribers: Vec<Subscriber> = match mode {
        Mode::Baseline | Mode::Nobody => Vec::new(),
        Mode::One => vec![empty_subscriber()],
        Mode::Four => (0..4).map(|_| empty_subscriber()).collect(),
    };
    let call: fn(u64) -> i32 = if mode == Mode::Baseline {
        untraced_call
    } else {
        traced_call
    };
    let r = f(call);
    drop(subscribers);
    r
}

fn criterion_runs(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
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
}

/// The four modes interleaved: `rounds` rounds of `n` calls in each mode; medians per mode.
fn interleaved_summary(rounds: usize, n: u64) {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
    for _ in 0..rounds {
        for (k, (mode, _)) in MODES.iter().enumerate() {
            samples[k].push(with_mode(*mode, |call| time_loop(call, n)));
        }
    }
    let medians: Vec<f64> = samples.into_iter().map(median).collect();
    let base = medians[0];
    println!("\ninterleaved, same run: {rounds} rounds x {n} calls per mode, median ns per call");
    println!("{:<24} {:>10} {:>14}", "mode", "ns/call", "added vs base");
    for ((_, name), m) in MODES.iter().zip(&medians) {
        println!("{name:<24} {m:>10.2} {:>14.2}", m - base);
    }
    let (nobody, one) = (medians[1] - base, medians[2] - base);
    println!(
        "targets: nobody listening added {nobody:.2} ns (target <= 2: {}), one empty subscriber ENTER+EXIT added {one:.2} ns (target <= 15: {})",
        if nobody <= 2.0 { "met" } else { "MISSED" },
        if one <= 15.0 { "met" } else { "MISSED" },
    );
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let mut c = Criterion::default().configure_from_args();
    criterion_runs(&mut c);
    c.final_summary();
    if bench_mode {
        interleaved_summary(21, 2_000_000);
    } else {
        // Under `cargo test --benches`: run the summary path once, small, as a smoke test.
        interleaved_summary(1, 1000);
    }
}
