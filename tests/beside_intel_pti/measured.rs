//! The compatibility table of docs/compatibility.md ("Measured beside Intel PTI"), made from
//! what the differential tests measure: each behaviour issue 37 named, measured on every Intel
//! PTI release fetched (`xtask::intel_pti::RELEASES`: the 0.x ones PyTorch pins, loaded under
//! 1.x's library name, and every 1.x) and on libpti's Intel face, over the plain
//! Level Zero program and the simulated GPU. The test fails when the document's table is not
//! the one measured (`PTI_TEST_WRITE_DOCS=1` writes it), and when libpti differs from Intel
//! PTI 1.2 where no reason is given ([`KNOWN`]), or agrees where one is.
//!
//! The runs are shared with the item tests of `beside_intel_pti.rs` ([`callbacks_text`],
//! [`program_text`], [`cpu_kernels`]): each (probe, library) runs once per test process. What is
//! measured must not change from run to run: Intel's library loses some records of the
//! regular list from run to run, so no row counts records.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::{IntelPti, Library, On, run_program, run_tool_with, tools};
use pti_tests::{INTEL_TOOL, compile, out_dir, root};

/// Runs `f` once per `key` in this process and keeps its text. A run on Intel's library is made
/// again, up to [`INTEL_ATTEMPTS`] times in all, when it fails: Intel's releases abort now and
/// then on an internal assertion over the asynchronous simulated device (1.0.1: one run in six
/// alone, one in three beside other tests: `queue_ordinal_index_map_.count(command->queue) != 0`
/// in its `ZeCollector`), and a
/// behaviour is what a run that lives shows. libpti's runs get one attempt.
fn memo(key: String, library: Library, f: impl Fn() -> String) -> String {
    static CELLS: Mutex<BTreeMap<String, Arc<OnceLock<String>>>> = Mutex::new(BTreeMap::new());
    let cell = CELLS
        .lock()
        .unwrap()
        .entry(key.clone())
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let attempts = match library {
            Library::Intel(_) => INTEL_ATTEMPTS,
            _ => 1,
        };
        for attempt in 1..attempts {
            match std::panic::catch_unwind(AssertUnwindSafe(&f)) {
                Ok(text) => return text,
                Err(_) => println!("{key}: attempt {attempt} of {attempts} failed; once more"),
            }
        }
        f()
    })
    .clone()
}

/// Runs of Intel's library, at most, per measurement.
const INTEL_ATTEMPTS: usize = 10;

/// The Intel-ABI callback tool's text over the plain Level Zero program, GPU_OPERATION_COMPLETED
/// enabled with `flags` ("enter,exit"; the tool's default is "1,1").
pub(super) fn callbacks_text(library: Library, flags: &str) -> String {
    memo(format!("callbacks {library:?} {flags}"), library, || {
        let env = [("PTI_TEST_COMPLETED_FLAGS", flags)];
        let tool = &tools().callback_tool;
        run_tool_with(tool, On::PlainLevelZero, library, "T STATS ", &env).2
    })
}

/// The stdout of the probe program `tests/c/<name>.c` (linked to `libpti_view.so.1`) on
/// `library`.
pub(super) fn program_text(name: &'static str, library: Library) -> String {
    static BUILT: Mutex<BTreeMap<&str, PathBuf>> = Mutex::new(BTreeMap::new());
    let program = BUILT
        .lock()
        .unwrap()
        .entry(name)
        .or_insert_with(|| {
            let intel = xtask::intel_pti::lib_dir(&root());
            compile(
                out_dir().join(name),
                INTEL_TOOL,
                &[&format!("tests/c/{name}.c")],
                &[&format!("-L{}", intel.display()), "-l:libpti_view.so.1"],
                &[],
            )
        })
        .clone();
    memo(format!("{name} {library:?}"), library, || {
        run_program(&program, library)
    })
}

