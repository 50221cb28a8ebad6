//! What could not be recorded reaches the tool and the user: commands of functions without a
//! record kind are counted and announced once, dropped records and those commands come back as
//! `PTI_VIEW_EXT_LOSS` records at the next flush, and every critical event is a line in the
//! file `PTI_LOG` names. Driven through the simulated-call backend; one test, since the state
//! is per process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pti_core::callback::critical;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, Buffer, BufferCallbacks, FilledBuffer, Record};
use pti_core::{ApiGroup, ResultCode};

#[derive(Default)]
struct Tool {
    losses: Mutex<Vec<pti_view_record_loss>>,
    refuse: AtomicBool,
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        (!self.refuse.load(Ordering::SeqCst))
            .then(|| Buffer::from_boxed(vec![0u8; 4096].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        for record in filled.records() {
            if let Record::Loss(r) = record {
                self.losses.lock().unwrap().push(*r);
            }
        }
        // SAFETY: this tool lends only buffers made by Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

fn call(id: u32, status: i32) {
    dispatch::simulate_call(ApiGroup::OpenCl, id, CallInfo::default(), || status).unwrap();
}

#[test]
fn losses_are_counted_itemised_and_logged() {
    let dir = std::env::temp_dir().join(format!("pti-loss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log-%p.txt");
    // SAFETY: the first thing the test does, before any thread of its own starts.
    unsafe { std::env::set_var("PTI_LOG", &log) };

    let tool = Arc::new(Tool::default());
    session::set_buffer_callbacks(tool.clone());
    session::enable_view(pti_view_kind::PTI_VIEW_EXT_LOSS).unwrap();
    let migrate = opencl::clEnqueueMigrateMemObjects;

    // Without a device view, a migration is nobody's business.
    call(migrate, 0);
    assert_eq!(view::unrecorded_count(ApiGroup::OpenCl, migrate), 0);

    // With one, each successful migration is counted; the first is announced, once.
    let announced = critical::count(ResultCode::ErrorCommandsNotRecorded);
    session::enable_view(pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY).unwrap();
    for _ in 0..3 {
        call(migrate, 0);
    }
    call(migrate, -5); // CL_OUT_OF_RESOURCES: submitted nothing
    assert_eq!(view::unrecorded_count(ApiGroup::OpenCl, migrate), 3);
    assert_eq!(
        critical::count(ResultCode::ErrorCommandsNotRecorded),
        announced + 1
    );
    session::disable_view(pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY).unwrap();

    // Five API records find no buffer.
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    tool.refuse.store(true, Ordering::SeqCst);
    let dropped = view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API);
    for _ in 0..5 {
        call(opencl::clFinish, 0);
    }
    tool.refuse.store(false, Ordering::SeqCst);
    session::disable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    assert_eq!(
        view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API) - dropped,
        5
    );

    // The next flush itemises both.
    session::flush().unwrap();
    let losses = std::mem::take(&mut *tool.losses.lock().unwrap());
    assert_eq!(losses.len(), 2, "{losses:?}");
    let unrecorded = losses
        .iter()
        .find(|l| l._reason == pti_view_loss_reason::PTI_VIEW_LOSS_NO_RECORD_KIND)
        .expect("a loss record of the migrations");
    assert_eq!(unrecorded._count, 3);
    assert_eq!(unrecorded._lost_kind, pti_view_kind::PTI_VIEW_INVALID);
    assert_eq!(
        unrecorded._api_group,
        pti_api_group_id::PTI_API_GROUP_OPENCL
    );
    assert_eq!(unrecorded._api_id, migrate);
    let no_buffer = losses
        .iter()
        .find(|l| l._reason == pti_view_loss_reason::PTI_VIEW_LOSS_NO_BUFFER)
        .expect("a loss record of the dropped API records");
    assert_eq!(no_buffer._count, 5);
    assert_eq!(no_buffer._lost_kind, pti_view_kind::PTI_VIEW_DRIVER_API);
    assert_eq!(no_buffer._api_id, 0);
    for l in &losses {
        assert!(l._first_timestamp <= l._last_timestamp && l._first_timestamp > 0);
        assert_eq!(l._process_id, std::process::id());
    }
    // Said once: the next flush has nothing new to say.
    session::flush().unwrap();
    assert!(tool.losses.lock().unwrap().is_empty());
    assert_eq!(view::emitted_count(pti_view_kind::PTI_VIEW_EXT_LOSS), 2);
    session::disable_view(pti_view_kind::PTI_VIEW_EXT_LOSS).unwrap();

    // The user's log got both critical events, one line each, in this process's file.
    let text = std::fs::read_to_string(dir.join(format!("log-{}.txt", std::process::id())))
        .expect("the log file PTI_LOG names, %p replaced by the process ID");
    let lines: Vec<&str> = text.lines().collect();
    let with = |code: &str| lines.iter().filter(|l| l.contains(code)).count();
    assert_eq!(
        with("PTI_ERROR_COMMANDS_NOT_RECORDED: clEnqueueMigrateMemObjects"),
        1,
        "{text}"
    );
    assert_eq!(with("PTI_ERROR_RECORDS_DROPPED"), 1, "{text}");
    let prefix = format!("libpti[{}] ", std::process::id());
    assert!(lines.iter().all(|l| l.starts_with(&prefix)), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
