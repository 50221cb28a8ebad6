//! The periodic flush: a thread that flushes libpti's views every interval (`--flush-interval`),
//! so that a run that crashes, aborts or is killed leaves a timeline holding everything up to
//! its last flush (the Perfetto stream writes each batch as it arrives).
//!
//! After each flush it samples how many device commands still wait for their completion, for the
//! timeline's counter.
//!
//! The thread starts at libpti's first buffer request (the program's first traced call): a
//! program that does no GPU work gets no thread. A child forked without `exec` has no flusher
//! (creating a thread in a fork handler is not safe); it flushes when a buffer fills and at exit.
//! It never flushes once the exit work has begun, when runtimes may be tearing down: each flush
//! runs under [`GATE`], which the exit work closes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Whether flushing stopped; held during each flush of the thread.
static GATE: Mutex<bool> = Mutex::new(false);
/// The process the thread runs in (0: none started).
static RUNS_IN: AtomicU32 = AtomicU32::new(0);

/// Starts the thread, flushing every `interval`.
pub(crate) fn start(interval: Duration) {
    let pid = std::process::id();
    if RUNS_IN.swap(pid, Ordering::AcqRel) == pid {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("pti-trace-flush".into())
        .spawn(move || {
            loop {
                std::thread::sleep(interval);
                let stopped = GATE.lock().unwrap_or_else(|e| e.into_inner());
                if *stopped {
                    return;
                }
                if let Some(views) = crate::VIEWS.get() {
                    let _ = views.flush();
                    let pending = libpti::view::pending_device_records().unwrap_or(0);
                    crate::collect::sample_pending(libpti::view::timestamp(), pending);
                }
            }
        });
    if spawned.is_err() {
        RUNS_IN.store(0, Ordering::Release);
    }
}

/// Stops flushing, waiting for a flush in progress (from the exit work, before its own flush).
pub(crate) fn stop() {
    // A forked child has no flusher, and its copy of the gate may have been held by the
    // parent's flusher at the fork: it is not touched there.
    if RUNS_IN.load(Ordering::Acquire) != std::process::id() {
        return;
    }
    *GATE.lock().unwrap_or_else(|e| e.into_inner()) = true;
}
