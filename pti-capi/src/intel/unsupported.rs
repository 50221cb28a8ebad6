//! Intel PTI 1.2's metrics, metrics-scope and PC-sampling entry points, which libpti does not
//! implement: no device libpti reaches offers it a metrics or sampling source it reads.
//!
//! Each entry point checks its arguments like Intel's, then answers what Intel's library
//! answers on a system without a supported device; none ever reports a success that collects
//! nothing:
//! - metrics: `ptiMetricsEnable` answers PTI_ERROR_METRICS_RUNTIME_ENABLE_UNSUPPORTED;
//!   `ptiMetricsGetDevices` lists no device (count 0, PTI_SUCCESS: a true answer to a query);
//!   every function taking a device or group handle gets PTI_ERROR_BAD_ARGUMENT, as no handle
//!   can be one libpti listed; `ptiMetricsDisable` undoes nothing and succeeds;
//! - metrics scope: `ptiMetricsScopeEnable` answers PTI_ERROR_NOT_IMPLEMENTED and writes no
//!   handle; functions taking a scope handle get PTI_ERROR_BAD_ARGUMENT;
//! - PC sampling: `ptiPcSamplingEnable` answers PTI_ERROR_PC_SAMPLING_UNSUPPORTED; functions
//!   taking a sampling handle get PTI_ERROR_BAD_ARGUMENT.
//!
//! The first use of each API in a process raises a critical event saying so (domain
//! PTI_DOMAIN_PTI_CRITICAL_EVENT, or Intel's PTI_CB_DOMAIN_INTERNAL_EVENT). libpti never reads
//! through the struct pointers it is given.
//!
//! This file holds what the three families share; each family's types and entry points live in
//! a file of its own, from which its header is generated: [`super::metrics`]
//! (`pti_metrics.h`), [`super::metrics_scope`] (`pti_metrics_scope.h`) and
//! [`super::pc_sampling`] (`pti_pc_sampling.h`).

use core::sync::atomic::{AtomicBool, Ordering};

use pti_core::ResultCode;
use pti_core::callback::critical;

use crate::pti::pti_result;

/// An API family libpti answers as unsupported.
pub(crate) struct Family {
    name: &'static str,
    reported: AtomicBool,
}

pub(crate) static METRICS: Family = Family::new("metrics (pti_metrics.h)");
pub(crate) static METRICS_SCOPE: Family = Family::new("metrics scope (pti_metrics_scope.h)");
pub(crate) static PC_SAMPLING: Family = Family::new("PC sampling (pti_pc_sampling.h)");

impl Family {
    const fn new(name: &'static str) -> Self {
        Family {
            name,
            reported: AtomicBool::new(false),
        }
    }

    /// Raises the family's critical event the first time it is used.
    pub(crate) fn used(&self) {
        if !self.reported.swap(true, Ordering::Relaxed) {
            critical::raise(
                ResultCode::ErrorNotImplemented,
                format_args!(
                    "Intel PTI's {} API is not supported by libpti: no device it reaches offers \
                     a source it reads; nothing is collected (docs/compatibility.md)",
                    self.name
                ),
            );
        }
    }

    /// Runs an entry point of the family: reports the family's first use, then answers with
    /// `answer`, a panic caught as PTI_ERROR_INTERNAL.
    pub(crate) fn answer(&self, answer: impl FnOnce() -> pti_result) -> pti_result {
        crate::boundary::export(|| {
            self.used();
            answer()
        })
    }

    /// The answer to a call that must name a handle libpti issued: none exist, so
    /// PTI_ERROR_BAD_ARGUMENT.
    pub(crate) fn no_handle(&self) -> pti_result {
        self.answer(|| pti_result::PTI_ERROR_BAD_ARGUMENT)
    }
}
