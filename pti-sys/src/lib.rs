//! # pti-sys: raw FFI of the APIs libpti intercepts
//!
//! Declarations only, no logic. What lives here:
//!
//! - [`opencl`]: the OpenCL API, ICD dispatch table and loader-layer types, re-exported from the
//!   `opencl-sys` crate rather than retyped;
//! - [`opencl_extra`]: the few extension functions libpti traces that `opencl-sys` lacks;
//! - [`level_zero`]: the Level Zero core, tools and sysman types, DDI tables, the tracing layer,
//!   and a function-pointer alias per function (generated with bindgen by `cargo xtask gen`).
//!
//! The plain-C XPTI entry points join this crate with the SYCL backend.

pub use opencl_sys as opencl;
pub mod opencl_extra;
#[rustfmt::skip]
pub mod level_zero;
