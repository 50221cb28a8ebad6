//! The C ABI as a C program sees it: bad input to every export, the headers under C and C++
//! compilers, the SONAME (and no static library: one engine per process), and the sample of the
//! main job.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use pti_tests::{
    INTEL_FACE_PREFIX, INTEL_TOOL, OWN_SYMBOL_PREFIX, compile, compile_c, compile_shared, exports,
    exports_of, lib_dir, out_dir, root, run_ok, scratch_dir, unversioned,
};

#[test]
fn bad_input_to_every_export_returns_the_documented_codes() {
    let exe = compile_c("bad_input", &["tests/c/bad_input.c"]);
    let output = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failures"), "{stdout}");
}

/// The same for Intel PTI 1.2's ABI on `libpti_view.so.1`, called by its plain names; every one
/// of its exports is exercised.
#[test]
fn bad_input_to_every_intel_face_export_returns_the_documented_codes() {
    let exe = compile(
        out_dir().join("intel_bad_input"),
        INTEL_TOOL,
        &["tests/c/intel_bad_input.c"],
        &["-l:libpti_view.so.1"],
        &[lib_dir()],
    );
    let output = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failures"), "{stdout}");
    let source = std::fs::read_to_string(root().join("tests/c/intel_bad_input.c")).unwrap();
    for name in exports_of(&lib_dir().join("libpti_view.so")) {
        assert!(
            source.contains(&format!("{name}(")),
            "tests/c/intel_bad_input.c does not exercise {name}"
        );
    }
}

/// The same Intel-ABI program with `libpti.so` preloaded (as pti-trace runs programs): its plain
/// names bind to `libpti.so`, whose ten names that differ between the faces answer a caller
/// linked to `libpti_view.so.1` as Intel's face does (`pti-capi/src/caller.rs`); every check of
/// `tests/c/intel_bad_input.c` still holds. And libpti's own bad-input program (built with
/// `PTI_LIBPTI_SYMBOLS`, as `pkg-config pti` builds tools) gets libpti's answers with
/// `libpti_view.so.1` loaded first.
#[test]
fn an_intel_abi_program_gets_intels_answers_when_libpti_so_is_loaded_first() {
    let exe = compile(
        out_dir().join("intel_bad_input_preloaded"),
        INTEL_TOOL,
        &["tests/c/intel_bad_input.c"],
        &["-l:libpti_view.so.1"],
        &[lib_dir()],
    );
    let output = run_ok(
        Command::new(&exe)
            .env("LD_PRELOAD", lib_dir().join("libpti.so.0"))
            .env("LD_DEBUG", "bindings")
            .env(
                "LD_DEBUG_OUTPUT",
                out_dir().join("intel_bad_input_preloaded.bindings"),
            ),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(stdout.contains(", 0 failures"), "{stdout}");
    // The test means something only if the plain names did bind to libpti.so.
    let bindings: String = std::fs::read_dir(out_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("intel_bad_input_preloaded.bindings")
        })
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let _ = std::fs::remove_file(e.path());
            text
        })
        .collect();
    for name in [
        "ptiCallbackSubscribe",
        "ptiCallbackEnableDomain",
        "ptiViewSetCallbacks",
        "ptiVersion",
    ] {
        assert!(
            bindings
                .lines()
                .any(|l| l.contains("intel_bad_input_preloaded [0] to ")
                    && l.contains("libpti.so.0")
                    && l.ends_with(&format!("`{name}'"))),
            "{name} did not bind to the preloaded libpti.so.0"
        );
    }

    let exe = compile_c("bad_input_beside_view", &["tests/c/bad_input.c"]);
    let output = run_ok(Command::new(&exe).env("LD_PRELOAD", lib_dir().join("libpti_view.so.1")));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(", 0 failures"), "{stdout}");
}

