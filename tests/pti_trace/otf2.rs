//! The OTF2 export (`pti-trace export --otf2`): four MPI ranks' traces, and a trace of ittapi's
//! annotations and oneCCL-named communication, as archives read back with OTF2's own reader
//! (otf2-print), whose events nest on each location and count what `merge`'s summary counts; an
//! output that exists and inputs that are not traces refused, nothing written.

use super::*;

/// otf2-print on `anchor` with `options`: its stdout (it must succeed, warnings as errors).
fn otf2_print(anchor: &Path, options: &[&str]) -> String {
    let out = Command::new("otf2-print")
        .arg("-Werror")
        .args(options)
        .arg(anchor)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run otf2-print ({e}): `cargo xtask setup` installs it (Debian's \
                 otf2-tools)"
            )
        });
    assert!(
        out.status.success(),
        "otf2-print {options:?} {} failed ({}):\n{}",
        anchor.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("otf2-print writes UTF-8")
}

/// The quoted text after `key` in a line of otf2-print (`Name: "rank 0" <29>`).
fn quoted<'a>(line: &'a str, key: &str) -> &'a str {
    let rest = &line[line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len()..];
    let rest = rest.strip_prefix('"').unwrap();
    &rest[..rest.find("\" <").unwrap()]
}

/// The last `<N>` reference of a line.
fn last_ref(line: &str) -> u64 {
    let (_, tail) = line.rsplit_once('<').unwrap();
    tail.trim_end().trim_end_matches('>').parse().unwrap()
}

/// What the merge summary counts, as the archive's regions are described.
fn category(description: &str) -> &'static str {
    match description {
        d if d.ends_with(" call") => "API calls",
        "device kernel" => "kernels",
        d if d.starts_with("device ") => "other ops",
        "ITT annotation" => "annotations",
        "communication (oneCCL)" => "communication",
        other => panic!("a region described {other:?}"),
    }
}

/// An archive as otf2-print reads it.
struct Archive {
    /// Per location group's name, ENTER events per category.
    entered: BTreeMap<String, BTreeMap<&'static str, u64>>,
    /// Per location group's name, its locations' types.
    location_types: BTreeMap<String, Vec<String>>,
    /// The clock properties' line.
    clock: String,
    /// Events (ENTER and LEAVE) read.
    events: u64,
    /// The regions entered and left at one time (ITT markers), by name.
    instants: Vec<String>,
}

/// Reads the archive `anchor` with otf2-print: its global definitions, then its events, which
/// on each location must be in time order and nest (every LEAVE leaves the region entered last).
fn read_archive(anchor: &Path) -> Archive {
    let defs = otf2_print(anchor, &["-G"]);
    let mut groups: HashMap<u64, String> = HashMap::new();
    let mut group_of: HashMap<u64, u64> = HashMap::new();
    let mut regions: HashMap<u64, &'static str> = HashMap::new();
    let mut region_names: HashMap<u64, String> = HashMap::new();
    let mut location_types: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut clock = String::new();
    let id = |line: &str| -> u64 { line.split_whitespace().nth(1).unwrap().parse().unwrap() };
    for line in defs.lines() {
        match line.split_whitespace().next() {
            Some("CLOCK_PROPERTIES") => clock = line.to_string(),
            Some("LOCATION_GROUP") => {
                groups.insert(id(line), quoted(line, "Name: ").to_string());
            }
            Some("LOCATION") => {
                let group = last_ref(line);
                group_of.insert(id(line), group);
                let kind = line
                    .split(", Type: ")
                    .nth(1)
                    .and_then(|t| t.split(',').next())
                    .unwrap()
                    .to_string();
                location_types
                    .entry(groups[&group].clone())
                    .or_default()
                    .push(kind);
            }
            Some("REGION") => {
                regions.insert(id(line), category(quoted(line, "Descr.: ")));
                region_names.insert(id(line), quoted(line, "Name: ").to_string());
            }
            _ => {}
        }
    }
    let text = otf2_print(anchor, &[]);
    let mut entered: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
    // Per location: its last time and the regions entered and not yet left, with their times.
    let mut state: HashMap<u64, (u64, Vec<(u64, u64)>)> = HashMap::new();
    let mut events = 0;
    let mut instants = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let numeric = |i: usize| {
            fields
                .get(i)
                .is_some_and(|f| f.chars().all(|c| c.is_ascii_digit()))
        };
        // An event's line: its kind, location and time.
        if !(numeric(1) && numeric(2)) {
            continue;
        }
        let kind = fields[0];
        assert!(
            kind == "ENTER" || kind == "LEAVE",
            "an event this export does not write: {line}"
        );
        events += 1;
        let location: u64 = fields[1].parse().unwrap();
        let time: u64 = fields[2].parse().unwrap();
        let region = last_ref(line);
        let (last, open) = state.entry(location).or_default();
        assert!(
            time >= *last,
            "location {location}: time goes back at {line}"
        );
        *last = time;
        if kind == "ENTER" {
            open.push((region, time));
            let group = groups[&group_of[&location]].clone();
            *entered
                .entry(group)
                .or_default()
                .entry(regions[&region])
                .or_default() += 1;
        } else {
            let (entered, at) = open.pop().unwrap_or_else(|| {
                panic!("location {location}: a LEAVE with nothing entered: {line}")
            });
            assert_eq!(
                entered, region,
                "location {location}: a LEAVE of a region not entered last: {line}"
            );
            if at == time {
                instants.push(region_names[&region].clone());
            }
        }
    }
    for (location, (_, open)) in &state {
        assert!(open.is_empty(), "location {location} leaves {open:?} open");
    }
    Archive {
        entered,
        location_types,
        clock,
        events,
        instants,
    }
}

