//! `pti-trace export --parquet OUT_DIR TRACE...`: the records of Perfetto traces written by
//! pti-trace as a Parquet dataset, for engines made for many ranks (DuckDB on a laptop, Spark or
//! Trino on a cluster): the tables and columns of the SQLite export (`tables`), one Parquet file
//! per table and input, laid out in Hive partitions by rank and host:
//!
//! ```text
//! OUT_DIR/device_op/rank=3/host=node7/trace.rank3.4242.parquet
//! OUT_DIR/device_op/rank=__HIVE_DEFAULT_PARTITION__/host=node7/pti-trace.777.parquet  (no rank)
//! ```
//!
//! so that `rank` and `host` are the partitions' columns, not the files'. Each input gets all
//! seven files, empty ones included, so that a table's glob always matches.
//!
//! Many processes may export into one dataset at once (one per rank, in parallel): each writes
//! only its inputs' files, each first under a hidden name (`.NAME.parquet.PID.part`, which Spark
//! and DuckDB's `*.parquet` globs skip), moved to its name when whole, never over a file there
//! (an input exported twice fails, saying so). Directories are made as needed; a symbolic link
//! where the dataset's directories or files go is refused.
//!
//! Memory: one row group per table is held ([`ROW_GROUP`] rows), then written; the records
//! are read packet by packet (`records`), so a trace of any length exports in bounded memory.
//!
//! May touch: the dataset's directory tree under OUT_DIR, and the trace files it reads.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DataType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::parser::parse_message_type;

use crate::tables::{Rows, TABLES, Table, Type, Value};

/// Rows held per table before they are written as a row group.
const ROW_GROUP: usize = 1 << 16;

/// Hive's name for a partition whose value is NULL (Spark and DuckDB read it so).
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Exports each of `traces` into the dataset `out`; the files written, in order.
pub(crate) fn parquet(out: &Path, traces: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    base(out)?;
    let mut written = Vec::new();
    for trace in traces {
        written.extend(one(out, trace)?);
    }
    Ok(written)
}

/// Exports `trace`: its seven files.
fn one(out: &Path, trace: &Path) -> Result<Vec<PathBuf>, String> {
    let identity = crate::identity::of(trace)?;
    let partition = format!(
        "rank={}/host={}",
        identity
            .rank
            .map_or_else(|| NULL_PARTITION.to_string(), |r| r.to_string()),
        identity
            .host
            .as_deref()
            .map_or_else(|| NULL_PARTITION.to_string(), escape)
    );
    let name = file_name(trace);
    let pid = identity.pid;
    let mut rows = Rows::new(trace.display().to_string(), identity);
    let metadata = metadata(&rows, trace);
    let mut writers = TABLES
        .iter()
        .map(|table| {
            let dir = Path::new(table.name).join(&partition);
            TableWriter::create(table, out, &dir, &name, metadata.clone(), ROW_GROUP)
        })
        .collect::<Result<Vec<_>, String>>()?;
    crate::records::each(trace, |item| match rows.of(item) {
        // A file holds one partition: a trace of several processes (one `merge` wrote) would
        // file the others under the first one's rank.
        Some(row) if row.table == 0 && row.pid != pid => Err(format!(
            "{}: holds more than one process (a trace `merge` wrote?): export the traces it \
             was merged from, each under its own rank",
            trace.display()
        )),
        Some(row) => writers[row.table].push(row.cells),
        None => Ok(()),
    })?;
    publish(writers)
}

/// Closes every file of an input, then gives each its name: all seven or none (a failure takes
/// back the names already given), so that the dataset never holds half an input.
fn publish(writers: Vec<TableWriter>) -> Result<Vec<PathBuf>, String> {
    let mut closed = writers
        .into_iter()
        .map(TableWriter::close)
        .collect::<Result<Vec<_>, String>>()?;
    let mut named = Vec::new();
    for writer in &mut closed {
        match writer.name() {
            Ok(path) => named.push(path),
            Err(e) => {
                for path in &named {
                    let _ = std::fs::remove_file(path);
                }
                return Err(e);
            }
        }
    }
    Ok(named)
}