#[test]
fn every_export_is_a_pti_function_exercised_by_the_bad_input_test() {
    let source = std::fs::read_to_string(root().join("tests/c/bad_input.c")).unwrap();
    let exports = exports();
    assert!(exports.len() >= 10, "{exports:?}");
    // The OpenCL layer's, the XPTI subscriber's and the ITT collector's entry points.
    const LAYER: [&str; 7] = [
        "clGetLayerInfo",
        "clInitLayer",
        "clInitLayerWithProperties",
        "clDeinitLayer",
        "xptiTraceInit",
        "xptiTraceFinish",
        "__itt_api_init",
    ];
    for name in LAYER {
        assert!(exports.iter().any(|e| e == name), "{name} is not exported");
    }
    for name in exports
        .iter()
        .filter(|e| !e.starts_with(OWN_SYMBOL_PREFIX) && !e.starts_with(INTEL_FACE_PREFIX))
    {
        assert!(
            name.starts_with("pti") || LAYER.contains(&name.as_str()),
            "libpti.so exports a function that is neither PTI's nor a layer, subscriber or \
             collector entry point: {name}"
        );
        assert!(
            source.contains(&format!("{name}(")),
            "tests/c/bad_input.c does not exercise {name}"
        );
    }
}

/// Every function of the API is exported under its C name and as `libpti_<name>`, and nothing
/// else carries that prefix; a program built against the headers calls the `libpti_` names only
/// (docs/ARCHITECTURE.md, "One engine per process").
#[test]
fn every_function_has_its_own_symbol_and_the_headers_bind_to_it() {
    let exports = exports();
    let api: Vec<&String> = exports.iter().filter(|e| e.starts_with("pti")).collect();
    assert!(api.len() >= 30, "{api:?}");
    for name in &api {
        let own = format!("{OWN_SYMBOL_PREFIX}{name}");
        assert!(exports.contains(&own), "{name} is exported without {own}");
    }
    for own in exports
        .iter()
        .filter(|e| e.starts_with(OWN_SYMBOL_PREFIX) && !e.starts_with(INTEL_FACE_PREFIX))
    {
        let name = &own[OWN_SYMBOL_PREFIX.len()..];
        assert!(
            api.iter().any(|a| *a == name),
            "{own} names no exported function"
        );
    }
    let exe = compile_c("bad_input", &["tests/c/bad_input.c"]);
    let undefined = run_ok(Command::new("nm").arg("-u").arg(&exe));
    let undefined = String::from_utf8_lossy(&undefined.stdout);
    let called: Vec<&str> = undefined
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(unversioned)
        .filter(|s| s.starts_with("pti") || s.starts_with(OWN_SYMBOL_PREFIX))
        .collect();
    assert!(called.len() >= 30, "{called:?}");
    assert!(
        called.iter().all(|s| s.starts_with(OWN_SYMBOL_PREFIX)),
        "a program built against the headers calls plain names: {called:?}"
    );
}

