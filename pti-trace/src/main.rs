//! # pti-trace
//!
//! ```text
//! pti-trace [options] -- program [args...]
//! ```
//!
//! Runs `program` with `libpti.so` and the pti-trace collector injected (`LD_PRELOAD`), so that
//! every process it starts is traced too. Each process's collector streams its timeline (a
//! Perfetto trace, or Chrome JSON at exit) and prints a summary on pti-trace's stderr at exit.
//! pti-trace itself only prepares the environment and waits: all the tracing is libpti's, reached
//! through the `libpti` crate (see `pti-trace/collector`). `pti-trace export` (module `export`)
//! turns its Perfetto traces into an SQLite database.
//!
//! The libraries are looked for in `$PTI_TRACE_LIB_DIR`, beside the executable, then in
//! `../lib` from it (an installed tree). Paths handed to the program (the libraries, the
//! timeline pattern) are made absolute, since the program may change directory.
//!
//! While the program runs, pti-trace ignores Ctrl-C and Ctrl-\ (the program gets them and decides);
//! when the program dies of a signal, pti-trace dies of the same one, so that its caller sees
//! what the program's own caller would.

mod capture;
mod check;
mod dataset;
mod export;
mod identity;
mod merge;
mod otf2;
mod outputs;
mod packets;
mod records;
mod reports;
mod stop;
mod tables;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: pti-trace [options] -- program [args...]
       pti-trace export --sqlite OUT.db TRACE.pftrace...
       pti-trace export --parquet OUT_DIR TRACE.pftrace...
       pti-trace export --otf2 OUT TRACE.pftrace...
       pti-trace merge -o OUT.pftrace TRACE.pftrace...
       pti-trace check

Runs program with libpti injected; each process of it writes its timeline (a Perfetto trace,
streamed as records arrive: open it in https://ui.perfetto.dev) and, at exit, prints a summary
on pti-trace's stderr. `export` turns Perfetto traces it wrote into an SQLite database (tables
api_call, device_op, annotation, counter, critical_event, thread, process; views api_summary,
device_summary), or into a Parquet dataset of the same tables partitioned by MPI rank and host
(OUT_DIR/TABLE/rank=R/host=H/TRACE.parquet), which several exports may write at once. `merge`
combines the traces of several processes (the ranks of an MPI job) into one on one clock and
prints a summary across them. `check` says what on this machine would
keep a run from showing GPU records (runtimes, tracing layer, device permissions, variables).

`export --otf2 OUT` writes the traces as one OTF2 archive in the directory OUT, which it creates
(a location group per trace, named by rank; open OUT/traces.otf2 in Vampir or otf2-print). It
loads the OTF2 library at run time: Debian's libopen-trace-format2-10.

