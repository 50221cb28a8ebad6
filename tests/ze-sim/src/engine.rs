//! The device's engines: each a thread that runs what the host submitted, after the call that
//! submitted it has returned, as a GPU's engines do.
//!
//! A [`Submission`] (one append to an immediate list, one execution of regular lists on a queue,
//! one replay of a graph) waits in its engine's queue; the engine runs submissions one after the
//! other, in the order they were submitted (a queue's command lists run in order, as on Intel's
//! engines). A submission starts no earlier than `ZE_SIM_LATENCY_NS` after it was submitted, and
//! each command after a random delay of up to `ZE_SIM_JITTER_NS`. Within a submission, the
//! commands of an in-order list run in order; those of any other list run in an order the engine
//! picks at random (seeded by `ZE_SIM_SEED`) among the commands whose wait events have signalled,
//! between barriers and other commands that order a list (the specification orders only what a
//! barrier, an event or an in-order list orders). A command whose wait events have not signalled
//! waits for them, for ever, as a device does; after `ZE_SIM_STUCK_MS` it is reported on stderr
//! and counted (`stuck` in the report).
//!
//! Every change of an event or a submission wakes whoever waits on the host or on an engine
//! ([`world_changed`], [`wait_until`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once};
use std::time::Duration;

use crate::clock;
use crate::config::{config, jitter, random_below};
use crate::event::{Arming, Event};
use crate::exec::{Armed, execute, orders_a_list};
use crate::objects::Fence;
use crate::report;

// === the world: one condition for every change ===

static WORLD: Mutex<u64> = Mutex::new(0);
static WORLD_CHANGED: Condvar = Condvar::new();

/// Wakes everyone who waits for a change (an event, a submission, a fence).
pub(crate) fn world_changed() {
    let mut generation = WORLD.lock().unwrap_or_else(|p| p.into_inner());
    *generation = generation.wrapping_add(1);
    WORLD_CHANGED.notify_all();
}

