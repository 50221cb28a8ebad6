//! Python functions as libpti callbacks, and libpti's critical events as Python warnings, under
//! two rules: a Python function runs holding the GIL, and nothing enters the interpreter once
//! it began to shut down.
//!
//! - [`Subscriber`]: each ENTER/EXIT is delivered on the calling thread (a runtime's own thread
//!   included), which takes the GIL for it. An exception the function raises is reported as a
//!   critical event (the sink below) and the traced call goes on.
//! - Critical events of libpti are queued (they may come from any thread, inside libpti) and
//!   delivered to the sink Python registered ([`set_critical_sink`]) by a pending call
//!   (`Py_AddPendingCall`, which the main thread runs at its next bytecode boundary) or at once
//!   by [`drain_critical_events`].
//! - [`shutdown`] (registered with `atexit` by the package) closes the door: after it, callbacks
//!   return at once without the GIL (counted), no pending call is added, and it waits for those
//!   already inside.
//!
//! No lock here is held across a call into Python or libpti (`crate::fork` relies on it).

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use libpti::{Domain, Event, Site};
use pyo3::prelude::*;

use crate::error::to_py;

/// Set by [`shutdown`]: no callback takes the GIL after it.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Callbacks between their check of [`SHUTDOWN`] and their return.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Python callbacks run, callbacks that raised, callbacks not run because the interpreter was
/// shutting down.
static DELIVERED: AtomicU64 = AtomicU64::new(0);
static RAISED: AtomicU64 = AtomicU64::new(0);
static SKIPPED: AtomicU64 = AtomicU64::new(0);

/// The Python function critical events go to: `sink(code, name, message)`.
static SINK: OnceLock<Py<PyAny>> = OnceLock::new();
/// Critical events not yet given to the sink: (code, name, message).
pub(crate) static QUEUED: Mutex<Vec<(u32, String, String)>> = Mutex::new(Vec::new());

/// Runs `f` holding the GIL unless the interpreter is shutting down (then counts a skip).
fn with_interpreter(f: impl FnOnce(Python<'_>)) {
    // The increment comes before the check, and `shutdown` sets the flag before it waits for
    // the count to reach zero (both SeqCst): either this sees the flag, or `shutdown` sees the
    // increment and waits for this call to leave the interpreter.
    IN_FLIGHT.fetch_add(1, SeqCst);
    if SHUTDOWN.load(SeqCst) {
        SKIPPED.fetch_add(1, SeqCst);
    } else {
        Python::attach(f);
    }
    IN_FLIGHT.fetch_sub(1, SeqCst);
}

/// What a subscriber's Python function receives, as a tuple of plain values (the package wraps
/// it): `(0, group, api_id, site, name, correlation_id, kernel_name)` for a call,
/// `(1, code, message)` for a critical event.
fn event_args<'py>(
    py: Python<'py>,
    event: &Event<'_>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    use pyo3::IntoPyObject;
    match event {
        Event::ApiCall(c) => (
            0u32,
            c.group as u32,
            c.api_id,
            u32::from(c.site == Site::Exit),
            c.name.to_string_lossy(),
            c.correlation_id,
            c.kernel_name.map(|k| k.to_string_lossy()),
        )
            .into_pyobject(py),
        Event::Critical(c) => (1u32, c.code, c.message.to_string_lossy()).into_pyobject(py),
    }
}

/// Gives a critical event to the sink now (the GIL is held).
fn to_sink(py: Python<'_>, code: u32, name: &str, message: &str) {
    if let Some(sink) = SINK.get()
        && let Err(e) = sink.call1(py, (code, name, message))
    {
        // The sink raised (warnings turned into errors, say): the interpreter reports it as an
        // unraisable exception rather than at a random point of the program.
        e.write_unraisable(py, None);
    }
}

/// `PTI_ERROR_CALLBACK_PANICKED`: libpti's code for a callback that failed.
const CALLBACK_FAILED: u32 = 301;

