//! # The pti-trace collector
//!
//! A tool on libpti's public API that `pti-trace` injects into a program, right after
//! `libpti.so` (`LD_PRELOAD=libpti.so.0:libpti_trace_collector.so`), and that every process the
//! program starts inherits. When loaded it enables libpti's views (as the environment `pti-trace`
//! sets asks, see `options`); the records arrive in batches it copies out (`collect`), tallies for
//! the summary (`summary`) and streams to a Perfetto trace (`perfetto`), flushed with each batch
//! and periodically (`flusher`); at exit it flushes, and reports the summary where pti-trace reads
//! it (`report`), or writes the JSON timeline (`timeline`) when that format was asked: one file
//! per process that did GPU-runtime work.
//!
//! It uses nothing of libpti but the safe API of the `libpti` crate ([`libpti::Views`] for the
//! records, typed as [`libpti::Record`]; a [`libpti::Subscriber`] for critical events and for
//! the few calls that tell where barriers run (`queues`); the
//! crate's names and loss counts), which calls libpti's exported C functions. The collector
//! links `libpti.so` (a `DT_NEEDED` on `libpti.so.0`, without a run path): the dynamic linker
//! finds the `libpti.so.0` that `pti-trace` preloaded before it by that SONAME.

use pti_abi as abi;
mod capture;
mod collect;
mod flusher;
mod lanes;
mod names;
mod options;
mod output;
mod perfetto;
mod queues;
mod report;
mod summary;
mod timeline;

use core::sync::atomic::Ordering;
use std::io::Write as _;
use std::sync::OnceLock;

use abi::{pti_api_group_id, pti_view_kind};
use libpti::{Domain, Event, Subscriber, Views};
use options::Options;

/// The options of this process, once the collector started.
pub(crate) static OPTIONS: OnceLock<Options> = OnceLock::new();

/// The collector's views, for the whole process: never dropped (dropping them would disable the
/// views and stop the delivery of records), so that records keep arriving until the exit work
/// and after it (counted as late).
pub(crate) static VIEWS: OnceLock<Views> = OnceLock::new();

/// The collector's subscription (critical events, and the calls `queues` listens to), for the
/// whole process: never dropped (dropping it would unsubscribe), since critical events matter up
/// to the last flush of the exit work.
static CRITICAL_EVENTS: OnceLock<Subscriber> = OnceLock::new();

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
    if o.annotations {
        v.extend([PTI_VIEW_EXT_ANNOTATION, PTI_VIEW_COMMUNICATION]);
    }
    if o.device {
        // What could not be recorded: commands without a record kind, named in the summary.
        v.push(PTI_VIEW_EXT_LOSS);
    }
    v
}

/// The name of API `id` of `group` (None for an ID libpti does not name).
pub(crate) fn api_name(group: pti_api_group_id, id: u32) -> Option<&'static str> {
    libpti::view::api_name(group, id).and_then(|name| name.to_str().ok())
}

/// Records only the API functions of the chosen backends that match the patterns (libpti
/// records every function of an enabled API view until told otherwise).
fn filter_apis(o: &Options) {
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
            let Some(name) = api_name(group, id) else {
                continue;
            };
            let record = chosen && o.records(name);
            // Every ID here is one libpti named: nothing to report.
            let _ = if runtime {
                libpti::view::record_runtime_api(group, id, record)
            } else {
                libpti::view::record_driver_api(group, id, record)
            };
        }
    }
}

