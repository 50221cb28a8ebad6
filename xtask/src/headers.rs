//! The C API headers, written by cbindgen from the `extern "C"` shells of `pti-capi`.
//!
//! Each header comes from one source file of `pti-capi` (or `pti-abi`), parsed on its own, so a
//! header holds exactly the items of that file and includes the headers below it. Two roots:
//!
//! - `include/pti/`: what both libraries declare. `pti_export.h` <- `pti_version.h` <- `pti.h`
//!   <- `pti_view.h` (which includes the API-ID headers, as Intel's does) <- `pti_callback.h`
//!   (the proposal's Callback API) <- `pti_ext.h`; and Intel PTI 1.2's `pti_metrics.h`,
//!   `pti_metrics_scope.h` and `pti_pc_sampling.h` (exported by `libpti_view.so.1`).
//! - `include/pti-intel/pti/`: Intel's `pti_callback.h`, which has the proposal's file name. A
//!   tool built for Intel's PTI puts this root first (`pkg-config pti_view` does).
//!
//! The set compiles what compiles against Intel PTI 1.2's headers: the same file names and
//! includes, `typedef enum _pti_x {..} pti_x;` enums ([`c_enums`]), Intel's struct layouts.
//! Types a header refers to but does not define are left to the header it includes.
//!
//! Enum parameters arrive in Rust as `u32` newtypes (`pti-capi/src/raw.rs`), so that an unknown
//! value from C is a number to reject, never an invalid Rust enum; cbindgen prints those newtypes
//! under the C enum's name (see [`RAW_ENUMS`]).
//!
//! Functions of libpti's own API get ` PTI_SYMBOL(libpti_<name>)` ([`bind_to_own_symbols`]):
//! with `PTI_LIBPTI_SYMBOLS` defined (`pkg-config libpti`, CMake's `Pti::pti`), GCC and Clang
//! bind a tool's calls to the second name libpti exports for each function
//! (`pti-capi/src/symbols.rs`), which no other library defines. Intel's functions are declared
//! under their C names, which `libpti_view.so.1` exports.

use std::path::Path;

use crate::GeneratedFile;

/// The record layouts (the leaf crate `pti-abi`, which builds while pti-core does not: pti-core's
/// generated files may be what breaks it).
use pti_abi as view_abi;

/// How a header's function declarations are bound to symbols.
#[derive(Clone, Copy, PartialEq)]
enum Binding {
    /// libpti's own API: ` PTI_SYMBOL(libpti_<name>)` after each declaration.
    Own,
    /// Intel's API, implemented as `libpti_intel_<name>`: declared under the C name.
    Intel,
}

/// One header and what goes into it.
struct Header {
    /// Path relative to the workspace root.
    file: &'static str,
    /// Source files, parsed together; the first one names the header's origin.
    sources: &'static [&'static str],
    guard: &'static str,
    includes: &'static [&'static str],
    /// Types that must appear even though no function of the file names them directly.
    types: &'static [&'static str],
    /// Types of the sources that belong to a header below (they are referred to, not repeated).
    exclude: &'static [&'static str],
    /// Record layouts the header asserts with `static_assert`s.
    layouts: &'static [view_abi::RecordLayout],
    sys_includes: &'static [&'static str],
    binding: Binding,
    /// `(Rust name, C name)` for this header only.
    renames: &'static [(&'static str, &'static str)],
    /// Text right after the includes.
    prologue: &'static str,
}

/// What most headers take from the defaults.
const HEADER: Header = Header {
    file: "",
    sources: &[],
    guard: "",
    includes: &[],
    types: &[],
    exclude: &[],
    layouts: &[],
    sys_includes: &["stddef.h", "stdint.h"],
    binding: Binding::Own,
    renames: &[],
    prologue: "",
};

