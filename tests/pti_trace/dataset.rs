//! `pti-trace export --parquet` at the scale of many ranks: a 4-rank job (Open MPI starting
//! tests/python/rank_workload.py: SYCL kernels, ITT annotations, oneCCL-domain communication)
//! and one process outside MPI, each trace exported by its own process at the same time into one
//! dataset, then the documented queries (pti-trace/analysis/queries) run by DuckDB, checked
//! equal to `pti-trace merge`'s summary and to the same figures computed here from the SQLite
//! export; and by Spark (local mode), checked equal to DuckDB's (`cargo xtask spark`, a step of
//! `cargo xtask test`, which installs pyspark).

use super::*;

use std::process::Stdio;

/// A job's traces, `merge`'s summary of them, and the dataset their exports wrote.
struct Job {
    dir: PathBuf,
    traces: Vec<PathBuf>,
    summary: String,
    dataset: PathBuf,
}

/// Runs 4 ranks of the workload under mpirun and one process outside MPI, each under
/// pti-trace; merges the 5 traces; exports each into one dataset, 5 exports at once.
fn job(name: &str) -> Job {
    let dir = scratch(name);
    let venv = pti_tests::sycl_venv();
    let workload = |cmd: &mut Command| {
        cmd.arg("--")
            .arg(venv.join("bin/python"))
            .arg(root().join("tests/python/rank_workload.py"))
            .arg("3")
            .envs(pti_tests::sycl_python_env())
            .env_remove("INTEL_LIBITTNOTIFY64");
    };
    let mut mpi = mpirun_under_pti_trace(&dir);
    workload(&mut mpi);
    let out = mpi.output().unwrap_or_else(|e| {
        panic!("cannot run mpirun ({e}): `cargo xtask setup` installs Open MPI (openmpi-bin)")
    });
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for rank in 0..4 {
        assert!(said.contains(&format!("RANK {rank} DONE")), "{said}");
    }
    let mut alone = Command::new(pti_trace());
    alone.arg("-o").arg(dir.join("alone.%p.pftrace"));
    workload(&mut alone);
    run(&mut alone);

    let mut traces = traces_in(&dir);
    traces.sort();
    assert_eq!(traces.len(), 5, "{traces:?}");
    let summary = merge_summary(&dir.join("merged.pftrace"), &traces);

    let dataset = dir.join("dataset");
    let exports: Vec<_> = traces
        .iter()
        .map(|t| {
            Command::new(pti_trace())
                .args(["export", "--parquet"])
                .arg(&dataset)
                .arg(t)
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for export in exports {
        let out = export.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}");
        assert!(said.contains("wrote 7 files of 1 traces"), "{said}");
    }
    Job {
        dir,
        traces,
        summary,
        dataset,
    }
}

/// The files in the tree `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                files.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files
}

/// One query's result.
#[derive(Debug, Clone, PartialEq)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

/// The results of `queries` (names or .sql paths; none: every documented query) on `dataset`,
/// run by `engine` with `python`.
fn query(python: &Path, engine: &str, dataset: &Path, queries: &[&str]) -> BTreeMap<String, Table> {
    let out = run(Command::new(python)
        .arg(root().join("pti-trace/analysis/pti_query.py"))
        .args(["--engine", engine, "--json"])
        .arg(dataset)
        .args(queries));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let columns = v["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            let rows = v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_array().unwrap().clone())
                .collect();
            (
                v["query"].as_str().unwrap().to_string(),
                Table { columns, rows },
            )
        })
        .collect()
}

