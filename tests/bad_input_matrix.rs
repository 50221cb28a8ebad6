//! The bad-input matrix: every exported function of `libpti.so` against every kind of bad
//! argument its signature admits, in every calling context, generated from the exports and the
//! headers so that a new export cannot be left out.
//!
//! 1. The exports are read from the library's dynamic symbol table (`nm -D`).
//! 2. Each export's prototype is parsed from `include/pti/*.h` (the OpenCL layer's and the XPTI
//!    subscriber's entry points, declared by Khronos's and Intel's headers, from [`FOREIGN`]),
//!    and the known values of every enum from the same headers.
//! 3. From each parameter's type follow its bad values: NULL for pointers (unless the contract
//!    allows NULL), a misaligned pointer for out-parameters, unknown values for enums, unknown
//!    IDs for API IDs, and stale, never-issued, foreign, garbage and NULL subscriber handles.
//!    One argument at a time is made bad; the others keep the valid values of [`baseline`],
//!    which fails the test for an export it does not know.
//! 4. The cases are written as a C program that runs all of them in five contexts: before any
//!    set-up, set up (subscribed, views enabled), inside an API callback, inside
//!    `buffer_completed`, and after unsubscribe. Each call must return its documented code
//!    ([`expected`]) and leave every out-parameter untouched; a watchdog kills a hung run.
//!
//! The counts per export, column and context go to `target/pti-tests/bad_input_matrix.md`
//! (quoted by `docs/RELIABILITY.md`). The hand-written `tests/c/bad_input.c` keeps the cases
//! that need knowledge of a function's meaning (retired IDs, truncated records, limits).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use pti_tests::{OWN_SYMBOL_PREFIX, compile_c, exports, out_dir, root, run_with_watchdog};

/// The contexts the C program runs every case in, in order.
const CONTEXTS: [&str; 5] = [
    "before_setup",
    "set_up",
    "inside_api_callback",
    "inside_buffer_completed",
    "after_unsubscribe",
];

/// Prototypes of exports whose declarations live in other projects' headers (Khronos's
/// `CL/cl_layer.h`, Intel's `xpti_trace_framework.h`), with plain C types.
const FOREIGN: &str = "
int32_t clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret);
int32_t clInitLayer(uint32_t num_entries, const void *target_dispatch, uint32_t *num_entries_ret, const void **layer_dispatch_ret);
int32_t clInitLayerWithProperties(uint32_t num_entries, const void *target_dispatch, uint32_t *num_entries_ret, const void **layer_dispatch_ret, const uint64_t *properties);
int32_t clDeinitLayer(void);
void xptiTraceInit(unsigned int major_version, unsigned int minor_version, const char *version_str, const char *stream_name);
void xptiTraceFinish(const char *stream_name);
void __itt_api_init(void *global, int groups);
";

/// Known values of the foreign enum `cl_layer_info` (`CL_LAYER_API_VERSION`, `CL_LAYER_NAME`).
const CL_LAYER_INFO: [u64; 2] = [0x4240, 0x4241];

/// Function-pointer and opaque pointer types of the headers (passed by value, may be NULL).
const POINTER_TYPEDEFS: [&str; 6] = [
    "pti_callback_function",
    "pti_fptr_buffer_requested",
    "pti_fptr_buffer_completed",
    "pti_fptr_get_timestamp",
    "pti_simulated_call_body",
    "pti_backend_ctx_t",
];

/// `(export, parameter)` pairs whose contract allows NULL.
const NULL_ALLOWED: [(&str, &str); 11] = [
    ("ptiCallbackSubscribe", "user_data"),
    ("ptiSimulateApiCall", "args"),
    ("ptiSimulateApiCall", "kernel_name"),
    ("ptiSimulateApiCall", "context"),
    ("ptiSimulateApiCall", "body"),
    ("ptiSimulateApiCall", "user_data"),
    ("ptiSimulateApiCall", "return_code"),
    ("ptiViewPopExternalCorrelationId", "p_external_id"),
    ("clGetLayerInfo", "param_value"),
    ("clGetLayerInfo", "param_value_size_ret"),
    ("clInitLayerWithProperties", "properties"),
];

