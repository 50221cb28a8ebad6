//! The Level Zero bindings of `pti-sys`: every type and constant of the installed Level Zero
//! headers (core, tools and sysman APIs, their DDI tables, the loader's tracing layer), generated
//! with bindgen, plus one function-pointer alias per exported function (`<function>_t`, an
//! `Option<unsafe extern "C" fn(..)>`, the convention of `opencl-sys`): libpti never links the
//! loader, it looks the functions up at run time, and the test driver implements them.
//!
//! Input: the headers of Debian's `libze-dev` (1.8.12) under `/usr/include/level_zero`, or the
//! directory `$PTI_LEVEL_ZERO_INCLUDE` names. Outputs: `pti-sys/src/level_zero.rs`, and the
//! tracer's callbacks, `pti-core/src/backend/level_zero/callbacks.rs` (a prologue and an epilogue
//! per function the tracing layer can register, mapped onto `level_zero.tsv`, calling the hooks
//! of `hooks.rs`). The same header version and bindgen version give the same files; the drift
//! test checks them.

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
    std::process::Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", "libze-dev"])
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty())
        .map_or_else(
            || "unknown".into(),
            |o| String::from_utf8_lossy(&o.stdout).into_owned(),
        )
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
    let include = include_dir();
    if !include.join("level_zero/ze_api.h").exists() {
        return Err(format!(
            "{}/level_zero/ze_api.h is missing: install Debian's libze-dev (`cargo xtask setup` does), \
             or point PTI_LEVEL_ZERO_INCLUDE at the headers",
            include.display()
        ));
    }
    let raw = bindgen_output(&include)?;
    let body = functions_to_aliases(&raw)?;
    let traced = traced_functions(&body, root)?;
    let callbacks = render_callbacks(&traced, &hook_names(root)?)?;
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
    Ok(vec![
        GeneratedFile {
            path: "pti-sys/src/level_zero.rs".into(),
            contents,
        },
        GeneratedFile {
            path: "pti-core/src/backend/level_zero/callbacks.rs".into(),
            contents: callbacks,
        },
    ])
}

/// One function the loader's tracing layer can call back for.
struct Traced {
    /// `zeCommandListAppendLaunchKernel`.
    name: String,
    id: u32,
    /// The tracing layer's register function.
    register: String,
    /// `ze_command_list_append_launch_kernel_params_t`.
    params: String,
    /// Parameter-struct fields (`phCommandList`, ...).
    fields: Vec<String>,
}

/// The tracing layer's register functions, their callbacks' parameter structs, and the IDs.
fn traced_functions(bindings: &str, root: &Path) -> Result<Vec<Traced>, String> {
    let file = syn::parse_file(bindings).map_err(|e| format!("bindings do not parse: {e}"))?;
    let mut aliases: std::collections::HashMap<String, syn::Type> =
        std::collections::HashMap::new();
    let mut structs: std::collections::HashMap<String, Vec<String>> =
        std::collections::HashMap::new();
    for item in &file.items {
        match item {
            syn::Item::Type(t) => {
                aliases.insert(t.ident.to_string(), (*t.ty).clone());
            }
            syn::Item::Struct(s) => {
                let fields = s
                    .fields
                    .iter()
                    .filter_map(|f| f.ident.as_ref().map(|i| i.to_string()))
                    .collect();
                structs.insert(s.ident.to_string(), fields);
            }
            _ => {}
        }
    }
    let fn_args = |ty: &syn::Type| -> Option<Vec<syn::Type>> {
        let syn::Type::Path(p) = ty else { return None };
        let syn::PathArguments::AngleBracketed(a) = &p.path.segments.last()?.arguments else {
            return None;
        };
        let syn::GenericArgument::Type(syn::Type::BareFn(f)) = a.args.first()? else {
            return None;
        };
        Some(f.inputs.iter().map(|i| i.ty.clone()).collect())
    };
    let type_name = |ty: &syn::Type| -> Option<String> {
        let ty = match ty {
            syn::Type::Ptr(p) => &*p.elem,
            other => other,
        };
        let syn::Type::Path(p) = ty else { return None };
        Some(p.path.segments.last()?.ident.to_string())
    };
    let ids: std::collections::HashMap<String, u32> = crate::ids::read_table(root, "level_zero")?
        .into_iter()
        .map(|(id, name)| (name, id))
        .collect();
    let mut out = Vec::new();
    let mut names: Vec<&String> = aliases.keys().collect();
    names.sort();
    for alias in names {
        let Some(stem) = alias
            .strip_prefix("zelTracer")
            .and_then(|s| s.strip_suffix("RegisterCallback_t"))
        else {
            continue;
        };
        let name = format!("ze{stem}");
        let args = fn_args(&aliases[alias]).ok_or_else(|| format!("{alias}: not a function"))?;
        let callback = type_name(&args[2]).ok_or_else(|| format!("{alias}: callback type"))?;
        let cb_args = aliases
            .get(&callback)
            .and_then(fn_args)
            .ok_or_else(|| format!("{callback}: not a function type"))?;
        let params = type_name(&cb_args[0]).ok_or_else(|| format!("{callback}: params type"))?;
        let fields = structs
            .get(&format!("_{params}"))
            .cloned()
            .ok_or_else(|| format!("no struct for {params}"))?;
        let id = *ids
            .get(&name)
            .ok_or_else(|| format!("{name} has a tracing callback but no ID in level_zero.tsv"))?;
        out.push(Traced {
            register: alias.trim_end_matches("_t").to_string(),
            name,
            id,
            params,
            fields,
        });
    }
    out.sort_by_key(|t| t.id);
    Ok(out)
}