#[test]
fn four_mpi_ranks_export_to_one_otf2_archive_that_counts_as_merge_does() {
    let dir = scratch("otf2");
    let launches = 3;
    traced_mpi_ranks(&dir, launches);
    let mut traces = traces_in(&dir);
    traces.sort();
    assert_eq!(traces.len(), 4, "{traces:?}");
    let summary = merge_summary(&dir.join("merged.pftrace"), &traces);
    // rank pid host | API calls, kernels, kernel time, other ops, annotations, communication.
    let mut expected: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for rank in 0..4 {
        let row: Vec<&str> = summary
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&rank.to_string()))
            .unwrap_or_else(|| panic!("no row of rank {rank}:\n{summary}"))
            .split_whitespace()
            .collect();
        let counts = expected.entry(format!("rank {rank}")).or_default();
        for (column, name) in [
            (3, "API calls"),
            (4, "kernels"),
            (6, "other ops"),
            (7, "annotations"),
            (8, "communication"),
        ] {
            let n: u64 = row[column].parse().unwrap();
            if n > 0 {
                counts.insert(name, n);
            }
        }
        assert_eq!(counts["kernels"], (rank + 1) * launches as u64, "{summary}");
        assert!(counts["API calls"] > 0, "{summary}");
    }

    let archive = dir.join("run.otf2");
    let out = run(Command::new(pti_trace())
        .arg("export")
        .arg("--otf2")
        .arg(&archive)
        .args(&traces));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("4 location groups"), "{said}");
    let anchor = archive.join("traces.otf2");
    let read = read_archive(&anchor);
    assert_eq!(
        read.entered, expected,
        "ENTER events per rank and kind (left) against merge's summary (right):\n{summary}"
    );
    eprintln!("ENTER events per rank: {:?}", read.entered);
    let enters: u64 = read.entered.values().flat_map(|c| c.values()).sum();
    assert_eq!(read.events, 2 * enters, "an ENTER and a LEAVE per record");
    // A CPU thread with the API calls and a stream for the queue, per rank.
    for (group, types) in &read.location_types {
        assert!(
            types.iter().any(|t| t == "CPU_THREAD")
                && types.iter().any(|t| t == "ACCELERATOR_STREAM"),
            "{group}: {types:?}"
        );
    }
    assert!(
        read.clock.contains("Ticks per Seconds: 1000000000"),
        "{}",
        read.clock
    );
    // The archive is private to its owner.
    use std::os::unix::fs::PermissionsExt as _;
    for path in [archive.clone(), anchor.clone()] {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
    }

    // The same output again: refused (exit 2), the archive left as it was.
    let before = std::fs::read(&anchor).unwrap();
    let again = Command::new(pti_trace())
        .arg("export")
        .arg("--otf2")
        .arg(&archive)
        .args(&traces)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{said}");
    assert!(said.contains("exists"), "{said}");
    assert_eq!(std::fs::read(&anchor).unwrap(), before);
    // A symbolic link (to where nothing is yet) is not followed.
    let target = dir.join("elsewhere");
    let link = dir.join("link.otf2");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let linked = Command::new(pti_trace())
        .arg("export")
        .arg("--otf2")
        .arg(&link)
        .args(&traces)
        .output()
        .unwrap();
    assert_eq!(
        linked.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&linked.stderr)
    );
    assert!(!target.exists(), "the link was followed");
}