/// What `pti.h` declares for the headers above it (`pti-abi/src/handles.rs`): the others refer to
/// these and never repeat them.
const PTI_H_TYPES: &[&str] = &[
    "PTI_MAX_DEVICE_UUID_SIZE",
    "pti_device_handle_t",
    "pti_backend_ctx_t",
    "pti_backend_queue_t",
    "pti_backend_evt_t",
    "pti_backend_command_list_t",
    "pti_backend_kernel_t",
    "pti_backend_module_t",
];

/// What `pti_view.h` leaves to `pti_ext.h`.
const VIEW_H_EXCLUDES: &[&str] = &[
    "pti_view_record_command_execution",
    "pti_view_record_kernel_launch",
    "pti_view_record_loss",
    "pti_view_loss_reason",
    "pti_view_memory_operation",
    "pti_view_record_memory_allocation",
    "pti_view_annotation_type",
    "pti_view_record_annotation",
];

/// The types and constants of `pti_view.h`.
const VIEW_TYPES: &[&str] = &[
    "PTI_MAX_PCI_ADDRESS_SIZE",
    "PTI_INVALID_QUEUE_ID",
    "pti_api_group_id",
    "pti_api_class",
    "pti_view_kind",
    "pti_view_synchronization_type",
    "pti_view_memory_type",
    "pti_view_memcpy_type",
    "pti_view_external_kind",
    "pti_view_overhead_kind",
    "pti_view_record_base",
    "pti_view_record_kernel",
    "pti_view_record_kernel_v2",
    "pti_view_record_memory_copy",
    "pti_view_record_memory_copy_v2",
    "pti_view_record_memory_copy_p2p",
    "pti_view_record_memory_copy_p2p_v2",
    "pti_view_record_memory_fill",
    "pti_view_record_memory_fill_v2",
    "pti_view_record_synchronization",
    "pti_view_record_external_correlation",
    "pti_view_record_overhead",
    "pti_view_record_api",
    "pti_view_record_comms",
    "pti_fptr_buffer_requested",
    "pti_fptr_buffer_completed",
    "pti_fptr_get_timestamp",
];

/// Intel's Callback API names its types as the proposal does; the Rust sources cannot.
const INTEL_CALLBACK_RENAMES: &[(&str, &str)] = &[
    ("pti_cb_domain", "pti_callback_domain"),
    ("pti_cb_phase", "pti_callback_phase"),
    ("IntelCallback", "pti_callback_function"),
    ("pti_intel_callback_function", "pti_callback_function"),
    ("_pti_callback_subscriber_intel", "_pti_callback_subscriber"),
];

