//! Commands submitted but not yet recorded, and their harvest: one [`Pending`] list per backend,
//! of that backend's [`PendingCommand`]s.
//!
//! Touches the engine (critical events, the view's lost-record counts) and, through
//! [`PendingCommand`], the backend's runtime queries.
//!
//! A harvest asks each command, without waiting, whether it has completed; completed ones get
//! their record written on the harvesting thread and their event given back, exactly once,
//! because a harvest takes the commands it looks at out of the list. It asks them under the
//! list's poll lock, which [`Pending::take_where`] takes too: a program about to destroy an event
//! always finds the command that uses it, in the list or finished, never in a harvest's hands
//! while the runtime is asked about it. A list is kept in shards by the commands' queue, each
//! with its own locks (see [`Pending`]). Harvests run after the program's own waits (a wait for
//! one queue harvests that queue's shard; on libpti's harvester thread where `PTI_HARVEST=thread`
//! and the list allows it), at every flush, and when a shard has grown to `PTI_HARVEST_SIZE`
//! commands (never a wait the program did not ask for). A flush waits for the harvests other
//! threads have under way, so that their records are in a buffer when it delivers them
//! ([`wait_for_other_harvests`]).

use core::cell::Cell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use super::{harvester, switches};
use crate::callback::critical;
use crate::result::ResultCode;
use crate::sync::backoff::Backoff;
use crate::sync::writer_lock::{ForkLock, WriterLock};
use crate::thread::{self, ThreadState};
use crate::view;
use crate::view::abi::{pti_view_kind, pti_view_loss_reason};

/// A backend's command awaiting its record.
pub(crate) trait PendingCommand: Send + Sized {
    /// What [`PendingCommand::poll`] learns of a completed command, for [`PendingCommand::finish`].
    type Outcome: Send;

    /// Where the command stands, without waiting: `None` while it runs.
    fn poll(&self) -> Option<Self::Outcome>;

    /// Writes the record of the completed command into `state`'s buffer (or counts it lost,
    /// saying why) and gives back its event. `state` is the calling thread's, looked up once by
    /// [`finish`] or a harvest; `None` where that thread's state is gone (a thread-local
    /// destructor), and then each record looks up a state of its own, as `thread::with_any`
    /// does. Called once, by callers that drop the command right after, where it lies (a harvest
    /// finishes thousands: moving each into a call that takes it by value copied it each time).
    fn finish(&mut self, outcome: Self::Outcome, state: Option<&ThreadState>);

    /// The view its record belongs to, for counting it lost.
    fn view(&self) -> pti_view_kind;

    /// The queue the command was submitted to (or another key of the stream of submissions it
    /// belongs to), which picks its shard of the list (see [`Pending`]): `0`, the default, puts
    /// every command in one shard.
    fn home(&self) -> usize {
        0
    }

    /// The in-order stream the command belongs to, if it has one: commands of one such stream
    /// complete in the order they were submitted, so a harvest that finds one still running need
    /// not ask about the later ones. `None` (the default) asks about every command.
    fn in_order_stream(&self) -> Option<usize> {
        None
    }

    /// Whether a completed command settles the earlier ones of its stream: a harvest then asks
    /// the status of a stream's newest command first, and of a few more to find where the
    /// completed ones end ([`PendingCommand::completed`]), and reads the completed ones without
    /// asking each ([`PendingCommand::read`]). Else it polls from the oldest, stopping at the
    /// first still running.
    const SETTLED_BY_STREAM: bool = false;

    /// Whether the command has completed, by its status alone; `None` where that cannot be told
    /// (then [`PendingCommand::poll`] decides).
    fn completed(&self) -> Option<bool> {
        None
    }

    /// The outcome of a command known to have completed (by its status or a later command's of
    /// its stream); `None` while it cannot be had yet (asked again at the next harvest).
    fn read(&self) -> Option<Self::Outcome> {
        self.poll()
    }
}

/// Harvests between taking commands out of a list and writing their records, on all threads.
static HARVESTING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's share of [`HARVESTING`]: a harvest may write a record whose buffer refill
    /// runs tool code that flushes, and that flush must not wait for its own thread.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Counts a harvest in [`HARVESTING`] and [`DEPTH`] while it lives.
