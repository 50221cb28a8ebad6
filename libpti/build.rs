//! Links `libpti.so`, the one engine of the process, as a shared library (never a copy of it):
//! a program built with this crate has a `DT_NEEDED` on `libpti.so.0`, so libpti's constructor
//! runs before the program's first OpenCL or SYCL call.
//!
//! Where `libpti.so` is found, in order: the directory `PTI_LIB_DIR` names; `pkg-config pti`
//! (an installed libpti, `cargo xtask install`); the checkout this crate sits in:
//! - built inside that checkout's workspace (its `target/`), the build directory of this very
//!   build. cargo may link this crate's programs before it has built `libpti.so` (a cdylib of
//!   another package, which no dependency can order), so they link against a stub: a shared
//!   object with the SONAME `libpti.so.0` that defines the functions `src/ffi.rs` declares, and
//!   nothing else. At run time the dynamic linker loads the real `libpti.so.0` instead;
//! - built as a path dependency of a program elsewhere, the checkout's own build
//!   (`target/<profile>`, else `target/debug` or `target/release`): never a stub, which would
//!   leave that program without a library to run with; none built is an error that says what
//!   to run.
//!
//! The directory is `lib_dir` to the build scripts of dependents (`DEP_PTI_LIB_DIR`): cargo
//! passes no link arguments to them, so a program's one-line build script sets its run path
//! from it (the README's Rust quick start). This package's own tests and examples get it here.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/ffi.rs");
    println!("cargo:rerun-if-env-changed=PTI_LIB_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dir = match std::env::var_os("PTI_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => pkg_config_libdir().unwrap_or_else(|| checkout_build(&out)),
    };
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=pti");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:lib_dir={}", dir.display());
}

/// The directory of `libpti.so` in the checkout this crate sits in (see the module docs).
fn checkout_build(out: &Path) -> PathBuf {
    // target/<profile>/build/libpti-<hash>/out -> target/<profile>
    let build_dir = out
        .ancestors()
        .nth(3)
        .expect("OUT_DIR's layout")
        .to_path_buf();
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let checkout = manifest.parent().expect("the crate sits in the checkout");
    let target = checkout.join("target");
    if build_dir.starts_with(&target) {
        link_stub(out);
        return build_dir;
    }
    let profile = build_dir.file_name().map(PathBuf::from).unwrap_or_default();
    [
        target.join(&profile),
        target.join("debug"),
        target.join("release"),
    ]
    .into_iter()
    .find(|d| d.join("libpti.so.0").exists())
    .unwrap_or_else(|| {
        panic!(
            "libpti.so is not built in {}: run `cargo build -p pti-capi` there (or install \
                 it with `cargo xtask install` and put its lib/pkgconfig on PKG_CONFIG_PATH, or \
                 point PTI_LIB_DIR at a directory holding libpti.so)",
            checkout.display()
        )
    })
}

/// `pkg-config --variable=libdir pti`, if pkg-config knows libpti.
fn pkg_config_libdir() -> Option<PathBuf> {
    let out = Command::new("pkg-config")
        .args(["--variable=libdir", "pti"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !dir.trim().is_empty()).then(|| PathBuf::from(dir.trim()))
}

/// Builds `libpti.so` stub in `out/stub` and puts it first on the link path.
fn link_stub(out: &Path) {
    let ffi = std::fs::read_to_string("src/ffi.rs").expect("reading src/ffi.rs");
    let names: Vec<&str> = ffi
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub(crate) fn "))
        .filter_map(|l| l.split('(').next())
        .collect();
    assert!(!names.is_empty(), "src/ffi.rs declares no function");
    let stub = out.join("stub");
    std::fs::create_dir_all(&stub).expect("creating the stub directory");
    let source = stub.join("stub.c");
    let body: String = names
        .iter()
        .map(|n| format!("void {n}(void) {{}}\n"))
        .collect();
    std::fs::write(&source, format!("/* link stub of libpti.so.0 */\n{body}"))
        .expect("writing the stub");
    let compiler = cc::Build::new().get_compiler();
    let status = Command::new(compiler.path())
        .args(["-shared", "-fPIC", "-Wl,-soname,libpti.so.0", "-o"])
        .arg(stub.join("libpti.so"))
        .arg(&source)
        .status()
        .expect("running the C compiler");
    assert!(status.success(), "building the link stub failed");
    println!("cargo:rustc-link-search=native={}", stub.display());
}
