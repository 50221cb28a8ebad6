//! The tables `export` writes, defined once for both of its formats (the SQLite database and the
//! Parquet dataset), and the row each record of a trace becomes.
//!
//! Every table also has the columns `rank` (the process's MPI rank, NULL outside MPI) and `host`
//! (NULL for a trace without a clock anchor): columns of the SQLite tables, the partitions of the
//! Parquet dataset (`device_op/rank=3/host=node7/...`), so that a query reads the same columns
//! from either. `id` numbers the rows of one table of one input, from 1.
//!
//! Times (`*_ns`) are nanoseconds on [`identity::CLOCK`] of the trace's host; the `process` row
//! says so (`clock`) and carries the anchor (`anchor_ns` on that clock, `anchor_realtime_ns` the
//! wall clock read with it), so a query puts ranks of several hosts on one clock:
//! `start_ns - anchor_ns + anchor_realtime_ns`.
//!
//! May touch: nothing but its own state.

use std::collections::HashSet;

use crate::identity::{self, Identity};
use crate::records::Item;

/// A column's type: 64-bit integers or UTF-8 text (both may be NULL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    Int,
    Text,
}

/// A column.
pub(crate) struct Column {
    pub(crate) name: &'static str,
    pub(crate) ty: Type,
}

const fn int(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Int,
    }
}

const fn text(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Text,
    }
}

/// A table: its name and its columns, `rank` and `host` left out (see the module's doc).
pub(crate) struct Table {
    pub(crate) name: &'static str,
    pub(crate) columns: &'static [Column],
}

/// The columns every table also has, last.
pub(crate) const PARTITIONS: [Column; 2] = [int("rank"), text("host")];