/// Writes `text` where reports go (`report`: pti-trace's stderr, not the program's), and never
/// fails or stops the program for it: errors are ignored, and while writing this thread blocks
/// SIGPIPE (the descriptor may be a pipe whose reader left) and takes back the one the write
/// raised.
pub(crate) fn say(text: &str) {
    let fd = match report::target() {
        Ok(fd) => fd,
        Err(file) if report::append(&file, text) => return,
        Err(_) => 2,
    };
    // SAFETY: plain libc calls on a local signal set, this thread's mask and `fd`.
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
            let n = libc::write(fd, rest.as_ptr().cast(), rest.len());
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
pub(crate) fn check(what: &str, result: Result<(), libpti::Error>) {
    if let Err(e) = result {
        say(&format!("pti-trace: {what}: {}\n", e.name()));
    }
}

/// Subscribes to critical events and, when device work is recorded, to the few calls that
/// tell where barriers and markers run (`queues`); kept for the process in [`CRITICAL_EVENTS`].
fn subscribe(options: &Options) {
    let subscriber = Subscriber::new(|event| match event {
        Event::Critical(critical) => collect::on_critical(critical),
        Event::ApiCall(call) => queues::on_call(call),
    });
    let subscriber = match subscriber {
        Ok(subscriber) => subscriber,
        Err(e) => return check("ptiCallbackSubscribe", Err(e)),
    };
    check(
        "ptiCallbackEnableDomain",
        subscriber.enable_domain(Domain::CriticalEvent, true),
    );
    if options.device {
        for &(group, name) in queues::FUNCTIONS {
            let chosen = match group {
                libpti::ApiGroup::OpenCl => options.opencl,
                _ => options.level_zero,
            };
            if let (true, Some(id)) = (chosen, api_id(group, name)) {
                check(
                    &format!("ptiCallbackEnable({name})"),
                    subscriber.enable(group, id, true),
                );
            }
        }
    }
    let _ = CRITICAL_EVENTS.set(subscriber);
}

/// The ID of function `name` in `group`'s table.
fn api_id(group: libpti::ApiGroup, name: &str) -> Option<u32> {
    let group = match group {
        libpti::ApiGroup::LevelZero => pti_api_group_id::PTI_API_GROUP_LEVELZERO,
        libpti::ApiGroup::OpenCl => pti_api_group_id::PTI_API_GROUP_OPENCL,
        libpti::ApiGroup::Sycl => pti_api_group_id::PTI_API_GROUP_SYCL,
    };
    (1..2048).find(|&id| api_name(group, id) == Some(name))
}

/// Starts the views `options` ask for, kept for the process in [`VIEWS`]. The records go to
/// `collect`, in 4 MiB buffers; libpti's first buffer request registers the exit work again.
fn start_views(options: &Options) {
    let flush_interval = options.flush_interval;
    let started = Views::builder(&[])
        .buffer_size(collect::BUFFER_SIZE)
        // Runtimes register their own teardown when they start, after the collector was
        // loaded, and `atexit` runs the last registered first: registered again at the first
        // buffer (the program's first traced call), the collector's flush comes before their
        // teardown.
        .on_first_buffer(move || {
            // SAFETY: a function with the signature atexit expects.
            unsafe { libc::atexit(finish) };
            if let Some(interval) = flush_interval {
                flusher::start(interval);
            }
        })
        .start(collect::deliver);
    let mut enabled = match started {
        Ok(enabled) => enabled,
        Err(e) => return check("ptiViewSetCallbacks", Err(e)),
    };
    for view in views(options) {
        check(&format!("ptiViewEnable({view:?})"), enabled.enable(view));
    }
    let _ = VIEWS.set(enabled);
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
    subscribe(&options);
    start_views(&options);
    filter_apis(&options);
    capture::start(&options);
    let _ = OPTIONS.set(options);
    collect::install_fork_handlers();
    // SAFETY: a function with the signature atexit expects.
    unsafe { libc::atexit(finish) };
}

/// The program's command line, short, after "rank R: " in an MPI rank.
pub(crate) fn process_name() -> String {
    match options::mpi_rank() {
        Some(rank) => format!("rank {rank}: {}", command_line()),
        None => command_line(),
    }
}

/// The program's command line, short.
fn command_line() -> String {
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

/// How many critical events libpti raised in the process, whether delivered or not: the counts
/// of every code (codes that are no event answer an error and count nothing).
fn critical_events() -> u64 {
    (0..400)
        .filter_map(|code| libpti::critical_event_count(code).ok())
        .sum()
}

/// The exit work: flush, timeline, summary. Registered with `atexit` twice (when loaded, and at
/// the first record buffer); the first call does the work.
/// "the summary CSV went to <other name> / the file there was kept as <name>.old".
fn placed(what: &str, asked: &std::path::Path, created: &pti_files::Created) -> String {
    let mut text = String::new();
    if created.path != asked {
        text += &format!(
            "pti-trace: {} was written by another process of this run: the {what} of process {} \
             is in {}\n",
            asked.display(),
            std::process::id(),
            created.path.display()
        );
    }
    if let Some(old) = &created.kept_as {
        text += &format!(
            "pti-trace: the file that was at {} is kept as {}\n",
            asked.display(),
            old.display()
        );
    }
    text
}

extern "C" fn finish() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        let Some(options) = OPTIONS.get() else {
            return;
        };
        flusher::stop();
        capture::unregister();
        if let Some(enabled) = VIEWS.get() {
            check("ptiFlushAllViews", enabled.flush());
        }
        let dropped = views(options)
            .into_iter()
            .filter_map(|view| {
                let n = libpti::view::dropped_count(view).ok()?;
                Some((format!("{view:?}"), n))
            })
            .collect();
        let losses = summary::Losses {
            dropped,
            pending: libpti::view::pending_device_records().unwrap_or(0),
            criticals: critical_events(),
        };
        let process = process_name();
        let pid = std::process::id();
        collect::with(|c| {
            collect::FINISHED.store(true, Ordering::Release);
            if c.recorded_nothing() && losses.is_none() && note_quiet() {
                return;
            }
            c.fill_in_devices();
            // The timeline first: a summary that cannot be printed must not cost the file.
            let written =
                match options.format {
                    options::Format::Json => options.output_path(pid).map(|path| {
                        match pti_files::create(&path, options.if_exists) {
                            Ok(created) => {
                                c.kept_as = created.kept_as;
                                let mut out = std::io::BufWriter::new(created.file);
                                let result = timeline::write(&mut out, c, &process)
                                    .and_then(|w| out.flush().map(|()| w));
                                (created.path, result)
                            }
                            Err(e) => (path, Err(e)),
                        }
                    }),
                    // Streamed: finished here; no file if no call or device work was recorded.
                    options::Format::Perfetto => match c.stream.take() {
                        Some(Ok(mut stream)) => {
                            let path = stream.path().to_path_buf();
                            Some((path, stream.finish(&c.names)))
                        }
                        Some(Err(e)) => {
                            say(&format!("pti-trace: {e}\n"));
                            None
                        }
                        None => None,
                    },
                };
            say(&summary::render(c, &process, &losses));
            if let Some(pattern) = &options.csv {
                let path = options::expand(pattern, pid);
                let written =
                    pti_files::create(&path, options.if_exists).and_then(|mut created| {
                        created.file.write_all(summary::csv(c).as_bytes())?;
                        Ok(created)
                    });
                match written {
                    Ok(created) if created.path != path || created.kept_as.is_some() => {
                        say(&placed("summary CSV", &path, &created));
                    }
                    Ok(_) => {}
                    Err(e) => say(&format!(
                        "pti-trace: cannot write {}: {e}\n",
                        path.display()
                    )),
                }
            }
            if let Some(old) = &c.kept_as {
                say(&format!(
                    "pti-trace: the file that was at this process's timeline path is kept as {}\n",
                    old.display()
                ));
            }
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

/// Notes this process in pti-trace's list of processes that recorded nothing (instead of an
/// empty summary), as "<pid> <command name>"; false when there is no list (the collector
/// preloaded without pti-trace).
fn note_quiet() -> bool {
    // The kernel's name of the command (at most 15 bytes), which names a compiler or a shell a
    // runtime started well enough for the summary's line.
    let name = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    let name = name.trim();
    let line = format!(
        "{} {}\n",
        std::process::id(),
        if name.is_empty() { "?" } else { name }
    );
    std::env::var_os("PTI_TRACE_QUIET_LIST")
        .is_some_and(|list| report::append(std::path::Path::new(&list), &line))
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
/// Not in the unit tests' program, which must not trace itself.
#[used]
#[cfg_attr(not(test), unsafe(link_section = ".init_array"))]
static ON_LOAD: extern "C" fn() = on_load;

/// Runs [`on_unload`] when the collector is unloaded (after the `atexit` work); not in the unit
/// tests' program.
#[used]
#[cfg_attr(not(test), unsafe(link_section = ".fini_array"))]
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
