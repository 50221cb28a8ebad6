//! Commands and what they do when an engine runs them: the driver's kernels, copies, fills,
//! barriers, host functions, event signals and resets, copies of kernel timestamps and writes of
//! the global timestamp. Each is timed on the host clock (the ground truth, `report::truth`) and
//! on the device timer (what its signal event reports).

use std::collections::HashMap;
use std::sync::Arc;

use pti_sys::level_zero::*;

use crate::clock;
use crate::event::{Arming, Event};
use crate::report;

/// The shortest time a command takes on the device: enough device ticks that a profiler's
/// conversion is exercised on every command.
const MIN_COMMAND_NS: u64 = 1_000;

/// What a command does, captured at append time as Level Zero requires.
#[derive(Clone)]
pub(crate) enum Work {
    Kernel {
        name: String,
        args: HashMap<u32, Vec<u8>>,
        /// Group count and group size (work-items: their products).
        groups: [u32; 3],
        size: [u32; 3],
    },
    Copy {
        dst: usize,
        src: usize,
        bytes: usize,
    },
    Fill {
        dst: usize,
        pattern: Vec<u8>,
        bytes: usize,
    },
    Barrier,
    /// A host function with its data (`zeCommandListAppendHostFunction`).
    HostFunction {
        function: unsafe extern "C" fn(*mut core::ffi::c_void),
        user_data: usize,
    },
    /// Signals the event only (`zeCommandListAppendSignalEvent`, and commands without effect
    /// here: prefetches, memory advice).
    Signal,
    /// Waits only (`zeCommandListAppendWaitOnEvents`).
    Wait,
    Reset(Arc<Event>),
    /// `zeCommandListAppendQueryKernelTimestamps`: each event's kernel timestamps, as a
    /// `ze_kernel_timestamp_result_t`, at `dst` + its offset.
    QueryTimestamps {
        events: Vec<Arc<Event>>,
        dst: usize,
        offsets: Vec<usize>,
    },
    /// `zeCommandListAppendWriteGlobalTimestamp`: the global timer's value at `dst`.
    WriteGlobalTimestamp {
        dst: usize,
    },
}

impl Work {
    /// The kind the ground truth and the report name it by.
    fn kind(&self) -> &'static str {
        match self {
            Work::Kernel { .. } => "KERNEL",
            Work::Copy { .. } => "COPY",
            Work::Fill { .. } => "FILL",
            Work::Barrier => "BARRIER",
            Work::HostFunction { .. } => "HOSTFN",
            Work::Signal => "SIGNAL",
            Work::Wait => "WAIT",
            Work::Reset(_) => "RESET",
            Work::QueryTimestamps { .. } => "QUERYTS",
            Work::WriteGlobalTimestamp { .. } => "WRITETS",
        }
    }

    /// Whether a copy engine can run it: no kernel (the copy of timestamps is a built-in kernel,
    /// compute-runtime's `appendQueryKernelTimestamps`).
    pub(crate) fn runs_on_copy_engine(&self) -> bool {
        !matches!(
            self,
            Work::Kernel { .. } | Work::QueryTimestamps { .. } | Work::HostFunction { .. }
        )
    }
}

/// A command as appended: its work, its signal event, its wait events, and its mutable
/// command ID (0: none).
#[derive(Clone)]
pub(crate) struct Command {
    pub(crate) work: Work,
    pub(crate) signal: Option<Arc<Event>>,
    pub(crate) waits: Vec<Arc<Event>>,
    pub(crate) id: u64,
}

impl Command {
    /// Every event it signals, waits for, resets or copies.
    fn events(&self) -> impl Iterator<Item = &Arc<Event>> {
        let worked: &[Arc<Event>] = match &self.work {
            Work::Reset(e) => core::slice::from_ref(e),
            Work::QueryTimestamps { events, .. } => events,
            _ => &[],
        };
        self.signal.iter().chain(&self.waits).chain(worked)
    }
}

/// A command submitted: what its events mean for this run of it.
pub(crate) struct Armed {
    pub(crate) command: Command,
    signal: Arming,
    waits: Vec<Arming>,
    /// For a copy of timestamps: the counter-based events it waits for, implicitly, until their
    /// timestamps are written (compute-runtime's `appendQueryKernelTimestamps`).
    implicit: Vec<Arming>,
}

