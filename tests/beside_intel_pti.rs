//! libpti held to account against Intel's PTI 1.2 (PyPI `intel-pti`, fetched by `cargo xtask
//! setup` into `.cache/intel-pti`): one view-API tool binary (`tests/c/view_tool.c`, linked to
//! `libpti_view.so.1`) records the same SYCL program through the same stack twice, once on each
//! library, and the records are compared.
//!
//! The stack is the one of `tests/sycl.rs`'s Level Zero runs: dpctl, the SYCL runtime, Intel's
//! Unified Runtime Level Zero adapter (v1 or v2), the real loader 1.8.12 and its tracing layer,
//! the simulated driver as a GPU. Intel's library additionally needs `zesInit`, which loader
//! 1.8.12 lacks (`tests/c/zes_stub.c` answers it), and the tracing layer enabled by the
//! environment (`ZE_ENABLE_TRACING_LAYER=1`, as its log asks on loaders this old).
//!
//! What must agree: the program's output, the runtime (UR) records, the device records and the
//! UR call each one's correlation ID names, the API IDs of every function both record (the
//! drop-in promise), and the driver records, except the functions libpti reaches on its
//! extension route, which Intel's library does not see on this loader. What differs by design is
//! printed: libpti gives every Level Zero call inside a UR call that call's correlation ID; Intel
//! gives it only to the append that makes a device record.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use pti_tests::{
    Adapter, SHARED, compile, lib_dir, out_dir, root, run_with_watchdog, sycl_over_level_zero,
    sycl_venv, sycl_workload,
};

/// Which library answers the tool's `libpti_view.so.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Library {
    Libpti,
    IntelPti,
}

/// The view tool and the `zesInit` stub, compiled once; the directory of Intel's library.
struct Tools {
    view_tool: PathBuf,
    zes_stub: PathBuf,
    intel: PathBuf,
    libpti_as_view: PathBuf,
}

fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let intel = xtask::intel_pti::lib_dir(&root());
        assert!(
            intel.join("libpti_view.so.1").exists() && intel.join("pti/libpti.so").exists(),
            "Intel's PTI {} is missing from {}: run `cargo xtask setup`, which fetches it from \
             PyPI (intel-pti) as the tests' reference",
            xtask::intel_pti::VERSION,
            intel.display()
        );
        // Linked against Intel's library for its name (no run path: LD_LIBRARY_PATH chooses).
        let view_tool = compile(
            out_dir().join("libview_tool.so"),
            SHARED,
            &["tests/c/view_tool.c"],
            &[&format!("-L{}", intel.display()), "-l:libpti_view.so.1"],
            &[],
        );
        let zes_stub = compile(
            out_dir().join("libzes_stub.so"),
            SHARED,
            &["tests/c/zes_stub.c"],
            &[],
            &[],
        );
        // libpti under Intel's library name, as a drop-in user would install it.
        let libpti_as_view = out_dir().join("libpti-as-pti-view");
        std::fs::create_dir_all(&libpti_as_view).expect("create the link's directory");
        let link = libpti_as_view.join("libpti_view.so.1");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(lib_dir().join("libpti.so.0"), &link)
            .expect("link libpti_view.so.1 to libpti");
        Tools {
            view_tool,
            zes_stub,
            intel,
            libpti_as_view,
        }
    })
}

/// One API record: the function's name (from the library's own `ptiViewGetApiIdName`), its API
/// ID, its correlation ID.
#[derive(Debug)]
struct Api {
    name: String,
    id: u32,
    corr: u32,
}

/// A device record: what it is (`KERNEL vadd`, `COPY M2D/16384`, `FILL 16384`), and its
/// correlation ID.
#[derive(Debug)]
struct Device {
    what: String,
    corr: u32,
}

/// What one library recorded of one run, and the program's output.
#[derive(Debug)]
struct Recorded {
    output: Vec<String>,
    runtime: Vec<Api>,
    driver: Vec<Api>,
    device: Vec<Device>,
}

