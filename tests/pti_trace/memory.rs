//! Long runs: `--max-size`, the JSON timeline's bound, memory that stays flat on a run ten times
//! longer.

use super::*;

/// The peak resident memory (kB) of the looping OpenCL program run `launches` times under
/// pti-trace writing a Perfetto trace, and the trace's size.
fn peak_memory_under_pti_trace(launches: u64) -> (u64, u64) {
    peak_memory_with(launches, &[], &[]).0
}

/// The program's peak resident memory (kB) and the size of its timeline after `launches` under
/// pti-trace with `options` and `env`, and pti-trace's stderr.
fn peak_memory_with(launches: u64, options: &[&str], env: &[(&str, &str)]) -> ((u64, u64), String) {
    let dir = scratch(&format!("memory-{launches}-{}", options.len()));
    let mut cmd = Command::new(pti_trace());
    cmd.args(options)
        .arg("-o")
        .arg(dir.join(if options.contains(&"json") {
            "t.%p.json"
        } else {
            "t.%p.pftrace"
        }))
        .envs(env.iter().copied());
    let out = run(on_pocl(&mut cmd, looping_program()).arg(launches.to_string()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let hwm = stdout
        .lines()
        .find_map(|l| l.strip_prefix("W HWM "))
        .unwrap_or_else(|| panic!("no HWM line: {stdout}"))
        .parse()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let file = &timelines(&stderr)[0];
    let size = std::fs::metadata(file).unwrap().len();
    let _ = std::fs::remove_dir_all(&dir);
    ((hwm, size), stderr)
}

/// Issue 36, `--max-size`: a long run's Perfetto timeline stops growing at the size given; the
/// records past it are counted in the summary, which says so, and the file holds whole packets.
#[test]
fn max_size_bounds_the_timeline_and_says_what_it_left_out() {
    let dir = scratch("max-size");
    let file = dir.join("t.pftrace");
    let mut cmd = Command::new(pti_trace());
    cmd.args(["--max-size", "1M", "--flush-interval", "20", "-o"])
        .arg(&file);
    let out = run(on_pocl(&mut cmd, looping_program()).arg("20000"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let size = std::fs::metadata(&file).unwrap().len();
    let (packets, cut) = whole_packets(&std::fs::read(&file).unwrap());
    println!("{size} bytes, {} packets", packets.len());
    assert!(!cut, "the file ends inside a packet");
    assert!(
        (1 << 20..4 << 20).contains(&size),
        "{size} bytes for --max-size 1M (a batch past it at most)"
    );
    let left_out: u64 = stderr
        .lines()
        .find_map(|l| l.split(" bytes): ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("nothing said of the records left out:\n{stderr}"));
    assert!(left_out > 10_000, "{left_out} records left out\n{stderr}");
}

/// Issue 36, finding 14: a JSON timeline is written at exit, so its records are held until
/// then; without a bound `-f json` grew the program's memory with the run (983 MB after 10 s).
/// Past `PTI_TRACE_JSON_MAX_RECORDS` (here 5,000; default 1,000,000) later records are counted
/// in the summary and let go: a run ten times longer costs no more memory.
#[test]
fn a_json_timeline_holds_a_bounded_number_of_records() {
    let options = ["-f", "json"];
    let env = [("PTI_TRACE_JSON_MAX_RECORDS", "5000")];
    let ((short, _), _) = peak_memory_with(10_000, &options, &env);
    let ((long, _), stderr) = peak_memory_with(100_000, &options, &env);
    println!("peak memory with -f json: {short} kB for 10,000 launches, {long} kB for 100,000");
    assert!(
        stderr.contains("the JSON timeline keeps the first 5000 records"),
        "nothing said of the records left out:\n{stderr}"
    );
    assert!(
        long * 100 < short * 120,
        "peak memory grew from {short} kB to {long} kB for a run ten times longer"
    );
}

#[test]
fn memory_stays_flat_on_a_run_ten_times_longer() {
    let (short, short_file) = peak_memory_under_pti_trace(10_000);
    let (long, long_file) = peak_memory_under_pti_trace(100_000);
    println!(
        "peak memory: {short} kB for 10,000 launches ({short_file} bytes of trace), {long} kB for \
         100,000 ({long_file} bytes)"
    );
    // The trace grows with the run; the process does not: a tenfold longer run may only add
    // libpti's warm-up (about 10 MB here, reached by 80,000 launches), not the records (a JSON
    // timeline keeps them: about 40 MB more for the longer run).
    assert!(
        long_file > 8 * short_file,
        "the trace did not grow with the run"
    );
    assert!(
        long * 100 < short * 120,
        "peak memory grew from {short} kB to {long} kB for a run ten times longer"
    );
}
