//! The OpenCL wrapper generator.
//!
//! Inputs: the function-pointer types of `opencl-sys` (`pub type clX_t = Option<unsafe extern "C"
//! fn(..)>`) and of `pti-sys/src/opencl_extra.rs`, the ICD dispatch table's field order
//! (`opencl-sys`'s `cl_icd.rs`), the OpenCL ID table (`pti-core/api-ids/opencl.tsv`) and the names
//! of the hand-written overrides (the files of `pti-core/src/backend/opencl/overrides/`, and the
//! lines of `enqueues.rs` there beside it). Outputs:
//!
//! - `pti-core/src/backend/opencl/wrappers.rs`: one `extern "C"` wrapper per traced function,
//!   the layer's dispatch table, and the table of extension functions handed out by
//!   `clGetExtensionFunctionAddress[ForPlatform]`;
//! - `pti-core/src/backend/opencl/params.rs` and `include/pti/pti_cl_params.h`: one parameter
//!   struct per function (`_args` of the callback data), each field pointing at one argument;
//! - `pti-core/src/backend/opencl/args.rs`: the arguments by value of each enqueue function
//!   that `enqueues.rs` describes, which its wrapper hands to that line's override.
//!
//! Dispatch-table functions take IDs 1 to 149 in table order, which the generator checks against
//! the ID table; every ID above them is an extension function.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::GeneratedFile;

/// A parameter or return type, as far as the wrappers and the C header need to know it.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    /// A named type (`cl_mem`, `size_t`, `c_void`, ...).
    Named(String),
    /// A raw pointer; `is_const` says the pointee is const.
    Ptr { is_const: bool, to: Box<Ty> },
    /// An optional C function pointer (a callback parameter).
    Fn {
        params: Vec<Ty>,
        ret: Option<Box<Ty>>,
    },
}

impl Ty {
    fn from_syn(ty: &syn::Type) -> Result<Ty, String> {
        match ty {
            syn::Type::Ptr(p) => Ok(Ty::Ptr {
                is_const: p.const_token.is_some(),
                to: Box::new(Ty::from_syn(&p.elem)?),
            }),
            syn::Type::Path(p) => {
                let last = p.path.segments.last().ok_or("empty type path")?;
                if last.ident == "Option" {
                    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                        return Err("Option without arguments".into());
                    };
                    let Some(syn::GenericArgument::Type(syn::Type::BareFn(f))) = args.args.first()
                    else {
                        return Err("Option of something other than a function".into());
                    };
                    return Ty::from_fn(f);
                }
                Ok(Ty::Named(last.ident.to_string()))
            }
            other => Err(format!("unsupported type {}", quote_type(other))),
        }
    }

    fn from_fn(f: &syn::TypeBareFn) -> Result<Ty, String> {
        let params = f
            .inputs
            .iter()
            .map(|a| Ty::from_syn(&a.ty))
            .collect::<Result<_, _>>()?;
        let ret = match &f.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, t) => Some(Box::new(Ty::from_syn(t)?)),
        };
        Ok(Ty::Fn { params, ret })
    }

    /// The type as Rust source.
    fn rust(&self) -> String {
        match self {
            Ty::Named(n) => n.clone(),
            Ty::Ptr { is_const, to } => {
                format!("*{} {}", if *is_const { "const" } else { "mut" }, to.rust())
            }
            Ty::Fn { params, ret } => {
                let params: Vec<String> = params.iter().map(Ty::rust).collect();
                let ret = ret
                    .as_ref()
                    .map_or(String::new(), |r| format!(" -> {}", r.rust()));
                format!("Option<unsafe extern \"C\" fn({}){ret}>", params.join(", "))
            }
        }
    }

    /// A C declaration of `decl` with this type; `obj_const` says the declared object is const.
    fn c_decl(&self, decl: &str, obj_const: bool) -> String {
        match self {
            Ty::Named(n) => {
                let name = match n.as_str() {
                    "c_void" => "void",
                    "c_char" => "char",
                    "c_uchar" => "unsigned char",
                    "c_int" => "int",
                    "c_uint" => "unsigned int",
                    other => other,
                };
                let q = if obj_const { "const " } else { "" };
                if decl.is_empty() {
                    format!("{q}{name}")
                } else {
                    format!("{q}{name} {decl}")
                }
            }
            Ty::Ptr { is_const, to } => {
                let decl = if obj_const {
                    format!("* const {decl}")
                } else {
                    format!("*{decl}")
                };
                to.c_decl(decl.trim_end(), *is_const)
            }
            Ty::Fn { params, ret } => {
                let params: Vec<String> = params.iter().map(|p| p.c_decl("", false)).collect();
                let params = if params.is_empty() {
                    "void".to_string()
                } else {
                    params.join(", ")
                };
                let q = if obj_const { " const" } else { "" };
                let inner = format!("(CL_CALLBACK *{q}{decl})({params})");
                match ret {
                    Some(r) => r.c_decl(&inner, false),
                    None => format!("void {inner}"),
                }
            }
        }
    }

    /// Every named type inside this one.
    fn names(&self, out: &mut BTreeSet<String>) {
        match self {
            Ty::Named(n) => {
                out.insert(n.clone());
            }
            Ty::Ptr { to, .. } => to.names(out),
            Ty::Fn { params, ret } => {
                params.iter().for_each(|p| p.names(out));
                if let Some(r) = ret {
                    r.names(out);
                }
            }
        }
    }
}

