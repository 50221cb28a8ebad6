//! The records the dispatch writes for a traced call: the API record, the external-correlation
//! records, and the overhead accounting.

use super::abi::*;
use super::buffer::append;
use crate::api::{ApiGroup, ApiId};
use crate::thread::ThreadState;

/// The view that records calls of `group`.
pub(crate) const fn api_view(group: ApiGroup) -> pti_view_kind {
    match group {
        ApiGroup::LevelZero | ApiGroup::OpenCl => pti_view_kind::PTI_VIEW_DRIVER_API,
        ApiGroup::Sycl => pti_view_kind::PTI_VIEW_RUNTIME_API,
    }
}

/// What a traced call's API record holds.
pub(crate) struct ApiCall {
    pub(crate) group: ApiGroup,
    pub(crate) api_id: ApiId,
    pub(crate) correlation_id: u32,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) status: u32,
}

/// Writes the API record of a call.
#[inline]
pub(crate) fn api_record(state: &ThreadState, call: &ApiCall) {
    let kind = api_view(call.group);
    append(
        state,
        kind,
        pti_view_record_api {
            _view_kind: pti_view_record_base::of(kind),
            _start_timestamp: call.start,
            _end_timestamp: call.end.max(call.start),
            _api_group: call.group.into(),
            _api_id: call.api_id,
            _process_id: crate::thread::process_id(),
            _thread_id: state.thread_id(),
            _correlation_id: call.correlation_id,
            _return_code: call.status,
        },
    );
}

/// Writes one external-correlation record per ID pushed on this thread.
pub(crate) fn external_records(state: &ThreadState, correlation_id: u32) {
    if state.external_count.get() == 0 {
        return;
    }
    for (k, kind) in pti_view_external_kind::PUSHABLE.into_iter().enumerate() {
        // One ID at a time, the borrow released before each append: appending may run the
        // tool's buffer callbacks, which may push or pop.
        let mut i = 0;
        while let Some(id) = (state.external.try_borrow().ok()).and_then(|e| e[k].get(i).copied()) {
            i += 1;
            append(
                state,
                pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION,
                pti_view_record_external_correlation {
                    _view_kind: pti_view_record_base::of(
                        pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION,
                    ),
                    _correlation_id: correlation_id,
                    _external_id: id,
                    _external_kind: kind,
                },
            );
        }
    }
}

/// Length of a thread's overhead window: one record per window with traced calls.
const OVERHEAD_WINDOW_NS: u64 = 1_000_000;

/// Adds `spent_ns` of libpti's own time, spent at `now` on this thread, to its window, and
/// writes the window's record once it is [`OVERHEAD_WINDOW_NS`] long.
pub(crate) fn overhead(state: &ThreadState, now: u64, spent_ns: u64) {
    let mut w = state.overhead.get();
    if w.count == 0 {
        w.start = now.saturating_sub(spent_ns);
    }
    w.count += 1;
    w.total_ns += spent_ns;
    state.overhead.set(w);
    if now.saturating_sub(w.start) >= OVERHEAD_WINDOW_NS {
        close_overhead_window(state, now);
    }
}

/// Writes the record of this thread's overhead window so far, if it holds anything, and starts
/// a new window.
pub(crate) fn close_overhead_window(state: &ThreadState, now: u64) {
    let w = state.overhead.take();
    if w.count > 0 {
        write_overhead(
            state,
            pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_TIME,
            w.start,
            now,
            w.count,
            w.total_ns,
        );
    }
}

/// Writes an overhead record.
pub(crate) fn write_overhead(
    state: &ThreadState,
    kind: pti_view_overhead_kind,
    start: u64,
    end: u64,
    count: u64,
    total_ns: u64,
) {
    append(
        state,
        pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD,
        pti_view_record_overhead {
            _view_kind: pti_view_record_base::of(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD),
            _overhead_start_timestamp_ns: start,
            _overhead_end_timestamp_ns: end,
            _overhead_thread_id: state.thread_id(),
            _api_id: 0,
            _overhead_count: count,
            _overhead_duration_ns: total_ns,
            _overhead_kind: kind,
        },
    );
}
