//! Support for the integration tests: find the built `libpti.so`, compile C and C++ programs
//! against `include/` and it, and run them.
//!
//! The library is taken from `$PTI_LIB_DIR` (set by `cargo xtask test`) or `target/debug`. A test
//! that cannot find it fails and says how to build it; it is never skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root: `$PTI_TESTS_ROOT` where set (a test binary run on another machine, over
/// a copy of the working tree), else the checkout the tests were built in.
pub fn root() -> PathBuf {
    if let Some(dir) = std::env::var_os("PTI_TESTS_ROOT") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// The directory holding the built `libpti.so` (with its SONAME link).
pub fn lib_dir() -> PathBuf {
    let dir = std::env::var_os("PTI_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug"));
    let lib = dir.join("libpti.so");
    assert!(
        lib.exists(),
        "{} is missing: build it with `cargo build -p pti-capi` (or run `cargo xtask test`), \
         or point PTI_LIB_DIR at the directory that holds it",
        lib.display()
    );
    // The runtime loader looks the library up by its SONAME.
    link_in_place(Path::new("libpti.so"), &dir.join("libpti.so.0"));
    dir
}

/// Makes `link` a symbolic link to `target`, unless it is one already. Tests run in parallel
/// (threads, and processes of several test files) and may make the same link at once: each
/// makes one under a name of its own and renames it over `link`, which replaces whatever is
/// there in one step, so none fails because another made it first (removing `link` and then
/// linking did: "File exists").
pub fn link_in_place(target: &Path, link: &Path) {
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    if std::fs::read_link(link).ok().as_deref() == Some(target) {
        return;
    }
    let name = link.file_name().expect("a link's name").to_string_lossy();
    let own = link.with_file_name(format!(
        ".{name}.{}.{}",
        std::process::id(),
        MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&own);
    std::os::unix::fs::symlink(target, &own)
        .unwrap_or_else(|e| panic!("link {} to {}: {e}", own.display(), target.display()));
    std::fs::rename(&own, link)
        .unwrap_or_else(|e| panic!("rename {} to {}: {e}", own.display(), link.display()));
}

/// Where compiled test programs go.
pub fn out_dir() -> PathBuf {
    let dir = root().join("target/pti-tests");
    std::fs::create_dir_all(&dir).expect("create target/pti-tests");
    dir
}

/// A fresh, empty directory of one test's own under [`out_dir`]: `<name>-<pid>`, whatever an
/// earlier run of this process ID left there removed.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = out_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// API IDs by name, from the generated ID header `include/pti/<header>` (ID 0, a
/// `reserved_*_id`, names no function and is left out).
pub fn api_ids(header: &str) -> std::collections::HashMap<String, u32> {
    let path = root().join("include/pti").join(header);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the ID header {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.trim().trim_end_matches(',').split_once(" = ")?;
            let value: u32 = value.parse().ok().filter(|v| *v != 0)?;
            Some((name.strip_suffix("_id")?.to_string(), value))
        })
        .collect()
}

