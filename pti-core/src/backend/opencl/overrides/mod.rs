//! The overrides: functions whose wrappers do more than trace, other than the enqueue calls
//! (`enqueues.rs`). Each override has the name of its function and receives the call's scope, the
//! next layer's entry and the program's arguments, and makes the real call itself, through
//! [`CallScope::call_next`](crate::dispatch::CallScope::call_next), so that the dispatch's panic
//! boundary around it (`dispatch::run_override`) never makes the real call twice nor skips it.
//! The wrapper generator gives an override to every `cl*` function of these files, and calls it
//! by its file: `overrides::queue::clCreateCommandQueue`.
//!
//! - `queue`: queue creation adds profiling while a device view is enabled, and queue queries
//!   hide it;
//! - `kernel`: kernel creation invalidates remembered kernel names;
//! - `wait`: host waits harvest finished commands and record the wait;
//! - `extension_address`: extension-address queries hand out libpti's wrappers.

pub(super) mod extension_address;
pub(super) mod kernel;
pub(super) mod queue;
pub(super) mod wait;
