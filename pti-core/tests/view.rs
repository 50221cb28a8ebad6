//! The view API as a tool sees it, driven through the simulated-call backend.
//!
//! View state is per process (one set of buffer callbacks, one set of enabled views), so every
//! test takes `serial()` and leaves the views disabled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use pti_core::callback::critical;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::{level_zero, opencl, sycl};
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, ApiView, Buffer, BufferCallbacks, FilledBuffer, Record};
use pti_core::{ApiGroup, ApiId, Domain, Event, ResultCode, Site, Subscriber};

/// A tool that keeps copies of the records it receives.
struct Tool {
    api: Mutex<Vec<pti_view_record_api>>,
    external: Mutex<Vec<pti_view_record_external_correlation>>,
    overhead: Mutex<Vec<pti_view_record_overhead>>,
    buffer_size: AtomicUsize,
    refuse: AtomicBool,
    completed: AtomicUsize,
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        if self.refuse.load(Ordering::SeqCst) {
            return None;
        }
        let size = self.buffer_size.load(Ordering::SeqCst);
        Some(Buffer::from_boxed(vec![0u8; size].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        self.completed.fetch_add(1, Ordering::SeqCst);
        for record in filled.records() {
            match record {
                Record::Api(r) => self.api.lock().unwrap().push(*r),
                Record::ExternalCorrelation(r) => self.external.lock().unwrap().push(*r),
                Record::Overhead(r) => self.overhead.lock().unwrap().push(*r),
                other => panic!("unexpected record {other:?}"),
            }
        }
        // SAFETY: this tool lends only buffers made by Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

fn tool() -> &'static Arc<Tool> {
    static TOOL: OnceLock<Arc<Tool>> = OnceLock::new();
    TOOL.get_or_init(|| {
        let tool = Arc::new(Tool {
            api: Mutex::default(),
            external: Mutex::default(),
            overhead: Mutex::default(),
            buffer_size: AtomicUsize::new(4096),
            refuse: AtomicBool::new(false),
            completed: AtomicUsize::new(0),
        });
        session::set_buffer_callbacks(tool.clone());
        tool
    })
}

/// Serialises the tests; resets the tool and the views.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let t = tool();
    session::flush().unwrap();
    for kind in pti_view_kind::ALL {
        if kind != pti_view_kind::PTI_VIEW_RESERVED {
            session::disable_view(kind).unwrap();
        }
    }
    session::reset_api_filters();
    t.api.lock().unwrap().clear();
    t.external.lock().unwrap().clear();
    t.overhead.lock().unwrap().clear();
    t.buffer_size.store(4096, Ordering::SeqCst);
    t.refuse.store(false, Ordering::SeqCst);
    guard
}

fn call(group: ApiGroup, id: ApiId, status: i32) {
    dispatch::simulate_call(group, id, CallInfo::default(), || status).unwrap();
}

fn api_records() -> Vec<pti_view_record_api> {
    session::flush().unwrap();
    tool().api.lock().unwrap().clone()
}

#[test]
fn api_records_carry_the_call_and_the_callbacks_correlation_id() {
    let _s = serial();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_RUNTIME_API).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let sub = Subscriber::new(move |e| {
        if let Event::ApiCall { data, api_id, .. } = e
            && data.site() == Site::Exit
        {
            s2.lock().unwrap().push((api_id, data.correlation_id()));
        }
    })
    .unwrap();
    sub.enable_domain(Domain::DriverApi, true).unwrap();
    sub.enable_domain(Domain::RuntimeApi, true).unwrap();
    let before = view::abi::pti_view_kind::PTI_VIEW_DRIVER_API;
    let t0 = pti_core::clock::now();
    call(ApiGroup::OpenCl, opencl::clFinish, -5);
    call(ApiGroup::LevelZero, level_zero::zeInit, 0x7800_0001);
    call(ApiGroup::Sycl, sycl::urQueueFinish, 0);
    let t1 = pti_core::clock::now();
    drop(sub);
    let records = api_records();
    assert_eq!(records.len(), 3, "{records:?}");
    let seen = seen.lock().unwrap().clone();
    // SAFETY: gettid cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    for (r, (id, corr)) in records.iter().zip(&seen) {
        assert_eq!(r._api_id, *id);
        assert_eq!(
            r._correlation_id, *corr,
            "the API record and the callbacks share the ID"
        );
        assert!(
            t0 <= r._start_timestamp
                && r._start_timestamp <= r._end_timestamp
                && r._end_timestamp <= t1
        );
        assert_eq!(r._thread_id, tid);
        assert_eq!(r._process_id, std::process::id());
    }
    assert_eq!(
        (records[0]._view_kind._view_kind, records[0]._api_group),
        (before, pti_api_group_id::PTI_API_GROUP_OPENCL)
    );
    assert_eq!(records[0]._return_code, -5i32 as u32);
    assert_eq!(
        records[1]._api_group,
        pti_api_group_id::PTI_API_GROUP_LEVELZERO
    );
    assert_eq!(records[1]._return_code, 0x7800_0001);
    assert_eq!(
        (records[2]._view_kind._view_kind, records[2]._api_group),
        (
            pti_view_kind::PTI_VIEW_RUNTIME_API,
            pti_api_group_id::PTI_API_GROUP_SYCL
        )
    );
}