fn duckdb_python() -> PathBuf {
    let python = root().join(".venv/bin/python");
    let has = Command::new(&python)
        .args(["-c", "import duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has,
        "{} has no duckdb: `cargo xtask setup` installs it",
        python.display()
    );
    python
}

/// A row's cells by column name.
fn cell<'a>(table: &'a Table, row: &'a [Value], column: &str) -> &'a Value {
    let i = table
        .columns
        .iter()
        .position(|c| c == column)
        .unwrap_or_else(|| panic!("no column {column} in {:?}", table.columns));
    &row[i]
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks the queries that reproduce `merge`'s summary against the summary's text, line by line
/// as merge prints them.
fn check_against_merge(results: &BTreeMap<String, Table>, summary: &str, engine: &str) {
    let ranks = &results["summary_ranks"];
    assert_eq!(ranks.rows.len(), 5, "{engine}: {ranks:?}");
    for row in &ranks.rows {
        let rank = match cell(ranks, row, "rank") {
            Value::Null => "-".to_string(),
            r => int(r).to_string(),
        };
        let host: String = cell(ranks, row, "host")
            .as_str()
            .unwrap()
            .chars()
            .take(12)
            .collect();
        let expected = format!(
            "{:<6} {:>8} {:<12} {:>9} {:>8} {:>10.3}ms {:>10} {:>11} {:>13}",
            rank,
            int(cell(ranks, row, "pid")),
            host,
            int(cell(ranks, row, "api_calls")),
            int(cell(ranks, row, "kernels")),
            int(cell(ranks, row, "kernel_ns")) as f64 / 1e6,
            int(cell(ranks, row, "other_ops")),
            int(cell(ranks, row, "annotations")),
            int(cell(ranks, row, "communication"))
        );
        assert!(
            summary.lines().any(|l| l == expected),
            "{engine}: merge has no line\n{expected}\n{summary}"
        );
    }
    let kernels = &results["summary_kernels"];
    assert_eq!(
        kernels.rows.len(),
        2,
        "{engine}: scale and shift: {kernels:?}"
    );
    for row in &kernels.rows {
        let ms = |c: &str| match cell(kernels, row, c) {
            Value::Number(n) => n.as_f64().unwrap() / 1e6,
            v => panic!("{c}: {v}"),
        };
        let expected = format!(
            "  {:<38} {:>9} {:>17} {:>32}",
            cell(kernels, row, "name").as_str().unwrap(),
            int(cell(kernels, row, "processes")),
            format!(
                "{}/{}",
                int(cell(kernels, row, "min_launches")),
                int(cell(kernels, row, "max_launches"))
            ),
            format!(
                "{:.3}/{:.3}/{:.3} ms",
                ms("min_ns"),
                ms("avg_ns"),
                ms("max_ns")
            )
        );
        assert!(
            summary.lines().any(|l| l == expected),
            "{engine}: merge has no line\n{expected}\n{summary}"
        );
    }
}

/// Percentile `q` of `sorted` by linear interpolation between the closest ranks (SQL's
/// `percentile_cont`).
fn percentile(sorted: &[i64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (low, high) = (at.floor() as usize, at.ceil() as usize);
    sorted[low] as f64 + (sorted[high] - sorted[low]) as f64 * (at - low as f64)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Checks the other documented queries against the same figures computed here from the SQLite
/// export of the same traces (another exporter, another engine).
fn check_against_sqlite(results: &BTreeMap<String, Table>, db: &Path) {
    let db = rusqlite::Connection::open(db).unwrap();
    let ints = |sql: &str| -> Vec<Vec<Option<i64>>> {
        let mut s = db.prepare(sql).unwrap();
        let n = s.column_count();
        s.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };

    // kernels: launches, total and percentiles of each kernel.
    let kernels = &results["kernels"];
    assert_eq!(kernels.rows.len(), 2, "{kernels:?}");
    for row in &kernels.rows {
        let name = cell(kernels, row, "name").as_str().unwrap();
        let mut durations: Vec<i64> = ints(&format!(
            "SELECT duration_ns FROM device_op WHERE kind = 'kernel' AND name = '{name}'"
        ))
        .into_iter()
        .map(|r| r[0].unwrap())
        .collect();
        durations.sort_unstable();
        assert_eq!(int(cell(kernels, row, "launches")), durations.len() as i64);
        assert_eq!(
            int(cell(kernels, row, "total_ns")),
            durations.iter().sum::<i64>()
        );
        for (column, q) in [("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99)] {
            let got = cell(kernels, row, column).as_f64().unwrap();
            assert!(
                close(got, percentile(&durations, q)),
                "{name} {column}: {got} against {}",
                percentile(&durations, q)
            );
        }
    }

    // slowest_rank: the rank with the most time in each kernel.
    let slowest = &results["slowest_rank"];
    assert_eq!(slowest.rows.len(), 2, "scale and shift: {slowest:?}");
    for row in &slowest.rows {
        let name = cell(slowest, row, "name").as_str().unwrap();
        let per_rank = ints(&format!(
            "SELECT rank, SUM(duration_ns) FROM device_op WHERE kind = 'kernel' AND name = \
             '{name}' GROUP BY rank ORDER BY SUM(duration_ns) DESC, rank NULLS LAST"
        ));
        assert_eq!(
            cell(slowest, row, "slowest_ns").as_i64(),
            per_rank[0][1],
            "{name}: {per_rank:?}"
        );
        assert_eq!(cell(slowest, row, "slowest_rank").as_i64(), per_rank[0][0]);
    }
    // The workload makes rank 3 launch `scale` most, and rank 3 spends most time in it... not
    // necessarily (launches are microseconds on a loaded CPU): only the count is the program's.
    let most = ints(
        "SELECT rank, COUNT(*) FROM device_op WHERE name = 'scale' AND rank IS NOT NULL GROUP \
         BY rank ORDER BY rank",
    );
    assert_eq!(
        most,
        (0..4)
            .map(|r| vec![Some(r), Some(3 * (r + 1))])
            .collect::<Vec<_>>()
    );

    // api_per_rank and communication_compute, row for row.
    let expect_rows = |query: &str, sql: &str| {
        let table = &results[query];
        let mut got: Vec<Vec<Option<i64>>> = table
            .rows
            .iter()
            .map(|r| r.iter().map(Value::as_i64).collect())
            .collect();
        // Spark and DuckDB order NULL ranks differently: compare sorted.
        got.sort();
        let mut want = ints(sql);
        want.sort();
        assert_eq!(got, want, "{query}");
    };
    expect_rows(
        "api_per_rank",
        "SELECT rank, NULL, COUNT(*), SUM(duration_ns) FROM api_call GROUP BY rank, api_group",
    );
    let comm = &results["communication_compute"];
    assert_eq!(
        comm.rows.len(),
        5,
        "4 ranks and the process without one: {comm:?}"
    );
    for row in &comm.rows {
        let rank = cell(comm, row, "rank").as_i64();
        let of = |sql: &str| -> i64 {
            db.query_row(sql, [rank], |r| r.get::<_, Option<i64>>(0))
                .unwrap()
                .unwrap_or(0)
        };
        let kernel = of(
            "SELECT SUM(duration_ns) FROM device_op WHERE kind = 'kernel' AND rank \
                         IS ?1",
        );
        let communication = of("SELECT SUM(duration_ns) FROM annotation WHERE kind = \
                                'communication' AND rank IS ?1");
        assert_eq!(int(cell(comm, row, "kernel_ns")), kernel, "rank {rank:?}");
        assert_eq!(
            int(cell(comm, row, "communication_ns")),
            communication,
            "rank {rank:?}"
        );
        assert!(communication > 0, "every process ran collectives: {rank:?}");
        let share = cell(comm, row, "communication_share").as_f64().unwrap();
        assert!(close(
            share,
            communication as f64 / (communication + kernel) as f64
        ));
    }
}

#[test]
fn ranks_exported_at_once_give_merges_figures_in_duckdb() {
    let job = job("dataset");
    // Every table, every input, its partition; no hidden file left.
    let files = files_under(&job.dataset);
    assert_eq!(files.len(), 35, "7 tables of 5 inputs: {files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_some_and(|x| x == "parquet")),
        "{files:?}"
    );
    for rank in 0..4 {
        assert!(
            files
                .iter()
                .any(|f| f.starts_with(format!("device_op/rank={rank}"))),
            "{files:?}"
        );
    }
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("device_op/rank=__HIVE_DEFAULT_PARTITION__")),
        "the process outside MPI has no rank: {files:?}"
    );

    // Private files, each saying which clock its times are on.
    use std::os::unix::fs::PermissionsExt as _;
    for f in &files {
        let mode = std::fs::metadata(job.dataset.join(f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{f:?}");
    }
    let python = duckdb_python();
    let kv = job.dir.join("kv.sql");
    let glob = job.dataset.join("device_op/rank=0/*/*.parquet");
    std::fs::write(
        &kv,
        format!(
            "SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('{}') \
             ORDER BY key",
            glob.display()
        ),
    )
    .unwrap();
    let metadata = &query(&python, "duckdb", &job.dataset, &[kv.to_str().unwrap()])["kv"];
    let clock = metadata
        .rows
        .iter()
        .find(|r| r[0] == "pti.clock")
        .unwrap_or_else(|| panic!("no pti.clock: {metadata:?}"));
    assert!(
        clock[1].as_str().unwrap().contains("CLOCK_MONOTONIC_RAW"),
        "{clock:?}"
    );

    let results = query(&python, "duckdb", &job.dataset, &[]);
    assert_eq!(
        results.keys().collect::<Vec<_>>(),
        [
            "api_per_rank",
            "communication_compute",
            "kernels",
            "slowest_rank",
            "summary_kernels",
            "summary_ranks"
        ]
    );
    check_against_merge(&results, &job.summary, "duckdb");
    let db = job.dir.join("all.db");
    run(Command::new(pti_trace())
        .args(["export", "--sqlite"])
        .arg(&db)
        .args(&job.traces));
    check_against_sqlite(&results, &db);

    // The same columns, table by table, in the dataset and the SQLite database.
    let sqlite = rusqlite::Connection::open(&db).unwrap();
    for table in [
        "process",
        "thread",
        "api_call",
        "device_op",
        "counter",
        "critical_event",
        "annotation",
    ] {
        let sql = job.dir.join(format!("columns_{table}.sql"));
        std::fs::write(&sql, format!("SELECT * FROM {table} LIMIT 0")).unwrap();
        let dataset = &query(&python, "duckdb", &job.dataset, &[sql.to_str().unwrap()])
            [&format!("columns_{table}")];
        let mut theirs = dataset.columns.clone();
        theirs.sort();
        let mut ours: Vec<String> = sqlite
            .prepare(&format!("SELECT * FROM {table}"))
            .unwrap()
            .column_names()
            .into_iter()
            .map(String::from)
            .collect();
        ours.sort();
        assert_eq!(theirs, ours, "{table}");
        // And the same number of rows.
        let count = |engine_rows: i64| {
            let n: i64 = sqlite
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(engine_rows, n, "{table}");
        };
        std::fs::write(&sql, format!("SELECT COUNT(*) AS n FROM {table}")).unwrap();
        let counted = &query(&python, "duckdb", &job.dataset, &[sql.to_str().unwrap()])
            [&format!("columns_{table}")];
        count(int(&counted.rows[0][0]));
    }
}

#[test]
fn a_dataset_export_refuses_what_it_must_not_write() {
    let dir = scratch("dataset-refusals");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), opencl_program()));
    let trace = timelines(&String::from_utf8_lossy(&out.stderr))
        .pop()
        .expect("a trace");
    let export = |dataset: &Path| {
        Command::new(pti_trace())
            .args(["export", "--parquet"])
            .arg(dataset)
            .arg(&trace)
            .output()
            .unwrap()
    };
    let dataset = dir.join("dataset");
    assert!(export(&dataset).status.success());
    // The same input again: refused, nothing replaced, no hidden file left.
    let again = export(&dataset);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exported into a dataset once"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let left: Vec<String> = files_under(&dataset)
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 7, "{left:?}");
    assert!(left.iter().all(|n| !n.starts_with('.')), "{left:?}");
    // The directory forgotten: the trace is not written over.
    let forgot = Command::new(pti_trace())
        .args(["export", "--parquet"])
        .arg(&trace)
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(forgot.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&forgot.stderr).contains("is not a directory"));
    // A symbolic link where the dataset goes, or inside it: refused.
    std::os::unix::fs::symlink(&dataset, dir.join("link")).unwrap();
    let linked = export(&dir.join("link"));
    assert_eq!(linked.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&linked.stderr).contains("symbolic link"));
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let inner = dir.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::os::unix::fs::symlink(&elsewhere, inner.join("api_call")).unwrap();
    let linked = export(&inner);
    assert_eq!(linked.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&linked.stderr).contains("symbolic link"));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Not a trace: said, exit 1.
    let junk = dir.join("junk.pftrace");
    std::fs::write(&junk, b"not a trace at all").unwrap();
    let bad = Command::new(pti_trace())
        .args(["export", "--parquet"])
        .arg(dir.join("d2"))
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("junk.pftrace"));
    let empty = dir.join("empty.pftrace");
    std::fs::write(&empty, b"").unwrap();
    let bad = Command::new(pti_trace())
        .args(["export", "--parquet"])
        .arg(dir.join("d2"))
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("empty.pftrace: no process in the trace"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // Nothing of either was written.
    assert!(!dir.join("d2/device_op").exists());
}

