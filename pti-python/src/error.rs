//! libpti's errors in Python: `libpti.PtiError` (a `RuntimeError`) with the result's `code` and
//! `name` as attributes.

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    PtiError,
    pyo3::exceptions::PyRuntimeError,
    "A libpti function answered with an error: `code` is its `pti_result`, `name` its name \
     (PTI_ERROR_BAD_ARGUMENT, ...)."
);

/// The Python exception of a libpti error.
pub(crate) fn to_py(py: Python<'_>, e: &libpti::Error) -> PyErr {
    let err = PtiError::new_err(e.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it did, the
    // exception still carries the message naming the code.
    let _ = value.setattr("code", e.code());
    let _ = value.setattr("name", e.name());
    err
}
