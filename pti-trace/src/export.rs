//! `pti-trace export --sqlite OUT.db TRACE.pftrace...`: the records of Perfetto traces written by
//! pti-trace, as an SQLite database to query (the way rocpd and nsys users query theirs).
//!
//! The schema is `tables`' (times in nanoseconds on libpti's clock; see docs/pti-trace.md):
//!
//! | table | a row per |
//! | --- | --- |
//! | `process(pid, name, file, clock, anchor_ns, anchor_realtime_ns, rank, host)` | traced process (one per trace file) |
//! | `thread(pid, tid, name, rank, host)` | host thread with API calls |
//! | `api_call(id, pid, tid, name, api_group, correlation_id, start_ns, end_ns, duration_ns, rank, host)` | Level Zero, OpenCL or SYCL runtime call |
//! | `device_op(id, pid, device, queue, kind, name, correlation_id, submit_ns, start_ns, end_ns, duration_ns, rank, host)` | kernel, copy, fill, barrier or marker on a device queue |
//! | `counter(pid, name, ts_ns, value, rank, host)` | value of a counter track (USM bytes allocated) |
//! | `critical_event(pid, ts_ns, message, rank, host)` | critical event of libpti |
//! | `annotation(id, pid, track, kind, name, start_ns, end_ns, duration_ns, rank, host)` | ITT range or marker of the program (`kind` "annotation"; markers last 0 ns), or communication operation (`kind` "communication") |
//!
//! and the views `api_summary` and `device_summary` (per name: count, total, average, minimum
//! and maximum duration). It reads only the trace files, as they are on disk, packet by packet
//! (`packets`, `records`: memory bounded whatever the trace's length): a trace cut short by a
//! killed run gives the records of its whole packets.

use std::path::Path;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use crate::tables::{PARTITIONS, Rows, TABLES, Type, Value};

/// The summaries' views, over the tables.
const VIEWS: &str = "
CREATE VIEW api_summary AS SELECT name, api_group, COUNT(*) AS count,
    SUM(duration_ns) AS total_ns, AVG(duration_ns) AS avg_ns, MIN(duration_ns) AS min_ns,
    MAX(duration_ns) AS max_ns FROM api_call GROUP BY name, api_group ORDER BY total_ns DESC;
CREATE VIEW device_summary AS SELECT name, kind, COUNT(*) AS count,
    SUM(duration_ns) AS total_ns, AVG(duration_ns) AS avg_ns, MIN(duration_ns) AS min_ns,
    MAX(duration_ns) AS max_ns FROM device_op GROUP BY name, kind ORDER BY total_ns DESC;
";

/// The database's schema: [`TABLES`], each with the [`PARTITIONS`] columns last, and the views.
fn schema() -> String {
    let mut sql = String::new();
    for table in &TABLES {
        let columns: Vec<String> = table
            .columns
            .iter()
            .chain(&PARTITIONS)
            .map(|c| {
                let ty = match c.ty {
                    Type::Int => "INTEGER",
                    Type::Text => "TEXT",
                };
                format!("{} {ty}", c.name)
            })
            .collect();
        sql += &format!("CREATE TABLE {}({});\n", table.name, columns.join(", "));
    }
    sql + VIEWS
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
        })
    }
}

/// The statement that inserts a row of each of [`TABLES`], in their order.
fn inserts() -> Vec<String> {
    TABLES
        .iter()
        .map(|t| {
            let marks = vec!["?"; t.columns.len() + PARTITIONS.len()];
            format!("INSERT INTO {} VALUES ({})", t.name, marks.join(", "))
        })
        .collect()
}

/// Reads one trace file into `db` with `inserts`, record by record (`records`): memory stays bounded by the
/// trace's names and tracks, whatever its length.
fn load(db: &Connection, inserts: &[String], file: &Path) -> Result<(), String> {
    let mut rows = Rows::new(file.display().to_string(), crate::identity::of(file)?);
    crate::records::each(file, |item| {
        let Some(row) = rows.of(item) else {
            return Ok(());
        };
        let partitions = rows.partitions(row.pid);
        db.prepare_cached(&inserts[row.table])
            .and_then(|mut s| {
                s.execute(rusqlite::params_from_iter(
                    row.cells.iter().chain(&partitions),
                ))
            })
            .map(drop)
            .map_err(|e| format!("{}: {e}", file.display()))
    })
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
    db.execute_batch(&schema()).map_err(|e| e.to_string())?;
    let tx = db.transaction().map_err(|e| e.to_string())?;
    let inserts = inserts();
    for trace in traces {
        load(&tx, &inserts, trace)?;
    }
    tx.commit().map_err(|e| e.to_string())
}
