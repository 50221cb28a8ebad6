//! Compiles `cpp/xpti_metadata.cpp`, the C++ accessor of XPTI's event metadata (see that file),
//! with the system's C++ compiler. It needs nothing from libstdc++ at run time (the map walk is
//! inline), so libpti does not link libstdc++.
fn main() {
    println!("cargo:rerun-if-changed=cpp/xpti_metadata.cpp");
    cc::Build::new()
        .cpp(true)
        .cpp_link_stdlib(None)
        .file("cpp/xpti_metadata.cpp")
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("pti_xpti_metadata");
}
