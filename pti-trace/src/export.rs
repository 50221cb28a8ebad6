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
//! and maximum duration). It reads only the trace files, as they are on disk: a trace cut short
//! by a killed run gives the records of its whole packets.

use std::collections::HashMap;
use std::path::Path;

use perfetto_protos::trace_packet::TracePacket;
use perfetto_protos::track_event::track_event::Type;
use protobuf::Message as _;
use rusqlite::{Connection, params};

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

/// The whole packets of a trace file (a last packet cut short is left out).
pub(crate) fn packets(bytes: &[u8]) -> Result<Vec<TracePacket>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != 0x0A {
            return Err(format!("byte {at}: not a Trace.packet field"));
        }
        let (mut len, mut shift, mut i) = (0usize, 0u32, at + 1);
        loop {
            let Some(b) = bytes.get(i) else {
                return Ok(out);
            };
            len |= usize::from(b & 0x7F).checked_shl(shift).unwrap_or(0);
            shift += 7;
            i += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        let Some(body) = bytes.get(i..i.saturating_add(len)) else {
            return Ok(out);
        };
        out.push(TracePacket::parse_from_bytes(body).map_err(|e| format!("byte {at}: {e}"))?);
        at = i + len;
    }
    Ok(out)
}

/// What a track of the trace is.
#[derive(Clone)]
enum Track {
    Process,
    Thread(i64),
    Device(String),
    /// A queue lane: its queue's name and its device's.
    Queue {
        queue: String,
        device: String,
    },
    Counter(String),
    /// ITT annotations or communication: the track's name.
    Annotation(String),
}

/// An open slice: its BEGIN's event.
struct Begin {
    ts: u64,
    name: String,
    category: String,
    correlation: Option<u64>,
    flow_in: Option<u64>,
}

