//! Cluster-scale analysis of pti-trace's traces, beyond the tests `cargo test` runs:
//!
//! - `cargo xtask spark` ([`spark`]): Spark in local mode reads the Parquet dataset of a
//!   multi-rank job and gives what DuckDB and `pti-trace merge` give (the ignored test
//!   `dataset::spark_reads_the_dataset_unchanged` of tests/pti_trace.rs), with pyspark in a
//!   virtual environment of its own (`target/spark-venv`, 0.5 GB, removed by `cargo xtask test`
//!   once the step passed);
//! - `cargo xtask scale [RANKS,...]` ([`scale`]): jobs of 8, 16, 32 and 64 ranks (Open MPI,
//!   oversubscribed, on PoCL) traced, exported in parallel (one process per rank), queried by
//!   DuckDB; prints the time and memory of each stage, the table of docs/BENCHMARKS.md.
//!
//! May touch: target/spark-venv, target/scale, and the processes it starts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::run::{cargo, step};

/// pyspark, pinned (Spark 4 runs on Java 17, Debian's openjdk-17-jre-headless).
const PYSPARK: &str = "pyspark==4.3.0";

/// Makes `target/spark-venv` with [`PYSPARK`] (kept while its stamp says that version): its
/// Python.
pub fn spark_venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/spark-venv");
    let stamp = venv.join("pti-packages.txt");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == PYSPARK) {
        return Ok(venv.join("bin/python"));
    }
    step(
        "a virtual environment for Spark",
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
    )?;
    step(
        "pyspark into it",
        Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            "--disable-pip-version-check",
            PYSPARK,
        ]),
    )?;
    std::fs::write(&stamp, PYSPARK).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(venv.join("bin/python"))
}

/// Runs the Spark test over the debug build of `root` (built already).
pub fn spark(root: &Path) -> Result<(), String> {
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        return Err(
            "no `java`: Spark needs a Java runtime (`cargo xtask setup` installs \
                    Debian's openjdk-17-jre-headless)"
                .into(),
        );
    }
    let python = spark_venv(root)?;
    // The workspace's test binaries, as `cargo xtask test` built them (`-p pti-tests` alone would
    // resolve features otherwise and build 0.5 GB of dependencies again); only the one test runs.
    let name = "Spark reads the Parquet dataset (pyspark, local mode)";
    let mut cmd = cargo(
        root,
        &[
            "test",
            "--workspace",
            "--tests",
            "--",
            SPARK_TEST,
            "--ignored",
            "--exact",
        ],
    );
    eprintln!("xtask: == {name}: {cmd:?}");
    let out = cmd
        .env("PTI_SPARK_PYTHON", python)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout);
    print!("{said}");
    // A filter that matched nothing would pass: the test must have run, once, and passed.
    let ran = said
        .lines()
        .filter(|l| *l == format!("test {SPARK_TEST} ... ok"))
        .count();
    if !out.status.success() || ran != 1 {
        return Err(format!(
            "step failed: {name} ({}, the test passed {ran} times)",
            out.status
        ));
    }
    eprintln!("xtask: == {name}: passed");
    Ok(())
}

/// The Spark test, by its full name.
const SPARK_TEST: &str = "dataset::spark_reads_the_dataset_unchanged";

/// Time and peak memory of a process that ended.
#[derive(Clone, Copy, Default)]
struct Used {
    seconds: f64,
    peak_kb: i64,
}

/// Waits for `child`: its status and peak memory (`wait4`), with the seconds since `began`.
fn wait(child: std::process::Child, began: Instant) -> Result<Used, String> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is a plain C struct of integers, for which all zeroes is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = loop {
        // SAFETY: both pointers are to live locals wait4 only writes; the pid is our own
        // child's, which nothing else waits for (the `Child` is dropped unwaited: std does not
        // reap on drop).
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if got != -1 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break got;
        }
    };
    if got != pid {
        return Err(format!("wait4({pid}): {}", std::io::Error::last_os_error()));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("process {pid} failed (wait status {status})"));
    }
    drop(child);
    Ok(Used {
        seconds: began.elapsed().as_secs_f64(),
        peak_kb: usage.ru_maxrss,
    })
}

/// Bytes of the files under `dir`.
fn size_of(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// Kernel launches of each rank of the scale job: rank r launches `bump` (r + 1) * LAUNCHES
/// times (tests/c/mpi_ranks.c).
const LAUNCHES: u64 = 100;

/// `mpirun` starting `ranks` ranks of what follows, on PoCL with its kernel cache in
/// `pocl_cache` (Open MPI as root on 2 cores: oversubscribed; no cross-memory attach in a
/// container).
fn mpirun_on_pocl(ranks: u32, pocl_cache: &Path) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .env("PTI_TEST_PLATFORM", "Portable")
        .env("POCL_CACHE_DIR", pocl_cache)
        .env_remove("OPENCL_LAYERS");
    cmd
}

