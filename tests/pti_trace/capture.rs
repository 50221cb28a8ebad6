//! Capture control: a run started paused and resumed by a signal, `--delay` and `--duration`.

use super::*;

/// Events of a trace: (time, name) for instants, (time, category) for slice begins.
type Timed = Vec<(u64, String)>;

/// The instants of a Perfetto trace (time, name), and the begin times of its slices by
/// category ("kernel", the API groups, ...).
fn instants_and_slices(file: &Path) -> (Timed, Timed) {
    use perfetto_protos::track_event::track_event::Type;
    let (packets, _) = whole_packets(&std::fs::read(file).unwrap());
    let mut names: HashMap<u64, String> = HashMap::new();
    let (mut instants, mut slices) = (Vec::new(), Vec::new());
    for p in &packets {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                names.insert(n.iid(), n.name().to_string());
            }
        }
        if !p.has_track_event() {
            continue;
        }
        let e = p.track_event();
        match e.type_() {
            Type::TYPE_INSTANT => instants.push((
                p.timestamp(),
                names.get(&e.name_iid()).cloned().unwrap_or_default(),
            )),
            Type::TYPE_SLICE_BEGIN => slices.push((
                p.timestamp(),
                e.categories.first().cloned().unwrap_or_default(),
            )),
            _ => {}
        }
    }
    (instants, slices)
}

#[test]
fn start_paused_then_resumed_by_signal_records_only_the_resumed_window() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;
    let dir = scratch("capture-signal");
    let mut cmd = pti_trace_into(&dir, &["--start-paused", "--toggle-signal", "WINCH"]);
    on_pocl(&mut cmd, phases_program()).args(["7", "stdin"]);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "PHASE A DONE", "the program's first line");
    // SAFETY: a signal to the pti-trace this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGWINCH) }, 0);
    // Phase B starts only once the program's collector said it resumed.
    let mut said = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "pti-trace ended its stderr before the program resumed; it said:\n{said}"
        );
        said.push_str(&line);
        if line.contains(": collection resumed (signal)") {
            break;
        }
    }
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    said.push_str(&rest);
    assert!(child.wait().unwrap().success(), "pti-trace failed:\n{said}");
    assert!(
        said.contains("pti-trace: toggle 1 (signal ") && said.contains(") sent to 1 process\n"),
        "pti-trace passed the signal on to the one process:\n{said}"
    );

    let summary = summaries(&said);
    assert_eq!(summary.len(), 1, "one process summarised:\n{said}");
    let device = &summary[0]["device"];
    assert_eq!(device.get("phase_b"), Some(&7), "phase B whole:\n{said}");
    assert_eq!(
        device.get("phase_a"),
        None,
        "nothing of the paused phase A:\n{said}"
    );
    assert_eq!(
        summary[0]["api"].get("clEnqueueNDRangeKernel [OpenCL]"),
        Some(&7)
    );
    assert_eq!(
        summary[0]["api"].get("clBuildProgram [OpenCL]"),
        None,
        "calls made while paused are not recorded:\n{said}"
    );
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1);
    assert_eq!(kernel_slices(&trace[0]), 7);
    let (instants, slices) = instants_and_slices(&trace[0]);
    let resumed = instants
        .iter()
        .find(|(_, name)| name == "collection resumed (signal)")
        .unwrap_or_else(|| panic!("no resume on the timeline: {instants:?}"))
        .0;
    assert!(
        slices.iter().all(|(at, _)| *at >= resumed),
        "every slice begins after the resume"
    );
}

#[test]
fn delay_and_duration_bound_the_recorded_window() {
    let dir = scratch("capture-window");
    let mut cmd = pti_trace_into(&dir, &["--delay", "1", "--duration", "1"]);
    // About 45 us a launch on PoCL here: several seconds, past the window's end.
    let out = run(on_pocl(&mut cmd, looping_program()).arg("100000"));
    let said = String::from_utf8_lossy(&out.stderr);
    let trace = traces_in(&dir);
    assert_eq!(trace.len(), 1, "{said}");
    let (instants, slices) = instants_and_slices(&trace[0]);
    let at = |name: &str| {
        instants
            .iter()
            .find(|(_, n)| n == name)
            .unwrap_or_else(|| panic!("no {name:?} on the timeline: {instants:?}\n{said}"))
            .0
    };
    let (resumed, paused) = (
        at("collection resumed (--delay)"),
        at("collection paused (--duration)"),
    );
    let window = (paused - resumed) as f64 / 1e9;
    assert!(
        (0.9..3.0).contains(&window),
        "the window lasts --duration: {window} s"
    );
    let kernels: Vec<u64> = slices
        .iter()
        .filter(|(_, c)| c == "kernel")
        .map(|(t, _)| *t)
        .collect();
    assert!(
        kernels.len() > 100,
        "launches in the window: {}\n{said}",
        kernels.len()
    );
    assert!(
        kernels.len() < 100000,
        "not every launch: {}",
        kernels.len()
    );
    // Every call recorded began inside the window; a kernel submitted just before the pause may
    // start on the device just after it.
    let slack = 500_000_000;
    for (t, category) in &slices {
        let end = if category == "kernel" {
            paused + slack
        } else {
            paused
        };
        assert!(
            *t >= resumed && *t <= end,
            "a {category} slice at {t} outside the window [{resumed}, {paused}]"
        );
    }
}
