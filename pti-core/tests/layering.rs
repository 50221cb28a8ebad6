//! Who may use whom inside pti-core, checked on the sources (docs/ARCHITECTURE.md, "Layers"):
//!
//! - the engine (every module but `backend` and `session`) names neither the backends nor the
//!   session;
//! - a backend (`backend/opencl`, `backend/level_zero`, `backend/sycl`) names no other backend and
//!   not the session;
//! - what the backends share (`backend/device`, `backend/contract.rs`) names no backend and not
//!   the session;
//! - the session names of the backends only their contract (`backend::contract`) and each
//!   backend's contract object (`backend::opencl::OpenCl`): never `backend::device` nor a
//!   backend's inner modules.
//!
//! So no import circle spans the engine and a backend, nor two backends: every path a file
//! names leads to the same layer or a lower one. The check reads `crate::` paths, grouped imports
//! (`use crate::{backend, view}`) included, with comments left out.
//!
//! And no import circle joins pti-core's modules (the first component of a file's path: `view`
//! for `view/buffer.rs`, `log` for `log.rs`): the modules and the `crate::` paths between them
//! form a graph without a cycle, so each module can be read, tested and changed with only the
//! ones below it in mind. Files of one module may use each other.

use std::collections::{BTreeMap, BTreeSet};
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
/// `crate::{backend, view}` -> both; one entry for consecutive paths of one module), and the
/// backends it names (`crate::backend::opencl`, `crate::backend::{opencl, ...}`), read from the
/// paths [`expanded`] gives.
fn named(code: &str) -> (Vec<String>, Vec<String>) {
    let mut top: Vec<String> = Vec::new();
    let mut backends = Vec::new();
    for path in expanded(code) {
        let mut parts = path.split("::").map(str::trim);
        let head = parts.next().unwrap_or_default();
        if head == "backend"
            && let Some(backend) = parts.next().filter(|b| BACKENDS.contains(b))
        {
            backends.push(backend.to_string());
        }
        if top.last().map(String::as_str) != Some(head) {
            top.push(head.to_string());
        }
    }
    (top, backends)
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
    let files = engine_sources();
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

/// Every `crate::` path of `code`, its groups expanded (`crate::a::{b, c::{d, e}}` gives `a::b`,
/// `a::c::d`, `a::c::e`).
fn expanded(code: &str) -> Vec<String> {
    fn expand(prefix: &str, rest: &str, out: &mut Vec<String>) {
        match rest.find('{') {
            Some(open) if !rest[..open].contains(',') => {
                let end = open + 1 + matching_brace(&rest[open + 1..]);
                let head = format!("{prefix}{}", &rest[..open]);
                for part in split_group(&rest[open + 1..end]) {
                    expand(&head, &part, out);
                }
            }
            _ => out.push(format!("{prefix}{}", rest.trim())),
        }
    }
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        expand("", whole_path(rest).trim_end_matches("::"), &mut out);
    }
    out
}

/// The path at the start of `s`, a group included (`a::{b, c}` of `a::{b, c};`).
fn whole_path(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(s.len());
    match s[end..].strip_prefix('{') {
        Some(group) => &s[..(end + 1 + matching_brace(group) + 1).min(s.len())],
        None => &s[..end],
    }
}

/// Whether the session may name this path under `backend::`: the contract, or a backend's
/// contract object (a type: `level_zero::LevelZero`).
fn session_may_name(under_backend: &str) -> bool {
    let parts: Vec<&str> = under_backend.split("::").collect();
    match parts.as_slice() {
        ["contract", ..] => true,
        [b, t] => BACKENDS.contains(b) && t.starts_with(|c: char| c.is_ascii_uppercase()),
        _ => false,
    }
}

