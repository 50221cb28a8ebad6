//! The API-ID generator: `pti-core/api-ids/<group>.tsv` (lines of `id<TAB>function`) becomes
//! `pti-core/src/ids/<group>.rs` (a name table and one constant per function) and the C header
//! that declares `<function>_id` enumerators, named as the published PTI headers name them.
//! `pti-core/api-ids/classes.tsv` (`<group><TAB><function><TAB><class>`) becomes
//! `pti-core/src/ids/classes.rs`, the members of each API class.
//!
//! `pti-core/api-ids/intel_level_zero.tsv` (`id<TAB>function`) lists the Level Zero functions
//! that Intel PTI numbered after libpti had (libpti's IDs from 4096), with Intel's numbers, as
//! Intel PTI 1.2's library names them (`ptiViewGetApiIdName`; `tests/abi/intel_pti_1.2.0_layout.txt`
//! holds them as facts). It becomes `pti-core/src/ids/intel_level_zero.rs`, the renumbering
//! that libpti's Intel face applies, and the Intel face's Level Zero ID header
//! `include/pti-intel/pti/pti_driver_levelzero_api_ids.h`, Intel's numbers where Intel has one.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::GeneratedFile;

/// One API group's table and where its outputs go.
struct Group {
    /// Data file stem and Rust module name.
    stem: &'static str,
    rust_module: &'static str,
    /// Human name, for comments.
    title: &'static str,
    /// The `pti_api_group_id` enumerator.
    c_group: &'static str,
    header: &'static str,
    guard: &'static str,
    /// C enum tag; the typedef is the same name without the leading underscore.
    c_enum: &'static str,
    /// The enumerator of ID 0, which no function has (Intel PTI's headers name it so since 0.12:
    /// tools built for them may use it).
    reserved: &'static str,
}

const GROUPS: [Group; 3] = [
    Group {
        stem: "level_zero",
        rust_module: "level_zero",
        title: "Level Zero",
        c_group: "PTI_API_GROUP_LEVELZERO",
        header: "pti_driver_levelzero_api_ids.h",
        guard: "PTI_DRIVER_LEVELZERO_API_IDS_H_",
        c_enum: "_pti_api_id_driver_levelzero",
        reserved: "reserved_driver_levelzero_id",
    },
    Group {
        stem: "opencl",
        rust_module: "opencl",
        title: "OpenCL",
        c_group: "PTI_API_GROUP_OPENCL",
        header: "pti_driver_opencl_api_ids.h",
        guard: "PTI_DRIVER_OPENCL_API_IDS_H_",
        c_enum: "_pti_api_id_driver_opencl",
        reserved: "reserved_driver_opencl_id",
    },
    Group {
        stem: "sycl_ur",
        rust_module: "sycl",
        title: "SYCL (Unified Runtime)",
        c_group: "PTI_API_GROUP_SYCL",
        header: "pti_runtime_sycl_api_ids.h",
        guard: "PTI_RUNTIME_SYCL_API_IDS_H_",
        c_enum: "_pti_api_id_runtime_sycl",
        reserved: "reserved_runtime_sycl_id",
    },
];

/// A parsed table: (id, function name), in file order.
pub type Table = Vec<(u32, String)>;

/// Parses and checks one data file: IDs positive and unique, names unique C identifiers.
pub fn parse_table(text: &str, origin: &str) -> Result<Table, String> {
    let mut table = Table::new();
    let (mut ids, mut names) = (HashSet::new(), HashSet::new());
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{origin}:{}", n + 1);
        let (id, name) = line
            .split_once('\t')
            .ok_or_else(|| format!("{}: expected `id<TAB>name`", at()))?;
        let id: u32 = id.parse().map_err(|_| format!("{}: bad id {id:?}", at()))?;
        let is_ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if id == 0 || !is_ident {
            return Err(format!(
                "{}: id 0 is reserved and names must be C identifiers",
                at()
            ));
        }
        if !ids.insert(id) || !names.insert(name.to_string()) {
            return Err(format!("{}: duplicate id {id} or name {name}", at()));
        }
        table.push((id, name.to_string()));
    }
    Ok(table)
}

