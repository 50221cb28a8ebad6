//! Record buffers: lent by the tool, filled per thread, handed back full or at a flush.
//!
//! Each thread writes into the buffer held by its [`ThreadRecord`](crate::thread::ThreadRecord)
//! ([`ThreadBuffer`]); no other thread writes there, so appending needs no lock. A flush must
//! nevertheless take buffers from threads that may be writing at that moment, including threads
//! that wait in a driver call for seconds. Writer and flusher exclude each other with two flags
//! and the asymmetric barrier of [`crate::sync::barrier`] (the same Dekker pattern as
//! unsubscribe), implemented in [`crate::sync::handoff`] and model-checked with loom
//! (`tests/loom_handoff.rs`):
//!
//! - writer: `writing = true`; `light()`; if `flushing`, back off and wait; else append the
//!   record and bump `used`, then `writing = false` (Release);
//! - flusher: `flushing = true` on every thread; `heavy()`; for each thread, wait until
//!   `writing` is false (Acquire), take its buffer, `flushing = false`.
//!
//! Either the writer sees `flushing` or the flusher sees `writing`. A writer's exclusive section
//! only builds a record from values and writes it; everything that runs tool code (`request`, `complete`) and every
//! critical event happens outside it and outside any lock. A buffer of a thread that exited stays
//! in its record until the next flush, or is reused by a new thread; the process-exit hook hands
//! back every buffer, empty ones included.
//!
//! When no buffer can be had (the tool returns none, or one too small for the record), or after
//! the process-exit hook ran, the record is dropped, counted per kind ([`dropped_count`]), and a
//! critical event is raised once per run of drops on a thread.
//!
//! Every record is also counted where it is emitted ([`emitted_count`]): before its append, in
//! per-thread counters that only the owning thread writes (a load and a store, no atomic
//! read-modify-write on the record path), so that once the writers are quiet and a flush
//! returned, emitted = delivered + dropped for every kind, also for kinds enabled and disabled
//! while calls ran.
//!
//! A buffer taken out of a thread's slot (full, or by a flush) is *in transit* until the tool's
//! `complete` returned; [`flush`] waits for every buffer in transit, so that when it returns, the
//! tool has every finished record, also those another thread was handing back meanwhile.

use core::mem::size_of;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use super::abi::{pti_view_kind, pti_view_loss_reason};
use super::records::{Records, first_offset};
use crate::callback::critical;
use crate::lent::{Buffer, FilledBuffer, ThreadBuffer};
use crate::result::{Error, ResultCode};
use crate::sync::backoff::Backoff;
use crate::sync::handoff;
use crate::sync::writer_lock::WriterLock;
use crate::thread::{self, ThreadRecord, ThreadState};

impl FilledBuffer {
    /// The records in the buffer.
    pub fn records(&self) -> Records<'_> {
        // SAFETY: libpti wrote whole records up to `used` into memory it was lent exclusively and
        // hands over now; nothing writes it while this FilledBuffer is borrowed.
        unsafe { Records::new(self.buffer.as_ptr(), self.used) }
    }
}

/// Where buffers come from and go back to: the tool's `buffer_requested` and `buffer_completed`.
///
/// Both run on libpti's threads: `request` on a thread that needs room for a record, `complete`
/// on the thread that filled the buffer or on one that flushes. Traced calls they make are not
/// traced. A panic in either is caught and reported with the critical event
/// PTI_ERROR_CALLBACK_PANICKED: a panicking `request` counts as `None`, and a panicking
/// `complete` keeps the buffer it was given (its records count as delivered).
pub trait BufferCallbacks: Send + Sync {
    /// A buffer for records, or `None` (the records that needed it are dropped and counted).
    fn request(&self) -> Option<Buffer>;
    /// Takes back a buffer, with the records libpti wrote into it.
    fn complete(&self, filled: FilledBuffer);
}

/// The tool's callbacks: a leaked `Box<Arc<..>>`; replaced ones are leaked too (a thread may be
/// calling them, and tools set them once).
static CALLBACKS: AtomicPtr<Arc<dyn BufferCallbacks>> = AtomicPtr::new(ptr::null_mut());

fn callbacks() -> Option<&'static Arc<dyn BufferCallbacks>> {
    let p = CALLBACKS.load(Ordering::Acquire);
    // SAFETY: non-null values come from Box::into_raw and are never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Whether the tool set its buffer callbacks.