#[test]
fn the_session_reaches_the_backends_through_their_contract_only() {
    let mut broken = Vec::new();
    for (rel, code) in engine_sources() {
        if layer(&rel) != "session" {
            continue;
        }
        for path in expanded(&code) {
            if let Some(under) = path.strip_prefix("backend::")
                && !session_may_name(under)
            {
                broken.push(format!("{rel} names crate::{path}"));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    // What the check refuses and allows.
    let paths = expanded("use crate::backend::{device::{harvester, pending}, opencl::OpenCl};");
    assert_eq!(
        paths,
        [
            "backend::device::harvester",
            "backend::device::pending",
            "backend::opencl::OpenCl"
        ]
    );
    assert!(!session_may_name("device::pending"));
    assert!(!session_may_name(
        "level_zero::tracer::attaches_at_run_time"
    ));
    assert!(session_may_name("level_zero::LevelZero"));
    assert!(session_may_name("contract::{Activation, SHARED}"));
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
    assert_eq!(layer("backend/opencl/overrides/queue.rs"), "backend:opencl");
    assert_eq!(layer("view/mod.rs"), "engine");
}

/// The module a file belongs to: the first component of its path under `src`.
fn module_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// For each module, the other modules its files name, with the files that name each.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_graph(files: &[(String, String)]) -> Graph {
    let modules: BTreeSet<&str> = files.iter().map(|(rel, _)| module_of(rel)).collect();
    let mut graph = Graph::new();
    for (rel, code) in files {
        // lib.rs declares and re-exports every module: the crate's root, no module of its own.
        if rel == "lib.rs" {
            continue;
        }
        let from = module_of(rel);
        let edges = graph.entry(from.to_string()).or_default();
        let (top, _) = named(code);
        for to in top {
            if to != from && modules.contains(to.as_str()) {
                edges.entry(to).or_default().insert(rel.clone());
            }
        }
    }
    graph
}

/// The graph's circles: its strongly connected components of more than one module (Tarjan's
/// algorithm), each sorted, in the order found.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(lw));
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    self.low.entry(v).and_modify(|l| *l = (*l).min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|m| *m == v).unwrap();
                let mut members: Vec<String> = self.stack.drain(at..).map(str::to_string).collect();
                if members.len() > 1 {
                    members.sort();
                    self.found.push(members);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// A circle's members and the edges among them, with the files that make each edge.
fn describe(graph: &Graph, circle: &[String]) -> String {
    let mut out = format!("circle of {} modules: {}", circle.len(), circle.join(", "));
    for from in circle {
        for (to, files) in graph.get(from).into_iter().flatten() {
            if circle.contains(to) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                out += &format!("\n  {from} -> {to} ({})", files.join(", "));
            }
        }
    }
    out
}

fn engine_sources() -> Vec<(String, String)> {
    let base: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&base, &base, &mut files);
    assert!(files.len() > 50, "read only {} files", files.len());
    files
}

#[test]
fn no_import_circle_joins_the_modules() {
    let graph = module_graph(&engine_sources());
    assert!(graph.len() > 20, "only {} modules", graph.len());
    let found = circles(&graph);
    let text: Vec<String> = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(found.is_empty(), "{}", text.join("\n"));
}

#[test]
fn the_circle_check_sees_a_planted_circle() {
    // A made-up crate: a -> b -> c -> a (grouped and nested paths); d below the circle, e above.
    let made_up = [
        ("a.rs", "use crate::b::X;"),
        ("b/mod.rs", "use crate::{c, d::Y};"),
        (
            "b/inner.rs",
            "fn f() { crate::b::g() } // crate::e in a comment",
        ),
        ("c.rs", "pub fn h() { crate::a::g(); }"),
        ("d.rs", "pub struct Y;"),
        ("e.rs", "use crate::c::h;"),
    ];
    let files: Vec<(String, String)> = made_up
        .iter()
        .map(|(r, c)| (r.to_string(), strip_comments(c)))
        .collect();
    let graph = module_graph(&files);
    assert_eq!(circles(&graph), [["a", "b", "c"]]);
    // e -> c does not join it, nor does a comment; b's own files make no edge.
    assert!(!graph["b"].contains_key("b") && !graph["b"].contains_key("e"));
    // One planted line in the real sources: the thread state naming the view (as it did before
    // the view's buffer storage moved to `lent`) closes a circle through view -> thread.
    let mut real = engine_sources();
    let thread = real.iter_mut().find(|(rel, _)| rel == "thread.rs").unwrap();
    thread.1.push_str("\nuse crate::view::Buffer;\n");
    let graph = module_graph(&real);
    let found = circles(&graph);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains(&"thread".to_string()) && found[0].contains(&"view".to_string()));
    let text = describe(&graph, &found[0]);
    assert!(text.contains("thread -> view (thread.rs)"), "{text}");
}