#[derive(Debug, Clone)]
struct Param {
    ty: String,
    name: String,
}

#[derive(Debug, Clone)]
struct Proto {
    ret: String,
    name: String,
    params: Vec<Param>,
}

/// What one bad argument is, as a column of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Column {
    /// A function without parameters, called as is.
    Call,
    Null,
    Misaligned,
    UnknownEnum,
    UnknownApiId,
    BadHandle,
}

impl Column {
    fn name(self) -> &'static str {
        match self {
            Column::Call => "call",
            Column::Null => "null_pointer",
            Column::Misaligned => "misaligned_pointer",
            Column::UnknownEnum => "unknown_enum",
            Column::UnknownApiId => "unknown_api_id",
            Column::BadHandle => "bad_handle",
        }
    }
}

struct Case {
    export: String,
    column: Column,
    /// The C call expression.
    call: String,
    /// A C expression over `got_` (the call's value) that holds when the call behaved.
    ok: String,
}

/// Removes `/* */` and `//` comments and preprocessor lines.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Function prototypes in `text`: a name followed by `(`, preceded on its line by a return type
/// only (which leaves out function-pointer typedefs and calls in macros).
fn prototypes(text: &str) -> Vec<Proto> {
    let text = strip_comments(text);
    let mut protos = Vec::new();
    for statement in text.split(';') {
        let statement = squash(statement);
        // `... ) PTI_SYMBOL(libpti_name)`: the symbol the declaration binds to, not a parameter.
        let statement = match statement.find(" PTI_SYMBOL(") {
            Some(i) => statement[..i].to_string(),
            None => statement,
        };
        let Some(open) = statement.find('(') else {
            continue;
        };
        if !statement.ends_with(')') {
            continue;
        }
        let head = statement[..open].trim();
        let Some(split) = head.rfind([' ', '*']) else {
            continue;
        };
        let (ret, name) = (head[..=split].trim(), head[split + 1..].trim());
        let ret = ret.rsplit(['{', '}']).next().unwrap_or(ret).trim();
        let plain = |s: &str| s.chars().all(|c| c.is_alphanumeric() || "_ *".contains(c));
        if name.is_empty() || ret.is_empty() || !plain(ret) || ret.contains("typedef") {
            continue;
        }
        let inner = &statement[open + 1..statement.len() - 1];
        let params = if inner.trim() == "void" {
            Vec::new()
        } else {
            inner.split(',').map(param).collect()
        };
        protos.push(Proto {
            ret: ret.to_string(),
            name: name.to_string(),
            params,
        });
    }
    protos
}

fn param(text: &str) -> Param {
    let text = text.trim();
    let split = text.rfind([' ', '*']).expect("a named parameter");
    // `T *name`, `T **name`: written back as `T *`, `T **`.
    let head = &text[..=split];
    let stars = head.matches('*').count();
    let base = head.replace('*', "");
    let ty = match stars {
        0 => base.trim().to_string(),
        n => format!("{} {}", base.trim(), "*".repeat(n)),
    };
    Param {
        ty,
        name: text[split + 1..].trim().to_string(),
    }
}

