//! Per-thread state of libpti.
//!
//! Each thread that reaches the slow path of a traced call owns a [`ThreadRecord`], a
//! cache-padded word that says which subscriber callbacks it is running right now. Unsubscribe
//! reads every record to wait until a removed subscriber is no longer running anywhere. Records
//! live in a global append-only list and are never freed; a record released by an exiting thread
//! is reused by the next new one, so the list is as long as the peak number of threads.
//!
//! The rest of the state ([`ThreadState`]) is private to the thread: re-entrancy flags and the
//! current block of correlation IDs. It lives in a thread-local and is reached with `try_with`,
//! so a traced call made while the thread's locals are being destroyed passes through untraced
//! instead of failing.

use core::cell::{Cell, RefCell};
use core::ffi::CStr;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

use crossbeam_utils::CachePadded;

use crate::lent::ThreadBuffer;
use crate::recent::Recent;
use crate::result::ResultCode;
use crate::sycl_tag::SyclTag;

/// Critical events a thread keeps for after its callbacks returned, at most.
const MAX_DEFERRED_CRITICAL: usize = 64;

/// What one thread publishes for other threads: the subscriber slots whose callbacks it is
/// running (read by unsubscribe), and its record buffer (taken by flushes).
pub(crate) struct ThreadRecord {
    /// Bit k set: this thread is inside a callback of the subscriber in slot k (or about to
    /// check whether it may call it). Written only by the owning thread.
    in_flight: AtomicU32,
    /// The thread's view-record buffer.
    pub(crate) buffer: ThreadBuffer,
    /// Owned by a live thread.
    in_use: AtomicBool,
    /// Next record of the global list; set before the record is published, never changed.
    next: *const CachePadded<ThreadRecord>,
}

// SAFETY: `next` is written once before the record is published (with Release, read with
// Acquire) and never again; every other field is atomic.
unsafe impl Sync for ThreadRecord {}
// SAFETY: as above; a record is not tied to the thread that allocated it.
unsafe impl Send for ThreadRecord {}

static RECORDS: AtomicPtr<CachePadded<ThreadRecord>> = AtomicPtr::new(ptr::null_mut());

impl ThreadRecord {
    /// Marks slot `k` in flight. Returns false if it already was (a nested delivery to the same
    /// subscriber on this thread), in which case the outer delivery clears it, not this one.
    #[inline(always)]
    pub(crate) fn announce(&self, k: usize) -> bool {
        let bits = self.in_flight.load(Ordering::Relaxed);
        let bit = 1u32 << k;
        if bits & bit != 0 {
            return false;
        }
        self.in_flight.store(bits | bit, Ordering::Relaxed);
        true
    }

    /// Clears slot `k`. Release: the callback's effects happen before a waiting writer proceeds.
    #[inline(always)]
    pub(crate) fn retract(&self, k: usize) {
        let bits = self.in_flight.load(Ordering::Relaxed);
        self.in_flight.store(bits & !(1u32 << k), Ordering::Release);
    }

    /// Whether this thread is running (or about to run) a callback of slot `k`.
    pub(crate) fn is_in_flight(&self, k: usize) -> bool {
        self.in_flight.load(Ordering::Acquire) & (1u32 << k) != 0
    }
}

/// Visits every record ever created, in use or not.
pub(crate) fn for_each_record(mut f: impl FnMut(&'static ThreadRecord)) {
    let mut p = RECORDS.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: records are leaked, so every pointer in the list stays valid forever, and
        // `next` was written before the record was published with Release.
        let record: &'static ThreadRecord = unsafe { &*p };
        f(record);
        p = record.next as *mut _;
    }
}

/// Takes a free record, or allocates and publishes a new one.
#[cold]
fn acquire_record() -> &'static ThreadRecord {
    let mut found = None;
    for_each_record(|r| {
        if found.is_none()
            && r.in_use
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            found = Some(r);
        }
    });
    if let Some(r) = found {
        return r;
    }
    let record: &'static mut CachePadded<ThreadRecord> =
        Box::leak(Box::new(CachePadded::new(ThreadRecord {
            in_flight: AtomicU32::new(0),
            buffer: ThreadBuffer::new(),
            in_use: AtomicBool::new(true),
            next: ptr::null(),
        })));
    let mut head = RECORDS.load(Ordering::Relaxed);
    loop {
        record.next = head;
        match RECORDS.compare_exchange_weak(head, record, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return record,
            Err(actual) => head = actual,
        }
    }
}

