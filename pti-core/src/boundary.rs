//! Panic boundaries where the traced program or a runtime enters libpti.
//!
//! Since Rust 1.81 a panic that reaches an `extern "C"` function aborts the process. Every place
//! where code that is not libpti's calls libpti's Rust code is therefore an [`Entry`], and the
//! Rust code behind it runs inside [`catch`]:
//!
//! | entry | where | what runs inside |
//! | --- | --- | --- |
//! | [`Entry::Dispatch`] | a traced call's slow path (`dispatch`), OpenCL overrides | ENTER, EXIT, records; an override's own work |
//! | [`Entry::LevelZeroTracer`] | the tracing layer's prologues and epilogues | opening and closing the call, the hooks |
//! | [`Entry::Xpti`] | XPTI notifications of the SYCL runtime | the stream's handlers |
//! | [`Entry::OpenClLayer`] | the OpenCL loader's `clInitLayer` and friends | the layer's set-up |
//! | [`Entry::Itt`] | ITT's static part calling libpti as its collector | the annotation's bookkeeping and records |
//!
//! (The exports of the C API, which a *tool* calls, have their own boundary in `pti-capi`.)
//!
//! A caught panic becomes the critical event `PTI_ERROR_TRACING_PANICKED`, and its entry is
//! switched off on the panicking thread: from then on that thread's calls through it pass
//! untraced, and each is counted ([`count_untraced`], [`untraced_calls`]) rather than raising
//! more events, so a bug that panics every time cannot flood the tool. Other threads go on.
//! What the program sees is never changed by a panic: the entry's caller makes sure the real
//! call is made exactly once (see `dispatch::CallScope::call_next` and the Level Zero tracer).
//!
//! The default panic hook still prints the panic to the program's stderr: libpti does not replace
//! a process-wide hook that belongs to the program.
//!
//! Touches: critical events, a thread-local byte of its own, and the hook a backend gives
//! [`before_dispatch_off`].

use core::cell::Cell;
use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicU64, Ordering};
use std::any::Any;

use crate::api::ApiGroup;
use crate::callback::critical;
use crate::result::ResultCode;
use crate::sync::off_latch::OffLatch;

/// A place where code that is not libpti's enters libpti's Rust code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Entry {
    /// A traced call's slow path and the overrides of OpenCL functions.
    Dispatch = 0,
    /// The Level Zero loader's tracing layer: prologues and epilogues.
    LevelZeroTracer = 1,
    /// Notifications of the SYCL runtime's XPTI framework.
    Xpti = 2,
    /// The OpenCL loader's layer entry points.
    OpenClLayer = 3,
    /// The ITT collector interface: the program's annotations (`pti-capi`'s `itt`).
    Itt = 4,
}

impl Entry {
    const fn bit(self) -> u8 {
        1 << self as u8
    }

    fn describe(self) -> &'static str {
        match self {
            Entry::Dispatch => "a traced call",
            Entry::LevelZeroTracer => "a Level Zero tracing-layer callback",
            Entry::Xpti => "an XPTI notification of the SYCL runtime",
            Entry::OpenClLayer => "the OpenCL loader-layer set-up",
            Entry::Itt => "an ITT annotation of the program",
        }
    }
}

thread_local! {
    /// Bit `entry` set: a panic switched that entry off on this thread.
    static OFF: Cell<u8> = const { Cell::new(0) };
}

/// Calls that passed untraced because their entry was switched off, per API group.
static UNTRACED: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];

/// Whether some thread has had an entry switched off: until then, [`is_off`] answers without
/// looking up this thread's bits (a TLS lookup in a shared library, on every traced call). And
/// whether [`before_dispatch_off`] gave its hook, so that a switch-off and the hook's arrival at
/// the same moment cannot both miss running it.
#[cfg(not(loom))]
static LATCH: OffLatch = OffLatch::new();
/// Loom's atomics cannot be made in a constant; under `cfg(loom)` the library is only built.
#[cfg(loom)]
static LATCH: std::sync::LazyLock<OffLatch> = std::sync::LazyLock::new(OffLatch::new);

/// Whether a caught panic switched `entry` off on this thread.
#[inline]
pub fn is_off(entry: Entry) -> bool {
    LATCH.any_off()
        && OFF
            .try_with(|o| o.get() & entry.bit() != 0)
            .unwrap_or(false)
}

/// Counts one call of `group` that passed untraced because its entry is off on its thread.
#[cold]
pub(crate) fn count_untraced(group: ApiGroup) {
    UNTRACED[group.index()].fetch_add(1, Ordering::Relaxed);
}

/// Calls of `group` that passed untraced since the process started because a panic inside libpti
/// switched their entry off on their thread (see the module docs).
pub fn untraced_calls(group: ApiGroup) -> u64 {
    UNTRACED[group.index()].load(Ordering::Relaxed)
}

/// Runs `f`, libpti's part of `entry`. A panic inside is caught: it is raised as the critical
/// event `PTI_ERROR_TRACING_PANICKED`, `entry` is switched off on this thread, and `None` is
/// returned, for the caller to let the program's call go on as it would without libpti.
#[inline]
pub fn catch<R>(entry: Entry, f: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            switch_off(entry, payload.as_ref());
            None
        }
    }
}

/// What must happen before a thread's dispatch is switched off: the OpenCL backend's hold on the
/// events the program may now release without libpti seeing it (`opencl::retained`).
static BEFORE_DISPATCH_OFF: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Has `hook` run whenever a caught panic switches [`Entry::Dispatch`] off on a thread, before
/// that thread's calls pass untraced (one hook; a second is ignored); at once too, if an entry
/// was switched off on some thread before the hook was given (a tool's simulated call, say, before
/// the OpenCL loader started; which entry is not known then, so any).
pub(crate) fn before_dispatch_off(hook: fn()) {
    if BEFORE_DISPATCH_OFF.set(hook).is_ok() && LATCH.give_hook() {
        let _ = std::panic::catch_unwind(hook);
    }
}

#[cold]
#[inline(never)]
fn switch_off(entry: Entry, payload: &(dyn Any + Send)) {
    if LATCH.switch_off()
        && entry == Entry::Dispatch
        && let Some(hook) = BEFORE_DISPATCH_OFF.get()
    {
        // A panic inside must not escape either; the switch goes on.
        let _ = std::panic::catch_unwind(hook);
    }
    let _ = OFF.try_with(|o| o.set(o.get() | entry.bit()));
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    // A panic while raising must not escape either: the event is then counted only.
    let _ = std::panic::catch_unwind(|| {
        critical::raise(
            ResultCode::ErrorTracingPanicked,
            format_args!(
                "libpti panicked inside {} ({what}); the panic was caught and the program's call \
                 went on. On thread {tid} this path is no longer traced: its calls pass untraced \
                 and are counted (ptiGetUntracedCallCount)",
                entry.describe()
            ),
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_switches_its_entry_off_on_its_thread_only() {
        std::thread::spawn(|| {
            assert!(!is_off(Entry::Xpti));
            assert_eq!(catch(Entry::Xpti, || 5), Some(5));
            let before = critical::count(ResultCode::ErrorTracingPanicked);
            assert_eq!(catch(Entry::Xpti, || -> u32 { panic!("test panic") }), None);
            assert!(is_off(Entry::Xpti));
            assert!(!is_off(Entry::Dispatch));
            assert!(critical::count(ResultCode::ErrorTracingPanicked) > before);
        })
        .join()
        .unwrap();
        assert!(!is_off(Entry::Xpti), "another thread is not switched off");
    }
}
