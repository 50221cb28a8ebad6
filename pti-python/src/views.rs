//! The views of the Python package: one [`libpti::Views`] of the process, whose records are
//! copied, field by field, into one byte array per record kind (the C layout, padding zeroed)
//! that Python takes with [`take`] and reads as NumPy structured arrays.
//!
//! Records arrive on libpti's threads without the GIL. Every lock here is a leaf: held for a
//! copy or a swap, never across a call into libpti or Python, so no lock order exists (with
//! the GIL or libpti's locks), and `crate::fork` can take them all before a `fork`.

use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use libpti::abi::pti_view_kind;
use libpti::{Record, Records, Views};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::to_py;
use crate::layouts::{self, Layout};

/// The records received and not yet taken: kind → records of that kind, back to back.
pub(crate) static STORE: Mutex<BTreeMap<u32, Vec<u8>>> = Mutex::new(BTreeMap::new());

/// The running views, if Python started them.
pub(crate) static VIEWS: Mutex<Option<Arc<Views>>> = Mutex::new(None);

/// Layouts by kind, computed once.
fn layouts() -> &'static HashMap<u32, Layout> {
    static LAYOUTS: OnceLock<HashMap<u32, Layout>> = OnceLock::new();
    LAYOUTS.get_or_init(|| {
        pti_view_kind::ALL
            .iter()
            .chain(pti_view_kind::EXTENSIONS.iter())
            .filter_map(|k| layouts::of(*k).map(|l| (*k as u32, l)))
            .collect()
    })
}

/// The first byte of a record.
fn start_of(record: &Record<'_>) -> *const u8 {
    fn p<T>(r: &T) -> *const u8 {
        (r as *const T).cast()
    }
    match record {
        Record::Api(r) => p(*r),
        Record::Kernel(r) => p(*r),
        Record::MemoryCopy(r) => p(*r),
        Record::MemoryCopyP2p(r) => p(*r),
        Record::MemoryFill(r) => p(*r),
        Record::Synchronization(r) => p(*r),
        Record::ExternalCorrelation(r) => p(*r),
        Record::Overhead(r) => p(*r),
        Record::Communication(r) => p(*r),
        Record::MemoryAllocation(r) => p(*r),
        Record::CommandExecution(r) => p(*r),
        Record::KernelLaunch(r) => p(*r),
        Record::Loss(r) => p(*r),
        Record::Annotation(r) => p(*r),
    }
}

/// Records copied by [`keep`], and the nanoseconds it spent (lock included): its cost per
/// record, which `bench/costs.py` reports.
static COPIED: AtomicU64 = AtomicU64::new(0);
static COPY_NS: AtomicU64 = AtomicU64::new(0);

/// Appends each record of a buffer to its kind's bytes: this is the one copy a record costs.
fn keep(records: Records<'_>) {
    let started = std::time::Instant::now();
    let mut copied = 0u64;
    let layouts = layouts();
    let mut store = STORE.lock();
    for record in records {
        let start = start_of(&record);
        // SAFETY: every record starts with its 4-byte kind; `start` points at a whole record.
        let kind = unsafe { start.cast::<u32>().read() };
        let Some(layout) = layouts.get(&kind) else {
            continue;
        };
        let bytes = store.entry(kind).or_default();
        let at = bytes.len();
        bytes.resize(at + layout.size, 0);
        for f in &layout.fields {
            // SAFETY: the field lies inside the record (offset and size from its struct), its
            // bytes were written by libpti (fields, unlike padding, are initialised), and the
            // destination is the zeroed room just made for this record.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    start.add(f.offset),
                    bytes.as_mut_ptr().add(at + f.offset),
                    f.size,
                );
            }
        }
        copied += 1;
    }
    drop(store);
    COPIED.fetch_add(copied, Ordering::Relaxed);
    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    COPY_NS.fetch_add(ns, Ordering::Relaxed);
}