pub(crate) fn callbacks_set() -> bool {
    !CALLBACKS.load(Ordering::Relaxed).is_null()
}

/// Sets the tool's buffer callbacks, with libpti's habits: a buffer is asked for when a record
/// needs one, and a flush hands back the buffers that hold records.
pub(super) fn set_callbacks(callbacks: Arc<dyn BufferCallbacks>) {
    EMPTY_AT_FLUSH.store(false, Ordering::Relaxed);
    CALLBACKS.store(Box::into_raw(Box::new(callbacks)), Ordering::Release);
}

/// Whether a flush hands back every thread's buffer, empty ones too (Intel PTI's habit).
static EMPTY_AT_FLUSH: AtomicBool = AtomicBool::new(false);

/// Intel PTI's buffer habits, for the callbacks just set (measured on its 1.2.0 library,
/// `tests/beside_intel_pti.rs`): a buffer is asked for at once for the calling thread, and a flush
/// hands back every thread's buffer, empty ones too (valid size 0); a thread asks again when it
/// next writes a record. Process-wide until callbacks are set again.
pub(super) fn lend_as_intel() {
    EMPTY_AT_FLUSH.store(true, Ordering::Relaxed);
    if EXITED.load(Ordering::Relaxed) {
        return;
    }
    // Any size: a buffer too small for the first record is handed back unused then.
    let Ok(fresh) = request(0) else {
        return;
    };
    let mut fresh = Some(fresh);
    // SAFETY: the section writes the calling thread's own buffer and runs no tool code.
    thread::with(|s| unsafe {
        s.record().buffer.write(|slot| {
            if slot.is_none() {
                *slot = fresh.take();
            }
        })
    });
    // The thread had a buffer already, or is being torn down: give this one back.
    if let Some(unused) = fresh {
        hand_back_unused(unused.buffer);
    }
}

/// Records dropped per kind, indexed by the kind's value.
static DROPPED: [AtomicU64; pti_view_kind::COUNT] =
    [const { AtomicU64::new(0) }; pti_view_kind::COUNT];

/// Records of `kind` dropped since the process started: because no buffer could be had, or
/// because the data of a record could not be collected (a device command whose queue has no
/// profiling, or whose timestamps the runtime would not give).
pub fn dropped_count(kind: pti_view_kind) -> u64 {
    DROPPED[kind.index()].load(Ordering::Relaxed)
}

/// Records of a kind lost before they could be written (their data could not be collected),
/// indexed by the kind's value: emitted and dropped at once, on no thread's account.
static LOST_UNWRITTEN: [AtomicU64; pti_view_kind::COUNT] =
    [const { AtomicU64::new(0) }; pti_view_kind::COUNT];

/// Counts one record of `kind` whose data could not be collected (emitted and dropped), and
/// returns the new total of dropped records of the kind. The caller raises the critical event
/// that says why. Never on the record path: read-modify-writes are fine here.
pub(crate) fn count_lost(kind: pti_view_kind) -> u64 {
    count_lost_because(
        kind,
        pti_view_loss_reason::PTI_VIEW_LOSS_DEVICE_DATA_UNAVAILABLE,
    )
}

/// [`count_lost`] for a record lost for `reason`.
pub(crate) fn count_lost_because(kind: pti_view_kind, reason: pti_view_loss_reason) -> u64 {
    LOST_UNWRITTEN[kind.index()].fetch_add(1, Ordering::Relaxed);
    super::loss::note(kind, reason, None);
    DROPPED[kind.index()].fetch_add(1, Ordering::Relaxed) + 1
}

/// Records of `kind` libpti emitted since the process started (or since fork(), in a child):
/// written to a buffer, or dropped. Once the threads that write records are quiet and a flush
/// returned, emitted = delivered to the tool's `complete` + [`dropped_count`]. While records are
/// being written the sum over threads is a snapshot that may miss the latest few.
pub fn emitted_count(kind: pti_view_kind) -> u64 {
    let mut total = LOST_UNWRITTEN[kind.index()].load(Ordering::Relaxed);
    thread::for_each_record(|r| total += r.buffer.emitted[kind.index()].load(Ordering::Relaxed));
    total
}