const HEADERS: [Header; 10] = [
    Header {
        file: "include/pti/pti_version.h",
        sources: &["pti-capi/src/version.rs"],
        guard: "PTI_VERSION_H_",
        includes: &["pti_export.h"],
        sys_includes: &["stdint.h"],
        ..HEADER
    },
    Header {
        file: "include/pti/pti.h",
        sources: &["pti-capi/src/pti.rs", "pti-abi/src/handles.rs"],
        guard: "PTI_H_",
        includes: &["pti_export.h", "pti_version.h"],
        // And PTI_H_TYPES (see `config`).
        types: &["pti_result"],
        ..HEADER
    },
    Header {
        file: "include/pti/pti_view.h",
        sources: &["pti-abi/src/lib.rs", "pti-capi/src/view.rs"],
        guard: "PTI_VIEW_H_",
        includes: &[
            "pti.h",
            "pti_driver_levelzero_api_ids.h",
            "pti_driver_opencl_api_ids.h",
            "pti_runtime_sycl_api_ids.h",
        ],
        types: VIEW_TYPES,
        exclude: VIEW_H_EXCLUDES,
        layouts: &view_abi::LAYOUTS,
        ..HEADER
    },
    Header {
        file: "include/pti/pti_callback.h",
        sources: &["pti-capi/src/callback.rs"],
        guard: "PTI_CALLBACK_H_",
        includes: &["pti_view.h"],
        types: &[
            "pti_callback_domain",
            "pti_callback_site",
            "pti_api_id",
            "pti_apicall_callback_data",
            "pti_critical_event_callback_data",
        ],
        ..HEADER
    },
    Header {
        file: "include/pti/pti_ext.h",
        sources: &["pti-capi/src/ext.rs", "pti-abi/src/lib.rs"],
        guard: "PTI_EXT_H_",
        includes: &["pti_callback.h"],
        types: &[
            "pti_view_memory_operation",
            "pti_view_record_memory_allocation",
            "pti_view_record_command_execution",
            "pti_view_record_kernel_launch",
            "pti_view_loss_reason",
            "pti_view_record_loss",
            "pti_view_annotation_type",
            "pti_view_record_annotation",
        ],
        exclude: VIEW_TYPES,
        layouts: &view_abi::EXT_LAYOUTS,
        ..HEADER
    },
    Header {
        file: "include/pti/pti_metrics.h",
        sources: &["pti-capi/src/intel/metrics.rs"],
        guard: "PTI_METRICS_H_",
        includes: &["pti.h"],
        sys_includes: &["stdbool.h", "stddef.h", "stdint.h", "stdlib.h"],
        binding: Binding::Intel,
        ..HEADER
    },
    Header {
        file: "include/pti/pti_metrics_scope.h",
        sources: &["pti-capi/src/intel/metrics_scope.rs"],
        guard: "PTI_METRICS_SCOPE_H_",
        includes: &["pti.h", "pti_metrics.h"],
        types: &["pti_metrics_scope_mode_t", "pti_metrics_scope_record_t"],
        binding: Binding::Intel,
        ..HEADER
    },
    Header {
        file: "include/pti/pti_pc_sampling.h",
        sources: &["pti-capi/src/intel/pc_sampling.rs"],
        guard: "PTI_PC_SAMPLING_H_",
        includes: &["pti.h"],
        binding: Binding::Intel,
        ..HEADER
    },
    Header {
        file: "include/pti-intel/pti/pti_callback.h",
        sources: &["pti-capi/src/intel/callback.rs"],
        guard: "PTI_INTEL_CALLBACK_H_",
        includes: &["pti.h", "pti_view.h"],
        types: &[
            "pti_cb_domain",
            "pti_cb_phase",
            "pti_internal_event_type",
            "pti_backend_command_list_type",
            "pti_gpu_operation_kind",
            "pti_gpu_op_details",
            "pti_callback_gpu_op_data",
            "pti_callback_kernel_data",
            "pti_callback_driver_api_data",
            "pti_internal_callback_data",
            "IntelCallback",
        ],
        exclude: &["pti_intel_callback_function"],
        binding: Binding::Intel,
        renames: INTEL_CALLBACK_RENAMES,
        ..HEADER
    },
    Header {
        file: "include/pti/pti_export.h",
        sources: &[],
        guard: "PTI_EXPORT_H_",
        prologue: EXPORT_MACROS,
        ..HEADER
    },
];

/// `(Rust newtype, C enum)`: parameters declared with the newtype print as the enum.
pub const RAW_ENUMS: [(&str, &str); 13] = [
    ("RawResult", "pti_result"),
    ("RawApiGroup", "pti_api_group_id"),
    ("RawDomain", "pti_callback_domain"),
    ("RawSite", "pti_callback_site"),
    ("RawViewKind", "pti_view_kind"),
    ("RawExternalKind", "pti_view_external_kind"),
    ("RawOverheadKind", "pti_view_overhead_kind"),
    ("RawMemoryType", "pti_view_memory_type"),
    ("RawMemcpyType", "pti_view_memcpy_type"),
    ("RawApiClass", "pti_api_class"),
    ("RawIntelDomain", "pti_callback_domain"),
    ("RawIntelPhase", "pti_callback_phase"),
    ("RawMetricsScopeMode", "pti_metrics_scope_mode_t"),
];

/// `pti_export.h`, which every header includes first: Intel's export macros, and the binding
/// of libpti's own declarations to libpti's own symbols.
const EXPORT_MACROS: &str = "\
/* PTI_EXPORT and its relatives, as Intel PTI's pti_export.h names them: what a library building
 * these functions marks them with. A tool needs none of them. */
