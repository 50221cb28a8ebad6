//! Link options of `libpti.so`: its SONAME (the major number changes only when the ABI breaks);
//! `-z nodelete`: libpti registers callbacks with the Level Zero loader and hooks with the
//! OpenCL loader that live as long as the process, so a `dlclose` must not unmap it; and
//! `-Bsymbolic-functions`: libpti's calls to its own exported functions (an alias calling the
//! function it names, code taking a function's address) bind to libpti itself, never to another
//! library of the process that exports the same C name and was loaded first (Intel's PTI, or a
//! library compatible with it; `tests/c/two_clients.c` would recurse without end otherwise).
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpti.so.{major}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
}