/// Runs tool code (buffer callbacks) with the thread marked as inside a callback, so that traced
/// calls it makes pass through untraced and critical events it causes are deferred. A panic of
/// the tool (`what`: which callback) is caught, reported with the critical event
/// PTI_ERROR_CALLBACK_PANICKED, and gives `fallback`: it never unwinds into the traced program.
fn as_tool_code<R>(what: &str, fallback: R, f: impl FnOnce() -> R) -> R {
    let previous = thread::with(|s| s.in_callback.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        critical::raise(
            ResultCode::ErrorCallbackPanicked,
            format_args!("the tool's {what} panicked; the panic was caught"),
        );
        fallback
    });
    if let Some(was) = previous {
        thread::with(|s| {
            s.in_callback.set(was);
            if !was && s.has_deferred_critical() {
                critical::deliver_deferred(s);
            }
        });
    }
    result
}

/// Buffers taken out of a thread's slot whose `complete` has not returned yet.
static IN_TRANSIT: AtomicUsize = AtomicUsize::new(0);

/// Set by the process-exit hook: records that need a new buffer from then on are dropped and
/// counted (the tool may be torn down).
static EXITED: AtomicBool = AtomicBool::new(false);

/// Hands back a buffer taken out of a thread's slot (counted in transit until then).
fn hand_back(filled: FilledBuffer) {
    if let Some(cb) = callbacks() {
        as_tool_code("buffer completed callback", (), || cb.complete(filled));
    }
    IN_TRANSIT.fetch_sub(1, Ordering::Release);
}

/// Hands back a buffer that never held records (too small, or not needed after all).
fn hand_back_unused(buffer: Buffer) {
    if let Some(cb) = callbacks() {
        as_tool_code("buffer completed callback", (), || {
            cb.complete(FilledBuffer { buffer, used: 0 })
        });
    }
}

/// Waits until no buffer is in transit, for at most `limit` (`None`: no limit).
fn wait_for_transit(limit: Option<std::time::Duration>) {
    let start = std::time::Instant::now();
    let mut backoff = Backoff::default();
    while IN_TRANSIT.load(Ordering::Acquire) != 0 && limit.is_none_or(|l| start.elapsed() < l) {
        backoff.snooze();
    }
}

/// Asks the tool for a buffer with room for a first record of `size` bytes.
fn request(size: usize) -> Result<FilledBuffer, String> {
    let cb = callbacks().ok_or_else(|| "no buffer callbacks are set".to_string())?;
    let Some(buffer) = as_tool_code("buffer requested callback", None, || cb.request()) else {
        return Err("buffer_requested provided no buffer".into());
    };
    let start = first_offset(buffer.as_ptr() as usize);
    if buffer.len() < start + size {
        let len = buffer.len();
        hand_back_unused(buffer);
        return Err(format!(
            "buffer_requested provided {len} bytes, fewer than the {} a record needs",
            start + size
        ));
    }
    Ok(FilledBuffer {
        buffer,
        used: start,
    })
}

fn record_dropped(kind: pti_view_kind, why: &str, state: &ThreadState) {
    let total = DROPPED[kind.index()].fetch_add(1, Ordering::Relaxed) + 1;
    let reason = if EXITED.load(Ordering::Relaxed) {
        pti_view_loss_reason::PTI_VIEW_LOSS_PROCESS_EXITING
    } else {
        pti_view_loss_reason::PTI_VIEW_LOSS_NO_BUFFER
    };
    super::loss::note(kind, reason, None);
    if !state.dropping_records.replace(true) {
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "{why}: a {kind:?} record was dropped ({total} of this kind so far); see ptiViewGetDroppedRecordCount"
            ),
        );
    }
}

/// What one attempt to append found.
enum Attempt {
    Appended,
    /// No room: the full buffer (taken out, to hand back), if there was one.
    NoRoom(Option<FilledBuffer>),
}

#[inline(always)]
fn try_append<R: Copy>(tb: &ThreadBuffer, record: &impl Fn() -> R) -> Attempt {
    // SAFETY: `tb` is the calling thread's own buffer (`append_with`), and the section only
    // builds a record from values (`record` runs no tool code and takes no lock).
    unsafe { tb.write(|lent| append_in_section(lent, record)) }
}