fn quote_type(ty: &syn::Type) -> String {
    use quote::ToTokens;
    ty.to_token_stream().to_string()
}

/// What callbacks see as a function's status (`_return_code`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Status {
    /// The function returns a `cl_int`.
    Returned,
    /// The function reports through its `errcode_ret` argument.
    Errcode,
    /// No status (`void` or a pointer without `errcode_ret`).
    None,
}

/// One traced function.
#[derive(Clone, Debug)]
struct Function {
    name: String,
    id: u32,
    params: Vec<(String, Ty)>,
    ret: Option<Ty>,
    /// Declared in a Windows-only media-sharing header: traced, but `_args` stays NULL.
    windows_only: bool,
    /// The `#if` condition under which the C header declares its parameter struct, if any.
    c_guard: Option<&'static str>,
    /// Reached through `clGetExtensionFunctionAddress[ForPlatform]`, not the dispatch table.
    extension: bool,
    /// How its wrapper makes the call: itself, or through an override.
    overridden: Override,
}

/// Who makes a function's real call.
#[derive(Clone, Debug, PartialEq)]
enum Override {
    /// The wrapper, unchanged arguments to the next layer.
    None,
    /// A hand-written override in `overrides/<module>.rs`.
    In(String),
    /// Its line in `enqueues.rs`, given the arguments by value and the real call; `records_only`:
    /// a plain line (not a map's or an unmap's), whose wrapper first passes an untraced call on
    /// and tries the records-only path (`enqueues::RecordsOnly`).
    Enqueue { records_only: bool },
}

impl Function {
    fn status(&self) -> Status {
        if self.ret.as_ref() == Some(&Ty::Named("cl_int".into())) {
            Status::Returned
        } else if self.params.iter().any(|(n, _)| n == "errcode_ret") {
            Status::Errcode
        } else {
            Status::None
        }
    }

    fn has_params_struct(&self) -> bool {
        !self.params.is_empty() && !self.windows_only
    }

