//! Tools that call back into libpti from their buffer callbacks, or are slow in them (review
//! findings on the buffer hand-off), in a process of their own with its own tool.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use pti_core::ApiGroup;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, Buffer, BufferCallbacks, FilledBuffer, Record};

#[derive(Default)]
struct Tool {
    buffer_size: AtomicUsize,
    /// `complete` calls `flush` itself.
    flush_in_complete: AtomicBool,
    /// `complete` sleeps this long the first time it sees an API record.
    slow_once_ms: AtomicU64,
    in_slow_complete: AtomicBool,
    slow_complete_done: AtomicBool,
    api: AtomicU64,
    flush_records: AtomicU64,
    nested_flushes: AtomicU64,
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        Some(Buffer::from_boxed(
            vec![0u8; self.buffer_size.load(Ordering::SeqCst)].into_boxed_slice(),
        ))
    }

    fn complete(&self, filled: FilledBuffer) {
        let mut api = 0;
        for record in filled.records() {
            match record {
                Record::Api(_) => api += 1,
                Record::Overhead(o)
                    if o._overhead_kind
                        == pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH =>
                {
                    self.flush_records.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            }
        }
        self.api.fetch_add(api, Ordering::SeqCst);
        // SAFETY: this tool lends only buffers made by Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
        if api > 0 {
            let ms = self.slow_once_ms.swap(0, Ordering::SeqCst);
            if ms > 0 {
                self.in_slow_complete.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(ms));
                self.slow_complete_done.store(true, Ordering::SeqCst);
            }
        }
        if self.flush_in_complete.load(Ordering::SeqCst) {
            self.nested_flushes.fetch_add(1, Ordering::SeqCst);
            session::flush().unwrap();
        }
    }
}

fn setup() -> (MutexGuard<'static, ()>, &'static Arc<Tool>) {
    static LOCK: Mutex<()> = Mutex::new(());
    static TOOL: OnceLock<Arc<Tool>> = OnceLock::new();
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let tool = TOOL.get_or_init(|| {
        let tool = Arc::new(Tool::default());
        session::set_buffer_callbacks(tool.clone());
        tool
    });
    session::flush().unwrap();
    tool.api.store(0, Ordering::SeqCst);
    tool.flush_records.store(0, Ordering::SeqCst);
    tool.nested_flushes.store(0, Ordering::SeqCst);
    (guard, tool)
}

fn calls(n: usize) {
    for i in 0..n {
        dispatch::simulate_call(
            ApiGroup::OpenCl,
            opencl::clFinish,
            CallInfo::default(),
            || i as i32,
        )
        .unwrap();
    }
}

#[test]
fn a_complete_that_flushes_loses_nothing() {
    let (_g, tool) = setup();
    tool.buffer_size.store(256, Ordering::SeqCst);
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD).unwrap();
    tool.flush_in_complete.store(true, Ordering::SeqCst);
    std::thread::spawn(|| calls(200)).join().unwrap();
    tool.flush_in_complete.store(false, Ordering::SeqCst);
    session::disable_view(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD).unwrap();
    session::disable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    session::flush().unwrap(); // delivers the BUFFER_FLUSH record of the last flush made with the view on
    session::flush().unwrap();
    let dropped = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API);
    assert_eq!(
        tool.api.load(Ordering::SeqCst) + dropped,
        200,
        "API records lost"
    );
    // Every flush made with the overhead view on (the nested ones; the view was off for the
    // explicit ones) wrote one BUFFER_FLUSH record.
    let flushes = tool.nested_flushes.load(Ordering::SeqCst);
    assert!(flushes > 2);
    let dropped_overhead = view::dropped_count(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD);
    assert_eq!(
        tool.flush_records.load(Ordering::SeqCst) + dropped_overhead,
        flushes,
        "overhead records lost"
    );
}

#[test]
fn flush_returns_only_after_other_threads_hand_backs_reached_the_tool() {
    let (_g, tool) = setup();
    tool.buffer_size.store(48 * 2, Ordering::SeqCst);
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    tool.slow_once_ms.store(300, Ordering::SeqCst);
    tool.in_slow_complete.store(false, Ordering::SeqCst);
    tool.slow_complete_done.store(false, Ordering::SeqCst);
    // Three calls fill a two-record buffer: its hand-back is the slow one.
    let writer = std::thread::spawn(|| calls(3));
    while !tool.in_slow_complete.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    session::flush().unwrap();
    assert!(
        tool.slow_complete_done.load(Ordering::SeqCst),
        "flush returned while a buffer was still being handed back"
    );
    writer.join().unwrap();
    session::disable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
}