/// `enum name ... { A = 1, ... }` of every header: the values each enum names.
fn enums(text: &str) -> BTreeMap<String, Vec<(String, u64)>> {
    let text = strip_comments(text);
    let mut out = BTreeMap::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("enum ") {
        rest = &rest[at + 5..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (Some(open), Some(semi)) = (rest.find('{'), rest.find(';')) else {
            break;
        };
        if open > semi {
            continue; // `typedef enum x x;`
        }
        let close = rest[open..].find('}').expect("closed enum") + open;
        // `typedef enum _x {..} x;`: the enum is known by its typedef name.
        let typedef: String = rest[close + 1..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let name = if typedef.is_empty() { name } else { typedef };
        let values = rest[open + 1..close]
            .split(',')
            .filter_map(|entry| {
                let (k, v) = entry.split_once('=')?;
                let v = v.trim().trim_end_matches("ull").trim_end_matches('u');
                let v = match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                    None => v.parse().ok()?,
                };
                Some((k.trim().to_string(), v))
            })
            .collect();
        out.insert(name, values);
        rest = &rest[close..];
    }
    out
}

/// Values of an enum that no entry names, plus the entries named INVALID or RESERVED (which
/// name no real thing): the smallest unused value, one past the largest, and the 31- and
/// 32-bit extremes.
fn bad_enum_values(known: &[(String, u64)]) -> Vec<u64> {
    let set: BTreeSet<u64> = known.iter().map(|(_, v)| *v).collect();
    let mut bad: BTreeSet<u64> = known
        .iter()
        .filter(|(k, _)| k.ends_with("_INVALID") || k.ends_with("_RESERVED"))
        .map(|(_, v)| *v)
        .collect();
    let first_gap = (0..).find(|v| !set.contains(v)).expect("a gap");
    let past_max = set.iter().max().map_or(0, |m| m + 1);
    for v in [first_gap, past_max, 0x7fff_ffff, 0xffff_ffff] {
        if !set.contains(&v) && v <= 0xffff_ffff {
            bad.insert(v);
        }
    }
    bad.into_iter().collect()
}

/// The valid value of each parameter, as C. Panics for an export it does not know: a new
/// export needs its line here, and then gets every case its signature admits.
fn baseline(export: &str) -> Vec<&'static str> {
    match export {
        "ptiVersionString"
        | "ptiVersion"
        | "ptiViewGPULocalAvailable"
        | "ptiFlushAllViews"
        | "ptiViewGetTimestamp"
        | "clDeinitLayer" => vec![],
        "ptiResultTypeToString" => vec!["PTI_SUCCESS"],
        "ptiCallbackSubscribe" => vec!["&out_handle", "noop", "NULL"],
        "ptiCallbackUnsubscribe" => vec!["live"],
        "ptiCallbackEnableDomain" => vec!["1", "live", "PTI_DOMAIN_DRIVER_API"],
        "ptiCallbackEnable" => vec!["1", "live", "PTI_API_GROUP_OPENCL", "clFinish_id"],
        "ptiViewSetCallbacks" => vec!["requested", "completed"],
        "ptiViewEnable" | "ptiViewDisable" => vec!["PTI_VIEW_DRIVER_API"],
        "ptiViewGetNextRecord" => {
            vec!["(uint8_t *)record_bytes", "sizeof record_bytes", "&out_rec"]
        }
        "ptiViewPushExternalCorrelationId" => vec!["PTI_VIEW_EXTERNAL_KIND_CUSTOM_3", "1"],
        "ptiViewPopExternalCorrelationId" => vec!["PTI_VIEW_EXTERNAL_KIND_CUSTOM_3", "&out_u64"],
        "ptiViewOverheadKindToString" => vec!["PTI_VIEW_OVERHEAD_KIND_TIME"],
        "ptiViewMemoryTypeToString" => vec!["PTI_VIEW_MEMORY_TYPE_DEVICE"],
        "ptiViewMemcpyTypeToString" => vec!["PTI_VIEW_MEMCPY_TYPE_D2H"],
        "ptiViewSetTimestampCallback" => vec!["tool_clock"],
        "ptiViewGetApiIdName" => vec!["PTI_API_GROUP_OPENCL", "clFinish_id", "&out_str"],
        "ptiViewEnableDriverApi" => vec!["1", "PTI_API_GROUP_OPENCL", "clFinish_id"],
        "ptiViewEnableRuntimeApi" => vec!["1", "PTI_API_GROUP_SYCL", "urQueueFinish_id"],
        "ptiViewEnableDriverApiClass" | "ptiViewEnableRuntimeApiClass" => {
            vec!["1", "PTI_API_CLASS_ALL", "PTI_API_GROUP_ALL"]
        }
        "ptiCallbackGetCriticalEventCount" => vec!["PTI_ERROR_RECORDS_DROPPED", "&out_u64"],
        "ptiViewGetDroppedRecordCount" => vec!["PTI_VIEW_DRIVER_API", "&out_u64"],
        "ptiViewGetEmittedRecordCount" => vec!["PTI_VIEW_DRIVER_API", "&out_u64"],
        "ptiViewGetUnrecordedCommandCount" => vec!["PTI_API_GROUP_OPENCL", "105", "&out_u64"],
        "ptiViewGetPendingDeviceRecordCount" => vec!["&out_u64"],
        "ptiViewPause" | "ptiViewResume" => vec![],
        "ptiViewIsPaused" => vec!["&out_u32"],
        "ptiGetInterceptedFunctionCount" => vec!["PTI_API_GROUP_OPENCL", "&out_u32"],
        "ptiGetUntracedCallCount" => vec!["PTI_API_GROUP_OPENCL", "&out_u64"],
        "ptiSimulateApiCall" => vec![
            "PTI_API_GROUP_OPENCL",
            "clFinish_id",
            "NULL",
            "NULL",
            "NULL",
            "body",
            "NULL",
            "&out_i32",
        ],
        "clGetLayerInfo" => vec!["0x4240", "sizeof out_u32", "&out_u32", "&out_size"],
        "clInitLayer" => vec!["160", "dispatch", "&out_u32", "&out_layer"],
        "clInitLayerWithProperties" => vec!["160", "dispatch", "&out_u32", "&out_layer", "NULL"],
        "xptiTraceInit" => vec!["1", "0", "\"1.0\"", "\"no.such.stream\""],
        "xptiTraceFinish" => vec!["\"no.such.stream\""],
        "__itt_api_init" => vec!["NULL", "0"],
        other => panic!(
            "{other} is exported but tests/bad_input_matrix.rs has no valid arguments for it: \
             add its line to `baseline` (and its expectations to `expected`)"
        ),
    }
}