/// Names of the hooks in `hooks.rs`: `before_<function>` and `after_<function>`.
fn hook_names(root: &Path) -> Result<std::collections::BTreeSet<String>, String> {
    let path = root.join("pti-core/src/backend/level_zero/hooks.rs");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut names = std::collections::BTreeSet::new();
    for item in &file.items {
        match item {
            syn::Item::Fn(f) => {
                names.insert(f.sig.ident.to_string());
            }
            // `append_hooks!(before_x, after_x, ...)` defines the two hooks it names first.
            syn::Item::Macro(m) if m.mac.path.is_ident("append_hooks") => {
                for token in m.mac.tokens.clone().into_iter().take(3) {
                    if let proc_macro2::TokenTree::Ident(i) = token {
                        names.insert(i.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(names
        .into_iter()
        .filter(|n| n.starts_with("before_ze") || n.starts_with("after_ze"))
        .collect())
}

/// The tracer's callbacks: a prologue and an epilogue per traced function.
fn render_callbacks(
    traced: &[Traced],
    hooks: &std::collections::BTreeSet<String>,
) -> Result<String, String> {
    for h in hooks {
        let function = h.trim_start_matches("before_").trim_start_matches("after_");
        if !traced.iter().any(|t| t.name == function) {
            return Err(format!(
                "hooks.rs has {h}, but the tracing layer has no {function}"
            ));
        }
    }
    let mut out = String::from(
        "// GENERATED by `cargo xtask gen` (xtask/src/level_zero.rs) from the Level Zero tracing\n\
         // layer's register functions in pti-sys and pti-core/api-ids/level_zero.tsv. Do not edit.\n\n\
         //! One prologue and one epilogue per function the loader's tracing layer exposes. The\n\
         //! prologue opens the traced call (ENTER callbacks) and runs the function's `before_` hook,\n\
         //! the epilogue runs its `after_` hook and closes the call (EXIT callbacks, records); the\n\
         //! call's token travels in the tracing layer's per-call instance slot. Both run behind the\n\
         //! tracer's panic boundary (`tracer::prologue`, `tracer::epilogue`).\n\n\
         #![allow(non_snake_case, unused_variables, clippy::let_unit_value, clippy::let_and_return)]\n\n\
         use core::ffi::{CStr, c_void};\n\n\
         use pti_sys::level_zero::*;\n\n\
         use super::{hooks, objects, tracer};\n\
         use crate::ids::level_zero as ids;\n",
    );
    for t in traced {
        let has = |f: &str| t.fields.iter().any(|x| x == f);
        // Read from the parameter struct: its fields point at the call's arguments.
        let deref = |expr: &str| {
            format!(
                "{{\n        // SAFETY: the fields point at this call's arguments.\n        unsafe {{ {expr} }}\n    }}"
            )
        };
        // What gives the call's context handle (a closure, or the function for none).
        let context = if has("phContext") {
            format!("|| {}", deref("(*p.phContext).cast()"))
        } else if has("phCommandList") {
            format!("|| {}", deref("objects::list_context(*p.phCommandList)"))
        } else if has("phCommandQueue") {
            format!("|| {}", deref("objects::queue_context(*p.phCommandQueue)"))
        } else {
            "core::ptr::null_mut".to_string()
        };
        let kernel = if has("phKernel") && t.name.starts_with("zeCommandListAppendLaunch") {
            deref("objects::kernel_name(*p.phKernel)")
        } else {
            "None".to_string()
        };
        let (name, id, params) = (&t.name, t.id, &t.params);
        let before = if hooks.contains(&format!("before_{name}")) {
            format!("        hooks::before_{name}(p, token);\n")
        } else {
            String::new()
        };
        let after = if hooks.contains(&format!("after_{name}")) {
            format!("        hooks::after_{name}(p, result, token);\n")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "\n/// `{name}` (Level Zero API ID {id}), before the call.\n\
             unsafe extern \"C\" fn {name}_prologue(params: *mut {params}, _result: ze_result_t, _user: *mut c_void, instance: *mut *mut c_void) {{\n\
             \x20   // SAFETY: the tracing layer passes this call's parameters and its instance slot.\n\
             \x20   let (p, instance) = unsafe {{ (&mut *params, &mut *instance) }};\n\
             \x20   tracer::prologue(instance, || {{\n\
             \x20       let token = tracer::begin(ids::{name}, params.cast(), {context}, || {kernel});\n\
             {before}\
             \x20       token\n\
             \x20   }});\n\
             }}\n\n\
             /// `{name}` (Level Zero API ID {id}), after the call.\n\
             unsafe extern \"C\" fn {name}_epilogue(params: *mut {params}, result: ze_result_t, _user: *mut c_void, instance: *mut *mut c_void) {{\n\
             \x20   // SAFETY: the tracing layer passes this call's parameters and its instance slot.\n\
             \x20   let (p, instance) = unsafe {{ (&mut *params, &*instance) }};\n\
             \x20   tracer::epilogue(*instance, result, |token| {{\n\
             {after}\
             \x20       tracer::end(token, result, {context});\n\
             \x20   }});\n\
             }}\n"
        );
    }
    let _ = write!(
        out,
        "\n/// Every traced function: the tracing layer's register function, the prologue, the epilogue.\n\
         pub(super) fn callbacks() -> [(&'static CStr, *const c_void, *const c_void); {}] {{\n    [\n",
        traced.len()
    );
    for t in traced {
        let _ = writeln!(
            out,
            "        (c\"{}\", {1}_prologue as *const c_void, {1}_epilogue as *const c_void),",
            t.register, t.name
        );
    }
    out.push_str("    ]\n}\n");
    Ok(out)
}
