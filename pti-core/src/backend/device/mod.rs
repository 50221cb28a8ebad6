//! What the driver backends (OpenCL, Level Zero) share about device work, written once:
//!
//! - [`registry`]: their devices, and each device's conversion of timestamps onto the host clock
//!   (synchronisation pairs read by the backend's [`registry::DeviceTimer`]);
//! - [`timing`]: the conversion itself (a base mapping from the pairs, shifted by the commands);
//! - [`command`]: what a command does ([`command::Work`]), who submitted it
//!   ([`command::Submission`]), and the record it gets when it finished ([`command::Finished`]);
//! - [`pending`]: the commands submitted whose records are still to come, and their harvest;
//! - [`harvester`]: a thread of libpti's own that harvests, where `PTI_HARVEST` asks for it;
//! - [`switches`]: the environment switches that choose how commands are timed.
//!
//! Nothing here knows a backend: each backend brings its runtime calls through the traits
//! [`registry::DeviceTimer`] and [`pending::PendingCommand`]. Touches the engine only (the
//! clock, the view's record writers, the thread's state, the runtime task, critical events).

pub(crate) mod command;
pub(crate) mod harvester;
pub(crate) mod pending;
pub(crate) mod registry;
pub(crate) mod switches;
pub(crate) mod timing;