/// One engine per process, reached by two clients in one process
/// (`tests/c/two_clients.c`): a library with Intel PTI's signatures for `ptiCallbackSubscribe` and
/// `ptiCallbackEnableDomain`, loaded before libpti, and a tool built against libpti's headers.
/// Both subscribe; every call is delivered to both with the same correlation ID (one counter,
/// one engine). The plain C name resolves to whichever library came first (the hazard), libpti's
/// own symbol to libpti (the arrangement that avoids it).
#[test]
fn two_clients_in_one_process_share_one_engine() {
    let intel_like = compile_shared(
        "client_intel_like",
        &["tests/c/client_intel_like.c"],
        &["-lpti"],
    );
    let proposal = compile_shared(
        "client_proposal",
        &["tests/c/client_proposal.c"],
        &["-lpti"],
    );
    let out = out_dir();
    let exe = compile(
        out.join("two_clients"),
        &[],
        &["tests/c/two_clients.c"],
        // Client B first: it comes before libpti in the process's lookup order.
        &["-lclient_intel_like", "-lpti", "-lclient_proposal", "-ldl"],
        &[out.clone(), lib_dir()],
    );
    let run = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8_lossy(&run.stdout);
    println!("{stdout}");
    assert!(
        stdout.contains("two clients, one engine: 5 calls"),
        "{stdout}"
    );
    let found = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} not reported: {stdout}"))
            .to_string()
    };
    assert!(
        found("plain ptiCallbackSubscribe").ends_with("libclient_intel_like.so"),
        "the plain name should resolve to the library loaded first: {stdout}"
    );
    assert!(
        found("libpti_ptiCallbackSubscribe").contains("libpti.so"),
        "{stdout}"
    );
    assert!(intel_like.exists() && proposal.exists());
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
         #include \"pti/pti_cl_params.h\"\n#include \"pti/pti_version.h\"\n#include \"pti/pti_export.h\"\n\
         #include \"pti/pti_metrics.h\"\n#include \"pti/pti_metrics_scope.h\"\n#include \"pti/pti_pc_sampling.h\"\n\
         typedef char params_ok[sizeof(pti_cl_params_clEnqueueNDRangeKernel) == 9 * sizeof(void*) ? 1 : -1];\n\
         typedef char size_ok[sizeof(pti_apicall_callback_data) == 64 ? 1 : -1];\n\
         typedef char corr_ok[offsetof(pti_apicall_callback_data, _correlation_id) == 48 ? 1 : -1];\n\
         typedef char local_ok[offsetof(pti_apicall_callback_data, _local_data) == 56 ? 1 : -1];\n\
         typedef char crit_ok[sizeof(pti_critical_event_callback_data) == 16 ? 1 : -1];\n\
         typedef char enum_ok[sizeof(pti_result) == 4 && sizeof(pti_callback_domain) == 4 ? 1 : -1];\n\
         typedef char api_level_ok[PTI_VERSION_MAJOR == 1 && PTI_VERSION_MINOR == 2 ? 1 : -1];\n\
         int main(void) { return zeInit_id + clGetPlatformIDs_id + urContextCreate_id - 3; }\n",
    )
    .unwrap();
    // A tool built for Intel's PTI: Intel's pti_callback.h from include/pti-intel, the rest as
    // Intel's headers name and lay it out.
    let intel_tu = out_dir().join("all_intel_headers.c");
    std::fs::write(
        &intel_tu,
        "#include <stddef.h>\n\
         #include \"pti/pti.h\"\n#include \"pti/pti_view.h\"\n#include \"pti/pti_callback.h\"\n\
         #include \"pti/pti_version.h\"\n#include \"pti/pti_metrics.h\"\n\
         #include \"pti/pti_metrics_scope.h\"\n#include \"pti/pti_pc_sampling.h\"\n\
         typedef char domain_ok[PTI_CB_DOMAIN_DRIVER_API == 1023 && sizeof(pti_callback_domain) == 4 ? 1 : -1];\n\
         typedef char op_ok[sizeof(pti_callback_gpu_op_data) == 56 && offsetof(pti_callback_gpu_op_data, _operation_details) == 48 ? 1 : -1];\n\
         typedef char details_ok[sizeof(pti_gpu_op_details) == 32 ? 1 : -1];\n\
         typedef char kernel_ok[sizeof(pti_callback_kernel_data) == 56 && offsetof(pti_callback_kernel_data, _name) == 48 ? 1 : -1];\n\
         typedef char device_ok[sizeof(pti_device_properties_t) == 40 && sizeof(pti_value_t) == 8 ? 1 : -1];\n\
         typedef char uuid_ok[PTI_MAX_DEVICE_UUID_SIZE == 16 && sizeof(((pti_view_record_kernel*)0)->_device_uuid) == 16 ? 1 : -1];\n\
         typedef char tags_ok[sizeof(enum _pti_view_kind) == 4 && sizeof(struct _pti_callback_gpu_op_data) == 56 ? 1 : -1];\n\
         static void on_callback(pti_callback_domain d, pti_api_group_id g, uint32_t id, pti_backend_ctx_t c,\n\
                                 void* data, void* user, void** instance) {\n\
           (void)d, (void)g, (void)id, (void)c, (void)data, (void)user, (void)instance;\n\
         }\n\
         int main(void) {\n\
           pti_callback_subscriber_handle sub = NULL;\n\
           pti_callback_function f = on_callback;\n\
           (void)f;\n\
           return PTI_VERSION_MAJOR == 1 && sub == NULL ? 0 : PTI_VIEW_DEVICE_GPU_KERNEL;\n\
         }\n",
    )
    .unwrap();
    let include = root().join("include");
    let intel_include = root().join("include/pti-intel");
    for (compiler, std) in [
        ("cc", "-std=c99"),
        ("cc", "-std=c11"),
        ("c++", "-std=c++11"),
        ("c++", "-std=c++17"),
    ] {
        for (source, roots) in [
            (&tu, vec![&include]),
            (&intel_tu, vec![&intel_include, &include]),
        ] {
            let mut cmd = Command::new(compiler);
            if compiler == "c++" {
                cmd.args(["-x", "c++"]);
            }
            cmd.arg(std).args([
                "-pedantic",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-Wno-unused-local-typedefs",
                "-fsyntax-only",
            ]);
            for dir in roots {
                cmd.arg("-I").arg(dir);
            }
            run_ok(cmd.arg(source));
        }
    }
}