/// What a call with one bad argument of `column` must give, as a C condition over `got_`.
fn expected(proto: &Proto, column: Column, has_handle: bool) -> String {
    let name = proto.name.as_str();
    match proto.ret.as_str() {
        "pti_result" => {
            let code = match (name, column) {
                ("ptiFlushAllViews" | "ptiViewPause" | "ptiViewResume", Column::Call) => {
                    "PTI_SUCCESS"
                }
                ("ptiViewGPULocalAvailable", Column::Call) => {
                    "PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED"
                }
                // The handle is checked before the ID: without a live one, the handle is bad.
                (_, Column::UnknownApiId) if has_handle => {
                    return "got_ == (live_valid ? PTI_ERROR_BAD_API_ID : PTI_ERROR_BAD_ARGUMENT)"
                        .into();
                }
                (_, Column::UnknownApiId) => "PTI_ERROR_BAD_API_ID",
                _ => "PTI_ERROR_BAD_ARGUMENT",
            };
            format!("got_ == {code}")
        }
        "const char *" => match (name, column) {
            ("ptiVersionString", Column::Call) => {
                "got_ != NULL && strcmp(got_, LIBPTI_VERSION_STRING) == 0".into()
            }
            ("ptiResultTypeToString", _) => {
                "got_ != NULL && strcmp(got_, \"UNKNOWN_PTI_RESULT\") == 0".into()
            }
            _ => "got_ != NULL && strcmp(got_, \"INVALID\") == 0".into(),
        },
        "struct pti_version" => {
            "got_._major == LIBPTI_VERSION_MAJOR && got_._minor == LIBPTI_VERSION_MINOR".into()
        }
        "uint64_t" => "got_ != 0".into(),
        // The OpenCL layer's entry points: CL_SUCCESS for a deinit with nothing initialised,
        // else CL_INVALID_VALUE.
        "int32_t" if column == Column::Call => "got_ == 0".into(),
        "int32_t" => "got_ == -30".into(),
        "void" => "1".into(),
        other => panic!("{name}: no expectation for return type {other}"),
    }
}