/// The key-value metadata of each file: where its rows come from and which clock their times
/// are on.
fn metadata(rows: &Rows, trace: &Path) -> Vec<KeyValue> {
    let identity = rows.identity();
    let host = identity.host.as_deref().unwrap_or("unknown");
    vec![
        KeyValue::new("pti.source".into(), trace.display().to_string()),
        KeyValue::new(
            "pti.clock".into(),
            format!(
                "*_ns columns: nanoseconds on {} of host {host} (libpti's clock); the process \
                 table's anchor_ns and anchor_realtime_ns put them on the wall clock",
                crate::identity::CLOCK
            ),
        ),
    ]
}

/// A partition value as Hive writes it: characters other than letters, digits, `.`, `-` and
/// `_` as `%XX` (Spark and DuckDB decode them).
fn escape(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out += &format!("%{b:02X}");
        }
    }
    if out.is_empty() {
        NULL_PARTITION.to_string()
    } else {
        out
    }
}

/// The dataset's file name for `trace`: its name without `.pftrace`, characters outside
/// letters, digits, `.`, `-`, `_` as `_`, never starting with `.` or `_` (names engines skip),
/// then `.parquet`.
fn file_name(trace: &Path) -> String {
    let name = trace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".pftrace").unwrap_or(&name);
    let mut clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.starts_with(['.', '_']) {
        clean.insert_str(0, "trace");
    }
    clean + ".parquet"
}

/// Makes the dataset's directory `out` if it is missing (mode 0700; the directories above it
/// as the user has them), refusing a symbolic link or a non-directory there.
fn base(out: &Path) -> Result<(), String> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    make(out)
}

/// Makes `out/dir`, each component of `dir` in turn (mode 0700), refusing a symbolic link or a
/// non-directory on the way: below the dataset's directory, nothing is followed.
fn directory(out: &Path, dir: &Path) -> Result<PathBuf, String> {
    let mut at = out.to_path_buf();
    for part in dir.components() {
        at.push(part);
        make(&at)?;
    }
    Ok(at)
}

/// Makes the directory `at` unless it is one (not a link to one).
fn make(at: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let is_dir = |at: &Path| -> Result<bool, String> {
        match std::fs::symlink_metadata(at) {
            Ok(m) if m.file_type().is_symlink() => Err(format!(
                "{} is a symbolic link: the dataset is not written through one",
                at.display()
            )),
            Ok(m) if m.is_dir() => Ok(true),
            Ok(_) => Err(format!("{} exists and is not a directory", at.display())),
            Err(_) => Ok(false),
        }
    };
    if is_dir(at)? {
        return Ok(());
    }
    match std::fs::DirBuilder::new().mode(0o700).create(at) {
        Ok(()) => Ok(()),
        // Another export made it meanwhile: fine if it is a directory (not a link).
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_dir(at)? => Ok(()),
        Err(e) => Err(format!("{}: {e}", at.display())),
    }
}

/// One column's values of the row group being gathered, with their definition levels (0: NULL).
enum Buffer {
    Int(Vec<i64>, Vec<i16>),
    Text(Vec<ByteArray>, Vec<i16>),
}

/// One table's file of one input, being written.
struct TableWriter {
    /// The hidden name it is written under, and its name once whole.
    part: PathBuf,
    path: PathBuf,
    writer: Option<SerializedFileWriter<File>>,
    buffers: Vec<Buffer>,
    rows: usize,
    /// Rows per row group.
    group: usize,
}

