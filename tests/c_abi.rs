//! The C ABI as a C program sees it: bad input to every export, the headers under C and C++
//! compilers, the SONAME, the static library, and the sample of the main job.

use std::process::Command;

use pti_tests::{compile_c, exports, lib_dir, out_dir, root, run_ok};

#[test]
fn bad_input_to_every_export_returns_the_documented_codes() {
    let exe = compile_c("bad_input", &["tests/c/bad_input.c"]);
    let output = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failures"), "{stdout}");
}

#[test]
fn every_export_is_a_pti_function_exercised_by_the_bad_input_test() {
    let source = std::fs::read_to_string(root().join("tests/c/bad_input.c")).unwrap();
    let exports = exports();
    assert!(exports.len() >= 10, "{exports:?}");
    // The OpenCL layer's and the XPTI subscriber's entry points.
    const LAYER: [&str; 6] = [
        "clGetLayerInfo",
        "clInitLayer",
        "clInitLayerWithProperties",
        "clDeinitLayer",
        "xptiTraceInit",
        "xptiTraceFinish",
    ];
    for name in LAYER {
        assert!(exports.iter().any(|e| e == name), "{name} is not exported");
    }
    for name in &exports {
        assert!(
            name.starts_with("pti") || LAYER.contains(&name.as_str()),
            "libpti.so exports a function that is neither PTI's nor a layer or subscriber entry \
             point: {name}"
        );
        assert!(
            source.contains(&format!("{name}(")),
            "tests/c/bad_input.c does not exercise {name}"
        );
    }
}

#[test]
fn headers_compile_as_strict_c_and_cpp_and_agree_on_layout() {
    let tu = out_dir().join("all_headers.c");
    std::fs::write(
        &tu,
        "#include <stddef.h>\n\
         #include \"pti/pti.h\"\n#include \"pti/pti_view.h\"\n#include \"pti/pti_callback.h\"\n\
         #include \"pti/pti_ext.h\"\n#include \"pti/pti_driver_levelzero_api_ids.h\"\n\
         #include \"pti/pti_driver_opencl_api_ids.h\"\n#include \"pti/pti_runtime_sycl_api_ids.h\"\n\
         #include \"pti/pti_cl_params.h\"\n\
         typedef char params_ok[sizeof(pti_cl_params_clEnqueueNDRangeKernel) == 9 * sizeof(void*) ? 1 : -1];\n\
         typedef char size_ok[sizeof(pti_apicall_callback_data) == 64 ? 1 : -1];\n\
         typedef char corr_ok[offsetof(pti_apicall_callback_data, _correlation_id) == 48 ? 1 : -1];\n\
         typedef char local_ok[offsetof(pti_apicall_callback_data, _local_data) == 56 ? 1 : -1];\n\
         typedef char crit_ok[sizeof(pti_critical_event_callback_data) == 16 ? 1 : -1];\n\
         typedef char enum_ok[sizeof(pti_result) == 4 && sizeof(pti_callback_domain) == 4 ? 1 : -1];\n\
         int main(void) { return zeInit_id + clGetPlatformIDs_id + urContextCreate_id - 3; }\n",
    )
    .unwrap();
    let include = root().join("include");
    for (compiler, std) in [
        ("cc", "-std=c99"),
        ("cc", "-std=c11"),
        ("c++", "-std=c++11"),
        ("c++", "-std=c++17"),
    ] {
        let mut cmd = Command::new(compiler);
        if compiler == "c++" {
            cmd.args(["-x", "c++"]);
        }
        run_ok(
            cmd.arg(std)
                .args([
                    "-pedantic",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-Wno-unused-local-typedefs",
                    "-fsyntax-only",
                    "-I",
                ])
                .arg(&include)
                .arg(&tu),
        );
    }
}

#[test]
fn shared_library_has_a_soname_and_the_static_library_links() {
    let lib = lib_dir();
    let dynamic = run_ok(Command::new("readelf").arg("-d").arg(lib.join("libpti.so")));
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        dynamic.contains("Library soname: [libpti.so.0]"),
        "{dynamic}"
    );
    // The loaders call into libpti until the process ends: a dlclose must not unmap it.
    assert!(dynamic.contains("NODELETE"), "{dynamic}");
    // A layer that needed the loader would be loaded by it and load it: libpti needs no runtime.
    assert!(
        !dynamic.contains("libOpenCL") && !dynamic.contains("libze_loader"),
        "{dynamic}"
    );

    let exe = out_dir().join("bad_input_static");
    run_ok(
        Command::new("cc")
            .current_dir(root())
            .args(["-std=c11", "-Iinclude", "tests/c/bad_input.c", "-o"])
            .arg(&exe)
            .arg(lib.join("libpti.a"))
            .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s"]),
    );
    let needed = run_ok(Command::new("readelf").arg("-d").arg(&exe));
    assert!(
        !String::from_utf8_lossy(&needed.stdout).contains("libpti"),
        "linked dynamically after all"
    );
    let out = run_ok(&mut Command::new(&exe));
    assert!(String::from_utf8_lossy(&out.stdout).contains(", 0 failures"));
}

#[test]
fn a_pti_view_client_reads_correct_records() {
    let exe = compile_c("view_client", &["tests/c/view_client.c"]);
    let out = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        stdout.contains("4 API records, 1 external") && stdout.contains(" 0 failures"),
        "{stdout}"
    );
}

#[test]
fn records_left_in_buffers_reach_the_tool_at_exit() {
    let exe = compile_c("view_client_exit", &["tests/c/view_client.c"]);
    let out = run_ok(Command::new(&exe).arg("exit"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("at exit: 3 API records in 1 buffers"),
        "{stdout}"
    );
}

#[test]
fn the_tools_clock_stamps_every_record() {
    let exe = compile_c("view_client_clock", &["tests/c/view_client.c"]);
    let out = run_ok(Command::new(&exe).arg("clock"));
    assert!(String::from_utf8_lossy(&out.stdout).contains(" 0 failures"));
}
