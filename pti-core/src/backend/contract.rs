//! What every backend offers the session, and nothing more: the [`Backend`] trait.
//!
//! The engine never calls a backend; the session (`crate::session`) does, through this trait
//! only, and decides once what a tool's request means for each backend ("enabling X attaches,
//! checks or reports Y"). A backend reaches the rest of libpti through the engine (the dispatch
//! entry, the view's record writers, critical events, the runtime task) and the shared device
//! plumbing (`backend::device`), never through another backend.
//!
//! The session never names `backend::device` either: what it needs of that plumbing at a flush,
//! at `fork()` and at exit is [`SharedPlumbing`] ([`SHARED`]), here beside the trait, each step
//! saying where it comes among the backends' (`pti-core/tests/layering.rs` checks both).

use super::device::{harvester, pending};
use crate::api::{ApiGroup, ApiId};
use crate::result::Error;
use crate::sync::writer_lock::ForkLock;

/// Why the session asks a backend to make sure its calls are traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activation {
    /// The tool named this backend's API group: it enabled one of its functions, or a view filter
    /// for it alone. If the backend cannot trace, that request fails with the reason (its setting
    /// still stands), besides the critical event.
    Named,
    /// The tool asked for something this backend serves among others (a callback domain, a
    /// view, a filter for every group). If the backend cannot trace, a critical event says why;
    /// the request succeeds.
    Implied,
    /// The tool flushes: the last moment to report why no data comes (a loader that cannot load
    /// the layer, a runtime that started without libpti). `in_use`: something the tool enabled
    /// concerns this backend (a view it fills, a callback of one of its functions); a backend may
    /// keep quiet otherwise. Never an error.
    Flush {
        /// Something enabled concerns this backend.
        in_use: bool,
    },
}

/// Counts a backend reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Functions whose calls are intercepted now (0 while the backend is not attached).
    pub(crate) intercepted_functions: usize,
    /// Device commands submitted while a device view was enabled whose records are still to come.
    pub(crate) pending_commands: usize,
}

/// One interception layer (see the module docs).
pub(crate) trait Backend: Sync {
    /// The API group whose calls it intercepts.
    fn group(&self) -> ApiGroup;

    /// Whether it can start tracing at any moment of the run, also after the program began using
    /// its API (Level Zero: whether the loader loads its tracing layer at run time, what Intel's
    /// PTI calls local collection). Answers by looking, without attaching.
    fn attaches_at_run_time(&self) -> bool {
        true
    }

    /// Its functions that submit or wait for device work: traced while a device view is enabled,
    /// so that device records carry their calls' correlation IDs.
    fn device_work(&self) -> &'static [ApiId] {
        &[]
    }

    /// Its functions that submit device work of no record kind, each with what that work is
    /// ("a memory migration"): counted, and announced once, while a device view is enabled.
    fn unrecorded_work(&self) -> &'static [(ApiId, &'static str)] {
        &[]
    }

    /// Makes sure its calls are traced, or says why they cannot be (see [`Activation`]).
    fn activate(&self, why: Activation) -> Result<(), Error>;

    /// Writes the records of every command that has completed, without waiting for any other
    /// (for a flush; the session then waits for the harvests of other threads,
    /// [`SharedPlumbing::wait_for_other_harvests`]).
    fn harvest(&self) {}

    /// The process exits (or the runtime's loader shuts down): what can no longer be recorded is
    /// counted as lost; no runtime is called (it may be gone).
    fn exit(&self) {}

    /// Its locks, in the one order the fork handlers take them.
    fn fork_locks(&self) -> Vec<&'static dyn ForkLock>;

    /// In the child after `fork()`, its locks released: forgets the parent's runtime objects and
    /// commands (the child has no use of them; the parent records its own).
    fn forget_in_child(&self) {}

    /// What it can tell of itself now.
    fn counts(&self) -> Counts;
}

/// What the driver backends share (`backend::device`: libpti's harvest thread and the lists of
/// commands awaiting records), as the session needs it around the backends' own steps.
pub(crate) struct SharedPlumbing;

/// The one [`SharedPlumbing`].
pub(crate) const SHARED: SharedPlumbing = SharedPlumbing;

impl SharedPlumbing {
    /// The harvest thread's locks, taken at `fork()` before every backend's.
    pub(crate) fn fork_locks(&self) -> Vec<&'static dyn ForkLock> {
        harvester::fork_locks().to_vec()
    }

    /// A flush, after every backend harvested: waits until the harvests that other threads have
    /// under way wrote their records (from tool code, for nobody).
    pub(crate) fn wait_for_other_harvests(&self) {
        pending::wait_for_other_harvests();
    }

    /// In the child after `fork()`, before the backends forget theirs: the parent's harvest
    /// thread does not exist here.
    pub(crate) fn forget_thread_in_child(&self) {
        harvester::forget_in_child();
    }

    /// In the child, after the backends forgot their commands: harvests that other threads of
    /// the parent had under way do not exist here.
    pub(crate) fn forget_harvests_in_child(&self) {
        pending::reset_in_child();
    }

    /// At exit, before the backends count what they can no longer record: the harvest thread
    /// stops, so that nothing of libpti calls a runtime from it afterwards.
    pub(crate) fn stop_at_exit(&self) {
        harvester::stop();
    }
}
