//! `cargo xtask install --prefix P`: libpti for C and C++ users, in the usual layout:
//!
//! ```text
//! P/lib/libpti.so.<version>, libpti.so.<major> -> it, libpti.so -> libpti.so.<major> (no static
//! library: one engine per process)
//! P/include/pti/*.h                           (libpti's API and what both libraries declare)
//! P/include/pti-intel/pti/pti_callback.h      (Intel's Callback API, for tools built for Intel's PTI)
//! P/lib/libpti_view.so.1.2.0, libpti_view.so.1 -> it, libpti_view.so -> libpti_view.so.1
//! (Intel PTI 1.2's ABI, forwarding to libpti.so.0 found beside it)
//! P/lib/pkgconfig/pti.pc, pti_view.pc           (pkg-config pti, pkg-config pti_view)
//! P/lib/cmake/Pti/PtiConfig.cmake, ...Version  (find_package(Pti) -> Pti::pti, Pti::pti_view)
//! P/bin/pti-trace, P/lib/libpti_trace_collector.so
//! ```
//!
//! The pkg-config and CMake files find the prefix from where they lie, so the tree can be moved.
//! [`install`] copies an existing build; the command builds the release profile first.

use std::path::{Path, PathBuf};

/// Which build to install.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `target/debug` (what the tests build).
    Debug,
    /// `target/release`.
    Release,
}