/// Reads `pti-core/api-ids/<stem>.tsv`.
pub fn read_table(root: &Path, stem: &str) -> Result<Table, String> {
    let path = root.join("pti-core/api-ids").join(format!("{stem}.tsv"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_table(&text, &path.display().to_string())
}

/// The Rust modules and C headers of every group, and the class table.
pub fn generate(root: &Path) -> Result<Vec<GeneratedFile>, String> {
    let mut files = Vec::new();
    let mut tables = Vec::new();
    for group in &GROUPS {
        let table = read_table(root, group.stem)?;
        tables.push(table.clone());
        files.push(GeneratedFile {
            path: format!("pti-core/src/ids/{}.rs", group.rust_module).into(),
            contents: render_rust(group, &table),
        });
        files.push(GeneratedFile {
            path: format!("include/pti/{}", group.header).into(),
            contents: render_c(group, &table),
        });
    }
    let renumbered = read_intel_renumbering(root, &tables[0])?;
    files.push(GeneratedFile {
        path: "pti-core/src/ids/intel_level_zero.rs".into(),
        contents: render_intel_rust(&renumbered),
    });
    files.push(GeneratedFile {
        path: format!("include/pti-intel/pti/{}", GROUPS[0].header).into(),
        contents: render_intel_c(&tables[0], &renumbered),
    });
    let classes_path = root.join("pti-core/api-ids/classes.tsv");
    let classes = std::fs::read_to_string(&classes_path)
        .map_err(|e| format!("{}: {e}", classes_path.display()))?;
    files.push(GeneratedFile {
        path: "pti-core/src/ids/classes.rs".into(),
        contents: render_classes(&classes, &tables)?,
    });
    Ok(files)
}

/// One Level Zero function Intel PTI numbers otherwise: `(libpti's ID, Intel's ID, name)`.
type Renumbered = Vec<(u32, u32, String)>;

/// Reads `intel_level_zero.tsv` and checks it against the Level Zero table: each function is
/// libpti's from 4096, and its Intel ID (below 4096) names no other function of the table.
fn read_intel_renumbering(root: &Path, level_zero: &Table) -> Result<Renumbered, String> {
    let intel = read_table(root, "intel_level_zero")?;
    let mut renumbered = Renumbered::new();
    for (intel_id, name) in intel {
        let at = format!("intel_level_zero.tsv: {intel_id} {name}");
        let ours = level_zero
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| *id)
            .ok_or(format!("{at}: not in level_zero.tsv"))?;
        if ours < 4096 || intel_id >= 4096 {
            return Err(format!(
                "{at}: libpti numbers it {ours}; only libpti's own IDs (from 4096) are renumbered, \
                 to Intel's (below 4096)"
            ));
        }
        if let Some((_, other)) = level_zero.iter().find(|(id, _)| *id == intel_id) {
            return Err(format!("{at}: libpti's {intel_id} is {other}"));
        }
        renumbered.push((ours, intel_id, name));
    }
    renumbered.sort();
    Ok(renumbered)
}

fn render_intel_rust(renumbered: &Renumbered) -> String {
    let mut out = format!(
        "// @generated by `cargo xtask gen` from pti-core/api-ids/intel_level_zero.tsv. Do not edit by hand.\n\
         //! The Level Zero functions Intel PTI numbers otherwise than libpti (libpti's IDs from\n\
         //! 4096), with Intel's numbers: what libpti's Intel face writes and accepts instead.\n\n\
         use crate::api::ApiId;\n\n\
         /// `(libpti's ID, Intel PTI's ID)`, by libpti's ID.\n\
         pub(crate) static RENUMBERED: [(ApiId, ApiId); {}] = [\n",
        renumbered.len()
    );
    for (ours, intel, name) in renumbered {
        let _ = writeln!(out, "    ({ours}, {intel}), // {name}");
    }
    out.push_str("];\n");
    out
}

/// The Intel face's Level Zero ID header: the table with Intel's numbers where Intel has one, in
/// ID order.
fn render_intel_c(level_zero: &Table, renumbered: &Renumbered) -> String {
    let mut table: Table = level_zero
        .iter()
        .map(|(id, name)| {
            let intel = renumbered.iter().find(|(ours, ..)| ours == id);
            (intel.map_or(*id, |(_, intel, _)| *intel), name.clone())
        })
        .collect();
    table.sort();
    render_c(&GROUPS[0], &table).replacen(
        "pti-core/api-ids/level_zero.tsv. Do not edit by hand. */\n",
        "pti-core/api-ids/level_zero.tsv and intel_level_zero.tsv. Do not edit by hand. */\n\
         /* libpti's Intel face (libpti_view.so.1): Intel PTI's numbers where Intel has one. */\n",
        1,
    )
}

/// `(class name in classes.tsv, Rust variant of api::ApiClass)`.
const CLASSES: [(&str, &str); 2] = [
    ("gpu_operation_core", "GpuOperationCore"),
    (
        "host_operation_synchronization",
        "HostOperationSynchronization",
    ),
];

fn render_classes(text: &str, tables: &[Table]) -> Result<String, String> {
    let mut members: Vec<Vec<Vec<(u32, String)>>> =
        vec![vec![Vec::new(); CLASSES.len()]; GROUPS.len()];
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
    {
        let at = format!("classes.tsv:{}", n + 1);
        let fields: Vec<&str> = line.split('\t').collect();
        let [stem, function, class] = fields[..] else {
            return Err(format!("{at}: expected `group<TAB>function<TAB>class`"));
        };
        let g = GROUPS
            .iter()
            .position(|g| g.stem == stem)
            .ok_or(format!("{at}: unknown table {stem}"))?;
        let c = CLASSES
            .iter()
            .position(|(name, _)| *name == class)
            .ok_or(format!("{at}: unknown class {class}"))?;
        let id = tables[g]
            .iter()
            .find(|(_, name)| name == function)
            .map(|(id, _)| *id)
            .ok_or(format!("{at}: {function} is not in {stem}.tsv"))?;
        members[g][c].push((id, function.to_string()));
    }
    let mut out = String::from(
        "// @generated by `cargo xtask gen` from pti-core/api-ids/classes.tsv. Do not edit by hand.\n\
         //! The members of each API class (`pti_api_class`), per API group.\n\n\
         use crate::api::{ApiClass, ApiGroup, ApiId};\n\n\
         /// The functions of `group` that belong to `class`, in ID order.\n\
         pub(crate) fn members(group: ApiGroup, class: ApiClass) -> &'static [ApiId] {\n    match (group, class) {\n",
    );
    for (g, group) in GROUPS.iter().enumerate() {
        let rust_group = match group.rust_module {
            "level_zero" => "LevelZero",
            "opencl" => "OpenCl",
            _ => "Sycl",
        };
        for (c, (_, variant)) in CLASSES.iter().enumerate() {
            let mut list = members[g][c].clone();
            list.sort();
            let _ = writeln!(
                out,
                "        (ApiGroup::{rust_group}, ApiClass::{variant}) => &["
            );
            for (id, name) in list {
                let _ = writeln!(out, "            {id}, // {name}");
            }
            out.push_str("        ],\n");
        }
    }
    out.push_str("    }\n}\n");
    Ok(out)
}

fn render_rust(group: &Group, table: &Table) -> String {
    let max = table.iter().map(|(id, _)| *id).max().unwrap_or(0);
    let mut out = String::new();
    // Filled in a const block, one line per function: a table with libpti's own IDs (from
    // 4096) would otherwise list thousands of `None`s.
    let _ = writeln!(
        out,
        "// @generated by `cargo xtask gen` from pti-core/api-ids/{}.tsv. Do not edit by hand.\n\
         //! API IDs of the {} group (`{}`): one constant per function, named as the function.\n\
         #![allow(non_upper_case_globals)]\n\n\
         use core::ffi::CStr;\n\n\
         use crate::api::ApiId;\n\n\
         /// The highest ID of the table.\n\
         pub const MAX_ID: ApiId = {max};\n\n\
         /// `NAMES[id]` is the function of `id`; `None` for ID 0, retired IDs and unused ones.\n\
         pub(crate) static NAMES: [Option<&CStr>; {n}] = {{\n    \
         let mut names: [Option<&CStr>; {n}] = [None; {n}];",
        group.stem,
        group.title,
        group.c_group,
        n = max + 1
    );
    let mut sorted: Vec<&(u32, String)> = table.iter().collect();
    sorted.sort();
    for (id, name) in sorted {
        let _ = writeln!(
            out,
            "    names[{id}] = Some(c\"{}\");",
            function_name(name, table)
        );
    }
    out.push_str("    names\n};\n");
    for (id, name) in table {
        let _ = write!(out, "\n/// `{name}`.\npub const {name}: ApiId = {id};\n");
    }
    out
}

/// The name of the function an entry of `table` names: `f_v2` is function `f` where `table`
/// has `f` too (the API numbered `f` again, and the C enumerator needs a name of its own, as
/// Intel's headers name it); the name itself otherwise.
fn function_name<'a>(name: &'a str, table: &Table) -> &'a str {
    match name.rsplit_once("_v") {
        Some((base, n))
            if !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && table.iter().any(|(_, other)| other == base) =>
        {
            base
        }
        _ => name,
    }
}

