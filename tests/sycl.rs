//! The SYCL backend against the real SYCL runtime: dpctl, the SYCL runtime and its Unified
//! Runtime, and Intel's CPU OpenCL runtime behind the Khronos loader, all from `.venv` (made by
//! `cargo xtask setup`).
//!
//! A Python SYCL program (`tests/python/sycl_workload.py`: USM allocations of three kinds,
//! copies, a fill, two kernels built with `dpctl.program`, two queues) runs alone and under a
//! tool preloaded after libpti (`tests/c/sycl_tool.c`), which libpti's constructor makes the XPTI
//! subscriber and an OpenCL layer of. The checks follow each kernel and copy from its Unified
//! Runtime call through the OpenCL call inside it to its device record, by one correlation ID.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pti_tests::{compile_shared, lib_dir, out_dir, root, sycl_workload};

/// The external correlation ID the program pushes around its first kernel.
const EXTERNAL_ID: u64 = 4242;
/// `PTI_INVALID_QUEUE_ID`.
const NO_QUEUE: u64 = 0xFFFF_FFFF_FFFF_FFFE;

/// The tool and the other subscriber, compiled once per test binary.
fn libraries() -> &'static (PathBuf, PathBuf) {
    static LIBS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    LIBS.get_or_init(|| {
        let tool = compile_shared("sycl_tool", &["tests/c/sycl_tool.c"], &["-lpti"]);
        let other = compile_shared("other_subscriber", &["tests/c/other_subscriber.c"], &[]);
        (tool, other)
    })
}

/// One run of the workload: its lines, and the tool's (none without the tool).
struct Run {
    w: Vec<String>,
    t: Vec<String>,
}