/// Waits until `done()` or host time `deadline` (ns; `u64::MAX`: for ever); returns `done()`.
pub(crate) fn wait_until(deadline: u64, done: impl Fn() -> bool) -> bool {
    let mut generation = WORLD.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if done() {
            return true;
        }
        let now = clock::host_ns();
        if now >= deadline {
            return false;
        }
        let wait = Duration::from_nanos((deadline - now).min(10_000_000));
        generation = WORLD_CHANGED
            .wait_timeout(generation, wait)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// The deadline of a Level Zero timeout (ns from now; `u64::MAX` waits for ever).
pub(crate) fn deadline(timeout: u64) -> u64 {
    clock::host_ns().saturating_add(timeout)
}

/// Sleeps until host time `t`, precisely (the last stretch spins).
fn sleep_until(t: u64) {
    loop {
        let now = clock::host_ns();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > 200_000 {
            std::thread::sleep(Duration::from_nanos(left - 100_000));
        } else {
            std::hint::spin_loop();
        }
    }
}

// === submissions ===

/// Commands of one list within a submission.
pub(crate) struct Segment {
    pub(crate) in_order: bool,
    pub(crate) commands: Vec<Armed>,
}

/// What the host submitted in one call.
pub(crate) struct Submission {
    segments: Mutex<Vec<Segment>>,
    /// Host time before which nothing starts.
    not_before: u64,
    /// An event signalled at the end, with the whole run's span (a regular list or a graph run
    /// on an immediate list). Taken when used, as the segments are: a submission the host keeps
    /// for its synchronisation holds no object once it has run.
    span: Mutex<Option<(Arc<Event>, Arming)>>,
    /// A fence signalled at the end (a queue's execution).
    fence: Mutex<Option<Arc<Fence>>>,
    done: AtomicBool,
}

impl Submission {
    pub(crate) fn new(
        segments: Vec<Segment>,
        span: Option<(Arc<Event>, Arming)>,
        fence: Option<Arc<Fence>>,
    ) -> Arc<Self> {
        Arc::new(Submission {
            segments: Mutex::new(segments),
            not_before: clock::host_ns() + config().latency_ns,
            span: Mutex::new(span),
            fence: Mutex::new(fence),
            done: AtomicBool::new(false),
        })
    }

    /// Whether it has run.
    pub(crate) fn done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Waits until it has run or `deadline` passed.
    pub(crate) fn wait(&self, deadline: u64) -> bool {
        wait_until(deadline, || self.done())
    }
}

// === engines ===

/// An engine: its queue of submissions and its thread (started at the first submission).
pub(crate) struct Engine {
    pub(crate) name: String,
    /// A copy engine runs no kernel.
    pub(crate) copy_only: bool,
    queue: Mutex<VecDeque<Arc<Submission>>>,
    /// A submission is running.
    busy: AtomicBool,
    more: Condvar,
    started: Once,
}

impl Engine {
    pub(crate) fn new(name: &str, copy_only: bool) -> Self {
        Engine {
            name: name.to_string(),
            copy_only,
            queue: Mutex::new(VecDeque::new()),
            busy: AtomicBool::new(false),
            more: Condvar::new(),
            started: Once::new(),
        }
    }

    /// Queues `submission`; the engine runs it when those before it have run.
    pub(crate) fn submit(&'static self, submission: Arc<Submission>) {
        self.started.call_once(|| {
            let engine: &'static Engine = self;
            std::thread::Builder::new()
                .name(format!("ze-sim {}", self.name))
                .spawn(move || engine.run())
                .expect("ze-sim: cannot start an engine thread");
        });
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.push_back(submission);
        self.more.notify_one();
    }

    /// Whether nothing is queued or running.
    pub(crate) fn idle(&self) -> bool {
        !self.busy.load(Ordering::Acquire)
            && self
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty()
    }

    fn run(&'static self) {
        loop {
            let submission = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(s) = queue.pop_front() {
                        // Busy before it leaves the queue's lock: never idle in between.
                        self.busy.store(true, Ordering::Release);
                        break s;
                    }
                    queue = self.more.wait(queue).unwrap_or_else(|p| p.into_inner());
                }
            };
            self.run_submission(&submission);
            submission.done.store(true, Ordering::Release);
            self.busy.store(false, Ordering::Release);
            world_changed();
        }
    }

    fn run_submission(&self, submission: &Submission) {
        let segments = std::mem::take(&mut *submission.segments.lock().unwrap());
        sleep_until(submission.not_before);
        let start = clock::host_ns();
        for segment in segments {
            if segment.in_order {
                for command in segment.commands {
                    self.run_command(command);
                }
            } else {
                self.run_out_of_order(segment.commands);
            }
        }
        let end = clock::host_ns();
        if let Some((event, arming)) = submission.span.lock().unwrap().take() {
            event.complete(arming, clock::ticks_at(start), clock::ticks_at(end));
        }
        if let Some(fence) = submission.fence.lock().unwrap().take() {
            fence.signaled.store(true, Ordering::Release);
        }
    }

    /// Runs the commands of a list that is not in order: between commands that order the list
    /// (barriers and the like), in a random order among those ready to run.
    fn run_out_of_order(&self, commands: Vec<Armed>) {
        let mut run: Vec<Armed> = Vec::new();
        for command in commands {
            if orders_a_list(&command.command.work) {
                self.run_any_order(std::mem::take(&mut run));
                self.run_command(command);
            } else {
                run.push(command);
            }
        }
        self.run_any_order(run);
    }

    fn run_any_order(&self, mut run: Vec<Armed>) {
        while !run.is_empty() {
            // Whichever becomes ready first may run (another engine or the host signals what
            // the others wait for).
            self.wait_for(
                || run.iter().any(Armed::ready),
                || {
                    let all: Vec<String> = run.iter().map(Armed::describe).collect();
                    all.join("; ")
                },
            );
            let ready: Vec<usize> = (0..run.len()).filter(|&i| run[i].ready()).collect();
            let pick = ready[random_below(ready.len() as u64) as usize];
            let command = run.remove(pick);
            self.run_command(command);
        }
    }

    /// Waits until `ready()`, for ever, saying so (with `what` waits) once it has waited
    /// `ZE_SIM_STUCK_MS`.
    fn wait_for(&self, ready: impl Fn() -> bool, what: impl FnOnce() -> String) {
        let stuck_at = clock::host_ns().saturating_add(config().stuck_ns);
        if !wait_until(stuck_at, &ready) {
            report::count(report::Counter::Stuck);
            eprintln!(
                "ze-sim: a command on {} has waited {} ms for events that have not signalled \
                 (a device would wait for ever): {}",
                self.name,
                config().stuck_ns / 1_000_000,
                what()
            );
            wait_until(u64::MAX, ready);
        }
    }

    /// Waits for a command's events, then runs it.
    fn run_command(&self, command: Armed) {
        self.wait_for(|| command.ready(), || command.describe());
        sleep_until(clock::host_ns() + jitter());
        execute(command, self.copy_only);
    }
}