#[test]
fn views_can_be_disabled_and_filtered_per_function_and_class() {
    let _s = serial();
    call(ApiGroup::OpenCl, opencl::clFinish, 0);
    assert!(
        api_records().is_empty(),
        "nothing is recorded with the view disabled"
    );
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    call(ApiGroup::Sycl, sycl::urQueueFinish, 0);
    assert!(
        api_records().is_empty(),
        "the driver view does not record runtime calls"
    );

    // The first per-function call makes the group granular: only that function.
    session::enable_api(
        ApiView::Driver,
        true,
        pti_api_group_id::PTI_API_GROUP_OPENCL,
        opencl::clFinish,
    )
    .unwrap();
    call(ApiGroup::OpenCl, opencl::clFlush, 0);
    call(ApiGroup::OpenCl, opencl::clFinish, 0);
    call(ApiGroup::LevelZero, level_zero::zeInit, 0);
    let ids: Vec<_> = api_records()
        .iter()
        .map(|r| (r._api_group, r._api_id))
        .collect();
    assert_eq!(
        ids,
        [
            (pti_api_group_id::PTI_API_GROUP_OPENCL, opencl::clFinish),
            (
                pti_api_group_id::PTI_API_GROUP_LEVELZERO,
                level_zero::zeInit
            )
        ],
        "OpenCL is granular, Level Zero still records everything"
    );

    // Classes.
    tool().api.lock().unwrap().clear();
    session::enable_api_class(
        ApiView::Driver,
        true,
        pti_api_class::PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION,
        pti_api_group_id::PTI_API_GROUP_LEVELZERO,
    )
    .unwrap();
    call(ApiGroup::LevelZero, level_zero::zeInit, 0);
    call(ApiGroup::LevelZero, level_zero::zeEventHostSynchronize, 0);
    session::enable_api_class(
        ApiView::Driver,
        false,
        pti_api_class::PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION,
        pti_api_group_id::PTI_API_GROUP_ALL,
    )
    .unwrap();
    call(ApiGroup::OpenCl, opencl::clFinish, 0);
    call(ApiGroup::LevelZero, level_zero::zeEventHostSynchronize, 0);
    session::enable_api_class(
        ApiView::Driver,
        true,
        pti_api_class::PTI_API_CLASS_GPU_OPERATION_CORE,
        pti_api_group_id::PTI_API_GROUP_OPENCL,
    )
    .unwrap();
    call(ApiGroup::OpenCl, opencl::clEnqueueMemcpyINTEL, 0);
    let ids: Vec<_> = api_records().iter().map(|r| r._api_id).collect();
    assert_eq!(
        ids,
        [
            level_zero::zeEventHostSynchronize,
            opencl::clEnqueueMemcpyINTEL
        ]
    );

    // Bad filters.
    let bad = session::enable_api(
        ApiView::Runtime,
        true,
        pti_api_group_id::PTI_API_GROUP_OPENCL,
        1,
    )
    .unwrap_err();
    assert_eq!(bad.code(), ResultCode::ErrorBadArgument);
    let bad = session::enable_api(
        ApiView::Driver,
        true,
        pti_api_group_id::PTI_API_GROUP_ALL,
        100_000,
    )
    .unwrap_err();
    assert_eq!(bad.code(), ResultCode::ErrorBadApiId);
}

