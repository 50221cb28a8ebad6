//! The interest table: one byte per (group, API ID) saying who wants to hear about that function.
//!
//! This is the dispatch fast path's only read. A wrapper loads its byte with one relaxed load;
//! zero means nobody listens and the call goes straight through. Each source of interest owns
//! one bit ([`CALLBACKS`] for the callback API; the view API adds its own) and sets or clears it
//! when its configuration changes, under its own writer lock and never on the call path.
//!
//! Relaxed is enough: a reader that sees a stale zero misses a call that raced with the enable;
//! a reader that sees a stale bit takes the slow path, where every subscriber's own state is
//! checked again before anything is delivered.

use core::sync::atomic::{AtomicU8, Ordering};

use crate::api::{ApiGroup, ApiId};
use crate::ids;

/// Some callback subscriber enabled this function.
pub(crate) const CALLBACKS: u8 = 1 << 0;
/// An API view records this function.
pub(crate) const API_RECORDS: u8 = 1 << 1;
/// The external-correlation view is enabled: calls are traced to tie pushed IDs to them.
pub(crate) const EXTERNAL: u8 = 1 << 2;
/// A device view is enabled and this function submits or waits for device work: calls are
/// traced so that the device records carry their correlation IDs.
pub(crate) const DEVICE: u8 = 1 << 3;
/// A device view is enabled and this function submits device work that has no record kind: its
/// successful calls are counted (`view::loss`).
pub(crate) const UNRECORDED: u8 = 1 << 4;

/// Position of each group's first cell; a group owns `max_id + 1` cells (ID 0 included, unused).
const OFFSETS: [usize; 4] = {
    let lz = ids::max_id(ApiGroup::LevelZero) as usize + 1;
    let cl = ids::max_id(ApiGroup::OpenCl) as usize + 1;
    let sy = ids::max_id(ApiGroup::Sycl) as usize + 1;
    [0, lz, lz + cl, lz + cl + sy]
};

/// Number of cells over all groups.
pub(crate) const CELLS: usize = OFFSETS[3];

static TABLE: [AtomicU8; CELLS] = [const { AtomicU8::new(0) }; CELLS];

/// The flat index of `(group, id)`, shared with the per-subscriber enable sets.
#[inline(always)]
pub(crate) const fn cell(group: ApiGroup, id: ApiId) -> Option<usize> {
    if id > ids::max_id(group) {
        return None;
    }
    Some(OFFSETS[group.index()] + id as usize)
}

/// Who listens to `(group, id)`: 0 for nobody. One relaxed load.
#[inline(always)]
pub(crate) fn load(group: ApiGroup, id: ApiId) -> u8 {
    match cell(group, id) {
        Some(c) => TABLE[c].load(Ordering::Relaxed),
        None => 0,
    }
}

/// Sets or clears `bit` of cell `c`, leaving the other sources' bits alone.
pub(crate) fn set(c: usize, bit: u8, on: bool) {
    if on {
        TABLE[c].fetch_or(bit, Ordering::Relaxed);
    } else {
        TABLE[c].fetch_and(!bit, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_of_groups_do_not_overlap() {
        let mut seen = vec![false; CELLS];
        for g in ApiGroup::ALL {
            for id in 0..=ids::max_id(g) {
                let c = cell(g, id).unwrap();
                assert!(!seen[c]);
                seen[c] = true;
            }
            assert_eq!(cell(g, ids::max_id(g) + 1), None);
        }
        assert!(seen.iter().all(|s| *s));
    }
}