struct Harvesting;

impl Harvesting {
    fn begin() -> Self {
        HARVESTING.fetch_add(1, Ordering::Acquire);
        let _ = DEPTH.try_with(|d| d.set(d.get() + 1));
        Harvesting
    }
}

impl Drop for Harvesting {
    fn drop(&mut self) {
        let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
        HARVESTING.fetch_sub(1, Ordering::Release);
    }
}

fn own_depth() -> usize {
    DEPTH.try_with(Cell::get).unwrap_or(0)
}

/// Waits until the harvests of other threads have written their records. From tool code (a
/// buffer or critical-event callback, which may run inside a harvest) it waits for nobody, as the
/// buffer flush does.
pub(crate) fn wait_for_other_harvests() {
    if crate::thread::with(|s| s.in_callback.get()).unwrap_or(false) {
        return;
    }
    let mut backoff = Backoff::default();
    while HARVESTING.load(Ordering::Acquire) > own_depth() {
        backoff.snooze();
    }
}

/// In the child after `fork()`: harvests that other threads of the parent had under way do not
/// exist here; one of the forking thread's own (a tool callback that forked) does.
pub(crate) fn reset_in_child() {
    HARVESTING.store(own_depth(), Ordering::Relaxed);
}

/// Which pending commands a harvest asks the runtime about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Every command, but none behind a command of the same in-order stream that is still
    /// running (they cannot have completed): the harvest after a program's wait, cheap.
    UpToBusy,
    /// Every command: when the harvest returns, everything that had completed is recorded (a
    /// flush).
    All,
}

/// Size of a list's shard at which adding to it harvests, unless `PTI_HARVEST_SIZE` says otherwise
/// (doubles while commands stay unfinished). Large enough that a program that waits for its work
/// every few tens of thousands of commands is never polled while it submits: on NVIDIA's OpenCL,
/// reading completed events while the program enqueues costs about 10% of a launch loop, the
/// program's own reads as much as libpti's (issues 21 and 39, docs/BENCHMARKS.md). The bound on
/// memory it keeps: a pending command holds 248 bytes (OpenCL) or 416 (Level Zero) and the
/// runtime's event, so at most about 16 or 27 MB in a shard before a harvest (OpenCL's commands
/// of several queues spread over up to [`SHARDS`] shards).
pub(crate) const DEFAULT_HARVEST_SIZE: usize = 65_536;

/// Storage a harvest works in, kept (empty) from one harvest to the next, so that a program's
/// steady loop allocates nothing and moves each command once after its submission (into its
/// `finish`): `kept` becomes the list's storage at each harvest, and `outcomes` holds what the
/// runtime answered for each command taken, beside it.
struct Spare<C: PendingCommand> {
    kept: Vec<C>,
    outcomes: Vec<Option<C::Outcome>>,
}

/// Shards of a list: commands go to the shard of their [`PendingCommand::home`].
const SHARDS: usize = 16;

/// The shard of commands whose home is `home` (a multiplicative hash: queue handles are
/// addresses, whose low bits are alike).
fn shard_of(home: usize) -> usize {
    const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;
    ((home as u64).wrapping_mul(FIBONACCI) >> (u64::BITS - SHARDS.trailing_zeros())) as usize
}

/// One backend's pending commands, in [`SHARDS`] shards, each a list with its own locks: threads
/// that submit to queues of their own add, mostly, to lists of their own (two queues share a
/// shard one time in 16), and a program's wait for a queue harvests that queue's shard while
/// other threads harvest theirs (one list for all made each wait stand behind the others'
/// harvests, and read the others' completed events while they submitted: issue 39,
/// docs/BENCHMARKS.md).
pub(crate) struct Pending<C: PendingCommand> {
    shards: [CachePadded<Shard<C>>; SHARDS],
    /// The harvester thread has this list (see `harvester`).
    harvester_knows: AtomicBool,
    /// The list may be harvested on the harvester thread (see [`Pending::for_harvester`]).
    off_thread: bool,
}