fn run(traced: bool, extra_env: &[(&str, &str)]) -> Run {
    let mut cmd = sycl_workload();
    cmd.env("PTI_TEST_EXTERNAL_ID", EXTERNAL_ID.to_string());
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = format!("sycl-{}-{n}", std::process::id());
    let out_base = out_dir().join(&stem);
    if traced {
        let (tool, _) = libraries();
        cmd.env(
            "LD_PRELOAD",
            format!(
                "{}:{}",
                lib_dir().join("libpti.so.0").display(),
                tool.display()
            ),
        )
        .env("PTI_TEST_OUT", &out_base);
    } else {
        cmd.env_remove("PTI_TEST_EXTERNAL_ID");
    }
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python");
    let pid = child.id();
    let out = child.wait_with_output().expect("wait for python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the SYCL workload failed ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let w = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("W ").map(str::to_string))
        .collect();
    let t = if traced {
        let file = PathBuf::from(format!("{}.{pid}", out_base.display()));
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("the tool wrote no {}: {e}", file.display()));
        // Files of processes the program started (they inherit the preload) are not checked.
        for entry in std::fs::read_dir(out_dir()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("{stem}.")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        text.lines()
            .filter_map(|l| l.strip_prefix("T ").map(str::to_string))
            .collect()
    } else {
        Vec::new()
    };
    Run { w, t }
}

/// API IDs by name, from a generated ID header.
fn api_ids(header: &str) -> HashMap<String, u32> {
    let text = std::fs::read_to_string(root().join("include/pti").join(header)).expect("ID header");
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.trim().trim_end_matches(',').split_once(" = ")?;
            Some((name.strip_suffix("_id")?.to_string(), value.parse().ok()?))
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Api {
    group: u32,
    id: u32,
    corr: u32,
    tid: u32,
    start: u64,
    end: u64,
}

#[derive(Debug, Clone)]
struct Kernel {
    name: String,
    corr: u32,
    append: u64,
    start: u64,
    end: u64,
    task_begin: u64,
    enqueue_begin: u64,
    node: u64,
    queue: u64,
    invocation: u32,
    source_file: String,
}

/// A copy or fill record: (kind, bytes, correlation, start, sycl queue).
type MemoryOp = (String, u64, u32, u64, u64);

#[derive(Default)]
struct Traced {
    apis: Vec<Api>,
    kernels: Vec<Kernel>,
    memory_ops: Vec<MemoryOp>,
    /// (correlation, external ID)
    externals: Vec<(u32, u64)>,
    /// (operation, kind, bytes, address, correlation, name)
    allocations: Vec<(String, String, u64, u64, u32, String)>,
    counters: HashMap<String, Vec<u64>>,
    criticals: Vec<String>,
}

fn num<T: std::str::FromStr>(p: &[&str], i: usize, line: &str) -> T {
    p.get(i)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("field {i} of {line:?}"))
}

fn parse(t: &[String]) -> Traced {
    let mut out = Traced::default();
    for line in t {
        let p: Vec<&str> = line.split(' ').collect();
        match p[0] {
            "RUNTIME" | "DRIVER" => out.apis.push(Api {
                group: num(&p, 1, line),
                id: num(&p, 2, line),
                corr: num(&p, 3, line),
                tid: num(&p, 4, line),
                start: num(&p, 5, line),
                end: num(&p, 6, line),
            }),
            "KERNEL" => out.kernels.push(Kernel {
                name: p[1].into(),
                corr: num(&p, 2, line),
                append: num(&p, 4, line),
                start: num(&p, 6, line),
                end: num(&p, 7, line),
                task_begin: num(&p, 8, line),
                enqueue_begin: num(&p, 9, line),
                node: num(&p, 10, line),
                queue: num(&p, 11, line),
                invocation: num(&p, 12, line),
                source_file: p[13].into(),
            }),
            "COPY" => out.memory_ops.push((
                format!("COPY {}", p[1]),
                num(&p, 2, line),
                num(&p, 3, line),
                num(&p, 4, line),
                num(&p, 6, line),
            )),
            "FILL" => out.memory_ops.push((
                "FILL".into(),
                num(&p, 1, line),
                num(&p, 2, line),
                num(&p, 3, line),
                num(&p, 5, line),
            )),
            "EXTERNAL" => out.externals.push((num(&p, 1, line), num(&p, 2, line))),
            "MEMORY" => out.allocations.push((
                p[1].into(),
                p[2].into(),
                num(&p, 3, line),
                num(&p, 4, line),
                num(&p, 5, line),
                p[8].into(),
            )),
            "CRITICAL" => out.criticals.push(line.clone()),
            "CALLBACKS" | "PENDING" | "DROPPED" | "CRITICALS" | "INTERCEPTED" | "PROBLEMS" => {
                out.counters.insert(
                    p[0].into(),
                    p[1..].iter().map(|v| v.parse().unwrap()).collect(),
                );
            }
            other => panic!("unexpected tool line {other:?}: {line}"),
        }
    }
    out
}

fn results(w: &[String]) -> Vec<&String> {
    w.iter()
        .filter(|l| l.starts_with("RESULT") || l.starts_with("DEVICE"))
        .collect()
}

fn expected(w: &[String], prefix: &str) -> usize {
    w.iter().filter(|l| l.starts_with(prefix)).count()
}

/// The runtime record and the driver records of correlation ID `corr`.
fn chain(tr: &Traced, corr: u32) -> (&Api, Vec<&Api>) {
    let runtime: Vec<&Api> = tr
        .apis
        .iter()
        .filter(|a| a.corr == corr && a.group == 3)
        .collect();
    assert_eq!(
        runtime.len(),
        1,
        "runtime records with correlation ID {corr}: {runtime:?}"
    );
    let driver = tr
        .apis
        .iter()
        .filter(|a| a.corr == corr && a.group == 2)
        .collect();
    (runtime[0], driver)
}

#[test]
fn sycl_program_under_libpti() {
    let ur = api_ids("pti_runtime_sycl_api_ids.h");
    let cl = api_ids("pti_driver_opencl_api_ids.h");
    let plain = run(false, &[]);
    let traced = run(true, &[]);
    assert_eq!(
        results(&plain.w),
        results(&traced.w),
        "the program's results changed"
    );
    let tr = parse(&traced.t);

    for (counter, want) in [
        ("PENDING", 0),
        ("DROPPED", 0),
        ("CRITICALS", 0),
        ("PROBLEMS", 0),
        ("INTERCEPTED", ur.len() as u64),
    ] {
        assert_eq!(
            tr.counters.get(counter).map(|v| v[0]),
            Some(want),
            "{counter}; critical events: {:?}",
            tr.criticals
        );
    }
    let callbacks = &tr.counters["CALLBACKS"];
    assert!(
        callbacks[0] > 0 && callbacks[0] == callbacks[1],
        "ENTER/EXIT: {callbacks:?}"
    );

    // Runtime records for the Unified Runtime calls the program makes.
    let runtime_ids: BTreeSet<u32> = tr
        .apis
        .iter()
        .filter(|a| a.group == 3)
        .map(|a| a.id)
        .collect();
    for name in [
        "urQueueCreate",
        "urUSMDeviceAlloc",
        "urUSMSharedAlloc",
        "urUSMHostAlloc",
        "urEnqueueUSMMemcpy",
        "urEnqueueUSMFill",
        "urUSMFree",
    ] {
        assert!(
            runtime_ids.contains(&ur[name]),
            "no runtime record for {name}"
        );
    }
    let launches = [
        ur["urEnqueueKernelLaunch"],
        ur["urEnqueueKernelLaunchWithArgsExp"],
    ];

    // Every kernel: runtime launch -> clEnqueueNDRangeKernel -> kernel record, one correlation ID,
    // the driver call inside the runtime call, the kernel after both began.
    let mut names: Vec<&str> = tr.kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["scale", "vadd"], "kernel records");
    assert_eq!(expected(&traced.w, "EXPECT KERNEL"), 2);
    for k in &tr.kernels {
        let (runtime, driver) = chain(&tr, k.corr);
        assert!(
            launches.contains(&runtime.id),
            "{k:?}: its runtime call is {runtime:?}"
        );
        let enqueue = driver
            .iter()
            .find(|d| d.id == cl["clEnqueueNDRangeKernel"])
            .unwrap_or_else(|| panic!("{k:?}: no clEnqueueNDRangeKernel record with its ID"));
        assert!(
            runtime.start <= enqueue.start
                && enqueue.end <= runtime.end
                && enqueue.tid == runtime.tid,
            "{k:?}: driver call {enqueue:?} not inside runtime call {runtime:?}"
        );
        assert!(
            k.append >= enqueue.start && k.start >= enqueue.start,
            "{k:?} before {enqueue:?}"
        );
        // SYCL metadata from the sycl stream.
        assert!(
            k.node != 0 && k.invocation != 0 && k.queue != NO_QUEUE,
            "{k:?}: SYCL IDs"
        );
        assert!(
            0 < k.task_begin && k.task_begin <= k.enqueue_begin && k.enqueue_begin <= k.append,
            "{k:?}: task begin, enqueue begin, append out of order"
        );
        assert!(
            k.enqueue_begin >= runtime.start,
            "{k:?}: enqueue began before its runtime call {runtime:?}"
        );
        assert_ne!(
            k.source_file, "-",
            "{k:?}: no source file from the sycl stream"
        );
    }
    let (vadd, scale) = {
        let find = |n: &str| tr.kernels.iter().find(|k| k.name == n).unwrap();
        (find("vadd"), find("scale"))
    };
    assert_ne!(
        vadd.queue, scale.queue,
        "the two queues have one SYCL queue ID"
    );
    assert_ne!(vadd.node, scale.node);

    // Every copy and fill: runtime USM call -> OpenCL USM call -> record, on the first queue.
    assert_eq!(
        tr.memory_ops
            .iter()
            .filter(|m| m.0.starts_with("COPY"))
            .count(),
        expected(&traced.w, "EXPECT COPY")
    );
    assert_eq!(
        tr.memory_ops.iter().filter(|m| m.0 == "FILL").count(),
        expected(&traced.w, "EXPECT FILL")
    );
    for (kind, bytes, corr, start, queue) in &tr.memory_ops {
        assert_eq!(*bytes, 16384, "{kind} {corr}");
        let (runtime, driver) = chain(&tr, *corr);
        let (ur_name, cl_name) = if kind == "FILL" {
            ("urEnqueueUSMFill", "clEnqueueMemFillINTEL")
        } else {
            ("urEnqueueUSMMemcpy", "clEnqueueMemcpyINTEL")
        };
        assert_eq!(
            runtime.id, ur[ur_name],
            "{kind} {corr}: runtime call {runtime:?}"
        );
        let call = driver
            .iter()
            .find(|d| d.id == cl[cl_name])
            .unwrap_or_else(|| panic!("{kind} {corr}: no {cl_name} record with its ID"));
        assert!(runtime.start <= call.start && call.end <= runtime.end && *start >= call.start);
        assert_eq!(*queue, vadd.queue, "{kind} {corr}: SYCL queue");
    }

    // The external ID pushed around the first kernel names its correlation ID.
    assert!(
        tr.externals.contains(&(vadd.corr, EXTERNAL_ID)),
        "no external-correlation record of {EXTERNAL_ID} for vadd's ID {}: {:?}",
        vadd.corr,
        tr.externals
    );
    assert!(
        !tr.externals.iter().any(|e| e.0 == scale.corr),
        "external ID after the pop"
    );

    // Memory: the three allocations and their releases, with kind, size and the runtime call.
    for kind in ["DEVICE", "SHARED", "HOST"] {
        let alloc = tr
            .allocations
            .iter()
            .find(|a| a.0 == "ALLOC" && a.1 == kind && a.2 == 16384)
            .unwrap_or_else(|| panic!("no {kind} allocation record: {:?}", tr.allocations));
        let release = tr
            .allocations
            .iter()
            .find(|a| a.0 == "RELEASE" && a.3 == alloc.3)
            .unwrap_or_else(|| panic!("no release of {alloc:?}"));
        assert_eq!(
            (release.1.as_str(), release.2),
            (kind, 16384),
            "{release:?}"
        );
        let (runtime, _) = chain(&tr, alloc.4);
        let function = match kind {
            "DEVICE" => "urUSMDeviceAlloc",
            "SHARED" => "urUSMSharedAlloc",
            _ => "urUSMHostAlloc",
        };
        assert_eq!(runtime.id, ur[function], "{alloc:?}");
        assert_eq!(chain(&tr, release.4).0.id, ur["urUSMFree"], "{release:?}");
    }

    let chain_of = |corr: u32| {
        let (runtime, driver) = chain(&tr, corr);
        (
            runtime.clone(),
            driver.into_iter().cloned().collect::<Vec<_>>(),
        )
    };
    let (rt, drv) = chain_of(vadd.corr);
    println!(
        "chain: runtime record {} (ID {}) {}..{} ns -> {} driver records, clEnqueueNDRangeKernel \
         {:?} -> kernel {} on SYCL queue {} (node {}, invocation {}), device {}..{}",
        ur.iter().find(|(_, v)| **v == rt.id).unwrap().0,
        rt.corr,
        rt.start,
        rt.end,
        drv.len(),
        drv.iter()
            .find(|d| d.id == cl["clEnqueueNDRangeKernel"])
            .unwrap(),
        vadd.name,
        vadd.queue,
        vadd.node,
        vadd.invocation,
        vadd.start,
        vadd.end
    );
    println!(
        "{} runtime records, {} driver records, {} kernels, {} copies and fills, {} memory \
         records; results unchanged",
        tr.apis.iter().filter(|a| a.group == 3).count(),
        tr.apis.iter().filter(|a| a.group == 2).count(),
        tr.kernels.len(),
        tr.memory_ops.len(),
        tr.allocations.len()
    );
}

/// Another XPTI subscriber configured: libpti leaves it alone, the tool hears why it gets no
/// SYCL data, and the program runs unchanged (its OpenCL calls are still traced).
#[test]
fn another_xpti_subscriber_is_left_alone_and_reported() {
    let (_, other) = libraries();
    let plain = run(false, &[]);
    let traced = run(
        true,
        &[
            ("XPTI_SUBSCRIBERS", other.to_str().unwrap()),
            ("XPTI_TRACE_ENABLE", "1"),
            ("XPTI_FRAMEWORK_DISPATCHER", "libxptifw.so.1"),
        ],
    );
    assert_eq!(results(&plain.w), results(&traced.w));
    let tr = parse(&traced.t);
    assert!(
        tr.criticals
            .iter()
            .any(|c| c.contains("XPTI_SUBSCRIBERS names another subscriber")),
        "{:?}",
        tr.criticals
    );
    assert!(
        !tr.apis.iter().any(|a| a.group == 3),
        "runtime records without the subscription"
    );
    assert!(
        tr.apis.iter().any(|a| a.group == 2),
        "OpenCL is traced all the same"
    );
    assert_eq!(tr.counters["INTERCEPTED"][0], 0);
    assert!(Path::new(other).exists());
}
