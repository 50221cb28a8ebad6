//! Fault injection for the tests of the C boundary: with the `fault-injection` feature, a test
//! can make the next `point` reached on its thread panic, to prove that every export turns a
//! panic into `PTI_ERROR_INTERNAL` instead of unwinding into C. Without the feature, `point`
//! is an empty inline function.

#[cfg(feature = "fault-injection")]
mod armed {
    use core::cell::Cell;

    thread_local! {
        static ARMED: Cell<bool> = const { Cell::new(false) };
    }

    /// Makes the next fault point reached on this thread panic.
    pub fn panic_at_next_point() {
        ARMED.with(|a| a.set(true));
    }

    pub(crate) fn point(name: &str) {
        if ARMED.with(|a| a.replace(false)) {
            panic!("injected fault at {name}");
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
