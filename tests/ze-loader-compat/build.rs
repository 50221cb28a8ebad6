//! Links the fixture against the real loader (so that every symbol it does not define resolves
//! there through `dlsym` on its handle) under a name of its own.

fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,--no-as-needed");
    println!("cargo:rustc-link-arg-cdylib=-l:libze_loader.so.1");
    println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libze_loader_compat.so");
}