/// Runs the scale job for each number of `ranks` and prints its table.
pub fn scale(root: &Path, ranks: &[u32]) -> Result<(), String> {
    let bin = root.join("target/debug");
    let pti_trace = bin.join("pti-trace");
    let dir = root.join("target/scale");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let program = dir.join("mpi_ranks");
    step(
        "mpicc tests/c/mpi_ranks.c",
        Command::new("mpicc")
            .args(["-std=c11", "-O2", "-Itests/c", "tests/c/mpi_ranks.c", "-o"])
            .arg(&program)
            .arg("-lOpenCL")
            .current_dir(root),
    )?;
    let pocl_cache = dir.join("pocl-cache");
    // PoCL's kernel cache filled once, by one process: ranks that all compile the same kernel
    // into an empty cache at once can fail (a cold-cache CI run saw clBuildProgram give
    // CL_BUILD_PROGRAM_FAILURE in one of 8 ranks).
    step(
        "one rank alone, to fill PoCL's kernel cache",
        mpirun_on_pocl(1, &pocl_cache).arg(&program).arg("1"),
    )?;
    let mut table = vec![
        "| ranks | kernels | trace (s) | traces (MB) | export, all ranks at once (s) | export peak RSS per process, max (MB) | dataset (MB) | DuckDB, 6 queries (s) | DuckDB peak RSS (MB) | merge (s) | merge peak RSS (MB) |".to_string(),
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".to_string(),
    ];
    for &n in ranks {
        let job = dir.join(format!("ranks{n}"));
        let _ = std::fs::remove_dir_all(&job);
        std::fs::create_dir_all(&job).map_err(|e| format!("{}: {e}", job.display()))?;

        let began = Instant::now();
        let traced = mpirun_on_pocl(n, &pocl_cache)
            .arg(&pti_trace)
            .arg("-o")
            .arg(job.join("trace.rank%r.%p.pftrace"))
            .arg("--")
            .arg(&program)
            .arg(LAUNCHES.to_string())
            .output()
            .map_err(|e| format!("mpirun: {e} (`cargo xtask setup` installs Open MPI)"))?;
        let trace_s = began.elapsed().as_secs_f64();
        if !traced.status.success() {
            return Err(format!(
                "{n} ranks: {}",
                String::from_utf8_lossy(&traced.stderr)
            ));
        }
        let mut traces: Vec<PathBuf> = std::fs::read_dir(&job)
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "pftrace"))
            .collect();
        traces.sort();
        if traces.len() != n as usize {
            return Err(format!("{n} ranks wrote {} traces", traces.len()));
        }
        let traces_mb = size_of(&job) as f64 / 1e6;

        let dataset = job.join("dataset");
        let began = Instant::now();
        let children = traces
            .iter()
            .map(|t| {
                Command::new(&pti_trace)
                    .args(["export", "--parquet"])
                    .arg(&dataset)
                    .arg(t)
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .map_err(|e| format!("pti-trace: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut export_peak = 0;
        for child in children {
            export_peak = export_peak.max(wait(child, began)?.peak_kb);
        }
        let export_s = began.elapsed().as_secs_f64();
        let dataset_mb = size_of(&dataset) as f64 / 1e6;

        let began = Instant::now();
        let mut query = Command::new(root.join(".venv/bin/python"))
            .arg(root.join("pti-trace/analysis/pti_query.py"))
            .arg("--json")
            .arg(&dataset)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("pti_query.py: {e}"))?;
        let mut out = String::new();
        if let Some(mut stdout) = query.stdout.take() {
            use std::io::Read as _;
            stdout
                .read_to_string(&mut out)
                .map_err(|e| format!("pti_query.py: {e}"))?;
        }
        let duckdb = wait(query, began)?;
        let kernels = kernels_of(&out)?;
        let expected = LAUNCHES * u64::from(n) * (u64::from(n) + 1) / 2;
        if kernels != expected {
            return Err(format!(
                "{n} ranks: DuckDB counts {kernels} kernels, the job launched {expected}"
            ));
        }

        let began = Instant::now();
        let merge = Command::new(&pti_trace)
            .arg("merge")
            .arg("-o")
            .arg(job.join("merged.pftrace"))
            .args(&traces)
            .stdout(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("pti-trace merge: {e}"))?;
        let merged = wait(merge, began)?;

        let row = format!(
            "| {n} | {kernels} | {trace_s:.1} | {traces_mb:.1} | {export_s:.2} | {:.1} | {dataset_mb:.1} | {:.2} | {:.1} | {:.2} | {:.1} |",
            export_peak as f64 / 1e3,
            duckdb.seconds,
            duckdb.peak_kb as f64 / 1e3,
            merged.seconds,
            merged.peak_kb as f64 / 1e3
        );
        eprintln!("xtask: {row}");
        table.push(row);
        std::fs::remove_dir_all(&job).map_err(|e| format!("{}: {e}", job.display()))?;
    }
    println!("{}", table.join("\n"));
    Ok(())
}

/// The kernels of every rank, from `pti_query.py --json`'s summary_ranks.
fn kernels_of(json_lines: &str) -> Result<u64, String> {
    for line in json_lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if v["query"] == "summary_ranks" {
            let at = v["columns"]
                .as_array()
                .and_then(|c| c.iter().position(|c| c == "kernels"))
                .ok_or("summary_ranks has no kernels column")?;
            return Ok(v["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r[at].as_u64())
                .sum());
        }
    }
    Err("pti_query.py printed no summary_ranks".into())
}
