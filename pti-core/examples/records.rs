//! The safe Rust API's views: buffers lent to libpti through a [`BufferCallbacks`]
//! implementation, the driver-API view enabled, calls made (through libpti's simulated-call
//! backend, the same dispatch the real interception uses), a flush, and the records read back
//! typed.
//!
//! Run: `cargo run -p pti-core --example records`

use std::sync::{Arc, Mutex};

use pti_core::ApiGroup;
use pti_core::dispatch::{CallInfo, simulate_call};
use pti_core::ids::level_zero::{zeCommandListAppendLaunchKernel, zeEventHostSynchronize};
use pti_core::session;
use pti_core::view::abi::pti_view_kind;
use pti_core::view::{Buffer, BufferCallbacks, FilledBuffer, Record};

/// Lends 64 KiB buffers and keeps one line per record.
#[derive(Default)]
struct Tool {
    lines: Mutex<Vec<String>>,
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        Some(Buffer::from_boxed(vec![0u8; 64 << 10].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        let mut lines = self.lines.lock().unwrap();
        for record in filled.records() {
            if let Record::Api(api) = record {
                lines.push(format!(
                    "API {} of group {:?}: correlation {}, {} ns on thread {}",
                    api._api_id,
                    api._api_group,
                    api._correlation_id,
                    api._end_timestamp - api._start_timestamp,
                    api._thread_id
                ));
            }
        }
        // SAFETY: the buffer is one `request` made with `Buffer::from_boxed`.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

fn main() -> Result<(), pti_core::Error> {
    let tool = Arc::new(Tool::default());
    session::set_buffer_callbacks(tool.clone());
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API)?;
    for id in [zeCommandListAppendLaunchKernel, zeEventHostSynchronize] {
        simulate_call(ApiGroup::LevelZero, id, CallInfo::default(), || 0)?;
    }
    session::flush()?;
    let lines = tool.lines.lock().unwrap();
    for line in lines.iter() {
        println!("{line}");
    }
    assert_eq!(lines.len(), 2, "one record per call");
    Ok(())
}
