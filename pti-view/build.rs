//! Link options of `libpti_view.so.1`: Intel's SONAME; a DT_NEEDED on `libpti.so.0`, found
//! beside it (`$ORIGIN`) or on the library path; nothing else.
//!
//! Cargo cannot order this cdylib after `pti-capi`'s, so it links against a stub: an empty
//! shared object compiled here whose only content is the SONAME `libpti.so.0`. The functions
//! this library calls stay undefined at link time and bind to the real `libpti.so.0` when the
//! dynamic linker loads both; `tests/c_abi.rs` checks that each is found there.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let stub_dir = out.join("link-stub");
    std::fs::create_dir_all(&stub_dir).expect("creating the link-stub directory");
    let source = stub_dir.join("stub.c");
    std::fs::write(&source, "/* link stub: only the SONAME matters */\n")
        .expect("writing the link stub");
    let compiler = cc::Build::new().get_compiler();
    let status = Command::new(compiler.path())
        .args([
            "-shared",
            "-fPIC",
            "-nostdlib",
            "-Wl,-soname,libpti.so.0",
            "-o",
        ])
        .arg(stub_dir.join("libpti.so.0"))
        .arg(&source)
        .status()
        .expect("running the C compiler for the link stub");
    assert!(status.success(), "building the link stub failed");

    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpti_view.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN");
    println!("cargo:rustc-cdylib-link-arg=-L{}", stub_dir.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-cdylib-link-arg=-l:libpti.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}