/// Over the plain Level Zero program on a device of type CPU, with only the GPU kernel view
/// enabled: the kernels the program ran and the kernel records written, as "<ran> <recorded>".
pub(super) fn cpu_kernels(library: Library) -> (usize, usize) {
    let text = memo(format!("cpu kernels {library:?}"), library, || {
        let env = [
            ("ZE_SIM_DEVICE_TYPE", "cpu"),
            ("PTI_TEST_GPU_KERNELS_ONLY", "1"),
        ];
        let tool = &tools().view_tool;
        let (stdout, _, text) = run_tool_with(tool, On::PlainLevelZero, library, "T ", &env);
        let ran = stdout
            .lines()
            .filter(|l| l.starts_with("W EXPECT KERNEL"))
            .count();
        let recorded = text.lines().filter(|l| l.starts_with("T KERNEL ")).count();
        format!("{ran} {recorded}")
    });
    let (ran, recorded) = text.split_once(' ').unwrap();
    (ran.parse().unwrap(), recorded.parse().unwrap())
}

/// One behaviour: what the table calls it, and how to read it from a library's runs.
struct Probe {
    what: &'static str,
    measure: fn(Library) -> String,
}

/// The "T OP" lines of the callback tool: (domain, phase, kind, kernel handle, name).
fn operations(library: Library) -> Vec<(String, String, String, String, String)> {
    callbacks_text(library, "1,1")
        .lines()
        .filter_map(|line| {
            // T OP domain phase group api_id corr kind op_id kernel_handle name
            let w: Vec<&str> = line.splitn(12, ' ').collect();
            match w.as_slice() {
                ["T", "OP", d, p, _, _, _, k, _, h, name] => Some((
                    d.to_string(),
                    p.to_string(),
                    k.to_string(),
                    h.to_string(),
                    name.to_string(),
                )),
                _ => None,
            }
        })
        .collect()
}

/// The distinct values `f` gives the operations of `domain`, `phase` and `kind`, joined.
fn of_operations(
    library: Library,
    (domain, phase, kind): (&str, &str, &str),
    f: fn(&str, &str) -> String,
) -> String {
    let mut seen: Vec<String> = operations(library)
        .iter()
        .filter(|(d, p, k, _, _)| d == domain && p == phase && k == kind)
        .map(|(_, _, _, handle, name)| f(handle, name))
        .collect();
    seen.sort();
    seen.dedup();
    if seen.is_empty() {
        "none".into()
    } else {
        seen.join(", ")
    }
}

fn handle(h: &str, _: &str) -> String {
    if h == "0" {
        "0"
    } else {
        "the kernel's address"
    }
    .into()
}

fn name(_: &str, n: &str) -> String {
    if n.is_empty() {
        "\"\"".into()
    } else {
        format!("`{n}`")
    }
}

/// The buffer program's line for `step` (its `n`th such line): (requests, completions).
fn buffer_step(library: Library, step: &str, n: usize) -> (u32, u32) {
    let text = program_text("intel_buffers", library);
    let line = text
        .lines()
        .filter(|l| l.starts_with(&format!("B {step} ")))
        .nth(n)
        .unwrap_or_else(|| panic!("no line {n} of {step}:\n{text}"));
    let w: Vec<&str> = line.split(' ').collect();
    // B STEP RESULT requests N completions M
    (w[4].parse().unwrap(), w[6].parse().unwrap())
}

fn completed_with(library: Library, flags: &str) -> String {
    let n = callbacks_text(library, flags)
        .lines()
        .filter(|l| l.starts_with("T OP 6 "))
        .count();
    if n > 0 { "delivered" } else { "none" }.into()
}

/// The IDs the API-ID program names in `group` ("1" Level Zero, "3" SYCL).
fn named_ids(library: Library, group: &str) -> Vec<(u32, String)> {
    program_text("intel_api_ids", library)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w.len() == 4 && w[0] == "I" && w[1] == group)
                .then(|| (w[2].parse().unwrap(), w[3].into()))
        })
        .collect()
}

