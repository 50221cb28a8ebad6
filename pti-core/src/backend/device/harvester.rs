//! A thread of libpti's own that harvests completed commands (`PTI_HARVEST=thread`, see
//! `switches`), so that the runtime queries, event releases and record writing of a harvest after
//! a program's wait, or when a pending list's shard has grown, leave the program's thread (the
//! thread harvests every shard of the list). A flush still harvests on the flushing thread, and
//! waits for a harvest the thread has under way, so it delivers everything completed as before.
//!
//! The thread starts at the first request and only ever calls the runtime between a request and
//! the end of that harvest. It is stopped for good, and waited for, before the runtime can be
//! torn down: at loader shutdown (`clDeinitLayer`), and at process exit by a handler registered
//! when the thread starts, after the runtime was loaded (glibc runs exit handlers in reverse
//! order of registration, so this one runs before the destructors the runtime registered when it
//! loaded). After a `fork()` the child starts its own thread when it first needs one.
//!
//! Touches the pending lists (through [`Harvest`]), the thread's state, and the process's exit
//! handlers.

use core::sync::atomic::{AtomicBool, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::pending::{Ask, Pending, PendingCommand};
use super::switches;
use crate::sync::writer_lock::WriterLock;

/// A pending list the thread harvests.
pub(crate) trait Harvest: Sync {
    /// Harvests it as after a program's wait ([`Ask::UpToBusy`]).
    fn harvest_up_to_busy(&self);
    /// Set once the list is in [`LISTS`].
    fn registered(&self) -> &AtomicBool;
}

impl<C: PendingCommand> Harvest for Pending<C> {
    fn harvest_up_to_busy(&self) {
        self.harvest(Ask::UpToBusy);
    }

    fn registered(&self) -> &AtomicBool {
        self.harvester_knows()
    }
}

/// The lists the thread harvests when woken (one per backend that asked).
static LISTS: WriterLock<Vec<&'static dyn Harvest>> = WriterLock::new(Vec::new());
/// The running thread, and the process it runs in (a forked child has none).
static THREAD: WriterLock<Option<(Thread, u32)>> = WriterLock::new(None);
/// A harvest was asked for since the thread last looked.
static WANTED: AtomicBool = AtomicBool::new(false);
/// Set for good at loader shutdown or exit: no harvest starts on the thread any more.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// The thread is inside a harvest (it may be calling the runtime).
static BUSY: AtomicBool = AtomicBool::new(false);

/// How long [`stop`] waits for a harvest under way (one harvest of a pending list; a tool's
/// buffer callback that blocks longer is not waited for).
const STOP_WAIT: Duration = Duration::from_secs(2);

/// Asks the thread to harvest `list`; `false` when it will not (the switch is off, it was
/// stopped, or it could not start): the caller harvests itself.
#[inline]
pub(crate) fn request(list: &'static dyn Harvest) -> bool {
    // Inlined: a program's every wait asks, and the switch is off by default.
    if !switches::harvest_on_thread() || STOPPED.load(Ordering::Relaxed) {
        return false;
    }
    wake(list)
}

/// [`request`] once the thread is wanted: registers `list` and wakes the thread.
fn wake(list: &'static dyn Harvest) -> bool {
    if !list.registered().load(Ordering::Acquire) {
        let mut lists = LISTS.lock();
        if !list.registered().swap(true, Ordering::AcqRel) {
            lists.push(list);
        }
    }
    let Some(thread) = running() else {
        return false;
    };
    WANTED.store(true, Ordering::Release);
    thread.unpark();
    true
}

/// The thread of this process, started if it is not running.
fn running() -> Option<Thread> {
    let pid = crate::thread::process_id();
    let mut slot = THREAD.lock();
    if let Some((thread, owner)) = slot.as_ref()
        && *owner == pid
    {
        return Some(thread.clone());
    }
    let handle = std::thread::Builder::new()
        .name("pti-harvester".into())
        .spawn(run)
        .ok()?;
    let first = slot.is_none();
    *slot = Some((handle.thread().clone(), pid));
    if first {
        // SAFETY: `stop_at_exit` is a plain function of this library (see the module docs for
        // why it is registered now, after the runtime loaded).
        unsafe { libc::atexit(stop_at_exit) };
    }
    Some(handle.thread().clone())
}

/// The thread's loop: waits for a request, harvests every list, until stopped.
fn run() {
    loop {
        while !WANTED.swap(false, Ordering::Acquire) {
            if STOPPED.load(Ordering::SeqCst) {
                return;
            }
            std::thread::park();
        }
        // Dekker-style with `stop`: either it sees BUSY and waits, or this sees STOPPED.
        BUSY.store(true, Ordering::SeqCst);
        if STOPPED.load(Ordering::SeqCst) {
            BUSY.store(false, Ordering::SeqCst);
            return;
        }
        let lists: Vec<&'static dyn Harvest> = LISTS.lock().clone();
        for list in lists {
            list.harvest_up_to_busy();
        }
        BUSY.store(false, Ordering::SeqCst);
    }
}

/// Stops the thread for good and waits (a bounded time) for a harvest it has under way, so that
/// nothing of libpti calls the runtime from it afterwards.
pub(crate) fn stop() {
    STOPPED.store(true, Ordering::SeqCst);
    if let Some((thread, _)) = THREAD.lock().as_ref() {
        thread.unpark();
    }
    let deadline = Instant::now() + STOP_WAIT;
    while BUSY.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(100));
    }
}

extern "C" fn stop_at_exit() {
    let _ = std::panic::catch_unwind(stop);
}

/// In the child after `fork()`: the parent's thread does not exist here.
pub(crate) fn forget_in_child() {
    *THREAD.lock() = None;
    WANTED.store(false, Ordering::Relaxed);
    BUSY.store(false, Ordering::Relaxed);
}

/// The thread's locks, for the fork handlers (taken before the pending lists').
pub(crate) fn fork_locks() -> [&'static dyn crate::sync::writer_lock::ForkLock; 2] {
    [&LISTS, &THREAD]
}
