//! What the driver tells the tests: the ground truth of the commands it ran
//! (`ZE_SIM_TRUTH=<file>`, one line each, as it runs: kernels, copies, fills, barriers and host
//! functions; with `ZE_SIM_TRUTH_EVENTS=1` also the commands that only signal or wait) and, at
//! exit, a report
//! (`ZE_SIM_REPORT=<file>`) of three lines:
//!
//! - `LIVE <kind> <n> ...`: objects still alive by kind (leaks), then `stuck <n>`: commands
//!   that waited `ZE_SIM_STUCK_MS` or more for an event (a hang on a real device), and
//!   `destroyed_in_use <n>`: objects destroyed while a command in flight still used them;
//! - `CALLS <name> <n> ...`: how often the host asked the driver about events
//!   (`zeEventQueryStatus`, `zeEventQueryKernelTimestamp`, and `timestamp_polls`: timestamp
//!   queries that had to poll because the event's timestamps were not written yet);
//! - `EXECUTED <kind> <n> ...`: commands executed, by kind.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use crate::objects::{KINDS, live};

/// What the report counts besides objects.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Counter {
    Stuck,
    DestroyedInUse,
    StatusQueries,
    TimestampQueries,
    TimestampPolls,
}

static COUNTERS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

pub(crate) fn count(counter: Counter) {
    COUNTERS[counter as usize].fetch_add(1, Ordering::Relaxed);
}

fn counted(counter: Counter) -> u64 {
    COUNTERS[counter as usize].load(Ordering::Relaxed)
}

/// Kinds of executed commands, as the ground truth and the report name them.
pub(crate) const EXECUTED: [&str; 10] = [
    "KERNEL", "COPY", "FILL", "BARRIER", "HOSTFN", "SIGNAL", "WAIT", "RESET", "QUERYTS", "WRITETS",
];

static EXECUTED_COUNTS: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];

/// Counts one executed command of `kind` (one of [`EXECUTED`]).
pub(crate) fn executed(kind: &str) {
    if let Some(i) = EXECUTED.iter().position(|k| *k == kind) {
        EXECUTED_COUNTS[i].fetch_add(1, Ordering::Relaxed);
    }
}

static TRUTH: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Appends `line` to the ground-truth file, if the test asked for one (`ZE_SIM_TRUTH`).
pub(crate) fn truth(line: &str) {
    let Some(path) = std::env::var_os("ZE_SIM_TRUTH") else {
        return;
    };
    let mut file = TRUTH.lock().unwrap_or_else(|p| p.into_inner());
    if file.is_none() {
        *file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok();
    }
    if let Some(f) = file.as_mut() {
        let _ = writeln!(f, "{line}");
    }
}

fn text() -> String {
    let mut line = String::from("LIVE");
    for (kind, name) in KINDS {
        line.push_str(&format!(" {name} {}", live(kind)));
    }
    line.push_str(&format!(
        " stuck {} destroyed_in_use {}\nCALLS zeEventQueryStatus {} zeEventQueryKernelTimestamp {} \
         timestamp_polls {}\nEXECUTED",
        counted(Counter::Stuck),
        counted(Counter::DestroyedInUse),
        counted(Counter::StatusQueries),
        counted(Counter::TimestampQueries),
        counted(Counter::TimestampPolls),
    ));
    for (i, kind) in EXECUTED.iter().enumerate() {
        line.push_str(&format!(
            " {kind} {}",
            EXECUTED_COUNTS[i].load(Ordering::Relaxed)
        ));
    }
    line
}

extern "C" fn report_at_exit() {
    let Some(path) = std::env::var_os("ZE_SIM_REPORT") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{}", text());
    }
}

/// Registers the exit report, once.
pub(crate) fn at_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a plain function of this library, run by glibc at exit.
        unsafe { libc::atexit(report_at_exit) };
    });
}
