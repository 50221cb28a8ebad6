//! Cost of converting one device timestamp onto the host clock (`DeviceClock::to_host_ns`, twice
//! per command recorded on a device with a timer: Level Zero's, Intel's OpenCL), with the few
//! synchronisation pairs of a short run and the 64 a run reaches after 6.4 s (one pair per
//! 100 ms). Issue 21: the nearest pair was found by scanning every pair; now by bisection.
//!
//! Prints, after criterion, "clock: <pairs> pairs <ns> ns per conversion" for 2 and 64 pairs
//! (median of 21 rounds of 1,000,000 conversions).

use std::hint::black_box;
use std::time::Instant;

mod common;

use common::median;
use criterion::Criterion;
use pti_core::clock::DeviceClock;

/// A 19.2 MHz, 32-bit device clock with `pairs` pairs 100 ms apart.
fn clock(pairs: u64) -> DeviceClock {
    let mut clock = DeviceClock::new(19_200_000, 32).expect("a valid clock");
    for i in 0..pairs {
        clock.add_sync_point(1_000_000_000 + i * 100_000_000, i * 1_920_000);
    }
    clock
}

/// Converts a timestamp near the latest pair, as a command just completed is.
fn convert(clock: &DeviceClock, i: u64) -> u64 {
    let pairs_end = 1_000_000_000 + 63 * 100_000_000;
    clock
        .to_host_ns(black_box(i % 1_000_000), black_box(pairs_end + i % 1000))
        .unwrap_or(0)
}

fn rounds(clock: &DeviceClock) -> f64 {
    let n = 1_000_000u64;
    let times: Vec<f64> = (0..21)
        .map(|_| {
            let start = Instant::now();
            let mut acc = 0u64;
            for i in 0..n {
                acc = acc.wrapping_add(convert(clock, i));
            }
            black_box(acc);
            start.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    median(times)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for pairs in [2, 64] {
        let clock = clock(pairs);
        let mut i = 0u64;
        c.bench_function(&format!("to_host_ns, {pairs} pairs"), |b| {
            b.iter(|| {
                i += 1;
                convert(&clock, i)
            })
        });
    }
    c.final_summary();
    if std::env::args().any(|a| a == "--bench") {
        for pairs in [2, 64] {
            println!(
                "clock: {pairs} pairs {:.1} ns per conversion",
                rounds(&clock(pairs))
            );
        }
    }
}