fn id_of(library: Library, group: &str, function: &str) -> String {
    let ids: Vec<String> = named_ids(library, group)
        .iter()
        .filter(|(_, n)| n == function)
        .map(|(id, _)| id.to_string())
        .collect();
    or_none(ids.join(", "))
}

/// "none" for an empty answer.
fn or_none(text: String) -> String {
    if text.is_empty() { "none".into() } else { text }
}

/// What `ptiViewSetCallbacks` answers: a library that cannot load its core answers
/// PTI_ERROR_NOT_IMPLEMENTED to everything.
fn set_callbacks_answer(library: Library) -> String {
    let text = program_text("intel_buffers", library);
    let line = text
        .lines()
        .find(|l| l.starts_with("B SET_CALLBACKS "))
        .unwrap_or_else(|| panic!("no SET_CALLBACKS line:\n{text}"));
    line.split(' ').nth(2).unwrap().to_string()
}

/// The first row: whether the library works at all over the tests' loader; the other rows are
/// measured only where it does.
const LOADS: &str =
    "works over the tests' Level Zero loader (1.8.12): `ptiViewSetCallbacks` answers";

const PROBES: &[Probe] = &[
    Probe {
        what: LOADS,
        measure: set_callbacks_answer,
    },
    Probe {
        what: "buffers asked for by `ptiViewSetCallbacks`",
        measure: |l| buffer_step(l, "SET_CALLBACKS", 0).0.to_string(),
    },
    Probe {
        what: "buffers handed back by a first `ptiFlushAllViews` before any record",
        measure: |l| {
            let before = buffer_step(l, "ENABLE", 0).1;
            (buffer_step(l, "FLUSH", 0).1 - before).to_string()
        },
    },
    Probe {
        what: "valid size of the buffers handed back then",
        measure: |l| {
            let text = program_text("intel_buffers", l);
            let sizes: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("B COMPLETE used "))
                .collect();
            if sizes.is_empty() {
                "none".into()
            } else {
                sizes.join(", ")
            }
        },
    },
    Probe {
        what: "buffers asked for by a second `ptiFlushAllViews`",
        measure: |l| (buffer_step(l, "FLUSH", 1).0 - buffer_step(l, "FLUSH", 0).0).to_string(),
    },
    Probe {
        what: "GPU_OPERATION_COMPLETED enabled with (enter 1, exit 1)",
        measure: |l| completed_with(l, "1,1"),
    },
    Probe {
        what: "GPU_OPERATION_COMPLETED enabled with (enter 1, exit 0)",
        measure: |l| completed_with(l, "1,0"),
    },
    Probe {
        what: "GPU_OPERATION_COMPLETED enabled with (enter 0, exit 1)",
        measure: |l| completed_with(l, "0,1"),
    },
    Probe {
        what: "GPU_OPERATION_COMPLETED enabled with (enter 0, exit 0)",
        measure: |l| completed_with(l, "0,0"),
    },
    Probe {
        what: "kernels of a Level Zero device of type CPU, GPU kernel view alone enabled",
        measure: |l| {
            // Not how many: Intel's library loses some of the regular list's from run to run.
            let (ran, recorded) = cpu_kernels(l);
            assert!(
                recorded <= ran,
                "{l:?} recorded {recorded} kernels of {ran}"
            );
            if recorded > 0 {
                "GPU kernel records"
            } else {
                "not recorded"
            }
            .into()
        },
    },
    Probe {
        what: "a fill's `_name` (GPU_OPERATION_APPENDED at EXIT)",
        measure: |l| {
            let names = of_operations(l, ("4", "2", "2"), name);
            let names = names
                .split(", ")
                .filter(|n| n.contains("Fill"))
                .map(|n| n.replace("zeCommandListAppendMemoryFill", "…Fill"))
                .collect::<Vec<_>>()
                .join(", ");
            or_none(names)
        },
    },
    Probe {
        what: "KERNEL_CREATED at ENTER: `_name`",
        measure: |l| {
            let named = callbacks_text(l, "1,1").lines().any(|line| {
                // T KERNEL domain phase group api_id return_code kernel_handle name
                let w: Vec<&str> = line.split(' ').collect();
                w.len() == 9 && w[1] == "KERNEL" && w[2] == "8" && w[3] == "1" && w[8] != "-"
            });
            if named { "the kernel's name" } else { "NULL" }.into()
        },
    },
    Probe {
        what: "GPU_OPERATION_APPENDED at ENTER: a kernel's `_name`",
        measure: |l| {
            of_operations(l, ("4", "1", "1"), |_, n| {
                if n.is_empty() {
                    "\"\"".into()
                } else {
                    "the kernel's name".into()
                }
            })
        },
    },
    Probe {
        what: "GPU_OPERATION_APPENDED at ENTER: `_kernel_handle`",
        measure: |l| of_operations(l, ("4", "1", "1"), handle),
    },
    Probe {
        what: "GPU_OPERATION_APPENDED at EXIT: `_kernel_handle`",
        measure: |l| of_operations(l, ("4", "2", "1"), handle),
    },
    Probe {
        what: "GPU_OPERATION_COMPLETED: `_kernel_handle`",
        measure: |l| of_operations(l, ("6", "2", "1"), handle),
    },
    Probe {
        what: "barriers reported as GPU operations (kind OTHER), no synchronization view enabled",
        measure: |l| {
            let appended = of_operations(l, ("4", "1", "3"), |_, _| "APPENDED at ENTER".into());
            if appended == "none" { "no" } else { "yes" }.into()
        },
    },
    Probe {
        what: "Level Zero API IDs `ptiViewGetApiIdName` names (0 to 8191)",
        measure: |l| named_ids(l, "1").len().to_string(),
    },
    Probe {
        what: "the Level Zero ID of `zeCommandListAppendMemoryCopyWithParameters`",
        measure: |l| id_of(l, "1", "zeCommandListAppendMemoryCopyWithParameters"),
    },
    Probe {
        what: "SYCL API IDs `ptiViewGetApiIdName` names (0 to 8191)",
        measure: |l| named_ids(l, "3").len().to_string(),
    },
    Probe {
        what: "the name of SYCL ID 231",
        measure: |l| {
            named_ids(l, "3")
                .into_iter()
                .find(|(id, _)| *id == 231)
                .map_or("none".into(), |(_, n)| format!("`{n}`"))
        },
    },
];