    fn param_names(&self) -> Vec<&str> {
        self.params.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn has_param(&self, name: &str, ty: &str) -> bool {
        self.params
            .iter()
            .any(|(n, t)| n == name && *t == Ty::Named(ty.into()))
    }
}

/// Files of `opencl-sys` whose aliases are Windows-only (their C types need Windows headers).
const WINDOWS_ONLY_FILES: [&str; 3] = ["cl_d3d10.rs", "cl_d3d11.rs", "cl_dx9_media_sharing.rs"];

/// Files of `opencl-sys` that hold function-pointer aliases.
const ALIAS_FILES: [&str; 7] = [
    "cl_function_types.rs",
    "cl_ext.rs",
    "cl_gl.rs",
    "cl_egl.rs",
    "cl_d3d10.rs",
    "cl_d3d11.rs",
    "cl_dx9_media_sharing.rs",
];

/// Local names of the generated wrappers, which no OpenCL parameter may take.
const RESERVED_LOCALS: [&str; 6] = [
    "next_fn",
    "call_args",
    "scope",
    "ret",
    "status",
    "own_status",
];

/// Runtimes (ICDs) per extension function that get a wrapper of their own; must equal
/// `extensions::RUNTIMES` in pti-core (a test there checks it).
const RUNTIME_SLOTS: usize = 8;

/// The functions whose `_kernel_name` the wrappers fill in.
const KERNEL_LAUNCHES: [&str; 2] = ["clEnqueueNDRangeKernel", "clEnqueueTask"];

/// The C header's guard for each extension function's parameter struct: the macro the Khronos
/// headers define when they declare the extension's types. Provisional extensions whose
/// signatures changed between header releases are guarded by their version macro, which only
/// headers recent enough to match `opencl-sys` define.
const C_GUARDS: &[(&str, &str)] = &[
    (
        "clHostMemAllocINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clDeviceMemAllocINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clSharedMemAllocINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    ("clMemFreeINTEL", "defined(cl_intel_unified_shared_memory)"),
    (
        "clMemBlockingFreeINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clGetMemAllocInfoINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clSetKernelArgMemPointerINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clEnqueueMemsetINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clEnqueueMemFillINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clEnqueueMemcpyINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clEnqueueMigrateMemINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clEnqueueMemAdviseINTEL",
        "defined(cl_intel_unified_shared_memory)",
    ),
    (
        "clCreateBufferWithPropertiesINTEL",
        "defined(cl_intel_create_buffer_with_properties)",
    ),
    (
        "clEnqueueReadHostPipeINTEL",
        "defined(cl_intel_program_scope_host_pipe)",
    ),
    (
        "clEnqueueWriteHostPipeINTEL",
        "defined(cl_intel_program_scope_host_pipe)",
    ),
    ("clCreateProgramWithILKHR", "defined(cl_khr_il_program)"),
    (
        "clCreateCommandBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clRetainCommandBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clReleaseCommandBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clFinalizeCommandBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clEnqueueCommandBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandBarrierWithWaitListKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandCopyBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandCopyBufferRectKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandCopyBufferToImageKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandCopyImageKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandCopyImageToBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandFillBufferKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandFillImageKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandNDRangeKernelKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandSVMMemcpyKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clCommandSVMMemFillKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clGetCommandBufferInfoKHR",
        "defined(CL_KHR_COMMAND_BUFFER_EXTENSION_VERSION)",
    ),
    (
        "clUpdateMutableCommandsKHR",
        "defined(CL_KHR_COMMAND_BUFFER_MUTABLE_DISPATCH_EXTENSION_VERSION)",
    ),
    (
        "clGetKernelSuggestedLocalWorkSizeKHR",
        "defined(cl_khr_suggested_local_work_size)",
    ),
    (
        "clCreateCommandQueueWithPropertiesKHR",
        "defined(cl_khr_create_command_queue)",
    ),
    ("clTerminateContextKHR", "defined(cl_khr_terminate_context)"),
    (
        "clEnqueueAcquireExternalMemObjectsKHR",
        "defined(cl_khr_external_memory)",
    ),
    (
        "clEnqueueReleaseExternalMemObjectsKHR",
        "defined(cl_khr_external_memory)",
    ),
    (
        "clCreateSemaphoreWithPropertiesKHR",
        "defined(cl_khr_semaphore)",
    ),
    ("clEnqueueWaitSemaphoresKHR", "defined(cl_khr_semaphore)"),
    ("clEnqueueSignalSemaphoresKHR", "defined(cl_khr_semaphore)"),
    ("clGetSemaphoreInfoKHR", "defined(cl_khr_semaphore)"),
    ("clReleaseSemaphoreKHR", "defined(cl_khr_semaphore)"),
    ("clRetainSemaphoreKHR", "defined(cl_khr_semaphore)"),
    (
        "clGetSemaphoreHandleForTypeKHR",
        "defined(cl_khr_external_semaphore)",
    ),
];

/// Where `opencl-sys`'s sources are, from `cargo metadata`.
fn opencl_sys_src(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let manifest = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "opencl-sys")
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or("cargo metadata does not list opencl-sys")?;
    Ok(Path::new(manifest)
        .parent()
        .ok_or("opencl-sys manifest has no directory")?
        .join("src"))
}

fn parse_file(path: &Path) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Signature of a function-pointer alias: parameters (name, type) and return type.
type Signature = (Vec<(String, Ty)>, Option<Ty>);

/// Collects `pub type <fn>_t = Option<unsafe extern "C" fn(..)>` aliases of `file`.
fn collect_aliases(
    file: &syn::File,
    origin: &str,
    out: &mut HashMap<String, (Signature, String)>,
) -> Result<(), String> {
    for item in &file.items {
        let syn::Item::Type(alias) = item else {
            continue;
        };
        let name = alias.ident.to_string();
        let Some(function) = name.strip_suffix("_t") else {
            continue;
        };
        let Ty::Fn { .. } = Ty::from_syn(&alias.ty).unwrap_or(Ty::Named(String::new())) else {
            continue;
        };
        let syn::Type::Path(p) = &*alias.ty else {
            continue;
        };
        let Some(syn::PathArguments::AngleBracketed(args)) =
            p.path.segments.last().map(|s| &s.arguments)
        else {
            continue;
        };
        let Some(syn::GenericArgument::Type(syn::Type::BareFn(f))) = args.args.first() else {
            continue;
        };
        let mut params = Vec::new();
        for input in &f.inputs {
            let Some((ident, _)) = &input.name else {
                return Err(format!("{origin}: {name} has an unnamed parameter"));
            };
            params.push((
                ident.to_string(),
                Ty::from_syn(&input.ty).map_err(|e| format!("{origin}: {name}: {e}"))?,
            ));
        }
        let ret = match &f.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, t) => {
                Some(Ty::from_syn(t).map_err(|e| format!("{origin}: {name}: {e}"))?)
            }
        };
        out.insert(function.to_string(), ((params, ret), origin.to_string()));
    }
    Ok(())
}