#ifndef PTI_EXPORT
#if defined(_WIN32)
#define PTI_EXPORT
#define PTI_NO_EXPORT
#else
#define PTI_EXPORT __attribute__((visibility(\"default\")))
#define PTI_NO_EXPORT __attribute__((visibility(\"hidden\")))
#endif
#endif
#ifndef PTI_DEPRECATED
#if defined(__GNUC__) || defined(__clang__)
#define PTI_DEPRECATED __attribute__((__deprecated__))
#else
#define PTI_DEPRECATED
#endif
#endif
#ifndef PTI_DEPRECATED_EXPORT
#define PTI_DEPRECATED_EXPORT PTI_EXPORT PTI_DEPRECATED
#endif
#ifndef PTI_DEPRECATED_NO_EXPORT
#define PTI_DEPRECATED_NO_EXPORT PTI_NO_EXPORT PTI_DEPRECATED
#endif

/* PTI_SYMBOL(name): the symbol a function of libpti's own API is bound to. By default, the C
 * name (ptiViewEnable), which libpti.so and libpti_view.so.1 both export. A tool of libpti's API
 * defines PTI_LIBPTI_SYMBOLS (pkg-config libpti and CMake's Pti::pti do): with GCC and Clang its
 * calls then go to libpti_<name>, which only libpti.so exports, so they reach libpti.so whatever
 * other library of the process exports the C names (Intel's PTI, libpti_view.so.1, a tool's
 * own). A tool built for Intel's PTI must not define it: it links libpti_view.so.1. */
#ifndef PTI_SYMBOL
#if defined(PTI_LIBPTI_SYMBOLS) && (defined(__GNUC__) || defined(__clang__))
#define PTI_SYMBOL(name) __asm__(#name)
#else
#define PTI_SYMBOL(name)
#endif
#endif
";

/// Appends ` PTI_SYMBOL(libpti_<name>)` to the declaration of every `pti*` function in `text`
/// (declarations start at a line's start with their return type and end with `);`).
fn bind_to_own_symbols(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4096);
    let mut pending: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if pending.is_none() {
            pending = declared_function(line);
        }
        match pending.as_deref() {
            Some(name) if line.trim_end().ends_with(");") => {
                let end = line.rfind(");").expect("checked just above");
                out.push_str(&line[..end]);
                out.push_str(&format!(") PTI_SYMBOL(libpti_{name});"));
                out.push_str(&line[end + 2..]);
                pending = None;
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// The function a line starts to declare (`<return type> pti<Name>(`), if it does.
fn declared_function(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') || line.starts_with("typedef") {
        return None;
    }
    let open = line.find('(')?;
    let head = &line[..open];
    let name = head.rsplit([' ', '*']).next()?;
    (name.starts_with("pti") && name.len() > 3 && name.as_bytes()[3].is_ascii_uppercase())
        .then(|| name.to_string())
}

fn config(root: &Path, header: &Header) -> cbindgen::Config {
    let mut config = cbindgen::Config {
        language: cbindgen::Language::C,
        cpp_compat: true,
        style: cbindgen::Style::Both,
        include_guard: Some(header.guard.to_string()),
        header: Some(format!(
            "/* Generated by cbindgen from {} (`cargo xtask gen`). Do not edit by hand. */",
            header.sources.join(" and ")
        )),
        trailer: (!header.layouts.is_empty()).then(|| layout_checks(header)),
        no_includes: true,
        sys_includes: header.sys_includes.iter().map(|s| s.to_string()).collect(),
        // Intel's headers include each other as "pti/<file>"; so do these, from either root.
        includes: header.includes.iter().map(|s| format!("pti/{s}")).collect(),
        usize_is_size_t: true,
        after_includes: Some(format!(
            "{}{}",
            header.prologue,
            string_constants(root, header)
        )),
        ..Default::default()
    };
    config.export.include = header.types.iter().map(|s| s.to_string()).collect();
    config
        .export
        .exclude
        .extend(header.exclude.iter().map(|s| s.to_string()));
    // `pti.h` declares these; every other header refers to them.
    let pti_h_types = PTI_H_TYPES.iter().map(|s| s.to_string());
    if header.file == "include/pti/pti.h" {
        config.export.include.extend(pti_h_types);
    } else {
        config.export.exclude.extend(pti_h_types);
    }
    for (raw, c_name) in RAW_ENUMS {
        config
            .export
            .rename
            .insert(raw.to_string(), c_name.to_string());
        config.export.exclude.push(raw.to_string());
    }
    for (rust, c_name) in header.renames {
        config
            .export
            .rename
            .insert(rust.to_string(), c_name.to_string());
    }
    config.enumeration.prefix_with_name = false;
    config
}

/// `#define NAME "value"` for each `pub const NAME: &str = "value";` of the header's sources,
/// which cbindgen leaves out.
fn string_constants(root: &Path, header: &Header) -> String {
    let mut out = String::new();
    for source in header.sources {
        let text = std::fs::read_to_string(root.join(source)).unwrap_or_default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("pub const ") else {
                continue;
            };
            let Some((name, value)) = rest.split_once(": &str = ") else {
                continue;
            };
            let value = value.trim_end_matches(';');
            out.push_str(&format!("\n#define {name} {value}\n"));
        }
    }
    out
}

