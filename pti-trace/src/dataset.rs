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
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::tables::{Rows, TABLES, Table, Type, Value};

/// Rows held per table before they are written as a row group.
const ROW_GROUP: usize = 1 << 16;

/// Hive's name for a partition whose value is NULL (Spark and DuckDB read it so).
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Exports each of `traces` into the dataset `out`; the files written, in order.
pub(crate) fn parquet(out: &Path, traces: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    directory(out)?;
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
    let mut rows = Rows::new(trace.display().to_string(), identity);
    let metadata = metadata(&rows, trace);
    let mut writers = TABLES
        .iter()
        .map(|table| {
            let dir = out.join(table.name).join(&partition);
            TableWriter::create(table, &dir, &name, metadata.clone())
        })
        .collect::<Result<Vec<_>, String>>()?;
    crate::records::each(trace, |item| match rows.of(item) {
        Some((table, row)) => writers[table].push(row),
        None => Ok(()),
    })?;
    writers.into_iter().map(TableWriter::finish).collect()
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

/// Makes `dir` and the directories above it that are missing (mode 0700), refusing a symbolic
/// link or a non-directory on the way.
fn directory(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let mut at = PathBuf::new();
    for part in dir.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link: the dataset is not written through one",
                    at.display()
                ));
            }
            Ok(m) if m.is_dir() => continue,
            Ok(_) => return Err(format!("{} exists and is not a directory", at.display())),
            Err(_) => {}
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&at) {
            Ok(()) => {}
            // Another export made it meanwhile: fine if it is a directory.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && at.is_dir() => {}
            Err(e) => return Err(format!("{}: {e}", at.display())),
        }
    }
    Ok(())
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
}

impl TableWriter {
    /// Starts `name` in `dir` for `table`, refusing if a file of that name is there already.
    fn create(
        table: &Table,
        dir: &Path,
        name: &str,
        metadata: Vec<KeyValue>,
    ) -> Result<TableWriter, String> {
        directory(dir)?;
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
        })
    }

    /// Adds a row (cells in the table's column order); a full row group is written.
    fn push(&mut self, row: Vec<Value>) -> Result<(), String> {
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
                (Buffer::Int(_, levels) | Buffer::Text(_, levels), _) => levels.push(0),
            }
        }
        self.rows += 1;
        if self.rows == ROW_GROUP {
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
                Buffer::Int(values, levels) => {
                    column
                        .typed::<Int64Type>()
                        .write_batch(values, Some(levels), None)
                        .map_err(fail)?;
                    values.clear();
                    levels.clear();
                }
                Buffer::Text(values, levels) => {
                    column
                        .typed::<ByteArrayType>()
                        .write_batch(values, Some(levels), None)
                        .map_err(fail)?;
                    values.clear();
                    levels.clear();
                }
            }
            column.close().map_err(fail)?;
        }
        group.close().map_err(fail)?;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is left, closes the file and gives it its name: its path.
    fn finish(mut self) -> Result<PathBuf, String> {
        if self.rows > 0 {
            self.row_group()?;
        }
        let writer = self.writer.take().expect("open until finished");
        let file = writer
            .into_inner()
            .map_err(|e| format!("{}: {e}", self.part.display()))?;
        file.sync_all()
            .map_err(|e| format!("{}: {e}", self.part.display()))?;
        // A hard link fails where a file is there: never one replaced, even by a race.
        std::fs::hard_link(&self.part, &self.path).map_err(|e| {
            format!(
                "{}: {e} (an input is exported into a dataset once)",
                self.path.display()
            )
        })?;
        Ok(self.path.clone())
    }
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

    #[test]
    fn a_link_on_the_way_is_refused() {
        let dir = std::env::temp_dir().join(format!("pti-dataset-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let error = directory(&dir.join("link/device_op")).unwrap_err();
        assert!(error.contains("symbolic link"), "{error}");
        assert!(!dir.join("real/device_op").exists());
        directory(&dir.join("made/device_op/rank=1")).unwrap();
        assert!(dir.join("made/device_op/rank=1").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
