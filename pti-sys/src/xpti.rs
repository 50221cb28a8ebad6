//! The few plain-C entry points of the XPTI tracing framework (`libxptifw.so`) that libpti's SYCL
//! backend calls, and the data they pass, declared by hand from `xpti/xpti_data_types.h` and
//! `xpti/xpti_trace_framework.h` of the SYCL runtime 2026.2 (whose headers are C++ and cannot be
//! bound mechanically). Only the fields libpti reads are declared; structures are only ever read
//! through pointers the framework hands out, never built here.
//!
//! libpti does not link the framework: the backend resolves the functions by name (the
//! `*_fn` types below) from the framework the runtime loaded. One thing is C++ only, the event
//! metadata map; [`pti_xpti_metadata_entries`] (`cpp/xpti_metadata.cpp`) copies it out.

#![allow(non_camel_case_types)] // XPTI's names

use core::ffi::{c_char, c_void};

/// A stream's ID (`xpti::stream_id_t`).
pub type stream_id_t = u8;
/// A registered string's ID (`xpti::string_id_t`).
pub type string_id_t = u32;
/// A registered object's ID (`xpti::object_id_t`).
pub type object_id_t = i32;
/// A framework result (`xpti::result_t`): 0 success, 1 false, negative errors.
pub type result_t = i32;

/// `XPTI_RESULT_SUCCESS`.
pub const XPTI_RESULT_SUCCESS: result_t = 0;

/// The trace point types libpti registers for (`xpti::trace_point_type_t`: a begin type is
/// `n << 1`, its end `n << 1 | 1`).
pub mod trace_point {
    /// A node of the task graph (a command group, a memory operation) was created.
    pub const NODE_CREATE: u16 = 2 << 1;
    /// A task (an instance of a node) begins to be enqueued.
    pub const TASK_BEGIN: u16 = 5 << 1;
    /// The task is enqueued.
    pub const TASK_END: u16 = 5 << 1 | 1;
    /// A Unified Runtime call begins (`ur.call` stream; user data: [`super::function_with_args_t`]).
    pub const FUNCTION_WITH_ARGS_BEGIN: u16 = 14 << 1;
    /// A Unified Runtime call ends.
    pub const FUNCTION_WITH_ARGS_END: u16 = 14 << 1 | 1;
    /// A memory allocation begins (`sycl.experimental.mem_alloc` stream).
    pub const MEM_ALLOC_BEGIN: u16 = 16 << 1;
    /// A memory allocation ends.
    pub const MEM_ALLOC_END: u16 = 16 << 1 | 1;
    /// A memory release begins.
    pub const MEM_RELEASE_BEGIN: u16 = 17 << 1;
    /// A memory release ends.
    pub const MEM_RELEASE_END: u16 = 17 << 1 | 1;
    /// A SYCL queue was created.
    pub const QUEUE_CREATE: u16 = 21 << 1;
    /// A SYCL queue is destroyed.
    pub const QUEUE_DESTROY: u16 = 21 << 1 | 1;
}

/// `xpti::metadata_type_t`: how to read an [`object_data_t`].
pub mod metadata_type {
    /// Raw bytes.
    pub const BINARY: u8 = 0;
    /// Characters (not necessarily NUL-terminated: use the size).
    pub const STRING: u8 = 1;
    /// A signed integer of `size` bytes.
    pub const SIGNED_INTEGER: u8 = 2;
    /// An unsigned integer of `size` bytes.
    pub const UNSIGNED_INTEGER: u8 = 3;
    /// A floating-point number.
    pub const FLOATING: u8 = 4;
    /// A boolean.
    pub const BOOLEAN: u8 = 5;
}

/// The start of `xpti::trace_event_data_t` (an event: a trace point and its identity).
#[repr(C)]
pub struct trace_event_data_t {
    /// The event's 64-bit universal ID.
    pub unique_id: u64,
    /// Unused by the runtime.
    pub data_id: u64,
    /// How many times the trace point was visited when the event was made.
    pub instance_id: u64,
    // Further fields (types, edge ends, payload, the C++ metadata map, user data, flags) are
    // not read directly.
}

