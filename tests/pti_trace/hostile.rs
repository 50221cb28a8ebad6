//! pti-trace against hostile values (issue 36, findings 9, 11 and 13's lists): a toggle signal
//! the kernel sends for a fault is refused by the collector as by pti-trace; an empty backend or
//! view list is an error on both sides; names that carry terminal escapes reach the terminal as
//! text; CSV cells never start a formula.

use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use super::{lib_dir_of_trace, on_pocl, opencl_program, pti_trace, run, scratch};

/// Finding 9: `PTI_TRACE_TOGGLE_SIGNAL=11` reached the collector unchecked (pti-trace refuses
/// it): a crashing program's SIGSEGV then paused and resumed collection for ever. The collector
/// now refuses it with pti-trace's own check and records nothing in that process.
#[test]
fn the_collector_refuses_a_fault_signal_as_pti_trace_does() {
    let dir = scratch("toggle");
    let refused = Command::new(pti_trace())
        .args(["--toggle-signal", "11", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    // The collector alone, as a launcher that sets its environment would load it.
    let (libpti, collector) = lib_dir_of_trace();
    let mut cmd = Command::new(opencl_program());
    cmd.current_dir(&dir)
        .env(
            "LD_PRELOAD",
            format!("{}:{}", libpti.display(), collector.display()),
        )
        .env("PTI_TRACE_TOGGLE_SIGNAL", "11")
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("PTI_TRACE_TOGGLE_SIGNAL") && stderr.contains("nothing is recorded"),
        "the collector took signal 11:\n{stderr}"
    );
}

/// Finding 13: `-b ''` meant "no backend" to pti-trace and "every backend" to the collector;
/// `-v ,,,` recorded nothing without a word. Both are errors now, on both sides.
#[test]
fn an_empty_list_is_an_error_on_both_sides() {
    for (option, value) in [("-b", ""), ("-v", ",,,"), ("--backends", " , ")] {
        let out = Command::new(pti_trace())
            .args([option, value, "--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{option} {value:?}: {stderr}");
        assert!(stderr.contains("names no"), "{option} {value:?}: {stderr}");
    }
    let (libpti, collector) = lib_dir_of_trace();
    let out = Command::new(opencl_program())
        .env(
            "LD_PRELOAD",
            format!("{}:{}", libpti.display(), collector.display()),
        )
        .env("PTI_TRACE_VIEWS", ",,,")
        .env("PTI_TRACE_SUMMARY_ONLY", "1")
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("PTI_TRACE_VIEWS") && stderr.contains("names no view"),
        "{stderr}"
    );
}

/// Finding 11: a program named with a terminal escape (here its file name; ITT task names and
/// command lines reach the same lines) shows in the summary as text, never as the escape. (CSV
/// cells that would start a formula get a leading `'`: the collector's unit test
/// `names_are_printable_and_csv_cells_no_formulas`, as no traced name starts with `=` here.)
#[test]
fn names_reach_the_terminal_as_text() {
    let dir = scratch("escapes");
    let name = std::ffi::OsStr::from_bytes(b"prog\x1b[2J\x1b]0;owned\x07");
    let program = dir.join(name);
    std::fs::copy(opencl_program(), &program).unwrap();
    let mut cmd = Command::new(pti_trace());
    cmd.arg("-s");
    let out = run(on_pocl(&mut cmd, &program));
    let stderr = &out.stderr;
    assert!(
        !stderr.contains(&0x1b) && !stderr.contains(&0x07),
        "an escape reached the terminal:\n{}",
        String::from_utf8_lossy(stderr)
    );
    assert!(
        String::from_utf8_lossy(stderr).contains("prog\\u{1b}[2J"),
        "{}",
        String::from_utf8_lossy(stderr)
    );
}

/// Finding 8: pti-trace told to stop (SIGTERM, SIGHUP, or a SIGINT sent to it alone) ends the
/// program (SIGTERM, as `perf record` does), finishes its reports and leaves with the program's
/// status. Before, SIGTERM ended pti-trace and left the program running, still tracing.
#[test]
fn pti_trace_told_to_stop_ends_the_program_first() {
    use std::io::BufRead as _;
    use std::os::unix::process::ExitStatusExt;
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let dir = scratch(&format!("stop{signal}"));
        let mut cmd = Command::new(pti_trace());
        cmd.arg("-o").arg(dir.join("t.%p.pftrace"));
        let mut child = on_pocl(&mut cmd, super::looping_program())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next().expect("the program stopped").unwrap();
            if line.starts_with("W ITER ") {
                break;
            }
        }
        let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
            .expect("pti-trace's children");
        let program: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
        // SAFETY: kill(2) on pti-trace, our child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: kill(2) on processes this test started.
                unsafe {
                    libc::kill(program, libc::SIGKILL);
                    libc::kill(child.id() as i32, libc::SIGKILL);
                }
                panic!("signal {signal}: pti-trace did not end within 30 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let program_alive = std::path::Path::new(&format!("/proc/{program}")).exists()
            && !std::fs::read_to_string(format!("/proc/{program}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        if program_alive {
            // SAFETY: kill(2) on the orphan this test left.
            unsafe { libc::kill(program, libc::SIGKILL) };
        }
        assert!(
            !program_alive,
            "signal {signal}: the program still runs after pti-trace left"
        );
        assert_eq!(
            status.signal(),
            Some(libc::SIGTERM),
            "signal {signal}: pti-trace's status is the program's (ended by SIGTERM): {status:?}"
        );
    }
}

/// Finding 10: with `ulimit -n` below 901 pti-trace cannot put its reporting descriptor out of
/// the program's way (from 900 up): the summaries went into the program's own stderr, silently.
/// They go through pti-trace's reports directory instead and reach pti-trace's stderr.
#[test]
fn a_low_descriptor_limit_keeps_summaries_out_of_the_programs_stderr() {
    let dir = scratch("nofile");
    let inner = dir.join("program-stderr.txt");
    let script = format!(
        "ulimit -n 256 && exec '{}' -s -- sh -c \"exec '{}' 2>'{}'\"",
        pti_trace().display(),
        opencl_program().display(),
        inner.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let program_stderr = std::fs::read_to_string(&inner).unwrap_or_default();
    assert!(out.status.success(), "{stderr}");
    assert!(
        !program_stderr.contains("pti-trace: summary"),
        "the summary went into the program's own stderr:\n{program_stderr}"
    );
    assert!(
        stderr.contains("pti-trace: summary of process"),
        "no summary:\n{stderr}"
    );
}

/// Finding 16: in a JSON timeline every flow arrow runs forward (its tail, inside the submitting
/// call, no later than its head, inside the device work: a blocking read's call lasts past its
/// copy, and the tail at the call's middle ran backwards), and no argument is a raw handle.
#[test]
fn json_flows_run_forward_and_name_no_handles() {
    let dir = scratch("json-flows");
    let file = dir.join("t.json");
    let mut cmd = Command::new(pti_trace());
    cmd.arg("-o").arg(&file);
    run(on_pocl(&mut cmd, opencl_program()));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let mut tails = std::collections::HashMap::new();
    let mut heads = std::collections::HashMap::new();
    for e in events {
        match e["ph"].as_str() {
            Some("s") => {
                tails.insert(e["id"].as_u64().unwrap(), e["ts"].as_f64().unwrap());
            }
            Some("f") => {
                heads.insert(e["id"].as_u64().unwrap(), e["ts"].as_f64().unwrap());
            }
            _ => {}
        }
        if let Some(args) = e["args"].as_object() {
            for (key, value) in args {
                assert!(
                    !value.as_str().is_some_and(|v| v.starts_with("0x")),
                    "a raw handle in {key}: {e}"
                );
            }
        }
    }
    assert!(
        !tails.is_empty() && tails.len() == heads.len(),
        "{} {}",
        tails.len(),
        heads.len()
    );
    let backwards: Vec<_> = tails.iter().filter(|(id, t)| heads[*id] < **t).collect();
    assert!(
        backwards.is_empty(),
        "{} of {} flow arrows run backwards",
        backwards.len(),
        tails.len()
    );
}

/// Finding 8, the terminal's side: a Ctrl-C typed at the terminal reaches the program once (the
/// kernel sends it to the whole foreground process group; pti-trace does not pass it on again),
/// and pti-trace leaves with the program's status. Run in a pseudo-terminal (Python's `pty`).
#[test]
fn a_terminal_ctrl_c_reaches_the_program_once() {
    let counter = "import signal, time\n\
                   n = 0\n\
                   def h(s, f):\n    global n\n    n += 1\n\
                   signal.signal(signal.SIGINT, h)\n\
                   print('ready', flush=True)\n\
                   end = time.time() + 2\n\
                   while time.time() < end:\n    time.sleep(0.05)\n\
                   print('SIGINTS', n, flush=True)\n";
    let driver = format!(
        "import os, pty, sys, time\n\
         pid, fd = pty.fork()\n\
         if pid == 0:\n    os.execv({pti:?}, [{pti:?}, '-s', '--', sys.executable, '-c', {counter:?}])\n\
         out = b''\n\
         while b'ready' not in out:\n    out += os.read(fd, 4096)\n\
         os.write(fd, b'\\x03')\n\
         while True:\n    try:\n        data = os.read(fd, 4096)\n    except OSError:\n        break\n    if not data:\n        break\n    out += data\n\
         _, status = os.waitpid(pid, 0)\n\
         print(out.decode(errors='replace'))\n\
         print('STATUS', os.waitstatus_to_exitcode(status))\n",
        pti = pti_trace().display().to_string(),
    );
    let out = Command::new("python3")
        .args(["-c", &driver])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("SIGINTS 1"),
        "the program did not get the Ctrl-C once:\n{text}"
    );
    assert!(
        text.contains("STATUS 0"),
        "pti-trace's status is not the program's (0):\n{text}"
    );
}
