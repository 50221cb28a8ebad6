//! What the collector records and writes, from the environment `pti-trace` sets:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `PTI_TRACE_OUTPUT` | timeline file; `%p` becomes the process ID, `%r` the MPI rank (`norank` outside MPI), `%h` the host name (default `pti-trace.%p.pftrace`, or `pti-trace.rank%r.%p.pftrace` in an MPI rank) |
//! | `PTI_TRACE_FORMAT` | `perfetto` (native protobuf, streamed) or `json` (Chrome trace events, at exit); default: `json` for an output ending in `.json`, else `perfetto` |
//! | `PTI_TRACE_FLUSH_MS` | flush the views at least this often, in milliseconds (default 1000; 0: only when buffers fill and at exit) |
//! | `PTI_TRACE_SUMMARY_ONLY=1` | write no timeline |
//! | `PTI_TRACE_CSV` | also write the summary's tables as CSV to this file (`%p` becomes the process ID) |
//! | `PTI_TRACE_RAW_NAMES=1` | kernel names as the runtime gave them (default: C++ names demangled; read by `names`) |
//! | `PTI_TRACE_BACKENDS` | comma list of `opencl`, `level-zero`, `sycl` (default: all) |
//! | `PTI_TRACE_VIEWS` | comma list of `api`, `device`, `memory`, `annotations` (default: all) |
//! | `PTI_TRACE_API` | comma list of API function patterns (`*` matches any run of characters) to record; default: every function |
//! | `PTI_TRACE_KERNELS` | comma list of kernel name patterns: record only the kernels matching one |
//! | `PTI_TRACE_EXCLUDE_KERNELS` | comma list of kernel name patterns: record none of the kernels matching one |
//! | `PTI_TRACE_DELAY_MS` | start paused, resume this long after the process loaded the collector (`capture`) |
//! | `PTI_TRACE_DURATION_MS` | pause this long after collection started (`capture`) |
//! | `PTI_TRACE_TOGGLE_SIGNAL` | a signal number: each delivery pauses or resumes collection (`capture`) |
//! | `PTI_TRACE_STARTED` | when the run began (nanoseconds since the epoch; pti-trace sets it): an output file written since was written by this run (another process sharing the output, or the image this one `exec`'d from) and is left alone, this process writing `<stem>.<n><ext>`; an older one is kept as `<name>.old` |
//! | `PTI_TRACE_FORCE=1` | replace output files already there (the user's own regular files only) |
//! | `PTI_TRACE_MAX_SIZE` | a size (`500M`, `2G`): once the Perfetto timeline has reached it, later records are counted in the summary, not written |
//! | `PTI_TRACE_JSON_MAX_RECORDS` | the records a JSON timeline keeps at most (default 1,000,000); later ones are counted in the summary, not kept |
//!
//! Patterns match the name as the timeline shows it (demangled unless `PTI_TRACE_RAW_NAMES=1`)
//! or as the runtime gave it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The timeline's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Native Perfetto protobuf, streamed as records arrive (`perfetto`).
    Perfetto,
    /// Chrome trace-event JSON, written at exit (`json`).
    Json,
}

/// The collector's settings.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The timeline's file name pattern (None: no timeline), as bytes: a name need not be UTF-8.
    pub(crate) output: Option<OsString>,
    pub(crate) format: Format,
    /// The CSV summary's file name pattern, if asked for.
    pub(crate) csv: Option<OsString>,
    /// How often to flush (None: only when buffers fill and at exit).
    pub(crate) flush_interval: Option<std::time::Duration>,
    pub(crate) opencl: bool,
    pub(crate) level_zero: bool,
    pub(crate) sycl: bool,
    pub(crate) api: bool,
    pub(crate) device: bool,
    pub(crate) memory: bool,
    /// The program's ITT annotations, and oneCCL's communication.
    pub(crate) annotations: bool,
    pub(crate) api_patterns: Vec<String>,
    /// Kernel name patterns to record (empty: every kernel).
    pub(crate) kernels: Vec<String>,
    /// Kernel name patterns not to record.
    pub(crate) exclude_kernels: Vec<String>,
    /// Start paused and resume after this long (`capture`).
    pub(crate) delay: Option<std::time::Duration>,
    /// Pause this long after collection started (`capture`).
    pub(crate) duration: Option<std::time::Duration>,
    /// The signal that toggles collection (`capture`).
    pub(crate) toggle_signal: Option<i32>,
    /// What becomes of an output file already there.
    pub(crate) if_exists: pti_files::IfExists,
    /// The records a JSON timeline keeps at most (written at exit, so held in memory).
    pub(crate) json_max_records: usize,
    /// The size past which a Perfetto timeline takes no more records (`--max-size`).
    pub(crate) max_size: Option<u64>,
}