fn record(adapter: Adapter, library: Library) -> Recorded {
    let tools = tools();
    let lib = sycl_venv().join("lib");
    let mut cmd = sycl_workload();
    sycl_over_level_zero(&mut cmd, adapter);
    let stem = format!("beside-{}-{adapter:?}-{library:?}", std::process::id());
    let base = out_dir().join(&stem);
    let (view_dir, preload) = match library {
        Library::Libpti => (&tools.libpti_as_view, tools.view_tool.display().to_string()),
        Library::IntelPti => {
            cmd.env("ZE_ENABLE_TRACING_LAYER", "1");
            (
                &tools.intel,
                format!("{}:{}", tools.zes_stub.display(), tools.view_tool.display()),
            )
        }
    };
    cmd.env(
        "LD_LIBRARY_PATH",
        format!("{}:{}", view_dir.display(), lib.display()),
    )
    .env("LD_PRELOAD", preload)
    .env("PTI_TEST_OUT", &base);
    let out = run_with_watchdog(&mut cmd, Duration::from_secs(180));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the SYCL workload failed on {library:?} ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Processes the program starts inherit the preload and write files too; the program's is
    // the one with runtime records.
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(out_dir()).unwrap().flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(&format!("{stem}."))
        {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let _ = std::fs::remove_file(entry.path());
            if text.contains("T RUNTIME ") {
                texts.push(text);
            }
        }
    }
    assert_eq!(
        texts.len(),
        1,
        "{library:?}: the tool should have written the records of one process"
    );
    let mut recorded = Recorded {
        output: stdout
            .lines()
            .filter(|l| l.starts_with("W "))
            .map(str::to_string)
            .collect(),
        runtime: Vec::new(),
        driver: Vec::new(),
        device: Vec::new(),
    };
    for line in texts[0].lines() {
        let p: Vec<&str> = line.split(' ').collect();
        let num = |i: usize| -> u32 {
            p.get(i)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{library:?}: bad line {line:?}"))
        };
        match p.get(1).copied() {
            Some(kind @ ("RUNTIME" | "DRIVER")) => {
                let api = Api {
                    name: p[2].to_string(),
                    id: num(3),
                    corr: num(4),
                };
                if kind == "RUNTIME" {
                    recorded.runtime.push(api)
                } else {
                    recorded.driver.push(api)
                }
            }
            Some(kind @ ("KERNEL" | "COPY" | "FILL")) => recorded.device.push(Device {
                what: format!("{kind} {}", p[2]),
                corr: num(3),
            }),
            Some("FAILURES") => assert_eq!(
                num(2),
                0,
                "{library:?}: the tool's calls failed:\n{}",
                texts[0]
            ),
            _ => panic!("{library:?}: unexpected line {line:?}\n{}", texts[0]),
        }
    }
    recorded
}

/// How many records of each function.
fn counts(apis: &[Api]) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for a in apis {
        *m.entry(a.name.as_str()).or_default() += 1;
    }
    m
}

/// Each device record with the name of the runtime call its correlation ID names (sorted).
fn device_origins(r: &Recorded, library: Library) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r
        .device
        .iter()
        .map(|d| {
            let ur = r
                .runtime
                .iter()
                .find(|a| a.corr == d.corr)
                .unwrap_or_else(|| {
                    panic!(
                        "{library:?}: {} (correlation ID {}) has no runtime record of that ID",
                        d.what, d.corr
                    )
                });
            (d.what.clone(), ur.name.clone())
        })
        .collect();
    v.sort();
    v
}

/// Driver records carrying the correlation ID of a runtime record.
fn inside_runtime_calls(r: &Recorded) -> usize {
    let ur: BTreeSet<u32> = r.runtime.iter().map(|a| a.corr).collect();
    r.driver.iter().filter(|a| ur.contains(&a.corr)).count()
}

