//! The Level Zero bindings of `pti-sys`: every type and constant of the installed Level Zero
//! headers (core, tools and sysman APIs, their DDI tables, the loader's tracing layer), generated
//! with bindgen, plus one function-pointer alias per exported function (`<function>_t`, an
//! `Option<unsafe extern "C" fn(..)>`, the convention of `opencl-sys`): libpti never links the
//! loader, it looks the functions up at run time, and the test driver implements them.
//!
//! Input: the newest Level Zero headers, those of Debian's `libze-dev` 1.32 that
//! [`crate::newest_level_zero`] fetches into `.cache/level-zero` (or the directory
//! `$PTI_LEVEL_ZERO_INCLUDE` names), and the hand-written declarations of Intel's extensions
//! that no Level Zero header declares (`zex*`, the older `…Exp` graph functions) in
//! `pti-sys/src/level_zero_intel.rs`. Outputs: `pti-sys/src/level_zero.rs`, and the
//! tracer's callbacks, `pti-core/src/backend/level_zero/callbacks.rs`: a prologue and an epilogue
//! per function the tracing layer of a 1.32 loader can register (libpti registers, at run time,
//! those the loader present has), mapped onto `level_zero.tsv` and calling the hooks of
//! `hooks.rs`; and a wrapper per function of [`EXTENSION_ROUTE`], which libpti hands out from
//! `zeDriverGetExtensionFunctionAddress` and which runs the same prologue and epilogue around
//! the driver's function. The same header version and bindgen version give the same files; the
//! drift test checks them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::GeneratedFile;

/// Headers read, relative to the include directory (each includes what it needs).
const HEADERS: [&str; 7] = [
    "level_zero/ze_ddi.h",
    "level_zero/zer_api.h",
    "level_zero/zet_ddi.h",
    "level_zero/zes_ddi.h",
    "level_zero/layers/zel_tracing_ddi.h",
    "level_zero/layers/zel_tracing_register_cb.h",
    "level_zero/loader/ze_loader.h",
];

/// Functions that programs obtain through `zeDriverGetExtensionFunctionAddress` (on loaders
/// that lack them, and always for Intel's `zex*` and older graph functions), so that the loader's
/// tracing layer never sees their calls: libpti hands out its wrapper instead of the driver's
/// address. By group:
/// - functions that create events, append work or wait, and the other functions newer than
///   loader 1.8.12 that the Unified Runtime's Level Zero adapters call (the adapters' loader front
///   end reaches them that way over an old loader), except `zeDriverGetDefaultContext`, which
///   returns a handle, not a result, and so has no prologue or epilogue to run;
/// - an event pool's flags and kernel-timestamp queries (`zeEventPoolGetFlags`,
///   `zeEventQueryKernelTimestampsExt`): libpti adds host visibility and kernel timestamps to the
///   pools it times and keeps each pool's flags as the program created them, for these to answer;
/// - mutable command lists and clones (`zeCommandListCreateCloneExp`, the
///   `zeCommandListGetNextCommandId*Exp` and `zeCommandListUpdateMutableCommand*Exp`): libpti
///   follows a regular list's commands, which these copy or change after they were appended;
/// - graph capture and replay, in the 1.32 headers' `…Ext` form and Intel's older `…Exp` form
///   (compute-runtime's `zex_graph.h`, extension "ZE_experimental_record_replay_graph", served
///   only this way): libpti records the commands a graph replays.
pub const EXTENSION_ROUTE: [&str; 48] = [
    "zexCounterBasedEventCreate2",
    "zeEventCounterBasedCreate",
    "zeCommandListAppendHostFunction",
    "zeCommandListAppendLaunchKernelWithParameters",
    "zeCommandListAppendLaunchKernelWithArguments",
    "zeCommandListAppendMemoryCopyWithParameters",
    "zeCommandListAppendMemoryFillWithParameters",
    "zeCommandListImmediateAppendCommandListsExp",
    "zeCommandListImmediateAppendCommandListsWithParameters",
    "zeCommandListHostSynchronize",
    "zeCommandListIsImmediate",
    "zeDeviceGetRootDevice",
    "zeDeviceGetVectorWidthPropertiesExt",
    "zeDeviceSynchronize",
    "zeEventCounterBasedGetIpcHandle",
    "zeEventCounterBasedOpenIpcHandle",
    "zeEventCounterBasedCloseIpcHandle",
    "zeImageViewCreateExt",
    "zePhysicalMemGetProperties",
    // Pool flags and timestamp queries.
    "zeEventPoolGetFlags",
    "zeEventQueryKernelTimestampsExt",
    // Mutable command lists and clones.
    "zeCommandListCreateCloneExp",
    "zeCommandListGetNextCommandIdExp",
    "zeCommandListGetNextCommandIdWithKernelsExp",
    "zeCommandListUpdateMutableCommandsExp",
    "zeCommandListUpdateMutableCommandSignalEventExp",
    "zeCommandListUpdateMutableCommandWaitEventsExp",
    "zeCommandListUpdateMutableCommandKernelsExp",
    // Graph capture and replay (the 1.32 headers' form).
    "zeGraphCreateExt",
    "zeCommandListBeginGraphCaptureExt",
    "zeCommandListBeginCaptureIntoGraphExt",
    "zeCommandListIsGraphCaptureEnabledExt",
    "zeCommandListEndGraphCaptureExt",
    "zeGraphInstantiateExt",
    "zeCommandListAppendGraphExt",
    "zeGraphDestroyExt",
    "zeExecutableGraphDestroyExt",
    // Graph capture and replay (Intel's older form, `zex_graph.h`).
    "zeGraphCreateExp",
    "zeCommandListBeginGraphCaptureExp",
    "zeCommandListBeginCaptureIntoGraphExp",
    "zeCommandListEndGraphCaptureExp",
    "zeCommandListInstantiateGraphExp",
    "zeCommandListAppendGraphExp",
    "zeGraphDestroyExp",
    "zeExecutableGraphDestroyExp",
    "zeCommandListIsGraphCaptureEnabledExp",
    "zeGraphIsEmptyExp",
    "zeGraphDumpContentsExp",
];

