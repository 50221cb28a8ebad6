//! Project automation behind `cargo xtask`.
//!
//! - [`ids`] turns the API-ID data files (`pti-core/api-ids/*.tsv`) into the Rust tables of
//!   `pti-core` and the C ID headers in `include/pti/`.
//! - [`headers`] runs cbindgen over `pti-capi` to write the C API headers.
//! - [`opencl`] writes the OpenCL layer's wrappers and parameter structs (Rust and C).
//! - [`level_zero`] writes pti-sys's Level Zero bindings with bindgen, from the newest headers
//!   that [`newest_level_zero`] fetches.
//! - [`generate`] collects both, so that `cargo xtask gen` writes them and the drift test
//!   (`xtask/tests/generated_files.rs`) compares them with what is committed.
//! - [`intel_pti`] fetches Intel's PTI 1.2 from PyPI, the reference the tests compare against.
//! - [`setup`] and [`run`] hold the two top-level commands (`cargo xtask demo`, `cargo xtask test`).
//! - [`sanitizers`] runs the sanitizer and fuzzing jobs (bounded in `test`, longer in
//!   `cargo xtask sanitize --long`).
//! - [`wheel`] builds the Python package's wheel and fetches what its tests install.
//! - [`analysis`] runs Spark over the Parquet dataset (`cargo xtask spark`) and the scale job
//!   of 8 to 64 ranks (`cargo xtask scale`).
//! - [`install`] lays out an installed tree for C and C++ users (`cargo xtask install`).

use std::path::{Path, PathBuf};

pub mod analysis;
pub mod disk;
pub mod headers;
pub mod ids;
pub mod install;
pub mod intel_pti;
pub mod level_zero;
pub mod msrv;
pub mod newest_level_zero;
pub mod opencl;
pub mod run;
pub mod sanitizers;
pub mod setup;
pub mod wheel;

/// One file the generators produce: where it goes (relative to the workspace root) and its text.
#[derive(Debug)]
pub struct GeneratedFile {
    /// Path relative to the workspace root.
    pub path: PathBuf,
    /// Full contents.
    pub contents: String,
}

/// The root of the workspace (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Every generated file of the project, produced from the current sources and data.
pub fn generate() -> Result<Vec<GeneratedFile>, String> {
    let root = workspace_root();
    let mut files = ids::generate(&root)?;
    files.extend(opencl::generate(&root)?);
    files.extend(level_zero::generate(&root)?);
    files.extend(headers::generate(&root)?);
    for file in &mut files {
        if file.path.extension().is_some_and(|e| e == "rs") {
            file.contents = rustfmt(&file.contents)
                .map_err(|e| format!("formatting {}: {e}", file.path.display()))?;
        }
    }
    Ok(files)
}

/// `code` as `cargo fmt` leaves it (rustfmt of the toolchain, reading standard input), so that
/// generated Rust reads like the rest and `cargo fmt --check` holds on it too.
fn rustfmt(code: &str) -> Result<String, String> {
    use std::io::Write as _;
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no standard input")?;
    let input = code.to_string();
    // Written from another thread: rustfmt may fill its output pipe before it read all input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    writer
        .join()
        .map_err(|_| "writing to rustfmt panicked".to_string())?
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt wrote no UTF-8: {e}"))
}

/// The generated files whose committed contents differ from what the generators produce now.
pub fn stale_generated_files() -> Result<Vec<PathBuf>, String> {
    let root = workspace_root();
    Ok(generate()?
        .into_iter()
        .filter(|f| {
            std::fs::read_to_string(root.join(&f.path)).ok().as_deref() != Some(&f.contents)
        })
        .map(|f| f.path)
        .collect())
}