/// The dispatch table's function fields, in order (the non-ICD2 layout `opencl-sys` builds).
fn dispatch_order(cl_icd: &syn::File) -> Result<Vec<String>, String> {
    for item in &cl_icd.items {
        let syn::Item::Struct(s) = item else { continue };
        if s.ident != "_cl_icd_dispatch" {
            continue;
        }
        let mut fields = Vec::new();
        for field in &s.fields {
            let gated = field.attrs.iter().any(|a| {
                use quote::ToTokens;
                let text = a.to_token_stream().to_string();
                text.contains("cfg") && !text.contains("not")
            });
            let name = field
                .ident
                .as_ref()
                .ok_or("unnamed dispatch field")?
                .to_string();
            // Fields present only with a feature (ICD2 tag, OpenCL 3.1) are not in the table
            // libpti builds; a field typed `intptr_t` is a placeholder.
            if gated || quote_type(&field.ty) == "intptr_t" {
                continue;
            }
            fields.push(name);
        }
        return Ok(fields);
    }
    Err("cl_icd.rs has no _cl_icd_dispatch".into())
}

/// The hand-written overrides: the `cl*` functions of each file of `overrides/` (by module), and
/// the functions `enqueues.rs` names (the first `cl*` name of each `enqueue!` line).
fn override_names(root: &Path) -> Result<HashMap<String, Override>, String> {
    let dir = root.join("pti-core/src/backend/opencl");
    let mut out = HashMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("overrides"))
        .map_err(|e| format!("cannot read {}: {e}", dir.join("overrides").display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for path in files {
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        for item in parse_file(&path)?.items {
            if let syn::Item::Fn(f) = item
                && f.sig.ident.to_string().starts_with("cl")
            {
                out.insert(f.sig.ident.to_string(), Override::In(module.clone()));
            }
        }
    }
    for item in parse_file(&dir.join("enqueues.rs"))?.items {
        let syn::Item::Macro(m) = item else { continue };
        if !m.mac.path.is_ident("enqueue") {
            continue;
        }
        // Maps and unmaps (`enqueue!(map ...)`) always take the general path.
        let records_only = !m.mac.tokens.clone().into_iter().next().is_some_and(
            |t| matches!(t, proc_macro2::TokenTree::Ident(i) if !i.to_string().starts_with("cl")),
        );
        let name = m.mac.tokens.clone().into_iter().find_map(|t| match t {
            proc_macro2::TokenTree::Ident(i) if i.to_string().starts_with("cl") => {
                Some(i.to_string())
            }
            _ => None,
        });
        let name = name.ok_or("an enqueue! line of enqueues.rs names no cl* function")?;
        if out
            .insert(name.clone(), Override::Enqueue { records_only })
            .is_some()
        {
            return Err(format!("{name} has an override and an enqueue line"));
        }
    }
    Ok(out)
}

/// Reads every input and returns the traced functions in ID order.
fn functions(root: &Path) -> Result<Vec<Function>, String> {
    let src = opencl_sys_src(root)?;
    let mut aliases = HashMap::new();
    for file in ALIAS_FILES {
        collect_aliases(&parse_file(&src.join(file))?, file, &mut aliases)?;
    }
    collect_aliases(
        &parse_file(&root.join("pti-sys/src/opencl_extra.rs"))?,
        "opencl_extra.rs",
        &mut aliases,
    )?;
    let order = dispatch_order(&parse_file(&src.join("cl_icd.rs"))?)?;
    let table = crate::ids::read_table(root, "opencl")?;
    let overrides = override_names(root)?;
    let guards: HashMap<&str, &'static str> = C_GUARDS.iter().copied().collect();
    let mut out = Vec::new();
    for (id, name) in table {
        let slot = order.iter().position(|f| *f == name);
        match slot {
            Some(s) if s + 1 != id as usize => {
                return Err(format!(
                    "opencl.tsv gives {name} ID {id}, but it is dispatch entry {}",
                    s + 1
                ));
            }
            None if (id as usize) <= order.len() => {
                return Err(format!(
                    "opencl.tsv ID {id} ({name}) is in the dispatch range but not in the table"
                ));
            }
            _ => {}
        }
        let ((params, ret), origin) = aliases
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("no function type for {name} in opencl-sys or pti-sys"))?;
        if let Some((p, _)) = params
            .iter()
            .find(|(p, _)| RESERVED_LOCALS.contains(&p.as_str()))
        {
            return Err(format!(
                "{name} has a parameter named {p}, which the wrappers use"
            ));
        }
        let extension = slot.is_none();
        let c_guard = guards.get(name.as_str()).copied();
        if extension && c_guard.is_none() && origin != "opencl_extra.rs" {
            return Err(format!("extension function {name} needs a C_GUARDS entry"));
        }
        out.push(Function {
            overridden: overrides.get(&name).cloned().unwrap_or(Override::None),
            windows_only: WINDOWS_ONLY_FILES.contains(&origin.as_str()),
            name,
            id,
            params,
            ret,
            c_guard,
            extension,
        });
    }
    if let Some(h) = overrides
        .keys()
        .find(|h| !out.iter().any(|f| f.name == **h))
    {
        return Err(format!(
            "an override names {h}, which is not a traced function"
        ));
    }
    Ok(out)
}

