//! The extension module finds `libpti.so.0` beside itself: the wheel puts both in the package
//! directory (`libpti/`), so the one libpti of the process is the wheel's.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-rpath,$ORIGIN");
}