// SAFETY: the host function's data is the program's, passed back as it asked; everything else is
// owned or thread-safe.
unsafe impl Send for Armed {}

impl Armed {
    /// What it is and what it waits for, for a report of a command that waits for ever.
    pub(crate) fn describe(&self) -> String {
        let c = &self.command;
        let waits: Vec<String> = c
            .waits
            .iter()
            .zip(&self.waits)
            .map(|(e, t)| format!("{:p} for {t:?} ({})", Arc::as_ptr(e), e.describe()))
            .collect();
        format!("{} waiting for [{}]", c.work.kind(), waits.join(", "))
    }

    /// Whether its wait events have signalled.
    pub(crate) fn ready(&self) -> bool {
        let c = &self.command;
        c.waits.iter().zip(&self.waits).all(|(e, t)| e.reached(*t))
            && match &c.work {
                Work::QueryTimestamps { events, .. } => events
                    .iter()
                    .zip(&self.implicit)
                    .all(|(e, t)| e.timestamps_written(*t)),
                _ => true,
            }
    }
}

/// Arms `commands` for one submission, in order: their waits wait for what their events mean
/// now (so a wait on an event an earlier command of the same submission signals waits for that
/// command), and their counter-based signal events are re-armed (`fresh`: with new timestamp
/// storage, as an immediate append gives).
pub(crate) fn arm(commands: Vec<Command>, fresh: bool) -> Vec<Armed> {
    commands
        .into_iter()
        .map(|command| {
            let waits = command.waits.iter().map(|e| e.wait_target()).collect();
            let implicit = match &command.work {
                Work::QueryTimestamps { events, .. } => {
                    events.iter().map(|e| e.wait_target()).collect()
                }
                _ => Vec::new(),
            };
            let signal = command
                .signal
                .as_ref()
                .map_or(Arming::Regular, |e| e.arm(fresh));
            for e in command.events() {
                e.used();
            }
            Armed {
                command,
                signal,
                waits,
                implicit,
            }
        })
        .collect()
}

/// Whether a command orders the commands of a list that is not in order around it.
pub(crate) fn orders_a_list(work: &Work) -> bool {
    !matches!(
        work,
        Work::Kernel { .. } | Work::Copy { .. } | Work::Fill { .. } | Work::HostFunction { .. }
    )
}

fn arg_ptr(args: &HashMap<u32, Vec<u8>>, i: u32) -> usize {
    args.get(&i)
        .and_then(|v| v.get(..8))
        .map_or(0, |b| usize::from_ne_bytes(b.try_into().unwrap()))
}

fn arg_u32(args: &HashMap<u32, Vec<u8>>, i: u32) -> u32 {
    args.get(&i)
        .and_then(|v| v.get(..4))
        .map_or(0, |b| u32::from_ne_bytes(b.try_into().unwrap()))
}

/// Runs a kernel the driver defines: `vadd(a, b, c)`, `scale(c, k)`, `spin(microseconds)`.
fn run_kernel(name: &str, args: &HashMap<u32, Vec<u8>>, items: u64) {
    match name {
        "vadd" => {
            let (a, b, c) = (arg_ptr(args, 0), arg_ptr(args, 1), arg_ptr(args, 2));
            for i in 0..items as usize {
                // SAFETY: the test program passes buffers of at least `items` floats.
                unsafe {
                    let v = *(a as *const f32).add(i) + *(b as *const f32).add(i);
                    *(c as *mut f32).add(i) = v;
                }
            }
        }
        "scale" => {
            let c = arg_ptr(args, 0);
            let k = f32::from_bits(arg_u32(args, 1));
            for i in 0..items as usize {
                // SAFETY: as for vadd.
                unsafe { *(c as *mut f32).add(i) *= k };
            }
        }
        "spin" => {
            let until = clock::host_ns() + u64::from(arg_u32(args, 0)) * 1000;
            while clock::host_ns() < until {
                std::hint::spin_loop();
            }
        }
        _ => {}
    }
}