/// Everything the OpenCL generator writes.
pub fn generate(root: &Path) -> Result<Vec<GeneratedFile>, String> {
    let functions = functions(root)?;
    Ok(vec![
        GeneratedFile {
            path: "pti-core/src/backend/opencl/wrappers.rs".into(),
            contents: render_wrappers(&functions),
        },
        GeneratedFile {
            path: "pti-core/src/backend/opencl/params.rs".into(),
            contents: render_params(&functions),
        },
        GeneratedFile {
            path: "pti-core/src/backend/opencl/args.rs".into(),
            contents: render_args(&functions),
        },
        GeneratedFile {
            path: "include/pti/pti_cl_params.h".into(),
            contents: render_c_params(&functions),
        },
    ])
}

const RUST_BANNER: &str = "// GENERATED by `cargo xtask gen` (xtask/src/opencl.rs) from the function types of opencl-sys\n\
// and pti-sys and from pti-core/api-ids/opencl.tsv. Do not edit by hand.\n\n";

/// Names that come from `libc` rather than `opencl-sys`.
const LIBC_NAMES: [&str; 6] = ["c_char", "c_uchar", "c_void", "size_t", "intptr_t", "c_int"];

fn imports(functions: &[Function]) -> String {
    let mut names = BTreeSet::new();
    for f in functions {
        f.params.iter().for_each(|(_, t)| t.names(&mut names));
        if let Some(r) = &f.ret {
            r.names(&mut names);
        }
    }
    let libc: Vec<&str> = LIBC_NAMES
        .iter()
        .copied()
        .filter(|n| names.contains(*n))
        .collect();
    format!(
        "use libc::{{{}}};\n\
         #[allow(unused_imports)] // Windows-only types, used by the wrappers only\n\
         use pti_sys::opencl::{{cl_d3d10::*, cl_d3d11::*, cl_dx9_media_sharing::*}};\n\
         use pti_sys::opencl::cl_egl::*;\n\
         use pti_sys::opencl::*;\n",
        libc.join(", ")
    )
}

fn render_params(functions: &[Function]) -> String {
    let mut out = String::from(RUST_BANNER);
    out.push_str(
        "//! The parameter structs that `_args` points at: `pti_cl_params_<function>` holds one\n\
         //! pointer per argument, in order, each pointing at the argument's value for the length of\n\
         //! the call (as `include/pti/pti_cl_params.h` declares them for C). Functions without\n\
         //! parameters, and the Windows-only media-sharing functions, have none (`_args` is NULL).\n\n\
         #![allow(non_camel_case_types, non_snake_case)]\n\n",
    );
    out.push_str(&imports(functions));
    for f in functions.iter().filter(|f| f.has_params_struct()) {
        let _ = writeln!(
            out,
            "\n/// The arguments of `{}` (OpenCL API ID {}).\n#[repr(C)]\n#[derive(Clone, Copy, Debug)]\npub struct pti_cl_params_{} {{",
            f.name, f.id, f.name
        );
        for (name, ty) in &f.params {
            let _ = writeln!(
                out,
                "    /// Points at the `{name}` argument.\n    pub {name}: *const {},",
                ty.rust()
            );
        }
        out.push_str("}\n");
    }
    out
}

fn render_args(functions: &[Function]) -> String {
    let enqueues: Vec<Function> = functions
        .iter()
        .filter(|f| matches!(f.overridden, Override::Enqueue { .. }))
        .cloned()
        .collect();
    let mut out = String::from(RUST_BANNER);
    out.push_str(
        "//! The arguments of each enqueue function that `enqueues.rs` describes, by value, with the\n\
         //! API's parameter names: what its wrapper hands to that line's override.\n\n\
         #![allow(non_camel_case_types, dead_code, unused_imports)]\n\n",
    );
    out.push_str(&imports(&enqueues));
    for f in &enqueues {
        let _ = writeln!(
            out,
            "\n/// The arguments of `{}` (OpenCL API ID {}).\n#[derive(Clone, Copy)]\npub(super) struct {} {{",
            f.name, f.id, f.name
        );
        for (name, ty) in &f.params {
            let _ = writeln!(out, "    pub(super) {name}: {},", ty.rust());
        }
        out.push_str("}\n");
    }
    out
}