#[test]
fn every_pushed_external_id_is_tied_to_each_call_that_owns_its_correlation_id() {
    let _s = serial();
    session::enable_view(pti_view_kind::PTI_VIEW_RUNTIME_API).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION).unwrap();
    use pti_view_external_kind::*;
    view::push_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 10).unwrap();
    view::push_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 11).unwrap();
    view::push_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_2, 20).unwrap();
    dispatch::simulate_call(
        ApiGroup::Sycl,
        sycl::urEnqueueKernelLaunch,
        CallInfo::default(),
        || {
            call(ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel, 0);
            0
        },
    )
    .unwrap();
    assert_eq!(
        view::pop_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_2),
        Ok(20)
    );
    call(ApiGroup::OpenCl, opencl::clFinish, 0);
    assert_eq!(
        view::pop_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0),
        Ok(11)
    );
    assert_eq!(
        view::pop_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0),
        Ok(10)
    );
    assert_eq!(
        view::pop_external_correlation_id(PTI_VIEW_EXTERNAL_KIND_CUSTOM_0),
        Err(pti_core::Error::ExternalIdQueueEmpty)
    );
    call(ApiGroup::OpenCl, opencl::clFlush, 0);

    let api = api_records();
    let external = tool().external.lock().unwrap().clone();
    assert_eq!(api.len(), 4);
    let (launch, nested, finish) = (&api[1], &api[0], &api[2]);
    assert_eq!(launch._api_id, sycl::urEnqueueKernelLaunch);
    assert_eq!(
        nested._correlation_id, launch._correlation_id,
        "the nested driver call shares the runtime call's ID"
    );
    let got: Vec<_> = external
        .iter()
        .map(|e| (e._correlation_id, e._external_kind, e._external_id))
        .collect();
    assert_eq!(
        got,
        [
            (launch._correlation_id, PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 10),
            (launch._correlation_id, PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 11),
            (launch._correlation_id, PTI_VIEW_EXTERNAL_KIND_CUSTOM_2, 20),
            (finish._correlation_id, PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 10),
            (finish._correlation_id, PTI_VIEW_EXTERNAL_KIND_CUSTOM_0, 11),
        ],
        "one record per pushed ID, none for the nested call nor once the stacks are empty"
    );
}