/// The commands of one shard of a [`Pending`] list.
struct Shard<C: PendingCommand> {
    /// Held from taking commands out of `list` to putting the unfinished ones back (the runtime
    /// is asked about them meanwhile), and by [`Pending::take_where`]. Taken before `list`. It
    /// keeps the storage of the last harvest's finished and unfinished commands (empty), for the
    /// next one.
    poll: WriterLock<Spare<C>>,
    list: WriterLock<Vec<C>>,
    /// Commands in the list (read without the lock, to skip empty harvests).
    count: AtomicUsize,
    harvest_at: AtomicUsize,
}

impl<C: PendingCommand> Pending<C> {
    pub(crate) const fn new() -> Self {
        Pending {
            shards: [const { CachePadded::new(Shard::new()) }; SHARDS],
            harvester_knows: AtomicBool::new(false),
            off_thread: false,
        }
    }

    /// A list whose harvests after a program's wait may run on the harvester thread
    /// (`PTI_HARVEST=thread`): one whose commands carry device times, so that when the harvest
    /// runs changes no record. (Level Zero's does not: a command of a driver without kernel
    /// timestamps ends, on the host clock, when a harvest finds it complete.)
    pub(crate) const fn for_harvester() -> Self {
        let mut list = Self::new();
        list.off_thread = true;
        list
    }