/// The member that keeps a C enum 4 bytes wide whatever its values, `<NAME>_FORCE_UINT32 =
/// 0x7fffffff`, as Intel's headers name it, for an enum `body` that has none (neither that nor
/// a member of 0x7fffffff or more, such as Intel's `*_MAX`); empty otherwise. The Rust side
/// takes the values as `uint32_t` and checks them, so the member needs no Rust variant.
fn force_uint32(name: &str, body: &str) -> String {
    let wide = body.lines().any(|l| {
        let l = l.trim();
        l.contains("_FORCE_UINT32")
            || l.split('=')
                .nth(1)
                .map(|v| v.trim().trim_end_matches(','))
                .and_then(|v| v.parse::<u64>().ok())
                .is_some_and(|v| v >= 0x7fff_ffff)
    });
    if wide {
        String::new()
    } else {
        format!("  {}_FORCE_UINT32 = 2147483647,\n", name.to_uppercase())
    }
}

/// Rewrites cbindgen's enums (`enum x : uint32_t {..}` in C++ and C23, `typedef uint32_t x` in
/// older C) as Intel's headers declare them, `typedef enum _x {..} x;` in every language: a
/// plain enum that C++ code can name as `x::VALUE`, pass to `std::to_string` and tag as
/// `enum _x`. Every enum has a `*_FORCE_UINT32 = 0x7fffffff` or larger member, so it stays 4
/// bytes wide, as the Rust side (`#[repr(u32)]`) is.
pub fn c_enums(text: &str) -> String {
    const WIDE: &str = "\n#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L\n  : uint32_t\n#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L\n {\n";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\nenum ") {
        let name_start = at + "\nenum ".len();
        let Some(name_len) = rest[name_start..].find('\n') else {
            break;
        };
        let name = &rest[name_start..name_start + name_len];
        let body_start = name_start + name_len;
        if !rest[body_start..].starts_with(WIDE) {
            out.push_str(&rest[..body_start]);
            rest = &rest[body_start..];
            continue;
        }
        let typedefs = format!(
            "}};\n#ifndef __cplusplus\n#if __STDC_VERSION__ >= 202311L\ntypedef enum {name} {name};\n#else\ntypedef uint32_t {name};\n#endif // __STDC_VERSION__ >= 202311L\n#endif // __cplusplus\n"
        );
        let body = &rest[body_start + WIDE.len()..];
        let end = body
            .find(&typedefs)
            .unwrap_or_else(|| panic!("cbindgen wrote enum {name} in an unexpected form"));
        out.push_str(&rest[..at]);
        out.push_str(&format!("\ntypedef enum _{name} {{\n"));
        out.push_str(&body[..end]);
        out.push_str(&force_uint32(name, &body[..end]));
        out.push_str(&format!("}} {name};\n"));
        rest = &body[end + typedefs.len()..];
    }
    out.push_str(rest);
    out
}

