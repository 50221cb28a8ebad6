//! pti-trace's files as a careful Unix tool treats them (issue 36, findings 1, 2, 4, 5, 6, 13):
//! an exec'd image and processes sharing one output each keep their records; an output that is
//! a FIFO, a symbolic link or another file is never opened through, blocked on or overwritten
//! unasked; outputs are private; inputs are never written; `PTI_LOG` leaves no empty files and
//! a name that is not UTF-8 is the name written.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use super::{kernel_slices, looping_program, on_pocl, opencl_program, pti_trace, run, scratch};
use pti_tests::run_with_watchdog;

/// pti-trace with `args` (output options included), running `program` on PoCL with `program_args`.
fn traced(args: &[&std::ffi::OsStr], program: &Path, program_args: &[&str]) -> Command {
    let mut cmd = Command::new(pti_trace());
    cmd.args(args);
    on_pocl(&mut cmd, program).args(program_args);
    cmd
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Finding 1: an image that `exec`s keeps the process ID, so `%p` names the same file. The first
/// image's records (up to its last flush: no exit handler runs at `exec`) stay in that file, and
/// the new image writes `<stem>.1.pftrace`.
#[test]
fn an_exec_d_image_leaves_the_trace_of_the_image_before_it() {
    let dir = scratch("exec");
    let pattern = dir.join("trace.%p.pftrace");
    let out = run(&mut traced(
        &[
            os("--flush-interval"),
            os("50"),
            os("-o"),
            pattern.as_os_str(),
        ],
        looping_program(),
        &["300", "exec", "10"],
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let slices: Vec<(String, usize)> = files
        .iter()
        .map(|f| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                kernel_slices(f),
            )
        })
        .collect();
    println!("{slices:?}\n{}", stderr(&out));
    assert_eq!(
        files.len(),
        2,
        "one file per image: {slices:?}\n{}",
        stderr(&out)
    );
    let first = slices.iter().find(|(n, _)| !n.contains(".1.")).unwrap();
    let second = slices
        .iter()
        .find(|(n, _)| n.ends_with(".1.pftrace"))
        .unwrap();
    assert_eq!(
        first.1, 300,
        "the first image's kernels, flushed before it exec'd"
    );
    assert_eq!(second.1, 10, "the second image's kernels");
}

/// Finding 2: processes writing one output (no `%p`) each keep their records: one writes the
/// name, the others `<stem>.<n>.pftrace`, and each says where.
#[test]
fn processes_sharing_one_output_each_keep_their_records() {
    let dir = scratch("shared");
    let same = dir.join("same.pftrace");
    let program = looping_program();
    let script = format!("'{0}' 40 & '{0}' 50 & '{0}' 60; wait", program.display());
    let mut cmd = Command::new(pti_trace());
    cmd.arg("-o")
        .arg(&same)
        .args(["--", "sh", "-c", &script])
        .env("PTI_TEST_PLATFORM", "Portable")
        .env_remove("OPENCL_LAYERS");
    let out = run(&mut cmd);
    let mut kernels: Vec<usize> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| kernel_slices(&e.path()))
        .collect();
    kernels.sort();
    assert_eq!(kernels, [40, 50, 60], "{}", stderr(&out));
    let said = stderr(&out);
    assert_eq!(said.matches(" written to ").count(), 3, "{said}");
}

/// Finding 4: an output path that is a FIFO (`-o`, `--csv`, `PTI_LOG`) is refused with a word,
/// and the program runs to its end instead of hanging in its first traced call.
#[test]
fn an_output_that_is_a_fifo_never_blocks_the_program() {
    let dir = scratch("fifo");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for option in ["-o", "--csv", "PTI_LOG"] {
        let mut cmd = if option == "PTI_LOG" {
            let mut cmd = traced(&[os("-s")], opencl_program(), &[]);
            cmd.env("PTI_LOG", &fifo);
            cmd
        } else if option == "--csv" {
            traced(
                &[os("-s"), os(option), fifo.as_os_str()],
                opencl_program(),
                &[],
            )
        } else {
            traced(&[os(option), fifo.as_os_str()], opencl_program(), &[])
        };
        let out = run_with_watchdog(&mut cmd, Duration::from_secs(120));
        assert!(
            out.status.success(),
            "{option}: {}\n{}",
            out.status,
            stderr(&out)
        );
        if option != "PTI_LOG" {
            assert!(
                stderr(&out).contains("is not a regular file"),
                "{option}: nothing said:\n{}",
                stderr(&out)
            );
        }
    }
}