/// A Python function raised in a callback: counted, its traceback given to
/// `sys.unraisablehook` (printed on stderr by default), and reported as a critical event.
fn report_exception(py: Python<'_>, err: PyErr, what: &str) {
    RAISED.fetch_add(1, SeqCst);
    let message = format!(
        "the Python callback raised {} in {what}; the traced call went on",
        err.value(py)
            .repr()
            .map_or_else(|_| "an exception".to_string(), |r| r.to_string())
    );
    err.write_unraisable(py, None);
    to_sink(py, CALLBACK_FAILED, "PTI_ERROR_CALLBACK_PANICKED", &message);
}

/// A subscription whose callback is a Python function.
#[pyclass(module = "libpti._native")]
pub(crate) struct Subscriber {
    /// Shared with the calls running `with`, so that none holds the lock while in libpti; the
    /// last holder unsubscribes, always with the GIL released.
    inner: Mutex<Option<Arc<libpti::Subscriber>>>,
    /// Set when closed: callbacks already dispatched by libpti then return without the GIL.
    closed: Arc<AtomicBool>,
}

#[pymethods]
impl Subscriber {
    /// Subscribes `callback`, called with the tuple `event_args` describes.
    #[new]
    fn new(py: Python<'_>, callback: Py<PyAny>) -> PyResult<Self> {
        let closed = Arc::new(AtomicBool::new(false));
        let is_closed = closed.clone();
        let handler = move |event: &Event<'_>| {
            if is_closed.load(SeqCst) {
                return;
            }
            with_interpreter(|py| {
                DELIVERED.fetch_add(1, SeqCst);
                let result = event_args(py, event).and_then(|args| callback.call1(py, args));
                if let Err(e) = result {
                    let what = match event {
                        Event::ApiCall(c) => c.name.to_string_lossy().into_owned(),
                        Event::Critical(_) => "a critical event".to_string(),
                    };
                    report_exception(py, e, &what);
                }
            });
        };
        let inner = libpti::Subscriber::new(handler).map_err(|e| to_py(py, &e))?;
        Ok(Subscriber {
            inner: Mutex::new(Some(Arc::new(inner))),
            closed,
        })
    }

    /// Enables (or disables) a domain: 1 driver API, 2 runtime API, 3 critical events.
    fn enable_domain(&self, py: Python<'_>, domain: u32, on: bool) -> PyResult<()> {
        let domain = match domain {
            1 => Domain::DriverApi,
            2 => Domain::RuntimeApi,
            3 => Domain::CriticalEvent,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{domain} is no callback domain (1, 2 or 3)"
                )));
            }
        };
        self.with(py, |s| s.enable_domain(domain, on))
    }

    /// Enables (or disables) one function by group (1 Level Zero, 2 OpenCL, 3 SYCL) and ID.
    fn enable(&self, py: Python<'_>, group: u32, api_id: u32, on: bool) -> PyResult<()> {
        let group = match group {
            1 => libpti::ApiGroup::LevelZero,
            2 => libpti::ApiGroup::OpenCl,
            3 => libpti::ApiGroup::Sycl,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{group} is no API group (1, 2 or 3)"
                )));
            }
        };
        self.with(py, |s| s.enable(group, api_id, on))
    }

    /// Unsubscribes; no callback of it runs after this returns. Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, SeqCst);
        let inner = self.inner.lock().take();
        // Unsubscribing waits for callbacks running on other threads, which may be waiting for
        // the GIL: it is released meanwhile.
        py.detach(|| drop(inner));
    }
}

impl Subscriber {
    /// Runs `f` on the subscription with neither the lock nor the GIL held (enabling a domain
    /// may start a runtime, whose callbacks may need the GIL or this subscriber).
    fn with(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&libpti::Subscriber) -> Result<(), libpti::Error> + Send,
    ) -> PyResult<()> {
        let Some(subscriber) = self.inner.lock().clone() else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the subscriber is closed",
            ));
        };
        py.detach(move || {
            let result = f(&subscriber);
            // If `close` ran meanwhile, this is the last holder: it unsubscribes here.
            drop(subscriber);
            result
        })
        .map_err(|e| to_py(py, &e))
    }
}

