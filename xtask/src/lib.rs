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
//! - [`install`] lays out an installed tree for C and C++ users (`cargo xtask install`).

use std::path::{Path, PathBuf};

pub mod disk;
pub mod headers;
pub mod ids;
pub mod install;
pub mod intel_pti;
pub mod level_zero;
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
    Ok(files)
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
