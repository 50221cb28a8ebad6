//! The timelines, per runtime: the JSON trace-event and Perfetto files of the OpenCL program on
//! PoCL, the SYCL program on Intel's CPU runtime and over the simulated Level Zero GPU; queue
//! tracks, flows from calls to device operations, kernel filters, ITT annotations as tracks.

use super::*;

#[test]
fn opencl_program_under_pti_trace() {
    let dir = scratch("opencl");
    let plain = run(Command::new(opencl_program()).env("PTI_TEST_PLATFORM", "Portable"));
    let out = run(Command::new(pti_trace())
        .args(["-o"])
        .arg(dir.join("trace.%p.json"))
        .arg("--")
        .arg(opencl_program())
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS"));
    assert_eq!(program_lines(&plain.stdout), program_lines(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    assert!(!stderr.contains("critical event"), "{stderr}");
    assert!(!stderr.contains("end before"), "{stderr}");
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!((files.len(), sums.len()), (1, 1), "{stderr}");
    let c = check_timeline(&files[0], &sums[0]);
    assert!(
        c.api_events > 100 && c.device_events > 20 && c.queues >= 4,
        "{} {} {}",
        c.api_events,
        c.device_events,
        c.queues
    );
    println!(
        "OpenCL: {} API slices, {} device slices on {} queue tracks, each with its flow",
        c.api_events, c.device_events, c.queues
    );
}

#[test]
fn sycl_program_under_pti_trace() {
    check_sycl_program("sycl", "trace.%p.json", check_timeline);
}

#[test]
fn sycl_program_under_pti_trace_as_a_perfetto_trace() {
    check_sycl_program("sycl-perfetto", "trace.%p.pftrace", check_perfetto);
}

/// Runs the SYCL program under pti-trace writing `output` (its extension chooses the format) and
/// checks each timeline with `check`, and the summaries.
fn check_sycl_program(name: &str, output: &str, check: fn(&Path, &Summary) -> Checked) {
    let venv = pti_tests::sycl_venv();
    let dir = scratch(name);
    let out = run(Command::new(pti_trace())
        .arg("-o")
        .arg(dir.join(output))
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(root().join("tests/python/sycl_workload.py"))
        .envs(pti_tests::sycl_python_env())
        .env_remove("XPTI_SUBSCRIBERS")
        .env_remove("OPENCL_LAYERS"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("W RESULT 8386560.0"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    assert!(!stderr.contains("critical event"), "{stderr}");
    assert!(!stderr.contains("end before"), "{stderr}");
    // The Python process is the one with device work (processes it starts are traced too).
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!(files.len(), sums.len(), "{stderr}");
    let mut device = 0;
    for (file, sum) in files.iter().zip(&sums) {
        let c = check(file, sum);
        device += c.device_events;
    }
    assert_eq!(device, 6, "two kernels, three copies, a fill");
    let python = sums
        .iter()
        .find(|s| s.contains_key("device"))
        .expect("a summary with device work");
    assert!(
        python["api"]
            .keys()
            .any(|k| k.starts_with("urEnqueueKernelLaunch") && k.ends_with("[SYCL runtime]")),
        "{:?}",
        python["api"]
    );
    assert_eq!(python["device"]["vadd"], 1);
    assert_eq!(python["device"]["scale"], 1);
}

/// The SYCL program on the simulated Level Zero GPU through each Unified Runtime adapter: the
/// whole chain drawn, a flow from each Unified Runtime call to its device operations, and the
/// Level Zero calls inside each Unified Runtime call under it with its correlation ID.
#[test]
fn sycl_over_level_zero_under_pti_trace() {
    let venv = root().join(".venv");
    let lib = venv.join("lib");
    for (adapter, format) in [
        (Adapter::V1, "json"),
        (Adapter::V2, "json"),
        (Adapter::V2, "pftrace"),
    ] {
        let dir = scratch(&format!("sycl-ze-{adapter:?}-{format}"));
        let mut cmd = Command::new(pti_trace());
        cmd.arg("-o")
            .arg(dir.join(format!("trace.%p.{format}")))
            .arg("--")
            .arg(venv.join("bin/python"))
            .arg(root().join("tests/python/sycl_workload.py"))
            .env("LD_LIBRARY_PATH", &lib)
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("OPENCL_LAYERS");
        let out = run(sycl_over_level_zero(&mut cmd, adapter));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("W RESULT 8386560.0"), "{stdout}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("records dropped: 0"), "{stderr}");
        assert!(!stderr.contains("critical event"), "{stderr}");
        let files = timelines(&stderr);
        let sums = summaries(&stderr);
        assert_eq!(files.len(), sums.len(), "{stderr}");
        let (mut device, mut nested, mut engines) = (0, 0, 0);
        for (file, sum) in files.iter().zip(&sums) {
            let checked = if format == "json" {
                nested += level_zero_under_sycl(file);
                check_timeline(file, sum)
            } else {
                check_perfetto(file, sum)
            };
            device += checked.device_events;
            engines += checked.engines;
        }
        assert_eq!(device, 6, "two kernels, three copies, a fill");
        assert!(engines >= 1, "no queue is placed on its Level Zero engine");
        if format == "json" {
            assert!(
                nested > 100,
                "{nested} Level Zero slices under their UR call"
            );
        }
        println!(
            "{adapter:?} adapter, {format}: 6 device slices each with its flow from its UR call, \
             queues on {engines} Level Zero engine(s), {nested} Level Zero slices under a UR \
             slice of the same correlation ID (JSON only)"
        );
    }
}

/// How many Level Zero slices of a timeline lie inside a Unified Runtime slice, checking that
/// each such one has that slice's correlation ID.
fn level_zero_under_sycl(path: &Path) -> usize {
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().expect("traceEvents");
    let of = |cat: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .collect()
    };
    let (sycl, level_zero) = (of("SYCL runtime"), of("Level Zero"));
    let num = |e: &Value, k: &str| e[k].as_f64().unwrap();
    let mut nested = 0;
    for z in &level_zero {
        let Some(outer) = sycl.iter().find(|s| {
            s["tid"] == z["tid"]
                && num(s, "ts") <= num(z, "ts")
                && num(z, "ts") + num(z, "dur") <= num(s, "ts") + num(s, "dur")
        }) else {
            continue;
        };
        assert_eq!(
            z["args"]["correlation_id"], outer["args"]["correlation_id"],
            "{z} inside {outer}"
        );
        nested += 1;
    }
    nested
}

#[test]
fn opencl_program_under_pti_trace_as_a_perfetto_trace() {
    let dir = scratch("perfetto");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), opencl_program()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!((files.len(), sums.len()), (1, 1), "{stderr}");
    let c = check_perfetto(&files[0], &sums[0]);
    assert!(
        c.api_events > 100 && c.device_events > 20 && c.queues >= 4,
        "{} {} {}",
        c.api_events,
        c.device_events,
        c.queues
    );
    // The same run as JSON, for the size per event.
    let json = run(on_pocl(
        Command::new(pti_trace())
            .arg("-o")
            .arg(dir.join("trace.%p.json")),
        opencl_program(),
    ));
    let json_stderr = String::from_utf8_lossy(&json.stderr);
    let json_file = &timelines(&json_stderr)[0];
    // Runs differ in their number of calls (the program polls its events): compared per slice.
    let json_slices: u64 = summaries(&json_stderr)[0]
        .values()
        .flat_map(|rows| rows.values())
        .sum();
    let (pf, js) = (
        std::fs::metadata(&files[0]).unwrap().len() / (c.api_events + c.device_events) as u64,
        std::fs::metadata(json_file).unwrap().len() / json_slices,
    );
    println!(
        "Perfetto: {} API slices, {} device slices on {} queues; {pf} bytes per slice, against \
         {js} in JSON",
        c.api_events, c.device_events, c.queues
    );
    assert!(pf < js, "Perfetto takes {pf} bytes per slice, JSON {js}");
}

#[test]
fn a_queue_that_ran_only_markers_sits_on_its_device() {
    let program = compile_c_with("cl_markers", &["tests/c/cl_markers.c"], &["-lOpenCL"]);
    let dir = scratch("markers");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), &program));
    assert!(String::from_utf8_lossy(&out.stdout).contains("W DONE"));
    let file = traces_in(&dir).pop().expect("a trace");
    let stderr = String::from_utf8_lossy(&out.stderr);
    check_perfetto(&file, &summaries(&stderr)[0]);
    // Track UUID -> (name, parent); the device slices' tracks by category.
    let (packets, cut) = whole_packets(&std::fs::read(&file).unwrap());
    assert!(!cut);
    let mut tracks: HashMap<u64, (String, u64)> = HashMap::new();
    let mut by_category: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for p in &packets {
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            tracks.insert(d.uuid(), (d.name().to_string(), d.parent_uuid()));
        }
        if p.has_track_event() && !p.track_event().categories.is_empty() {
            let e = p.track_event();
            by_category
                .entry(e.categories[0].clone())
                .or_default()
                .push(e.track_uuid());
        }
    }
    let (markers, barriers, copies) = (
        &by_category["marker"],
        &by_category["barrier"],
        &by_category["memcpy"],
    );
    assert_eq!((markers.len(), barriers.len(), copies.len()), (2, 1, 2));
    // The markers and the barrier share their queue's track; the copies have another, and both
    // queues sit under the one device.
    let sync_queue = markers[0];
    assert!(markers.iter().chain(barriers).all(|t| *t == sync_queue));
    assert!(copies.iter().all(|t| *t == copies[0] && *t != sync_queue));
    let device = tracks[&sync_queue].1;
    assert_eq!(tracks[&copies[0]].1, device, "both queues on one device");
    let device_name = &tracks[&device].0;
    assert!(device_name.starts_with("device 0"), "{device_name:?}");
    println!(
        "{:?} (markers, barrier) and {:?} (copies) both under {device_name:?}",
        tracks[&sync_queue].0, tracks[&copies[0]].0
    );
}

