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

use std::collections::{HashMap, HashSet};

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

/// One row: its table's number (in [`TABLES`]), its process, its cells in the table's column
/// order (`rank` and `host` left out: [`Rows::partitions`] of `pid`).
#[derive(Debug, PartialEq)]
pub(crate) struct Row {
    pub(crate) table: usize,
    pub(crate) pid: i64,
    pub(crate) cells: Vec<Value>,
}

/// Turns the records of one input into rows: numbers the rows of each table, writes each
/// process and thread once, and knows each process's rank and host.
///
/// A trace pti-trace wrote holds one process, whose rank and host its anchor gives. A trace
/// `merge` wrote holds several: the others take their rank from their names ("rank R: ...") and
/// no host (the anchors `identity` reads are the first process's).
pub(crate) struct Rows {
    file: String,
    identity: Identity,
    next_id: [i64; TABLES.len()],
    /// The rank and host of each process met after the first.
    others: HashMap<i64, [Value; 2]>,
    threads: HashSet<(i64, i64)>,
    first_seen: bool,
}

impl Rows {
    /// The rows of the input `file`, whose identity is `identity`.
    pub(crate) fn new(file: String, identity: Identity) -> Rows {
        Rows {
            file,
            identity,
            next_id: [1; TABLES.len()],
            others: HashMap::new(),
            threads: HashSet::new(),
            first_seen: false,
        }
    }

    /// The `rank` and `host` cells of the rows of process `pid`.
    pub(crate) fn partitions(&self, pid: i64) -> [Value; 2] {
        match self.others.get(&pid) {
            Some(cells) => cells.clone(),
            None => [
                self.identity.rank.map(i64::from).into(),
                self.identity.host.clone().into(),
            ],
        }
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

    /// The row `item` becomes; `None` for a process or thread already written.
    pub(crate) fn of(&mut self, item: Item) -> Option<Row> {
        let pid = item.pid();
        let (table, cells) = self.cells(item)?;
        Some(Row { table, pid, cells })
    }

    /// Whether `pid` (of a process descriptor) is new: the first process is the identity's, the
    /// others get their rank from `name`.
    fn first_time(&mut self, pid: i64, name: &str) -> bool {
        if pid == self.identity.pid && !self.first_seen {
            self.first_seen = true;
            return true;
        }
        if pid == self.identity.pid || self.others.contains_key(&pid) {
            return false;
        }
        let rank = crate::identity::rank_of_name(name).map(i64::from);
        self.others.insert(pid, [rank.into(), Value::Null]);
        true
    }

    /// The table and cells of `item`'s row.
    fn cells(&mut self, item: Item) -> Option<(usize, Vec<Value>)> {
        let span = |start: u64, end: u64| -> [Value; 3] {
            [start.into(), end.into(), end.saturating_sub(start).into()]
        };
        Some(match item {
            Item::Process { pid, name } => {
                if !self.first_time(pid, &name) {
                    return None;
                }
                let anchor = self
                    .identity
                    .anchor
                    .as_ref()
                    .filter(|_| pid == self.identity.pid);
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
        let identity = Identity {
            pid: 1,
            ..Identity::default()
        };
        let mut rows = Rows::new("t.pftrace".into(), identity);
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
            if let Some(Row {
                table, cells: row, ..
            }) = rows.of(item)
            {
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
        assert_eq!(rows.partitions(1), [Value::Null, Value::Null]);
    }

    #[test]
    fn a_merged_traces_other_processes_take_their_rank_from_their_names() {
        let identity = Identity {
            pid: 10,
            rank: Some(0),
            host: Some("a".into()),
            ..Identity::default()
        };
        let mut rows = Rows::new("merged.pftrace".into(), identity);
        for (pid, name) in [
            (10, "rank 0: x"),
            (20, "rank 1: x"),
            (30, "y"),
            (20, "rank 1: x"),
        ] {
            rows.of(Item::Process {
                pid,
                name: name.into(),
            });
        }
        assert_eq!(
            rows.partitions(10),
            [Value::Int(0), Value::Text("a".into())]
        );
        assert_eq!(rows.partitions(20), [Value::Int(1), Value::Null]);
        assert_eq!(rows.partitions(30), [Value::Null, Value::Null]);
        // A process described twice is one row.
        assert!(
            rows.of(Item::Process {
                pid: 20,
                name: "rank 1: x".into()
            })
            .is_none()
        );
    }
}
