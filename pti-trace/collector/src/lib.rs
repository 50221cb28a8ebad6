//! # The pti-trace collector
//!
//! A tool on libpti's public C API that `pti-trace` injects into a program, right after
//! `libpti.so` (`LD_PRELOAD=libpti.so.0:libpti_trace_collector.so`), and that every process the
//! program starts inherits. When loaded it enables libpti's views (as the environment `pti-trace`
//! sets asks, see `options`); the records arrive in buffers it copies out (`collect`); at exit it
//! flushes, prints a summary on stderr (`summary`) and writes a Chrome trace-event timeline
//! (`timeline`), one per process.
//!
//! It uses nothing of libpti but its exported C functions (looked up by name, `pti`) and the
//! record layouts of `pti_view.h` (libpti's `view/abi.rs`, included as a module of its own).

#[path = "../../../pti-core/src/view/abi.rs"]
#[allow(dead_code, missing_docs, unreachable_pub, clippy::all)]
mod abi;
mod collect;
mod options;
mod pti;
mod summary;
mod timeline;

use core::ffi::c_void;
use std::io::Write as _;

use abi::{pti_api_group_id, pti_view_kind};
use options::Options;
use pti::{PTI_SUCCESS, Pti};

/// The options of this process, once the collector started.
static OPTIONS: std::sync::OnceLock<Options> = std::sync::OnceLock::new();

/// The views the collector enables for `options`.
fn views(o: &Options) -> Vec<pti_view_kind> {
    use pti_view_kind::*;
    let mut v = Vec::new();
    if o.api {
        if o.opencl || o.level_zero {
            v.push(PTI_VIEW_DRIVER_API);
        }
        if o.sycl {
            v.push(PTI_VIEW_RUNTIME_API);
        }
        v.push(PTI_VIEW_EXTERNAL_CORRELATION);
    }
    if o.device {
        v.extend([
            PTI_VIEW_DEVICE_GPU_KERNEL,
            PTI_VIEW_DEVICE_CPU_KERNEL,
            PTI_VIEW_DEVICE_GPU_MEM_COPY,
            PTI_VIEW_DEVICE_GPU_MEM_FILL,
            PTI_VIEW_DEVICE_SYNCHRONIZATION,
        ]);
    }
    if o.memory && o.sycl {
        v.push(PTI_VIEW_EXT_MEMORY_ALLOCATION);
    }
    v
}

/// Records only the API functions of the chosen backends that match the patterns (libpti
/// records every function of an enabled API view until told otherwise).
fn filter_apis(pti: &Pti, o: &Options) {
    use pti_api_group_id::*;
    let groups = [
        (PTI_API_GROUP_LEVELZERO, o.level_zero, false),
        (PTI_API_GROUP_OPENCL, o.opencl, false),
        (PTI_API_GROUP_SYCL, o.sycl, true),
    ];
    let everything = o.opencl && o.level_zero && o.sycl && o.api_patterns.is_empty();
    if everything {
        return;
    }
    for (group, chosen, runtime) in groups {
        // IDs are below 2048 in every table; gaps answer no name.
        for id in 1..2048 {
            let Some(name) = pti.api_name(group, id) else {
                continue;
            };
            let record = u32::from(chosen && o.records(name));
            // SAFETY: plain values; libpti checks them.
            unsafe {
                if runtime {
                    (pti.ptiViewEnableRuntimeApi)(record, group, id);
                } else {
                    (pti.ptiViewEnableDriverApi)(record, group, id);
                }
            }
        }
    }
}

/// Warns on stderr, with libpti's name of the failure.
fn check(pti: &Pti, what: &str, result: pti::Result) {
    if result != PTI_SUCCESS {
        eprintln!("pti-trace: {what}: {}", pti.result_name(result));
    }
}

fn start() {
    let options = match Options::from_env() {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "pti-trace: {e}; nothing is recorded in process {}",
                std::process::id()
            );
            return;
        }
    };
    let pti = match Pti::resolve() {
        Ok(p) => collect::PTI.get_or_init(|| p),
        Err(missing) => {
            eprintln!(
                "pti-trace: libpti must be loaded before the collector ({missing} not found); \
                 nothing is recorded in process {}",
                std::process::id()
            );
            return;
        }
    };
    let mut subscriber: *mut c_void = core::ptr::null_mut();
    // SAFETY: a writable handle and a callback with the signature libpti calls.
    unsafe {
        check(
            pti,
            "ptiCallbackSubscribe",
            (pti.ptiCallbackSubscribe)(
                &mut subscriber,
                collect::on_critical,
                core::ptr::null_mut(),
            ),
        );
        check(
            pti,
            "ptiCallbackEnableDomain",
            (pti.ptiCallbackEnableDomain)(1, subscriber, pti::DOMAIN_CRITICAL_EVENT),
        );
        check(
            pti,
            "ptiViewSetCallbacks",
            (pti.ptiViewSetCallbacks)(collect::requested, collect::completed),
        );
    }
    for view in views(&options) {
        // SAFETY: a view kind libpti knows.
        check(pti, &format!("ptiViewEnable({view:?})"), unsafe {
            (pti.ptiViewEnable)(view)
        });
    }
    filter_apis(pti, &options);
    let _ = OPTIONS.set(options);
    collect::install_fork_handlers();
    // SAFETY: a function with the signature atexit expects.
    unsafe { libc::atexit(finish) };
}

/// The program's command line, short.
fn process_name() -> String {
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut name = args.join(" ");
    if name.len() > 120 {
        name.truncate(117);
        name.push_str("...");
    }
    name
}

/// The exit work: flush, summary, timeline. Registered with `atexit` twice (when loaded, and at
/// the first record buffer); the first call does the work.
pub(crate) extern "C" fn finish() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        let (Some(pti), Some(options)) = (collect::PTI.get(), OPTIONS.get()) else {
            return;
        };
        // SAFETY: no arguments.
        check(pti, "ptiFlushAllViews", unsafe { (pti.ptiFlushAllViews)() });
        let mut dropped = Vec::new();
        for view in views(options) {
            let mut n = 0u64;
            // SAFETY: a view kind and a writable count.
            if unsafe { (pti.ptiViewGetDroppedRecordCount)(view, &mut n) } == PTI_SUCCESS {
                dropped.push((format!("{view:?}"), n));
            }
        }
        let mut pending = 0u64;
        // SAFETY: a writable count.
        unsafe { (pti.ptiViewGetPendingDeviceRecordCount)(&mut pending) };
        let losses = summary::Losses {
            dropped,
            pending,
            criticals: pti.critical_events(),
        };
        let process = process_name();
        collect::with(|c| {
            c.fill_in_devices();
            let text = summary::render(c, pti, &process, &losses);
            let _ = std::io::stderr().write_all(text.as_bytes());
            let Some(path) = &options.output else { return };
            let written = std::fs::File::create(path).and_then(|f| {
                let mut out = std::io::BufWriter::new(f);
                let w = timeline::write(&mut out, c, pti, &process)?;
                out.flush()?;
                Ok(w)
            });
            match written {
                Ok(w) => eprintln!(
                    "pti-trace: timeline of process {} written to {} ({} events, {} flow arrows)",
                    std::process::id(),
                    path.display(),
                    w.events,
                    w.flows
                ),
                Err(e) => eprintln!("pti-trace: cannot write {}: {e}", path.display()),
            }
        });
    });
}

extern "C" fn on_load() {
    let _ = std::panic::catch_unwind(start);
}

/// Runs [`on_load`] when the collector is loaded (before the program's `main` when preloaded).
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;
