//! Per-thread stacks of things that open and close on one thread, matched by a key: calls between
//! their begin and end notifications, appends between prologue and epilogue, tasks between their
//! begin and end. Every such stack in libpti is a [`ThreadStack`] in a `thread_local!`, reached
//! through [`LocalStack`], so they all behave alike where it matters:
//!
//! - they never panic: a stack that is busy (a closure given to [`LocalStack::with_top`] that
//!   reaches the same stack again) or gone (the thread's locals are being destroyed) answers as if
//!   it were empty, and a push to it is refused (`false`);
//! - closing is explicit: [`LocalStack::take`] removes one entry and leaves those above it (they
//!   may still close), [`LocalStack::close`] also drops the entries opened after it and never
//!   closed (a runtime that skipped their end).
//!
//! Touches nothing but the thread's own stack.

use core::cell::RefCell;
use std::thread::LocalKey;

/// A stack of `(key, value)` entries, innermost last. Put it in a `thread_local!` and use it
/// through [`LocalStack`].
#[derive(Debug)]
pub(crate) struct ThreadStack<K, V>(RefCell<Vec<(K, V)>>);

impl<K, V> ThreadStack<K, V> {
    /// An empty stack (usable in a `const` thread-local initialiser).
    pub(crate) const fn new() -> Self {
        ThreadStack(RefCell::new(Vec::new()))
    }
}

/// The operations of a thread-local [`ThreadStack`].
pub(crate) trait LocalStack<K, V> {
    /// Pushes `value` under `key`; `false` if the stack cannot be had (see the module docs).
    fn push(&'static self, key: K, value: V) -> bool;
    /// Removes the innermost entry with `key` and returns its value; entries above it stay.
    fn take(&'static self, key: K) -> Option<V>;
    /// Removes the innermost entry with `key` and every entry above it; returns its value and how
    /// many entries above it were dropped.
    fn close(&'static self, key: K) -> Option<(V, usize)>;
    /// Runs `f` on the innermost entry's value, if there is one.
    fn with_top<R>(&'static self, f: impl FnOnce(&mut V) -> R) -> Option<R>;
    /// Runs `f` on the value of the innermost entry with `key`, if there is one.
    fn with_key<R>(&'static self, key: K, f: impl FnOnce(&mut V) -> R) -> Option<R>;
    /// Number of entries (0 when the stack cannot be had).
    fn depth(&'static self) -> usize;
}

/// Runs `f` on the entries of the thread's `stack`; `None` when the stack cannot be had (see the
/// module docs) or `f` finds nothing.
fn with_entries<K: 'static, V: 'static, R>(
    stack: &'static LocalKey<ThreadStack<K, V>>,
    f: impl FnOnce(&mut Vec<(K, V)>) -> Option<R>,
) -> Option<R> {
    stack
        .try_with(|s| f(&mut *s.0.try_borrow_mut().ok()?))
        .ok()
        .flatten()
}

/// The index of the innermost entry with `key`.
fn innermost<K: PartialEq, V>(entries: &[(K, V)], key: K) -> Option<usize> {
    entries.iter().rposition(|(k, _)| *k == key)
}

impl<K: Copy + PartialEq + 'static, V: 'static> LocalStack<K, V> for LocalKey<ThreadStack<K, V>> {
    fn push(&'static self, key: K, value: V) -> bool {
        with_entries(self, |v| {
            v.push((key, value));
            Some(())
        })
        .is_some()
    }

    fn take(&'static self, key: K) -> Option<V> {
        with_entries(self, |v| Some(v.remove(innermost(v, key)?).1))
    }

    fn close(&'static self, key: K) -> Option<(V, usize)> {
        with_entries(self, |v| {
            let i = innermost(v, key)?;
            let above = v.len() - i - 1;
            v.truncate(i + 1);
            v.pop().map(|(_, value)| (value, above))
        })
    }

    fn with_top<R>(&'static self, f: impl FnOnce(&mut V) -> R) -> Option<R> {
        with_entries(self, |v| v.last_mut().map(|(_, value)| f(value)))
    }

    fn with_key<R>(&'static self, key: K, f: impl FnOnce(&mut V) -> R) -> Option<R> {
        with_entries(self, |v| {
            let i = innermost(v, key)?;
            Some(f(&mut v[i].1))
        })
    }

    fn depth(&'static self) -> usize {
        self.try_with(|s| s.0.try_borrow().map_or(0, |v| v.len()))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static STACK: ThreadStack<u32, &'static str> = const { ThreadStack::new() };
    }

    #[test]
    fn take_leaves_the_entries_above_and_close_drops_them() {
        assert!(STACK.push(1, "a"));
        assert!(STACK.push(2, "b"));
        assert!(STACK.push(3, "c"));
        assert_eq!(STACK.take(2), Some("b"));
        assert_eq!(STACK.depth(), 2);
        assert!(STACK.push(4, "d"));
        assert_eq!(STACK.close(1), Some(("a", 2)));
        assert_eq!(STACK.depth(), 0);
        assert_eq!(STACK.take(1), None);
    }

    #[test]
    fn a_busy_stack_refuses_instead_of_panicking() {
        assert!(STACK.push(7, "x"));
        let inner = STACK.with_top(|_| (STACK.push(8, "y"), STACK.take(7), STACK.depth()));
        assert_eq!(inner, Some((false, None, 0)));
        assert_eq!(STACK.with_key(7, |v| *v), Some("x"));
        assert_eq!(STACK.close(7), Some(("x", 0)));
        assert_eq!(STACK.depth(), 0);
    }
}
