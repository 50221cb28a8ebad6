//! # pti-sys: raw FFI of the APIs libpti intercepts
//!
//! Declarations only, no logic. What lives here:
//!
//! - [`opencl`]: the OpenCL API, ICD dispatch table and loader-layer types, re-exported from the
//!   `opencl-sys` crate rather than retyped;
//! - [`opencl_extra`]: the few extension functions libpti traces that `opencl-sys` lacks.
//!
//! The Level Zero core and tracing-layer bindings (generated from the installed headers and
//! committed) and the plain-C XPTI entry points join this crate with their backends.

pub use opencl_sys as opencl;
pub mod opencl_extra;
