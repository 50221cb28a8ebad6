//! # `libpti._native`: the native half of libpti's Python package
//!
//! A pyo3 module over the `libpti` crate, so it links the one `libpti.so` of the process (the
//! wheel's, beside this module: its run path is `$ORIGIN`), never a second engine. The Python
//! half (`python/libpti/`) gives it its public shape; this side keeps to plain values.
//!
//! | module | what |
//! | --- | --- |
//! | `views` | the process's views; records copied into per-kind byte arrays |
//! | `layouts` | the records' C layouts as NumPy fields |
//! | `callbacks` | Python callbacks (GIL, shutdown), critical events to a Python sink |
//! | `error` | `PtiError` |
//! | `fork` | its locks held across `fork` |

mod callbacks;
mod error;
mod fork;
mod layouts;
mod views;

use libpti::abi::{pti_api_group_id, pti_view_external_kind, pti_view_kind};
use pyo3::prelude::*;

use crate::error::to_py;

pub(crate) fn group(raw: u32) -> PyResult<pti_api_group_id> {
    match raw {
        1 => Ok(pti_api_group_id::PTI_API_GROUP_LEVELZERO),
        2 => Ok(pti_api_group_id::PTI_API_GROUP_OPENCL),
        3 => Ok(pti_api_group_id::PTI_API_GROUP_SYCL),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{raw} is no API group (1 Level Zero, 2 OpenCL, 3 SYCL)"
        ))),
    }
}

fn external_kind(raw: u32) -> PyResult<pti_view_external_kind> {
    pti_view_external_kind::pushable_from_raw(raw).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "{raw} is no external correlation kind a tool can push (1 to 5)"
        ))
    })
}

fn view_kind(raw: u32) -> PyResult<pti_view_kind> {
    pti_view_kind::from_raw(raw)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("{raw} is no view kind")))
}

/// libpti's version.
#[pyfunction]
fn version() -> &'static str {
    libpti::version()
}

/// The view kinds: `[(name, value)]`, names without `PTI_VIEW_`.
#[pyfunction]
fn view_kinds() -> Vec<(String, u32)> {
    pti_view_kind::ALL
        .iter()
        .chain(pti_view_kind::EXTENSIONS.iter())
        .map(|k| {
            let name = format!("{k:?}");
            (name.trim_start_matches("PTI_VIEW_").to_string(), *k as u32)
        })
        .collect()
}

/// The name of function `api_id` of API group `group`, or None.
#[pyfunction]
fn api_name(group_id: u32, api_id: u32) -> PyResult<Option<String>> {
    Ok(libpti::view::api_name(group(group_id)?, api_id).map(|n| n.to_string_lossy().into_owned()))
}

/// Pushes an external correlation ID on this thread's stack for `kind`.
#[pyfunction]
fn push_external_correlation(py: Python<'_>, kind: u32, id: u64) -> PyResult<()> {
    libpti::view::push_external_correlation(external_kind(kind)?, id).map_err(|e| to_py(py, &e))
}

/// Pops this thread's last external correlation ID of `kind`.
#[pyfunction]
fn pop_external_correlation(py: Python<'_>, kind: u32) -> PyResult<u64> {
    libpti::view::pop_external_correlation(external_kind(kind)?).map_err(|e| to_py(py, &e))
}

/// Records of `kind` lost for want of buffer space, in the process.
#[pyfunction]
fn dropped_count(py: Python<'_>, kind: u32) -> PyResult<u64> {
    libpti::view::dropped_count(view_kind(kind)?).map_err(|e| to_py(py, &e))
}

/// Records of `kind` libpti emitted in the process (written or dropped).
#[pyfunction]
fn emitted_count(py: Python<'_>, kind: u32) -> PyResult<u64> {
    libpti::view::emitted_count(view_kind(kind)?).map_err(|e| to_py(py, &e))
}

/// Device records waiting for their work to complete.
#[pyfunction]
fn pending_device_records(py: Python<'_>) -> PyResult<u64> {
    libpti::view::pending_device_records().map_err(|e| to_py(py, &e))
}

/// Pauses (`true`) or resumes collection for the whole process (`ptiViewPause`/`ptiViewResume`).
#[pyfunction]
fn set_paused(py: Python<'_>, paused: bool) -> PyResult<()> {
    let result = if paused {
        libpti::view::pause()
    } else {
        libpti::view::resume()
    };
    result.map_err(|e| to_py(py, &e))
}

/// Whether collection is paused (`ptiViewIsPaused`).
#[pyfunction]
fn is_paused(py: Python<'_>) -> PyResult<bool> {
    libpti::view::is_paused().map_err(|e| to_py(py, &e))
}

/// How many critical events of kind `code` libpti raised in the process.
#[pyfunction]
fn critical_event_count(py: Python<'_>, code: u32) -> PyResult<u64> {
    libpti::critical_event_count(code).map_err(|e| to_py(py, &e))
}

/// The name of a `pti_result`.
#[pyfunction]
fn result_name(code: u32) -> String {
    libpti::Error::from_code(code).name()
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    fork::hold_locks_across_fork();
    m.add("PtiError", m.py().get_type::<error::PtiError>())?;
    m.add_class::<callbacks::Subscriber>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(view_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(api_name, m)?)?;
    m.add_function(wrap_pyfunction!(push_external_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(pop_external_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(dropped_count, m)?)?;
    m.add_function(wrap_pyfunction!(emitted_count, m)?)?;
    m.add_function(wrap_pyfunction!(pending_device_records, m)?)?;
    m.add_function(wrap_pyfunction!(critical_event_count, m)?)?;
    m.add_function(wrap_pyfunction!(set_paused, m)?)?;
    m.add_function(wrap_pyfunction!(is_paused, m)?)?;
    m.add_function(wrap_pyfunction!(result_name, m)?)?;
    m.add_function(wrap_pyfunction!(views::start, m)?)?;
    m.add_function(wrap_pyfunction!(views::stop, m)?)?;
    m.add_function(wrap_pyfunction!(views::running, m)?)?;
    m.add_function(wrap_pyfunction!(views::flush, m)?)?;
    m.add_function(wrap_pyfunction!(views::take, m)?)?;
    m.add_function(wrap_pyfunction!(views::record_layouts, m)?)?;
    m.add_function(wrap_pyfunction!(views::copy_stats, m)?)?;
    m.add_function(wrap_pyfunction!(views::undelivered_count, m)?)?;
    m.add_function(wrap_pyfunction!(views::record_api, m)?)?;
    m.add_function(wrap_pyfunction!(callbacks::set_critical_sink, m)?)?;
    m.add_function(wrap_pyfunction!(callbacks::drain_critical_events, m)?)?;
    m.add_function(wrap_pyfunction!(callbacks::shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(callbacks::callback_counts, m)?)?;
    Ok(())
}
