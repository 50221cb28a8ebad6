//! The SYCL backend: libpti as an XPTI subscriber of the SYCL runtime and its Unified Runtime.
//!
//! The XPTI framework loads the subscribers `XPTI_SUBSCRIBERS` names (libpti's constructor puts
//! itself there) and calls their `xptiTraceInit` for each stream the runtime opens; libpti's
//! (`pti-capi`) hands the stream to [`stream_initialised`], which registers for:
//!
//! - `ur.call` (`calls`): every Unified Runtime call as a traced runtime-API call, whose
//!   correlation ID the OpenCL and Level Zero calls inside it inherit;
//! - `sycl` (`tasks`): queues and tasks, whose SYCL details go on the device records of the
//!   commands a task submits (told to the driver backends through the engine's
//!   `runtime_task`);
//! - `sycl.experimental.mem_alloc` (`memory`): USM allocations and releases, as records of
//!   libpti's extension view.
//!
//! The framework's functions are found at run time (`framework`); what cannot be set up is
//! reported by a critical event, never by failing the program. Every notification runs behind
//! the XPTI panic boundary (`crate::boundary`). This module touches the rest of libpti through
//! the engine only (the dispatch entry, the view's record writers, critical events, the runtime
//! task, the linker queries).

mod calls;
mod framework;
mod memory;
mod tasks;

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use pti_sys::xpti::{XPTI_RESULT_SUCCESS, function_with_args_t, trace_event_data_t, trace_point};

use crate::api::ApiGroup;
use crate::backend::contract::{Activation, Backend, Counts};
use crate::boundary::{self, Entry};
use crate::callback::critical;
use crate::result::{Error, ResultCode};
use crate::sync::writer_lock::ForkLock;
use crate::view::abi::pti_view_memory_operation;
use crate::{fault, linker};

/// The streams libpti subscribes to, and the trace point types of each. (Not the `.debug`
/// streams: subscribing to one moves the runtime's events there.)
const STREAMS: [(&str, &[u16]); 3] = [
    (
        "ur.call",
        &[
            trace_point::FUNCTION_WITH_ARGS_BEGIN,
            trace_point::FUNCTION_WITH_ARGS_END,
        ],
    ),
    (
        "sycl",
        &[
            trace_point::QUEUE_CREATE,
            trace_point::QUEUE_DESTROY,
            trace_point::TASK_BEGIN,
            trace_point::TASK_END,
        ],
    ),
    (
        "sycl.experimental.mem_alloc",
        &[
            trace_point::MEM_ALLOC_BEGIN,
            trace_point::MEM_ALLOC_END,
            trace_point::MEM_RELEASE_BEGIN,
            trace_point::MEM_RELEASE_END,
        ],
    ),
];

/// `ur.call` is subscribed: every Unified Runtime call passes libpti.
static CALLS_SUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// The framework initialised a stream with libpti: libpti is a subscriber.
static STREAM_SEEN: AtomicBool = AtomicBool::new(false);

/// The XPTI framework opened `stream`: libpti registers its callbacks if it is one of
/// `STREAMS`. Called by libpti's `xptiTraceInit`.
pub fn stream_initialised(stream: &CStr) {
    let Ok(name) = stream.to_str() else { return };
    let Some((_, types)) = STREAMS.iter().find(|(s, _)| *s == name) else {
        return;
    };
    let Some(fw) = framework::get() else {
        report_once(
            "the XPTI framework that loaded libpti lacks functions libpti needs \
             (xptiRegisterStream, xptiRegisterCallback, xptiQueryPayload, xptiQueryMetadata, \
             xptiLookupString, xptiLookupObject): SYCL is not traced",
        );
        return;
    };
    // SAFETY: a NUL-terminated stream name; the framework registers it or returns its ID.
    let id = unsafe { (fw.xptiRegisterStream)(stream.as_ptr()) };
    let mut all = true;
    for &trace_type in *types {
        // SAFETY: a stream ID of the framework's and a callback with XPTI's signature.
        let result = unsafe { (fw.xptiRegisterCallback)(id, trace_type, Some(on_event)) };
        // A second registration (a framework that initialises a stream twice) is no error.
        all &= result >= XPTI_RESULT_SUCCESS || result == DUPLICATE;
    }
    if !all {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!(
                "the XPTI framework refused some of libpti's callbacks on the {name} stream: its \
                 events are not all traced"
            ),
        );
    }
    STREAM_SEEN.store(true, Ordering::Relaxed);
    if name == "ur.call" && all {
        CALLS_SUBSCRIBED.store(true, Ordering::Relaxed);
    }
}