impl TableWriter {
    /// Starts `name` in `out/dir` for `table`, refusing if a file of that name is there already;
    /// rows go out in row groups of `group`.
    fn create(
        table: &Table,
        out: &Path,
        dir: &Path,
        name: &str,
        metadata: Vec<KeyValue>,
        group: usize,
    ) -> Result<TableWriter, String> {
        let dir = directory(out, dir)?;
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(format!(
                "{} exists: an input is exported into a dataset once (two inputs of one name, \
                 rank and host, or a dataset exported before)",
                path.display()
            ));
        }
        let part = dir.join(format!(".{name}.{}.part", std::process::id()));
        let file = pti_files::create(&part, pti_files::IfExists::Refuse)
            .map_err(|e| format!("{}: {e}", part.display()))?
            .file;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(metadata))
            .set_created_by(format!("pti-trace {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = SerializedFileWriter::new(file, schema(table)?, Arc::new(properties))
            .map_err(|e| format!("{}: {e}", part.display()))?;
        let buffers = table
            .columns
            .iter()
            .map(|c| match c.ty {
                Type::Int => Buffer::Int(Vec::new(), Vec::new()),
                Type::Text => Buffer::Text(Vec::new(), Vec::new()),
            })
            .collect();
        Ok(TableWriter {
            part,
            path,
            writer: Some(writer),
            buffers,
            rows: 0,
            group,
        })
    }

    /// Adds a row (cells in the table's column order, of its columns' types: `tables` makes
    /// them so); a full row group is written.
    fn push(&mut self, row: Vec<Value>) -> Result<(), String> {
        assert_eq!(
            row.len(),
            self.buffers.len(),
            "a row of its table's columns"
        );
        for (buffer, cell) in self.buffers.iter_mut().zip(row) {
            match (buffer, cell) {
                (Buffer::Int(values, levels), Value::Int(v)) => {
                    values.push(v);
                    levels.push(1);
                }
                (Buffer::Text(values, levels), Value::Text(v)) => {
                    values.push(ByteArray::from(v.into_bytes()));
                    levels.push(1);
                }
                (Buffer::Int(_, levels) | Buffer::Text(_, levels), Value::Null) => levels.push(0),
                (_, cell) => unreachable!("{cell:?} in a column of another type"),
            }
        }
        self.rows += 1;
        if self.rows == self.group {
            self.row_group()?;
        }
        Ok(())
    }

    /// Writes the rows gathered as one row group.
    fn row_group(&mut self) -> Result<(), String> {
        let writer = self.writer.as_mut().expect("open until finished");
        let fail = |e: parquet::errors::ParquetError| format!("{}: {e}", self.part.display());
        let mut group = writer.next_row_group().map_err(fail)?;
        for buffer in &mut self.buffers {
            let mut column = group
                .next_column()
                .map_err(fail)?
                .expect("one column per buffer");
            match buffer {
                Buffer::Int(values, levels) => write::<Int64Type>(&mut column, values, levels),
                Buffer::Text(values, levels) => write::<ByteArrayType>(&mut column, values, levels),
            }
            .map_err(fail)?;
            column.close().map_err(fail)?;
        }
        group.close().map_err(fail)?;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is left and closes the file, synced, still under its hidden name.
    fn close(mut self) -> Result<TableWriter, String> {
        if self.rows > 0 {
            self.row_group()?;
        }
        let writer = self.writer.take().expect("open until closed");
        let file = writer
            .into_inner()
            .map_err(|e| format!("{}: {e}", self.part.display()))?;
        file.sync_all()
            .map_err(|e| format!("{}: {e}", self.part.display()))?;
        Ok(self)
    }

    /// Gives the closed file its name: its path. A hard link fails where a file is there: never
    /// one replaced, even by a race (the file system must have hard links).
    fn name(&mut self) -> Result<PathBuf, String> {
        std::fs::hard_link(&self.part, &self.path).map_err(|e| {
            format!(
                "{}: {e} (an input is exported into a dataset once)",
                self.path.display()
            )
        })?;
        Ok(self.path.clone())
    }
}

/// Writes one column's gathered values (of type `T`) and empties them.
fn write<T: DataType>(
    column: &mut SerializedColumnWriter<'_>,
    values: &mut Vec<T::T>,
    levels: &mut Vec<i16>,
) -> parquet::errors::Result<()> {
    column
        .typed::<T>()
        .write_batch(values, Some(levels), None)?;
    values.clear();
    levels.clear();
    Ok(())
}

impl Drop for TableWriter {
    /// The hidden file goes, whole or not: once named, the name holds it.
    fn drop(&mut self) {
        drop(self.writer.take());
        let _ = std::fs::remove_file(&self.part);
    }
}

/// The Parquet schema of `table`: its columns, each optional (NULL where a record has no
/// value), integers as INT64, text as UTF-8 strings.
fn schema(table: &Table) -> Result<Arc<parquet::schema::types::Type>, String> {
    let fields: String = table
        .columns
        .iter()
        .map(|c| match c.ty {
            Type::Int => format!("OPTIONAL INT64 {};\n", c.name),
            Type::Text => format!("OPTIONAL BYTE_ARRAY {} (STRING);\n", c.name),
        })
        .collect();
    parse_message_type(&format!("message {} {{\n{fields}}}", table.name))
        .map(Arc::new)
        .map_err(|e| format!("the schema of {}: {e}", table.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_engines_read_and_never_hide() {
        assert_eq!(
            file_name(Path::new("/x/trace.rank3.42.pftrace")),
            "trace.rank3.42.parquet"
        );
        assert_eq!(
            file_name(Path::new(".hidden.pftrace")),
            "trace.hidden.parquet"
        );
        assert_eq!(file_name(Path::new("_x y")), "trace_x_y.parquet");
        assert_eq!(escape("node-7.cluster"), "node-7.cluster");
        assert_eq!(escape("a/b=c"), "a%2Fb%3Dc");
        assert_eq!(escape(""), NULL_PARTITION);
    }

    #[test]
    fn every_table_has_a_schema() {
        for table in &TABLES {
            let schema = schema(table).unwrap();
            assert_eq!(
                schema.get_fields().len(),
                table.columns.len(),
                "{}",
                table.name
            );
        }
    }

    /// A fresh directory of the temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pti-dataset-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_link_at_or_below_the_dataset_is_refused_not_above() {
        let dir = scratch("links");
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        // The dataset itself a link: refused.
        let error = base(&dir.join("link")).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
        // A link above it is the user's (a cluster's /scratch): followed.
        base(&dir.join("link/dataset")).unwrap();
        assert!(dir.join("real/dataset").is_dir());
        // A link inside the dataset: refused, nothing made through it.
        let out = dir.join("real/dataset");
        std::os::unix::fs::symlink(dir.join("real"), out.join("device_op")).unwrap();
        let error = directory(&out, Path::new("device_op/rank=1")).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
        assert!(!dir.join("real/rank=1").exists());
        let made = directory(&out, Path::new("api_call/rank=1/host=a")).unwrap();
        assert!(made.is_dir() && made.ends_with("api_call/rank=1/host=a"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rows_go_out_in_row_groups_and_read_back_whole() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let dir = scratch("groups");
        let counter = &TABLES[4];
        assert_eq!(counter.name, "counter");
        let mut writer =
            TableWriter::create(counter, &dir, Path::new("counter"), "t.parquet", vec![], 2)
                .unwrap();
        for i in 0..5 {
            let name = if i == 3 {
                Value::Null
            } else {
                Value::Text(format!("c{i}"))
            };
            writer
                .push(vec![
                    Value::Int(7),
                    name,
                    Value::Int(100 + i),
                    Value::Int(-i),
                ])
                .unwrap();
        }
        let path = publish(vec![writer]).unwrap().pop().unwrap();
        assert!(path.ends_with("counter/t.parquet"));
        // Only the named file is left: the hidden one went.
        let left: Vec<_> = std::fs::read_dir(dir.join("counter"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(left.len(), 1);
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 3, "2 + 2 + the last 1");
        assert_eq!(reader.metadata().file_metadata().num_rows(), 5);
        let rows: Vec<String> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().to_string())
            .collect();
        assert_eq!(rows[0], "{pid: 7, name: \"c0\", ts_ns: 100, value: 0}");
        assert_eq!(rows[3], "{pid: 7, name: null, ts_ns: 103, value: -3}");
        assert_eq!(rows[4], "{pid: 7, name: \"c4\", ts_ns: 104, value: -4}");
        // The same name again: refused at once, the file there kept.
        let again =
            TableWriter::create(counter, &dir, Path::new("counter"), "t.parquet", vec![], 2);
        assert!(again.is_err_and(|e| e.contains("exported into a dataset once")));
        assert_eq!(std::fs::read_dir(dir.join("counter")).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