fn compare(adapter: Adapter) {
    let ours = record(adapter, Library::Libpti);
    let intel = record(adapter, Library::IntelPti);
    assert!(
        ours.output.iter().any(|l| l.starts_with("W RESULT ")),
        "the program printed no result: {:?}",
        ours.output
    );
    assert_eq!(ours.output, intel.output, "the program's output differs");

    // The same API IDs for the same functions: what a drop-in promises.
    let mut ids: BTreeMap<&str, (u32, &str)> = BTreeMap::new();
    for (who, r) in [("libpti", &ours), ("Intel PTI", &intel)] {
        for a in r.runtime.iter().chain(&r.driver) {
            let (id, first) = *ids.entry(a.name.as_str()).or_insert((a.id, who));
            assert_eq!(
                id, a.id,
                "{}: API ID {} from {who}, {id} from {first}",
                a.name, a.id
            );
        }
    }

    assert_eq!(
        counts(&ours.runtime),
        counts(&intel.runtime),
        "{adapter:?}: the runtime records differ"
    );
    let origins = device_origins(&ours, Library::Libpti);
    assert_eq!(
        origins,
        device_origins(&intel, Library::IntelPti),
        "{adapter:?}: the device records, or the UR calls their correlation IDs name, differ"
    );
    assert!(!origins.is_empty(), "{adapter:?}: no device records");

    // Driver records: the same, but for what libpti reaches on its extension route.
    let route: BTreeSet<&str> = xtask::level_zero::EXTENSION_ROUTE.into_iter().collect();
    let (o, i) = (counts(&ours.driver), counts(&intel.driver));
    let mut only_ours = BTreeMap::new();
    for (name, n) in &o {
        let theirs = i.get(name).copied().unwrap_or(0);
        if theirs == *n {
            continue;
        }
        assert!(
            theirs == 0 && route.contains(name),
            "{adapter:?}: {name}: {n} records from libpti, {theirs} from Intel PTI"
        );
        only_ours.insert(*name, *n);
    }
    let only_intel: Vec<_> = i.keys().filter(|n| !o.contains_key(*n)).collect();
    assert!(
        only_intel.is_empty(),
        "{adapter:?}: functions only Intel PTI recorded: {only_intel:?}"
    );

    // Intel's library links a device record to its UR call through the append alone.
    for d in &intel.device {
        let appends: Vec<_> = intel
            .driver
            .iter()
            .filter(|a| a.corr == d.corr)
            .map(|a| a.name.as_str())
            .collect();
        assert!(
            appends.len() == 1 && appends[0].starts_with("zeCommandListAppend"),
            "{adapter:?}: Intel PTI's {} (correlation ID {}) should share it with one append \
             call, not {appends:?}",
            d.what,
            d.corr
        );
    }

    eprintln!(
        "beside Intel PTI {} through the {adapter:?} adapter:\n\
         \x20 runtime records: libpti {}, Intel {} (same functions, same counts)\n\
         \x20 device records:  libpti {}, Intel {} (same, each naming the same UR call: {:?})\n\
         \x20 driver records:  libpti {}, Intel {}; only libpti's (extension route): {only_ours:?}\n\
         \x20 driver records carrying their UR call's correlation ID: libpti {}, Intel {}",
        xtask::intel_pti::VERSION,
        ours.runtime.len(),
        intel.runtime.len(),
        ours.device.len(),
        intel.device.len(),
        origins,
        ours.driver.len(),
        intel.driver.len(),
        inside_runtime_calls(&ours),
        inside_runtime_calls(&intel),
    );
}

#[test]
fn sycl_over_level_zero_through_the_v1_adapter_beside_intel_pti() {
    compare(Adapter::V1);
}

#[test]
fn sycl_over_level_zero_through_the_v2_adapter_beside_intel_pti() {
    compare(Adapter::V2);
}