options:
  -o, --output PATH      timeline file of each process; %p becomes its process ID, %r its MPI
                         rank (norank outside MPI), %h the host name (default:
                         pti-trace.%p.pftrace, pti-trace.rank%r.%p.pftrace in an MPI rank, or
                         .json with --format json)
  -f, --format FORMAT    perfetto: native Perfetto protobuf, streamed to the file as records
                         arrive, so a crashed or killed run keeps what was flushed (default;
                         json when PATH ends in .json); json: Chrome trace-event JSON, written
                         at exit
      --csv PATH         also write each process's summary tables as CSV (%p: its process ID)
      --max-size SIZE    stop writing each process's Perfetto timeline once it reaches SIZE
                         (500M, 2G; K, M, G are powers of 1024): later records are counted in
                         the summary, which says how many; the file ends with its last whole
                         batch of records
      --force            replace output files already there (default: a file there is kept as
                         NAME.old, as perf does; one written by another process of this run,
                         or by the image a process exec'd from, is left alone and the process
                         writes NAME.1.pftrace, NAME.2.pftrace...). Outputs are created 0600,
                         never through a symbolic link, never a FIFO or device
      --raw-names        kernel names as the runtime gave them (default: C++ names, SYCL
                         kernels' among them, demangled)
      --flush-interval MS
                         flush records to the timeline at least every MS milliseconds
                         (default 1000; 0: only when buffers fill and at exit)
  -s, --summary-only     print the summaries, write no timeline
  -b, --backends LIST    backends to trace: opencl,level-zero,sycl (default: all)
  -v, --views LIST       what to record: api (driver and runtime calls), device (kernels,
                         copies, fills, barriers), memory (SYCL allocations), annotations
                         (the program's ITT tasks and markers, oneCCL's communication)
                         (default: all)
  -a, --api PATTERNS     record only the API functions matching these comma-separated patterns
                         (* matches any run of characters), e.g. 'clEnqueue*,ze*Launch*'
  -k, --kernels PATTERNS record only the kernels whose names match one of these patterns
                         (demangled or as the runtime gave them), e.g. 'gemm*,*reduce*'
      --exclude-kernels PATTERNS
                         record none of the kernels whose names match one of these patterns
  -h, --help             this text
  -V, --version          pti-trace's version

capture control (each process; records only from the windows where collection runs):
      --start-paused     start with collection paused
      --delay SECONDS    start paused and resume SECONDS after each process started
      --duration SECONDS pause SECONDS after collection started (after the delay, if any)
      --toggle-signal SIG
                         each SIG (WINCH, URG, PROF, ALRM, HUP, USR1, USR2, RTMIN+N, or a
                         real-time signal number) sent to pti-trace pauses or resumes
                         collection in every traced process (a resize's SIGWINCH does not).
                         Prefer WINCH or URG: a process that has no handler yet ignores them
                         (the others end it), and LLVM (in PoCL and Intel's CPU runtime) takes
                         USR1 and USR2
  The program itself pauses and resumes with ITT's __itt_pause/__itt_resume or libpti's
  ptiViewPause/ptiViewResume;
  PTI_START_PAUSED=1 starts any libpti process paused.";

/// What the command line asks for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    /// As given (a file name need not be UTF-8).
    output: Option<OsString>,
    format: Option<String>,
    flush_interval: Option<String>,
    raw_names: bool,
    csv: Option<OsString>,
    summary_only: bool,
    backends: Option<String>,
    views: Option<String>,
    api: Option<String>,
    kernels: Option<String>,
    exclude_kernels: Option<String>,
    start_paused: bool,
    /// Milliseconds.
    delay: Option<String>,
    /// Milliseconds.
    duration: Option<String>,
    toggle_signal: Option<i32>,
    /// Replace output files already there.
    force: bool,
    /// `--max-size`, as given (checked).
    max_size: Option<String>,
    program: Vec<OsString>,
}

enum Parsed {
    Run(Box<Args>),
    Help,
    Version,
}

/// Checks a comma list with `check` (`pti_trace_options`, which the collector shares).
fn checked_list(
    value: &str,
    check: fn(Option<&str>) -> Result<Vec<&'static str>, String>,
    option: &str,
) -> Result<String, String> {
    check(Some(value)).map_err(|e| format!("{option}: {e}"))?;
    Ok(value.to_string())
}

/// An option's value as text (for values that are words and numbers, not file names).
fn lossy(value: OsString) -> String {
    value.to_string_lossy().into_owned()
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Parsed, String> {
    let mut args = args.into_iter();
    let mut out = Args::default();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let mut value_os = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match text.as_str() {
            "--" => {
                out.program = args.collect();
                break;
            }
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            "-o" | "--output" => out.output = Some(value_os(&text)?),
            "-f" | "--format" => {
                let format = lossy(value_os(&text)?);
                pti_trace_options::format(&format).map_err(|e| format!("{text}: {e}"))?;
                out.format = Some(format);
            }
            "--raw-names" => out.raw_names = true,
            "--force" => out.force = true,
            "--max-size" => {
                let size = lossy(value_os(&text)?);
                pti_trace_options::size(&size).map_err(|e| format!("{text}: {e}"))?;
                out.max_size = Some(size);
            }
            "--csv" => out.csv = Some(value_os(&text)?),
            "--flush-interval" => {
                let ms = lossy(value_os(&text)?);
                pti_trace_options::milliseconds(&ms).map_err(|e| format!("{text}: {e}"))?;
                out.flush_interval = Some(ms);
            }
            "-s" | "--summary-only" => out.summary_only = true,
            "-b" | "--backends" => {
                out.backends = Some(checked_list(
                    &lossy(value_os(&text)?),
                    pti_trace_options::backends,
                    &text,
                )?)
            }
            "-v" | "--views" => {
                out.views = Some(checked_list(
                    &lossy(value_os(&text)?),
                    pti_trace_options::views,
                    &text,
                )?)
            }
            "-a" | "--api" => out.api = Some(lossy(value_os(&text)?)),
            "-k" | "--kernels" => out.kernels = Some(lossy(value_os(&text)?)),
            "--exclude-kernels" => out.exclude_kernels = Some(lossy(value_os(&text)?)),
            "--start-paused" => out.start_paused = true,
            "--delay" => out.delay = Some(capture::millis(&text, &lossy(value_os(&text)?))?),
            "--duration" => out.duration = Some(capture::millis(&text, &lossy(value_os(&text)?))?),
            "--toggle-signal" => {
                out.toggle_signal = Some(capture::signal(&lossy(value_os(&text)?))?)
            }
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            _ => {
                // The program without `--`.
                out.program = std::iter::once(arg).chain(args).collect();
                break;
            }
        }
    }
    if out.program.is_empty() {
        return Err("no program to run".into());
    }
    Ok(Parsed::Run(Box::new(out)))
}

/// libpti's file in `dir`: its soname, or the development link where only that is there.
fn libpti_in(dir: &Path) -> Option<PathBuf> {
    ["libpti.so.0", "libpti.so"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
}

/// The directory holding libpti and the collector, absolute, with libpti's file in it.
fn lib_dir() -> Result<(PathBuf, PathBuf), String> {
    let usable = |d: &Path| {
        let libpti = libpti_in(d)?;
        d.join("libpti_trace_collector.so").exists().then(|| {
            let dir = d.canonicalize().unwrap_or_else(|_| d.to_path_buf());
            let name = libpti.file_name().map(PathBuf::from).unwrap_or_default();
            (dir.join(&name), dir)
        })
    };
    if let Some(dir) = std::env::var_os("PTI_TRACE_LIB_DIR") {
        let dir = PathBuf::from(dir);
        return usable(&dir).map(|(lib, d)| (d, lib)).ok_or_else(|| {
            format!(
                "PTI_TRACE_LIB_DIR={} lacks libpti.so.0 (or libpti.so) or \
                 libpti_trace_collector.so",
                dir.display()
            )
        });
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find pti-trace itself: {e}"))?;
    let here = exe.parent().unwrap_or(Path::new("."));
    [here.to_path_buf(), here.join("../lib")]
        .into_iter()
        .find_map(|d| usable(&d))
        .map(|(lib, d)| (d, lib))
        .ok_or_else(|| {
            format!(
                "libpti.so.0 and libpti_trace_collector.so are neither beside {} nor in ../lib \
                 (set PTI_TRACE_LIB_DIR)",
                exe.display()
            )
        })
}

/// `path` made absolute against the current directory (left as it is if that is unknown).
fn absolute(path: &OsStr) -> OsString {
    match std::env::current_dir() {
        Ok(cwd) if !Path::new(path).is_absolute() => cwd.join(path).into_os_string(),
        _ => path.to_os_string(),
    }
}

/// The command that runs the program traced.
fn command(args: &Args, libs: &Path, libpti: &Path) -> Command {
    let mut cmd = Command::new(&args.program[0]);
    cmd.args(&args.program[1..]);
    let mut preload = OsString::from(libpti);
    preload.push(":");
    preload.push(libs.join("libpti_trace_collector.so"));
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(existing);
    }
    cmd.env("LD_PRELOAD", preload);
    itt_collector(&mut cmd, args, libpti);
    // File names as given, bytes and all.
    for (name, path) in [
        ("PTI_TRACE_OUTPUT", &args.output),
        ("PTI_TRACE_CSV", &args.csv),
    ] {
        match path {
            Some(path) => cmd.env(name, absolute(path)),
            None => cmd.env_remove(name),
        };
    }
    let mut set = |name: &str, value: &Option<String>| match value {
        Some(v) => {
            cmd.env(name, v);
        }
        None => {
            cmd.env_remove(name);
        }
    };
    set("PTI_TRACE_REPORT_FD", &reports::descriptor());
    // When the run began: an output file written since is this run's (another process sharing
    // the output, or the image a process exec'd from) and is not replaced.
    set("PTI_TRACE_STARTED", &Some(run_started().to_string()));
    set("PTI_TRACE_FORCE", &args.force.then(|| "1".to_string()));
    set("PTI_TRACE_MAX_SIZE", &args.max_size);
    set("PTI_TRACE_FORMAT", &args.format);
    set("PTI_TRACE_FLUSH_MS", &args.flush_interval);
    set(
        "PTI_TRACE_RAW_NAMES",
        &args.raw_names.then(|| "1".to_string()),
    );
    set("PTI_TRACE_BACKENDS", &args.backends);
    set("PTI_TRACE_VIEWS", &args.views);
    set("PTI_TRACE_API", &args.api);
    set("PTI_TRACE_KERNELS", &args.kernels);
    set("PTI_TRACE_EXCLUDE_KERNELS", &args.exclude_kernels);
    // `--delay` starts paused too: from libpti's first moment, not the collector's timer's.
    set(
        "PTI_START_PAUSED",
        &(args.start_paused || args.delay.is_some()).then(|| "1".to_string()),
    );
    set(
        "PTI_TRACE_PID",
        &args.toggle_signal.map(|_| std::process::id().to_string()),
    );
    set("PTI_TRACE_DELAY_MS", &args.delay);
    set("PTI_TRACE_DURATION_MS", &args.duration);
    set(
        "PTI_TRACE_TOGGLE_SIGNAL",
        &args.toggle_signal.map(|n| n.to_string()),
    );
    set(
        "PTI_TRACE_SUMMARY_ONLY",
        &args.summary_only.then(|| "1".to_string()),
    );
    // A backend left out is left alone by libpti's constructor too.
    if let Some(list) = &args.backends {
        for (backend, opt_out) in [
            ("opencl", "PTI_OPENCL_LAYER"),
            ("level-zero", "PTI_LEVEL_ZERO"),
            ("sycl", "PTI_SYCL"),
        ] {
            if !list.split(',').any(|b| b.trim() == backend) {
                cmd.env(opt_out, "0");
            }
        }
    }
    cmd
}

/// Now, in nanoseconds since the epoch, a little before: a file system's timestamps may be
/// coarser than the clock (ext4: the kernel's tick), and a file written just after the run began
/// must not look older than it.
fn run_started() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64).saturating_sub(20_000_000)
}

/// Makes libpti the program's ITT collector (`INTEL_LIBITTNOTIFY64`), so that its annotations
/// are recorded, unless annotations are not asked for or the variable names another collector
/// already (said once: that collector gets them).
fn itt_collector(cmd: &mut Command, args: &Args, libpti: &Path) {
    let wanted = args
        .views
        .as_deref()
        .is_none_or(|v| v.split(',').any(|x| x.trim() == "annotations"));
    if !wanted {
        return;
    }
    match std::env::var_os("INTEL_LIBITTNOTIFY64") {
        Some(other) if !other.is_empty() && Path::new(&other) != libpti => eprintln!(
            "pti-trace: INTEL_LIBITTNOTIFY64={} names another ITT collector: the program's \
             annotations go there, not to the timeline",
            other.to_string_lossy()
        ),
        _ => {
            cmd.env("INTEL_LIBITTNOTIFY64", libpti);
        }
    }
}

/// The command line of a subcommand that reads trace files and writes one file: the path after
/// one of `flags`, and the traces; None without both.
fn output_and_traces(args: Vec<OsString>, flags: &[&str]) -> Option<(PathBuf, Vec<PathBuf>)> {
    let mut out = None;
    let mut traces = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if flags.iter().any(|f| arg == *f) {
            out = args.next().map(PathBuf::from);
        } else {
            traces.push(PathBuf::from(arg));
        }
    }
    (!traces.is_empty()).then_some((out?, traces))
}

