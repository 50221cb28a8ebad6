//! Who may use whom inside pti-core, checked on the sources (docs/ARCHITECTURE.md, "Layers"):
//!
//! - the engine (every module but `backend` and `session`) names neither the backends nor the
//!   session;
//! - a backend (`backend/opencl`, `backend/level_zero`, `backend/sycl`) names no other backend and
//!   not the session;
//! - what the backends share (`backend/device`, `backend/contract.rs`) names no backend and not
//!   the session.
//!
//! So no import circle spans the engine and a backend, nor two backends: every path a file
//! names leads to the same layer or a lower one. The check reads `crate::` paths, grouped imports
//! (`use crate::{backend, view}`) included, with comments left out.

use std::path::{Path, PathBuf};

const BACKENDS: [&str; 3] = ["opencl", "level_zero", "sycl"];

/// Every `.rs` file under `dir`, with its path relative to `pti-core/src`.
fn sources(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((rel, strip_comments(&text)));
        }
    }
}

/// The code without `//` comments (line, doc and inner doc comments).
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a file's `crate::` paths name first under `crate` (`crate::view::x` -> `view`,
/// `crate::{backend, view}` -> both), and the backends it names (`crate::backend::opencl`,
/// `crate::backend::{opencl, ...}`).
fn named(code: &str) -> (Vec<String>, Vec<String>) {
    let mut top = Vec::new();
    let mut backends = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let group: Vec<String> = if let Some(inner) = rest.strip_prefix('{') {
            let end = matching_brace(inner);
            split_group(&inner[..end])
        } else {
            vec![path_head(rest).to_string()]
        };
        for path in group {
            let mut parts = path.split("::").map(str::trim);
            let head = parts.next().unwrap_or_default().to_string();
            if head == "backend" {
                let next = parts.next().unwrap_or_default();
                let names: Vec<String> = match next.strip_prefix('{') {
                    Some(g) => split_group(g.trim_end_matches('}')),
                    None => vec![next.to_string()],
                };
                for n in names {
                    let n = n.split("::").next().unwrap_or_default().trim().to_string();
                    if BACKENDS.contains(&n.as_str()) {
                        backends.push(n);
                    }
                }
            }
            top.push(head);
        }
    }
    (top, backends)
}

fn path_head(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{' || c == '}'))
        .unwrap_or(s.len());
    &s[..end]
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The paths of a `{a, b::c, d::{e, f}}` group, top level only (`d::{e, f}` stays one path).
fn split_group(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim().to_string());
    out.retain(|p| !p.is_empty());
    out
}

/// The layer of a file: `engine`, `shared` (backend/device, backend/contract.rs, backend/mod.rs),
/// `backend:<name>`, or `session`.
fn layer(rel: &str) -> String {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        ["session", ..] => "session".into(),
        ["backend", b, ..] if BACKENDS.contains(b) => format!("backend:{b}"),
        ["backend", ..] => "shared".into(),
        _ => "engine".into(),
    }
}

#[test]
fn the_engine_knows_no_backend_and_no_backend_knows_another() {
    let base: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&base, &base, &mut files);
    assert!(files.len() > 50, "read only {} files", files.len());
    let mut broken = Vec::new();
    for (rel, code) in &files {
        let layer = layer(rel);
        let (top, backends) = named(code);
        let names_session = top.iter().any(|t| t == "session");
        let names_backend = top.iter().any(|t| t == "backend");
        match layer.as_str() {
            // lib.rs declares the modules; it uses none of them.
            _ if rel == "lib.rs" => {}
            "engine" if names_backend || names_session => broken.push(format!(
                "{rel} (engine) names crate::backend or crate::session"
            )),
            "shared" if names_session || !backends.is_empty() => broken.push(format!(
                "{rel} (shared by the backends) names {backends:?} or the session"
            )),
            l if l.starts_with("backend:") => {
                let own = &l["backend:".len()..];
                if names_session {
                    broken.push(format!("{rel} ({l}) names the session"));
                }
                for other in backends.iter().filter(|b| b.as_str() != own) {
                    broken.push(format!("{rel} ({l}) names the backend {other}"));
                }
            }
            _ => {}
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_check_sees_what_it_must() {
    let (top, backends) = named("use crate::{backend::{opencl, level_zero::x}, view};");
    assert_eq!(top, ["backend", "view"]);
    assert_eq!(backends, ["opencl", "level_zero"]);
    let (top, backends) = named("let t = crate::backend::sycl::current();");
    assert_eq!(
        (top, backends),
        (vec!["backend".to_string()], vec!["sycl".to_string()])
    );
    let (top, _) = named("// crate::session in a comment\n");
    assert!(top.is_empty() || strip_comments("// crate::session").is_empty());
    assert_eq!(layer("backend/device/pending.rs"), "shared");
    assert_eq!(layer("backend/opencl/overrides.rs"), "backend:opencl");
    assert_eq!(layer("view/mod.rs"), "engine");
}
