//! Graph capture and replay, both routes a program may take: the 1.17 specification's `…Ext`
//! functions and the older `…Exp` ones Intel's driver serves through
//! `zeDriverGetExtensionFunctionAddress` (`zex_graph.h`, "ZE_experimental_record_replay_graph";
//! some take their arguments in another order). Both are served by name here (the loader this
//! project runs predates them).
//!
//! Semantics (the header's documentation of `zeCommandListBeginGraphCaptureExt`,
//! compute-runtime's `captureCommand`): only an immediate, asynchronous list captures; while it
//! does, its appends are recorded into the graph and not submitted, and no event they name
//! changes; a host synchronisation of the capturing list answers
//! `ZE_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED`. An instantiated graph appended to an immediate
//! list runs its commands as an execution of a regular list does (counter-based events re-armed
//! for each run), after the append's wait events, and signals the append's event with the span
//! of the whole run. Not modelled: forks (capture spreading to other lists through events), and
//! joins.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use pti_sys::level_zero::*;

use crate::exec::Command;
use crate::list::{List, run_on_immediate, wait_list};
use crate::objects::{Kind, destroy, into_handle, object, shared};

/// `ZE_RESULT_QUERY_TRUE_EXP` and `ZE_RESULT_QUERY_FALSE_EXP` (`zex_graph.h`).
const QUERY_TRUE_EXP: ze_result_t = 0x7fff_0000;
const QUERY_FALSE_EXP: ze_result_t = 0x7fff_0001;

/// A graph being captured or captured.
pub(crate) struct Graph {
    commands: Mutex<Vec<Command>>,
    /// Whether the list that captured it is in order.
    in_order: Mutex<bool>,
}

impl Graph {
    fn new() -> Self {
        Graph {
            commands: Mutex::new(Vec::new()),
            in_order: Mutex::new(true),
        }
    }

    /// Records an append of the capturing list.
    pub(crate) fn record(&self, command: Command) {
        self.commands.lock().unwrap().push(command);
    }

    fn is_empty(&self) -> bool {
        self.commands.lock().unwrap().is_empty()
    }
}

/// An instantiated graph: what each replay runs.
pub(crate) struct ExecutableGraph {
    commands: Vec<Command>,
    in_order: bool,
    /// The graph it was instantiated from (its handle's address).
    source: usize,
}

fn create(ph: *mut ze_graph_handle_t) -> ze_result_t {
    if ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::Graph, Arc::new(Graph::new())) };
    ZE_RESULT_SUCCESS
}