/// `pti-trace merge -o OUT.pftrace TRACE...`.
fn merge_command(args: Vec<OsString>) -> ExitCode {
    let Some((out, traces)) = output_and_traces(args, &["-o", "--output"]) else {
        eprintln!("pti-trace: merge needs -o OUT.pftrace and trace files\n\n{USAGE}");
        return ExitCode::from(2);
    };
    if let Err(e) = outputs::check_not_an_input(&out, &traces) {
        eprintln!("pti-trace: merge: {e}");
        return ExitCode::from(2);
    }
    match merge::merge(&out, &traces) {
        Ok(summary) => {
            print!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pti-trace: merge: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `pti-trace export --sqlite OUT.db TRACE...`, `export --parquet OUT_DIR TRACE...` or
/// `export --otf2 OUT TRACE...`.
fn export_command(args: Vec<OsString>) -> ExitCode {
    if args.iter().any(|a| a == "--parquet") {
        return parquet_export(args);
    }
    // `export --otf2 OUT TRACE...`: module `otf2`.
    if args.iter().any(|a| a == "--otf2") {
        return otf2::command(args);
    }
    let Some((out, traces)) = output_and_traces(args, &["--sqlite"]) else {
        eprintln!(
            "pti-trace: export needs --sqlite OUT.db (or --parquet OUT_DIR, --otf2 OUT) and trace files\n\n{USAGE}"
        );
        return ExitCode::from(2);
    };
    if let Err(e) = outputs::check_not_an_input(&out, &traces) {
        eprintln!("pti-trace: export: {e}");
        return ExitCode::from(2);
    }
    // `export --sqlite r1.pftrace r2.pftrace`, the database's name forgotten: what is there is
    // not a database, and stays.
    if out.exists() && !export::is_sqlite(&out) {
        eprintln!(
            "pti-trace: export: {} exists and is not an SQLite database (a trace? the command is \
             `export --sqlite OUT.db TRACE...`): not replaced",
            out.display()
        );
        return ExitCode::from(2);
    }
    match export::sqlite(&out, &traces) {
        Ok(()) => {
            eprintln!("pti-trace: wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pti-trace: export: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `pti-trace export --parquet OUT_DIR TRACE...`: into the dataset OUT_DIR, which other exports
/// may be writing into at the same time.
fn parquet_export(args: Vec<OsString>) -> ExitCode {
    let Some((out, traces)) = output_and_traces(args, &["--parquet"]) else {
        eprintln!("pti-trace: export needs --parquet OUT_DIR and trace files\n\n{USAGE}");
        return ExitCode::from(2);
    };
    // `export --parquet r1.pftrace r2.pftrace`, the directory forgotten: a file there stays.
    if std::fs::symlink_metadata(&out).is_ok_and(|m| m.is_file()) {
        eprintln!(
            "pti-trace: export: {} exists and is not a directory (a trace? the command is \
             `export --parquet OUT_DIR TRACE...`): not written",
            out.display()
        );
        return ExitCode::from(2);
    }
    match dataset::parquet(&out, &traces) {
        Ok(files) => {
            eprintln!(
                "pti-trace: wrote {} files of {} traces into the dataset {}",
                files.len(),
                traces.len(),
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pti-trace: export: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut all: Vec<OsString> = std::env::args_os().skip(1).collect();
    if all.first().is_some_and(|a| a == "export") {
        return export_command(all.split_off(1));
    }
    if all.first().is_some_and(|a| a == "merge") {
        return merge_command(all.split_off(1));
    }
    if all.first().is_some_and(|a| a == "check") {
        return if check::run(lib_dir()) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let parsed = match parse(all) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pti-trace: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let args = match parsed {
        Parsed::Help => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Parsed::Version => {
            println!("pti-trace {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Parsed::Run(args) => args,
    };
    let (libs, libpti) = match lib_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("pti-trace: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cmd = command(&args, &libs, &libpti);
    let reports = match reports::directory() {
        Ok(dir) => {
            cmd.env("PTI_TRACE_REPORT_DIR", &dir)
                .env("PTI_TRACE_QUIET_LIST", reports::quiet_list(&dir));
            Some(dir)
        }
        Err(e) => {
            eprintln!(
                "pti-trace: cannot make a directory for reports ({e}); processes whose \
                       reporting descriptor is closed write theirs beside their timeline"
            );
            cmd.env_remove("PTI_TRACE_REPORT_DIR")
                .env_remove("PTI_TRACE_QUIET_LIST");
            None
        }
    };
    if let (Some(signal), Some(dir)) = (args.toggle_signal, &reports) {
        match capture::prepare(dir) {
            Ok(capture) => capture::forward(signal, capture),
            Err(e) => eprintln!(
                "pti-trace: cannot prepare the capture state ({e}): signal {signal} toggles \
                 only the processes it is sent to"
            ),
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "pti-trace: cannot run {}: {e}",
                args.program[0].to_string_lossy()
            );
            if let Some(dir) = &reports {
                let _ = std::fs::remove_dir_all(dir);
            }
            return ExitCode::from(127);
        }
    };
    stop::pass_on_to(child.id() as i32);
    let status = child.wait();
    stop::program_gone();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pti-trace: cannot wait for the program: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(dir) = &reports {
        reports::gather(dir);
    }
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(signal)) => {
            eprintln!("pti-trace: the program was killed by signal {signal}");
            die_of(signal);
            ExitCode::from(128 + signal as u8)
        }
        _ => ExitCode::FAILURE,
    }
}

/// Ends pti-trace by `signal`, as the program ended (returns only if the signal does not end it).
fn die_of(signal: i32) {
    // SAFETY: plain libc calls: no core file for pti-trace (the program's is the one that
    // matters), the default action restored, the signal unblocked and raised.
    unsafe {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
        libc::raise(signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(list: &[&str]) -> Result<Args, String> {
        match parse(list.iter().map(OsString::from))? {
            Parsed::Run(a) => Ok(*a),
            _ => Err("not a run".into()),
        }
    }

    #[test]
    fn options_then_program() {
        let a = run_args(&["-o", "t.%p.json", "-b", "opencl,sycl", "--", "prog", "-x"]).unwrap();
        assert_eq!(a.output.as_deref(), Some(OsStr::new("t.%p.json")));
        assert_eq!(a.backends.as_deref(), Some("opencl,sycl"));
        assert_eq!(a.program, ["prog", "-x"]);
        let a = run_args(&["-s", "prog", "--", "x"]).unwrap();
        assert!(a.summary_only);
        assert_eq!(a.program, ["prog", "--", "x"]);
    }

    #[test]
    fn bad_command_lines_are_refused() {
        assert!(run_args(&[]).is_err());
        assert!(run_args(&["--"]).is_err());
        assert!(run_args(&["-o"]).is_err());
        assert!(run_args(&["-b", "cuda", "--", "p"]).is_err());
        assert!(run_args(&["-v", "api,kernels", "--", "p"]).is_err());
        assert!(run_args(&["--frobnicate", "--", "p"]).is_err());
        assert!(run_args(&["-f", "protobuf", "--", "p"]).is_err());
        assert!(run_args(&["--flush-interval", "soon", "--", "p"]).is_err());
    }

    #[test]
    fn capture_options() {
        let a = run_args(&[
            "--start-paused",
            "--delay",
            "0.25",
            "--duration",
            "2",
            "--toggle-signal",
            "USR2",
            "-k",
            "gemm*",
            "--exclude-kernels",
            "*copy*",
            "p",
        ])
        .unwrap();
        assert!(a.start_paused);
        assert_eq!(a.delay.as_deref(), Some("250"));
        assert_eq!(a.duration.as_deref(), Some("2000"));
        assert_eq!(a.toggle_signal, Some(libc::SIGUSR2));
        assert_eq!(a.kernels.as_deref(), Some("gemm*"));
        assert_eq!(a.exclude_kernels.as_deref(), Some("*copy*"));
        assert!(run_args(&["--toggle-signal", "INT", "p"]).is_err());
        assert!(run_args(&["--delay", "-2", "p"]).is_err());
    }

    #[test]
    fn format_and_flush_interval() {
        let a = run_args(&["-f", "json", "--flush-interval", "250", "--", "p"]).unwrap();
        assert_eq!(a.format.as_deref(), Some("json"));
        assert_eq!(a.flush_interval.as_deref(), Some("250"));
        let a = run_args(&["--csv", "s.%p.csv", "--raw-names", "p"]).unwrap();
        assert_eq!(a.csv.as_deref(), Some(OsStr::new("s.%p.csv")));
        assert!(a.raw_names);
    }
}
