//! Pausing collection (`session::set_paused`): calls made while paused are not recorded, the
//! views stay enabled, and a resume records again. A test binary of its own: the pause is the
//! whole process's.

use std::sync::{Arc, Mutex};

use pti_core::view::{Buffer, BufferCallbacks, FilledBuffer, Record, abi::*};
use pti_core::{ApiGroup, dispatch, ids, session};

/// Keeps the API IDs of the driver records it receives.
struct Tool(Mutex<Vec<u32>>);

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        Some(Buffer::from_boxed(vec![0u8; 4096].into_boxed_slice()))
    }
    fn complete(&self, filled: FilledBuffer) {
        for record in filled.records() {
            if let Record::Api(api) = record {
                self.0.lock().unwrap().push(api._api_id);
            }
        }
        // SAFETY: every buffer this tool lends comes from Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

fn call(id: u32) {
    dispatch::simulate_call(ApiGroup::OpenCl, id, Default::default(), || 0).unwrap();
}

#[test]
fn calls_made_while_paused_are_not_recorded() {
    let tool = Arc::new(Tool(Mutex::new(Vec::new())));
    session::set_buffer_callbacks(tool.clone());
    session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    assert!(!session::is_paused());

    call(ids::opencl::clFinish);
    assert!(!session::set_paused(true), "was not paused");
    assert!(session::is_paused());
    call(ids::opencl::clFlush);
    assert!(
        !pti_core::view::is_enabled(pti_view_kind::PTI_VIEW_DRIVER_API),
        "the view does not collect while paused"
    );
    assert!(
        session::set_paused(true),
        "pauses do not nest: already paused"
    );
    assert!(session::set_paused(false));
    call(ids::opencl::clWaitForEvents);
    session::flush().unwrap();

    let got = tool.0.lock().unwrap().clone();
    assert!(got.contains(&ids::opencl::clFinish), "{got:?}");
    assert!(
        !got.contains(&ids::opencl::clFlush),
        "recorded while paused: {got:?}"
    );
    assert!(got.contains(&ids::opencl::clWaitForEvents), "{got:?}");
    // The view stayed enabled through the pause: the call after the resume was recorded
    // without enabling it again, and it collects.
    assert!(pti_core::view::is_enabled(
        pti_view_kind::PTI_VIEW_DRIVER_API
    ));
}