impl Options {
    /// The settings of this process.
    pub(crate) fn from_env() -> Result<Options, String> {
        let get = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let get_os = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let summary_only = get("PTI_TRACE_SUMMARY_ONLY").is_some_and(|v| v == "1");
        let format = match get("PTI_TRACE_FORMAT").as_deref() {
            Some(text) => match pti_trace_options::format(text)
                .map_err(|e| format!("PTI_TRACE_FORMAT: {e}"))?
            {
                pti_trace_options::Format::Perfetto => Format::Perfetto,
                pti_trace_options::Format::Json => Format::Json,
            },
            None if get_os("PTI_TRACE_OUTPUT")
                .is_some_and(|o| o.as_bytes().ends_with(b".json")) =>
            {
                Format::Json
            }
            None => Format::Perfetto,
        };
        let flush_interval = match get("PTI_TRACE_FLUSH_MS")
            .map(|v| pti_trace_options::milliseconds(&v))
            .transpose()
            .map_err(|e| format!("PTI_TRACE_FLUSH_MS: {e}"))?
        {
            None => Some(std::time::Duration::from_millis(1000)),
            Some(0) => None,
            Some(ms) => Some(std::time::Duration::from_millis(ms)),
        };
        let default_output = match (format, mpi_rank().is_some()) {
            (Format::Perfetto, false) => "pti-trace.%p.pftrace",
            (Format::Json, false) => "pti-trace.%p.json",
            (Format::Perfetto, true) => "pti-trace.rank%r.%p.pftrace",
            (Format::Json, true) => "pti-trace.rank%r.%p.json",
        };
        let output = (!summary_only)
            .then(|| get_os("PTI_TRACE_OUTPUT").unwrap_or_else(|| default_output.into()));
        let backends = pti_trace_options::backends(get("PTI_TRACE_BACKENDS").as_deref())
            .map_err(|e| format!("PTI_TRACE_BACKENDS: {e}"))?;
        let views = pti_trace_options::views(get("PTI_TRACE_VIEWS").as_deref())
            .map_err(|e| format!("PTI_TRACE_VIEWS: {e}"))?;
        let patterns = |name: &str| -> Vec<String> {
            get(name)
                .map(|v| {
                    v.split(',')
                        .map(|p| p.trim().to_string())
                        .filter(|p| !p.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        let api_patterns = patterns("PTI_TRACE_API");
        let millis = |name: &str| -> Result<Option<std::time::Duration>, String> {
            get(name)
                .map(|v| {
                    pti_trace_options::milliseconds(&v)
                        .map(std::time::Duration::from_millis)
                        .map_err(|e| format!("{name}: {e}"))
                })
                .transpose()
        };
        let toggle_signal = get("PTI_TRACE_TOGGLE_SIGNAL")
            .map(|v| {
                pti_trace_options::toggle_signal(&v)
                    .map_err(|e| format!("PTI_TRACE_TOGGLE_SIGNAL: {e}"))
            })
            .transpose()?;
        Ok(Options {
            output,
            format,
            flush_interval,
            csv: get_os("PTI_TRACE_CSV"),
            opencl: backends.contains(&"opencl"),
            level_zero: backends.contains(&"level-zero"),
            sycl: backends.contains(&"sycl"),
            api: views.contains(&"api"),
            device: views.contains(&"device"),
            memory: views.contains(&"memory"),
            annotations: views.contains(&"annotations"),
            api_patterns,
            kernels: patterns("PTI_TRACE_KERNELS"),
            exclude_kernels: patterns("PTI_TRACE_EXCLUDE_KERNELS"),
            delay: millis("PTI_TRACE_DELAY_MS")?,
            duration: millis("PTI_TRACE_DURATION_MS")?,
            toggle_signal,
            if_exists: if_exists(get("PTI_TRACE_FORCE"), get("PTI_TRACE_STARTED"))?,
            max_size: get("PTI_TRACE_MAX_SIZE")
                .map(|v| {
                    pti_trace_options::size(&v).map_err(|e| format!("PTI_TRACE_MAX_SIZE: {e}"))
                })
                .transpose()?,
            json_max_records: match get("PTI_TRACE_JSON_MAX_RECORDS").map(|v| v.parse::<usize>()) {
                None => JSON_MAX_RECORDS,
                Some(Ok(n)) => n,
                Some(Err(_)) => {
                    return Err("PTI_TRACE_JSON_MAX_RECORDS is not a number of records".into());
                }
            },
        })
    }

    /// The timeline file of process `pid` (`%p` is replaced at exit, so that a child forked
    /// without `exec` writes its own file).
    pub(crate) fn output_path(&self, pid: u32) -> Option<PathBuf> {
        self.output.as_ref().map(|pattern| expand(pattern, pid))
    }

    /// Whether the kernel named `shown` (as the timeline shows it) or `raw` (as the runtime gave
    /// it) is to be recorded, by the kernel filters.
    pub(crate) fn records_kernel(&self, shown: &str, raw: &str) -> bool {
        let any = |patterns: &[String]| {
            patterns
                .iter()
                .any(|p| matches(p, shown) || matches(p, raw))
        };
        (self.kernels.is_empty() || any(&self.kernels)) && !any(&self.exclude_kernels)
    }

    /// Whether API function `name` is to be recorded.
    pub(crate) fn records(&self, name: &str) -> bool {
        self.api_patterns.is_empty() || self.api_patterns.iter().any(|p| matches(p, name))
    }
}

/// The records a JSON timeline keeps by default: about 200 MB of the collector's memory (a JSON
/// timeline is written at exit, so its records are held until then; issue 36 measured 983 MB
/// after 10 s without a bound). A Perfetto timeline streams and has no such bound.
pub(crate) const JSON_MAX_RECORDS: usize = 1_000_000;

/// What becomes of an output already there: replaced with `PTI_TRACE_FORCE=1`; else kept as
/// `.old`, or left alone where this run (begun at `PTI_TRACE_STARTED`) wrote it.
fn if_exists(
    force: Option<String>,
    started: Option<String>,
) -> Result<pti_files::IfExists, String> {
    if force.as_deref() == Some("1") {
        return Ok(pti_files::IfExists::Replace);
    }
    let run_started = started
        .map(|ns| {
            ns.parse::<u64>()
                .map(|ns| std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns))
                .map_err(|_| format!("PTI_TRACE_STARTED={ns} is not nanoseconds since the epoch"))
        })
        .transpose()?;
    Ok(pti_files::IfExists::KeepOld { run_started })
}

/// The MPI rank of this process, from the variables the usual launchers set: Open MPI
/// (`OMPI_COMM_WORLD_RANK`), PMIx (`PMIX_RANK`), MPICH and Intel MPI (`PMI_RANK`), MVAPICH
/// (`MV2_COMM_WORLD_RANK`), Slurm's `srun` (`SLURM_PROCID`); the first one set, in that order.
pub(crate) fn mpi_rank() -> Option<u32> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "MV2_COMM_WORLD_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
}

/// This machine's name (empty if it has none).
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// A file name pattern with `%p` (the process ID `pid`), `%r` (the MPI rank, `norank` outside
/// MPI) and `%h` (the host name) replaced; the rest of the name kept byte for byte.
pub(crate) fn expand(pattern: &OsStr, pid: u32) -> PathBuf {
    let rank = mpi_rank().map_or_else(|| "norank".to_string(), |r| r.to_string());
    let (pid, host) = (pid.to_string(), host_name());
    pti_files::expand(pattern, &[("%p", &pid), ("%r", &rank), ("%h", &host)])
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_with_wildcards() {
        assert!(matches("clEnqueue*", "clEnqueueNDRangeKernel"));
        assert!(matches("*Kernel", "clEnqueueNDRangeKernel"));
        assert!(matches("cl*Range*", "clEnqueueNDRangeKernel"));
        assert!(matches("clFinish", "clFinish"));
        assert!(!matches("clFinish", "clFinishX"));
        assert!(!matches("ze*", "clFinish"));
        assert!(!matches("a*a", "a"));
        assert!(matches("*", ""));
    }
}
