//! API-ID stability: an ID, once released, names the same function forever.
//!
//! `pti-core/api-ids/released/<version>/<group>.tsv` holds each released table as it was
//! released. This test fails if a released `(id, name)` pair changed or disappeared from the
//! current data file or from the compiled tables, and, through the pinned digests below, if a
//! released snapshot itself was edited. Adding a function (a new ID at the end) passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pti_core::{ApiGroup, ids};

/// FNV-1a digests of the released snapshots. A release adds lines here; none ever changes.
const RELEASED: &[(&str, &str, u64)] = &[
    ("0.1.0", "level_zero", 0x3f6443bb6387abdf),
    ("0.1.0", "opencl", 0x7c38457921565134),
    ("0.1.0", "sycl_ur", 0x9e300a07ed9bfd92),
];

fn group_of(stem: &str) -> ApiGroup {
    match stem {
        "level_zero" => ApiGroup::LevelZero,
        "opencl" => ApiGroup::OpenCl,
        "sycl_ur" => ApiGroup::Sycl,
        other => panic!("unknown table {other}"),
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("api-ids")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn parse(path: &Path) -> BTreeMap<u32, String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let (id, name) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{}: bad line {line:?}", path.display()));
            (id.parse().unwrap(), name.to_string())
        })
        .collect()
}

/// The function an entry names, as `ptiViewGetApiIdName` answers for its ID: `f_v2` (the
/// enumerator of a function the API numbered again) is `f` where the table has `f` too.
fn function_name<'a>(name: &'a str, table: &BTreeMap<u32, String>) -> &'a str {
    match name.rsplit_once("_v") {
        Some((base, n))
            if !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && table.values().any(|other| other == base) =>
        {
            base
        }
        _ => name,
    }
}

#[test]
fn released_snapshots_are_untouched() {
    for (version, stem, digest) in RELEASED {
        let path = data_dir()
            .join("released")
            .join(version)
            .join(format!("{stem}.tsv"));
        let actual = fnv1a(&std::fs::read(&path).unwrap());
        assert_eq!(
            actual,
            *digest,
            "{} was edited: released tables never change (digest {actual:#018x})",
            path.display()
        );
    }
}

#[test]
fn every_snapshot_is_pinned() {
    for version in std::fs::read_dir(data_dir().join("released")).unwrap() {
        let version = version.unwrap();
        for table in std::fs::read_dir(version.path()).unwrap() {
            let name = table.unwrap().file_name().into_string().unwrap();
            let stem = name.trim_end_matches(".tsv");
            let v = version.file_name().into_string().unwrap();
            assert!(
                RELEASED.iter().any(|(rv, rs, _)| *rv == v && *rs == stem),
                "released/{v}/{name} has no pinned digest"
            );
        }
    }
}

#[test]
fn released_pairs_survive_in_the_data_and_the_compiled_tables() {
    for (version, stem, _) in RELEASED {
        let group = group_of(stem);
        let released = parse(
            &data_dir()
                .join("released")
                .join(version)
                .join(format!("{stem}.tsv")),
        );
        let current = parse(&data_dir().join(format!("{stem}.tsv")));
        for (id, name) in &released {
            assert_eq!(
                current.get(id),
                Some(name),
                "{stem}: released id {id} ({name}) changed or disappeared in the data"
            );
            let compiled = ids::name(group, *id).map(|n| n.to_str().unwrap().to_owned());
            assert_eq!(
                compiled.as_deref(),
                Some(function_name(name, &current)),
                "{stem}: released id {id} ({name}) differs in the compiled table"
            );
        }
    }
}

#[test]
fn compiled_tables_equal_the_data_files() {
    for stem in ["level_zero", "opencl", "sycl_ur"] {
        let group = group_of(stem);
        let current = parse(&data_dir().join(format!("{stem}.tsv")));
        let compiled: BTreeMap<u32, String> = ids::iter(group)
            .map(|(id, n)| (id, n.to_str().unwrap().to_owned()))
            .collect();
        let expected: BTreeMap<u32, String> = current
            .iter()
            .map(|(id, name)| (*id, function_name(name, &current).to_owned()))
            .collect();
        assert_eq!(compiled, expected, "{stem}: run `cargo xtask gen`");
    }
}

#[test]
fn opencl_numbers_the_icd_dispatch_table_then_the_usm_extension() {
    let cl = parse(&data_dir().join("opencl.tsv"));
    assert_eq!(cl[&1], "clGetPlatformIDs");
    assert_eq!(cl[&32], "clUnloadCompiler");
    assert_eq!(
        cl[&149], "clSetContextDestructorCallback",
        "the last slot of struct _cl_icd_dispatch"
    );
    let usm: Vec<&str> = (150..=161).map(|id| cl[&id].as_str()).collect();
    assert!(usm.iter().all(|n| n.ends_with("INTEL")), "{usm:?}");
    for f in [
        "clEnqueueMemcpyINTEL",
        "clEnqueueMemFillINTEL",
        "clHostMemAllocINTEL",
        "clDeviceMemAllocINTEL",
        "clSharedMemAllocINTEL",
        "clMemFreeINTEL",
        "clMemBlockingFreeINTEL",
    ] {
        assert!(usm.contains(&f), "{f} is not among the USM IDs");
    }
}
