//! The documentation's statements that a program can check, checked against the code, so that
//! they cannot drift from it:
//!
//! - every `PTI_*` variable the code of libpti, pti-trace, the `libpti` crate and the Python
//!   package reads is in docs/environment.md, and every variable documented there is read (or,
//!   for the ones libpti sets for the runtimes, set) by the code;
//! - the defaults docs/environment.md and docs/pti-trace.md give for pti-trace's timeline file
//!   and flush interval, and for `PTI_HARVEST_SIZE`, are the code's;
//! - the values documented for `PTI_TRACE_VIEWS` and `PTI_TRACE_BACKENDS` (and `-v`, `-b`) are
//!   exactly those the collector accepts, asked of the collector itself;
//! - the options `pti-trace --help` lists are the options docs/pti-trace.md documents;
//! - the function counts README.md and docs/*.md state (functions per API-ID table, Level Zero
//!   registrations and extension-route wrappers) are the tables' and the generated code's;
//! - docs/README.md lists every document in docs/, and the links of the index and of README.md's
//!   "Documentation" section lead to files that exist;
//! - one version for the C library, the Rust crate and the wheel, and one minimum Rust version,
//!   stated alike in the manifests, README.md and docs/stability.md.
//!
//! The collector and pti-trace are taken from the build directory (`lib_dir`); a check that
//! needs them fails, saying how to build them, when they are missing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use pti_tests::{lib_dir, root};

// === reading the tree ===

/// The text of `path`, relative to the workspace root.
fn read(path: &str) -> String {
    let file = root().join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
}

/// The files under `dir` (relative to the root; a file is itself) whose names end in one of
/// `extensions`, skipping build outputs and virtual environments.
fn files(dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    fn walk(path: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if [
                "target",
                ".git",
                ".venv",
                ".cache",
                "node_modules",
                "__pycache__",
            ]
            .contains(&name)
            {
                return;
            }
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()))
                .map(|e| e.expect("directory entry").path())
                .collect();
            entries.sort();
            for entry in entries {
                walk(&entry, extensions, out);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            out.push(path.to_path_buf());
        }
    }
    let mut out = Vec::new();
    let start = root().join(dir);
    assert!(start.exists(), "{} is missing", start.display());
    walk(&start, extensions, &mut out);
    out
}

/// The text of every file of `files`, as (path relative to the root, text).
fn texts(files: Vec<PathBuf>) -> Vec<(String, String)> {
    let root = root();
    files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).ok()?; // not UTF-8: no source of ours
            let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            Some((rel, text))
        })
        .collect()
}

/// Whether `name` has the shape of an environment variable's name: upper-case words joined by
/// underscores (at least two words), such as `PTI_TRACE_OUTPUT`.
fn env_shaped(name: &str) -> bool {
    let words: Vec<&str> = name.split('_').collect();
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && words.len() >= 2
        && words.iter().all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
}

/// The string literals of `text` (Rust's `"..."` and `c"..."`, Python's `"..."` and `'...'`)
/// whose whole content has an environment variable's shape.
fn env_literals(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for quote in ['"', '\''] {
        for (at, _) in text.match_indices(quote) {
            let rest = &text[at + 1..];
            let len = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..len];
            if rest[len..].starts_with(quote) && env_shaped(name) {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The identifiers of the committed C headers (`include/`): enum constants and macros such as
/// `PTI_ERROR_BAD_ARGUMENT`, which the code spells as strings too but never reads from the
/// environment.
fn header_identifiers() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, text) in texts(files("include", &[".h"])) {
        let code = without_c_comments(&text);
        for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if env_shaped(word) {
                out.insert(word.to_string());
            }
        }
    }
    assert!(
        out.contains("PTI_ERROR_BAD_ARGUMENT"),
        "include/ has no PTI_ERROR_BAD_ARGUMENT: the headers were not found"
    );
    out
}

/// C source `text` without its comments (whose words the headers mention, not declare).
fn without_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at + 2..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The shipped code: libpti (pti-core, pti-capi, pti-view), pti-trace and its collector, the
/// `libpti` crate and the Python package's native module, without their tests.
const SHIPPED_RUST: &[&str] = &[
    "pti-core/src",
    "pti-capi/src",
    "pti-view/src",
    "pti-trace/src",
    "pti-trace/collector/src",
    "libpti/src",
    "libpti/build.rs",
    "pti-python/src",
    "pti-python/build.rs",
];

/// Variables only tests, benchmarks and fault-injection builds read.
const TEST_ONLY: &[&str] = &["PTI_TEST_", "PTI_FAULT_", "PTI_BENCH_", "PTI_FUZZ_"];