/// Intel's extension functions declared in `pti-sys/src/level_zero_intel.rs`, with their
/// parameter structs (they have no tracing-layer register function): `zexCounterBasedEventCreate2`
/// and the older graph functions of compute-runtime's `zex_graph.h`.
const INTEL_EXTENSIONS: [(&str, &str); 12] = [
    (
        "zexCounterBasedEventCreate2",
        "zex_counter_based_event_create2_params_t",
    ),
    ("zeGraphCreateExp", "ze_graph_create_exp_params_t"),
    (
        "zeCommandListBeginGraphCaptureExp",
        "ze_command_list_begin_graph_capture_exp_params_t",
    ),
    (
        "zeCommandListBeginCaptureIntoGraphExp",
        "ze_command_list_begin_capture_into_graph_exp_params_t",
    ),
    (
        "zeCommandListEndGraphCaptureExp",
        "ze_command_list_end_graph_capture_exp_params_t",
    ),
    (
        "zeCommandListInstantiateGraphExp",
        "ze_command_list_instantiate_graph_exp_params_t",
    ),
    (
        "zeCommandListAppendGraphExp",
        "ze_command_list_append_graph_exp_params_t",
    ),
    ("zeGraphDestroyExp", "ze_graph_destroy_exp_params_t"),
    (
        "zeExecutableGraphDestroyExp",
        "ze_executable_graph_destroy_exp_params_t",
    ),
    (
        "zeCommandListIsGraphCaptureEnabledExp",
        "ze_command_list_is_graph_capture_enabled_exp_params_t",
    ),
    ("zeGraphIsEmptyExp", "ze_graph_is_empty_exp_params_t"),
    (
        "zeGraphDumpContentsExp",
        "ze_graph_dump_contents_exp_params_t",
    ),
];

/// The headers' include directory: `$PTI_LEVEL_ZERO_INCLUDE`, else the newest headers (fetched).
fn include_dir(root: &Path) -> Result<PathBuf, String> {
    match std::env::var_os("PTI_LEVEL_ZERO_INCLUDE") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => {
            crate::newest_level_zero::fetch(root)?;
            Ok(crate::newest_level_zero::include_dir(root))
        }
    }
}

/// Which headers the bindings were generated from.
fn header_version() -> String {
    match std::env::var_os("PTI_LEVEL_ZERO_INCLUDE") {
        Some(dir) => format!("in {}", dir.to_string_lossy()),
        None => format!("libze-dev {}", crate::newest_level_zero::VERSION),
    }
}

