//! Intel's experimental Level Zero extensions that libpti traces and that no Level Zero header
//! declares: Intel's GPU driver (compute-runtime) serves them through
//! `zeDriverGetExtensionFunctionAddress` only. The Unified Runtime's Level Zero v2 adapter creates
//! its counter-based events with `zexCounterBasedEventCreate2`; the older graph functions
//! (`zeGraphCreateExp`, ..., of compute-runtime's `level_zero/driver_experimental/zex_graph.h`,
//! extension "ZE_experimental_record_replay_graph") capture and replay command lists as the 1.32
//! headers' `…Ext` functions do, with their arguments in another order and a non-const `pNext`.
//!
//! Written by hand from the driver's documentation and headers, in the shape `cargo xtask gen`
//! reads (`xtask/src/level_zero.rs` parses this file beside the generated bindings): a
//! function-pointer alias `<function>_t`, and a parameter struct `_<function>_params_t` of
//! pointers to the arguments, in the arguments' order, as the loader's tracing layer would pass
//! them (a field `p<argument>`, as the generated tracing-layer structs name them).

#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::c_void;

use crate::level_zero::{
    ze_command_list_handle_t, ze_context_handle_t, ze_device_handle_t, ze_event_handle_t,
    ze_executable_graph_handle_t, ze_graph_handle_t, ze_result_t,
};

/// `zexCounterBasedEventCreate2(hContext, hDevice, desc, phEvent)`: creates a counter-based event
/// (no pool) described by a `zex_counter_based_event_desc_t`, which libpti passes through
/// unread.
pub type zexCounterBasedEventCreate2_t = ::core::option::Option<
    unsafe extern "C" fn(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const c_void,
        phEvent: *mut ze_event_handle_t,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zexCounterBasedEventCreate2`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _zex_counter_based_event_create2_params_t {
    /// The context.
    pub phContext: *mut ze_context_handle_t,
    /// The device.
    pub phDevice: *mut ze_device_handle_t,
    /// The descriptor.
    pub pdesc: *mut *const c_void,
    /// Where the event goes.
    pub pphEvent: *mut *mut ze_event_handle_t,
}

/// Pointers to the arguments of `zexCounterBasedEventCreate2`.
pub type zex_counter_based_event_create2_params_t = _zex_counter_based_event_create2_params_t;

/// `zeGraphCreateExp(hContext, phGraph, pNext)`: creates an empty graph in a context (the older
/// form of `zeGraphCreateExt`, whose `pNext` comes before `phGraph`).
pub type zeGraphCreateExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hContext: ze_context_handle_t,
        phGraph: *mut ze_graph_handle_t,
        pNext: *mut c_void,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeGraphCreateExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_graph_create_exp_params_t {
    /// The context.
    pub phContext: *mut ze_context_handle_t,
    /// Where the graph goes.
    pub pphGraph: *mut *mut ze_graph_handle_t,
    /// Extension structures (the driver accepts none).
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeGraphCreateExp`.
pub type ze_graph_create_exp_params_t = _ze_graph_create_exp_params_t;

/// `zeCommandListBeginGraphCaptureExp(hCommandList, pNext)`: starts capturing an immediate command
/// list's appends into a new graph.
pub type zeCommandListBeginGraphCaptureExp_t = ::core::option::Option<
    unsafe extern "C" fn(hCommandList: ze_command_list_handle_t, pNext: *mut c_void) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListBeginGraphCaptureExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_begin_graph_capture_exp_params_t {
    /// The command list.
    pub phCommandList: *mut ze_command_list_handle_t,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeCommandListBeginGraphCaptureExp`.
pub type ze_command_list_begin_graph_capture_exp_params_t =
    _ze_command_list_begin_graph_capture_exp_params_t;

/// `zeCommandListBeginCaptureIntoGraphExp(hCommandList, hGraph, pNext)`: starts capturing an
/// immediate command list's appends into an existing graph.
pub type zeCommandListBeginCaptureIntoGraphExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hCommandList: ze_command_list_handle_t,
        hGraph: ze_graph_handle_t,
        pNext: *mut c_void,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListBeginCaptureIntoGraphExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_begin_capture_into_graph_exp_params_t {
    /// The command list.
    pub phCommandList: *mut ze_command_list_handle_t,
    /// The graph.
    pub phGraph: *mut ze_graph_handle_t,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeCommandListBeginCaptureIntoGraphExp`.
pub type ze_command_list_begin_capture_into_graph_exp_params_t =
    _ze_command_list_begin_capture_into_graph_exp_params_t;

/// `zeCommandListEndGraphCaptureExp(hCommandList, phGraph, pNext)`: ends a capture and gives its
/// graph.
pub type zeCommandListEndGraphCaptureExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hCommandList: ze_command_list_handle_t,
        phGraph: *mut ze_graph_handle_t,
        pNext: *mut c_void,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListEndGraphCaptureExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_end_graph_capture_exp_params_t {
    /// The command list.
    pub phCommandList: *mut ze_command_list_handle_t,
    /// Where the captured graph goes.
    pub pphGraph: *mut *mut ze_graph_handle_t,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeCommandListEndGraphCaptureExp`.
pub type ze_command_list_end_graph_capture_exp_params_t =
    _ze_command_list_end_graph_capture_exp_params_t;

/// `zeCommandListInstantiateGraphExp(hGraph, phExecutableGraph, pNext)`: makes an executable graph
/// of a captured one (the older form of `zeGraphInstantiateExt`).
pub type zeCommandListInstantiateGraphExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hGraph: ze_graph_handle_t,
        phExecutableGraph: *mut ze_executable_graph_handle_t,
        pNext: *mut c_void,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListInstantiateGraphExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_instantiate_graph_exp_params_t {
    /// The captured graph.
    pub phGraph: *mut ze_graph_handle_t,
    /// Where the executable graph goes.
    pub pphExecutableGraph: *mut *mut ze_executable_graph_handle_t,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeCommandListInstantiateGraphExp`.
pub type ze_command_list_instantiate_graph_exp_params_t =
    _ze_command_list_instantiate_graph_exp_params_t;

/// `zeCommandListAppendGraphExp(hCommandList, hGraph, pNext, hSignalEvent, numWaitEvents,
/// phWaitEvents)`: appends a replay of an executable graph to a command list.
pub type zeCommandListAppendGraphExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hCommandList: ze_command_list_handle_t,
        hGraph: ze_executable_graph_handle_t,
        pNext: *mut c_void,
        hSignalEvent: ze_event_handle_t,
        numWaitEvents: u32,
        phWaitEvents: *mut ze_event_handle_t,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListAppendGraphExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_append_graph_exp_params_t {
    /// The command list.
    pub phCommandList: *mut ze_command_list_handle_t,
    /// The executable graph.
    pub phGraph: *mut ze_executable_graph_handle_t,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
    /// The event signalled when the replay completes, or NULL.
    pub phSignalEvent: *mut ze_event_handle_t,
    /// How many events the replay waits for.
    pub pnumWaitEvents: *mut u32,
    /// The events it waits for.
    pub pphWaitEvents: *mut *mut ze_event_handle_t,
}

/// Pointers to the arguments of `zeCommandListAppendGraphExp`.
pub type ze_command_list_append_graph_exp_params_t = _ze_command_list_append_graph_exp_params_t;

/// `zeGraphDestroyExp(hGraph)`: destroys a captured graph.
pub type zeGraphDestroyExp_t =
    ::core::option::Option<unsafe extern "C" fn(hGraph: ze_graph_handle_t) -> ze_result_t>;

/// Pointers to the arguments of `zeGraphDestroyExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_graph_destroy_exp_params_t {
    /// The graph.
    pub phGraph: *mut ze_graph_handle_t,
}

/// Pointers to the arguments of `zeGraphDestroyExp`.
pub type ze_graph_destroy_exp_params_t = _ze_graph_destroy_exp_params_t;

/// `zeExecutableGraphDestroyExp(hGraph)`: destroys an executable graph.
pub type zeExecutableGraphDestroyExp_t = ::core::option::Option<
    unsafe extern "C" fn(hGraph: ze_executable_graph_handle_t) -> ze_result_t,
>;

/// Pointers to the arguments of `zeExecutableGraphDestroyExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_executable_graph_destroy_exp_params_t {
    /// The executable graph.
    pub phGraph: *mut ze_executable_graph_handle_t,
}

/// Pointers to the arguments of `zeExecutableGraphDestroyExp`.
pub type ze_executable_graph_destroy_exp_params_t = _ze_executable_graph_destroy_exp_params_t;

/// `zeCommandListIsGraphCaptureEnabledExp(hCommandList)`: whether a command list is capturing (the
/// driver's query results, `ZE_RESULT_QUERY_TRUE` or `ZE_RESULT_QUERY_FALSE`).
pub type zeCommandListIsGraphCaptureEnabledExp_t = ::core::option::Option<
    unsafe extern "C" fn(hCommandList: ze_command_list_handle_t) -> ze_result_t,
>;

/// Pointers to the arguments of `zeCommandListIsGraphCaptureEnabledExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_command_list_is_graph_capture_enabled_exp_params_t {
    /// The command list.
    pub phCommandList: *mut ze_command_list_handle_t,
}

