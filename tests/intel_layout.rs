//! Intel PTI 1.2's C ABI, fact by fact, against libpti's Intel-face headers (`-Iinclude/pti-intel
//! -Iinclude`, as `pkg-config pti_view` gives them): every header Intel installs, every
//! enumerator's value, every macro's integer value, and every typedef's size and alignment, every
//! field's offset and size, and every struct's, union's and enum's tag.
//!
//! The facts are data in `tests/abi/intel_pti_1.2.0_layout.txt`, made from Intel's headers and
//! library by `tests/abi/intel_layout.py` (its doc and the table's first lines say how and from
//! what). Intel's headers are not needed here: this test turns each fact of the table into one line
//! of a C program, compiles it against libpti's headers and compares what it prints with the
//! table. libpti's headers may declare more (its own constants, API IDs from 4096) but every fact
//! of Intel's must hold. A name libpti's headers lack makes its line fail to compile: the
//! compiler's errors name the lines, those facts are set aside as missing and the rest compiled
//! again, so one run reports every difference, missing or different.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use pti_tests::{out_dir, root, run_ok};

const TABLE: &str = "tests/abi/intel_pti_1.2.0_layout.txt";
/// libpti's Intel-face include path, in its order.
const INCLUDE: [&str; 2] = ["include/pti-intel", "include"];

/// The C helpers of the facts program, as `tests/abi/intel_layout.py` emits them: `FACT` prints
/// a label and an integer, signed or not as its type is.
const PRELUDE: &str = r#"#include <stddef.h>
#include <stdio.h>
#define LAYOUT_SIGNED(x) _Generic((x), _Bool: 0, unsigned char: 0, unsigned short: 0, \
  unsigned int: 0, unsigned long: 0, unsigned long long: 0, default: 1)
static void fact(const char *label, int is_signed, long long s, unsigned long long u) {
  if (is_signed) printf("%s %lld\n", label, s); else printf("%s %llu\n", label, u);
}
#define FACT(label, x) fact(label, LAYOUT_SIGNED(x), (long long)(x), (unsigned long long)(x))
"#;

/// One line of the table: `header <path>`, or a label and the value Intel's headers give it.
struct Fact {
    label: String,
    value: Option<String>,
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn read_table() -> Vec<Fact> {
    let text = std::fs::read_to_string(root().join(TABLE))
        .unwrap_or_else(|e| panic!("cannot read {TABLE}: {e}"));
    let facts: Vec<Fact> = text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            if words[0] == "header" {
                assert!(words.len() == 2, "{TABLE}: bad line {line:?}");
                return Fact {
                    label: line.to_string(),
                    value: None,
                };
            }
            let (label, value) = line.rsplit_once(' ').expect("a fact has a value");
            assert!(
                value.parse::<i128>().is_ok(),
                "{TABLE}: {line:?}: the value is not an integer"
            );
            Fact {
                label: label.to_string(),
                value: Some(value.to_string()),
            }
        })
        .collect();
    let kinds: BTreeSet<&str> = facts
        .iter()
        .map(|f| f.label.split(' ').next().unwrap())
        .collect();
    let expected = [
        "align",
        "define",
        "enum",
        "fieldsize",
        "header",
        "offset",
        "size",
        "tag",
    ];
    assert_eq!(
        kinds,
        expected.into_iter().collect(),
        "{TABLE}: the kinds of fact"
    );
    facts
}

/// The C expression whose value a fact's label names.
fn expression(label: &str) -> String {
    let words: Vec<&str> = label.split(' ').collect();
    let names = match words.as_slice() {
        ["tag", _, kind, _] => {
            assert!(
                ["struct", "union", "enum"].contains(kind),
                "{TABLE}: {label:?}"
            );
            vec![words[1], words[3]]
        }
        [_, rest @ ..] => rest.to_vec(),
        [] => vec![],
    };
    assert!(
        !names.is_empty() && names.iter().all(|n| is_identifier(n)),
        "{TABLE}: {label:?} does not name C identifiers"
    );
    match words.as_slice() {
        ["size", t] => format!("sizeof({t})"),
        ["align", t] => format!("_Alignof({t})"),
        ["offset", t, f] => format!("offsetof({t}, {f})"),
        ["fieldsize", t, f] => format!("sizeof((({t} *)0)->{f})"),
        ["tag", t, kind, tag] => format!("_Generic(({t} *)0, {kind} {tag} *: 1, default: 0)"),
        ["enum", _, constant] | ["define", constant] => constant.to_string(),
        _ => panic!("{TABLE}: unknown fact {label:?}"),
    }
}

/// Where libpti's include path finds `header`, if anywhere.
fn find_header(header: &str) -> Option<String> {
    INCLUDE
        .iter()
        .map(|dir| format!("{dir}/{header}"))
        .find(|path| root().join(path).exists())
}

/// The facts program for `facts` (label, expression), and the source line of each fact.
fn program(headers: &[&str], facts: &[(&str, String)]) -> (String, BTreeMap<usize, usize>) {
    let mut source = String::from(PRELUDE);
    for header in headers {
        source.push_str(&format!("#include <{header}>\n"));
    }
    let mut lines = BTreeMap::new();
    let first = source.lines().count() + 1;
    for (i, (label, expr)) in facts.iter().enumerate() {
        lines.insert(first + i, i);
        source.push_str(&format!(
            "static void f{i}(void) {{ FACT(\"{label}\", {expr}); }}\n"
        ));
    }
    source.push_str("int main(void) {\n");
    for i in 0..facts.len() {
        source.push_str(&format!("  f{i}();\n"));
    }
    source.push_str("  return 0;\n}\n");
    (source, lines)
}

