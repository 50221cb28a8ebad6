//! The summary and the exports: options and exit codes, reports kept out of the program's
//! output, the CSV rows, the SQLite export, what is counted but not reported, `pti-trace check`.

use super::*;

#[test]
fn summary_only_options_and_exit_codes() {
    let dir = scratch("options");
    let out = run(Command::new(pti_trace())
        .current_dir(&dir)
        .args([
            "--summary-only",
            "--views",
            "api",
            "--api",
            "clEnqueue*",
            "--",
        ])
        .arg(opencl_program())
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(timelines(&stderr).is_empty(), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "a file was written"
    );
    let sums = summaries(&stderr);
    let api = &sums[0]["api"];
    assert!(
        !api.is_empty() && api.keys().all(|k| k.starts_with("clEnqueue")),
        "{api:?}"
    );
    assert!(
        !sums[0].contains_key("device"),
        "device work recorded without the device view"
    );

    // Programs that run are run where they cannot leave files among the sources.
    let status = |args: &[&str]| {
        let out = Command::new(pti_trace())
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), out.status.signal())
    };
    assert_eq!(status(&["-s", "--", "sh", "-c", "exit 3"]), (Some(3), None));
    assert_eq!(
        status(&["--backends", "cuda", "--", "true"]),
        (Some(2), None)
    );
    assert_eq!(status(&["--no-such-option", "--", "true"]), (Some(2), None));
    assert_eq!(status(&[]), (Some(2), None));
    assert_eq!(status(&["-s", "--", "/no/such/program"]), (Some(127), None));
    assert_eq!(status(&["--help"]), (Some(0), None));
    // A program killed by a signal: pti-trace dies of the same signal.
    assert_eq!(
        status(&["-s", "--", "sh", "-c", "kill -TERM $$"]),
        (None, Some(15)) // SIGTERM
    );
}

#[test]
fn reports_stay_out_of_the_programs_output_and_idle_processes_leave_nothing() {
    let dir = scratch("quiet");
    let program_err = dir.join("program.err");
    // The program sends its own stderr to a file, starts two processes that do no GPU work, and
    // runs the OpenCL program twice: once as is, once with pti-trace's reporting descriptor
    // closed (as Python's `subprocess` does), whose report goes through the reports directory
    // (bash: dash's redirections take single-digit descriptors only).
    let program = opencl_program().display();
    let script = format!(
        "ls / >/dev/null; /bin/true; {program} 2>{err}; fd=${{PTI_TRACE_REPORT_FD%%:*}}; \
         eval \"exec $fd>&-\"; exec {program} 2>>{err}",
        err = program_err.display()
    );
    let child = pti_trace_into(&dir, &[])
        .args(["--", "bash", "-c", &script])
        .current_dir(&dir)
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let own = std::fs::read_to_string(&program_err).unwrap();
    assert!(
        !own.contains("pti-trace"),
        "the program's stderr got: {own}"
    );
    assert_eq!(summaries(&stderr).len(), 2, "{stderr}");
    assert_eq!(timelines(&stderr).len(), 2, "{stderr}");
    assert!(
        stderr.contains("2 processes recorded no GPU-runtime call or device work"),
        "{stderr}"
    );
    assert_eq!(traces_in(&dir).len(), 2, "the OpenCL program's timelines");
    // Nothing else was left: no report file beside the timelines (the working directory), and
    // no reports directory.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".pftrace") && n != "program.err")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let reports = std::env::temp_dir().join(format!("pti-trace.{pid}.reports"));
    assert!(!reports.exists(), "{} left behind", reports.display());
}

#[test]
fn the_csv_summary_holds_the_printed_rows() {
    let dir = scratch("csv");
    let out = run(on_pocl(
        Command::new(pti_trace())
            .args(["-s", "--csv"])
            .arg(dir.join("summary.%p.csv")),
        opencl_program(),
    ));
    let printed = &summaries(&String::from_utf8_lossy(&out.stderr))[0];
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .expect("no CSV")
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("section,name,group,count,total_ns,avg_ns,min_ns,max_ns")
    );
    let mut rows: Summary = HashMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let (section, name) = match f[0] {
            "api" => ("api", format!("{} [{}]", f[1], f[2])),
            _ => ("device", f[1].to_string()),
        };
        let (min, max): (u64, u64) = (f[6].parse().unwrap(), f[7].parse().unwrap());
        assert!(min <= max, "{line}");
        rows.entry(section)
            .or_default()
            .insert(name, f[3].parse().unwrap());
    }
    assert_eq!(&rows, printed);
}