/// Every environment-shaped string the shipped code spells (Rust, and the Python package's
/// sources), except the C API's own identifiers, with the file of its first appearance.
fn shipped_names() -> Vec<(String, String)> {
    let headers = header_identifiers();
    let mut sources = Vec::new();
    for dir in SHIPPED_RUST {
        if root().join(dir).exists() {
            sources.extend(texts(files(dir, &[".rs"])));
        }
    }
    sources.extend(texts(files("pti-python/python", &[".py"])));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (file, text) in &sources {
        for name in env_literals(text) {
            if !headers.contains(&name) && seen.insert(name.clone()) {
                out.push((name, file.clone()));
            }
        }
    }
    out
}

/// The `PTI_*` (and `LIBPTI_*`) variables the shipped code reads or hands on, with a file that
/// names each.
fn pti_variables_in_code() -> Vec<(String, String)> {
    let names: Vec<(String, String)> = shipped_names()
        .into_iter()
        .filter(|(n, _)| n.starts_with("PTI_") || n.starts_with("LIBPTI_"))
        .filter(|(n, _)| !TEST_ONLY.iter().any(|p| n.starts_with(p)))
        .collect();
    for expected in ["PTI_HOST_CLOCK", "PTI_TRACE_OUTPUT", "PTI_TRACE_VIEWS"] {
        assert!(
            names.iter().any(|(n, _)| n == expected),
            "the scan of the sources found no {expected}: the scan is broken ({names:?})"
        );
    }
    names
}

/// The variables libpti's constructor sets for the runtimes: the C-string names given to
/// `setenv` (directly or through `set_if_unset`) in pti-core and pti-capi.
fn variables_libpti_sets() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in ["pti-core/src", "pti-capi/src"] {
        for (_, text) in texts(files(dir, &[".rs"])) {
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains("setenv(") || code.contains("set_if_unset(") {
                    out.extend(env_literals(code));
                }
            }
        }
    }
    assert!(
        out.contains("ZE_ENABLE_TRACING_LAYER"),
        "no setenv of ZE_ENABLE_TRACING_LAYER found in pti-capi: the scan is broken ({out:?})"
    );
    out
}

/// The variables pti-trace sets for the program it runs (`.env("NAME", ...)`, and its `set`
/// helper), other than the `PTI_*` ones the collector reads.
fn variables_pti_trace_sets() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, text) in texts(files("pti-trace/src", &[".rs"])) {
        for piece in text.split(".env(").skip(1) {
            let call = &piece[..piece.len().min(60)];
            out.extend(
                env_literals(call)
                    .into_iter()
                    .filter(|n| !n.starts_with("PTI_")),
            );
        }
    }
    assert!(
        out.contains("LD_PRELOAD"),
        "no `.env(\"LD_PRELOAD\"` found in pti-trace/src: the scan is broken ({out:?})"
    );
    out
}

// === reading Markdown ===

/// The sections of a Markdown text: (heading of the `## ` line, body), the text before the
/// first heading under "".
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), String::new())];
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            out.push((heading.trim().to_string(), String::new()));
        } else {
            let body = &mut out.last_mut().expect("one section at least").1;
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The section of `text` under `## heading` (failing if there is none).
fn section(text: &str, file: &str, heading: &str) -> String {
    sections(text)
        .into_iter()
        .find(|(h, _)| h == heading)
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("{file} has no section \"## {heading}\""))
}

/// The rows of the Markdown tables in `text`, as their cells (header and separator rows left
/// out).
fn table_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect();
        let separator = cells
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ' '));
        if !in_table {
            in_table = true; // the header row
            continue;
        }
        if !separator {
            rows.push(cells);
        }
    }
    rows
}

/// The `code spans` of a Markdown text.
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

/// The variable a code span names, if it names one: `PTI_HOST_CLOCK=syscall` names
/// `PTI_HOST_CLOCK`.
fn variable_of(span: &str) -> Option<String> {
    let name: String = span
        .chars()
        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
        .collect();
    env_shaped(&name).then_some(name)
}

/// The variables named in code spans of `text`.
fn variables_in(text: &str) -> BTreeSet<String> {
    code_spans(text)
        .iter()
        .filter_map(|s| variable_of(s))
        .collect()
}

/// The variables of the first column of `text`'s tables.
fn table_variables(text: &str) -> BTreeSet<String> {
    table_rows(text)
        .iter()
        .flat_map(|row| variables_in(&row[0]))
        .collect()
}

