//! A thread's memory of its last few lookups: a small array per thread, newest first, for values
//! that are costly to find again (a runtime query, a formatted and interned name) and that a
//! program's loop asks for over and over with the same few keys.
//!
//! Touches nothing but the calling thread's own memory. During thread teardown, when the
//! thread's locals are gone, nothing is remembered and every lookup finds nothing.

use core::cell::Cell;
use std::thread::LocalKey;

/// The last `N` keys a thread looked up, with their values, newest first.
pub(crate) type Recent<K, V, const N: usize> = Cell<[Option<(K, V)>; N]>;

/// The value this thread remembers for `key`, if any.
pub(crate) fn recall<K: Copy + PartialEq, V: Copy, const N: usize>(
    memory: &'static LocalKey<Recent<K, V, N>>,
    key: K,
) -> Option<V> {
    memory.try_with(|cell| recall_in(cell, key)).ok().flatten()
}

/// The value `memory` (a thread's own, kept where the caller keeps it) remembers for `key`.
#[inline]
pub(crate) fn recall_in<K: Copy + PartialEq, V: Copy, const N: usize>(
    memory: &Recent<K, V, N>,
    key: K,
) -> Option<V> {
    // Entry by entry, newest first: a loop that asks for one key finds it in the first without
    // copying the others (copying the whole array out cost each kernel launch 16 instructions
    // more on PoCL; issue 39).
    let entries: &Cell<[Option<(K, V)>]> = memory;
    entries
        .as_slice_of_cells()
        .iter()
        .find_map(|entry| entry.get().and_then(|(k, v)| (k == key).then_some(v)))
}

/// Remembers `value` for `key` in this thread, forgetting the oldest entry.
pub(crate) fn remember<K: Copy, V: Copy, const N: usize>(
    memory: &'static LocalKey<Recent<K, V, N>>,
    key: K,
    value: V,
) {
    let _ = memory.try_with(|cell| remember_in(cell, key, value));
}

/// As [`remember`], in `memory` (a thread's own, kept where the caller keeps it).
pub(crate) fn remember_in<K: Copy, V: Copy, const N: usize>(
    memory: &Recent<K, V, N>,
    key: K,
    value: V,
) {
    let mut entries = memory.get();
    entries.rotate_right(1);
    entries[0] = Some((key, value));
    memory.set(entries);
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static MEMORY: Recent<u32, &'static str, 2> = const { Cell::new([None; 2]) };
    }

    #[test]
    fn the_newest_entries_are_remembered() {
        assert_eq!(recall(&MEMORY, 1), None);
        remember(&MEMORY, 1, "one");
        remember(&MEMORY, 2, "two");
        assert_eq!(
            (recall(&MEMORY, 1), recall(&MEMORY, 2)),
            (Some("one"), Some("two"))
        );
        remember(&MEMORY, 3, "three");
        assert_eq!(recall(&MEMORY, 1), None);
        assert_eq!(
            (recall(&MEMORY, 2), recall(&MEMORY, 3)),
            (Some("two"), Some("three"))
        );
    }
}