/// Starts capturing on `list` into `graph` (a new one when NULL).
unsafe fn begin(list: ze_command_list_handle_t, graph: ze_graph_handle_t) -> ze_result_t {
    if list.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a list of this driver.
    let l: &List = unsafe { object(list) };
    if !l.immediate || l.synchronous {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    let graph = if graph.is_null() {
        Arc::new(Graph::new())
    } else {
        // SAFETY: a graph of this driver.
        let g: Arc<Graph> = unsafe { shared(graph) };
        if !g.is_empty() {
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        g
    };
    *graph.in_order.lock().unwrap() = l.in_order;
    let mut state = l.state();
    if state.capture.is_some() {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    state.capture = Some(graph);
    ZE_RESULT_SUCCESS
}

/// Ends capturing on `list`: the graph in `*ph` (a new handle for a graph `begin` created).
unsafe fn end(list: ze_command_list_handle_t, ph: *mut ze_graph_handle_t) -> ze_result_t {
    if list.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a list of this driver.
    let l: &List = unsafe { object(list) };
    let Some(graph) = l.state().capture.take() else {
        return ZE_RESULT_ERROR_COMMAND_LIST_NOT_CAPTURING;
    };
    if !ph.is_null() {
        // A graph given to `begin` already has a handle (its own reference); one made there
        // gets its handle now.
        let handle = match handle_of(&graph) {
            Some(h) => h,
            None => into_handle(Kind::Graph, graph),
        };
        // SAFETY: a writable handle, checked above.
        unsafe { *ph = handle };
    }
    ZE_RESULT_SUCCESS
}

/// The handle of a graph that has one: a graph whose reference count shows a handle beside the
/// capture's and ours.
fn handle_of(graph: &Arc<Graph>) -> Option<ze_graph_handle_t> {
    (Arc::strong_count(graph) > 1).then(|| Arc::as_ptr(graph).cast_mut().cast())
}

unsafe fn is_capturing(list: ze_command_list_handle_t) -> Option<bool> {
    if list.is_null() {
        return None;
    }
    // SAFETY: a list of this driver.
    let l: &List = unsafe { object(list) };
    Some(l.state().capture.is_some())
}

unsafe fn instantiate(
    graph: ze_graph_handle_t,
    ph: *mut ze_executable_graph_handle_t,
) -> ze_result_t {
    if graph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    if ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a graph of this driver.
    let g: &Graph = unsafe { object(graph) };
    let executable = ExecutableGraph {
        commands: g.commands.lock().unwrap().clone(),
        in_order: *g.in_order.lock().unwrap(),
        source: graph as usize,
    };
    // SAFETY: a writable handle, checked above.
    unsafe { *ph = into_handle(Kind::ExecutableGraph, Arc::new(executable)) };
    ZE_RESULT_SUCCESS
}

unsafe fn append_graph(
    list: ze_command_list_handle_t,
    graph: ze_executable_graph_handle_t,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    if graph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: an executable graph of this driver.
    let g: &ExecutableGraph = unsafe { object(graph) };
    // SAFETY: the caller's list and events.
    unsafe {
        run_on_immediate(
            list,
            vec![(g.in_order, g.commands.clone())],
            signal,
            wait_list(n_waits, waits),
        )
    }
}

unsafe fn dump(graph: ze_graph_handle_t, path: *const c_char) -> ze_result_t {
    if graph.is_null() || path.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a graph of this driver and the program's NUL-terminated path.
    let (g, path): (&Graph, _) = unsafe { (object(graph), core::ffi::CStr::from_ptr(path)) };
    let n = g.commands.lock().unwrap().len();
    let text = format!("ze-sim graph: {n} commands\n");
    match std::fs::write(path.to_string_lossy().as_ref(), text) {
        Ok(()) => ZE_RESULT_SUCCESS,
        Err(_) => ZE_RESULT_ERROR_INVALID_ARGUMENT,
    }
}

fn query(answer: Option<bool>, yes: ze_result_t, no: ze_result_t) -> ze_result_t {
    match answer {
        None => ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
        Some(true) => yes,
        Some(false) => no,
    }
}

// === the 1.17 specification's functions ===

pub(crate) unsafe extern "C" fn zeGraphCreateExt(
    _: ze_context_handle_t,
    _: *const c_void,
    ph: *mut ze_graph_handle_t,
) -> ze_result_t {
    create(ph)
}

pub(crate) unsafe extern "C" fn zeCommandListBeginGraphCaptureExt(
    list: ze_command_list_handle_t,
    _: *const c_void,
) -> ze_result_t {
    // SAFETY: the program's list.
    unsafe { begin(list, core::ptr::null_mut()) }
}

pub(crate) unsafe extern "C" fn zeCommandListBeginCaptureIntoGraphExt(
    list: ze_command_list_handle_t,
    graph: ze_graph_handle_t,
    _: *const c_void,
) -> ze_result_t {
    // SAFETY: the program's list and graph.
    unsafe { begin(list, graph) }
}

pub(crate) unsafe extern "C" fn zeCommandListIsGraphCaptureEnabledExt(
    list: ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list.
    query(
        unsafe { is_capturing(list) },
        ZE_RESULT_QUERY_TRUE,
        ZE_RESULT_QUERY_FALSE,
    )
}

pub(crate) unsafe extern "C" fn zeCommandListEndGraphCaptureExt(
    list: ze_command_list_handle_t,
    _: *const c_void,
    ph: *mut ze_graph_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list.
    unsafe { end(list, ph) }
}

pub(crate) unsafe extern "C" fn zeGraphInstantiateExt(
    graph: ze_graph_handle_t,
    _: *const c_void,
    ph: *mut ze_executable_graph_handle_t,
) -> ze_result_t {
    // SAFETY: the program's graph.
    unsafe { instantiate(graph, ph) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendGraphExt(
    list: ze_command_list_handle_t,
    graph: ze_executable_graph_handle_t,
    _: *const c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list, graph and events.
    unsafe { append_graph(list, graph, signal, n_waits, waits) }
}

pub(crate) unsafe extern "C" fn zeGraphDestroyExt(graph: ze_graph_handle_t) -> ze_result_t {
    // SAFETY: a graph of this driver, not used again.
    unsafe { destroy::<Graph, _>(Kind::Graph, graph) };
    ZE_RESULT_SUCCESS
}

pub(crate) unsafe extern "C" fn zeExecutableGraphDestroyExt(
    graph: ze_executable_graph_handle_t,
) -> ze_result_t {
    // SAFETY: an executable graph of this driver, not used again.
    unsafe { destroy::<ExecutableGraph, _>(Kind::ExecutableGraph, graph) };
    ZE_RESULT_SUCCESS
}

pub(crate) unsafe extern "C" fn zeGraphIsEmptyExt(graph: ze_graph_handle_t) -> ze_result_t {
    if graph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a graph of this driver.
    let g: &Graph = unsafe { object(graph) };
    query(
        Some(g.is_empty()),
        ZE_RESULT_QUERY_TRUE,
        ZE_RESULT_QUERY_FALSE,
    )
}

pub(crate) unsafe extern "C" fn zeGraphDumpContentsExt(
    graph: ze_graph_handle_t,
    path: *const c_char,
    _: *const c_void,
) -> ze_result_t {
    // SAFETY: the program's graph and path.
    unsafe { dump(graph, path) }
}

pub(crate) unsafe extern "C" fn zeExecutableGraphGetSourceGraphExt(
    graph: ze_executable_graph_handle_t,
    ph: *mut ze_graph_handle_t,
) -> ze_result_t {
    if graph.is_null() || ph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: an executable graph of this driver, and a writable handle.
    unsafe { *ph = object::<ExecutableGraph, _>(graph).source as ze_graph_handle_t };
    ZE_RESULT_SUCCESS
}

// === the older `…Exp` functions (`zex_graph.h`) ===

pub(crate) unsafe extern "C" fn zeGraphCreateExp(
    _: ze_context_handle_t,
    ph: *mut ze_graph_handle_t,
    _: *mut c_void,
) -> ze_result_t {
    create(ph)
}

pub(crate) unsafe extern "C" fn zeCommandListBeginGraphCaptureExp(
    list: ze_command_list_handle_t,
    _: *mut c_void,
) -> ze_result_t {
    // SAFETY: the program's list.
    unsafe { begin(list, core::ptr::null_mut()) }
}

pub(crate) unsafe extern "C" fn zeCommandListBeginCaptureIntoGraphExp(
    list: ze_command_list_handle_t,
    graph: ze_graph_handle_t,
    _: *mut c_void,
) -> ze_result_t {
    // SAFETY: the program's list and graph.
    unsafe { begin(list, graph) }
}

pub(crate) unsafe extern "C" fn zeCommandListEndGraphCaptureExp(
    list: ze_command_list_handle_t,
    ph: *mut ze_graph_handle_t,
    _: *mut c_void,
) -> ze_result_t {
    // SAFETY: the program's list.
    unsafe { end(list, ph) }
}

pub(crate) unsafe extern "C" fn zeCommandListInstantiateGraphExp(
    graph: ze_graph_handle_t,
    ph: *mut ze_executable_graph_handle_t,
    _: *mut c_void,
) -> ze_result_t {
    // SAFETY: the program's graph.
    unsafe { instantiate(graph, ph) }
}

pub(crate) unsafe extern "C" fn zeCommandListAppendGraphExp(
    list: ze_command_list_handle_t,
    graph: ze_executable_graph_handle_t,
    _: *mut c_void,
    signal: ze_event_handle_t,
    n_waits: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list, graph and events.
    unsafe { append_graph(list, graph, signal, n_waits, waits) }
}

pub(crate) unsafe extern "C" fn zeCommandListIsGraphCaptureEnabledExp(
    list: ze_command_list_handle_t,
) -> ze_result_t {
    // SAFETY: the program's list.
    query(
        unsafe { is_capturing(list) },
        QUERY_TRUE_EXP,
        QUERY_FALSE_EXP,
    )
}

pub(crate) unsafe extern "C" fn zeGraphIsEmptyExp(graph: ze_graph_handle_t) -> ze_result_t {
    if graph.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // SAFETY: a graph of this driver.
    let g: &Graph = unsafe { object(graph) };
    query(Some(g.is_empty()), QUERY_TRUE_EXP, QUERY_FALSE_EXP)
}

pub(crate) unsafe extern "C" fn zeGraphDumpContentsExp(
    graph: ze_graph_handle_t,
    path: *const c_char,
    _: *mut c_void,
) -> ze_result_t {
    // SAFETY: the program's graph and path.
    unsafe { dump(graph, path) }
}