    /// Number of commands awaiting their records.
    pub(crate) fn count(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.count.load(Ordering::Relaxed))
            .sum()
    }

    /// The locks of the list, in the order they are taken (each shard's poll lock, then its
    /// list's; no thread holds two shards' locks at once), for the fork handlers.
    pub(crate) fn fork_locks(&'static self) -> Vec<&'static dyn ForkLock> {
        self.shards
            .iter()
            .flat_map(|s| [&s.poll as &dyn ForkLock, &s.list as &dyn ForkLock])
            .collect()
    }

    /// Whether the harvester thread has this list.
    pub(crate) fn harvester_knows(&self) -> &AtomicBool {
        &self.harvester_knows
    }

    /// Leaves a command pending; has its shard harvested if it has grown. Inlined, so that the
    /// caller's command is built where the list keeps it rather than copied there.
    #[inline]
    pub(crate) fn add(&'static self, command: C) {
        let home = command.home();
        let shard = &self.shards[shard_of(home)];
        let count = {
            let mut list = shard.list.lock();
            // Room first: with it, `push` writes the command straight into the list (without,
            // it copied each command, 248 bytes for OpenCL's, to the stack for its growing path).
            list.reserve(1);
            list.push(command);
            shard.count.store(list.len(), Ordering::Relaxed);
            list.len()
        };
        if count
            >= shard
                .harvest_at
                .load(Ordering::Relaxed)
                .max(switches::harvest_size())
        {
            // Not again before the harvest says what is left (it sets the next size).
            shard.harvest_at.store(count * 2, Ordering::Relaxed);
            self.harvest_home_soon(home);
        }
    }

    /// Harvests with [`Ask::UpToBusy`] (after a program's wait that may have been for any
    /// queue): on the harvester thread where it runs (`PTI_HARVEST`), else now, on this thread.
    /// Nothing is asked of the thread while no command is pending (waking it is a system call).
    pub(crate) fn harvest_soon(&'static self) {
        if self.count() == 0 {
            return;
        }
        if !self.off_thread || !harvester::request(self) {
            self.harvest(Ask::UpToBusy);
        }
    }

    /// As [`Pending::harvest_soon`], for the commands whose home is `home` (after a wait for
    /// that queue, or when its shard has grown): on this thread, only its shard is harvested.
    /// Nothing is asked of the harvester thread while that shard is empty, as after a blocking
    /// call whose command was recorded when it returned and nothing else of its queue pending.
    pub(crate) fn harvest_home_soon(&'static self, home: usize) {
        let shard = &self.shards[shard_of(home)];
        if shard.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        if !self.off_thread || !harvester::request(self) {
            shard.harvest(None::<fn(&C) -> bool>, Ask::UpToBusy);
        }
    }

    /// Records a command whose call blocked until it completed; one the runtime does not report
    /// complete yet (its event may lag the data) is left pending instead.
    pub(crate) fn complete_now(&'static self, command: C) {
        match command.poll() {
            None => self.add(command),
            Some(outcome) => {
                let _harvesting = Harvesting::begin();
                finish(command, outcome);
            }
        }
    }

    /// Writes the records of the pending commands that have completed; never waits. With
    /// [`Ask::UpToBusy`], behind a command of an in-order stream that is still running, the
    /// stream's later commands are not asked (they cannot have completed; at worst, one enqueued
    /// by another thread and listed out of order waits for the next harvest): so a harvest asks
    /// the runtime about the completed commands and one per busy stream, not about every command
    /// in flight. With [`Ask::All`], everything completed is recorded when it returns. The shards
    /// are harvested in turn.
    pub(crate) fn harvest(&self, ask: Ask) {
        for shard in &self.shards {
            shard.harvest(None::<fn(&C) -> bool>, ask);
        }
    }

    /// As [`Pending::harvest`] with [`Ask::All`], for the commands `pick` selects (the others are
    /// not asked).
    pub(crate) fn harvest_matching(&self, pick: impl Fn(&C) -> bool) {
        for shard in &self.shards {
            shard.harvest(Some(&pick), Ask::All);
        }
    }

    /// Takes out the commands `pick` selects, whatever their state (the caller decides what
    /// becomes of them: a program about to reset or destroy their events). Waits for a harvest
    /// that is asking the runtime about commands, so none is missed.
    pub(crate) fn take_where(&self, pick: impl Fn(&C) -> bool) -> Vec<C> {
        let mut taken = Vec::new();
        for shard in &self.shards {
            shard.take_where(&pick, &mut taken);
        }
        taken
    }

    /// Gives up on every pending command without asking the runtime anything (at loader
    /// shutdown or process exit the runtime may be gone): each is counted as lost, per view when
    /// the shard can be had within a few milliseconds (a thread still running may hold it), and
    /// one critical event says how many and why. The commands are forgotten, not finished.
    pub(crate) fn abandon(&self, backend: &str, why: &str) {
        let (mut n, mut uncounted) = (0, 0);
        for shard in &self.shards {
            let left = shard.count.swap(0, Ordering::Relaxed);
            if left > 0 && !shard.count_lost() {
                uncounted += left;
            }
            n += left;
        }
        if n == 0 {
            return;
        }
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "{why} with {n} {backend} commands whose records were not written (still \
                 running, or not harvested by a flush or a wait since they completed); they are \
                 lost{}",
                if uncounted == 0 {
                    " (counted in ptiViewGetDroppedRecordCount)".to_string()
                } else {
                    format!(
                        ", and {uncounted} of them not counted per view: another thread held \
                         their list"
                    )
                }
            ),
        );
    }

    /// In the child after `fork()` (the locks released again): the pending commands and their
    /// events are the parent's (it records them); the child forgets them without touching the
    /// runtime.
    pub(crate) fn forget_in_child(&self) {
        for shard in &self.shards {
            let mut list = shard.list.lock();
            for command in list.drain(..) {
                core::mem::forget(command);
            }
            shard.count.store(0, Ordering::Relaxed);
        }
    }
}

impl<C: PendingCommand> Shard<C> {
    const fn new() -> Self {
        Shard {
            poll: WriterLock::new(Spare {
                kept: Vec::new(),
                outcomes: Vec::new(),
            }),
            list: WriterLock::new(Vec::new()),
            count: AtomicUsize::new(0),
            harvest_at: AtomicUsize::new(0),
        }
    }

