//! The Level Zero bindings of `pti-sys`: every type and constant of the installed Level Zero
//! headers (core, tools and sysman APIs, their DDI tables, the loader's tracing layer), generated
//! with bindgen, plus one function-pointer alias per exported function (`<function>_t`, an
//! `Option<unsafe extern "C" fn(..)>`, the convention of `opencl-sys`): libpti never links the
//! loader, it looks the functions up at run time, and the test driver implements them.
//!
//! Input: the headers of Debian's `libze-dev` (1.8.12) under `/usr/include/level_zero`, or the
//! directory `$PTI_LEVEL_ZERO_INCLUDE` names. Output: `pti-sys/src/level_zero.rs`. The same header
//! version and bindgen version give the same file; the drift test checks it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::GeneratedFile;

/// Headers read, relative to the include directory (each includes what it needs).
const HEADERS: [&str; 6] = [
    "level_zero/ze_ddi.h",
    "level_zero/zet_ddi.h",
    "level_zero/zes_ddi.h",
    "level_zero/layers/zel_tracing_ddi.h",
    "level_zero/layers/zel_tracing_register_cb.h",
    "level_zero/loader/ze_loader.h",
];

fn include_dir() -> PathBuf {
    std::env::var_os("PTI_LEVEL_ZERO_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/include"))
}

/// The header version the bindings were generated from, read from the loader's pkg-config file.
fn header_version() -> String {
    let pc = Path::new("/usr/lib/x86_64-linux-gnu/pkgconfig/libze_loader.pc");
    std::fs::read_to_string(pc)
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Version:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn bindgen_output(include: &Path) -> Result<String, String> {
    let mut wrapper = String::new();
    for h in HEADERS {
        let _ = writeln!(wrapper, "#include <{h}>");
    }
    let bindings = bindgen::Builder::default()
        .header_contents("pti_level_zero.h", &wrapper)
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg(format!("-I{}", include.join("level_zero").display()))
        .allowlist_type("_?(ze|zet|zes|zel)_.*")
        .allowlist_var("(ZE|ZET|ZES|ZEL)_.*")
        .allowlist_function("(ze|zet|zes|zel)[A-Z].*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(true)
        .layout_tests(true)
        .generate_comments(false)
        .use_core()
        .formatter(bindgen::Formatter::Prettyplease)
        .generate()
        .map_err(|e| {
            format!(
                "bindgen on the Level Zero headers in {}: {e}",
                include.display()
            )
        })?;
    Ok(bindings.to_string())
}

/// Turns each `extern "C" { pub fn f(args) -> ret; }` into `pub type f_t = Option<unsafe extern
/// "C" fn(args) -> ret>;`: the bindings declare no symbol that would need the loader at link time.
fn functions_to_aliases(text: &str) -> Result<String, String> {
    let file = syn::parse_file(text).map_err(|e| format!("bindgen output does not parse: {e}"))?;
    let mut out = String::new();
    let mut aliases = 0;
    for item in &file.items {
        match item {
            syn::Item::ForeignMod(block) => {
                for f in &block.items {
                    let syn::ForeignItem::Fn(f) = f else {
                        return Err("bindgen emitted a foreign item that is not a function".into());
                    };
                    let name = &f.sig.ident;
                    let params: Vec<String> = f
                        .sig
                        .inputs
                        .iter()
                        .map(|a| {
                            use quote::ToTokens;
                            a.to_token_stream().to_string()
                        })
                        .collect();
                    let ret = {
                        use quote::ToTokens;
                        f.sig.output.to_token_stream().to_string()
                    };
                    let _ = writeln!(
                        out,
                        "pub type {name}_t = ::core::option::Option<unsafe extern \"C\" fn({}) {ret}>;",
                        params.join(", ")
                    );
                    aliases += 1;
                }
            }
            other => {
                use quote::ToTokens;
                let _ = writeln!(out, "{}", other.to_token_stream());
            }
        }
    }
    if aliases < 100 {
        return Err(format!(
            "only {aliases} Level Zero functions found: wrong headers?"
        ));
    }
    // Formatted like the rest of the file, so the committed text reads well.
    let reparsed = syn::parse_file(&out).map_err(|e| format!("aliases do not parse: {e}"))?;
    Ok(prettyplease_unparse(&reparsed))
}

fn prettyplease_unparse(file: &syn::File) -> String {
    // bindgen re-exports nothing for this; format through bindgen's own formatter crate.
    prettyplease::unparse(file)
}

/// The generated bindings file.
pub fn generate(root: &Path) -> Result<Vec<GeneratedFile>, String> {
    let _ = root;
    let include = include_dir();
    if !include.join("level_zero/ze_api.h").exists() {
        return Err(format!(
            "{}/level_zero/ze_api.h is missing: install Debian's libze-dev (`cargo xtask setup` does), \
             or point PTI_LEVEL_ZERO_INCLUDE at the headers",
            include.display()
        ));
    }
    let body = functions_to_aliases(&bindgen_output(&include)?)?;
    let contents = format!(
        "// GENERATED by `cargo xtask gen` (xtask/src/level_zero.rs) with bindgen from the Level Zero\n\
         // headers of libze-dev {}. Do not edit by hand.\n\n\
         //! Level Zero types, constants and function-pointer aliases (`<function>_t`): the core,\n\
         //! tools and sysman APIs, their DDI tables, and the loader's tracing layer. Generated from\n\
         //! the installed headers; see `xtask/src/level_zero.rs`.\n\n\
         #![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]\n\
         #![allow(missing_docs, unreachable_pub, clippy::all)]\n\n{body}",
        header_version()
    );
    Ok(vec![GeneratedFile {
        path: "pti-sys/src/level_zero.rs".into(),
        contents,
    }])
}
