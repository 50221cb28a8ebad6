//! Link options of `libpti.so`: its SONAME (the major number changes only when the ABI breaks);
//! `-z nodelete`: libpti registers callbacks with the Level Zero loader and hooks with the
//! OpenCL loader that live as long as the process, so a `dlclose` must not unmap it; and
//! `-Bsymbolic-functions`: libpti's calls to its own exported functions (an alias calling the
//! function it names, code taking a function's address) bind to libpti itself, never to another
//! library of the process that exports the same C name and was loaded first (Intel's PTI, or a
//! library compatible with it; `tests/c/two_clients.c` would recurse without end otherwise).
//! It also links the SONAMEs (`libpti.so.0`, and `libpti_view.so.1` of the Intel face) to the
//! libraries in cargo's output directory ([`soname_link`]), and passes the exports' symbol
//! versions (`libpti.versions.map`), which the workspace's linker driver
//! (`symbol-versions-gcc`, named in `.cargo/config.toml`) puts in place of rustc's own list.
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    soname_link(&format!("libpti.so.{major}"), "libpti.so");
    // And the Intel face's (crate pti-view, built into the same directory).
    soname_link("libpti_view.so.1", "libpti_view.so");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpti.so.{major}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    let dir = env!("CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed={dir}/libpti.versions.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/libpti.versions.map");
}

/// Links `soname` to `library` in the directory cargo writes the library to (`OUT_DIR` is
/// `<that directory>/build/<package>-<hash>/out`), so a program linked against the build with
/// `-lpti`, which needs the SONAME, starts without `cargo xtask` (the README's C quick start).
/// The link may dangle until cargo writes the library.
fn soname_link(soname: &str, library: &str) {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let Some(dir) = std::path::Path::new(&out).ancestors().nth(3) else {
        return;
    };
    let link = dir.join(soname);
    if std::fs::read_link(&link).is_ok_and(|t| t == std::path::Path::new(library)) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink(library, &link) {
        println!(
            "cargo:warning=cannot link {} to {library}: {e}",
            link.display()
        );
    }
}
