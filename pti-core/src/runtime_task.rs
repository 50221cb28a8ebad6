//! The runtime task a thread is submitting: what a runtime (SYCL) said of the task whose device
//! commands the driver calls on this thread create right now.
//!
//! Cross-backend state lives here, in the engine, so that no backend imports another: the SYCL
//! backend sets the task while one of its task's enqueue calls runs ([`set_current`]), and the
//! OpenCL and Level Zero backends read it for the records of the commands they see submitted
//! meanwhile ([`current`]), as they inherit the runtime call's correlation ID through
//! `correlation`.
//!
//! Touches the thread's own state only (a field of `thread::ThreadState`, reached with the rest of
//! it: one thread-local access a command, not two).

use crate::sycl_tag::SyclTag;
use crate::thread;

/// Makes `tag` the task whose commands this thread submits from now on (`None`: none).
pub(crate) fn set_current(tag: Option<SyclTag>) {
    thread::with(|s| s.runtime_task.set(tag));
}

/// The task whose commands this thread submits now, as the runtime backend last set it.
pub(crate) fn current() -> Option<SyclTag> {
    thread::with(|s| s.runtime_task.get()).flatten()
}