/// The row of docs/environment.md's tables whose first column names `variable` (its cells
/// joined), or a complaint that there is none.
fn environment_row(variable: &str) -> Result<String, String> {
    let text = read("docs/environment.md");
    table_rows(&text)
        .into_iter()
        .find(|row| variables_in(&row[0]).contains(variable))
        .map(|row| row.join(" | "))
        .ok_or_else(|| format!("docs/environment.md has no table row for {variable}"))
}

/// `text` with every run of white space made one space (statements wrap across lines).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every place `template` matches `text`, where each `{}` of the template stands for a
/// decimal number: the numbers and a stretch of text around the match.
fn numbers_in(text: &str, template: &str) -> Vec<(Vec<u64>, String)> {
    let parts: Vec<&str> = template.split("{}").collect();
    let mut out = Vec::new();
    for start in 0..text.len() {
        if !text.is_char_boundary(start) {
            continue;
        }
        // A leading number must begin a word: "266" is not "66".
        if parts[0].is_empty() && start > 0 && text.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut at = start;
        let mut numbers = Vec::new();
        let mut matched = true;
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                let digits = text[at..].bytes().take_while(u8::is_ascii_digit).count();
                let Some(n) = text[at..at + digits].parse().ok().filter(|_| digits > 0) else {
                    matched = false;
                    break;
                };
                numbers.push(n);
                at += digits;
            }
            if !text[at..].starts_with(part) {
                matched = false;
                break;
            }
            at += part.len();
        }
        if matched {
            let mut from = start.saturating_sub(50);
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            let mut to = (at + 30).min(text.len());
            while !text.is_char_boundary(to) {
                to += 1;
            }
            out.push((numbers, format!("…{}…", &text[from..to])));
        }
    }
    out
}

/// README.md and every docs/*.md, flattened: (file, text).
fn all_docs() -> Vec<(String, String)> {
    let mut docs = vec![("README.md".to_string(), flat(&read("README.md")))];
    for (file, text) in texts(files("docs", &[".md"])) {
        docs.push((file, flat(&text)));
    }
    docs
}

/// The Markdown links of `text` to local files (no scheme, anchor dropped).
fn local_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or("").trim().to_string())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

// === running the collector and pti-trace ===

/// The built pti-trace, or a failure that says how to build it.
fn pti_trace() -> PathBuf {
    let exe = lib_dir().join("pti-trace");
    assert!(
        exe.exists(),
        "{} is missing: build it with `cargo build -p pti-trace` (`cargo xtask test` does)",
        exe.display()
    );
    exe
}

/// The built collector, or a failure that says how to build it.
fn collector() -> PathBuf {
    let lib = lib_dir().join("libpti_trace_collector.so");
    assert!(
        lib.exists(),
        "{} is missing: build it with `cargo build -p pti-trace-collector` (`cargo xtask test` \
         does)",
        lib.display()
    );
    lib
}

/// The items the collector accepts in the comma list `variable`, as it says when given an
/// unknown one: it is preloaded (with libpti) into `true` with `variable` set to a bad item, and
/// its complaint "unknown item ... (known: a, b, c)" is read.
fn collector_accepts(variable: &str) -> Vec<String> {
    let preload = format!(
        "{}:{}",
        lib_dir().join("libpti.so.0").display(),
        collector().display()
    );
    let out = Command::new("true")
        .env("LD_PRELOAD", preload)
        .env(variable, "no-such-item")
        .env_remove("PTI_TRACE_REPORT_FD")
        .env_remove("PTI_TRACE_REPORT_DIR")
        .env_remove("PTI_TRACE_QUIET_LIST")
        .output()
        .expect("run true with the collector preloaded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    known_list(&stderr).unwrap_or_else(|| {
        panic!(
            "the collector, given {variable}=no-such-item, said no \"(known: ...)\" list on \
             stderr:\n{stderr}"
        )
    })
}

/// The list of an "unknown item ... (known: a, b, c)" complaint.
fn known_list(text: &str) -> Option<Vec<String>> {
    let list = text.split("(known: ").nth(1)?.split(')').next()?;
    Some(list.split(',').map(|s| s.trim().to_string()).collect())
}

/// `pti-trace --help`.
fn help() -> String {
    let out = Command::new(pti_trace())
        .arg("--help")
        .output()
        .expect("run pti-trace --help");
    assert!(out.status.success(), "pti-trace --help failed: {out:?}");
    String::from_utf8(out.stdout).expect("--help is UTF-8")
}