/// The lines of a test program's output that start with `prefix` ("W ": the program's own,
/// "T ": its tool's), the prefix taken off.
pub fn lines_after(stdout: &str, prefix: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix).map(str::to_string))
        .collect()
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
pub fn run_ok(cmd: &mut Command) -> Output {
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        output.status.success(),
        "{cmd:?} failed ({})\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Compiles C sources (paths relative to the workspace root) into `target/pti-tests/<name>`,
/// linked against `libpti.so`, warnings as errors.
pub fn compile_c(name: &str, sources: &[&str]) -> PathBuf {
    compile_c_with(name, sources, &["-lpti"])
}

/// As [`compile_c`], with `link` (libraries, `-l...`) instead of libpti alone; `tests/c` is on
/// the include path.
pub fn compile_c_with(name: &str, sources: &[&str], link: &[&str]) -> PathBuf {
    compile(
        out_dir().join(name),
        OWN_SYMBOLS,
        sources,
        link,
        &[lib_dir()],
    )
}

/// The flag a tool of libpti's own API is built with (as `pkg-config libpti` gives it): its
/// calls bind to `libpti_<name>`, which only `libpti.so` exports (`PTI_SYMBOL` in
/// `pti_export.h`).
pub const OWN_SYMBOLS: &[&str] = &["-DPTI_LIBPTI_SYMBOLS"];

/// The flags a tool built for Intel's PTI is built with (as `pkg-config pti_view` gives them):
/// Intel's `pti_callback.h` (`include/pti-intel`) comes before libpti's, and calls bind to the
/// C names.
pub const INTEL_TOOL: &[&str] = &["-Iinclude/pti-intel"];

/// Compiles C sources into the shared library `target/pti-tests/lib<name>.so` (a tool to
/// preload), linked with `link`.
pub fn compile_shared(name: &str, sources: &[&str], link: &[&str]) -> PathBuf {
    compile(
        out_dir().join(format!("lib{name}.so")),
        &[SHARED, OWN_SYMBOLS].concat(),
        sources,
        link,
        &[lib_dir()],
    )
}

/// The flags that make [`compile`] build a shared library.
pub const SHARED: &[&str] = &["-shared", "-fPIC"];

/// Compiles C sources (paths relative to the workspace root; warnings as errors) into `output`
/// with `flags` (which come before `include/` and `tests/c` on the include path), linked with
/// `link` against the libraries of `lib_dirs`, searched in that order at link time and at run
/// time.
pub fn compile(
    output: PathBuf,
    flags: &[&str],
    sources: &[&str],
    link: &[&str],
    lib_dirs: &[PathBuf],
) -> PathBuf {
    let mut cc = Command::new("cc");
    cc.current_dir(root())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .args(flags)
        .args(["-Iinclude", "-Itests/c"])
        .args(sources)
        .arg("-o")
        .arg(&output);
    for dir in lib_dirs {
        cc.arg(format!("-L{}", dir.display()))
            .arg(format!("-Wl,-rpath,{}", dir.display()));
    }
    run_ok(cc.args(link).arg("-lpthread"));
    output
}

/// The environment that has a test's OpenCL program run on Intel's CPU runtime behind the Khronos
/// loader (both installed into `.venv` by `cargo xtask setup`), choosing its platform.
pub fn intel_cpu_opencl_env() -> Vec<(&'static str, String)> {
    let venv_lib = root().join(".venv/lib");
    let icd = venv_lib.join("libintelocl.so");
    assert!(
        icd.exists() && venv_lib.join("libOpenCL.so.1").exists(),
        "{} or the Khronos loader beside it is missing: run `cargo xtask setup`, which installs \
         the PyPI packages intel-opencl-rt and intel-cmplr-lib-rt into .venv",
        icd.display()
    );
    let mut env = vec![("PTI_TEST_PLATFORM", "Intel(R) OpenCL".into())];
    env.extend(intel_cpu_icd(venv_lib).map(|(k, v)| (k, v.display().to_string())));
    env
}

/// The Khronos loader's choice of Intel's CPU runtime, both in `lib`, and the loader's search
/// path for it.
fn intel_cpu_icd(lib: PathBuf) -> [(&'static str, PathBuf); 2] {
    [
        ("OCL_ICD_FILENAMES", lib.join("libintelocl.so")),
        ("LD_LIBRARY_PATH", lib),
    ]
}

/// `.venv`, with what `cargo xtask setup` installs there for SYCL: dpctl, the SYCL runtime and
/// its XPTI framework, Intel's CPU OpenCL runtime and the Khronos loader.
pub fn sycl_venv() -> PathBuf {
    let venv = root().join(".venv");
    for needed in [
        "bin/python",
        "lib/libsycl.so",
        "lib/libxptifw.so",
        "lib/libintelocl.so",
        "lib/libOpenCL.so.1",
    ] {
        assert!(
            venv.join(needed).exists(),
            "{} is missing: run `cargo xtask setup`, which installs dpctl, the SYCL runtime and \
             Intel's CPU OpenCL runtime into .venv",
            venv.join(needed).display()
        );
    }
    venv
}

/// The environment that has a Python program of `.venv` (dpctl, SYCL) run on Intel's CPU OpenCL
/// runtime behind the Khronos loader, both in `.venv` (checked by [`sycl_venv`]).
pub fn sycl_python_env() -> [(&'static str, PathBuf); 2] {
    intel_cpu_icd(sycl_venv().join("lib"))
}

/// The Python SYCL workload (`tests/python/sycl_workload.py`) on Intel's CPU OpenCL runtime,
/// its environment cleared of everything that sets up tracing (XPTI, Unified Runtime and OpenCL
/// layers, libpti's switches, `LD_PRELOAD`): a test adds what it traces with.
pub fn sycl_workload() -> Command {
    let mut cmd = Command::new(sycl_venv().join("bin/python"));
    cmd.arg(root().join("tests/python/sycl_workload.py"))
        .envs(sycl_python_env());
    for var in [
        "XPTI_SUBSCRIBERS",
        "XPTI_TRACE_ENABLE",
        "XPTI_FRAMEWORK_DISPATCHER",
        "UR_ENABLE_LAYERS",
        "OPENCL_LAYERS",
        "PTI_SYCL",
        "PTI_OPENCL_LAYER",
        "LD_PRELOAD",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `cmd` to its end, its output captured, killing it (and failing the test, with what it
/// printed so far) if it is still running after `limit`: a hung program is a failure, not a
/// stuck test run.
pub fn run_with_watchdog(cmd: &mut Command, limit: std::time::Duration) -> Output {
    run_with_watchdog_and_pid(cmd, limit).0
}

/// As [`run_with_watchdog`], with the program's process ID: what a preloaded tool names its
/// output after, so that a test finds the program's file among those of the processes the program
/// starts (PoCL's compiler, with a cold kernel cache).
pub fn run_with_watchdog_and_pid(cmd: &mut Command, limit: std::time::Duration) -> (Output, u32) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    // Drain both pipes on threads so a chatty program cannot block on a full pipe.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let pid = child.id();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the program") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let (out, err) = (out.join().unwrap(), err.join().unwrap());
            panic!(
                "{cmd:?} hung: killed after {limit:?}\n--- stdout (last 2000 bytes)\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&out[out.len().saturating_sub(2000)..]),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, pid)
}

/// The prefix of the second name libpti exports for each function of its API
/// (`pti-capi/src/symbols.rs`), which its headers bind tools to.
pub const OWN_SYMBOL_PREFIX: &str = "libpti_";

/// The prefix of the Intel PTI 1.2 face's functions in `libpti.so`
/// (`pti-capi/src/intel/`), which `libpti_view.so.1` forwards to; they have no plain name there.
pub const INTEL_FACE_PREFIX: &str = "libpti_intel_";

/// Exported function names of `libpti.so` (dynamic symbol table, defined functions).
pub fn exports() -> Vec<String> {
    exports_of(&lib_dir().join("libpti.so"))
}

/// Exported function names of the shared library `lib`, without their symbol versions.
pub fn exports_of(lib: &Path) -> Vec<String> {
    let out = run_ok(Command::new("nm").args(["-D", "--defined-only"]).arg(lib));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (_, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "T").then(|| unversioned(name).to_string())
        })
        .collect()
}

/// A symbol as `nm` prints it (`ptiViewEnable@@LIBPTI_0`, `libpti_ptiViewEnable@LIBPTI_0`),
/// without its version.
pub fn unversioned(symbol: &str) -> &str {
    symbol.split('@').next().unwrap_or(symbol)
}

/// One of the Unified Runtime's two Level Zero adapters in `.venv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adapter {
    /// `libur_adapter_level_zero.so`: regular command lists batched and executed on queues.
    V1,
    /// `libur_adapter_level_zero_v2.so`: immediate in-order lists and counter-based events.
    V2,
}

/// Points a SYCL program's environment at the simulated Level Zero driver as a GPU
/// (`tests/ze-sim`, through the real loader), through `adapter`: the program selects
/// `level_zero:gpu`, the Unified Runtime takes the adapter its documented switch
/// `UR_LOADER_USE_LEVEL_ZERO_V2` names, and the adapters' loader front end opens the real loader
/// through `tests/ze-loader-compat` (see its docs: the adapters want a loader newer than the
/// 1.8.12 that runs here). `PTI_TEST_BACKEND=level_zero` makes `tests/python/sycl_workload.py`
/// run on it.
pub fn sycl_over_level_zero(cmd: &mut Command, adapter: Adapter) -> &mut Command {
    let build = lib_dir();
    let sim = build.join("libze_sim.so");
    let compat = build.join("libze_loader_compat.so");
    for lib in [&sim, &compat] {
        assert!(
            lib.exists(),
            "{} is missing: build it with `cargo build -p ze-sim -p ze-loader-compat` (`cargo \
             xtask test` does)",
            lib.display()
        );
    }
    // The front end opens `$ZEL_LIBRARY_PATH/libze_loader.so.1`.
    let dir = out_dir().join("ze-loader-compat");
    std::fs::create_dir_all(&dir).expect("create the compat directory");
    link_in_place(&compat, &dir.join("libze_loader.so.1"));
    cmd.env("PTI_TEST_BACKEND", "level_zero")
        .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
        .env("ZE_ENABLE_ALT_DRIVERS", &sim)
        .env("ZE_SIM_DEVICE_TYPE", "gpu")
        .env("ZEL_LIBRARY_PATH", &dir)
        .env(
            "UR_LOADER_USE_LEVEL_ZERO_V2",
            if adapter == Adapter::V2 { "1" } else { "0" },
        )
        .env_remove("ZE_ENABLE_TRACING_LAYER")
        .env_remove("ZE_SIM_MINIMAL")
}

/// Checks the report of an every-command program (`tests/c/every_command.h`): for each function
/// ("E name id submitted recorded counted"), every command recorded or counted, never both, and
/// nothing dropped or pending ("D 0", "P 0"). Returns the functions exercised; `what` names the
/// run in failures.
pub fn every_command_accounted(what: &str, stdout: &str) -> Vec<String> {
    let mut covered = Vec::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[..] {
            ["E", name, _, submitted, records, counted] => {
                let n = |s: &str| s.parse::<u64>().expect("a count");
                let (submitted, records, counted) = (n(submitted), n(records), n(counted));
                assert!(
                    submitted > 0 && records + counted == submitted && records * counted == 0,
                    "{what}: {name}: {submitted} commands, {records} recorded, {counted} counted"
                );
                covered.push(name.to_string());
            }
            ["D", n] | ["P", n] => assert_eq!(n, "0", "{what}: {line}"),
            _ => {}
        }
    }
    covered
}

/// Pairs records with the commands the driver ran, closest first, each command and each record
/// once. `candidates` are `(error in ns, record, command)` for every pair that may match (same
/// kind, same name); `records` counts the records. Returns the pairs made, or the index of the
/// first record that no command matches.
pub fn pair_closest(
    mut candidates: Vec<(u64, usize, usize)>,
    records: usize,
) -> Result<Vec<(u64, usize, usize)>, usize> {
    candidates.sort_unstable();
    let mut record_done = vec![false; records];
    let mut command_done = std::collections::HashSet::new();
    let mut made = Vec::new();
    for (error, record, command) in candidates {
        if !record_done[record] && !command_done.contains(&command) {
            record_done[record] = true;
            command_done.insert(command);
            made.push((error, record, command));
        }
    }
    match record_done.iter().position(|done| !done) {
        Some(unmatched) => Err(unmatched),
        None => Ok(made),
    }
}

/// The largest error of `pairs` ([`pair_closest`]'s), 0 for none.
pub fn worst_error(pairs: &[(u64, usize, usize)]) -> u64 {
    pairs.iter().map(|p| p.0).max().unwrap_or(0)
}

/// The kinds of commands the simulated driver counts as executed (its report's `EXECUTED` line).
pub const SIM_EXECUTED_KINDS: [&str; 10] = [
    "KERNEL", "COPY", "FILL", "BARRIER", "HOSTFN", "SIGNAL", "WAIT", "RESET", "QUERYTS", "WRITETS",
];

/// One process's report from the simulated Level Zero driver (`ZE_SIM_REPORT`, three lines:
/// `LIVE`, `CALLS`, `EXECUTED`; see `tests/ze-sim/src/report.rs`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SimReport {
    /// Objects alive at exit by kind, then `stuck` and `destroyed_in_use`.
    pub live: Vec<(String, i64)>,
    /// Host queries of events: `zeEventQueryStatus`, `zeEventQueryKernelTimestamp`,
    /// `timestamp_polls`.
    pub calls: std::collections::BTreeMap<String, u64>,
    /// Commands executed, by kind.
    pub executed: std::collections::BTreeMap<String, u64>,
}

impl SimReport {
    /// The reports in a report file's text, one per process that loaded the driver.
    pub fn parse_all(text: &str) -> Vec<SimReport> {
        fn pairs(rest: &str) -> Vec<(String, i64)> {
            let words: Vec<&str> = rest.split_whitespace().collect();
            words
                .chunks(2)
                .map(|kv| {
                    let value = kv.get(1).and_then(|v| v.parse().ok());
                    (
                        kv[0].to_string(),
                        value.unwrap_or_else(|| panic!("bad report pair {kv:?}")),
                    )
                })
                .collect()
        }
        let mut reports: Vec<SimReport> = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("LIVE ") {
                reports.push(SimReport {
                    live: pairs(rest),
                    ..SimReport::default()
                });
            } else if let Some(rest) = line.strip_prefix("CALLS ") {
                let r = reports.last_mut().expect("a LIVE line first");
                r.calls = pairs(rest)
                    .into_iter()
                    .map(|(k, v)| (k, v as u64))
                    .collect();
            } else if let Some(rest) = line.strip_prefix("EXECUTED ") {
                let r = reports.last_mut().expect("a LIVE line first");
                r.executed = pairs(rest)
                    .into_iter()
                    .map(|(k, v)| (k, v as u64))
                    .collect();
            } else if !line.trim().is_empty() {
                panic!("unexpected line in the driver's report: {line:?}");
            }
        }
        reports
    }

    /// The one report of a file written by a single process.
    pub fn read_one(path: &Path) -> SimReport {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("no driver report {}: {e}", path.display()));
        let mut all = Self::parse_all(&text);
        assert_eq!(
            all.len(),
            1,
            "one process's report in {}: {text}",
            path.display()
        );
        all.pop().unwrap()
    }

    /// The reports of a file written by one process that loaded `drivers` copies of the driver
    /// (a GPU's and an NPU's: each copy reports), summed.
    pub fn read_summed(path: &Path, drivers: usize) -> SimReport {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("no driver report {}: {e}", path.display()));
        let all = Self::parse_all(&text);
        assert_eq!(
            all.len(),
            drivers,
            "{drivers} drivers' reports in {}: {text}",
            path.display()
        );
        let mut sum = SimReport::default();
        for report in all {
            for (name, n) in report.live {
                match sum.live.iter_mut().find(|(k, _)| *k == name) {
                    Some((_, total)) => *total += n,
                    None => sum.live.push((name, n)),
                }
            }
            for (name, n) in report.calls {
                *sum.calls.entry(name).or_default() += n;
            }
            for (name, n) in report.executed {
                *sum.executed.entry(name).or_default() += n;
            }
        }
        sum
    }

    /// A live count (or `stuck`, `destroyed_in_use`) by name.
    pub fn live(&self, name: &str) -> i64 {
        self.live
            .iter()
            .find(|(k, _)| k == name)
            .map_or(0, |(_, v)| *v)
    }

    /// Commands that waited for ever, and objects destroyed while in use.
    pub fn faults(&self) -> (i64, i64) {
        (self.live("stuck"), self.live("destroyed_in_use"))
    }
}