#[inline(always)]
fn append_in_section<R: Copy>(lent: &mut Option<FilledBuffer>, record: &impl Fn() -> R) -> Attempt {
    match lent {
        Some(f) if f.buffer.len() - f.used >= size_of::<R>() => {
            // SAFETY: [used, used + size) lies inside the lent memory (checked), `used` is
            // 8-aligned relative to an 8-aligned first record (records are multiples of 8 bytes,
            // asserted in `append_with`), and the memory is ours until handed back.
            unsafe { ptr::write(f.buffer.as_ptr().add(f.used) as *mut R, record()) };
            f.used += size_of::<R>();
            Attempt::Appended
        }
        _ => {
            let full = lent.take();
            if full.is_some() {
                IN_TRANSIT.fetch_add(1, Ordering::Relaxed);
            }
            Attempt::NoRoom(full)
        }
    }
}

/// Appends `record` (of view kind `kind`) to this thread's buffer, or drops and counts it.
#[inline]
pub(crate) fn append<R: Copy>(state: &ThreadState, kind: pti_view_kind, record: R) {
    append_with(state, kind, || record);
}

/// As [`append`], with the record built by `record` where it is written: a large record (a
/// kernel's, 200 bytes and more) is then built in the buffer rather than on the stack and copied
/// there. `record` builds from values only (it runs inside the buffer's write section, and again
/// if the first buffer had no room).
#[inline]
pub(crate) fn append_with<R: Copy>(
    state: &ThreadState,
    kind: pti_view_kind,
    record: impl Fn() -> R,
) {
    const { assert!(size_of::<R>().is_multiple_of(8)) };
    let tb = &state.record().buffer;
    tb.count_emitted(kind);
    loop {
        match try_append(tb, &record) {
            Attempt::Appended => return,
            Attempt::NoRoom(full) => {
                if !refill(tb, full, kind, size_of::<R>(), state) {
                    return;
                }
            }
        }
    }
}

/// Hands back the full buffer and installs a fresh one; `false` if none could be had (the
/// record was dropped, counted and reported).
#[cold]
fn refill(
    tb: &ThreadBuffer,
    full: Option<FilledBuffer>,
    kind: pti_view_kind,
    size: usize,
    state: &ThreadState,
) -> bool {
    if let Some(full) = full {
        hand_back(full);
    }
    if EXITED.load(Ordering::Relaxed) {
        record_dropped(kind, "the process is exiting", state);
        return false;
    }
    let fresh = match request(size) {
        Ok(fresh) => fresh,
        Err(why) => {
            record_dropped(kind, &why, state);
            return false;
        }
    };
    state.dropping_records.set(false);
    // Tool code run above (a `complete` that flushed, a deferred critical event) may have written
    // records and installed a buffer meanwhile: then keep that one, and give the fresh one back
    // unused, outside the section.
    // SAFETY: `tb` is the calling thread's own buffer (`append_with`), and the section runs no
    // tool code.
    let unused = unsafe {
        tb.write(|slot| match slot {
            Some(_) => Some(fresh),
            None => {
                *slot = Some(fresh);
                None
            }
        })
    };
    if let Some(unused) = unused {
        hand_back_unused(unused.buffer);
    }
    // The exit hook may have collected every buffer between the EXITED check above and the
    // install: then nobody would ever hand this one back, and its records would be lost without
    // a count. The hook sets EXITED before its process-wide barrier and collection, so if the
    // install came after the collection, this load sees it (the asymmetric Dekker pattern of
    // the module docs: the compiler fence is this side's half). Take the buffer back and drop
    // the record, counted.
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
    if EXITED.load(Ordering::Relaxed) {
        // SAFETY: as above: the calling thread's own buffer, and the section runs no tool code.
        let left = unsafe { tb.write(|slot| slot.take()) };
        if let Some(left) = left {
            if left.used == first_offset(left.buffer.as_ptr() as usize) {
                hand_back_unused(left.buffer);
            } else {
                IN_TRANSIT.fetch_add(1, Ordering::Relaxed);
                hand_back(left);
            }
        }
        record_dropped(kind, "the process is exiting", state);
        return false;
    }
    true
}

/// Serialises flushers; held only while buffers are collected, never while tool code runs.
static FLUSH_LOCK: WriterLock<()> = WriterLock::new(());

