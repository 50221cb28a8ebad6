//! Link options of `libpti.so`: its SONAME (the major number changes only when the ABI breaks),
//! and `-z nodelete`: libpti registers callbacks with the Level Zero loader and hooks with the
//! OpenCL loader that live as long as the process, so a `dlclose` must not unmap it.
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpti.so.{major}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