#[test]
fn the_sqlite_export_holds_every_record_of_the_trace() {
    let dir = scratch("sqlite");
    let out = run(on_pocl(&mut pti_trace_into(&dir, &[]), opencl_program()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = &summaries(&stderr)[0];
    let db = dir.join("trace.db");
    run(Command::new(pti_trace())
        .args(["export", "--sqlite"])
        .arg(&db)
        .arg(&timelines(&stderr)[0]));
    let db = rusqlite::Connection::open(&db).unwrap();
    let one = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    // The views count what the summary counts.
    let rows = |sql: &str| -> BTreeMap<String, u64> {
        let mut stmt = db.prepare(sql).unwrap();
        stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    assert_eq!(
        rows("SELECT name || ' [' || api_group || ']', count FROM api_summary"),
        summary["api"]
    );
    assert_eq!(
        rows("SELECT name, count FROM device_summary"),
        summary["device"]
    );
    // Every device operation joins the call that submitted it, which started before it was
    // submitted, and runs after its submission.
    let ops = one("SELECT COUNT(*) FROM device_op");
    let joined = one(
        "SELECT COUNT(*) FROM device_op d JOIN api_call a ON a.pid = d.pid AND \
         a.correlation_id = d.correlation_id WHERE a.start_ns <= d.submit_ns AND \
         d.submit_ns <= d.start_ns",
    );
    assert!(
        ops > 20 && joined == ops,
        "{joined} of {ops} device operations joined"
    );
    assert_eq!(one("SELECT COUNT(*) FROM device_op WHERE device = ''"), 0);
    assert_eq!(one("SELECT COUNT(*) FROM process"), 1);
}

#[test]
fn a_process_that_only_loads_the_sycl_runtime_is_counted_not_reported() {
    // `import dpctl` maps the SYCL runtime but starts nothing: no call was made, none was lost,
    // so no summary, no critical event and no file; one line counts it. Then a program that
    // does start the runtime gets its summary.
    let venv = pti_tests::sycl_venv();
    let dir = scratch("sycl-loaded");
    let mut outputs = Vec::new();
    for code in [
        "import dpctl",
        "import dpctl; print(len(dpctl.get_devices()) > 0)",
    ] {
        let out = run(pti_trace_into(&dir, &[])
            .args([
                "--".as_ref(),
                venv.join("bin/python").as_os_str(),
                "-c".as_ref(),
            ])
            .arg(code)
            .envs(pti_tests::sycl_python_env())
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("OPENCL_LAYERS"));
        outputs.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let (loaded, started) = (&outputs[0], &outputs[1]);
    assert!(
        loaded.contains("1 process recorded no GPU-runtime call") && !loaded.contains("critical"),
        "{loaded}"
    );
    assert!(summaries(loaded).is_empty(), "{loaded}");
    assert_eq!(summaries(started).len(), 1, "{started}");
    assert!(!started.contains("critical"), "{started}");
    assert_eq!(traces_in(&dir).len(), 1, "the second program's trace only");
}

/// Commands of no record kind are named in the summary with their count (from libpti's loss
/// records, which the collector enables), beside the critical event that announced them; the
/// other commands are on the timeline as usual. `tests/c/cl_migrate.c`: four migrations and a
/// write, on PoCL. (The collector flushes from an `atexit` handler, after the main thread's
/// locals are gone: the loss records must be written there too, which a first version did not.)
#[test]
fn commands_without_a_record_kind_are_counted_in_the_summary() {
    let program = compile_c_with("cl_migrate", &["tests/c/cl_migrate.c"], &["-lOpenCL"]);
    let out = run(on_pocl(
        Command::new(pti_trace()).arg("--summary-only"),
        &program,
    ));
    assert!(String::from_utf8_lossy(&out.stdout).contains("W DONE"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "commands with no record kind (counted, not on the timeline): 4 of clEnqueueMigrateMemObjects"
        ),
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches("PTI_ERROR_COMMANDS_NOT_RECORDED: clEnqueueMigrateMemObjects")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("records dropped: 0"), "{stderr}");
    let s = &summaries(&stderr)[0];
    assert_eq!(s["device"].get("copy M2D"), Some(&1), "{stderr}");
}

/// `pti-trace check` (issue 35): what would keep a run from GPU records, found before a run. Over
/// the simulated Level Zero driver it finds a driver and a device; with a variable that switches
/// tracing off it names it as a problem and exits with 1.
#[test]
fn check_says_what_keeps_records_away() {
    let sim = lib_dir().join("libze_sim.so");
    assert!(
        sim.exists(),
        "{} is missing: build it with `cargo build -p ze-sim`",
        sim.display()
    );
    let check = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(pti_trace());
        cmd.arg("check")
            .env("ZE_ENABLE_ALT_DRIVERS", &sim)
            .env_remove("PTI_LEVEL_ZERO")
            .env_remove("ZE_ENABLE_TRACING_LAYER")
            .env_remove("XPTI_SUBSCRIBERS")
            .env_remove("PTI_TRACE_VIEWS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run pti-trace check")
    };
    let fine = check(&[]);
    let text = String::from_utf8_lossy(&fine.stdout);
    assert!(fine.status.success(), "{text}");
    for want in [
        "libpti: ok: ",
        "OpenCL: ok: platform \"Portable Computing Language\"",
        "Level Zero: ok: 1 driver(s), 1 device(s)",
        "pti-trace check: nothing found that keeps records away",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    assert!(!text.contains("PROBLEM"), "{text}");
    let off = check(&[("PTI_LEVEL_ZERO", "0"), ("ZE_ENABLE_TRACING_LAYER", "0")]);
    let text = String::from_utf8_lossy(&off.stdout);
    assert_eq!(off.status.code(), Some(1), "{text}");
    assert!(
        text.contains("environment: PROBLEM: PTI_LEVEL_ZERO=0")
            && text.contains("environment: PROBLEM: ZE_ENABLE_TRACING_LAYER=0"),
        "{text}"
    );
}
