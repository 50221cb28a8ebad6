//! Commands and their execution on the calling thread: the fixture's kernels, copies, fills and
//! barriers, each timed on the host clock (the ground truth) and on the device timer (what its
//! signal event reports).

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

use pti_sys::level_zero::*;

use crate::clock;
use crate::objects::{Event, List, object};

/// A command appended to a list: what it does, captured at append time as Level Zero requires.
pub(crate) struct Command {
    pub(crate) work: Work,
    pub(crate) signal: ze_event_handle_t,
    /// Events that must have signalled before it runs.
    pub(crate) waits: Vec<ze_event_handle_t>,
}

/// Commands that ran while an event they wait for had not signalled: a real device would have
/// waited forever (execution here is synchronous, so nothing could signal it meanwhile).
pub(crate) static STUCK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// SAFETY: the handles are plain pointers to the fixture's own objects, which are thread-safe.
unsafe impl Send for Command {}

pub(crate) enum Work {
    Kernel {
        name: String,
        args: HashMap<u32, Vec<u8>>,
        items: u64,
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
    /// A host function with its data (zeCommandListAppendHostFunction).
    HostFunction {
        function: unsafe extern "C" fn(*mut core::ffi::c_void),
        user_data: usize,
    },
    /// Signals the event only (zeCommandListAppendSignalEvent).
    Signal,
    Reset(ze_event_handle_t),
}

static TRUTH: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Appends `line` to the ground-truth file, if the test asked for one (`ZE_SIM_TRUTH`).
pub(crate) fn truth(line: &str) {
    let Some(path) = std::env::var_os("ZE_SIM_TRUTH") else {
        return;
    };
    let mut file = TRUTH.lock().unwrap();
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

/// Runs a kernel the fixture defines: `vadd(a, b, c)`, `scale(c, k)`, `spin(microseconds)`.
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

/// Counts the events of a wait list that have not signalled (see [`STUCK`]): the command that
/// waits for them runs anyway.
pub(crate) fn check_waits(waits: &[ze_event_handle_t]) {
    for wait in waits {
        // SAFETY: an event handle of this fixture.
        let e: &Event = unsafe { object(*wait) };
        if !e.signaled.load(Ordering::Acquire) {
            STUCK.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The event behind `handle`, if any.
fn event<'a>(handle: ze_event_handle_t) -> Option<&'a Event> {
    // SAFETY: a NULL handle or an event handle of this fixture.
    (!handle.is_null()).then(|| unsafe { object(handle) })
}

/// Re-arms a counter-based signal event (see [`Event::rearm`]); others are left alone.
pub(crate) fn rearm(signal: ze_event_handle_t) {
    if let Some(e) = event(signal) {
        e.rearm();
    }
}

/// Signals `signal`, if any, for work that ran from host time `start` to `end`.
pub(crate) fn signal(signal: ze_event_handle_t, start: u64, end: u64) {
    if let Some(e) = event(signal) {
        e.signal(clock::ticks_at(start), clock::ticks_at(end));
    }
}

/// Executes a regular list's commands in order (a queue's execution, or an immediate list's
/// append of it).
pub(crate) fn run_list(list: &List) {
    for command in list.commands.lock().unwrap().iter() {
        execute(command);
    }
}

/// Executes one command: checks its wait events, re-arms a counter-based signal event, does its
/// work, stamps and signals its event, logs the ground truth.
pub(crate) fn execute(command: &Command) {
    check_waits(&command.waits);
    rearm(command.signal);
    let start = clock::host_ns();
    let (kind, name, bytes) = match &command.work {
        Work::Kernel { name, args, items } => {
            run_kernel(name, args, *items);
            ("KERNEL", name.clone(), 0)
        }
        Work::Copy { dst, src, bytes } => {
            // SAFETY: the test program passes valid, non-overlapping buffers of `bytes` bytes.
            unsafe { std::ptr::copy_nonoverlapping(*src as *const u8, *dst as *mut u8, *bytes) };
            ("COPY", "-".into(), *bytes)
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
            ("FILL", "-".into(), *bytes)
        }
        Work::Barrier => ("BARRIER", "-".into(), 0),
        Work::HostFunction {
            function,
            user_data,
        } => {
            // SAFETY: the program's function and data, called as it asked.
            unsafe { function(*user_data as *mut core::ffi::c_void) };
            ("HOSTFN", "-".into(), 0)
        }
        Work::Signal => ("SIGNAL", "-".into(), 0),
        Work::Reset(reset) => {
            if let Some(e) = event(*reset) {
                e.reset();
            }
            ("RESET", "-".into(), 0)
        }
    };
    let end = clock::host_ns();
    signal(command.signal, start, end);
    if matches!(kind, "KERNEL" | "COPY" | "FILL" | "BARRIER" | "HOSTFN") {
        truth(&format!("TRUTH {kind} {name} {bytes} {start} {end}"));
    }
}