/// Where libpti's Intel face differs from Intel PTI 1.2 on purpose: (row, why).
const KNOWN: &[(&str, &str)] = &[
    (
        "GPU_OPERATION_APPENDED at EXIT: `_kernel_handle`",
        "libpti gives the kernel's address, the `_kernel_handle` of its KERNEL_CREATED callback, \
         so that a tool can join them",
    ),
    (
        "GPU_OPERATION_COMPLETED: `_kernel_handle`",
        "as at APPENDED",
    ),
    (
        "barriers reported as GPU operations (kind OTHER), no synchronization view enabled",
        "libpti reports the operations of the device views enabled (barriers: \
         PTI_VIEW_DEVICE_SYNCHRONIZATION); not aligned yet",
    ),
    (
        "Level Zero API IDs `ptiViewGetApiIdName` names (0 to 8191)",
        "libpti also names its own IDs (from 4128) of functions Intel has not numbered",
    ),
    (
        "SYCL API IDs `ptiViewGetApiIdName` names (0 to 8191)",
        "libpti's table also has the Unified Runtime's newest function (326, `urGraphGetIdExp`)",
    ),
];

/// The libraries of the table's columns: every Intel release fetched (0.16 and 0.17, which
/// PyTorch's XPU wheels pin, loaded under 1.x's name; every 1.x), then libpti.
fn columns() -> Vec<(String, Library)> {
    let mut columns: Vec<(String, Library)> = xtask::intel_pti::RELEASES
        .iter()
        .map(|(version, _)| (format!("Intel {version}"), Library::Intel(version)))
        .collect();
    columns.push(("libpti".into(), Library::Libpti));
    columns
}