/// The newest Level Zero headers and loader that `cargo xtask setup` fetches from Debian
/// (`.cache/level-zero/<version>/`).
pub fn newest_level_zero() -> PathBuf {
    let cache = root().join(".cache/level-zero");
    let trees: Vec<PathBuf> = std::fs::read_dir(&cache)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("usr/include/level_zero/ze_api.h").exists())
                .collect()
        })
        .unwrap_or_default();
    match trees.as_slice() {
        [one] => one.clone(),
        _ => panic!(
            "expected one unpacked Level Zero release under {} (found {trees:?}): run `cargo xtask \
             setup`, which fetches Debian's libze-dev and libze1 1.32",
            cache.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests run in parallel, and several make the compat loader's link at once: each must find
    /// it in place, none may fail because another made it first.
    #[test]
    fn a_link_made_by_many_threads_at_once_is_made_once() {
        let dir = scratch_dir("link-race");
        let target = dir.join("target.so");
        std::fs::write(&target, b"").unwrap();
        for round in 0..50 {
            let link = dir.join(format!("link-{round}"));
            let start = std::sync::Barrier::new(8);
            std::thread::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|| {
                        start.wait();
                        link_in_place(&target, &link);
                    });
                }
            });
            assert_eq!(std::fs::read_link(&link).unwrap(), target);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