/// The lines of `source_name` that `stderr` reports errors on, with the first message of each.
fn error_lines(stderr: &str, source_name: &str) -> BTreeMap<usize, String> {
    let mut errors = BTreeMap::new();
    for line in stderr.lines() {
        let Some((place, message)) = line
            .split_once(": error: ")
            .or_else(|| line.split_once(": fatal error: "))
        else {
            continue;
        };
        let mut parts = place.rsplitn(3, ':');
        let (_column, line_number, file) = (parts.next(), parts.next(), parts.next());
        let line_number = line_number.and_then(|n| n.parse::<usize>().ok());
        match (file, line_number) {
            (Some(file), Some(n)) if file.ends_with(source_name) => {
                errors.entry(n).or_insert_with(|| message.to_string());
            }
            _ => panic!(
                "an error outside the generated lines (libpti's headers do not compile?):\n{stderr}"
            ),
        }
    }
    errors
}

#[test]
fn intel_pti_1_2_facts_hold_in_libpti_intel_face_headers() {
    let table = read_table();
    let mut differences = Vec::new();

    let mut headers = Vec::new();
    for fact in table.iter().filter(|f| f.value.is_none()) {
        let header = fact.label.strip_prefix("header ").unwrap();
        match find_header(header) {
            Some(_) => headers.push(header),
            None => differences.push(format!(
                "{}: Intel installs it; libpti's include path ({}) has none",
                fact.label,
                INCLUDE.join(", ")
            )),
        }
    }
    let valued: Vec<(&str, &str)> = table
        .iter()
        .filter_map(|f| f.value.as_deref().map(|v| (f.label.as_str(), v)))
        .collect();

    // Compile, set aside the facts whose lines do not compile, and again until it builds.
    let dir = out_dir().join("intel_layout");
    std::fs::create_dir_all(&dir).unwrap();
    let source_path = dir.join("intel_layout.c");
    let exe = dir.join("intel_layout");
    let mut live: Vec<(&str, String)> = valued
        .iter()
        .map(|(label, _)| (*label, expression(label)))
        .collect();
    let mut missing: BTreeMap<&str, String> = BTreeMap::new();
    for round in 0.. {
        assert!(round < 20, "the facts program still does not compile");
        let (source, lines) = program(&headers, &live);
        std::fs::write(&source_path, source).unwrap();
        let mut cc = Command::new("cc");
        cc.current_dir(root())
            .env("LC_ALL", "C")
            .args(["-std=c11", "-Wall"])
            // libpti's pti_view.h asserts its own record layouts under this guard (the C tests
            // build with them): set aside here, so that a layout unlike Intel's is listed fact
            // by fact instead of stopping the build at the first assertion.
            .arg("-DPTI_VIEW_LAYOUT_CHECKS_")
            .args(INCLUDE.map(|dir| format!("-I{dir}")))
            .arg(&source_path)
            .arg("-o")
            .arg(&exe);
        let output = cc
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cc:?}: {e}"));
        if output.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let errors = error_lines(&stderr, "intel_layout.c");
        let failing: BTreeSet<usize> = errors
            .iter()
            .map(|(line, message)| {
                let i = *lines.get(line).unwrap_or_else(|| {
                    panic!("an error on line {line}, which holds no fact:\n{stderr}")
                });
                missing.entry(live[i].0).or_insert_with(|| message.clone());
                i
            })
            .collect();
        assert!(!failing.is_empty(), "{cc:?} failed:\n{stderr}");
        let mut i = 0;
        live.retain(|_| {
            i += 1;
            !failing.contains(&(i - 1))
        });
    }

    let output = run_ok(&mut Command::new(&exe));
    let printed: BTreeMap<&str, &str> = std::str::from_utf8(&output.stdout)
        .expect("the facts program prints ASCII")
        .lines()
        .map(|line| line.rsplit_once(' ').expect("label and value"))
        .collect();
    assert_eq!(
        printed.len() + missing.len(),
        valued.len(),
        "every fact is printed or missing"
    );
    for (label, intel) in &valued {
        match (printed.get(label), missing.get(label)) {
            (Some(ours), None) if ours == intel => {}
            (Some(ours), None) => {
                differences.push(format!("{label}: Intel {intel}; libpti {ours}"));
            }
            (None, Some(error)) => differences.push(format!(
                "{label}: Intel {intel}; libpti's headers: does not compile ({error})"
            )),
            _ => unreachable!("{label} is printed or missing, not both"),
        }
    }

    let report = dir.join("differences.txt");
    std::fs::write(&report, differences.join("\n") + "\n").unwrap();
    println!(
        "{} facts of Intel's ({} headers, {} valued) checked against libpti's Intel-face headers: \
         {} hold, {} differ (listed in {})",
        table.len(),
        headers.len(),
        valued.len(),
        table.len() - differences.len(),
        differences.len(),
        display(&report),
    );
    assert!(
        differences.is_empty(),
        "{} of Intel PTI 1.2's facts ({TABLE}) do not hold in libpti's Intel-face headers:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

fn display(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}