/// Takes the buffers of every thread: the non-empty ones, or all of them with `include_empty`.
fn collect(include_empty: bool) -> Result<Vec<FilledBuffer>, Error> {
    let _guard = FLUSH_LOCK.lock();
    let mut records: Vec<&'static ThreadRecord> = Vec::new();
    thread::for_each_record(|r| records.push(r));
    for r in &records {
        r.buffer.lent.announce_flush();
    }
    let exclusive = handoff::flush_barrier();
    let mut taken = Vec::new();
    for r in &records {
        let tb = &r.buffer;
        if exclusive {
            let is_empty = |f: &FilledBuffer| f.used == first_offset(f.buffer.as_ptr() as usize);
            // SAFETY: we announced the flush on every record, the barrier returned true, and
            // FLUSH_LOCK makes us the only flusher; the closure does not touch the slot again.
            let took = unsafe {
                tb.lent.take(|lent| {
                    if lent.as_ref().is_some_and(|f| include_empty || !is_empty(f)) {
                        lent.take()
                    } else {
                        None
                    }
                })
            };
            if let Some(filled) = took {
                taken.push(filled);
                IN_TRANSIT.fetch_add(1, Ordering::Relaxed);
            }
        }
        tb.lent.end_flush();
    }
    if !exclusive {
        return Err(Error::Internal(
            "no process-wide memory barrier could be issued; nothing was flushed",
        ));
    }
    Ok(taken)
}

/// Hands every finished record of every thread (exited ones included) to the tool's
/// `complete` before returning: the buffers it takes, and those other threads are handing back
/// meanwhile. Buffers without records stay with their threads (are handed back too after
/// [`lend_as_intel`]). Called from inside a callback, it
/// does not wait for other threads' hand-backs (their `complete` could be waiting for this one).
pub(super) fn flush() -> Result<(), Error> {
    let taken = collect(EMPTY_AT_FLUSH.load(Ordering::Relaxed))?;
    for filled in taken {
        hand_back(filled);
    }
    if !thread::with(|s| s.in_callback.get()).unwrap_or(true) {
        wait_for_transit(None);
    }
    Ok(())
}

/// At process exit (or unload), after the backends counted what they can no longer record (the
/// session's exit hook): every buffer goes back, empty ones too, so the tool can free it. Records
/// that need a buffer later are dropped and counted.
pub(crate) fn hand_back_at_exit() {
    EXITED.store(true, Ordering::Relaxed);
    if let Ok(taken) = collect(true) {
        taken.into_iter().for_each(hand_back);
    }
    // A thread may be blocked inside the tool's `complete`: do not hold the exit hostage.
    wait_for_transit(Some(std::time::Duration::from_secs(1)));
}

/// `fork()` hooks: the flush lock is taken before the fork and released in both processes.
pub(crate) fn fork_prepare() {
    FLUSH_LOCK.acquire_for_fork();
}

/// In the parent after `fork()`.
pub(crate) fn fork_parent() {
    // SAFETY: fork_prepare took the lock on this thread; no guard is held across fork().
    unsafe { FLUSH_LOCK.release_after_fork() };
}

/// In the child after `fork()`: the records in the buffers are the parent's (it delivers them),
/// so the child empties every buffer and keeps it for its own records; the flags of threads it
/// does not have are cleared, and the emission and drop counters start again.
pub(crate) fn fork_child() {
    thread::for_each_record(|r| {
        // SAFETY: in the child only this thread exists, and it is not inside a writer's section
        // (fork() is never called from one) nor a flush (fork_prepare took the flush lock).
        unsafe {
            r.buffer.lent.reset_after_fork(|lent| {
                if let Some(f) = lent {
                    f.used = first_offset(f.buffer.as_ptr() as usize);
                }
            })
        };
        for counter in &r.buffer.emitted {
            counter.store(0, Ordering::Relaxed);
        }
    });
    for counter in DROPPED.iter().chain(&LOST_UNWRITTEN) {
        counter.store(0, Ordering::Relaxed);
    }
    // Hand-backs under way in other threads will not finish here.
    IN_TRANSIT.store(0, Ordering::Relaxed);
    // SAFETY: as in fork_parent.
    unsafe { FLUSH_LOCK.release_after_fork() };
}