/// The state a thread keeps for itself.
pub(crate) struct ThreadState {
    record: Cell<Option<&'static ThreadRecord>>,
    /// A subscriber callback is running on this thread: traced calls it makes pass through.
    pub(crate) in_callback: Cell<bool>,
    /// A critical event is being delivered on this thread: further ones are counted only.
    pub(crate) in_critical: Cell<bool>,
    /// Critical events raised while a callback ran here, to deliver once it returned.
    deferred_critical: RefCell<Vec<(ResultCode, String)>>,
    has_deferred_critical: Cell<bool>,
    /// A run of record drops is under way (its critical event was raised).
    pub(crate) dropping_records: Cell<bool>,
    /// External-correlation stacks, one per pushable kind, and how many IDs they hold.
    pub(crate) external: RefCell<[Vec<u64>; 5]>,
    pub(crate) external_count: Cell<usize>,
    /// The current overhead-accounting window.
    pub(crate) overhead: Cell<OverheadWindow>,
    /// The OS thread ID, once asked for (0: not yet).
    tid: Cell<u32>,
    /// Correlation ID of the traced runtime (SYCL) call running on this thread, or 0: driver
    /// calls made inside it carry it too.
    pub(crate) runtime_correlation: Cell<u32>,
    /// The runtime (SYCL) task whose commands this thread submits now (see `runtime_task`).
    pub(crate) runtime_task: Cell<Option<SyclTag>>,
    /// Next correlation ID of this thread's block, and the end of the block.
    pub(crate) correlation_next: Cell<u32>,
    pub(crate) correlation_end: Cell<u32>,
    /// The kernels this thread launched last, by (generation, handle), with their names (the
    /// OpenCL backend's `kernels` keeps them). Here rather than in a thread-local of its own:
    /// a launch then finds its thread's memory once (each thread-local of a shared library is
    /// a call to `__tls_get_addr`, about 11 instructions a launch on PoCL; issue 39).
    pub(crate) kernel_names: Recent<(u64, usize), &'static CStr, KERNEL_NAMES>,
}

/// Kernels a thread remembers the names of.
const KERNEL_NAMES: usize = 4;

impl ThreadState {
    const fn new() -> Self {
        ThreadState {
            record: Cell::new(None),
            in_callback: Cell::new(false),
            in_critical: Cell::new(false),
            deferred_critical: RefCell::new(Vec::new()),
            has_deferred_critical: Cell::new(false),
            dropping_records: Cell::new(false),
            external: RefCell::new([const { Vec::new() }; 5]),
            external_count: Cell::new(0),
            overhead: Cell::new(OverheadWindow {
                start: 0,
                count: 0,
                total_ns: 0,
            }),
            tid: Cell::new(0),
            runtime_correlation: Cell::new(0),
            runtime_task: Cell::new(None),
            correlation_next: Cell::new(0),
            correlation_end: Cell::new(0),
            kernel_names: Cell::new([None; KERNEL_NAMES]),
        }
    }

    /// Keeps a critical event for delivery after the running callback; beyond
    /// [`MAX_DEFERRED_CRITICAL`] events it is only counted (by the raiser).
    pub(crate) fn defer_critical(&self, code: ResultCode, message: String) {
        // Busy only if raised while the queue is being taken: then it is counted only.
        let Ok(mut queue) = self.deferred_critical.try_borrow_mut() else {
            return;
        };
        if queue.len() < MAX_DEFERRED_CRITICAL {
            queue.push((code, message));
            self.has_deferred_critical.set(true);
        }
    }

    /// Whether critical events wait for delivery.
    #[inline(always)]
    pub(crate) fn has_deferred_critical(&self) -> bool {
        self.has_deferred_critical.get()
    }

    /// Takes the critical events waiting for delivery.
    pub(crate) fn take_deferred_critical(&self) -> Vec<(ResultCode, String)> {
        self.has_deferred_critical.set(false);
        self.deferred_critical
            .try_borrow_mut()
            .map(|mut q| core::mem::take(&mut *q))
            .unwrap_or_default()
    }

    /// The OS thread ID (`gettid`), cached.
    #[inline]
    pub(crate) fn thread_id(&self) -> u32 {
        match self.tid.get() {
            0 => {
                // SAFETY: gettid takes no arguments and cannot fail.
                let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
                self.tid.set(tid);
                tid
            }
            tid => tid,
        }
    }

