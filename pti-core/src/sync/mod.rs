//! Synchronisation building blocks of the lock-free paths.
//!
//! - [`barrier`]: an asymmetric memory barrier, so that readers on the call path pay a compiler
//!   fence while the rare writers (unsubscribe) pay a `membarrier` system call.
//! - [`handoff`]: the hand-off of a thread's record buffer between its writer and flushers.
//! - [`shim`]: the primitives of [`handoff`], loom's under `cfg(loom)`.
//! - [`off_latch`]: the hand-shake between a panic's switch-off and the hook that must run first.
//! - [`writer_lock`]: the writers' lock, safe to take across `fork()`.
//! - [`backoff`]: how writers wait for other threads.

pub(crate) mod backoff;
pub(crate) mod barrier;
pub(crate) mod handoff;
pub(crate) mod off_latch;
pub(crate) mod shim;
pub(crate) mod writer_lock;
