//! Hostile tools: buffer callbacks that panic, are slow, or flush from inside `complete`, and a
//! callback subscriber that panics, while eight threads trace. Nothing may unwind into the
//! traced calls, nothing may deadlock (a watchdog fails the test), and every record is
//! delivered or counted dropped: emitted = delivered + dropped, exactly.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use pti_core::callback::critical;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, Buffer, BufferCallbacks, FilledBuffer, Record};
use pti_core::{ApiGroup, Domain, Event, ResultCode, Subscriber};

const THREADS: u64 = 8;
const CALLS: u64 = 4_000;

/// What the tool does wrong.
#[derive(Default, Clone, Copy)]
struct Traits {
    panics: bool,
    slow: bool,
    flushes: bool,
}

#[derive(Default)]
struct Hostile {
    traits: Traits,
    requests: AtomicU64,
    completes: AtomicU64,
    delivered: AtomicU64,
    flushing: AtomicBool,
    /// Which records arrived and which were dropped, as (thread ID, call index): the call's
    /// index is its status, and a drop is the record of the call whose `request` panicked.
    arrived: Mutex<Vec<(u32, u32)>>,
    refused: Mutex<Vec<(u32, u32)>>,
}

thread_local! {
    /// The index of the call the tracing thread is making.
    static CALL: Cell<u32> = const { Cell::new(u32::MAX) };
}

