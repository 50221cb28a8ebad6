//! The C API headers, written by cbindgen from the `extern "C"` shells of `pti-capi`.
//!
//! Each header comes from one source file of `pti-capi`, parsed on its own, so a header holds
//! exactly the items of that file and includes the header of the layer below it:
//! `pti.h` <- `pti_view.h` <- `pti_callback.h` <- `pti_ext.h`. Types a header refers to but does
//! not define are left to the header it includes.
//!
//! Enum parameters arrive in Rust as `u32` newtypes (`pti-capi/src/raw.rs`), so that an unknown
//! value from C is a number to reject, never an invalid Rust enum; cbindgen prints those newtypes
//! under the C enum's name (see [`RAW_ENUMS`]).
//!
//! Every function declaration gets ` PTI_SYMBOL(libpti_<name>)` ([`bind_to_own_symbols`]): with
//! GCC and Clang a tool's calls go to the second name libpti exports for each function
//! (`pti-capi/src/symbols.rs`), which no other library defines.

use std::path::Path;

use crate::GeneratedFile;

/// The record layouts (the leaf crate `pti-abi`, which builds while pti-core does not: pti-core's
/// generated files may be what breaks it).
use pti_abi as view_abi;

/// One header and what goes into it.
struct Header {
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
}

/// The types and constants of `pti_view.h`.
const VIEW_TYPES: &[&str] = &[
    "PTI_MAX_DEVICE_UUID_SIZE",
    "PTI_MAX_PCI_ADDRESS_SIZE",
    "PTI_INVALID_QUEUE_ID",
    "pti_api_group_id",
    "pti_api_class",
    "pti_device_handle_t",
    "pti_backend_ctx_t",
    "pti_backend_queue_t",
    "pti_backend_evt_t",
    "pti_backend_command_list_t",
    "pti_backend_kernel_t",
    "pti_backend_module_t",
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

const HEADERS: [Header; 4] = [
    Header {
        file: "pti.h",
        sources: &["pti-capi/src/pti.rs"],
        guard: "PTI_H_",
        includes: &[],
        types: &["pti_result", "pti_version"],
        exclude: &[],
        layouts: &[],
    },
    Header {
        file: "pti_view.h",
        sources: &["pti-abi/src/lib.rs", "pti-capi/src/view.rs"],
        guard: "PTI_VIEW_H_",
        includes: &["pti.h"],
        types: VIEW_TYPES,
        exclude: &[
            "pti_view_memory_operation",
            "pti_view_record_memory_allocation",
        ],
        layouts: &view_abi::LAYOUTS,
    },
    Header {
        file: "pti_callback.h",
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
        exclude: &[],
        layouts: &[],
    },
    Header {
        file: "pti_ext.h",
        sources: &["pti-capi/src/ext.rs", "pti-abi/src/lib.rs"],
        guard: "PTI_EXT_H_",
        includes: &["pti_callback.h"],
        types: &[
            "pti_view_memory_operation",
            "pti_view_record_memory_allocation",
        ],
        exclude: VIEW_TYPES,
        layouts: &view_abi::EXT_LAYOUTS,
    },
];

/// `(Rust newtype, C enum)`: parameters declared with the newtype print as the enum.
pub const RAW_ENUMS: [(&str, &str); 10] = [
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
];

/// What `pti.h` defines before anything else: the binding of declarations to libpti's own
/// symbols.
const SYMBOL_MACRO: &str = "\
/* PTI_SYMBOL(name): the symbol a function of this API is bound to. libpti exports each function
 * under its C name and, as the same function, under libpti_<name>. With GCC and Clang, code built
 * against these headers calls libpti_<name>, which no other library defines: it reaches libpti
 * whatever other library of the process exports the same C names (Intel's PTI, or a library
 * compatible with it). Define PTI_SYMBOL(name) as nothing before including to call the C names. */
#ifndef PTI_SYMBOL
#if defined(__GNUC__) || defined(__clang__)
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

fn config(header: &Header) -> cbindgen::Config {
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
        sys_includes: vec!["stddef.h".into(), "stdint.h".into()],
        includes: header.includes.iter().map(|s| s.to_string()).collect(),
        usize_is_size_t: true,
        after_includes: (header.file == "pti.h").then(|| SYMBOL_MACRO.to_string()),
        ..Default::default()
    };
    config.export.include = header.types.iter().map(|s| s.to_string()).collect();
    config
        .export
        .exclude
        .extend(header.exclude.iter().map(|s| s.to_string()));
    for (raw, c_name) in RAW_ENUMS {
        config
            .export
            .rename
            .insert(raw.to_string(), c_name.to_string());
        config.export.exclude.push(raw.to_string());
    }
    config.enumeration.prefix_with_name = false;
    config
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
            let mut builder = cbindgen::Builder::new().with_config(config(header));
            for source in header.sources {
                builder = builder.with_src(root.join(source));
            }
            let bindings = builder
                .generate()
                .map_err(|e| format!("cbindgen on {}: {e}", header.sources.join(", ")))?;
            let mut bytes = Vec::new();
            bindings.write(&mut bytes);
            let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
            Ok(GeneratedFile {
                path: Path::new("include/pti").join(header.file),
                contents: bind_to_own_symbols(&text),
            })
        })
        .collect()
}