/// What C++ tools written for Intel's PTI do with its enums (kineto's XPU plugin: scoped names,
/// `std::to_string`, map keys, comparisons with integers) compiles against libpti's headers.
#[test]
fn cpp_tools_use_the_enums_as_intels_headers_allow() {
    let tu = out_dir().join("enum_idioms.cpp");
    std::fs::write(
        &tu,
        "#include <map>\n#include <string>\n\
         #include \"pti/pti_view.h\"\n#include \"pti/pti_callback.h\"\n#include \"pti/pti_metrics_scope.h\"\n\
         int main() {\n\
           pti_result r = pti_result::PTI_SUCCESS;\n\
           std::map<pti_view_kind, std::string> names{{pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL, \"kernel\"}};\n\
           std::string s = std::to_string(PTI_VIEW_DEVICE_GPU_MEM_COPY) + std::to_string(r);\n\
           pti_callback_domain d = PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED;\n\
           pti_metrics_scope_mode_t m = PTI_METRICS_SCOPE_AUTO_KERNEL;\n\
           enum _pti_view_kind k = PTI_VIEW_INVALID;\n\
           return (r == 0 && d == 6 && m == 1 && k == 0 && !s.empty() && names.size() == 1) ? 0 : 1;\n\
         }\n",
    )
    .unwrap();
    run_ok(
        Command::new("c++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
            .arg("-I")
            .arg(root().join("include/pti-intel"))
            .arg("-I")
            .arg(root().join("include"))
            .arg(&tu),
    );
}

/// The shared library is the only form of libpti: a static copy linked into a program would be a
/// second engine the moment a runtime loads `libpti.so` as its layer or subscriber
/// (docs/ARCHITECTURE.md, "One engine per process").
#[test]
fn shared_library_has_a_soname_and_there_is_no_static_library() {
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
    let manifest = std::fs::read_to_string(root().join("pti-capi/Cargo.toml")).unwrap();
    let crate_type = manifest
        .lines()
        .find(|l| l.starts_with("crate-type"))
        .expect("pti-capi's crate-type");
    assert!(
        !crate_type.contains("staticlib"),
        "pti-capi builds a static library again: {crate_type}"
    );
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

/// The ABI gate: the functions `libpti.so.0` exports are exactly those of its symbol-version map
/// (`pti-capi/libpti.versions.map`), each under the version node the map gives it, and those of
/// `libpti_view.so.1` are those listed in `tests/abi/`, so no change drops, renames or adds an
/// export unnoticed. (Record layouts are gated at compile time: `pti-abi` asserts each record's
/// size and field offsets against the published numbers, and the headers `static_assert` them.)
/// After an intended change, edit the map (a new function goes into the node of the release that
/// adds it; docs/stability.md) or regenerate the list with
/// `nm -D --defined-only <lib> | awk '$2=="T"{print $3}' | sort`, and say why in CHANGELOG.md.
#[test]
fn exports_match_the_committed_abi_lists() {
    let mapped = symbol_versions();
    assert!(mapped.len() > 100, "{mapped:?}");
    let versioned = versioned_exports(&lib_dir().join("libpti.so"));
    let differ: Vec<String> = mapped
        .iter()
        .filter(|(name, node)| versioned.get(*name) != Some(node))
        .map(|(name, node)| {
            format!(
                "{name}: {node} in the map, {:?} in libpti.so",
                versioned.get(name)
            )
        })
        .chain(
            versioned
                .keys()
                .filter(|name| !mapped.contains_key(*name))
                .map(|name| format!("{name}: exported, not in the map")),
        )
        .collect();
    assert!(
        differ.is_empty(),
        "libpti.so's exports differ from pti-capi/libpti.versions.map:\n{}",
        differ.join("\n")
    );

    let list = "tests/abi/libpti_view.so.1.exports";
    let expected = std::fs::read_to_string(root().join(list)).unwrap();
    let expected: BTreeSet<&str> = expected.lines().collect();
    let actual: Vec<String> = exports_of(&lib_dir().join("libpti_view.so"));
    let actual: BTreeSet<&str> = actual.iter().map(String::as_str).collect();
    assert_eq!(
        actual, expected,
        "libpti_view.so's exports differ from {list}"
    );
}

/// The map's functions and their version nodes (`NODE {` opens one; `name;` lines name its
/// functions; comments are `/* */` lines).
fn symbol_versions() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("pti-capi/libpti.versions.map")).unwrap();
    let mut node = None;
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix('{') {
            node = Some(name.trim().to_string());
        } else if line.starts_with('}') {
            node = None;
        } else if let (Some(n), Some(name)) = (&node, line.strip_suffix(';'))
            && !name.contains(':')
        {
            out.insert(name.to_string(), n.clone());
        }
    }
    out
}

