//! Gives `libpti.so` its SONAME. The major number changes only when the ABI breaks.
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpti.so.{major}");
}