fn render_c(group: &Group, table: &Table) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "/* @generated by `cargo xtask gen` from pti-core/api-ids/{}.tsv. Do not edit by hand. */\n\
         /* Stable API IDs of the {} group ({}): an ID, once published, never changes meaning. */\n\
         #ifndef {guard}\n#define {guard}\n\n\
         typedef enum {} {{\n",
        group.stem,
        group.title,
        group.c_group,
        group.c_enum,
        guard = group.guard,
    );
    let _ = writeln!(out, "  {} = 0,", group.reserved);
    for (id, name) in table {
        let _ = writeln!(out, "  {name}_id = {id},");
    }
    let _ = write!(
        out,
        "}} {};\n\n#endif /* {} */\n",
        &group.c_enum[1..],
        group.guard
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rejects_what_a_table_must_not_hold() {
        assert!(parse_table("1\tzeInit\n2\tzeDriverGet\n", "t").is_ok());
        for bad in [
            "0\tzeInit",
            "1\tzeInit\n1\tzeFoo",
            "1\tzeInit\n2\tzeInit",
            "x\tzeInit",
            "1 zeInit",
            "1\t9abc",
        ] {
            assert!(parse_table(bad, "t").is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn rust_table_has_gaps_as_none() {
        let t = parse_table("1\ta\n3\tc\n", "t").unwrap();
        let rs = render_rust(&GROUPS[2], &t);
        assert!(rs.contains("[Option<&CStr>; 4] = [None; 4];\n"));
        assert!(
            rs.contains(
                "    names[1] = Some(c\"a\");\n    names[3] = Some(c\"c\");\n    names\n};"
            )
        );
        assert!(render_c(&GROUPS[2], &t).contains("  c_id = 3,\n"));
    }

    #[test]
    fn a_function_numbered_again_keeps_its_name() {
        let t = parse_table("1\tf\n2\tf_v2\n3\tg_v2\n", "t").unwrap();
        let rs = render_rust(&GROUPS[2], &t);
        assert!(rs.contains("    names[2] = Some(c\"f\");\n"), "{rs}");
        assert!(rs.contains("    names[3] = Some(c\"g_v2\");\n"), "{rs}");
        assert!(rs.contains("pub const f_v2: ApiId = 2;"), "{rs}");
        assert!(render_c(&GROUPS[2], &t).contains("  f_v2_id = 2,\n"));
    }
}