/// Spark (local mode) reads the dataset as it is and gives every documented query's result as
/// DuckDB does, and `merge`'s figures. Needs pyspark and a Java runtime: `cargo xtask spark`
/// (a step of `cargo xtask test`) installs pyspark into target/spark-venv and runs this test.
#[test]
#[ignore = "needs pyspark: run by `cargo xtask spark`, a step of `cargo xtask test`"]
fn spark_reads_the_dataset_unchanged() {
    let python = PathBuf::from(std::env::var_os("PTI_SPARK_PYTHON").expect(
        "PTI_SPARK_PYTHON names the Python with pyspark: `cargo xtask spark` runs this test",
    ));
    let job = job("dataset-spark");
    let spark = query(&python, "spark", &job.dataset, &[]);
    let duckdb = query(&duckdb_python(), "duckdb", &job.dataset, &[]);
    assert_eq!(
        spark.keys().collect::<Vec<_>>(),
        duckdb.keys().collect::<Vec<_>>()
    );
    check_against_merge(&spark, &job.summary, "spark");
    for (name, theirs) in &spark {
        let ours = &duckdb[name];
        assert_eq!(theirs.columns, ours.columns, "{name}");
        // Row for row, in the queries' order (NULL ranks last in both engines); integers exact,
        // other numbers to 12 significant digits (the engines sum doubles in their own order).
        let cells = |t: &Table| -> Vec<Vec<String>> {
            t.rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| match v.as_f64() {
                            Some(f) if !v.is_i64() => format!("{f:.11e}"),
                            _ => v.to_string(),
                        })
                        .collect()
                })
                .collect()
        };
        assert!(!theirs.rows.is_empty(), "{name}: no rows");
        assert_eq!(cells(theirs), cells(ours), "{name}");
    }
}