fn render_c_params(functions: &[Function]) -> String {
    let mut out = String::from(
        "/* GENERATED by `cargo xtask gen` (xtask/src/opencl.rs) from the function types of opencl-sys\n \
         * and pti-sys and from pti-core/api-ids/opencl.tsv. Do not edit by hand. */\n\
         /*\n \
         * The parameters of every traced OpenCL function, as the callbacks' `_args` shows them:\n \
         * for function F, `_args` points at a `pti_cl_params_F` whose fields point, in order, at\n \
         * each argument's value; they are valid during the callback only. Functions without\n \
         * parameters and the Windows-only media-sharing functions have none (`_args` is NULL).\n \
         * Structs of extension functions are declared only when the OpenCL headers in use\n \
         * declare that extension's types.\n \
         */\n\
         #ifndef PTI_CL_PARAMS_H_\n#define PTI_CL_PARAMS_H_\n\n\
         #ifndef CL_TARGET_OPENCL_VERSION\n#define CL_TARGET_OPENCL_VERSION 300\n#endif\n\
         #include <CL/cl.h>\n#include <CL/cl_ext.h>\n#include <CL/cl_gl.h>\n#include <CL/cl_egl.h>\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n",
    );
    for f in functions.iter().filter(|f| f.has_params_struct()) {
        let _ = write!(out, "\n/* {} (OpenCL API ID {}) */\n", f.name, f.id);
        if let Some(guard) = f.c_guard {
            let _ = writeln!(out, "#if {guard}");
        }
        let _ = writeln!(out, "typedef struct pti_cl_params_{} {{", f.name);
        for (name, ty) in &f.params {
            let field = Ty::Ptr {
                is_const: false,
                to: Box::new(ty.clone()),
            };
            let _ = writeln!(out, "  {};", field.c_decl(name, false));
        }
        let _ = writeln!(out, "}} pti_cl_params_{};", f.name);
        if f.c_guard.is_some() {
            out.push_str("#endif\n");
        }
    }
    out.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* PTI_CL_PARAMS_H_ */\n");
    out
}

fn render_wrappers(functions: &[Function]) -> String {
    let mut out = String::from(RUST_BANNER);
    out.push_str(
        "//! One `extern \"C\"` wrapper per traced OpenCL function. Each finds the next layer's entry\n\
         //! (the dispatch table below libpti, or for an extension function the runtime's own\n\
         //! address), builds the parameter struct, and runs the call through the dispatch entry;\n\
         //! functions with an override (in `overrides/`, or a line of `enqueues.rs`) call it\n\
         //! (behind the dispatch's panic boundary, `run_override`), and it makes the real call. An\n\
         //! enqueue function first tries its records-only path (`enqueues::RecordsOnly`).\n\
         //! Also here: the layer's dispatch table and the table of wrapped extension functions.\n\n\
         #![allow(non_snake_case, non_camel_case_types, clippy::too_many_arguments, clippy::let_unit_value, unused_variables)]\n\n\
         use core::ffi::CStr;\n\n",
    );
    out.push_str(&imports(functions));
    out.push_str(
        "use pti_sys::opencl::cl_icd::cl_icd_dispatch;\n\
         use pti_sys::opencl_extra::*;\n\n\
         use super::{args, enqueues, errcode, extensions, kernels, next, overrides, params, queues};\n\
         use crate::api::ApiGroup;\n\
         use super::enqueues::RecordsOnly as _;\n\
         use crate::dispatch::{self, CallInfo, NoReturnCode, run_override, trace_call};\n\
         use crate::ids::opencl as ids;\n",
    );
    for f in functions {
        render_wrapper(&mut out, f);
    }
    render_layer_table(&mut out, functions);
    render_extension_table(&mut out, functions);
    out
}