/// `XPTI_RESULT_DUPLICATE`.
const DUPLICATE: i32 = 0x8000_4003_u32 as i32;

/// The XPTI framework closed `stream` (the runtime shuts down). Called by `xptiTraceFinish`.
pub fn stream_finished(stream: &CStr) {
    if stream.to_bytes() == b"ur.call" {
        CALLS_SUBSCRIBED.store(false, Ordering::Relaxed);
    }
}

/// Whether libpti receives the Unified Runtime's calls.
pub fn intercepting_calls() -> bool {
    CALLS_SUBSCRIBED.load(Ordering::Relaxed)
}

/// Every notification of every stream libpti registered for.
unsafe extern "C" fn on_event(
    trace_type: u16,
    _parent: *mut trace_event_data_t,
    event: *mut trace_event_data_t,
    instance: u64,
    user_data: *const c_void,
) {
    if boundary::is_off(Entry::Xpti) {
        boundary::count_untraced(ApiGroup::Sycl);
        return;
    }
    // A panic must not unwind into the runtime: it switches XPTI tracing off on this thread.
    let _ = boundary::catch(Entry::Xpti, || {
        fault::point("xpti");
        // SAFETY: the framework passes the event and user data of a running notification,
        // valid until this callback returns.
        unsafe { dispatch(trace_type, event, instance, user_data) }
    });
}

/// Hands a notification to the module of its stream.
///
/// # Safety
/// `event` and `user_data` are those of a running notification of type `trace_type`.
unsafe fn dispatch(
    trace_type: u16,
    event: *mut trace_event_data_t,
    instance: u64,
    user_data: *const c_void,
) {
    // What a tool does from its own callbacks is not the program's (as for traced calls): its
    // calls, tasks and allocations are not begun; ends find nothing to close.
    let begin = matches!(
        trace_type,
        trace_point::FUNCTION_WITH_ARGS_BEGIN
            | trace_point::TASK_BEGIN
            | trace_point::MEM_ALLOC_BEGIN
            | trace_point::MEM_RELEASE_BEGIN
    );
    if begin && crate::thread::with(|s| s.in_callback.get()).unwrap_or(false) {
        return;
    }
    let call = user_data.cast::<function_with_args_t>();
    use pti_view_memory_operation::*;
    match trace_type {
        // SAFETY: the caller's contract; the `ur.call` stream's user data is a
        // `function_with_args_t`.
        trace_point::FUNCTION_WITH_ARGS_BEGIN => unsafe { calls::begun(instance, call) },
        // SAFETY: see above.
        trace_point::FUNCTION_WITH_ARGS_END => unsafe { calls::ended(instance, call) },
        // SAFETY: the caller's contract.
        trace_point::QUEUE_CREATE => unsafe { tasks::queue_created(event) },
        // SAFETY: the caller's contract.
        trace_point::QUEUE_DESTROY => unsafe { tasks::queue_destroyed(event) },
        // SAFETY: the caller's contract.
        trace_point::TASK_BEGIN => unsafe { tasks::task_begun(event, instance) },
        trace_point::TASK_END => tasks::task_ended(instance),
        trace_point::MEM_ALLOC_BEGIN => {
            memory::begun(PTI_VIEW_MEMORY_OPERATION_ALLOCATION, instance)
        }
        trace_point::MEM_RELEASE_BEGIN => {
            memory::begun(PTI_VIEW_MEMORY_OPERATION_RELEASE, instance)
        }
        // SAFETY: the caller's contract.
        trace_point::MEM_ALLOC_END | trace_point::MEM_RELEASE_END => unsafe {
            memory::ended(instance, event)
        },
        _ => {}
    }
}

