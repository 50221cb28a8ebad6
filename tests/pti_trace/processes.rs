//! Processes: a timeline per child process, relative paths across `chdir`, a killed run and
//! exits without handlers keeping what was flushed, four MPI ranks merged into one timeline.

use super::*;

#[test]
fn child_processes_get_a_timeline_each() {
    let dir = scratch("children");
    let program = opencl_program().display().to_string();
    let out = run(Command::new(pti_trace())
        .arg("-o")
        .arg(dir.join("trace.%p.json"))
        .args(["--", "sh", "-c"])
        .arg(format!("{program} >/dev/null && {program} >/dev/null"))
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    let sums = summaries(&stderr);
    assert_eq!(files.len(), sums.len());
    let distinct: HashSet<&PathBuf> = files.iter().collect();
    assert_eq!(distinct.len(), files.len(), "one file per process");
    let with_device: Vec<_> = files
        .iter()
        .zip(&sums)
        .map(|(f, s)| check_timeline(f, s))
        .filter(|c| c.device_events > 0)
        .collect();
    assert_eq!(
        with_device.len(),
        2,
        "both runs of the program traced: {stderr}"
    );
}

#[test]
fn relative_paths_hold_when_the_program_changes_directory() {
    let dir = scratch("relative");
    let program = opencl_program().display().to_string();
    let out = run(Command::new(pti_trace())
        .current_dir(&dir)
        .args(["-o", "rel.%p.json", "--", "sh", "-c"])
        .arg(format!("cd / && exec {program} >/dev/null"))
        .env("PTI_TEST_PLATFORM", "Portable"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let files = timelines(&stderr);
    assert!(!files.is_empty(), "{stderr}");
    let dir = dir.canonicalize().unwrap();
    for f in &files {
        assert_eq!(f.parent(), Some(dir.as_path()), "{stderr}");
        assert!(f.exists(), "{}", f.display());
    }
}

#[test]
fn a_killed_run_leaves_a_trace_up_to_its_last_flush() {
    use std::io::BufRead as _;
    let dir = scratch("killed");
    let mut child = on_pocl(
        &mut pti_trace_into(&dir, &["--flush-interval", "100"]),
        looping_program(),
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut launched = 0u64;
    while launched < 2000 {
        let line = lines.next().expect("the program stopped").unwrap();
        if let Some(n) = line.strip_prefix("W ITER ") {
            launched = n.parse().unwrap();
        }
    }
    // Wait until the trace on disk holds 1,000 kernels (the periodic flush put them there),
    // then kill: they must all still be there, and the file must decode.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let before = loop {
        let n = traces_in(&dir).first().map_or(0, |f| kernel_slices(f));
        if n >= 1000 {
            break n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {n} kernels flushed after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The program is pti-trace's child (other tests may run the same program at once).
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
        .expect("pti-trace's children");
    let program_pid: i32 = children
        .split_whitespace()
        .next()
        .expect("pti-trace has no child")
        .parse()
        .unwrap();
    // SAFETY: sending a signal to a process ID.
    assert_eq!(unsafe { libc::kill(program_pid, libc::SIGKILL) }, 0);
    let out = child.wait_with_output().unwrap();
    // pti-trace passes the program's death on.
    assert!(
        out.status.signal() == Some(9) || out.status.code() == Some(128 + 9),
        "{:?}",
        out.status
    );
    let file = traces_in(&dir).pop().expect("no trace file");
    let bytes = std::fs::read(&file).unwrap();
    let (packets, cut) = whole_packets(&bytes);
    let kernels = kernel_slices(&file);
    println!(
        "killed after {launched}+ launches: {} bytes, {} whole packets{}, {kernels} kernel \
         slices ({before} on disk before the kill)",
        bytes.len(),
        packets.len(),
        if cut { ", the last one cut" } else { "" }
    );
    assert!(
        kernels >= before,
        "{kernels} kernels after the kill, {before} before"
    );
}

#[test]
fn abort_and_exit_without_handlers_keep_what_was_flushed() {
    for (how, expected) in [("abort", "signal 6"), ("_exit", "code 3")] {
        let dir = scratch(&format!("end-{how}"));
        let out = on_pocl(
            &mut pti_trace_into(&dir, &["--flush-interval", "100"]),
            looping_program(),
        )
        .args(["500", how])
        .output()
        .unwrap();
        let ended = match (out.status.code(), out.status.signal()) {
            (Some(code), _) if code > 128 => format!("signal {}", code - 128),
            (Some(code), _) => format!("code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            _ => "?".into(),
        };
        assert_eq!(ended, expected, "{how}");
        // No exit handler ran (no summary), yet the periodic flush put every launch on disk.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("summary of process"), "{how}: {stderr}");
        let file = traces_in(&dir)
            .pop()
            .unwrap_or_else(|| panic!("{how}: no trace"));
        let kernels = kernel_slices(&file);
        assert_eq!(kernels, 500, "{how}: the kernels on disk");
    }
}

#[test]
fn four_mpi_ranks_on_pocl_merge_into_one_timeline() {
    let dir = scratch("mpi");
    let launches = 3;
    let out = traced_mpi_ranks(&dir, launches);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("MPI TOTAL 30 of 4 ranks"),
        "{}\n{said}",
        String::from_utf8_lossy(&out.stdout)
    );
    // One trace per rank, named by its rank.
    let mut traces = traces_in(&dir);
    traces.sort();
    let names: Vec<String> = traces
        .iter()
        .map(|t| t.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(traces.len(), 4, "{names:?}\n{said}");
    for (rank, name) in names.iter().enumerate() {
        assert!(name.starts_with(&format!("trace.rank{rank}.")), "{names:?}");
        assert_eq!(
            kernel_slices(&traces[rank]),
            (rank + 1) * launches,
            "rank {rank}'s own trace"
        );
    }

    let merged = dir.join("merged.pftrace");
    let summary = merge_summary(&merged, &traces);
    // The per-rank rows: rank, pid, host, API calls, kernels, ...
    for rank in 0..4usize {
        let row = summary
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&rank.to_string()))
            .unwrap_or_else(|| panic!("no row of rank {rank}:\n{summary}"));
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            fields[4],
            ((rank + 1) * launches).to_string(),
            "rank {rank}'s kernels:\n{summary}"
        );
    }
    let all = summary.lines().find(|l| l.starts_with("all")).unwrap();
    assert_eq!(all.split_whitespace().nth(2), Some("30"), "{summary}");
    assert!(
        summary.contains("(0 shifted from other hosts' clocks)"),
        "one host, one clock:\n{summary}"
    );
    let bump = summary
        .lines()
        .find(|l| l.trim_start().starts_with("bump "))
        .unwrap_or_else(|| panic!("no kernel row:\n{summary}"));
    assert_eq!(
        bump.split_whitespace().take(3).collect::<Vec<_>>(),
        ["bump", "4", "3/12"],
        "{summary}"
    );

    // The merged trace: four processes named by rank, every kernel, one sequence per input,
    // and each input's tracks distinct.
    let (packets, cut_short) = whole_packets(&std::fs::read(&merged).unwrap());
    assert!(!cut_short);
    let processes: Vec<String> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .filter_map(|p| {
            p.track_descriptor()
                .process
                .as_ref()
                .map(|d| d.process_name().to_string())
        })
        .collect();
    assert_eq!(processes.len(), 4, "{processes:?}");
    for rank in 0..4 {
        assert!(
            processes
                .iter()
                .any(|n| n.starts_with(&format!("rank {rank}: "))),
            "{processes:?}"
        );
    }
    assert_eq!(kernel_slices(&merged), 30);
    let sequences: HashSet<u32> = packets
        .iter()
        .map(|p| p.trusted_packet_sequence_id())
        .collect();
    assert_eq!(sequences.len(), 4);
    let uuids: Vec<u64> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .map(|p| p.track_descriptor().uuid())
        .collect();
    assert_eq!(
        uuids.iter().collect::<HashSet<_>>().len(),
        uuids.len(),
        "track UUIDs collide"
    );
    // The merged file exports like any trace: each process's kernels under its own ID.
    let per_process: Vec<i64> = exported(
        &merged,
        &dir.join("merged.db"),
        "SELECT COUNT(*) FROM device_op d JOIN process p USING (pid) \
         WHERE d.kind = 'kernel' AND d.name = 'bump' GROUP BY pid ORDER BY p.name",
        |r| r.get(0),
    );
    assert_eq!(
        per_process,
        [3, 6, 9, 12],
        "kernels per rank, from the merged file"
    );

    // The same trace twice: every process, thread, track and flow ID collides, and the merge
    // keeps them apart.
    let twice = dir.join("twice.pftrace");
    run(Command::new(pti_trace())
        .arg("merge")
        .arg("-o")
        .arg(&twice)
        .args([&traces[3], &traces[3]]));
    let (packets, _) = whole_packets(&std::fs::read(&twice).unwrap());
    let descriptors: Vec<_> = packets
        .iter()
        .filter(|p| p.has_track_descriptor())
        .map(|p| p.track_descriptor())
        .collect();
    let pids: HashSet<i32> = descriptors
        .iter()
        .filter_map(|d| d.process.as_ref().map(|p| p.pid()))
        .collect();
    assert_eq!(pids.len(), 2, "the second copy's process moved");
    let tids: Vec<i32> = descriptors
        .iter()
        .filter_map(|d| d.thread.as_ref().map(|t| t.tid()))
        .collect();
    assert_eq!(
        tids.iter().collect::<HashSet<_>>().len(),
        tids.len(),
        "thread IDs collide: {tids:?}"
    );
    for d in &descriptors {
        if let Some(t) = d.thread.as_ref().filter(|t| t.tid() == t.pid()) {
            assert!(
                pids.contains(&t.pid()),
                "a main thread keeps its process's ID"
            );
        }
    }
    let uuids: Vec<u64> = descriptors.iter().map(|d| d.uuid()).collect();
    assert_eq!(uuids.iter().collect::<HashSet<_>>().len(), uuids.len());
    let flows: Vec<u64> = packets
        .iter()
        .filter(|p| p.has_track_event())
        .flat_map(|p| p.track_event().flow_ids.clone())
        .collect();
    assert_eq!(flows.iter().collect::<HashSet<_>>().len(), flows.len());
    assert_eq!(kernel_slices(&twice), 24);
    let counts: Vec<i64> = exported(
        &twice,
        &dir.join("twice.db"),
        "SELECT COUNT(*) FROM device_op WHERE kind = 'kernel' GROUP BY pid",
        |r| r.get(0),
    );
    assert_eq!(counts, [12, 12]);
}