fn bindgen_output(include: &Path) -> Result<String, String> {
    // ze_loader.h of 1.32 uses `bool` without including <stdbool.h>.
    let mut wrapper = String::from("#include <stdbool.h>\n");
    for h in HEADERS {
        let _ = writeln!(wrapper, "#include <{h}>");
    }
    let bindings = bindgen::Builder::default()
        .header_contents("pti_level_zero.h", &wrapper)
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg(format!("-I{}", include.join("level_zero").display()))
        .allowlist_type("_?(ze|zet|zes|zel|zer)_.*")
        .allowlist_var("(ZE|ZET|ZES|ZEL|ZER)_.*")
        .allowlist_function("(ze|zet|zes|zel|zer)[A-Z].*")
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
    let include = include_dir(root)?;
    if !include.join("level_zero/ze_api.h").exists() {
        return Err(format!(
            "{}/level_zero/ze_api.h is missing: `cargo xtask setup` fetches the newest headers \
             into .cache/level-zero, or point PTI_LEVEL_ZERO_INCLUDE at headers",
            include.display()
        ));
    }
    let raw = bindgen_output(&include)?;
    let body = functions_to_aliases(&raw)?;
    let intel_path = root.join("pti-sys/src/level_zero_intel.rs");
    let intel = std::fs::read_to_string(&intel_path)
        .map_err(|e| format!("{}: {e}", intel_path.display()))?;
    // Its items only: inner attributes and doc comments cannot follow the bindings' items.
    let intel: String = intel
        .lines()
        .filter(|l| !l.starts_with("//!") && !l.starts_with("#!["))
        .map(|l| format!("{l}\n"))
        .collect();
    let declarations = format!("{body}\n{intel}");
    let traced = traced_functions(&declarations, root)?;
    let callbacks = render_callbacks(&traced, &hook_names(root)?)?;
    let contents = format!(
        "// GENERATED by `cargo xtask gen` (xtask/src/level_zero.rs) with bindgen from the Level Zero\n\
         // headers {}. Do not edit by hand.\n\n\
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
    /// The tracing layer's register function (none for Intel's extensions).
    register: Option<String>,
    /// `ze_command_list_append_launch_kernel_params_t`.
    params: String,
    /// Parameter-struct fields (`phCommandList`, ...).
    fields: Vec<String>,
    /// The function's arguments, `(name, type)`, for its extension-route wrapper.
    args: Vec<(String, String)>,
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
    let arguments = |name: &str| -> Result<Vec<(String, String)>, String> {
        use quote::ToTokens;
        let ty = aliases
            .get(&format!("{name}_t"))
            .ok_or_else(|| format!("no function-pointer alias {name}_t"))?;
        let syn::Type::Path(p) = ty else {
            return Err(format!("{name}_t is not an Option<fn>"));
        };
        let syn::PathArguments::AngleBracketed(a) = &p.path.segments.last().unwrap().arguments
        else {
            return Err(format!("{name}_t is not an Option<fn>"));
        };
        let Some(syn::GenericArgument::Type(syn::Type::BareFn(f))) = a.args.first() else {
            return Err(format!("{name}_t is not an Option<fn>"));
        };
        f.inputs
            .iter()
            .map(|i| {
                let n = i.name.as_ref().map(|(n, _)| n.to_string());
                let n = n.ok_or_else(|| format!("{name}: unnamed argument"))?;
                Ok((n, i.ty.to_token_stream().to_string()))
            })
            .collect()
    };
    let id_of = |name: &str| {
        ids.get(name)
            .copied()
            .ok_or_else(|| format!("{name} has a tracing callback but no ID in level_zero.tsv"))
    };
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
        // The layer names `zer*` functions' register functions without their prefix too.
        let name = ["ze", "zer"]
            .map(|p| format!("{p}{stem}"))
            .into_iter()
            .find(|n| aliases.contains_key(&format!("{n}_t")))
            .ok_or_else(|| format!("{alias}: no function ze{stem} or zer{stem}"))?;
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
        out.push(Traced {
            register: Some(alias.trim_end_matches("_t").to_string()),
            id: id_of(&name)?,
            args: arguments(&name)?,
            name,
            params,
            fields,
        });
    }
    for (name, params) in INTEL_EXTENSIONS {
        let fields = structs
            .get(&format!("_{params}"))
            .cloned()
            .ok_or_else(|| format!("level_zero_intel.rs has no struct _{params}"))?;
        out.push(Traced {
            register: None,
            id: id_of(name)?,
            args: arguments(name)?,
            name: name.to_string(),
            params: params.to_string(),
            fields,
        });
    }
    for name in EXTENSION_ROUTE {
        let t = out
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("{name} is wrapped but has no tracing parameters"))?;
        if t.args.len() != t.fields.len() {
            return Err(format!("{name}: arguments and parameter fields differ"));
        }
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
            // `append_hooks!(before_x, after_x, ...)` and `wait_hooks!(before_x, after_x, ...)`
            // define the two hooks they name first.
            syn::Item::Macro(m)
                if m.mac.path.is_ident("append_hooks") || m.mac.path.is_ident("wait_hooks") =>
            {
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
         //! tracer's panic boundary (`tracer::prologue`, `tracer::epilogue`). The functions programs\n\
         //! obtain through `zeDriverGetExtensionFunctionAddress` also get a wrapper per slot of\n\
         //! `extension`, which runs the same prologue and epilogue around the driver's function.\n\n\
         #![allow(non_snake_case, unused_variables, clippy::let_unit_value, clippy::let_and_return)]\n\n\
         use core::ffi::{CStr, c_void};\n\n\
         use pti_sys::level_zero::*;\n\n\
         use pti_sys::level_zero_intel::*;\n\n\
         use super::{extension, hooks, objects, tracer};\n\
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
    let registered: Vec<&Traced> = traced.iter().filter(|t| t.register.is_some()).collect();
    let _ = write!(
        out,
        "\n/// Every function a 1.32 loader's tracing layer can trace: its register function, the\n\
         /// prologue, the epilogue.\n\
         pub(super) fn callbacks() -> [(&'static CStr, *const c_void, *const c_void); {}] {{\n    [\n",
        registered.len()
    );
    for t in &registered {
        let _ = writeln!(
            out,
            "        (c\"{}\", {1}_prologue as *const c_void, {1}_epilogue as *const c_void),",
            t.register.as_deref().unwrap_or_default(),
            t.name
        );
    }
    out.push_str("    ]\n}\n");
    render_wrappers(traced, &mut out);
    Ok(out)
}

/// Copies of each wrapper: one per driver address it may stand for (`extension::SLOTS`).
const SLOTS: usize = 4;

/// A wrapper per function of [`EXTENSION_ROUTE`], in [`SLOTS`] copies, and the table `extension`
/// hands them out from.
fn render_wrappers(traced: &[Traced], out: &mut String) {
    let _ = write!(
        out,
        "\n/// How many functions have extension-route wrappers.\n\
         pub(super) const EXTENSION_FUNCTIONS: usize = {};\n",
        EXTENSION_ROUTE.len()
    );
    let _ = write!(
        out,
        "\n/// The functions libpti wraps when a program obtains them through\n\
         /// `zeDriverGetExtensionFunctionAddress`: the name, and the wrapper of each slot.\n\
         pub(super) fn extension_wrappers() -> [(&'static CStr, [*const c_void; extension::SLOTS]); EXTENSION_FUNCTIONS] {{\n    [\n",
    );
    for name in EXTENSION_ROUTE {
        let slots: Vec<String> = (0..SLOTS)
            .map(|slot| format!("{name}_wrapper::<{slot}> as *const c_void"))
            .collect();
        let _ = writeln!(out, "        (c\"{name}\", [{}]),", slots.join(", "));
    }
    out.push_str("    ]\n}\n");
    for (index, name) in EXTENSION_ROUTE.iter().enumerate() {
        let t = traced
            .iter()
            .find(|t| t.name == *name)
            .expect("checked by traced_functions");
        let typed: Vec<String> = t.args.iter().map(|(n, ty)| format!("{n}: {ty}")).collect();
        let locals: Vec<String> = t.args.iter().map(|(n, _)| format!("mut {n}")).collect();
        let values: Vec<&str> = t.args.iter().map(|(n, _)| n.as_str()).collect();
        // The arguments as mutable locals (a tuple only for more than one: no lone parentheses).
        let (locals, values) = if t.args.len() == 1 {
            (locals.join(""), values.join(""))
        } else {
            (
                format!("({})", locals.join(", ")),
                format!("({})", values.join(", ")),
            )
        };
        let fields: Vec<String> = t
            .fields
            .iter()
            .zip(&t.args)
            .map(|(f, (n, _))| format!("{f}: &raw mut {n}"))
            .collect();
        let reads: Vec<String> = t.fields.iter().map(|f| format!("*params.{f}")).collect();
        let _ = write!(
            out,
            "\n/// `{name}` as obtained through `zeDriverGetExtensionFunctionAddress`: the driver's\n\
             /// function (of slot `SLOT`), traced as the tracing layer traces the others.\n\
             unsafe extern \"C\" fn {name}_wrapper<const SLOT: usize>({}) -> ze_result_t {{\n\
             \x20   // SAFETY: the slot holds the driver's `{name}`, stored under this name.\n\
             \x20   let Some(original) = (unsafe {{ extension::original::<{name}_t>({index}, SLOT) }}) else {{\n\
             \x20       return ZE_RESULT_ERROR_UNINITIALIZED;\n\
             \x20   }};\n\
             \x20   let {} = {};\n\
             \x20   let mut params = {} {{ {} }};\n\
             \x20   let mut instance: *mut c_void = core::ptr::null_mut();\n\
             \x20   // SAFETY: parameters that point at this call's arguments, as the layer's do.\n\
             \x20   unsafe {{ {name}_prologue(&mut params, ZE_RESULT_SUCCESS, core::ptr::null_mut(), &mut instance) }};\n\
             \x20   // SAFETY: the driver's function, with the arguments as the prologue left them.\n\
             \x20   let result = unsafe {{ original({}) }};\n\
             \x20   // SAFETY: as for the prologue.\n\
             \x20   unsafe {{ {name}_epilogue(&mut params, result, core::ptr::null_mut(), &mut instance) }};\n\
             \x20   result\n\
             }}\n",
            typed.join(", "),
            locals,
            values,
            t.params,
            fields.join(", "),
            reads.join(", "),
        );
    }
}