fn render_wrapper(out: &mut String, f: &Function) {
    let name = &f.name;
    let params: Vec<String> = f
        .params
        .iter()
        .map(|(n, t)| format!("{n}: {}", t.rust()))
        .collect();
    let ret = f
        .ret
        .as_ref()
        .map_or(String::new(), |r| format!(" -> {}", r.rust()));
    let kind = if f.extension {
        "extension function"
    } else {
        "dispatch-table function"
    };
    // An extension wrapper is one function per runtime slot (`SLOT`): the address handed out
    // says which runtime's function to call.
    let generics = if f.extension {
        "<const SLOT: usize>"
    } else {
        ""
    };
    let slot_doc = if f.extension {
        " `SLOT` is the runtime whose function this instance calls (see `extensions`)."
    } else {
        ""
    };
    let _ = write!(
        out,
        "\n/// `{name}` (OpenCL API ID {}): {kind}{}.{slot_doc}\npub(super) unsafe extern \"C\" fn {name}{generics}({}){ret} {{\n",
        f.id,
        if f.overridden == Override::None {
            ""
        } else {
            ", overridden"
        },
        params.join(", ")
    );
    // The next layer's entry, or what the function returns when there is none.
    let fail = match (f.status(), &f.ret) {
        (Status::Returned, _) => "return CL_INVALID_OPERATION;",
        (Status::Errcode, _) => {
            "// SAFETY: `errcode_ret` is the caller's, NULL or writable as the API requires.\n        \
             return unsafe { errcode::unavailable(errcode_ret) };"
        }
        (Status::None, None) => "return;",
        (Status::None, Some(_)) => "return core::ptr::null_mut();",
    };
    let unavailable = format!("next::missing(ids::{name});\n        {fail}");
    if f.extension {
        let _ = write!(
            out,
            "    let Some(next_fn) = extensions::entry::<{name}_t>(Ext::{name}, SLOT) else {{\n        {unavailable}\n    }};\n"
        );
    } else {
        let _ = write!(
            out,
            "    let Some(next_fn) = next::dispatch().{name} else {{\n        {unavailable}\n    }};\n"
        );
    }
    if f.overridden == (Override::Enqueue { records_only: true }) {
        // An untraced call straight on (the line's override has nothing to do for it; checked
        // before anything else, so that it costs the program one load), then the records-only
        // path (`enqueues::RecordsOnly`).
        let names = f.param_names();
        let _ = write!(
            out,
            "    if !dispatch::traced(ApiGroup::OpenCl, ids::{name}) {{\n        // SAFETY: the caller's arguments, unchanged, to the next layer's entry for this function.\n        return unsafe {{ next_fn({}) }};\n    }}\n",
            names.join(", ")
        );
        let with_slot: Vec<&str> = names
            .iter()
            .map(|n| if *n == "event" { "event_slot" } else { n })
            .collect();
        let plain = format!("next_fn({})", with_slot.join(", "));
        let _ = write!(
            out,
            "    // SAFETY: the caller's arguments, as the OpenCL API defines them, to the records-only\n    // path, which passes them on to the next layer's entry with the event pointer it chooses.\n    if let Some(ret) = unsafe {{\n        args::{name} {{ {} }}.records_only(|event_slot| {plain})\n    }} {{\n        return ret;\n    }}\n",
            names.join(", ")
        );
    }
    let args = if f.has_params_struct() {
        let fields: Vec<String> = f
            .param_names()
            .iter()
            .map(|n| format!("{n}: &{n}"))
            .collect();
        let _ = writeln!(
            out,
            "    let call_args = params::pti_cl_params_{name} {{ {} }};",
            fields.join(", ")
        );
        "(&raw const call_args).cast()"
    } else {
        "core::ptr::null()"
    };
    let kernel_name = if KERNEL_LAUNCHES.contains(&name.as_str()) {
        "kernels::name(kernel)"
    } else {
        "None"
    };
    let context = if f.has_param("context", "cl_context") {
        "context.cast()"
    } else if f.has_param("command_queue", "cl_command_queue") {
        "queues::context_of(command_queue)"
    } else {
        "core::ptr::null_mut()"
    };
    let _ = write!(
        out,
        "    trace_call(\n        ApiGroup::OpenCl,\n        ids::{name},\n        || CallInfo {{ args: {args}, kernel_name: {kernel_name}, context: {context} }},\n        |scope| {{\n"
    );
    let call_args: Vec<String> = f.param_names().iter().map(|n| n.to_string()).collect();
    let plain = format!("next_fn({})", call_args.join(", "));
    let plain_safety = "// SAFETY: the caller's arguments, unchanged, to the next layer's entry for this function.";
    let through = |call: String| {
        format!(
            "run_override(\n                scope,\n                {plain_safety}\n                || unsafe {{ {plain} }},\n                // SAFETY: the caller's arguments, as the OpenCL API defines them, go to the\n                // override, which passes them on to the next layer's entry for this function.\n                |scope| unsafe {{ {call} }},\n            )"
        )
    };
    let (call, safety) = match &f.overridden {
        Override::None => (format!("unsafe {{ {plain} }}"), plain_safety),
        Override::In(module) => {
            let mut override_args = call_args.clone();
            override_args.insert(0, "next_fn".into());
            override_args.insert(0, "scope".into());
            let call = format!("overrides::{module}::{name}({})", override_args.join(", "));
            (through(call), "")
        }
        Override::Enqueue { .. } => {
            // The real call, with the event pointer the line's override passes.
            let call = format!(
                "enqueues::{name}(scope, args::{name} {{ {} }}, |event| {plain})",
                call_args.join(", ")
            );
            (through(call), "")
        }
    };
    let safety = if safety.is_empty() {
        String::new()
    } else {
        format!("{safety}\n            ")
    };
    match f.status() {
        Status::Returned => {
            let _ = write!(
                out,
                "            {safety}let status = {call};\n            (status, status)\n"
            );
        }
        Status::Errcode => {
            let set_context = if f.ret == Some(Ty::Named("cl_context".into())) {
                "            scope.set_context(ret.cast());\n"
            } else {
                ""
            };
            let _ = write!(
                out,
                "            let mut own_status = CL_SUCCESS;\n            let errcode_ret = errcode::slot(scope, errcode_ret, &mut own_status);\n            {safety}let ret = {call};\n{set_context}            // SAFETY: NULL, libpti's own status, or the caller's `errcode_ret`, just written.\n            (ret, unsafe {{ errcode::read(errcode_ret) }})\n"
            );
        }
        Status::None => {
            let _ = write!(
                out,
                "            {safety}let ret = {call};\n            (ret, NoReturnCode)\n"
            );
        }
    }
    out.push_str("        },\n    )\n}\n");
}