/// The tables, in the order of [`Rows::of`]'s table numbers.
pub(crate) const TABLES: [Table; 7] = [
    Table {
        name: "process",
        columns: &[
            int("pid"),
            text("name"),
            text("file"),
            text("clock"),
            int("anchor_ns"),
            int("anchor_realtime_ns"),
        ],
    },
    Table {
        name: "thread",
        columns: &[int("pid"), int("tid"), text("name")],
    },
    Table {
        name: "api_call",
        columns: &[
            int("id"),
            int("pid"),
            int("tid"),
            text("name"),
            text("api_group"),
            int("correlation_id"),
            int("start_ns"),
            int("end_ns"),
            int("duration_ns"),
        ],
    },
    Table {
        name: "device_op",
        columns: &[
            int("id"),
            int("pid"),
            text("device"),
            text("queue"),
            text("kind"),
            text("name"),
            int("correlation_id"),
            int("submit_ns"),
            int("start_ns"),
            int("end_ns"),
            int("duration_ns"),
        ],
    },
    Table {
        name: "counter",
        columns: &[int("pid"), text("name"), int("ts_ns"), int("value")],
    },
    Table {
        name: "critical_event",
        columns: &[int("pid"), int("ts_ns"), text("message")],
    },
    Table {
        name: "annotation",
        columns: &[
            int("id"),
            int("pid"),
            text("track"),
            text("kind"),
            text("name"),
            int("start_ns"),
            int("end_ns"),
            int("duration_ns"),
        ],
    },
];

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    /// Times and IDs: pti-trace's are below 2^63 (nanoseconds since boot; counters).
    fn from(v: u64) -> Value {
        Value::Int(v as i64)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// Turns the records of one input into rows: numbers the rows of each table and writes each
/// process and thread once.
pub(crate) struct Rows {
    file: String,
    identity: Identity,
    next_id: [i64; TABLES.len()],
    processes: HashSet<i64>,
    threads: HashSet<(i64, i64)>,
}

impl Rows {
    /// The rows of the input `file`, whose identity is `identity`.
    pub(crate) fn new(file: String, identity: Identity) -> Rows {
        Rows {
            file,
            identity,
            next_id: [1; TABLES.len()],
            processes: HashSet::new(),
            threads: HashSet::new(),
        }
    }

    /// The `rank` and `host` cells of every row of this input.
    pub(crate) fn partitions(&self) -> [Value; 2] {
        [
            self.identity.rank.map(i64::from).into(),
            self.identity.host.clone().into(),
        ]
    }

    /// The input's rank and host.
    pub(crate) fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The next `id` of table `table`.
    fn id(&mut self, table: usize) -> Value {
        let id = self.next_id[table];
        self.next_id[table] += 1;
        Value::Int(id)
    }

    /// The row `item` becomes, with its table's number (in [`TABLES`]), its cells in the table's
    /// column order (`rank` and `host` left out); `None` for a process or thread already written.
    pub(crate) fn of(&mut self, item: Item) -> Option<(usize, Vec<Value>)> {
        let span = |start: u64, end: u64| -> [Value; 3] {
            [start.into(), end.into(), end.saturating_sub(start).into()]
        };
        Some(match item {
            Item::Process { pid, name } => {
                if !self.processes.insert(pid) {
                    return None;
                }
                let anchor = self.identity.anchor.as_ref();
                (
                    0,
                    vec![
                        pid.into(),
                        name.into(),
                        self.file.clone().into(),
                        identity::CLOCK.to_string().into(),
                        anchor.map(|a| a.at).into(),
                        anchor.map(|a| a.realtime).into(),
                    ],
                )
            }
            Item::Thread { pid, tid, name } => {
                if !self.threads.insert((pid, tid)) {
                    return None;
                }
                (1, vec![pid.into(), tid.into(), name.into()])
            }
            Item::Api {
                pid,
                tid,
                name,
                group,
                correlation,
                start,
                end,
            } => {
                let mut row = vec![
                    self.id(2),
                    pid.into(),
                    tid.into(),
                    name.into(),
                    group.into(),
                    correlation.into(),
                ];
                row.extend(span(start, end));
                (2, row)
            }
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
            } => {
                let mut row = vec![
                    self.id(3),
                    pid.into(),
                    device.into(),
                    queue.into(),
                    kind.into(),
                    name.into(),
                    correlation.into(),
                    submit.into(),
                ];
                row.extend(span(start, end));
                (3, row)
            }
            Item::Counter {
                pid,
                name,
                ts,
                value,
            } => (4, vec![pid.into(), name.into(), ts.into(), value.into()]),
            Item::Critical { pid, ts, message } => (5, vec![pid.into(), ts.into(), message.into()]),
            Item::Annotation {
                pid,
                track,
                kind,
                name,
                start,
                end,
            } => {
                let mut row = vec![
                    self.id(6),
                    pid.into(),
                    track.into(),
                    kind.into(),
                    name.into(),
                ];
                row.extend(span(start, end));
                (6, row)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_tables_columns_and_numbers_its_own_table() {
        let mut rows = Rows::new("t.pftrace".into(), Identity::default());
        let items = [
            Item::Process {
                pid: 1,
                name: "p".into(),
            },
            Item::Process {
                pid: 1,
                name: "p".into(),
            },
            Item::Thread {
                pid: 1,
                tid: 2,
                name: "t".into(),
            },
            Item::Api {
                pid: 1,
                tid: 2,
                name: "clFinish".into(),
                group: "OpenCL".into(),
                correlation: None,
                start: 10,
                end: 15,
            },
            Item::Device {
                pid: 1,
                device: "d".into(),
                queue: "q".into(),
                kind: "kernel".into(),
                name: "k".into(),
                correlation: Some(3),
                submit: None,
                start: 20,
                end: 29,
            },
            Item::Api {
                pid: 1,
                tid: 2,
                name: "clFlush".into(),
                group: "OpenCL".into(),
                correlation: Some(4),
                start: 30,
                end: 31,
            },
            Item::Counter {
                pid: 1,
                name: "c".into(),
                ts: 5,
                value: -1,
            },
            Item::Critical {
                pid: 1,
                ts: 6,
                message: "m".into(),
            },
            Item::Annotation {
                pid: 1,
                track: "ITT app".into(),
                kind: "annotation".into(),
                name: "app: x".into(),
                start: 7,
                end: 7,
            },
        ];
        let mut made = Vec::new();
        for item in items {
            if let Some((table, row)) = rows.of(item) {
                assert_eq!(
                    row.len(),
                    TABLES[table].columns.len(),
                    "{}",
                    TABLES[table].name
                );
                for (cell, column) in row.iter().zip(TABLES[table].columns) {
                    match (cell, column.ty) {
                        (Value::Null, _)
                        | (Value::Int(_), Type::Int)
                        | (Value::Text(_), Type::Text) => {}
                        _ => panic!("{}.{}: {cell:?}", TABLES[table].name, column.name),
                    }
                }
                made.push((table, row));
            }
        }
        let tables: Vec<usize> = made.iter().map(|(t, _)| *t).collect();
        assert_eq!(tables, [0, 1, 2, 3, 2, 4, 5, 6], "the process once");
        // Each table numbers its own rows; durations are end - start; no correlation is NULL.
        assert_eq!(made[2].1[0], Value::Int(1));
        assert_eq!(made[4].1[0], Value::Int(2));
        assert_eq!(made[3].1[0], Value::Int(1));
        assert_eq!(made[2].1[5], Value::Null);
        assert_eq!(made[3].1[10], Value::Int(9));
        // Without an anchor, the process says its clock but has no anchor.
        assert_eq!(made[0].1[3], Value::Text("CLOCK_MONOTONIC_RAW".into()));
        assert_eq!(made[0].1[4], Value::Null);
        assert_eq!(rows.partitions(), [Value::Null, Value::Null]);
    }
}