/// The options of an option list: the leading `-x` / `--long` words of each line that begins
/// (after indentation) with a dash.
fn options_of_help(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter(|l| l.starts_with(' ') && l.trim_start().starts_with('-'))
        .flat_map(|l| {
            l.split_whitespace()
                .map(|w| w.trim_end_matches(','))
                .take_while(|w| w.starts_with('-'))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The options docs/pti-trace.md documents: the dashed words of the first column of its
/// option table (the table whose header is `| option |`).
fn options_of_doc() -> BTreeSet<String> {
    let text = read("docs/pti-trace.md");
    let table: String = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("| option |"))
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    table_rows(&table)
        .iter()
        .flat_map(|row| code_spans(&row[0]))
        .flat_map(|span| {
            span.split_whitespace()
                .map(|w| w.trim_end_matches(',').to_string())
                .filter(|w| w.starts_with('-'))
                .collect::<Vec<_>>()
        })
        .collect()
}

// === the code's facts ===

/// The number of functions (lines) of `pti-core/api-ids/<table>`.
fn table_len(table: &str) -> u64 {
    let text = read(&format!("pti-core/api-ids/{table}"));
    let n = text.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    assert!(n > 0, "pti-core/api-ids/{table} is empty");
    n
}

/// The highest Level Zero API ID below 4096, where libpti's own numbering begins (the end of
/// Intel's published numbering).
fn last_published_level_zero_id() -> u64 {
    read("pti-core/api-ids/level_zero.tsv")
        .lines()
        .filter_map(|l| l.split('\t').next()?.trim().parse::<u64>().ok())
        .filter(|id| *id < 4096)
        .max()
        .expect("level_zero.tsv has IDs below 4096")
}

/// The generated Level Zero callbacks (pti-core/src/backend/level_zero/callbacks.rs).
const CALLBACKS: &str = "pti-core/src/backend/level_zero/callbacks.rs";

/// How many functions the generated registration names: one `zelTracer<F>RegisterCallback`
/// each, every function a 1.32 loader's tracing layer offers.
fn registrations() -> u64 {
    let n = read(CALLBACKS).matches("RegisterCallback\"").count() as u64;
    assert!(n > 0, "{CALLBACKS} names no register function");
    n
}

/// The value of `const <name>: <type> = <number>;` in `file`.
fn constant(file: &str, name: &str) -> u64 {
    let text = read(file);
    let after = text
        .split(&format!("const {name}:"))
        .nth(1)
        .unwrap_or_else(|| panic!("{file} has no constant {name}"));
    let value = after.split('=').nth(1).and_then(|v| v.split(';').next());
    value
        .map(|v| v.trim().replace('_', ""))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{file}: {name} is not a plain number"))
}

// === the checks ===

/// Every `PTI_*` variable the shipped code reads is in docs/environment.md.
#[test]
fn every_variable_the_code_reads_is_documented() {
    let documented = variables_in(&read("docs/environment.md"));
    let missing: Vec<String> = pti_variables_in_code()
        .into_iter()
        .filter(|(name, _)| !documented.contains(name))
        .map(|(name, file)| format!("{name} (named in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/environment.md does not document {} variable(s) the code reads:\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

/// Every variable docs/environment.md says libpti, the `libpti` crate, the Python package or
/// pti-trace reads is read by that code; the variables it says libpti sets are the ones
/// libpti's constructor sets; the ones the tests use are named by some source of the project.
#[test]
fn every_documented_variable_is_read_or_set() {
    let text = read("docs/environment.md");
    let in_code: BTreeSet<String> = shipped_names().into_iter().map(|(n, _)| n).collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (heading, body) in sections(&text) {
        if heading.starts_with("Read by") {
            for name in table_variables(&body) {
                checked += 1;
                if !in_code.contains(&name) {
                    wrong.push(format!("{name} (\"{heading}\"): read by no shipped code"));
                }
            }
        } else if heading.starts_with("Set by libpti") {
            let documented = table_variables(&body);
            let set = variables_libpti_sets();
            checked += documented.len();
            for name in documented.difference(&set) {
                wrong.push(format!("{name} (\"{heading}\"): libpti never sets it"));
            }
            for name in set.difference(&documented) {
                wrong.push(format!(
                    "{name}: libpti's constructor sets it, \"{heading}\" does not list it"
                ));
            }
        } else if heading.starts_with("Used by the tests") {
            let sources: Vec<(String, String)> = ["tests", "xtask", "pti-core", "pti-capi"]
                .iter()
                .flat_map(|d| texts(files(d, &[".rs", ".c", ".h", ".cpp", ".py", ".sh"])))
                .collect();
            for name in variables_in(&body) {
                checked += 1;
                let quoted = format!("\"{name}\"");
                if !sources.iter().any(|(_, t)| t.contains(&quoted)) {
                    wrong.push(format!("{name} (\"{heading}\"): no test source names it"));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} variables found in docs/environment.md's sections: its layout changed"
    );
    assert!(
        wrong.is_empty(),
        "docs/environment.md and the code disagree:\n  {}",
        wrong.join("\n  ")
    );
}

/// What pti-trace sets for the program besides its collector's `PTI_*` variables
/// (`LD_PRELOAD`, `INTEL_LIBITTNOTIFY64`) is in docs/environment.md.
#[test]
fn what_pti_trace_sets_is_documented() {
    let documented = variables_in(&read("docs/environment.md"));
    let missing: Vec<String> = variables_pti_trace_sets()
        .into_iter()
        .filter(|n| !documented.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "pti-trace sets {missing:?} for the program; docs/environment.md does not say so"
    );
}

/// The default timeline file name and flush interval of docs/environment.md and
/// docs/pti-trace.md (and `--help`) are the collector's; `PTI_HARVEST_SIZE`'s default is
/// libpti's.
#[test]
fn documented_defaults_are_the_code_s() {
    let options = "pti-trace/collector/src/options.rs";
    let source = read(options);
    // The default file names: every "pti-trace.…" literal of the collector's options, and the
    // one of the default format outside MPI.
    let names: BTreeSet<String> = source
        .split("\"pti-trace.")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|rest| format!("pti-trace.{rest}"))
        .filter(|name| name.contains("%p"))
        .collect();
    let default = source
        .lines()
        .find(|l| l.contains("(Format::Perfetto, false) =>"))
        .and_then(|l| l.split('"').nth(1))
        .unwrap_or_else(|| {
            panic!(
                "{options} has no `(Format::Perfetto, false) => \"...\"` arm: the test reads the \
                 default file name from it; update the test with the code"
            )
        })
        .to_string();
    assert!(names.contains(&default), "{default} not among {names:?}");
    let format_default = source
        .lines()
        .find(|l| l.trim_start().starts_with("None => Format::"))
        .unwrap_or_else(|| panic!("{options} has no `None => Format::...` arm"));
    assert!(
        format_default.contains("Format::Perfetto"),
        "the collector's default format is no longer Perfetto ({format_default}): the \
         documented defaults below must change with it"
    );

    let mut wrong = Vec::new();
    let doc_rows = [
        ("docs/environment.md", environment_row("PTI_TRACE_OUTPUT")),
        ("docs/pti-trace.md", pti_trace_row("-o")),
    ];
    for (file, row) in doc_rows {
        let row = match row {
            Ok(row) => row,
            Err(e) => {
                wrong.push(e);
                continue;
            }
        };
        let named: Vec<String> = code_spans(&row)
            .into_iter()
            .filter(|s| s.starts_with("pti-trace."))
            .collect();
        if named.first() != Some(&default) {
            wrong.push(format!(
                "{file}: the first default file name of `{row}` is {:?}, the code's is {default:?}",
                named.first()
            ));
        }
        for name in named.iter().filter(|n| !names.contains(*n)) {
            wrong.push(format!(
                "{file}: {name} is no default file name of the collector ({names:?})"
            ));
        }
    }
    if !flat(&help()).contains(&format!("(default: {default}")) {
        wrong.push(format!(
            "pti-trace --help does not give {default} as -o's default"
        ));
    }

    // The flush interval.
    let flush = source
        .split("get(\"PTI_TRACE_FLUSH_MS\")")
        .nth(1)
        .and_then(|rest| rest.split("from_millis(").nth(1))
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            panic!("{options}: no `from_millis(N)` default after PTI_TRACE_FLUSH_MS's read")
        });
    for (file, row) in [
        ("docs/environment.md", environment_row("PTI_TRACE_FLUSH_MS")),
        ("docs/pti-trace.md", pti_trace_row("--flush-interval")),
    ] {
        let row = match row {
            Ok(row) => row,
            Err(e) => {
                wrong.push(e);
                continue;
            }
        };
        if !row.contains(&format!("default {flush}")) {
            wrong.push(format!("{file}: `{row}` does not say \"default {flush}\""));
        }
    }

    // libpti's harvest size.
    let harvest = constant(
        "pti-core/src/backend/device/pending.rs",
        "DEFAULT_HARVEST_SIZE",
    );
    match environment_row("PTI_HARVEST_SIZE") {
        Ok(row) if !row.contains(&format!("default {harvest}")) => wrong.push(format!(
            "docs/environment.md: `{row}` does not say \"default {harvest}\""
        )),
        Ok(_) => {}
        Err(e) => wrong.push(e),
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The row of docs/pti-trace.md's option table for `option` (its cells joined), or a complaint
/// that there is none.
fn pti_trace_row(option: &str) -> Result<String, String> {
    let text = read("docs/pti-trace.md");
    table_rows(&text)
        .into_iter()
        .find(|row| {
            code_spans(&row[0]).iter().any(|s| {
                s.split_whitespace()
                    .any(|w| w.trim_end_matches(',') == option)
            })
        })
        .map(|row| row.join(" | "))
        .ok_or_else(|| format!("docs/pti-trace.md has no option row for {option}"))
}

/// The values docs/environment.md gives for `PTI_TRACE_VIEWS` and `PTI_TRACE_BACKENDS`, and
/// docs/pti-trace.md for `-v` and `-b`, are exactly those the collector accepts (and pti-trace
/// checks its options against the same lists).
#[test]
fn documented_list_values_are_the_collector_s() {
    let mut wrong = Vec::new();
    for (variable, option, example) in [
        ("PTI_TRACE_VIEWS", "-v", "api"),
        ("PTI_TRACE_BACKENDS", "-b", "opencl"),
    ] {
        let mut accepted = collector_accepts(variable);
        accepted.sort();
        assert!(
            accepted.iter().any(|a| a == example),
            "the collector's list for {variable} lacks {example}: {accepted:?}"
        );
        // docs/environment.md: the comma list in the row's second column.
        let row = environment_row(variable).unwrap_or_else(|e| panic!("{e}"));
        let mut documented: Vec<String> = code_spans(&row)
            .into_iter()
            .filter(|s| s.contains(','))
            .flat_map(|s| {
                s.split(',')
                    .map(|v| v.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        documented.sort();
        if documented != accepted {
            wrong.push(format!(
                "docs/environment.md, {variable}: documents {documented:?}, the collector accepts \
                 {accepted:?}"
            ));
        }
        // docs/pti-trace.md: the lower-case code spans of the option's row (a comma list, or one
        // span per value).
        let row = pti_trace_row(option).unwrap_or_else(|e| panic!("{e}"));
        let description = row.split(" | ").skip(1).collect::<Vec<_>>().join(" | ");
        let mut documented: Vec<String> = code_spans(&description)
            .into_iter()
            .flat_map(|s| {
                s.split(',')
                    .map(|v| v.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        documented.sort();
        if documented != accepted {
            wrong.push(format!(
                "docs/pti-trace.md, {option}: documents {documented:?}, the collector accepts \
                 {accepted:?}"
            ));
        }
        // pti-trace's own check of the option.
        let out = Command::new(pti_trace())
            .args([option, "no-such-item", "--", "true"])
            .output()
            .expect("run pti-trace");
        let mut own = known_list(&String::from_utf8_lossy(&out.stderr))
            .unwrap_or_else(|| panic!("pti-trace {option} no-such-item named no known list"));
        own.sort();
        if own != accepted {
            wrong.push(format!(
                "pti-trace {option} accepts {own:?}, its collector's {variable} {accepted:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every option `pti-trace --help` lists is in docs/pti-trace.md's option table, and every
/// option of the table is in `--help`.
#[test]
fn pti_trace_options_are_documented() {
    let help = options_of_help(&help());
    let doc = options_of_doc();
    assert!(
        help.contains("--output") && help.contains("-o"),
        "no -o/--output in --help's options: the parse is broken ({help:?})"
    );
    assert!(
        doc.contains("--output"),
        "no --output in docs/pti-trace.md's option table: the parse is broken ({doc:?})"
    );
    let undocumented: Vec<&String> = help.difference(&doc).collect();
    let unknown: Vec<&String> = doc.difference(&help).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "pti-trace --help and docs/pti-trace.md disagree:\n  in --help, not in the doc's option \
         table: {undocumented:?}\n  in the doc's option table, not in --help: {unknown:?}"
    );
}

/// The counts of functions README.md and docs/*.md state are those of the API-ID tables and of
/// the generated Level Zero code.
#[test]
fn stated_function_counts_are_the_tables() {
    let docs = all_docs();
    let level_zero = table_len("level_zero.tsv");
    let extension = constant(CALLBACKS, "EXTENSION_FUNCTIONS");
    let registered = registrations();
    let mut wrong = Vec::new();

    // docs/api-ids.md's table: functions per group.
    let api_ids = read("docs/api-ids.md");
    let mut groups = 0;
    for (group, table) in [
        ("PTI_API_GROUP_LEVELZERO", "level_zero.tsv"),
        ("PTI_API_GROUP_OPENCL", "opencl.tsv"),
        ("PTI_API_GROUP_SYCL", "sycl_ur.tsv"),
    ] {
        for row in table_rows(&api_ids) {
            if code_spans(&row[0]).first().map(String::as_str) == Some(group) {
                groups += 1;
                let n = table_len(table);
                if row.get(2).and_then(|c| c.parse::<u64>().ok()) != Some(n) {
                    wrong.push(format!(
                        "docs/api-ids.md: {group} has {:?} functions, pti-core/api-ids/{table} {n}",
                        row.get(2)
                    ));
                }
            }
        }
    }
    assert_eq!(groups, 3, "docs/api-ids.md's table lacks a group row");

    let mut check = |template: &str, want: &dyn Fn(&[u64]) -> Option<String>| {
        let mut found = 0;
        for (file, text) in &docs {
            for (numbers, context) in numbers_in(text, template) {
                found += 1;
                if let Some(why) = want(&numbers) {
                    wrong.push(format!("{file}: {context}: {why}"));
                }
            }
        }
        if found == 0 {
            wrong.push(format!(
                "no statement \"{template}\" in README.md or docs/ (reworded? update the test)"
            ));
        }
    };
    let is = |what: &'static str, n: u64| {
        move |numbers: &[u64]| (numbers[0] != n).then(|| format!("{what} is {n}"))
    };

    // The Level Zero ID table's size, and the published range.
    check(
        "of the ID table's {}",
        &is("pti-core/api-ids/level_zero.tsv's length", level_zero),
    );
    let published = last_published_level_zero_id();
    check(
        "the published PTI Level Zero IDs (1-{})",
        &is("level_zero.tsv's last ID below 4096", published),
    );
    check(
        "Intel's published PTI numbering (1-{}",
        &is("level_zero.tsv's last ID below 4096", published),
    );
    // The extension route's wrappers.
    let ext = "EXTENSION_FUNCTIONS (callbacks.rs)";
    check("graph functions: {} in all", &is(ext, extension));
    check("`zex_graph.h`): {} functions, traced", &is(ext, extension));
    check("and the {} libpti wraps", &is(ext, extension));
    check("plus the {} functions libpti wraps", &is(ext, extension));
    // What a 1.32 loader's tracing layer offers: the generated registration.
    let reg = "the generated registration's length (callbacks.rs)";
    check("{} with 1.32)", &is(reg, registered));
    check("{} on a 1.32 loader", &is(reg, registered));
    check("its {} registrations", &is(reg, registered));
    check("whose loader offers {})", &is(reg, registered));
    check("with a 1.32 loader, its {} and", &is(reg, registered));
    check("Its {} register functions", &is(reg, registered));
    check(
        "{} on 1.32, whose layer traces all but Intel's {})",
        &|n: &[u64]| {
            (n[0] != registered + n[1]).then(|| {
                format!(
                    "{} + Intel's {} (registered + not in the layer) is {}",
                    registered,
                    n[1],
                    registered + n[1]
                )
            })
        },
    );
    // Loader 1.8.12: its count is measured, not in the code; the statements must agree with it
    // and with each other.
    let mut on_1_8_12 = BTreeSet::new();
    for (_, text) in &docs {
        for template in [
            "{} with Debian's loader 1.8.12",
            "the {} its tracing layer offers",
            "{} on loader 1.8.12 (the one",
        ] {
            on_1_8_12.extend(numbers_in(text, template).into_iter().map(|(n, _)| n[0]));
        }
    }
    assert!(
        on_1_8_12.len() == 1,
        "README.md and docs/ give {} counts of what loader 1.8.12's tracing layer offers: \
         {on_1_8_12:?}",
        on_1_8_12.len()
    );
    let layer = *on_1_8_12.first().expect("one count");
    check("({} intercepted on loader 1.8.12", &|n: &[u64]| {
        (n[0] != layer + extension).then(|| {
            format!(
                "the layer's {layer} and the extension route's {extension} make {}",
                layer + extension
            )
        })
    });
    check("{} of the ID table's {}", &|n: &[u64]| {
        (n[0] + layer + extension != n[1]).then(|| {
            format!(
                "{} untraced + {layer} through the layer + {extension} on the extension route \
                 is not {}",
                n[0], n[1]
            )
        })
    });
    assert!(
        wrong.is_empty(),
        "stated counts disagree with the tables and the code:\n  {}",
        wrong.join("\n  ")
    );
}

/// docs/README.md names every document of docs/, every link of it leads to a file, and
/// README.md's "Documentation" section links the index (and RELIABILITY.md) with links that
/// lead to files.
#[test]
fn docs_index_is_complete() {
    let docs_dir = root().join("docs");
    let index = docs_dir.join("README.md");
    assert!(
        index.exists(),
        "docs/README.md is missing: docs/ needs an index of its documents"
    );
    let text = read("docs/README.md");
    let links = local_links(&text);
    let mut wrong = Vec::new();
    for link in &links {
        if !docs_dir.join(link).exists() {
            wrong.push(format!("docs/README.md links {link}, which does not exist"));
        }
    }
    let linked: BTreeSet<PathBuf> = links
        .iter()
        .filter_map(|l| docs_dir.join(l).canonicalize().ok())
        .collect();
    let documents = files("docs", &[".md"]);
    assert!(
        documents.len() > 5,
        "docs/ holds too few documents: {documents:?}"
    );
    for doc in documents {
        if doc == index {
            continue;
        }
        let doc = doc.canonicalize().expect("a listed file exists");
        if !linked.contains(&doc) {
            wrong.push(format!("docs/README.md does not list {}", doc.display()));
        }
    }
    let readme = read("README.md");
    let documentation = section(&readme, "README.md", "Documentation");
    let links = local_links(&documentation);
    for link in &links {
        if !root().join(link).exists() {
            wrong.push(format!(
                "README.md's Documentation links {link}, which does not exist"
            ));
        }
    }
    for must in ["docs/README.md", "docs/RELIABILITY.md"] {
        if !links.iter().any(|l| l == must) {
            wrong.push(format!(
                "README.md's Documentation section does not link {must}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn one_version_and_one_minimum_rust_version() {
    let manifest = read("Cargo.toml");
    let version =
        xtask::msrv::toml_value(&manifest, "workspace.package", "version").expect("a version");
    let msrv = xtask::msrv::toml_value(&manifest, "workspace.package", "rust-version")
        .expect("a rust-version");
    let wheel = xtask::msrv::toml_value(&read("pti-python/pyproject.toml"), "project", "version");
    assert_eq!(
        wheel.as_deref(),
        Some(version.as_str()),
        "the wheel's version"
    );
    let major = version.split('.').next().unwrap();
    let capi = read("pti-capi/build.rs");
    assert!(
        capi.contains("libpti.so.{major}") && capi.contains("CARGO_PKG_VERSION_MAJOR"),
        "the SONAME is libpti.so.<major> ({major})"
    );
    let stability = flat(&read("docs/stability.md"));
    assert!(
        stability.contains(&format!("Minimum supported Rust version: {msrv}**")),
        "docs/stability.md states another minimum Rust version than {msrv}"
    );
    assert!(
        stability.contains(&format!(
            "workspace's (`Cargo.toml`, `[workspace.package]`), {version}"
        )),
        "docs/stability.md states another version than {version}"
    );
    assert!(
        flat(&read("README.md")).contains(&format!("({msrv} or newer, the minimum supported")),
        "README.md states another minimum Rust version than {msrv}"
    );
}

/// The test files of the workspace: integration-test roots and their modules (`<crate>/tests/`,
/// the workspace's `tests/` and its subdirectories of modules) and the wheel's pytest files.
fn test_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        "tests",
        "tests/pti_trace",
        "tests/beside_intel_pti",
        "pti-core/tests",
        "pti-capi/tests",
        "libpti/tests",
        "xtask/tests",
        "pti-python/tests",
    ] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let test = (name.ends_with(".rs") && name != "support.rs")
                || (name.starts_with("test_") && name.ends_with(".py"));
            if test && e.path().is_file() {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_architecture_names_every_test_file() {
    let text = read("docs/ARCHITECTURE.md");
    let tests = section(&text, "docs/ARCHITECTURE.md", "Tests");
    let rows = table_rows(&tests);
    let files = test_files();
    assert!(files.len() > 40, "found only {files:?}");
    let unnamed: Vec<&String> = files
        .iter()
        .filter(|f| {
            let (dir, name) = f.rsplit_once('/').unwrap();
            let stem = name.trim_end_matches(".rs");
            !tests.contains(f.as_str())
                && !rows.iter().any(|row| {
                    let first = &row[0];
                    // `dir/name`, `name` in a row of `dir`, or `dir/{a,stem,b}.rs`.
                    let in_braces = [
                        format!("{{{stem},"),
                        format!(",{stem},"),
                        format!(",{stem}}}"),
                    ]
                    .iter()
                    .any(|p| first.contains(p.as_str()));
                    let any_pytest = name.starts_with("test_") && first.contains("test_*.py");
                    first.contains(dir) && (first.contains(name) || in_braces || any_pytest)
                })
        })
        .collect();
    assert!(
        unnamed.is_empty(),
        "docs/ARCHITECTURE.md's Tests table names no row for {unnamed:?}"
    );
}
