//! Memory a tool lends to libpti for records ([`Buffer`]), handed back with the bytes written
//! ([`FilledBuffer`]), and the slot in which each thread keeps the buffer it fills
//! ([`ThreadBuffer`], held by the thread's `ThreadRecord`).
//!
//! Only the storage lives here, below `thread` and `view` in the engine's layers
//! (`tests/layering.rs`): how a thread fills its slot and how a flush takes it (the hand-off
//! protocol, the tool's callbacks, the counts of drops) is `view::buffer`'s.
//!
//! Touches nothing but the memory it is given.

use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU64, Ordering};

use pti_abi::pti_view_kind;

use crate::sync::handoff::HandOff;

/// Memory a tool lends to libpti for records.
#[derive(Debug)]
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a Buffer is exclusive access to memory the tool lent; it moves between threads (the one
// that fills it, the one that hands it back) but is used by one at a time.
unsafe impl Send for Buffer {}

impl Buffer {
    /// Lends `len` bytes at `ptr`; `None` if `ptr` is NULL.
    ///
    /// # Safety
    /// The memory must be valid for reads and writes of `len` bytes and untouched by anyone else
    /// until libpti hands it back through `view::BufferCallbacks::complete`.
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> Option<Self> {
        NonNull::new(ptr).map(|ptr| Buffer { ptr, len })
    }

    /// Lends a boxed slice (take it back with [`Buffer::into_boxed`]).
    pub fn from_boxed(memory: Box<[u8]>) -> Self {
        let len = memory.len();
        let ptr = NonNull::new(Box::into_raw(memory) as *mut u8).expect("a Box is never NULL");
        Buffer { ptr, len }
    }

    /// Takes back a buffer made by [`Buffer::from_boxed`].
    ///
    /// # Safety
    /// The buffer must come from [`Buffer::from_boxed`].
    pub unsafe fn into_boxed(self) -> Box<[u8]> {
        // SAFETY: per the contract, ptr and len are those of a leaked Box<[u8]>.
        unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) }
    }

    /// Start of the memory.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Size of the memory in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A buffer handed back: the memory and how many bytes of it hold records.
#[derive(Debug)]
pub struct FilledBuffer {
    pub(crate) buffer: Buffer,
    pub(crate) used: usize,
}

impl FilledBuffer {
    /// Bytes from the start of the buffer up to the end of the last record (the `valid_bytes`
    /// of `ptiViewGetNextRecord`).
    pub fn used(&self) -> usize {
        self.used
    }

    /// The memory, to free or lend again.
    pub fn into_buffer(self) -> Buffer {
        self.buffer
    }

    /// The memory without giving it up.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }
}

/// One thread's buffer, shared between the thread (the only writer) and flushers, and the
/// thread's count of records emitted per kind.
pub(crate) struct ThreadBuffer {
    pub(crate) lent: HandOff<Option<FilledBuffer>>,
    /// Records emitted on this thread, per kind. Written only by the thread that owns the record
    /// (a reused record keeps counting: the sum over records is what `view::emitted_count` reads).
    pub(crate) emitted: [AtomicU64; pti_view_kind::COUNT],
}

impl ThreadBuffer {
    pub(crate) fn new() -> Self {
        ThreadBuffer {
            lent: HandOff::new(None),
            emitted: [const { AtomicU64::new(0) }; pti_view_kind::COUNT],
        }
    }

    /// Counts one record of `kind` emitted on the owning thread.
    #[inline(always)]
    pub(crate) fn count_emitted(&self, kind: pti_view_kind) {
        // A load and a store instead of fetch_add: only the owning thread writes this counter
        // (the caller's contract, see `append`), so no increment can be lost, and readers only
        // need some recent value, which a relaxed store gives them.
        let counter = &self.emitted[kind.index()];
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Runs `f` on the lent buffer inside the writer's section.
    ///
    /// # Safety
    /// The caller runs on the thread that owns this buffer's record, and `f` runs no tool code.
    #[inline(always)]
    pub(crate) unsafe fn write<R>(&self, f: impl FnOnce(&mut Option<FilledBuffer>) -> R) -> R {
        // SAFETY: only the owning thread writes its record's buffer (contract), and `f` does
        // not re-enter (it runs no tool code).
        unsafe { self.lent.write(f) }
    }
}
