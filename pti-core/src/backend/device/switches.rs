//! Environment switches that choose how the device backends time commands (issue 21), each read
//! once, when first asked, so that every variant can be measured against the others from one
//! build and one command (`benches/overhead.py --variant`); docs/environment.md lists them.
//!
//! - `PTI_OPENCL_TIMESTAMPS=all`: read every OpenCL command's four profiling timestamps (QUEUED,
//!   SUBMIT, START, END). By default START and END are read, what the record cannot do without,
//!   and QUEUED only on devices without a timer read beside the host clock (NVIDIA's, PoCL's),
//!   whose conversion the commands' earliest times anchor; the record's submit time is then the
//!   host time at which the enqueue call returned, and its append time, where QUEUED is not
//!   read, the one at which it began (docs/view-api.md).
//! - `PTI_HARVEST=thread`: harvest completed OpenCL commands on a thread of libpti's own
//!   (`harvester`) instead of on the program's thread after its waits.
//! - `PTI_HARVEST_SIZE=<n>`: a pending list's shard is harvested when it has grown to n commands
//!   (default 65536, `pending::DEFAULT_HARVEST_SIZE`), besides after the program's waits and at
//!   flushes.
//! - `PTI_CLOCK_ANCHOR_NS=<ns>`: on a device without a timer read beside the host clock, the
//!   QUEUED time of one command per `<ns>` of submissions anchors the conversion (default
//!   1,000,000, `timing::DEFAULT_ANCHOR_INTERVAL_NS`; 0: every command, as before issue 39).
//!
//! Touches nothing but the process environment.

use std::sync::OnceLock;

/// Whether `var` is set to `value`, read once per switch. Asked on every command: once read,
/// the answer costs a load and a branch (the names are handed over only to the first read).
#[inline(always)]
fn switch(cell: &'static OnceLock<bool>, var: &'static str, value: &'static str) -> bool {
    match cell.get() {
        Some(on) => *on,
        None => read_switch(cell, var, value),
    }
}

#[cold]
#[inline(never)]
fn read_switch(cell: &'static OnceLock<bool>, var: &str, value: &str) -> bool {
    *cell.get_or_init(|| std::env::var_os(var).is_some_and(|v| v == value))
}

/// `PTI_OPENCL_TIMESTAMPS=all`: read QUEUED and SUBMIT too.
pub(crate) fn opencl_all_timestamps() -> bool {
    static CELL: OnceLock<bool> = OnceLock::new();
    switch(&CELL, "PTI_OPENCL_TIMESTAMPS", "all")
}

/// `PTI_HARVEST=thread`: harvest on libpti's harvester thread.
pub(crate) fn harvest_on_thread() -> bool {
    static CELL: OnceLock<bool> = OnceLock::new();
    switch(&CELL, "PTI_HARVEST", "thread")
}

/// `PTI_HARVEST_SIZE=<n>`: the least size at which a growing list's shard is harvested (at
/// least 1).
pub(crate) fn harvest_size() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    *CELL.get_or_init(|| {
        std::env::var("PTI_HARVEST_SIZE")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(super::pending::DEFAULT_HARVEST_SIZE, |n| n.max(1))
    })
}

/// `PTI_CLOCK_ANCHOR_NS=<ns>`: how often a device without a timer gets an anchor (see `timing`).
pub(crate) fn anchor_interval_ns() -> u64 {
    static CELL: OnceLock<u64> = OnceLock::new();
    *CELL.get_or_init(|| {
        std::env::var("PTI_CLOCK_ANCHOR_NS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(super::timing::DEFAULT_ANCHOR_INTERVAL_NS)
    })
}
