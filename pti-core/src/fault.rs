//! Fault injection for the tests of the panic boundaries: with the `fault-injection` feature, a
//! named `point` on one of libpti's paths panics when a test asks, to prove that the boundary
//! around that path catches it (the C exports turn it into `PTI_ERROR_INTERNAL`; the entries a
//! runtime or the traced program uses, `crate::boundary`, into a critical event). Without the
//! feature, `point` is an empty inline function and nothing can be armed.
//!
//! Two ways to arm:
//! - [`panic_at_next_point`] (Rust tests): the next point reached on the calling thread panics;
//! - `PTI_FAULT_INJECT=<point>[@<n>]` in the environment of a program that loads a
//!   fault-injection build of libpti (`tests/fault_injection.rs`): the `n`-th time (1 if not
//!   given) `point` is reached in the process, on whichever thread, it panics. Read once.
//!
//! The points: `dispatch.enter` (after a traced call's ENTER callbacks), `dispatch.exit` (after
//! its EXIT callbacks, before its records), `override.before_call` and `override.after_call`
//! (around an OpenCL override's real call), `level_zero.prologue` (after a Level Zero call was
//! opened, before its hook), `level_zero.epilogue` (before its hook and close),
//! `level_zero.append_epilogue` (an append's epilogue, before it takes its command), `xpti` (an XPTI
//! notification), `opencl.layer_init` (`clInitLayer`), `opencl.release_event` (the program's
//! `clReleaseEvent`, before libpti keeps the event of a pending command), and the tool-facing
//! `subscribe`, `unsubscribe`, `enable`, `enable_domain`, `callback`.

#[cfg(feature = "fault-injection")]
mod armed {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    thread_local! {
        static ARMED: Cell<bool> = const { Cell::new(false) };
    }

    /// `PTI_FAULT_INJECT`, parsed: the point and the time it panics.
    static FROM_ENV: OnceLock<Option<(String, u64)>> = OnceLock::new();

    /// How often the point `PTI_FAULT_INJECT` names was reached.
    static REACHED: AtomicU64 = AtomicU64::new(0);

    fn from_env() -> Option<&'static (String, u64)> {
        FROM_ENV
            .get_or_init(|| {
                let value = std::env::var("PTI_FAULT_INJECT").ok()?;
                let (point, nth) = match value.split_once('@') {
                    Some((p, n)) => (p.to_string(), n.parse().ok()?),
                    None => (value, 1),
                };
                Some((point, nth))
            })
            .as_ref()
    }

    /// Makes the next fault point reached on this thread panic.
    pub fn panic_at_next_point() {
        let _ = ARMED.try_with(|a| a.set(true));
    }

    pub(crate) fn point(name: &str) {
        if ARMED.try_with(|a| a.replace(false)).unwrap_or(false) {
            panic!("injected fault at {name}");
        }
        if let Some((point, nth)) = from_env()
            && point == name
            && REACHED.fetch_add(1, Ordering::Relaxed) + 1 == *nth
        {
            panic!("injected fault at {name} (PTI_FAULT_INJECT)");
        }
    }
}

#[cfg(feature = "fault-injection")]
pub use armed::panic_at_next_point;

#[cfg(feature = "fault-injection")]
pub(crate) use armed::point;

/// A place where a test may inject a panic; free without the `fault-injection` feature.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn point(_name: &str) {}