/// Copies each event's kernel timestamps (as they are when the copy runs, in the storage of the
/// arming the copy was appended at) to `dst`.
fn query_timestamps(events: &[Arc<Event>], armings: &[Arming], dst: usize, offsets: &[usize]) {
    for (i, event) in events.iter().enumerate() {
        let (start, end) = event.raw_timestamps(armings.get(i).copied().unwrap_or(Arming::Regular));
        let data = ze_kernel_timestamp_data_t {
            kernelStart: clock::masked(start, clock::KERNEL_BITS),
            kernelEnd: clock::masked(end, clock::KERNEL_BITS),
        };
        let result = ze_kernel_timestamp_result_t {
            global: data,
            context: data,
        };
        let at = dst + offsets.get(i).copied().unwrap_or(i * size_of_val(&result));
        // SAFETY: the program (or profiler) passed device-accessible memory with room for every
        // event's result at its offset, as the API requires.
        unsafe { (at as *mut ze_kernel_timestamp_result_t).write_unaligned(result) };
    }
}

/// Does the command's work (`armings`: for a copy of timestamps, each event's arming when it was
/// appended); returns (kind, name, bytes) for the ground truth.
fn work(work: &Work, armings: &[Arming]) -> (&'static str, String, usize) {
    let kind = work.kind();
    match work {
        Work::Kernel {
            name,
            args,
            groups,
            size,
        } => {
            let items = (0..3)
                .map(|i| u64::from(groups[i]) * u64::from(size[i]))
                .product();
            run_kernel(name, args, items);
            (kind, name.clone(), 0)
        }
        Work::Copy { dst, src, bytes } => {
            // SAFETY: the test program passes valid, non-overlapping buffers of `bytes` bytes.
            unsafe { std::ptr::copy_nonoverlapping(*src as *const u8, *dst as *mut u8, *bytes) };
            (kind, "-".into(), *bytes)
        }
        Work::Fill {
            dst,
            pattern,
            bytes,
        } => {
            for i in 0..*bytes {
                // SAFETY: the destination holds `bytes` bytes.
                unsafe { *(*dst as *mut u8).add(i) = pattern[i % pattern.len().max(1)] };
            }
            (kind, "-".into(), *bytes)
        }
        Work::HostFunction {
            function,
            user_data,
        } => {
            // SAFETY: the program's function and data, called as it asked.
            unsafe { function(*user_data as *mut core::ffi::c_void) };
            (kind, "-".into(), 0)
        }
        Work::Reset(event) => {
            event.device_reset();
            (kind, "-".into(), 0)
        }
        Work::QueryTimestamps {
            events,
            dst,
            offsets,
        } => {
            query_timestamps(events, armings, *dst, offsets);
            (kind, "-".into(), 0)
        }
        Work::WriteGlobalTimestamp { dst } => {
            let ticks = clock::masked(clock::ticks_at(clock::host_ns()), clock::GLOBAL_BITS);
            // SAFETY: the program's device-accessible 8 bytes.
            unsafe { (*dst as *mut u64).write_unaligned(ticks) };
            (kind, "-".into(), 0)
        }
        Work::Barrier | Work::Signal | Work::Wait => (kind, "-".into(), 0),
    }
}

/// Runs one command on an engine (`copy_only`: a copy engine, which runs no kernel: such a
/// command only signals), stamps and signals its event, logs the ground truth.
pub(crate) fn execute(armed: Armed, copy_only: bool) {
    let start = clock::host_ns();
    let runs = !copy_only || armed.command.work.runs_on_copy_engine();
    let (kind, name, bytes) = if runs {
        work(&armed.command.work, &armed.implicit)
    } else {
        ("SKIPPED", "-".into(), 0)
    };
    while clock::host_ns() < start + MIN_COMMAND_NS {
        std::hint::spin_loop();
    }
    let end = clock::host_ns();
    // Counted and logged before the event says the command is done: a program that exits as soon
    // as it sees the event leaves a complete ground truth.
    report::executed(kind);
    let logged = match kind {
        "KERNEL" | "COPY" | "FILL" | "BARRIER" | "HOSTFN" => true,
        "SIGNAL" | "WAIT" => crate::config::config().truth_events,
        _ => false,
    };
    if logged {
        report::truth(&format!("TRUTH {kind} {name} {bytes} {start} {end}"));
    }
    if let Some(event) = &armed.command.signal {
        event.complete(armed.signal, clock::ticks_at(start), clock::ticks_at(end));
    }
    for e in armed.command.events() {
        e.unused();
    }
}
