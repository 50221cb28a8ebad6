//! The interception layers: one submodule per runtime, each turning the runtime's calls into
//! traced calls of the dispatch entry and its device work into view records.
//!
//! - [`opencl`]: the OpenCL loader layer;
//! - [`level_zero`]: a tracer on the Level Zero loader's tracing layer;
//! - [`sycl`]: an XPTI subscriber of the SYCL runtime and its Unified Runtime;
//! - `device`: what the driver backends share about device work (devices and their clocks,
//!   commands in flight and their records), written once;
//! - `contract`: the [`contract::Backend`] trait, all that the session (`crate::session`) may ask
//!   of a backend.
//!
//! Who may touch whom: a backend uses the engine and `device`, never another backend (the SYCL
//! task a driver command belongs to travels through the engine, `runtime_task`); nothing in the
//! engine uses a backend; only the session calls the backends, through the contract. The runtimes
//! enter a backend through `pti-capi`'s exports (the OpenCL layer, XPTI) or the callbacks the
//! backend registered (the Level Zero tracing layer), each behind a panic boundary
//! (`crate::boundary`).

pub(crate) mod contract;
pub(crate) mod device;
pub mod level_zero;
pub mod opencl;
pub mod sycl;