    /// Harvests the commands `pick` selects (all of them: `None`). The commands found complete
    /// stay where they were taken into, and are finished from there once the locks are released;
    /// the others move back to the list, before those added meanwhile. The list's storage and the
    /// outcomes' are kept for the next harvest (see [`Spare`]).
    fn harvest(&self, pick: Option<impl Fn(&C) -> bool>, ask: Ask) {
        match self.count.load(Ordering::Relaxed) {
            0 => return,
            1 if pick.is_none() && !C::SETTLED_BY_STREAM && self.harvest_one() => return,
            _ => {}
        }
        let _harvesting = Harvesting::begin();
        let (mut taken, mut outcomes);
        {
            let mut poll = self.poll.lock();
            taken = {
                let mut list = self.list.lock();
                match &pick {
                    None => core::mem::take(&mut *list),
                    Some(pick) => {
                        let (taken, kept) = core::mem::take(&mut *list).into_iter().partition(pick);
                        *list = kept;
                        taken
                    }
                }
            };
            outcomes = core::mem::take(&mut poll.outcomes);
            if C::SETTLED_BY_STREAM {
                settle_by_streams(&taken, &mut outcomes);
            } else {
                poll_up_to_busy(&taken, &mut outcomes, ask);
            }
            // The unfinished commands, in submission order (older than any added meanwhile,
            // which go after them), become the list; the completed ones stay in `taken`. Where
            // all completed (a harvest after the program's wait), the list is left as it is.
            let list = if outcomes.iter().any(Option::is_none) {
                let mut kept = core::mem::take(&mut poll.kept);
                let mut running = outcomes.iter().map(Option::is_none);
                kept.extend(taken.extract_if(.., |_| running.next().unwrap_or(false)));
                outcomes.retain(Option::is_some);
                let mut list = self.list.lock();
                kept.append(&mut list);
                core::mem::swap(&mut *list, &mut kept);
                poll.kept = kept;
                list
            } else {
                self.list.lock()
            };
            self.count.store(list.len(), Ordering::Relaxed);
            if pick.is_none() {
                // The list grows to twice what is left unfinished before it is harvested again.
                self.harvest_at.store(list.len() * 2, Ordering::Relaxed);
            }
        }
        // Records are written without the locks: writing may run tool code.
        // Not `with_any`: the state of exited threads is behind a lock, which every record
        // written meanwhile would wait for (tool code and GPU-operation callbacks look it up).
        let mut done = taken.iter_mut().zip(outcomes.drain(..).flatten());
        thread::with(|state| {
            for (command, outcome) in &mut done {
                command.finish(outcome, Some(state));
            }
        });
        // Left only where this thread's state is gone: each record finds one of its own.
        for (command, outcome) in done {
            command.finish(outcome, None);
        }
        taken.clear();
        // The storage goes back unless another harvest is under way (it has its own). The list
        // keeps the larger of its storage and the taken commands' (which held all the list had),
        // so that it does not grow anew, copying its commands, before every harvest; the other
        // is kept for the next harvest's unfinished commands.
        if let Some(mut spare) = self.poll.try_lock() {
            {
                let mut list = self.list.lock();
                if list.capacity() < taken.capacity() {
                    taken.append(&mut list);
                    core::mem::swap(&mut *list, &mut taken);
                }
            }
            if spare.kept.capacity() < taken.capacity() {
                spare.kept = taken;
            }
            if spare.outcomes.capacity() < outcomes.capacity() {
                spare.outcomes = outcomes;
            }
        }
    }

    /// [`Shard::harvest`] of a shard that holds one command, as after each wait of a program that
    /// waits for every command: the same locks, poll and order, without the storage the general
    /// harvest exchanges (which cost more than the command's poll; issue 39). `false`, having
    /// done nothing, where the shard no longer holds exactly one command.
    fn harvest_one(&self) -> bool {
        let _harvesting = Harvesting::begin();
        // Declared here so that the command is finished where it was read to: each move of its
        // 248 bytes (OpenCL's) costs about 29 instructions.
        let mut command;
        let outcome;
        {
            let _poll = self.poll.lock();
            {
                let mut list = self.list.lock();
                if list.len() != 1 {
                    return false;
                }
                // SAFETY: the list holds one command, which its new length leaves out: read
                // once, it is owned here alone (`pop` copied it twice on its way here).
                command = unsafe {
                    list.set_len(0);
                    list.as_ptr().read()
                };
            }
            let polled = command.poll();
            let mut list = self.list.lock();
            let left = |list: &Vec<C>| {
                self.count.store(list.len(), Ordering::Relaxed);
                self.harvest_at.store(list.len() * 2, Ordering::Relaxed);
            };
            let Some(polled) = polled else {
                // Still running: back before any added meanwhile.
                list.insert(0, command);
                left(&list);
                return true;
            };
            left(&list);
            outcome = polled;
        }
        // Without the locks, as in the general harvest.
        finish_in_place(&mut command, outcome);
        true
    }

