//! Loom model of the hand-shake between a caught panic switching a thread's dispatch off and the
//! OpenCL layer giving the hook that must run first (`src/sync/off_latch.rs`, used by
//! `src/boundary.rs`).
//!
//! The model compiles the library's own `off_latch.rs` and its primitive facade `shim.rs` into
//! this test crate (`#[path]`), so under `cfg(loom)` it runs the real code with loom's atomics.
//! It checks the one promise the latch makes: when one thread switches off while another gives
//! the hook, at least one of them runs the hook.
//!
//! Run with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p pti-core --test loom_off_latch --release --target-dir target/loom -- --nocapture
//! ```
#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};

#[path = "../src/sync/shim.rs"]
#[allow(dead_code, unused_imports)]
mod shim;

#[path = "../src/sync/off_latch.rs"]
#[allow(dead_code)]
mod off_latch;

use off_latch::OffLatch;

/// Interleavings loom ran (outside the model: a plain atomic of the test process).
static EXPLORED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn a_switch_off_and_the_hook_given_at_once_run_the_hook_at_least_once() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = None;
    builder.check(|| {
        EXPLORED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let latch = Arc::new(OffLatch::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let panicking = {
            let (latch, runs) = (latch.clone(), runs.clone());
            loom::thread::spawn(move || {
                if latch.switch_off() {
                    runs.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        if latch.give_hook() {
            runs.fetch_add(1, Ordering::Relaxed);
        }
        panicking.join().unwrap();
        assert!(latch.any_off());
        assert!(
            runs.load(Ordering::Relaxed) >= 1,
            "neither side ran the hook: the switch-off passed without it"
        );
    });
    println!(
        "switch-off and hook given at once: {} interleavings explored (no preemption bound)",
        EXPLORED.load(std::sync::atomic::Ordering::Relaxed)
    );
}