/// `(records, nanoseconds)`: the records copied out of libpti's buffers so far in the process,
/// and the time the copies took.
#[pyfunction]
pub(crate) fn copy_stats() -> (u64, u64) {
    (
        COPIED.load(Ordering::Relaxed),
        COPY_NS.load(Ordering::Relaxed),
    )
}

/// Starts the views of `kinds` (view kind values), lending libpti buffers of `buffer_size`
/// bytes; their records are kept until [`take`]n.
#[pyfunction]
pub(crate) fn start(py: Python<'_>, kinds: Vec<u32>, buffer_size: usize) -> PyResult<()> {
    let kinds = kinds
        .into_iter()
        .map(|k| {
            pti_view_kind::from_raw(k).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!("{k} is no view kind"))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let already = || {
        pyo3::exceptions::PyRuntimeError::new_err(
            "views are already started in this process (libpti has one pair of buffer \
             callbacks per process): stop them first",
        )
    };
    if VIEWS.lock().is_some() {
        return Err(already());
    }
    // Two threads starting at once: the crate lets one Views live, the other gets BAD_ARGUMENT.
    let started = py
        .detach(|| Views::builder(&kinds).buffer_size(buffer_size).start(keep))
        .map_err(|e| {
            if e == libpti::Error::BadArgument && VIEWS.lock().is_some() {
                already()
            } else {
                to_py(py, &e)
            }
        })?;
    *VIEWS.lock() = Some(Arc::new(started));
    Ok(())
}

/// Stops the views: disables them and flushes (their last records are kept). Nothing when none
/// run.
#[pyfunction]
pub(crate) fn stop(py: Python<'_>) {
    let Some(mut views) = VIEWS.lock().take() else {
        return;
    };
    // Dropping flushes, which may wait for libpti's threads: never while holding the GIL. A
    // flush running on another thread holds a clone for its duration: waited for, so that the
    // views are disabled and flushed when this returns.
    py.detach(|| {
        loop {
            match Arc::try_unwrap(views) {
                Ok(only) => break drop(only),
                Err(shared) => {
                    views = shared;
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
            }
        }
    });
}

/// Records freed undelivered because they completed after the views stopped.
#[pyfunction]
pub(crate) fn undelivered_count() -> u64 {
    libpti::view::undelivered_count()
}

/// Records (or stops recording) function `api_id` of `group` in the API views: `runtime`
/// chooses the runtime (SYCL) view, otherwise the driver view.
#[pyfunction]
pub(crate) fn record_api(
    py: Python<'_>,
    runtime: bool,
    group: u32,
    api_id: u32,
    on: bool,
) -> PyResult<()> {
    let group = crate::group(group)?;
    let result = if runtime {
        libpti::view::record_runtime_api(group, api_id, on)
    } else {
        libpti::view::record_driver_api(group, api_id, on)
    };
    result.map_err(|e| to_py(py, &e))
}

/// Whether views run.
#[pyfunction]
pub(crate) fn running() -> bool {
    VIEWS.lock().is_some()
}

/// Delivers every finished record now (`ptiFlushAllViews`).
#[pyfunction]
pub(crate) fn flush(py: Python<'_>) -> PyResult<()> {
    let views = VIEWS.lock().clone();
    py.detach(|| views.as_deref().map_or(Ok(()), Views::flush))
        .map_err(|e| to_py(py, &e))
}

/// The records kept so far, as `{kind: bytes}`; they are no longer kept here.
#[pyfunction]
pub(crate) fn take(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let taken = core::mem::take(&mut *STORE.lock());
    let dict = PyDict::new(py);
    for (kind, bytes) in taken {
        dict.set_item(kind, PyBytes::new(py, &bytes))?;
    }
    Ok(dict)
}

/// The layouts of the record kinds: `{kind: (struct name, size, [(field, offset, size,
/// format)])}`.
#[pyfunction]
pub(crate) fn record_layouts(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    for (kind, layout) in layouts() {
        let fields: Vec<_> = layout
            .fields
            .iter()
            .map(|f| (f.name, f.offset, f.size, f.format))
            .collect();
        dict.set_item(kind, (layout.name, layout.size, fields))?;
    }
    Ok(dict)
}