/// Pointer types whose target has an alignment above 1, with the C type to cast a misaligned
/// address to.
fn aligned_target(ty: &str) -> bool {
    matches!(
        ty,
        "uint64_t *"
            | "uint32_t *"
            | "int32_t *"
            | "pti_callback_subscriber *"
            | "const char **"
            | "struct pti_view_record_base **"
    )
}

fn is_pointer(ty: &str) -> bool {
    ty.ends_with('*') || POINTER_TYPEDEFS.contains(&ty)
}

/// Every case of one export: each parameter made bad in each way its type admits.
fn cases_of(proto: &Proto, enums: &BTreeMap<String, Vec<(String, u64)>>) -> Vec<Case> {
    let name = proto.name.as_str();
    let valid = baseline(name);
    assert_eq!(
        valid.len(),
        proto.params.len(),
        "{name}: `baseline` has {} arguments, the prototype {}",
        valid.len(),
        proto.params.len()
    );
    let has_handle = proto
        .params
        .iter()
        .any(|p| p.ty == "pti_callback_subscriber");
    let void_ret = proto.ret == "void";
    let mut cases = Vec::new();
    let mut push = |column: Column, at: Option<(usize, String)>| {
        let args: Vec<String> = valid
            .iter()
            .enumerate()
            .map(|(i, v)| match &at {
                Some((j, bad)) if *j == i => bad.clone(),
                _ => (*v).to_string(),
            })
            .collect();
        cases.push(Case {
            export: name.to_string(),
            column,
            call: format!("{name}({})", args.join(", ")),
            ok: expected(proto, column, has_handle),
        });
    };
    if proto.params.is_empty() {
        push(Column::Call, None);
    }
    for (i, p) in proto.params.iter().enumerate() {
        let ty = p.ty.as_str();
        if ty == "pti_callback_subscriber" {
            for h in [
                "NULL",
                "stale",
                "never_issued",
                "foreign_handle",
                "garbage_handle",
            ] {
                push(Column::BadHandle, Some((i, h.to_string())));
            }
        } else if is_pointer(ty) {
            let null_allowed = NULL_ALLOWED.contains(&(name, p.name.as_str()));
            if !null_allowed || void_ret {
                push(Column::Null, Some((i, "NULL".into())));
            }
            if name.starts_with("pti") && aligned_target(ty) {
                let bad = format!("({ty})(void *)((char *){} + 1)", valid[i]);
                push(Column::Misaligned, Some((i, bad)));
            }
        } else if let Some(known) = enums.get(ty) {
            for v in bad_enum_values(known) {
                push(Column::UnknownEnum, Some((i, format!("({ty}){v:#x}u"))));
            }
        } else if ty == "cl_layer_info" {
            let known: Vec<(String, u64)> =
                CL_LAYER_INFO.iter().map(|v| (String::new(), *v)).collect();
            for v in bad_enum_values(&known) {
                push(Column::UnknownEnum, Some((i, format!("{v:#x}u"))));
            }
        } else if p.name == "api_id" || p.name == "unique_id" {
            for v in ["0u", "100000u", "0xffffffffu"] {
                push(Column::UnknownApiId, Some((i, v.to_string())));
            }
        }
    }
    cases
}

/// The columns a prototype admits, from its parameter types (what coverage must show).
fn columns_of(proto: &Proto, enums: &BTreeMap<String, Vec<(String, u64)>>) -> BTreeSet<Column> {
    cases_of(proto, enums).iter().map(|c| c.column).collect()
}

