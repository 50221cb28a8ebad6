//! The samples, built and run: the C samples and the C++ sample against the build directory
//! (on PoCL, the first OpenCL device of the test machines), the Rust examples, and the C and
//! C++ samples built from an installed tree (`xtask::install`) with pkg-config and with CMake.

use std::path::{Path, PathBuf};
use std::process::Command;

use pti_tests::{compile_c_with, lib_dir, out_dir, root, run_ok, scratch_dir};

/// Runs a sample, checking its output.
fn run_sample(exe: &Path, expect: &[&str]) -> String {
    run_sample_with(&mut Command::new(exe), expect)
}

/// Runs a sample built from the installed tree: cargo's test environment puts the build
/// directory on `LD_LIBRARY_PATH`, which would win over the sample's run path.
fn run_installed(exe: &Path, expect: &[&str]) -> String {
    run_sample_with(Command::new(exe).env_remove("LD_LIBRARY_PATH"), expect)
}

fn run_sample_with(cmd: &mut Command, expect: &[&str]) -> String {
    let exe = PathBuf::from(cmd.get_program());
    let out = run_ok(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    for e in expect {
        assert!(
            stdout.contains(e),
            "{} printed no {e:?}:\n{stdout}",
            exe.display()
        );
    }
    stdout
}

#[test]
fn c_samples_run() {
    let trace = compile_c_with(
        "callback_trace",
        &["samples/c/callback_trace.c", "samples/c/workload.c"],
        &["-lpti", "-lOpenCL"],
    );
    let out = run_sample(
        &trace,
        &[
            "clEnqueueNDRangeKernel",
            "kernel vector_add",
            "0 critical events",
        ],
    );
    assert!(!out.contains("\n0 calls traced"), "{out}");
    let dump = compile_c_with(
        "view_dump",
        &["samples/c/view_dump.c", "samples/c/workload.c"],
        &["-lpti", "-lOpenCL"],
    );
    run_sample(
        &dump,
        &["kernel ", "vector_add", "copy ", "fill ", " 0 dropped"],
    );
    let plain = compile_c_with(
        "vector_add",
        &["samples/c/vector_add.c", "samples/c/workload.c"],
        &["-lOpenCL"],
    );
    run_sample(&plain, &["device: ", "result: "]);
}

/// Compiles the shared workload for C++ samples.
fn workload_object() -> PathBuf {
    let object = out_dir().join("workload.o");
    run_ok(
        Command::new("cc")
            .current_dir(root())
            .args([
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-c",
                "samples/c/workload.c",
                "-o",
            ])
            .arg(&object),
    );
    object
}

#[test]
fn cpp_sample_runs() {
    let exe = out_dir().join("kernel_stats");
    let lib = lib_dir();
    run_ok(
        Command::new("c++")
            .current_dir(root())
            .args([
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Iinclude",
                "samples/cpp/kernel_stats.cpp",
            ])
            .arg(workload_object())
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .args(["-lpti", "-lOpenCL"]),
    );
    run_sample(&exe, &["vector_add", "scale"]);
}

#[test]
fn rust_examples_run() {
    let examples = root().join("target/debug/examples");
    for (name, expect) in [
        ("callbacks", "clEnqueueNDRangeKernel (ID 60"),
        ("records", "API 55 of group PTI_API_GROUP_LEVELZERO"),
    ] {
        let exe = examples.join(name);
        assert!(
            exe.exists(),
            "{} is missing: build the examples with `cargo build -p pti-core --examples` (`cargo \
             test` builds them)",
            exe.display()
        );
        run_sample(&exe, &[expect]);
    }
}

/// Builds `exe` from `sources` (with any extra compiler arguments) with the flags
/// `pkg-config --cflags --libs <package>` gives for the tree installed at `prefix`, which must
/// include `-l<package>`.
fn build_with_pkg_config(prefix: &Path, package: &str, exe: &str, sources: &[&str]) -> PathBuf {
    let pc = run_ok(
        Command::new("pkg-config")
            .args(["--cflags", "--libs", package])
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")),
    );
    let flags: Vec<String> = String::from_utf8_lossy(&pc.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert!(
        flags.iter().any(|f| *f == format!("-l{package}")),
        "{flags:?}"
    );
    let exe = out_dir().join(exe);
    let (args, libs): (Vec<&str>, Vec<&str>) = sources.iter().partition(|a| !a.starts_with("-l"));
    run_ok(
        Command::new("cc")
            .current_dir(root())
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
            .args(args)
            .arg("-o")
            .arg(&exe)
            .args(&flags)
            .arg(format!("-Wl,-rpath,{}", prefix.join("lib").display()))
            .args(libs),
    );
    exe
}

/// `exe` loads each of `libs` from the tree installed at `prefix`.
fn assert_uses_installed(exe: &Path, prefix: &Path, libs: &[&str]) {
    let ldd = run_ok(Command::new("ldd").arg(exe).env_remove("LD_LIBRARY_PATH"));
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    for lib in libs {
        let installed = prefix.canonicalize().unwrap().join("lib").join(lib);
        assert!(
            ldd.contains(&installed.display().to_string()),
            "{} does not use the installed {lib}:\n{ldd}",
            exe.display()
        );
    }
}

/// `exe` calls `symbol` (undefined in it, so taken from a library): `pkg-config pti` and
/// `Pti::pti` bind a tool to libpti's own `libpti_` names, `pti_view` to Intel's C names.
fn assert_calls(exe: &Path, symbol: &str) {
    let nm = run_ok(Command::new("nm").arg("-u").arg(exe));
    let nm = String::from_utf8_lossy(&nm.stdout);
    assert!(
        nm.lines()
            .any(|l| l.split_whitespace().last().map(pti_tests::unversioned) == Some(symbol)),
        "{} does not call {symbol}:\n{nm}",
        exe.display()
    );
}

#[test]
fn samples_build_from_an_installed_tree() {
    let prefix = out_dir().join(format!("installed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&prefix);
    // The debug build the tests use, installed as `cargo xtask install` installs a release one.
    lib_dir();
    xtask::install::install(&root(), &prefix, xtask::install::Profile::Debug)
        .expect("install the debug build");

    // pkg-config.
    let exe = build_with_pkg_config(
        &prefix,
        "pti",
        "view_dump_pkg_config",
        &["samples/c/view_dump.c", "samples/c/workload.c", "-lOpenCL"],
    );
    assert_uses_installed(&exe, &prefix, &["libpti.so.0"]);
    assert_calls(&exe, "libpti_ptiViewSetCallbacks");
    run_installed(&exe, &["vector_add", " 0 dropped"]);

    // pkg-config pti_view: a program of Intel PTI's ABI links the installed libpti_view.so.1,
    // which finds the installed libpti.so.0 beside it.
    let exe = build_with_pkg_config(
        &prefix,
        "pti_view",
        "intel_bad_input_pkg_config",
        &["-Itests/c", "tests/c/intel_bad_input.c"],
    );
    assert_uses_installed(&exe, &prefix, &["libpti_view.so.1", "libpti.so.0"]);
    assert_calls(&exe, "ptiCallbackSubscribe");
    run_installed(&exe, &[", 0 failures"]);

    // CMake: find_package(Pti) and the imported target Pti::pti, for C and C++.
    let project = scratch_dir("cmake-project");
    let samples = root().join("samples");
    std::fs::write(
        project.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\n\
             project(pti_samples C CXX)\n\
             find_package(Pti 0.1 REQUIRED)\n\
             find_package(OpenCL REQUIRED)\n\
             add_library(workload STATIC {s}/c/workload.c)\n\
             target_link_libraries(workload PUBLIC OpenCL::OpenCL)\n\
             add_executable(callback_trace {s}/c/callback_trace.c)\n\
             target_link_libraries(callback_trace Pti::pti workload)\n\
             add_executable(kernel_stats {s}/cpp/kernel_stats.cpp)\n\
             set_property(TARGET kernel_stats PROPERTY CXX_STANDARD 17)\n\
             target_link_libraries(kernel_stats Pti::pti workload)\n\
             add_executable(intel_bad_input {t}/c/intel_bad_input.c)\n\
             target_include_directories(intel_bad_input PRIVATE {t}/c)\n\
             target_link_libraries(intel_bad_input Pti::pti_view)\n",
            s = samples.display(),
            t = root().join("tests").display()
        ),
    )
    .unwrap();
    let build = project.join("build");
    run_ok(
        Command::new("cmake")
            .arg("-S")
            .arg(&project)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
    );
    run_ok(Command::new("cmake").arg("--build").arg(&build));
    run_installed(
        &build.join("callback_trace"),
        &["clEnqueueNDRangeKernel", "0 critical events"],
    );
    assert_calls(&build.join("callback_trace"), "libpti_ptiCallbackSubscribe");
    run_installed(&build.join("kernel_stats"), &["vector_add"]);
    run_installed(&build.join("intel_bad_input"), &[", 0 failures"]);
    // A version of another major is refused.
    std::fs::write(
        project.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(p C)\nfind_package(Pti 1.0 REQUIRED)\n",
    )
    .unwrap();
    let refused = Command::new("cmake")
        .arg("-S")
        .arg(&project)
        .arg("-B")
        .arg(project.join("build-1.0"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "find_package(Pti 1.0) accepted 0.1"
    );
    // The installed tree and the project are 400 MB: gone once checked.
    let _ = std::fs::remove_dir_all(&prefix);
    let _ = std::fs::remove_dir_all(&project);
}
