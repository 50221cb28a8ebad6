//! The Intel PTI 1.2 face of the engine: everything `libpti_view.so.1` (crate `pti-view`)
//! forwards to, exported from `libpti.so` as `libpti_intel_<name>`.
//!
//! Intel PTI tools are linked to `libpti_view.so.1`. That library holds no state and no logic:
//! each of its exports calls the `libpti_intel_` function of the same name here, so the engine
//! stays one per process (docs/ARCHITECTURE.md) and the Intel face's behaviour lives beside the
//! proposal's. What each file holds:
//!
//! | file | what |
//! | --- | --- |
//! | [`callback`] | Intel's Callback API (7-argument callbacks, per-domain ENTER/EXIT flags) |
//! | [`view`] | the View API on Intel's terms: epoch clock, Intel's view kinds, version 1.2.0 |
//! | `clock` | Intel's default clock, CLOCK_REALTIME from the host clock plus a measured offset |
//! | [`unsupported`] | metrics, metrics scope and PC sampling: how they answer "not supported" |
//! | [`metrics`], [`metrics_scope`], [`pc_sampling`] | those three APIs, one file (and header) each |
//! | `faces` | which face set the View API's buffer callbacks; the report when both did |
//!
//! docs/compatibility.md lists every Intel PTI 1.2 function with its status here.

pub mod callback;
mod clock;
pub(crate) mod faces;
pub mod metrics;
pub mod metrics_scope;
pub mod pc_sampling;
pub mod unsupported;
pub mod view;
pub mod xpti;