/// Pointers to the arguments of `zeCommandListIsGraphCaptureEnabledExp`.
pub type ze_command_list_is_graph_capture_enabled_exp_params_t =
    _ze_command_list_is_graph_capture_enabled_exp_params_t;

/// `zeGraphIsEmptyExp(hGraph)`: whether a graph holds no command (answered as a query result).
pub type zeGraphIsEmptyExp_t =
    ::core::option::Option<unsafe extern "C" fn(hGraph: ze_graph_handle_t) -> ze_result_t>;

/// Pointers to the arguments of `zeGraphIsEmptyExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_graph_is_empty_exp_params_t {
    /// The graph.
    pub phGraph: *mut ze_graph_handle_t,
}

/// Pointers to the arguments of `zeGraphIsEmptyExp`.
pub type ze_graph_is_empty_exp_params_t = _ze_graph_is_empty_exp_params_t;

/// `zeGraphDumpContentsExp(hGraph, filePath, pNext)`: writes a graph's contents to a file.
pub type zeGraphDumpContentsExp_t = ::core::option::Option<
    unsafe extern "C" fn(
        hGraph: ze_graph_handle_t,
        filePath: *const ::core::ffi::c_char,
        pNext: *mut c_void,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zeGraphDumpContentsExp`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _ze_graph_dump_contents_exp_params_t {
    /// The graph.
    pub phGraph: *mut ze_graph_handle_t,
    /// The file's NUL-terminated path.
    pub pfilePath: *mut *const ::core::ffi::c_char,
    /// Extension structures.
    pub ppNext: *mut *mut c_void,
}

/// Pointers to the arguments of `zeGraphDumpContentsExp`.
pub type ze_graph_dump_contents_exp_params_t = _ze_graph_dump_contents_exp_params_t;