impl Profile {
    fn dir(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

/// libpti's version (the workspace's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

fn major() -> &'static str {
    VERSION.split('.').next().unwrap_or("0")
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn link(target: &str, at: &Path) -> Result<(), String> {
    let _ = std::fs::remove_file(at);
    std::os::unix::fs::symlink(target, at)
        .map_err(|e| format!("cannot link {} to {target}: {e}", at.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn mkdir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// The pkg-config file.
fn pkg_config() -> String {
    format!(
        "# libpti's pkg-config file, written by `cargo xtask install`.\n\
         prefix=${{pcfiledir}}/../..\n\
         libdir=${{prefix}}/lib\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: pti\n\
         Description: libpti, a profiling SDK for Level Zero, OpenCL and SYCL\n\
         Version: {VERSION}\n\
         Libs: -L${{libdir}} -lpti\n\
         Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl\n\
         Cflags: -I${{includedir}} -DPTI_LIBPTI_SYMBOLS\n"
    )
}

/// The pkg-config file of Intel PTI's face, `libpti_view.so.1`.
fn pkg_config_view() -> String {
    format!(
        "# libpti's pkg-config file for tools built for Intel PTI, written by `cargo xtask install`.\n\
         prefix=${{pcfiledir}}/../..\n\
         libdir=${{prefix}}/lib\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: pti_view\n\
         Description: Intel PTI {INTEL_PTI}'s ABI over libpti (libpti_view.so.1)\n\
         Version: {INTEL_PTI}\n\
         Libs: -L${{libdir}} -lpti_view\n\
         Cflags: -I${{includedir}}/pti-intel -I${{includedir}}\n"
    )
}

/// The Intel PTI API level `libpti_view.so.1` implements (its file's version).
const INTEL_PTI: &str = "1.2.0";

/// The CMake package: `find_package(Pti)` gives the imported targets `Pti::pti` and, as Intel's
/// package names it, `Pti::pti_view`.
fn cmake_config() -> String {
    format!(
        "# libpti's CMake package, written by `cargo xtask install`.\n\
         # find_package(Pti) defines the imported target Pti::pti (libpti.so and its headers).\n\
         get_filename_component(_PTI_PREFIX \"${{CMAKE_CURRENT_LIST_DIR}}/../../..\" ABSOLUTE)\n\
         if(NOT TARGET Pti::pti)\n\
         \x20 add_library(Pti::pti SHARED IMPORTED)\n\
         \x20 set_target_properties(Pti::pti PROPERTIES\n\
         \x20   IMPORTED_LOCATION \"${{_PTI_PREFIX}}/lib/libpti.so.{VERSION}\"\n\
         \x20   IMPORTED_SONAME \"libpti.so.{major}\"\n\
         \x20   INTERFACE_COMPILE_DEFINITIONS PTI_LIBPTI_SYMBOLS\n\
         \x20   INTERFACE_INCLUDE_DIRECTORIES \"${{_PTI_PREFIX}}/include\")\n\
         endif()\n\
         if(NOT TARGET Pti::pti_view)\n\
         \x20 add_library(Pti::pti_view SHARED IMPORTED)\n\
         \x20 set_target_properties(Pti::pti_view PROPERTIES\n\
         \x20   IMPORTED_LOCATION \"${{_PTI_PREFIX}}/lib/libpti_view.so.{INTEL_PTI}\"\n\
         \x20   IMPORTED_SONAME \"libpti_view.so.1\"\n\
         \x20   INTERFACE_INCLUDE_DIRECTORIES \"${{_PTI_PREFIX}}/include/pti-intel;${{_PTI_PREFIX}}/include\")\n\
         endif()\n\
         set(Pti_INCLUDE_DIRS \"${{_PTI_PREFIX}}/include\")\n\
         set(Pti_LIBRARIES Pti::pti)\n\
         unset(_PTI_PREFIX)\n",
        major = major()
    )
}

/// The CMake package's version check: any request of the same major version, not newer.
fn cmake_version() -> String {
    format!(
        "# libpti's CMake package version, written by `cargo xtask install`.\n\
         set(PACKAGE_VERSION \"{VERSION}\")\n\
         if(NOT PACKAGE_FIND_VERSION)\n\
         \x20 set(PACKAGE_VERSION_COMPATIBLE TRUE)\n\
         elseif(PACKAGE_FIND_VERSION_MAJOR STREQUAL \"{major}\" AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)\n\
         \x20 set(PACKAGE_VERSION_COMPATIBLE TRUE)\n\
         \x20 if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)\n\
         \x20   set(PACKAGE_VERSION_EXACT TRUE)\n\
         \x20 endif()\n\
         else()\n\
         \x20 set(PACKAGE_VERSION_COMPATIBLE FALSE)\n\
         endif()\n",
        major = major()
    )
}

/// Installs the build of `profile` under `prefix`; returns the files written.
pub fn install(root: &Path, prefix: &Path, profile: Profile) -> Result<Vec<PathBuf>, String> {
    let build = root.join("target").join(profile.dir());
    let (lib, include, intel_include, bin) = (
        prefix.join("lib"),
        prefix.join("include/pti"),
        prefix.join("include/pti-intel/pti"),
        prefix.join("bin"),
    );
    let (pkgconfig, cmake) = (lib.join("pkgconfig"), lib.join("cmake/Pti"));
    for dir in [&lib, &bin, &pkgconfig, &cmake] {
        mkdir(dir)?;
    }
    let mut written = Vec::new();
    let real = format!("libpti.so.{VERSION}");
    let soname = format!("libpti.so.{}", major());
    copy(&build.join("libpti.so"), &lib.join(&real))?;
    link(&real, &lib.join(&soname))?;
    link(&soname, &lib.join("libpti.so"))?;
    written.extend([lib.join(&real), lib.join(&soname), lib.join("libpti.so")]);
    let real = format!("libpti_view.so.{INTEL_PTI}");
    copy(&build.join("libpti_view.so"), &lib.join(&real))?;
    link(&real, &lib.join("libpti_view.so.1"))?;
    link("libpti_view.so.1", &lib.join("libpti_view.so"))?;
    written.extend([
        lib.join(&real),
        lib.join("libpti_view.so.1"),
        lib.join("libpti_view.so"),
    ]);
    for (from, to) in [
        ("include/pti", include),
        ("include/pti-intel/pti", intel_include),
    ] {
        mkdir(&to)?;
        for entry in std::fs::read_dir(root.join(from)).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == "h") {
                let to = to.join(path.file_name().unwrap());
                copy(&path, &to)?;
                written.push(to);
            }
        }
    }
    copy(&build.join("pti-trace"), &bin.join("pti-trace"))?;
    copy(
        &build.join("libpti_trace_collector.so"),
        &lib.join("libpti_trace_collector.so"),
    )?;
    written.extend([bin.join("pti-trace"), lib.join("libpti_trace_collector.so")]);
    for (path, text) in [
        (pkgconfig.join("pti.pc"), pkg_config()),
        (pkgconfig.join("pti_view.pc"), pkg_config_view()),
        (cmake.join("PtiConfig.cmake"), cmake_config()),
        (cmake.join("PtiConfigVersion.cmake"), cmake_version()),
    ] {
        write(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}