const HARNESS_HEAD: &str = r#"/* Generated by tests/bad_input_matrix.rs at test time. Do not edit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pti/pti.h"
#include "pti/pti_callback.h"
#include "pti/pti_driver_opencl_api_ids.h"
#include "pti/pti_ext.h"
#include "pti/pti_runtime_sycl_api_ids.h"
#include "pti/pti_view.h"

typedef uint32_t cl_layer_info;
"#;

const HARNESS_STATE: &str = r#"
static const char *context = "none";
static int live_valid, failures, cases, body_runs;
static pti_callback_subscriber live, stale, never_issued, foreign_handle, garbage_handle;
static int local_object;
static const void *dispatch[160];

/* Out-parameters, reset to sentinels before each call and checked untouched after it. */
static uint64_t out_u64;
static uint32_t out_u32;
static int32_t out_i32;
static size_t out_size;
static pti_callback_subscriber out_handle;
static const char *out_str;
static const void *out_layer;
static pti_view_record_base *out_rec;
static uint64_t record_bytes[6]; /* one driver API record */

static void reset_outs(void) {
  out_u64 = 0x5eed5eed5eedull, out_u32 = 0x5eed, out_i32 = -5, out_size = 77;
  out_handle = (pti_callback_subscriber)(uintptr_t)0x5eed0;
  out_str = "untouched", out_layer = &local_object, out_rec = NULL;
}

static int outs_untouched(int runs) {
  return out_u64 == 0x5eed5eed5eedull && out_u32 == 0x5eed && out_i32 == -5 && out_size == 77 &&
         out_handle == (pti_callback_subscriber)(uintptr_t)0x5eed0 && strcmp(out_str, "untouched") == 0 &&
         out_layer == &local_object && out_rec == NULL && body_runs == runs;
}

static void noop(void *u, pti_callback_domain d, pti_api_group_id g, uint32_t id, void *data) {
  (void)u, (void)d, (void)g, (void)id, (void)data;
}
static int32_t body(void *u) { (void)u; return ++body_runs; }
/* Valid arguments that only ever stand beside a bad one; defined or used below. */
static __attribute__((unused)) uint64_t tool_clock(void) { return 42; }
static void requested(unsigned char **buf, size_t *size);
static void completed(unsigned char *buf, size_t size, size_t used);

static void note(const char *export_, const char *column, const char *call, int ok) {
  cases++;
  if (!ok) {
    failures++;
    fprintf(stderr, "FAILED in %s: %s\n", context, call);
  }
  printf("case\t%s\t%s\t%s\t%s\n", context, export_, column, ok ? "ok" : "FAILED");
}
"#;

const HARNESS_MAIN: &str = r#"
static int in_callback_done, in_completed_wanted, in_completed_done;

static void on_api(void *u, pti_callback_domain d, pti_api_group_id g, uint32_t id, void *data) {
  (void)u, (void)d, (void)g;
  pti_apicall_callback_data *call = (pti_apicall_callback_data *)data;
  if (id != clFinish_id || call->_site != PTI_SITE_ENTER || in_callback_done) return;
  in_callback_done = 1;
  const char *saved = context;
  context = "inside_api_callback";
  run_cases();
  context = saved;
}

static void requested(unsigned char **buf, size_t *size) {
  *size = 4096;
  *buf = malloc(*size);
}

static void completed(unsigned char *buf, size_t size, size_t used) {
  (void)size;
  if (used > 0 && in_completed_wanted && !in_completed_done) {
    in_completed_done = 1;
    const char *saved = context;
    context = "inside_buffer_completed";
    run_cases();
    context = saved;
  }
  free(buf);
}

