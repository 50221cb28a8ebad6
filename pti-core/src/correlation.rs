//! Correlation IDs: the number that ties a call's callbacks to its view records.
//!
//! IDs are unique within the process (until the 32-bit space wraps) but not ordered across
//! threads: each thread takes a block of [`BLOCK`] IDs from a global counter and hands them out
//! without touching shared memory, so the call path pays one shared atomic add per block, not per
//! call. ID 0 is never handed out; it means "no correlation" in records.
//!
//! A driver call (Level Zero, OpenCL) made while a traced runtime call (SYCL) runs on the same
//! thread carries the runtime call's ID, so that the runtime record, the driver record and the
//! device work they cause share one ID. [`for_call`] applies that rule.

use core::sync::atomic::{AtomicU32, Ordering};

use crate::api::{ApiGroup, Domain};
use crate::thread::ThreadState;

/// IDs a thread takes from the global counter at a time.
const BLOCK: u32 = 256;

static NEXT_BLOCK: AtomicU32 = AtomicU32::new(0);

/// The correlation ID of a new traced call of `group` on this thread.
#[inline]
pub(crate) fn for_call(group: ApiGroup, state: &ThreadState) -> u32 {
    match (group.domain(), state.runtime_correlation.get()) {
        (Domain::DriverApi, outer) if outer != 0 => outer,
        _ => next(state),
    }
}

/// Marks the runtime call with correlation ID `id` as running on this thread until dropped.
pub(crate) struct RuntimeCallScope<'a> {
    state: &'a ThreadState,
    previous: u32,
}

impl<'a> RuntimeCallScope<'a> {
    /// Enters a runtime call of `group` (no effect for driver groups).
    pub(crate) fn enter(group: ApiGroup, id: u32, state: &'a ThreadState) -> Self {
        let previous = state.runtime_correlation.get();
        if group.domain() == Domain::RuntimeApi {
            state.runtime_correlation.set(id);
        }
        RuntimeCallScope { state, previous }
    }
}

impl Drop for RuntimeCallScope<'_> {
    fn drop(&mut self) {
        self.state.runtime_correlation.set(self.previous);
    }
}

/// The next correlation ID of this thread.
#[inline]
pub(crate) fn next(state: &ThreadState) -> u32 {
    let id = state.correlation_next.get();
    if id != state.correlation_end.get() {
        state.correlation_next.set(id.wrapping_add(1));
        return id;
    }
    refill(state)
}

#[cold]
fn refill(state: &ThreadState) -> u32 {
    let start = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
    // The block that starts at 0 (first, and again after wrapping) skips ID 0.
    let first = start.max(1);
    state.correlation_next.set(first + 1);
    state.correlation_end.set(start.wrapping_add(BLOCK));
    first
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use crate::thread;

    #[test]
    fn ids_are_unique_across_threads_and_never_zero() {
        let per_thread = 3 * super::BLOCK as usize + 7;
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    thread::with(|s| (0..per_thread).map(|_| super::next(s)).collect::<Vec<_>>())
                        .unwrap()
                })
            })
            .collect();
        let mut all = HashSet::new();
        for h in handles {
            for id in h.join().unwrap() {
                assert_ne!(id, 0);
                assert!(all.insert(id), "duplicate correlation id {id}");
            }
        }
        assert_eq!(all.len(), 4 * per_thread);
    }
}