/// Declares `libpti_intel_<name>` functions under their C names (`<name>`), and tags structs
/// and unions `_pti_*`, as Intel's headers of these APIs do.
fn bind_to_intel_names(text: &str) -> String {
    text.replace("libpti_intel_pti", "pti")
        .replace("struct pti_", "struct _pti_")
        .replace("union pti_", "union _pti_")
}

/// `static_assert`s of the size and field offsets of every record of `header`, with the numbers
/// Rust measured (pti-core's `view::abi`), so a C compiler that lays a record out otherwise fails.
fn layout_checks(header: &Header) -> String {
    let guard = header.guard.replace("_H_", "_LAYOUT_CHECKS_");
    let mut out = format!(
        "/* Every record's layout, as libpti writes it: a compiler that disagrees stops here. */\n\
         #ifndef {guard}\n\
         #define {guard}\n\
         #if defined(__cplusplus)\n\
         #define PTI_LAYOUT_CHECK(cond, what) static_assert(cond, what)\n\
         #elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n\
         #define PTI_LAYOUT_CHECK(cond, what) _Static_assert(cond, what)\n\
         #else\n\
         #define PTI_LAYOUT_CHECK_NAME2(line) pti_layout_check_##line\n\
         #define PTI_LAYOUT_CHECK_NAME(line) PTI_LAYOUT_CHECK_NAME2(line)\n\
         #define PTI_LAYOUT_CHECK(cond, what) typedef char PTI_LAYOUT_CHECK_NAME(__LINE__)[(cond) ? 1 : -1]\n\
         #endif\n"
    );
    for (name, size, fields) in header.layouts.iter() {
        out.push_str(&format!(
            "PTI_LAYOUT_CHECK(sizeof({name}) == {size}, \"size of {name}\");\n"
        ));
        for (field, offset) in fields.iter() {
            out.push_str(&format!(
                "PTI_LAYOUT_CHECK(offsetof({name}, {field}) == {offset}, \"offset of {name}.{field}\");\n"
            ));
        }
    }
    out.push_str(&format!("#undef PTI_LAYOUT_CHECK\n#endif /* {guard} */\n"));
    out
}

/// Runs cbindgen for every header.
pub fn generate(root: &Path) -> Result<Vec<GeneratedFile>, String> {
    HEADERS
        .iter()
        .map(|header| {
            Ok(GeneratedFile {
                path: Path::new(header.file).to_path_buf(),
                contents: header_text(root, header)?,
            })
        })
        .collect()
}

/// One header's text. A header without sources is its prologue within its guard.
fn header_text(root: &Path, header: &Header) -> Result<String, String> {
    if header.sources.is_empty() {
        let guard = header.guard;
        return Ok(format!(
            "/* Generated by xtask/src/headers.rs (`cargo xtask gen`). Do not edit by hand. */\n\n\
             #ifndef {guard}\n#define {guard}\n\n{}\n#endif  /* {guard} */\n",
            header.prologue
        ));
    }
    let mut builder = cbindgen::Builder::new().with_config(config(root, header));
    for source in header.sources {
        builder = builder.with_src(root.join(source));
    }
    let bindings = builder
        .generate()
        .map_err(|e| format!("cbindgen on {}: {e}", header.sources.join(", ")))?;
    let mut bytes = Vec::new();
    bindings.write(&mut bytes);
    let text = c_enums(&String::from_utf8(bytes).map_err(|e| e.to_string())?);
    Ok(match header.binding {
        Binding::Own => bind_to_own_symbols(&text),
        Binding::Intel => bind_to_intel_names(&text),
    })
}