impl Drop for Subscriber {
    /// Collected without `close`: callbacks stop at once; the unsubscribe, which may wait for
    /// callbacks waiting for the GIL this thread holds, runs on a thread of its own (or, if no
    /// thread can be started, the subscription is leaked rather than risk that wait).
    fn drop(&mut self) {
        self.closed.store(true, SeqCst);
        if let Some(inner) = self.inner.get_mut().take() {
            let (tx, rx) = std::sync::mpsc::channel::<Arc<libpti::Subscriber>>();
            let spawned = std::thread::Builder::new()
                .name("libpti-unsubscribe".into())
                .spawn(move || drop(rx.recv()));
            match spawned {
                Ok(_) => {
                    let _ = tx.send(inner);
                }
                Err(_) => core::mem::forget(inner),
            }
        }
    }
}

/// The pending call that gives queued critical events to the sink (on the main thread).
extern "C" fn deliver_pending(_: *mut core::ffi::c_void) -> core::ffi::c_int {
    // Pending calls run holding the GIL; attaching again only takes the token.
    Python::attach(drain);
    0
}

fn drain(py: Python<'_>) {
    let queued = core::mem::take(&mut *QUEUED.lock());
    for (code, name, message) in queued {
        to_sink(py, code, &name, &message);
    }
}

/// Gives the queued critical events to the sink now.
#[pyfunction]
pub(crate) fn drain_critical_events(py: Python<'_>) {
    drain(py);
}

/// Registers `sink(code, name, message)` for critical events and subscribes to them (once per
/// process; the subscription lives as long as the process).
#[pyfunction]
pub(crate) fn set_critical_sink(py: Python<'_>, sink: Py<PyAny>) -> PyResult<()> {
    if SINK.set(sink).is_err() {
        return Ok(());
    }
    let subscriber = libpti::Subscriber::new(|event| {
        let Event::Critical(c) = event else { return };
        let name = libpti::Error::from_code(c.code).name();
        QUEUED
            .lock()
            .push((c.code, name, c.message.to_string_lossy().into_owned()));
        // The same door as callbacks: no pending call is added once `shutdown` closed it (the
        // interpreter may be gone by then), and `shutdown` waits for one being added.
        IN_FLIGHT.fetch_add(1, SeqCst);
        if !SHUTDOWN.load(SeqCst) {
            // SAFETY: the interpreter is alive (the door is open, and `shutdown` waits for this
            // call); Py_AddPendingCall may be called from any thread, with or without the GIL,
            // and the function has the signature it expects. A full queue (-1) leaves the event
            // queued for the next drain.
            unsafe { pyo3::ffi::Py_AddPendingCall(Some(deliver_pending), core::ptr::null_mut()) };
        }
        IN_FLIGHT.fetch_sub(1, SeqCst);
    })
    .map_err(|e| to_py(py, &e))?;
    subscriber
        .enable_domain(Domain::CriticalEvent, true)
        .map_err(|e| to_py(py, &e))?;
    // Critical events are watched until the process ends.
    std::mem::forget(subscriber);
    Ok(())
}

/// Closes the interpreter's door (from `atexit`): later callbacks return without the GIL, and
/// this waits, with the GIL released, for those inside to leave. It waits as long as they take:
/// letting the interpreter finalise under a running callback would crash the process. A note on
/// stderr says what it waits for after `patience` seconds, and every 30 s after that.
#[pyfunction]
pub(crate) fn shutdown(py: Python<'_>, patience: f64) {
    use std::time::{Duration, Instant};
    SHUTDOWN.store(true, SeqCst);
    py.detach(|| {
        let mut next_note = Instant::now() + Duration::from_secs_f64(patience.max(0.0));
        while IN_FLIGHT.load(SeqCst) > 0 {
            if Instant::now() >= next_note {
                eprintln!(
                    "libpti: the interpreter is exiting and waits for {} Python callbacks still \
                     running on other threads",
                    IN_FLIGHT.load(SeqCst)
                );
                next_note = Instant::now() + Duration::from_secs(30);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    drain(py);
}

/// In a child just forked: the callbacks in flight were the parent's other threads, which the
/// child does not have.
pub(crate) fn after_fork_in_child() {
    IN_FLIGHT.store(0, SeqCst);
}

/// `(delivered, raised, skipped)`: Python callbacks run, those that raised, and callbacks not
/// run because the interpreter was shutting down.
#[pyfunction]
pub(crate) fn callback_counts() -> (u64, u64, u64) {
    (
        DELIVERED.load(SeqCst),
        RAISED.load(SeqCst),
        SKIPPED.load(SeqCst),
    )
}
