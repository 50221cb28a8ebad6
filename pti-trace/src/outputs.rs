//! The file `export` and `merge` write from traces: never one of their inputs, created as
//! `pti_files` creates outputs (0600, no link followed, no FIFO), a file already there kept as
//! `OUT.old` and said on stderr.
//!
//! May touch: the output's path (through `pti_files`) and stderr.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Refuses (`Err`, the message) an output `out` that is one of `inputs`, under any spelling of
/// its name, or whose `OUT.old` (where a file there would be kept) is.
pub(crate) fn check_not_an_input(out: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let old = pti_files::with_suffix(out, ".old");
    match inputs
        .iter()
        .find(|t| pti_files::same_file(t, out) || pti_files::same_file(t, &old))
    {
        Some(input) => Err(format!(
            "the output {} (or {}, where a file there is kept) is the input {}: inputs are \
             never written",
            out.display(),
            old.display(),
            input.display()
        )),
        None => Ok(()),
    }
}

/// Creates `out`; a file that was there (a `what`: "file", "database") is kept as `out.old`, and
/// said.
pub(crate) fn create(out: &Path, what: &str) -> Result<File, String> {
    let created = pti_files::create(out, pti_files::IfExists::KeepOld { run_started: None })
        .map_err(|e| e.to_string())?;
    if let Some(old) = &created.kept_as {
        eprintln!(
            "pti-trace: the {what} that was at {} is kept as {}",
            out.display(),
            old.display()
        );
    }
    Ok(created.file)
}