/// How libpti's constructor found the process's XPTI configuration.
#[derive(Debug)]
pub enum Setup {
    /// libpti is (or will be) the process's subscriber.
    Subscribed,
    /// Another subscriber is configured (`XPTI_SUBSCRIBERS`, which libpti leaves alone).
    OtherSubscriber(String),
    /// The constructor did not look (other threads ran, or `PTI_SYCL=0`).
    NotConfigured,
}

static SETUP: OnceLock<Setup> = OnceLock::new();
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Records what libpti's constructor found (once).
pub fn set_setup(setup: Setup) {
    let _ = SETUP.set(setup);
}

/// A tool asked for SYCL data, or flushes with SYCL data enabled (`why`): if the SYCL runtime
/// runs without libpti as its subscriber, a critical event says why, once. Quiet once the framework
/// has called libpti. A runtime that is loaded but has not called libpti is reported at flushes
/// only (when a tool starts, the runtime may be loaded but not yet started), and only if it may
/// have run (see [`runtime_may_have_run_untraced`]).
fn check_setup(why: Activation) {
    if STREAM_SEEN.load(Ordering::Relaxed) || REPORTED.load(Ordering::Relaxed) {
        return;
    }
    if let Some(Setup::OtherSubscriber(other)) = SETUP.get() {
        report_once(&format!(
            "XPTI_SUBSCRIBERS names another subscriber ({other}) and not libpti: SYCL and Unified \
             Runtime calls are not traced (add libpti's path to XPTI_SUBSCRIBERS, separated by a \
             comma)"
        ));
    } else if matches!(why, Activation::Flush { .. })
        && linker::is_mapped("libsycl.so")
        && runtime_may_have_run_untraced()
    {
        report_once(
            "the SYCL runtime is loaded but its XPTI framework has not called libpti: SYCL and \
             Unified Runtime calls are not traced (it needs XPTI_TRACE_ENABLE=1, \
             XPTI_FRAMEWORK_DISPATCHER naming libxptifw and XPTI_SUBSCRIBERS naming libpti \
             before the runtime starts; libpti sets them when it is loaded first, in a process \
             with one thread)",
        );
    }
}

/// Whether a SYCL runtime that is loaded but never called libpti may have run calls libpti did
/// not see. Not when libpti set the XPTI configuration itself and the runtime has not loaded its
/// XPTI framework (`libxptifw`): with tracing configured, a runtime loads the framework when it
/// starts, before its first call, so it has made none (a program that only loaded the library,
/// such as `python -m dpctl --include-dir`, is not reported).
fn runtime_may_have_run_untraced() -> bool {
    !matches!(SETUP.get(), Some(Setup::Subscribed)) || linker::is_mapped("libxptifw.so")
}

fn report_once(why: &str) {
    if !REPORTED.swap(true, Ordering::Relaxed) {
        critical::raise(
            ResultCode::ErrorTracingNotInitialized,
            format_args!("{why}"),
        );
    }
}

/// The SYCL backend, as the session sees it.
pub(crate) struct Sycl;

impl Backend for Sycl {
    fn group(&self) -> ApiGroup {
        ApiGroup::Sycl
    }

    /// The runtime loads libpti as its subscriber; nothing to attach. Activation reports, once,
    /// why no SYCL data will come when libpti is not the runtime's subscriber; never an error.
    fn activate(&self, why: Activation) -> Result<(), Error> {
        if why != (Activation::Flush { in_use: false }) {
            check_setup(why);
        }
        Ok(())
    }

    fn fork_locks(&self) -> Vec<&'static dyn ForkLock> {
        vec![calls::fork_lock(), tasks::fork_lock(), memory::fork_lock()]
    }

    /// The parent's queues and allocations are forgotten.
    fn forget_in_child(&self) {
        tasks::forget_in_child();
        memory::forget_in_child();
    }

    /// SYCL functions intercepted: every function of the table once the Unified Runtime's calls
    /// reach libpti. SYCL submits no device work of its own (the driver backends record it).
    fn counts(&self) -> Counts {
        Counts {
            intercepted_functions: if intercepting_calls() {
                crate::ids::iter(ApiGroup::Sycl).count()
            } else {
                0
            },
            pending_commands: 0,
        }
    }
}