impl BufferCallbacks for Hostile {
    fn request(&self) -> Option<Buffer> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        if self.traits.panics && n % 7 == 3 {
            // Runs on the thread whose record needs the buffer: that record will be dropped.
            // SAFETY: a plain system call.
            let tid = unsafe { libc::gettid() } as u32;
            self.refused.lock().unwrap().push((tid, CALL.get()));
            panic!("a hostile buffer_requested");
        }
        // A few records per buffer: hand-backs happen all the time.
        Some(Buffer::from_boxed(vec![0u8; 200].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        let n = self.completes.fetch_add(1, Ordering::SeqCst);
        let arrived: Vec<(u32, u32)> = filled
            .records()
            .filter_map(|r| match r {
                Record::Api(a) => Some((a._thread_id, a._return_code)),
                _ => None,
            })
            .collect();
        self.delivered
            .fetch_add(arrived.len() as u64, Ordering::SeqCst);
        self.arrived.lock().unwrap().extend(arrived);
        // SAFETY: this tool lends only buffers made by Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
        match n % 11 {
            // Slow: other threads keep tracing and flushing meanwhile.
            1 if self.traits.slow => std::thread::sleep(Duration::from_millis(2)),
            // Flushes from inside complete (one level deep).
            4 if self.traits.flushes && !self.flushing.swap(true, Ordering::SeqCst) => {
                session::flush().unwrap();
                self.flushing.store(false, Ordering::SeqCst);
            }
            7 if self.traits.panics => panic!("a hostile buffer_completed"),
            _ => {}
        }
    }
}

fn with_watchdog(limit: Duration, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(limit) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock: not finished after {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test body panicked"),
    }
}

/// Buffer callbacks (both) and a callback subscriber that panic, with slow `complete`s.
#[test]
fn panicking_and_slow_tools_lose_nothing_without_a_count() {
    run(Traits {
        panics: true,
        slow: true,
        flushes: false,
    });
}

/// `complete`s that flush (one level deep) or are slow.
#[test]
fn flushing_and_slow_tools_lose_nothing_without_a_count() {
    run(Traits {
        panics: false,
        slow: true,
        flushes: true,
    });
}

/// All three at once. Reported on 2026-11-23 as losing one record of 32,000 in about one run in
/// twenty (then `#[ignore]`d); not reproduced since (see docs/RELIABILITY.md): it runs in every
/// test run again, and the per-record check names any record that goes missing.
#[test]
fn panicking_flushing_and_slow_tools_together() {
    run(Traits {
        panics: true,
        slow: true,
        flushes: true,
    });
}

/// Every call's record either arrived once or was the one whose buffer request panicked: on
/// failure, names the calls (thread, index) that went missing or came twice.
fn each_record_once(tool: &Hostile) {
    let mut fate: BTreeMap<(u32, u32), (u32, u32)> = BTreeMap::new();
    for id in tool.arrived.lock().unwrap().iter() {
        fate.entry(*id).or_default().0 += 1;
    }
    for id in tool.refused.lock().unwrap().iter() {
        fate.entry(*id).or_default().1 += 1;
    }
    let threads: BTreeSet<u32> = fate.keys().map(|(t, _)| *t).collect();
    assert_eq!(threads.len() as u64, THREADS, "tracing threads seen");
    let wrong: Vec<String> = threads
        .iter()
        .flat_map(|&t| (0..CALLS as u32).map(move |i| (t, i)))
        .filter_map(|id| match fate.get(&id).copied().unwrap_or_default() {
            (1, 0) | (0, 1) => None,
            (arrived, dropped) => Some(format!("{id:?}: {arrived} arrived, {dropped} dropped")),
        })
        .collect();
    assert!(wrong.is_empty(), "records not accounted once: {wrong:?}");
}

/// Test files run their tests on several threads: the view state is process-wide.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(traits: Traits) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The tool's panics are expected by the thousand: keep them off the output.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let hostile = info
            .payload()
            .downcast_ref::<&str>()
            .is_some_and(|m| m.starts_with("a hostile"));
        if !hostile {
            default(info);
        }
    }));
    with_watchdog(Duration::from_secs(120), move || {
        let tool = Arc::new(Hostile {
            traits,
            ..Hostile::default()
        });
        session::set_buffer_callbacks(tool.clone());
        let dropped_before = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API);
        let emitted_before = view::emitted_count(pti_view_kind::PTI_VIEW_DRIVER_API);
        session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
        // A subscriber whose callback panics at every tenth ENTER.
        let seen = Arc::new(AtomicU64::new(0));
        let counter = seen.clone();
        let sub = Subscriber::new(move |event: Event<'_>| {
            if let Event::ApiCall { .. } = event
                && counter.fetch_add(1, Ordering::Relaxed).is_multiple_of(10)
                && traits.panics
            {
                panic!("a hostile callback");
            }
        })
        .unwrap();
        sub.enable_domain(Domain::DriverApi, true).unwrap();
        let panicked_before = critical::count(ResultCode::ErrorCallbackPanicked);

        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..CALLS {
                        CALL.set(i as u32);
                        let status = dispatch::simulate_call(
                            ApiGroup::OpenCl,
                            opencl::clFinish,
                            CallInfo::default(),
                            || i as i32,
                        )
                        .unwrap();
                        assert_eq!(status, i as i32, "the traced call's own result");
                        if i % 97 == t {
                            session::flush().unwrap();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join()
                .expect("a tracing thread panicked: a tool's panic escaped");
        }
        session::flush().unwrap();
        drop(sub);

        let emitted = THREADS * CALLS;
        let delivered = tool.delivered.load(Ordering::SeqCst);
        let dropped = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API) - dropped_before;
        let panics = critical::count(ResultCode::ErrorCallbackPanicked) - panicked_before;
        println!(
            "hostile tools: {emitted} calls; {delivered} records delivered + {dropped} dropped; \
             {} requests, {} completes, {panics} panics caught, {} callbacks",
            tool.requests.load(Ordering::SeqCst),
            tool.completes.load(Ordering::SeqCst),
            seen.load(Ordering::SeqCst)
        );
        // libpti's own count at emission tells a record never written (the dispatch skipped it)
        // from one written and then lost (the buffers' hand-off).
        let emitted_by_libpti =
            view::emitted_count(pti_view_kind::PTI_VIEW_DRIVER_API) - emitted_before;
        assert_eq!(
            emitted_by_libpti, emitted,
            "libpti emitted {emitted_by_libpti} records for {emitted} calls"
        );
        assert_eq!(delivered + dropped, emitted, "records lost without a count");
        each_record_once(&tool);
        if traits.panics {
            assert!(dropped > 0, "no request panicked: the test tested nothing");
            assert!(panics > 100, "too few panics caught: {panics}");
        } else {
            assert_eq!(dropped, 0, "records dropped without a reason");
        }
        assert_eq!(seen.load(Ordering::SeqCst), 2 * emitted, "callbacks lost");
    });
}