/// Finding 5: no output is written through a symbolic link (`-o`, `--csv`, `PTI_LOG`); a file
/// already there is kept as `.old`; outputs are created 0600.
#[test]
fn outputs_never_follow_a_link_keep_what_was_there_and_are_private() {
    let dir = scratch("links");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // (`PTI_LOG` opens its file with the same function, `pti_files::append`, whose own tests
    // plant a link; a clean run logs nothing, so it is not run here.)
    for (i, option) in ["-o", "--csv"].into_iter().enumerate() {
        let link = dir.join(format!("link{i}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let args = match option {
            "--csv" => vec![os("-s"), os(option), link.as_os_str()],
            _ => vec![os(option), link.as_os_str()],
        };
        let out = run(&mut traced(&args, opencl_program(), &[]));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{option} wrote through a symbolic link:\n{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("symbolic link"),
            "{option}: {}",
            stderr(&out)
        );
    }
    // A file there: kept as .old; the new one private.
    let trace = dir.join("t.pftrace");
    let csv = dir.join("t.csv");
    std::fs::write(&trace, "an older trace").unwrap();
    std::fs::write(&csv, "an older csv").unwrap();
    // pti-trace takes files written in the 20 ms before its start for its run's (file
    // timestamps are coarser than the clock): these are older.
    std::thread::sleep(Duration::from_millis(100));
    let out = run(&mut traced(
        &[os("-o"), trace.as_os_str(), os("--csv"), csv.as_os_str()],
        opencl_program(),
        &[],
    ));
    for (path, was) in [(&trace, "an older trace"), (&csv, "an older csv")] {
        let old = pti_files_old(path);
        assert_eq!(
            std::fs::read_to_string(&old).unwrap(),
            was,
            "{}",
            stderr(&out)
        );
        let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", path.display());
    }
    assert!(stderr(&out).contains("is kept as"), "{}", stderr(&out));
    // --force replaces.
    let out = run(&mut traced(
        &[os("--force"), os("-o"), trace.as_os_str()],
        opencl_program(),
        &[],
    ));
    assert!(!stderr(&out).contains("is kept as"), "{}", stderr(&out));
    assert!(kernel_slices(&trace) > 0);
}

fn pti_files_old(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap().to_os_string();
    name.push(".old");
    path.with_file_name(name)
}

/// Finding 6: `export` and `merge` never write an input: not the output named like one, not the
/// output under another spelling of an input's name, not a trace given where the database goes.
#[test]
fn export_and_merge_never_write_their_inputs() {
    let dir = scratch("inputs");
    let (r1, r2) = (dir.join("r1.pftrace"), dir.join("r2.pftrace"));
    for r in [&r1, &r2] {
        run(&mut traced(
            &[os("-o"), r.as_os_str()],
            opencl_program(),
            &[],
        ));
    }
    let before: Vec<Vec<u8>> = [&r1, &r2]
        .iter()
        .map(|r| std::fs::read(r).unwrap())
        .collect();
    let tries: [Vec<&std::ffi::OsStr>; 3] = [
        // The database's name forgotten: r1 would have become the database.
        vec![os("export"), os("--sqlite"), r1.as_os_str(), r2.as_os_str()],
        vec![
            os("merge"),
            os("-o"),
            os("./r2.pftrace"),
            r1.as_os_str(),
            r2.as_os_str(),
        ],
        vec![
            os("export"),
            os("--sqlite"),
            os("./r2.pftrace"),
            r2.as_os_str(),
        ],
    ];
    for args in tries {
        let out = Command::new(pti_trace())
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let after: Vec<Vec<u8>> = [&r1, &r2]
            .iter()
            .map(|r| std::fs::read(r).unwrap())
            .collect();
        assert!(
            after == before,
            "{args:?} changed an input: {}",
            stderr(&out)
        );
    }
}

/// Finding 13: `PTI_LOG` with `%p` opens its file only when there is something to log (before,
/// every process left an empty file); an output name that is not UTF-8 is the name written.
#[test]
fn the_log_leaves_no_empty_files_and_names_are_bytes() {
    let dir = scratch("names");
    let log = dir.join("log.%p.txt");
    let mut cmd = traced(&[os("-s")], opencl_program(), &[]);
    cmd.env("PTI_LOG", &log);
    run(&mut cmd);
    let logs: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(
        logs.is_empty(),
        "a run that lost nothing left {} log files",
        logs.len()
    );

    use std::os::unix::ffi::OsStringExt;
    let name = std::ffi::OsString::from_vec(b"trace-\xff.pftrace".to_vec());
    let path = dir.join(&name);
    let out = run(&mut traced(
        &[os("-o"), path.as_os_str()],
        opencl_program(),
        &[],
    ));
    assert!(
        kernel_slices(&path) > 0,
        "no trace under the name given:\n{}",
        stderr(&out)
    );
}