    /// Moves the commands `pick` selects into `taken`, after waiting for a harvest that is
    /// asking the runtime about commands.
    fn take_where(&self, pick: impl Fn(&C) -> bool, taken: &mut Vec<C>) {
        if self.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let _poll = self.poll.lock();
        let mut list = self.list.lock();
        let (picked, kept): (Vec<C>, Vec<C>) =
            core::mem::take(&mut *list).into_iter().partition(&pick);
        *list = kept;
        self.count.store(list.len(), Ordering::Relaxed);
        taken.extend(picked);
    }

    /// Counts each command of the shard lost, per view, and forgets it; `false` when the list
    /// could not be had within a few milliseconds.
    fn count_lost(&self) -> bool {
        for _ in 0..20 {
            if let Some(mut list) = self.list.try_lock() {
                for command in list.drain(..) {
                    view::count_lost_because(
                        command.view(),
                        pti_view_loss_reason::PTI_VIEW_LOSS_PROCESS_EXITING,
                    );
                    core::mem::forget(command);
                }
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        false
    }
}

/// Polls each command of `taken`, oldest first, into `outcomes` (one each; `None`: running or
/// not asked); with [`Ask::UpToBusy`], none behind a command of its in-order stream found
/// running.
fn poll_up_to_busy<C: PendingCommand>(
    taken: &[C],
    outcomes: &mut Vec<Option<C::Outcome>>,
    ask: Ask,
) {
    // Streams found busy in this harvest (few: one per queue with work in flight).
    let mut busy: Vec<usize> = Vec::new();
    for command in taken {
        let stream = command.in_order_stream().filter(|_| ask == Ask::UpToBusy);
        if stream.is_some_and(|s| busy.contains(&s)) {
            outcomes.push(None);
            continue;
        }
        let outcome = command.poll();
        if outcome.is_none() {
            busy.extend(stream);
        }
        outcomes.push(outcome);
    }
}

/// Settles each in-order stream of `taken` by its newest completed command (see
/// [`PendingCommand::SETTLED_BY_STREAM`]) into `outcomes` (one per command): the status of the
/// stream's newest command, then a bisection of the older ones if it is still running; the
/// completed ones are read. Commands of no stream are polled.
fn settle_by_streams<C: PendingCommand>(taken: &[C], outcomes: &mut Vec<Option<C::Outcome>>) {
    // Each stream's commands, by their place in `taken` (in submission order).
    let mut streams: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, c) in taken.iter().enumerate() {
        if let Some(s) = c.in_order_stream() {
            match streams.iter_mut().find(|(id, _)| *id == s) {
                Some((_, members)) => members.push(i),
                None => streams.push((s, vec![i])),
            }
        }
    }
    // How many of each stream's commands have completed: a prefix.
    let mut done = vec![false; taken.len()];
    for (_, members) in &streams {
        let completed = |k: usize| taken[members[k]].completed().unwrap_or(true);
        let n = members.len();
        let prefix = if completed(n - 1) {
            n
        } else {
            // The first running command: commands 0..lo have completed, hi is running.
            let (mut lo, mut hi) = (0, n - 1);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if completed(mid) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        for &i in &members[..prefix] {
            done[i] = true;
        }
    }
    outcomes.extend(
        taken
            .iter()
            .enumerate()
            .map(|(i, command)| match command.in_order_stream() {
                None => command.poll(),
                Some(_) if done[i] => command.read(),
                Some(_) => None,
            }),
    );
}

/// Finishes one command (one that completed in its blocking call, or one that will never be
/// timed) with this thread's state (see [`PendingCommand::finish`]).
pub(crate) fn finish<C: PendingCommand>(mut command: C, outcome: C::Outcome) {
    finish_in_place(&mut command, outcome);
}

/// [`finish`] of a command that stays where it is (the caller drops it after).
fn finish_in_place<C: PendingCommand>(command: &mut C, outcome: C::Outcome) {
    let mut outcome = Some(outcome);
    thread::with(|state| {
        if let Some(outcome) = outcome.take() {
            command.finish(outcome, Some(state));
        }
    });
    if let Some(outcome) = outcome {
        command.finish(outcome, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// A command that takes 100 ms to answer that it is still running.
    struct Slow(&'static AtomicBool);

    impl PendingCommand for Slow {
        type Outcome = ();

        fn poll(&self) -> Option<()> {
            self.0.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            None
        }

        fn finish(&mut self, _: (), _: Option<&ThreadState>) {}

        fn view(&self) -> pti_view_kind {
            pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL
        }
    }

    #[test]
    fn a_command_being_polled_is_still_found_by_take_where() {
        static LIST: Pending<Slow> = Pending::new();
        static POLLING: AtomicBool = AtomicBool::new(false);
        LIST.add(Slow(&POLLING));
        let harvester = std::thread::spawn(|| LIST.harvest(Ask::UpToBusy));
        while !POLLING.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // The harvest holds the command while it asks about it: taking waits for it.
        assert_eq!(LIST.take_where(|_| true).len(), 1);
        harvester.join().unwrap();
        assert_eq!(LIST.count(), 0);
    }

    /// A command of stream `stream` (None: no order) that has completed or not, submitted to
    /// queue `home`; polls and finishes are logged by name.
    struct Ordered {
        name: &'static str,
        stream: Option<usize>,
        done: bool,
        home: usize,
        log: &'static std::sync::Mutex<Vec<String>>,
    }

    impl PendingCommand for Ordered {
        type Outcome = ();

        fn poll(&self) -> Option<()> {
            self.log.lock().unwrap().push(format!("poll {}", self.name));
            self.done.then_some(())
        }

        fn finish(&mut self, _: (), _: Option<&ThreadState>) {
            self.log
                .lock()
                .unwrap()
                .push(format!("record {}", self.name));
        }

        fn view(&self) -> pti_view_kind {
            pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL
        }

        fn in_order_stream(&self) -> Option<usize> {
            self.stream
        }

        fn home(&self) -> usize {
            self.home
        }
    }

    #[test]
    fn a_harvest_asks_nothing_behind_a_running_command_of_an_in_order_stream() {
        static LIST: Pending<Ordered> = Pending::new();
        static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let command = |name, stream, done| Ordered {
            name,
            stream,
            done,
            home: 0,
            log: &LOG,
        };
        // Stream 1: a1 done, a2 running, a3 (claims done: must not even be asked); stream 2: b1
        // done; no stream: c1 running, c2 done.
        for c in [
            command("a1", Some(1), true),
            command("a2", Some(1), false),
            command("a3", Some(1), true),
            command("b1", Some(2), true),
            command("c1", None, false),
            command("c2", None, true),
        ] {
            LIST.add(c);
        }
        LIST.harvest(Ask::UpToBusy);
        let log = std::mem::take(&mut *LOG.lock().unwrap());
        assert_eq!(
            log,
            [
                "poll a1",
                "poll a2",
                "poll b1",
                "poll c1",
                "poll c2",
                "record a1",
                "record b1",
                "record c2"
            ]
        );
        // What is left stays in submission order, and a flush's harvest asks about everything.
        LIST.add(command("a4", Some(1), true));
        LIST.harvest(Ask::All);
        let log = std::mem::take(&mut *LOG.lock().unwrap());
        assert_eq!(
            log,
            [
                "poll a2",
                "poll a3",
                "poll c1",
                "poll a4",
                "record a3",
                "record a4"
            ]
        );
        assert_eq!(LIST.count(), 2);
        let left: Vec<_> = LIST.take_where(|_| true).iter().map(|c| c.name).collect();
        assert_eq!(left, ["a2", "c1"]);
    }

    #[test]
    fn a_wait_for_one_queue_harvests_that_queues_commands_only() {
        static LIST: Pending<Ordered> = Pending::new();
        static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        // Two queues whose commands are in different shards.
        let a = 0x7f00_1000;
        let b = (a + 0x40..)
            .step_by(0x40)
            .find(|h| shard_of(*h) != shard_of(a))
            .unwrap();
        let command = |name, home| Ordered {
            name,
            stream: None,
            done: true,
            home,
            log: &LOG,
        };
        for c in [command("a1", a), command("b1", b), command("a2", a)] {
            LIST.add(c);
        }
        assert_eq!(LIST.count(), 3);
        LIST.harvest_home_soon(a);
        let log = std::mem::take(&mut *LOG.lock().unwrap());
        assert_eq!(log, ["poll a1", "poll a2", "record a1", "record a2"]);
        assert_eq!(LIST.count(), 1);
        // The other queue's command waits for its own wait, or a flush's harvest of every shard.
        LIST.harvest(Ask::All);
        let log = std::mem::take(&mut *LOG.lock().unwrap());
        assert_eq!(log, ["poll b1", "record b1"]);
        assert_eq!(LIST.count(), 0);
        // What is taken out is taken from every shard.
        LIST.add(command("a3", a));
        LIST.add(command("b2", b));
        let mut left: Vec<_> = LIST.take_where(|_| true).iter().map(|c| c.name).collect();
        left.sort();
        assert_eq!(left, ["a3", "b2"]);
        assert_eq!(LIST.count(), 0);
    }

    /// A command whose poll says it is `running` or not, once [`OPEN`] lets it ([`POLLING`] says
    /// it is being polled); its record checks that its shard's locks are free.
    struct Gated {
        name: &'static str,
        running: bool,
    }

    static GATED: Pending<Gated> = Pending::new();
    static GATED_LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    static POLLING: AtomicBool = AtomicBool::new(false);
    static OPEN: AtomicBool = AtomicBool::new(true);

    impl PendingCommand for Gated {
        type Outcome = ();

        fn poll(&self) -> Option<()> {
            GATED_LOG
                .lock()
                .unwrap()
                .push(format!("poll {}", self.name));
            POLLING.store(true, Ordering::SeqCst);
            while !OPEN.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            (!self.running).then_some(())
        }

        fn finish(&mut self, _: (), _: Option<&ThreadState>) {
            let shard = &GATED.shards[shard_of(0)];
            let free = shard.poll.try_lock().is_some() && shard.list.try_lock().is_some();
            GATED_LOG
                .lock()
                .unwrap()
                .push(format!("record {} (locks free: {free})", self.name));
        }

        fn view(&self) -> pti_view_kind {
            pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL
        }
    }

    #[test]
    fn a_shard_of_one_command_is_harvested_as_any_other() {
        let log = || std::mem::take(&mut *GATED_LOG.lock().unwrap());
        // Completed: recorded without the locks, and the shard is empty.
        GATED.add(Gated {
            name: "done",
            running: false,
        });
        GATED.harvest_home_soon(0);
        assert_eq!(log(), ["poll done", "record done (locks free: true)"]);
        assert_eq!(GATED.count(), 0);
        // Running, while another command is added during its poll: it stays, first.
        GATED.add(Gated {
            name: "running",
            running: true,
        });
        OPEN.store(false, Ordering::SeqCst);
        POLLING.store(false, Ordering::SeqCst);
        let harvester = std::thread::spawn(|| GATED.harvest_home_soon(0));
        while !POLLING.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        GATED.add(Gated {
            name: "added",
            running: false,
        });
        OPEN.store(true, Ordering::SeqCst);
        harvester.join().unwrap();
        assert_eq!(log(), ["poll running"]);
        assert_eq!(GATED.count(), 2);
        // The next harvest asks both, in submission order (the general harvest: two commands).
        GATED.harvest(Ask::All);
        assert_eq!(
            log(),
            [
                "poll running",
                "poll added",
                "record added (locks free: true)"
            ]
        );
        let left: Vec<_> = GATED.take_where(|_| true).iter().map(|c| c.name).collect();
        assert_eq!(left, ["running"]);
    }
}