/// The functions `lib` defines and exports, with their symbol version (`objdump -T`; `Base` for
/// an unversioned one).
fn versioned_exports(lib: &std::path::Path) -> BTreeMap<String, String> {
    let out = run_ok(Command::new("objdump").arg("-T").arg(lib));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // address, binding, "DF", section, size, version, name
            (f.len() == 7 && f[1] == "g" && f[2] == "DF" && f[3] == ".text")
                .then(|| (f[6].to_string(), f[5].to_string()))
        })
        .collect()
}

/// Symbol versions as a program sees them: a program built against `libpti.so.0` references
/// each function at its version, and one built before versions (or against the libpti crate's
/// stub) binds to the default version of the same function.
#[test]
fn programs_bind_to_the_versioned_functions() {
    let exe = compile_c("bad_input_versions", &["tests/c/bad_input.c"]);
    let refs = run_ok(Command::new("objdump").arg("-T").arg(&exe));
    let refs = String::from_utf8_lossy(&refs.stdout);
    let versioned = refs
        .lines()
        .filter(|l| l.contains("*UND*") && l.contains("libpti_ptiViewEnable"))
        .collect::<Vec<_>>();
    assert!(
        versioned.iter().any(|l| l.contains("LIBPTI_0")),
        "a program linked to libpti.so.0 references its functions at their versions: {versioned:?}"
    );
    let defined = run_ok(
        Command::new("readelf")
            .arg("-V")
            .arg(lib_dir().join("libpti.so")),
    );
    let defined = String::from_utf8_lossy(&defined.stdout);
    assert!(defined.contains("Name: LIBPTI_0"), "{defined}");
}