#[test]
fn kernel_filters_keep_only_the_named_kernels() {
    for (options, kept, left_out) in [
        (["--kernels", "*_b"], "phase_b", "phase_a"),
        (["--exclude-kernels", "phase_b"], "phase_a", "phase_b"),
    ] {
        let dir = scratch("kernel-filters");
        let mut cmd = pti_trace_into(&dir, &options);
        let out = run(on_pocl(&mut cmd, phases_program()).args(["4", "0"]));
        let said = String::from_utf8_lossy(&out.stderr);
        let summary = summaries(&said);
        let device = &summary[0]["device"];
        assert_eq!(device.get(kept), Some(&4), "{options:?}:\n{said}");
        assert_eq!(device.get(left_out), None, "{options:?}:\n{said}");
        assert!(
            said.contains("kernels left out by the kernel filters: 4"),
            "{options:?}: the summary counts what the filters left out:\n{said}"
        );
        assert_eq!(kernel_slices(&traces_in(&dir)[0]), 4);
    }
}

#[test]
fn ittapi_annotations_are_tracks_of_the_perfetto_timeline() {
    use perfetto_protos::track_event::track_event::Type;
    let python = root().join(".venv/bin/python");
    let program = root().join("pti-python/tests/programs/itt_annotated.py");
    assert!(
        python.exists(),
        "{} is missing: `cargo xtask setup` makes .venv with ittapi",
        python.display()
    );
    let dir = scratch("itt");
    let out = run(pti_trace_into(&dir, &[])
        .arg("--")
        .arg(&python)
        .arg(&program)
        .env_remove("INTEL_LIBITTNOTIFY64"));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("Annotations (ITT tasks, frames, events)"),
        "{said}"
    );
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1, "one process with annotations:\n{said}");
    let (packets, cut_short) = whole_packets(&std::fs::read(&trace[0]).unwrap());
    assert!(!cut_short, "the trace ends with a whole packet");
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut tracks: HashMap<u64, String> = HashMap::new();
    let mut slices: Vec<(String, String)> = Vec::new(); // (track name, slice name)
    for p in &packets {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(n.iid(), n.name().to_string());
            }
        }
        if p.has_track_descriptor() {
            let d = p.track_descriptor();
            tracks.insert(d.uuid(), d.name().to_string());
        }
        if p.has_track_event() && p.track_event().type_() == Type::TYPE_SLICE_BEGIN {
            let e = p.track_event();
            slices.push((
                tracks.get(&e.track_uuid()).cloned().unwrap_or_default(),
                names[&e.name_iid()].clone(),
            ));
        }
    }
    let on = |track: &str| -> Vec<String> {
        let mut v: Vec<String> = slices
            .iter()
            .filter(|(t, _)| t.starts_with(track))
            .filter(|(t, _)| track != "ITT " || !t.starts_with("ITT overlapped"))
            .map(|(_, n)| n.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        on("ITT "),
        [
            "ITT event: mark",
            "app: inner",
            "app: inner",
            "app: outer",
            "frames",
            "oneCCL::API: allgatherv",
            "oneCCL::API: allreduce",
            "oneCCL::API: allreduce",
            "oneCCL::API: bcast",
        ]
    );
    assert_eq!(
        on("ITT overlapped tasks"),
        ["app: async", "app: first", "app: second"]
    );
    assert!(
        tracks.values().any(|t| t.starts_with("ITT app (thread ")),
        "a track per thread and domain: {tracks:?}"
    );
    assert_eq!(
        on("communication (oneCCL"),
        [
            "allgatherv (4096 B sent, 0 B received)",
            "allreduce (0 B sent, 0 B received)",
            "allreduce (1048576 B sent, 0 B received)",
            "bcast (64 B sent, 0 B received)",
        ]
    );
    // The SQLite export puts them in its annotation table.
    let rows: Vec<(String, i64)> = exported(
        &trace[0],
        &dir.join("itt.db"),
        "SELECT kind, COUNT(*) FROM annotation GROUP BY kind ORDER BY kind",
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    assert_eq!(
        rows,
        [
            ("annotation".to_string(), 13),
            ("communication".to_string(), 4)
        ]
    );
}
