//! Stress: 8 threads make a million traced calls each into 4 KiB buffers, while the tool refuses
//! every fifth buffer and another thread flushes all the time (so buffers are taken from threads
//! while they write). Checked exactly: delivered + dropped == emitted, and the correlation ID of
//! every delivered API record equals the one the callbacks of its call saw.
//!
//! Each call returns its index as status, so a record (thread ID, status) names one call; the
//! subscriber stores the correlation ID of each call at EXIT, before the record is written.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, Buffer, BufferCallbacks, FilledBuffer, Record};
use pti_core::{ApiGroup, Event, Site, Subscriber};

const THREADS: usize = 8;
const CALLS: usize = 1_000_000;
const BUFFER: usize = 4096;

/// Per thread (by OS thread ID): the correlation ID the callbacks saw, per call index.
type Seen = Arc<Vec<AtomicU32>>;

fn seen_by_thread() -> &'static Mutex<HashMap<u32, Seen>> {
    static MAP: OnceLock<Mutex<HashMap<u32, Seen>>> = OnceLock::new();
    MAP.get_or_init(Mutex::default)
}

thread_local! {
    static MINE: std::cell::RefCell<Option<Seen>> = const { std::cell::RefCell::new(None) };
}

fn gettid() -> u32 {
    // SAFETY: gettid cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

#[derive(Default)]
struct Tool {
    requests: AtomicUsize,
    delivered: AtomicU64,
    mismatched: AtomicU64,
    malformed: AtomicU64,
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        if self.requests.fetch_add(1, Ordering::Relaxed) % 5 == 4 {
            return None;
        }
        Some(Buffer::from_boxed(vec![0u8; BUFFER].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        let map = seen_by_thread().lock().unwrap();
        for record in filled.records() {
            let Record::Api(r) = record else {
                self.malformed.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            self.delivered.fetch_add(1, Ordering::Relaxed);
            let ok_shape = r._view_kind._view_kind == pti_view_kind::PTI_VIEW_DRIVER_API
                && r._api_group == pti_api_group_id::PTI_API_GROUP_OPENCL
                && r._api_id == opencl::clFinish;
            let seen = map
                .get(&r._thread_id)
                .and_then(|s| s.get(r._return_code as usize));
            match seen {
                Some(c) if ok_shape && c.load(Ordering::Relaxed) == r._correlation_id => {}
                _ => {
                    self.mismatched.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        drop(map);
        // SAFETY: this tool lends only buffers made by Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

#[test]
fn eight_threads_a_million_calls_each_nothing_lost_without_a_count() {
    let tool = Arc::new(Tool::default());
    session::set_buffer_callbacks(tool.clone());
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    let subscriber = Subscriber::new(|event| {
        if let Event::ApiCall { data, .. } = event
            && data.site() == Site::Exit
        {
            let index = data.return_code().unwrap() as usize;
            MINE.with(|m| {
                m.borrow().as_ref().unwrap()[index].store(data.correlation_id(), Ordering::Relaxed)
            });
        }
    })
    .unwrap();
    subscriber
        .enable(ApiGroup::OpenCl, opencl::clFinish, true)
        .unwrap();

    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(|| {
                let seen: Seen = Arc::new((0..CALLS).map(|_| AtomicU32::new(0)).collect());
                seen_by_thread()
                    .lock()
                    .unwrap()
                    .insert(gettid(), seen.clone());
                MINE.with(|m| *m.borrow_mut() = Some(seen));
                for i in 0..CALLS {
                    dispatch::simulate_call(
                        ApiGroup::OpenCl,
                        opencl::clFinish,
                        CallInfo::default(),
                        || i as i32,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    let writing = Arc::new(AtomicBool::new(true));
    let w = writing.clone();
    let flusher = std::thread::spawn(move || {
        let mut flushes = 0u64;
        while w.load(Ordering::Relaxed) {
            session::flush().unwrap();
            flushes += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        flushes
    });
    for t in threads {
        t.join().unwrap();
    }
    writing.store(false, Ordering::Relaxed);
    let flushes = flusher.join().unwrap();
    session::flush().unwrap();
    drop(subscriber);

    let emitted = (THREADS * CALLS) as u64;
    let delivered = tool.delivered.load(Ordering::SeqCst);
    let dropped = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API);
    println!(
        "emitted {emitted}, delivered {delivered}, dropped {dropped}, buffer requests {}, concurrent flushes {flushes}",
        tool.requests.load(Ordering::SeqCst)
    );
    assert!(flushes > 10, "the flusher ran only {flushes} times");
    assert_eq!(tool.malformed.load(Ordering::SeqCst), 0);
    assert_eq!(
        tool.mismatched.load(Ordering::SeqCst),
        0,
        "an API record's correlation ID differs from its callbacks'"
    );
    assert!(
        dropped > 0,
        "the tool refused buffers, so records must have been dropped"
    );
    assert_eq!(
        delivered + dropped,
        emitted,
        "emitted = delivered + dropped, exactly"
    );
}
