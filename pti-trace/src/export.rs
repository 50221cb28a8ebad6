//! `pti-trace export --sqlite OUT.db TRACE.pftrace...`: the records of Perfetto traces written by
//! pti-trace, as an SQLite database to query (the way rocpd and nsys users query theirs).
//!
//! The schema (times in nanoseconds on libpti's clock; see docs/pti-trace.md):
//!
//! | table | a row per |
//! | --- | --- |
//! | `process(pid, name, file)` | traced process (one per trace file) |
//! | `thread(pid, tid, name)` | host thread with API calls |
//! | `api_call(id, pid, tid, name, api_group, correlation_id, start_ns, end_ns, duration_ns)` | Level Zero, OpenCL or SYCL runtime call |
//! | `device_op(id, pid, device, queue, kind, name, correlation_id, submit_ns, start_ns, end_ns, duration_ns)` | kernel, copy, fill, barrier or marker on a device queue |
//! | `counter(pid, name, ts_ns, value)` | value of a counter track (USM bytes allocated) |
//! | `critical_event(pid, ts_ns, message)` | critical event of libpti |
//! | `annotation(id, pid, track, kind, name, start_ns, end_ns, duration_ns)` | ITT range or marker of the program (`kind` "annotation"; markers last 0 ns), or communication operation (`kind` "communication") |
//!
//! and the views `api_summary` and `device_summary` (per name: count, total, average, minimum
//! and maximum duration). It reads only the trace files, as they are on disk, packet by packet
//! (`packets`, `records`: memory bounded whatever the trace's length): a trace cut short by a
//! killed run gives the records of its whole packets.

use std::path::Path;

use rusqlite::{Connection, params};

use crate::records::Item;

const SCHEMA: &str = "
CREATE TABLE process(pid INTEGER PRIMARY KEY, name TEXT, file TEXT);
CREATE TABLE thread(pid INTEGER, tid INTEGER, name TEXT, PRIMARY KEY(pid, tid));
CREATE TABLE api_call(id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, name TEXT,
    api_group TEXT, correlation_id INTEGER, start_ns INTEGER, end_ns INTEGER,
    duration_ns INTEGER);
CREATE TABLE device_op(id INTEGER PRIMARY KEY, pid INTEGER, device TEXT, queue TEXT, kind TEXT,
    name TEXT, correlation_id INTEGER, submit_ns INTEGER, start_ns INTEGER, end_ns INTEGER,
    duration_ns INTEGER);
CREATE TABLE counter(pid INTEGER, name TEXT, ts_ns INTEGER, value INTEGER);
CREATE TABLE critical_event(pid INTEGER, ts_ns INTEGER, message TEXT);
CREATE TABLE annotation(id INTEGER PRIMARY KEY, pid INTEGER, track TEXT, kind TEXT, name TEXT,
    start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER);
CREATE VIEW api_summary AS SELECT name, api_group, COUNT(*) AS count,
    SUM(duration_ns) AS total_ns, AVG(duration_ns) AS avg_ns, MIN(duration_ns) AS min_ns,
    MAX(duration_ns) AS max_ns FROM api_call GROUP BY name, api_group ORDER BY total_ns DESC;
CREATE VIEW device_summary AS SELECT name, kind, COUNT(*) AS count,
    SUM(duration_ns) AS total_ns, AVG(duration_ns) AS avg_ns, MIN(duration_ns) AS min_ns,
    MAX(duration_ns) AS max_ns FROM device_op GROUP BY name, kind ORDER BY total_ns DESC;
";

/// Reads one trace file into `db`, record by record (`records`): memory stays bounded by the
/// trace's names and tracks, whatever its length.
fn load(db: &Connection, file: &Path) -> Result<(), String> {
    let file_name = file.display().to_string();
    crate::records::each(file, |item| {
        insert(db, &file_name, item).map_err(|e| format!("{}: {e}", file.display()))
    })
}

/// One record's row (statements prepared once per database, `prepare_cached`).
fn insert(db: &Connection, file: &str, item: Item) -> rusqlite::Result<()> {
    let run = |sql: &str, values: &[&dyn rusqlite::ToSql]| -> rusqlite::Result<()> {
        db.prepare_cached(sql)?.execute(values).map(drop)
    };
    let ns = |t: u64| t as i64;
    match item {
        Item::Process { pid, name } => run(
            "INSERT OR REPLACE INTO process VALUES (?1, ?2, ?3)",
            params![pid, name, file],
        ),
        Item::Thread { pid, tid, name } => run(
            "INSERT OR REPLACE INTO thread VALUES (?1, ?2, ?3)",
            params![pid, tid, name],
        ),
        Item::Api {
            pid,
            tid,
            name,
            group,
            correlation,
            start,
            end,
        } => run(
            "INSERT INTO api_call (pid, tid, name, api_group, correlation_id, start_ns, end_ns, \
             duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                pid,
                tid,
                name,
                group,
                correlation.map(|c| c as i64),
                ns(start),
                ns(end),
                ns(end.saturating_sub(start))
            ],
        ),
        Item::Device {
            pid,
            device,
            queue,
            kind,
            name,
            correlation,
            submit,
            start,
            end,
        } => run(
            "INSERT INTO device_op (pid, device, queue, kind, name, correlation_id, submit_ns, \
             start_ns, end_ns, duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                pid,
                device,
                queue,
                kind,
                name,
                correlation.map(|c| c as i64),
                submit.map(ns),
                ns(start),
                ns(end),
                ns(end.saturating_sub(start))
            ],
        ),
        Item::Counter {
            pid,
            name,
            ts,
            value,
        } => run(
            "INSERT INTO counter VALUES (?1, ?2, ?3, ?4)",
            params![pid, name, ns(ts), value],
        ),
        Item::Critical { pid, ts, message } => run(
            "INSERT INTO critical_event VALUES (?1, ?2, ?3)",
            params![pid, ns(ts), message],
        ),
        Item::Annotation {
            pid,
            track,
            kind,
            name,
            start,
            end,
        } => run(
            "INSERT INTO annotation (pid, track, kind, name, start_ns, end_ns, duration_ns) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                pid,
                track,
                kind,
                name,
                ns(start),
                ns(end),
                ns(end.saturating_sub(start))
            ],
        ),
    }
}

/// Whether `path` is an SQLite database (its header's magic string).
pub(crate) fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"SQLite format 3\0")
}

/// Writes the database `out` from the trace files. A database there is kept as `out.old`;
/// the new file is created 0600, never through a symbolic link (`pti_files`).
pub(crate) fn sqlite(out: &Path, traces: &[std::path::PathBuf]) -> Result<(), String> {
    // SQLite opens the file again by its name: the one just created, empty, ours.
    drop(crate::outputs::create(out, "database")?);
    let mut db = Connection::open(out).map_err(|e| format!("{}: {e}", out.display()))?;
    db.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
    let tx = db.transaction().map_err(|e| e.to_string())?;
    for trace in traces {
        load(&tx, trace)?;
    }
    tx.commit().map_err(|e| e.to_string())
}