/// Reads one trace file into `db`.
fn load(db: &Connection, file: &Path) -> Result<(), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let packets = packets(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut pid = 0i64;
    let mut tracks: HashMap<u64, Track> = HashMap::new();
    // Each track's process (a merged trace holds several), and the names interned by each
    // packet sequence (one per process in a merged trace), by (sequence, iid).
    let mut track_pid: HashMap<u64, i64> = HashMap::new();
    let mut names: HashMap<(u32, u64), String> = HashMap::new();
    // Flow ID -> time of its start (the submit point).
    let mut submits: HashMap<u64, u64> = HashMap::new();
    let mut events: Vec<(u64, usize)> = Vec::new();
    for (i, p) in packets.iter().enumerate() {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(
                    (p.trusted_packet_sequence_id(), n.iid()),
                    n.name().to_string(),
                );
            }
        }
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            let owner = match (d.process.as_ref(), d.thread.as_ref()) {
                (Some(process), _) => i64::from(process.pid()),
                (None, Some(thread)) => i64::from(thread.pid()),
                _ => track_pid.get(&d.parent_uuid()).copied().unwrap_or(pid),
            };
            track_pid.insert(d.uuid(), owner);
            let track = if let Some(process) = d.process.as_ref() {
                pid = i64::from(process.pid());
                db.execute(
                    "INSERT OR REPLACE INTO process VALUES (?1, ?2, ?3)",
                    params![pid, process.process_name(), file.display().to_string()],
                )
                .map_err(|e| e.to_string())?;
                Track::Process
            } else if let Some(thread) = d.thread.as_ref() {
                db.execute(
                    "INSERT OR REPLACE INTO thread VALUES (?1, ?2, ?3)",
                    params![owner, thread.tid(), thread.thread_name()],
                )
                .map_err(|e| e.to_string())?;
                Track::Thread(i64::from(thread.tid()))
            } else if d.counter.is_some() {
                Track::Counter(d.name().to_string())
            } else if d.name().starts_with("ITT ") || d.name().starts_with("communication") {
                Track::Annotation(d.name().to_string())
            } else if d.name().starts_with("device") {
                Track::Device(d.name().to_string())
            } else {
                let device = match tracks.get(&d.parent_uuid()) {
                    Some(Track::Device(name)) => name.clone(),
                    _ => String::new(),
                };
                let queue = d
                    .name()
                    .split(" (overlapping")
                    .next()
                    .unwrap_or_default()
                    .to_string();
                Track::Queue { queue, device }
            };
            tracks.insert(d.uuid(), track);
        }
        if p.has_track_event() {
            let e = p.track_event();
            for f in &e.flow_ids {
                submits.insert(*f, p.timestamp());
            }
            events.push((p.timestamp(), i));
        }
    }
    // Slices: BEGIN and END matched per track in time order (stable, as trace processors do).
    events.sort_by_key(|(ts, _)| *ts);
    let mut open: HashMap<u64, Vec<Begin>> = HashMap::new();
    for (ts, i) in events {
        let p = &packets[i];
        let e = p.track_event();
        let track = tracks.get(&e.track_uuid()).cloned();
        let pid = track_pid.get(&e.track_uuid()).copied().unwrap_or(pid);
        let name_of = |iid: u64| {
            names
                .get(&(p.trusted_packet_sequence_id(), iid))
                .cloned()
                .unwrap_or_default()
        };
        match e.type_() {
            Type::TYPE_SLICE_BEGIN => open.entry(e.track_uuid()).or_default().push(Begin {
                ts,
                name: name_of(e.name_iid()),
                category: e.categories.first().cloned().unwrap_or_default(),
                correlation: e
                    .debug_annotations
                    .iter()
                    .find(|a| a.name() == "correlation_id")
                    .map(|a| a.uint_value()),
                flow_in: e.terminating_flow_ids.first().copied(),
            }),
            Type::TYPE_SLICE_END => {
                let Some(b) = open.get_mut(&e.track_uuid()).and_then(Vec::pop) else {
                    continue;
                };
                let duration = ts.saturating_sub(b.ts) as i64;
                match track {
                    Some(Track::Thread(tid)) => db.execute(
                        "INSERT INTO api_call (pid, tid, name, api_group, correlation_id, \
                         start_ns, end_ns, duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![
                            pid,
                            tid,
                            b.name,
                            b.category,
                            b.correlation.map(|c| c as i64),
                            b.ts as i64,
                            ts as i64,
                            duration
                        ],
                    ),
                    Some(Track::Queue { queue, device }) => db.execute(
                        "INSERT INTO device_op (pid, device, queue, kind, name, correlation_id, \
                         submit_ns, start_ns, end_ns, duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, \
                         ?6, ?7, ?8, ?9, ?10)",
                        params![
                            pid,
                            device,
                            queue,
                            b.category,
                            b.name,
                            b.correlation.map(|c| c as i64),
                            b.flow_in.and_then(|f| submits.get(&f)).map(|t| *t as i64),
                            b.ts as i64,
                            ts as i64,
                            duration
                        ],
                    ),
                    Some(Track::Annotation(name)) => {
                        insert_annotation(db, pid, &name, (&b.category, &b.name), (b.ts, ts))
                    }
                    _ => Ok(0),
                }
                .map_err(|e| e.to_string())?;
            }
            Type::TYPE_COUNTER => {
                if let Some(Track::Counter(name)) = track {
                    db.execute(
                        "INSERT INTO counter VALUES (?1, ?2, ?3, ?4)",
                        params![pid, name, ts as i64, e.counter_value()],
                    )
                    .map_err(|e| e.to_string())?;
                }
            }
            Type::TYPE_INSTANT => {
                let name = name_of(e.name_iid());
                if let Some(Track::Annotation(track)) = track {
                    let kind = e.categories.first().cloned().unwrap_or_default();
                    insert_annotation(db, pid, &track, (&kind, &name), (ts, ts))
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                if let (Some(Track::Process), Some(message)) =
                    (track, name.strip_prefix("critical event: "))
                {
                    db.execute(
                        "INSERT INTO critical_event VALUES (?1, ?2, ?3)",
                        params![pid, ts as i64, message],
                    )
                    .map_err(|e| e.to_string())?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// One row of `annotation`.
fn insert_annotation(
    db: &Connection,
    pid: i64,
    track: &str,
    (kind, name): (&str, &str),
    (start, end): (u64, u64),
) -> rusqlite::Result<usize> {
    db.execute(
        "INSERT INTO annotation (pid, track, kind, name, start_ns, end_ns, duration_ns) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            pid,
            track,
            kind,
            name,
            start as i64,
            end as i64,
            end.saturating_sub(start) as i64
        ],
    )
}

/// One trace file's records in an SQLite database in memory (for `merge`'s summary).
pub(crate) fn in_memory(trace: &Path) -> Result<Connection, String> {
    let db = Connection::open_in_memory().map_err(|e| e.to_string())?;
    db.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
    load(&db, trace)?;
    Ok(db)
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
    let created = pti_files::create(out, pti_files::IfExists::KeepOld { run_started: None })
        .map_err(|e| e.to_string())?;
    if let Some(old) = &created.kept_as {
        eprintln!(
            "pti-trace: the database that was at {} is kept as {}",
            out.display(),
            old.display()
        );
    }
    // SQLite opens the file again by its name: the one just created, empty, ours.
    drop(created.file);
    let mut db = Connection::open(out).map_err(|e| format!("{}: {e}", out.display()))?;
    db.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
    let tx = db.transaction().map_err(|e| e.to_string())?;
    for trace in traces {
        load(&tx, trace)?;
    }
    tx.commit().map_err(|e| e.to_string())
}