/// A library's value of `probe`: "—" where the library does not work at all (see [`LOADS`]),
/// or what went wrong (an old release may fail a probe).
fn measure(probe: &Probe, library: Library) -> String {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        if probe.what != LOADS && set_callbacks_answer(library) != "PTI_SUCCESS" {
            return "—".to_string();
        }
        (probe.measure)(library)
    }))
    .unwrap_or_else(|_| "fails (see the test's output)".into())
}

const BEGIN: &str = "<!-- measured: begin (tests/beside_intel_pti/measured.rs writes this table; \
                     do not edit) -->";
const END: &str = "<!-- measured: end -->";
const DOC: &str = "docs/compatibility.md";

fn render(rows: &[(&str, Vec<String>, String)]) -> String {
    let columns = columns();
    let mut out = format!("{BEGIN}\n\n| measured | ");
    out += &columns
        .iter()
        .map(|(c, _)| c.as_str())
        .collect::<Vec<_>>()
        .join(" | ");
    out += " | libpti against Intel 1.2 |\n|";
    out += &" --- |".repeat(columns.len() + 2);
    out += "\n";
    for (what, values, verdict) in rows {
        out += &format!("| {what} | {} | {verdict} |\n", values.join(" | "));
    }
    out += &format!("\n{END}");
    out
}

#[test]
fn the_compatibility_table_is_what_the_tests_measure() {
    let columns = columns();
    let libpti = columns.len() - 1;
    let reference = columns
        .iter()
        .position(|(_, l)| *l == IntelPti)
        .expect("Intel 1.2 is a column");
    let mut rows = Vec::new();
    let mut wrong = Vec::new();
    for probe in PROBES {
        let values: Vec<String> = columns.iter().map(|(_, l)| measure(probe, *l)).collect();
        let known = KNOWN.iter().find(|(what, _)| *what == probe.what);
        let same = values[libpti] == values[reference];
        let verdict = match (same, known) {
            (true, None) => "same".to_string(),
            (false, Some((_, why))) => format!("differs: {why}"),
            (true, Some(_)) => {
                wrong.push(format!(
                    "{}: the same now; remove it from KNOWN",
                    probe.what
                ));
                "same".into()
            }
            (false, None) => {
                wrong.push(format!(
                    "{}: Intel 1.2 {:?}, libpti {:?}",
                    probe.what, values[reference], values[libpti]
                ));
                "**differs**".into()
            }
        };
        rows.push((probe.what, values, verdict));
    }
    let table = render(&rows);
    println!("{table}");
    assert!(
        wrong.is_empty(),
        "libpti's Intel face against Intel PTI 1.2:\n{}",
        wrong.join("\n")
    );
    let path = root().join(DOC);
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(begin), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("{DOC} has no measured table ({BEGIN} ... {END})");
    };
    let written = &doc[begin..end + END.len()];
    if written != table {
        if std::env::var_os("PTI_TEST_WRITE_DOCS").is_some() {
            let updated = format!("{}{table}{}", &doc[..begin], &doc[end + END.len()..]);
            std::fs::write(&path, updated).unwrap();
            println!("wrote the measured table into {DOC}");
        } else {
            panic!(
                "{DOC}'s measured table is not what the tests measure: run this test with \
                 PTI_TEST_WRITE_DOCS=1 to write it, and read the difference before committing.\n\
                 --- written\n{written}\n--- measured\n{table}"
            );
        }
    }
}