    /// This thread's record, acquired on first use.
    #[inline]
    pub(crate) fn record(&self) -> &'static ThreadRecord {
        match self.record.get() {
            Some(r) => r,
            None => {
                let r = acquire_record();
                self.record.set(Some(r));
                r
            }
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        if let Some(r) = self.record.get() {
            r.in_flight.store(0, Ordering::Release);
            r.in_use.store(false, Ordering::Release);
        }
    }
}

thread_local! {
    static STATE: ThreadState = const { ThreadState::new() };
}

/// Overhead accounted on a thread since `start`: `count` slow paths, `total_ns` of libpti's time.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OverheadWindow {
    pub(crate) start: u64,
    pub(crate) count: u64,
    pub(crate) total_ns: u64,
}

static PROCESS_ID: AtomicU32 = AtomicU32::new(0);

/// The process ID, cached (refreshed in a forked child).
#[inline]
pub(crate) fn process_id() -> u32 {
    match PROCESS_ID.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: getpid cannot fail.
            let pid = unsafe { libc::getpid() } as u32;
            PROCESS_ID.store(pid, Ordering::Relaxed);
            pid
        }
        pid => pid,
    }
}

/// In the child of `fork()`: forgets the other threads and refreshes the cached IDs.
pub(crate) fn fork_child() {
    PROCESS_ID.store(0, Ordering::Relaxed);
    with(|s| s.tid.set(0));
    forget_other_threads();
}

/// In the child of `fork()`: only the forking thread exists, so every other thread's record is
/// released and cleared (an announcement of a thread that is gone would block unsubscribe).
fn forget_other_threads() {
    let mine = with(|s| s.record.get())
        .flatten()
        .map(|r| r as *const ThreadRecord);
    for_each_record(|r| {
        if Some(r as *const ThreadRecord) != mine {
            r.in_flight.store(0, Ordering::Relaxed);
            r.in_use.store(false, Ordering::Release);
        }
    });
}

/// Runs `f` with this thread's state; `None` once the thread's locals are being destroyed.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> Option<R> {
    STATE.try_with(f).ok()
}

/// A state for threads whose own is gone: records completed there (a tool's flush from an
/// `atexit` handler runs after the main thread's locals were destroyed) are written into its
/// buffer, which flushes deliver like any exited thread's.
static ORPHAN: crate::sync::writer_lock::WriterLock<Option<ThreadState>> =
    crate::sync::writer_lock::WriterLock::new(None);

/// `f` with `state`, the calling thread's state its caller looked up already (once for many
/// records); without it (the thread's own is gone), as [`with_any`].
#[inline]
pub(crate) fn with_or_any<R>(
    state: Option<&ThreadState>,
    f: impl FnOnce(&ThreadState) -> R,
) -> Option<R> {
    match state {
        Some(state) => Some(f(state)),
        None => with_any(f),
    }
}

/// As [`with`], falling back on the state of threads whose own is gone. `None` only if that
/// state stays busy for a millisecond (a record written from tool code that runs inside it
/// would otherwise wait for itself).
pub(crate) fn with_any<R>(f: impl FnOnce(&ThreadState) -> R) -> Option<R> {
    let mut f = Some(f);
    if let Ok(Some(r)) = STATE.try_with(|s| f.take().map(|f| f(s))) {
        return Some(r);
    }
    let f = f?;
    for _ in 0..1000 {
        if let Some(mut orphan) = ORPHAN.try_lock() {
            return Some(f(orphan.get_or_insert_with(ThreadState::new)));
        }
        std::thread::sleep(std::time::Duration::from_micros(1));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_count() -> usize {
        let mut n = 0;
        for_each_record(|_| n += 1);
        n
    }

    #[test]
    fn exited_threads_give_their_record_back() {
        let before = record_count();
        for _ in 0..200 {
            std::thread::spawn(|| with(|s| s.record().is_in_flight(0)).unwrap())
                .join()
                .unwrap();
        }
        // Without reuse, 200 threads would add 200 records; with reuse, the list grows only by
        // the threads that other tests run at the same time.
        let grown = record_count() - before;
        assert!(
            grown < 64,
            "records were not reused: {grown} new records for 200 threads"
        );
    }

    #[test]
    fn announce_nests_and_retract_clears() {
        with(|s| {
            let r = s.record();
            assert!(r.announce(5));
            assert!(
                !r.announce(5),
                "nested announce of the same slot must not own the bit"
            );
            assert!(r.is_in_flight(5));
            r.retract(5);
            assert!(!r.is_in_flight(5));
        })
        .unwrap();
    }
}