#[test]
fn otf2_export_refuses_inputs_that_are_not_traces_and_writes_nothing() {
    let dir = scratch("otf2-bad");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a trace\n").unwrap();
    let empty = dir.join("empty.pftrace");
    std::fs::write(&empty, "").unwrap();
    for (input, says) in [
        (&text, "not a Trace.packet field"),
        (&empty, "no process in the trace"),
        (&dir.join("missing.pftrace"), "No such file"),
    ] {
        let archive = dir.join("out.otf2");
        let out = Command::new(pti_trace())
            .arg("export")
            .arg("--otf2")
            .arg(&archive)
            .arg(input)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {said}", input.display());
        assert!(
            said.contains(&input.display().to_string()) && said.contains(says),
            "{}: {said}",
            input.display()
        );
        assert!(
            !archive.exists(),
            "{}: an archive was created",
            input.display()
        );
    }
    // No trace at all: the usage, exit 2.
    let out = Command::new(pti_trace())
        .args(["export", "--otf2"])
        .arg(dir.join("out.otf2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("out.otf2").exists());
}

#[test]
fn ittapi_annotations_export_to_otf2_as_merge_counts_them() {
    let python = root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: `cargo xtask setup` makes .venv with ittapi",
        python.display()
    );
    let dir = scratch("otf2-itt");
    run(pti_trace_into(&dir, &[])
        .arg("--")
        .arg(&python)
        .arg(root().join("pti-python/tests/programs/itt_annotated.py"))
        .env_remove("INTEL_LIBITTNOTIFY64"));
    let traces = traces_in(&dir);
    assert_eq!(traces.len(), 1, "{traces:?}");
    let summary = merge_summary(&dir.join("merged.pftrace"), &traces);
    let all: Vec<&str> = summary
        .lines()
        .find(|l| l.starts_with("all "))
        .unwrap_or_else(|| panic!("no total row:\n{summary}"))
        .split_whitespace()
        .collect();
    // all | API calls, kernels, kernel time, other ops, annotations, communication.
    assert_eq!(all[1..], ["0", "0", "0.000ms", "0", "13", "4"], "{summary}");
    let archive = dir.join("itt.otf2");
    run(Command::new(pti_trace())
        .arg("export")
        .arg("--otf2")
        .arg(&archive)
        .args(&traces));
    let read = read_archive(&archive.join("traces.otf2"));
    // One location group, named by the process (no MPI rank).
    let (group, counts) = read.entered.iter().next().unwrap();
    assert_eq!(read.entered.len(), 1, "{:?}", read.entered);
    assert!(group.contains("itt_annotated.py"), "{group}");
    assert_eq!(
        counts,
        &BTreeMap::from([("annotations", 13), ("communication", 4)]),
        "{summary}"
    );
    // Locations: ITT tracks per domain, the overlapped tasks' lanes, the communication.
    let types = &read.location_types[group];
    assert!(types.iter().all(|t| t == "CPU_THREAD"), "{types:?}");
    assert_eq!(types.len(), 7, "{types:?}");
    // The marker: entered and left at one time.
    assert!(
        read.instants.iter().any(|n| n == "app: tick"),
        "{:?}",
        read.instants
    );
}