int main(void) {
  never_issued = (pti_callback_subscriber)(uintptr_t)((1000000u << 5) | 3u);
  foreign_handle = (pti_callback_subscriber)(void *)&local_object;
  garbage_handle = (pti_callback_subscriber)(uintptr_t)0xffffffffffffffffull;
  stale = (pti_callback_subscriber)(uintptr_t)((1u << 5) | 0u); /* shaped like a handle, never issued */
  ((pti_view_record_base *)record_bytes)->_view_kind = PTI_VIEW_DRIVER_API;

  context = "before_setup";
  run_cases();

  pti_callback_subscriber gone = NULL;
  if (ptiCallbackSubscribe(&gone, noop, NULL) != PTI_SUCCESS || ptiCallbackUnsubscribe(gone) != PTI_SUCCESS ||
      ptiCallbackSubscribe(&live, on_api, NULL) != PTI_SUCCESS ||
      ptiCallbackEnable(1, live, PTI_API_GROUP_OPENCL, clFinish_id) != PTI_SUCCESS ||
      ptiViewSetCallbacks(requested, completed) != PTI_SUCCESS || ptiViewEnable(PTI_VIEW_DRIVER_API) != PTI_SUCCESS) {
    fprintf(stderr, "set-up failed\n");
    return 2;
  }
  stale = gone, live_valid = 1;
  context = "set_up";
  run_cases();

  int32_t status = 0;
  if (ptiSimulateApiCall(PTI_API_GROUP_OPENCL, clFinish_id, NULL, NULL, NULL, NULL, NULL, &status) != PTI_SUCCESS ||
      !in_callback_done) {
    fprintf(stderr, "the API callback did not run\n");
    return 2;
  }
  in_completed_wanted = 1;
  if (ptiFlushAllViews() != PTI_SUCCESS || !in_completed_done) {
    fprintf(stderr, "buffer_completed did not run with records\n");
    return 2;
  }

  if (ptiViewDisable(PTI_VIEW_DRIVER_API) != PTI_SUCCESS || ptiCallbackUnsubscribe(live) != PTI_SUCCESS) {
    fprintf(stderr, "tear-down failed\n");
    return 2;
  }
  stale = live, live_valid = 0;
  context = "after_unsubscribe";
  run_cases();

  printf("bad_input_matrix: %d cases, %d failures\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
"#;

/// The C program: state, one block per case in `run_cases`, the contexts in `main`.
fn harness(cases: &[Case]) -> String {
    let mut c = String::from(HARNESS_HEAD);
    for line in FOREIGN.lines().filter(|l| !l.trim().is_empty()) {
        c.push_str(line);
        c.push('\n');
    }
    c.push_str(HARNESS_STATE);
    c.push_str("\nstatic void run_cases(void) {\n");
    for case in cases {
        let quoted = case.call.replace('\\', "\\\\").replace('"', "\\\"");
        let call = if case.ok == "1" {
            format!("{};", case.call)
        } else {
            format!("__typeof__({call}) got_ = {call};", call = case.call)
        };
        let _ = writeln!(
            c,
            "  {{\n    reset_outs();\n    int runs_ = body_runs;\n    {call}\n    \
             note(\"{}\", \"{}\", \"{quoted}\", ({}) && outs_untouched(runs_));\n  }}",
            case.export,
            case.column.name(),
            case.ok,
        );
    }
    c.push_str("}\n");
    c.push_str(HARNESS_MAIN);
    c
}

fn header_text() -> String {
    [
        "pti_version.h",
        "pti.h",
        "pti_callback.h",
        "pti_view.h",
        "pti_ext.h",
    ]
    .iter()
    .map(|h| std::fs::read_to_string(root().join("include/pti").join(h)).unwrap())
    .collect::<Vec<_>>()
    .join("\n")
}

#[test]
fn every_export_against_every_bad_input_in_every_context() {
    let headers = header_text();
    let enums = enums(&headers);
    let mut protos: BTreeMap<String, Proto> = prototypes(&headers)
        .into_iter()
        .chain(prototypes(FOREIGN))
        .map(|p| (p.name.clone(), p))
        .collect();
    // The `libpti_` aliases are the same functions (tests/c_abi.rs checks them).
    let exports: Vec<String> = exports()
        .into_iter()
        .filter(|e| !e.starts_with(OWN_SYMBOL_PREFIX))
        .collect();
    assert!(exports.len() >= 30, "too few exports: {exports:?}");
    let mut cases = Vec::new();
    let mut admitted = BTreeMap::new();
    for export in &exports {
        let proto = protos.remove(export).unwrap_or_else(|| {
            panic!("{export} is exported but has no prototype in include/pti nor in FOREIGN")
        });
        admitted.insert(export.clone(), columns_of(&proto, &enums));
        cases.extend(cases_of(&proto, &enums));
    }
    let declared_only: Vec<_> = protos.keys().filter(|k| k.starts_with("pti")).collect();
    assert!(
        declared_only.is_empty(),
        "declared in include/pti but not exported: {declared_only:?}"
    );

    let source = out_dir().join("bad_input_matrix.c");
    std::fs::write(&source, harness(&cases)).unwrap();
    let exe = compile_c("bad_input_matrix", &[source.to_str().unwrap()]);
    let output = run_with_watchdog(&mut Command::new(&exe), Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} ({}):\n{stderr}\n{}",
        exe.display(),
        output.status,
        stdout.lines().last().unwrap_or("")
    );

    // (export, column, context) -> cases run.
    let mut ran: BTreeMap<(String, &str, String), usize> = BTreeMap::new();
    for line in stdout.lines().filter(|l| l.starts_with("case\t")) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f[4], "ok", "{line}\n{stderr}");
        let column = Column::name(
            *admitted[f[2]]
                .iter()
                .find(|c| c.name() == f[3])
                .expect("a known column"),
        );
        *ran.entry((f[2].to_string(), column, f[1].to_string()))
            .or_default() += 1;
    }
    for (export, columns) in &admitted {
        for column in columns {
            for context in CONTEXTS {
                let n = ran
                    .get(&(export.clone(), column.name(), context.to_string()))
                    .copied()
                    .unwrap_or(0);
                assert!(n > 0, "{export}: no {} case ran {context}", column.name());
            }
        }
    }
    let table = report(&admitted, &ran, cases.len());
    std::fs::write(out_dir().join("bad_input_matrix.md"), &table).unwrap();
    println!("{table}");
}