/// `libpti_view.so.1` is Intel PTI 1.2's ABI over libpti's engine: it exports exactly the
/// functions Intel's library exports (read from the reference `cargo xtask setup` fetches), has
/// Intel's SONAME, links `libpti.so.0` (found beside it), and each export forwards to a
/// `libpti_intel_` function that `libpti.so` defines: every Intel-face function of libpti is
/// reached, and nothing else of libpti.so is.
#[test]
fn libpti_view_is_intel_pti_1_2s_abi_forwarding_to_libpti() {
    let intel = xtask::intel_pti::lib_dir(&root()).join("libpti_view.so.1");
    assert!(
        intel.exists(),
        "Intel's PTI is missing at {}: run `cargo xtask setup`",
        intel.display()
    );
    let intel_api: BTreeSet<String> = exports_of(&intel)
        .into_iter()
        .filter(|e| e.starts_with("pti") || e.starts_with("xpti"))
        .collect();
    let view = lib_dir().join("libpti_view.so");
    let ours: BTreeSet<String> = exports_of(&view).into_iter().collect();
    assert_eq!(
        ours, intel_api,
        "libpti_view.so.1's exports differ from Intel PTI 1.2's"
    );
    assert_eq!(
        intel_api.len(),
        69,
        "Intel PTI 1.2 exports 66 pti* and 3 xpti* functions"
    );

    let dynamic = run_ok(Command::new("readelf").arg("-d").arg(&view));
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        dynamic.contains("Library soname: [libpti_view.so.1]"),
        "{dynamic}"
    );
    assert!(
        dynamic.contains("Shared library: [libpti.so.0]"),
        "{dynamic}"
    );
    assert!(dynamic.contains("runpath: [$ORIGIN]"), "{dynamic}");

    let undefined = run_ok(
        Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(&view),
    );
    let forwarded: BTreeSet<String> = String::from_utf8_lossy(&undefined.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(unversioned)
        .filter(|s| s.starts_with(INTEL_FACE_PREFIX))
        .map(str::to_string)
        .collect();
    let face: BTreeSet<String> = exports()
        .into_iter()
        .filter(|e| e.starts_with(INTEL_FACE_PREFIX))
        .collect();
    assert_eq!(
        forwarded, face,
        "libpti_view.so.1 forwards to other functions than libpti's Intel face"
    );
    for name in &ours {
        assert!(
            forwarded.contains(&format!("{INTEL_FACE_PREFIX}{name}")),
            "{name} does not forward to {INTEL_FACE_PREFIX}{name}"
        );
    }
}

/// The linker driver (`pti-capi/symbol-versions-gcc`) on a made-up link: rustc's list of
/// exports and a library's map become one version script (the map's nodes, rustc's names, the
/// rest local); a name rustc exports that the map does not version fails the link; a link
/// without a map is passed on untouched.
#[test]
fn the_linker_driver_versions_the_exports_and_refuses_an_unversioned_one() {
    let dir = scratch_dir("symbol-versions");
    let list = dir.join("list");
    let map = dir.join("lib.versions.map");
    std::fs::write(
        &map,
        "/* made up */\nV_0 {\n  global:\n    ptiA;\n    ptiB;\n};\n\nV_0.2 {\n  global:\n    ptiC;\n} V_0;\n",
    )
    .unwrap();
    let driver = root().join("pti-capi/symbol-versions-gcc");
    let link = |exports: &[&str]| {
        let mut text = String::from("{\n  global:\n");
        for e in exports {
            text += &format!("    {e};\n");
        }
        text += "\n  local:\n    *;\n};\n";
        std::fs::write(&list, text).unwrap();
        Command::new(&driver)
            .arg(format!("-Wl,--version-script={}", list.display()))
            .arg(format!("-Wl,--version-script={}", map.display()))
            .args(["-o", "lib.so"])
            .env("PTI_LINK_CC", "true")
            .output()
            .unwrap()
    };
    let out = link(&["ptiA", "ptiC", "ptiB"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = std::fs::read_to_string(dir.join("merged.versions.map")).unwrap();
    assert_eq!(
        merged,
        "V_0 {\n  global:\n    ptiA;\n    ptiB;\n  local:\n    *;\n};\nV_0.2 {\n  global:\n    ptiC;\n} V_0;\n"
    );
    let out = link(&["ptiA", "ptiB", "ptiC", "ptiD"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("exports ptiD, which"), "{stderr}");
    // No map: the arguments go to the driver as they came (`echo` shows them).
    let plain = Command::new(&driver)
        .args(["-Wl,--version-script=/x/list", "-shared"])
        .env("PTI_LINK_CC", "echo")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout).trim(),
        "-Wl,--version-script=/x/list -shared"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