/// The start of `xpti::payload_t` (where an event comes from).
#[repr(C)]
pub struct payload_t {
    /// The trace point's name (a kernel's SYCL name, a function name).
    pub name: *const c_char,
    /// "caller->callee", if a stack walk was made.
    pub stack_trace: *const c_char,
    /// Source file of the code that created the event.
    pub source_file: *const c_char,
    /// Line in that file.
    pub line_no: u32,
    /// Column in that line.
    pub column_no: u32,
    // Further fields (code address, flags, UID) are not read.
}

/// A registered object: metadata values are these (`xpti::object_data_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct object_data_t {
    /// Bytes at `data`.
    pub size: usize,
    /// The value's bytes.
    pub data: *const c_char,
    /// A [`metadata_type`].
    pub type_: u8,
}

/// The user data of `function_with_args_begin/end` (`xpti::function_with_args_t`).
#[repr(C)]
pub struct function_with_args_t {
    /// The function's stable ID (the Unified Runtime's `ur_function_t`).
    pub function_id: u32,
    /// Its name.
    pub function_name: *const c_char,
    /// The call's parameter struct (`ur_<function>_params_t`).
    pub args_data: *mut c_void,
    /// The call's result (`ur_result_t`), at the end only.
    pub ret_data: *mut c_void,
    /// Provisional data of the runtime.
    pub user_data: *mut c_void,
}

/// A subscriber's callback (`xpti::tracepoint_callback_api_t`).
pub type tracepoint_callback_api_t = Option<
    unsafe extern "C" fn(
        trace_type: u16,
        parent: *mut trace_event_data_t,
        event: *mut trace_event_data_t,
        instance: u64,
        user_data: *const c_void,
    ),
>;

/// `xptiRegisterStream`: the ID of a stream (registered if new).
pub type xptiRegisterStream_fn = unsafe extern "C" fn(stream_name: *const c_char) -> stream_id_t;
/// `xptiRegisterCallback`: calls `cb` for `trace_type` notifications of `stream`.
pub type xptiRegisterCallback_fn = unsafe extern "C" fn(
    stream: stream_id_t,
    trace_type: u16,
    cb: tracepoint_callback_api_t,
) -> result_t;
/// `xptiQueryPayload`: an event's payload (NULL if none).
pub type xptiQueryPayload_fn =
    unsafe extern "C" fn(event: *mut trace_event_data_t) -> *const payload_t;
/// `xptiQueryMetadata`: an event's metadata map (an `xpti::metadata_t*`, C++: read it with
/// [`pti_xpti_metadata_entries`]).
pub type xptiQueryMetadata_fn = unsafe extern "C" fn(event: *mut trace_event_data_t) -> *mut c_void;
/// `xptiLookupString`: a registered string (NULL if the ID is unknown).
pub type xptiLookupString_fn = unsafe extern "C" fn(id: string_id_t) -> *const c_char;
/// `xptiLookupObject`: a registered object (size 0 if the ID is unknown).
pub type xptiLookupObject_fn = unsafe extern "C" fn(id: object_id_t) -> object_data_t;

unsafe extern "C" {
    /// Copies up to `capacity` entries of the metadata map `map` (from `xptiQueryMetadata`, or
    /// NULL) into `keys` and `values`; returns how many entries the map has.
    ///
    /// # Safety
    /// `map` is NULL or an `xpti::metadata_t` that no other thread changes meanwhile; `keys` and
    /// `values` have room for `capacity` entries.
    pub fn pti_xpti_metadata_entries(
        map: *const c_void,
        keys: *mut string_id_t,
        values: *mut object_id_t,
        capacity: usize,
    ) -> usize;
}