/// The matrix as Markdown: one row per export, cases per column (each run in every context).
fn report(
    admitted: &BTreeMap<String, BTreeSet<Column>>,
    ran: &BTreeMap<(String, &str, String), usize>,
    per_context: usize,
) -> String {
    const ALL: [Column; 6] = [
        Column::Call,
        Column::Null,
        Column::Misaligned,
        Column::UnknownEnum,
        Column::UnknownApiId,
        Column::BadHandle,
    ];
    let mut t = String::from("| export |");
    for c in ALL {
        let _ = write!(t, " {} |", c.name());
    }
    t.push_str("\n|---|");
    t.push_str(&"---:|".repeat(ALL.len()));
    t.push('\n');
    for (export, columns) in admitted {
        let _ = write!(t, "| `{export}` |");
        for c in ALL {
            if columns.contains(&c) {
                let n = ran
                    .get(&(export.clone(), c.name(), CONTEXTS[0].to_string()))
                    .copied()
                    .unwrap_or(0);
                let _ = write!(t, " {n} |");
            } else {
                t.push_str(" – |");
            }
        }
        t.push('\n');
    }
    let total: usize = ran.values().sum();
    let _ = writeln!(
        t,
        "\n{} exports, {per_context} cases per context, {} contexts ({}): {total} calls, \
         every one with its documented result and its out-parameters untouched.",
        admitted.len(),
        CONTEXTS.len(),
        CONTEXTS.join(", ")
    );
    t
}
