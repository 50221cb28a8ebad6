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
//! record layouts of `pti_view.h` (the `pti-abi` crate).

use pti_abi as abi;
mod collect;
mod options;
mod pti;
mod summary;
mod timeline;

use core::ffi::c_void;
use core::sync::atomic::Ordering;
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

/// Writes `text` on stderr, and never fails or stops the program for it: errors are ignored, and
/// while writing this thread blocks SIGPIPE (stderr may be a pipe whose reader left) and takes
/// back the one the write raised.
fn say(text: &str) {
    // SAFETY: plain libc calls on a local signal set, this thread's mask and fd 2.
    unsafe {
        let mut pipe: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        let mut old: libc::sigset_t = core::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let mut pending: libc::sigset_t = core::mem::zeroed();
        libc::sigpending(&mut pending);
        let was_pending = libc::sigismember(&pending, libc::SIGPIPE) == 1;
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let n = libc::write(2, rest.as_ptr().cast(), rest.len());
            if n > 0 {
                rest = &rest[n as usize..];
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break;
            }
        }
        if !was_pending {
            let now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&pipe, core::ptr::null_mut(), &now);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, core::ptr::null_mut());
    }
}

/// Warns on stderr, with libpti's name of the failure.
fn check(pti: &Pti, what: &str, result: pti::Result) {
    if result != PTI_SUCCESS {
        say(&format!("pti-trace: {what}: {}\n", pti.result_name(result)));
    }
}

fn start() {
    let options = match Options::from_env() {
        Ok(o) => o,
        Err(e) => {
            say(&format!(
                "pti-trace: {e}; nothing is recorded in process {}\n",
                std::process::id()
            ));
            return;
        }
    };
    let pti = match Pti::resolve() {
        Ok(p) => collect::PTI.get_or_init(|| p),
        Err(missing) => {
            say(&format!(
                "pti-trace: libpti must be loaded before the collector ({missing} not found); \
                 nothing is recorded in process {}\n",
                std::process::id()
            ));
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
    shortened(args.join(" "), 120)
}

/// `text`, cut to at most `most` characters with "..." where it was cut.
fn shortened(text: String, most: usize) -> String {
    if text.chars().count() <= most {
        return text;
    }
    let mut short: String = text.chars().take(most.saturating_sub(3)).collect();
    short.push_str("...");
    short
}

/// The exit work: flush, timeline, summary. Registered with `atexit` twice (when loaded, and at
/// the first record buffer); the first call does the work.
pub(crate) extern "C" fn finish() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
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
        let pid = std::process::id();
        collect::with(|c| {
            collect::FINISHED.store(true, Ordering::Release);
            c.fill_in_devices();
            // The timeline first: a summary that cannot be printed must not cost the file.
            let written = options.output_path(pid).map(|path| {
                let result = std::fs::File::create(&path).and_then(|f| {
                    let mut out = std::io::BufWriter::new(f);
                    let w = timeline::write(&mut out, c, pti, &process)?;
                    out.flush()?;
                    Ok(w)
                });
                (path, result)
            });
            say(&summary::render(c, pti, &process, &losses));
            match written {
                Some((path, Ok(w))) => say(&format!(
                    "pti-trace: timeline of process {pid} written to {} ({} events, {} flow \
                     arrows)\n",
                    path.display(),
                    w.events,
                    w.flows
                )),
                Some((path, Err(e))) => {
                    say(&format!(
                        "pti-trace: cannot write {}: {e}\n",
                        path.display()
                    ));
                }
                None => {}
            }
        });
    });
}

/// At unload: reports records that came after the exit work (they are in neither the timeline
/// nor the summary).
extern "C" fn on_unload() {
    let late = collect::LATE_RECORDS.load(Ordering::Relaxed);
    if late > 0 {
        say(&format!(
            "*** pti-trace: {late} records of process {} arrived after its timeline was written; \
             they are in neither the timeline nor the summary ***\n",
            std::process::id()
        ));
    }
}

extern "C" fn on_load() {
    let _ = std::panic::catch_unwind(start);
}

/// Runs [`on_load`] when the collector is loaded (before the program's `main` when preloaded).
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;

/// Runs [`on_unload`] when the collector is unloaded (after the `atexit` work).
#[used]
#[unsafe(link_section = ".fini_array")]
static ON_UNLOAD: extern "C" fn() = on_unload;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shortened_on_character_boundaries() {
        assert_eq!(shortened("abc".into(), 3), "abc");
        assert_eq!(shortened("abcdef".into(), 5), "ab...");
        assert_eq!(shortened("ééééé é".into(), 6), "ééé...");
    }
}
