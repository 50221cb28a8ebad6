//! # pti-sys: raw FFI of the APIs libpti intercepts
//!
//! Declarations only, no logic. What lives here:
//!
//! - [`opencl`]: the OpenCL API, ICD dispatch table and loader-layer types, re-exported from the
//!   `opencl-sys` crate rather than retyped;
//! - [`opencl_extra`]: the few extension functions libpti traces that `opencl-sys` lacks;
//! - [`level_zero`]: the Level Zero core, tools and sysman types, DDI tables, the tracing layer,
//!   and a function-pointer alias per function (generated with bindgen by `cargo xtask gen`);
//! - [`level_zero_intel`]: Intel's extension functions that libpti traces and no Level Zero header
//!   declares (`zex*`, the older `…Exp` graph functions), by hand;
//! - [`xpti`]: the few plain-C XPTI entry points and data types the SYCL backend needs, written by
//!   hand, and the C++ accessor of XPTI's event metadata (`cpp/xpti_metadata.cpp`, built by
//!   `build.rs`).

pub use opencl_sys as opencl;
pub mod opencl_extra;
// bindgen's output: its bitfield accessors have no SAFETY comments, and its names are C's.
#[allow(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
pub mod level_zero;
pub mod level_zero_intel;
pub mod xpti;