#[test]
fn flush_delivers_records_of_other_threads_including_exited_ones() {
    let _s = serial();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    // One thread stays alive (blocked) with records in its buffer; one exits with records.
    let alive = std::thread::spawn(move || {
        call(ApiGroup::OpenCl, opencl::clFinish, 1);
        tx.send(()).unwrap();
        while !d.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
    std::thread::spawn(|| call(ApiGroup::OpenCl, opencl::clFinish, 2))
        .join()
        .unwrap();
    rx.recv().unwrap();
    let statuses: Vec<_> = api_records().iter().map(|r| r._return_code).collect();
    done.store(true, Ordering::SeqCst);
    alive.join().unwrap();
    assert!(
        statuses.contains(&1) && statuses.contains(&2),
        "{statuses:?}"
    );
}

#[test]
fn records_without_a_buffer_are_dropped_counted_and_reported() {
    let _s = serial();
    let reported = Arc::new(AtomicUsize::new(0));
    let r = reported.clone();
    let listener = Subscriber::new(move |e| {
        if let Event::Critical(c) = e
            && c.code() == ResultCode::ErrorRecordsDropped
        {
            r.fetch_add(1, Ordering::SeqCst);
        }
    })
    .unwrap();
    listener.enable_domain(Domain::CriticalEvent, true).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    let t = tool();
    // Drain this thread's buffer so the next record needs a new one.
    session::flush().unwrap();
    let before = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API);
    let critical_before = critical::count(ResultCode::ErrorRecordsDropped);
    // A fresh thread has no buffer yet: with the tool refusing, all its records drop.
    t.refuse.store(true, Ordering::SeqCst);
    std::thread::spawn(|| (0..10).for_each(|_| call(ApiGroup::OpenCl, opencl::clFinish, 0)))
        .join()
        .unwrap();
    t.refuse.store(false, Ordering::SeqCst);
    assert_eq!(
        view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API),
        before + 10
    );
    assert_eq!(
        critical::count(ResultCode::ErrorRecordsDropped),
        critical_before + 1,
        "one event per run of drops"
    );
    assert_eq!(reported.load(Ordering::SeqCst), 1);
    // A buffer too small for one record is handed back unused, and the record counted.
    t.buffer_size.store(16, Ordering::SeqCst);
    std::thread::spawn(|| call(ApiGroup::OpenCl, opencl::clFinish, 0))
        .join()
        .unwrap();
    assert_eq!(
        view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API),
        before + 11
    );
    t.buffer_size.store(4096, Ordering::SeqCst);
    std::thread::spawn(|| call(ApiGroup::OpenCl, opencl::clFinish, 0))
        .join()
        .unwrap();
    assert_eq!(
        api_records().len(),
        1,
        "recording resumes once buffers come back"
    );
}

#[test]
fn full_buffers_are_handed_back_as_they_fill() {
    let _s = serial();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    let t = tool();
    t.buffer_size.store(48 * 4, Ordering::SeqCst);
    let completed = t.completed.load(Ordering::SeqCst);
    std::thread::spawn(|| (0..10).for_each(|i| call(ApiGroup::OpenCl, opencl::clFinish, i)))
        .join()
        .unwrap();
    assert!(
        t.completed.load(Ordering::SeqCst) >= completed + 2,
        "two full buffers went back without a flush"
    );
    let statuses: Vec<_> = api_records().iter().map(|r| r._return_code).collect();
    assert_eq!(
        statuses,
        (0..10).collect::<Vec<u32>>(),
        "in order, none lost"
    );
}

#[test]
fn overhead_records_measure_libpti_time() {
    let _s = serial();
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    session::enable_view(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD).unwrap();
    let start = pti_core::clock::now();
    while pti_core::clock::now() - start < 3_000_000 {
        call(ApiGroup::OpenCl, opencl::clFinish, 0);
    }
    session::flush().unwrap(); // the flush itself is recorded, delivered by the next flush
    session::flush().unwrap();
    let overhead = tool().overhead.lock().unwrap().clone();
    let time: Vec<_> = overhead
        .iter()
        .filter(|o| o._overhead_kind == pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_TIME)
        .collect();
    assert!(
        time.len() >= 2,
        "one record per millisecond window: {overhead:?}"
    );
    for o in &time {
        assert!(o._overhead_count > 0 && o._overhead_duration_ns > 0);
        assert!(
            o._overhead_duration_ns
                <= o._overhead_end_timestamp_ns - o._overhead_start_timestamp_ns
        );
    }
    assert!(
        overhead.iter().any(
            |o| o._overhead_kind == pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH
        )
    );
}

#[test]
fn enabling_needs_callbacks_and_a_real_kind() {
    let _s = serial();
    assert_eq!(
        session::enable_view(pti_view_kind::PTI_VIEW_INVALID)
            .unwrap_err()
            .code(),
        ResultCode::ErrorBadArgument
    );
    assert_eq!(
        session::enable_view(pti_view_kind::PTI_VIEW_RESERVED)
            .unwrap_err()
            .code(),
        ResultCode::ErrorBadArgument
    );
    // Loader 1.8.12, the one these machines run, cannot load its tracing layer at run time.
    assert_eq!(
        session::gpu_local_available().unwrap_err().code(),
        ResultCode::ErrorL0LocalProfilingNotSupported
    );
}