fn render_layer_table(out: &mut String, functions: &[Function]) {
    out.push_str(
        "\n/// The layer's dispatch table: a wrapper for every entry the next layer provides, and no\n\
         /// entry where it provides none (the loader then keeps its own).\n\
         pub(super) fn layer_dispatch(target: &cl_icd_dispatch) -> cl_icd_dispatch {\n    cl_icd_dispatch {\n",
    );
    for f in functions.iter().filter(|f| !f.extension) {
        let _ = writeln!(out, "        {0}: target.{0}.and(Some({0} as _)),", f.name);
    }
    out.push_str("        clGetKernelSuggestedLocalWorkSize: 0,\n    }\n}\n\n");
    let dispatch_count = functions.iter().filter(|f| !f.extension).count();
    let _ = writeln!(
        out,
        "/// Entries of the layer's dispatch table (the table up to OpenCL 3.0).\npub(super) const DISPATCH_ENTRIES: u32 = {dispatch_count};"
    );
}

fn render_extension_table(out: &mut String, functions: &[Function]) {
    let exts: Vec<&Function> = functions.iter().filter(|f| f.extension).collect();
    out.push_str(
        "\n/// The extension functions libpti wraps when a program asks for their address.\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq)]\n#[repr(usize)]\npub(super) enum Ext {\n",
    );
    for f in &exts {
        let _ = writeln!(out, "    {},", f.name);
    }
    out.push_str("}\n\nimpl Ext {\n");
    let _ = writeln!(
        out,
        "    /// Every wrapped extension function.\n    pub(super) const ALL: [Ext; {}] = [{}];",
        exts.len(),
        exts.iter()
            .map(|f| format!("Ext::{}", f.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str(
        "\n    /// The function's name.\n    pub(super) fn name(self) -> &'static CStr {\n        match self {\n",
    );
    for f in &exts {
        let _ = writeln!(out, "            Ext::{0} => c\"{0}\",", f.name);
    }
    out.push_str(
        "        }\n    }\n\n    /// libpti's wrapper for the runtime in `slot` (below [`extensions::RUNTIMES`]),\n    /// handed out in place of that runtime's function.\n    pub(super) fn wrapper(self, slot: usize) -> Option<*mut core::ffi::c_void> {\n        Some(match (self, slot) {\n",
    );
    for f in &exts {
        for slot in 0..RUNTIME_SLOTS {
            let _ = writeln!(
                out,
                "            (Ext::{0}, {slot}) => {0}::<{slot}> as *mut core::ffi::c_void,",
                f.name
            );
        }
    }
    out.push_str("            _ => return None,\n");
    out.push_str("        })\n    }\n}\n");
}

#[cfg(test)]
mod tests {
    use super::Ty;

    fn named(n: &str) -> Ty {
        Ty::Named(n.into())
    }

    fn ptr(is_const: bool, to: Ty) -> Ty {
        Ty::Ptr {
            is_const,
            to: Box::new(to),
        }
    }

    #[test]
    fn c_declarations_keep_constness_at_each_level() {
        // `*const *const c_char` argument, seen through the struct's extra pointer.
        let strings = ptr(false, ptr(true, ptr(true, named("c_char"))));
        assert_eq!(
            strings.c_decl("strings", false),
            "const char * const **strings"
        );
        assert_eq!(
            ptr(false, named("cl_mem")).c_decl("mem", false),
            "cl_mem *mem"
        );
        let callback = Ty::Fn {
            params: vec![ptr(true, named("c_char")), ptr(false, named("c_void"))],
            ret: None,
        };
        assert_eq!(
            ptr(false, callback).c_decl("pfn_notify", false),
            "void (CL_CALLBACK **pfn_notify)(const char *, void *)"
        );
    }
}
