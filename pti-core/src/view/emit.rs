//! The records the dispatch writes for a traced call: the API record, the external-correlation
//! records, and the overhead accounting.

use core::sync::atomic::{AtomicBool, Ordering};

use super::abi::*;
use super::buffer::{append, append_with};
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
    let (api_id, process_id, thread_id) = (
        crate::ids::as_written(call.group, call.api_id),
        crate::thread::process_id(),
        state.thread_id(),
    );
    append_with(state, kind, || pti_view_record_api {
        _view_kind: pti_view_record_base::of(kind),
        _start_timestamp: call.start,
        _end_timestamp: call.end.max(call.start),
        _api_group: call.group.into(),
        _api_id: api_id,
        _process_id: process_id,
        _thread_id: thread_id,
        _correlation_id: call.correlation_id,
        _return_code: call.status,
    });
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

/// One overhead record per traced call, as Intel PTI writes them, instead of per window.
static PER_CALL: AtomicBool = AtomicBool::new(false);

/// From now on, overhead records are written one per traced call (count 1, the call's API ID,
/// kind TIME), as Intel PTI's are; the Intel face asks for it when its tool enables the overhead
/// view. Process-wide, like the faces' one clock.
pub fn overhead_per_call() {
    PER_CALL.store(true, Ordering::Relaxed);
}

/// Accounts `spent_ns` of libpti's own time in call `api_id`, spent until `now` on this thread:
/// added to the thread's window, whose record is written once it is [`OVERHEAD_WINDOW_NS`]
/// long, or written as the call's own record after [`overhead_per_call`].
pub(crate) fn overhead(state: &ThreadState, now: u64, spent_ns: u64, api_id: ApiId) {
    if PER_CALL.load(Ordering::Relaxed) {
        let kind = pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_TIME;
        write_overhead(
            state,
            kind,
            now.saturating_sub(spent_ns),
            now,
            1,
            spent_ns,
            api_id,
        );
        return;
    }
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
            0,
        );
    }
}

/// Writes an overhead record (`api_id` 0 when it covers several calls or none).
pub(crate) fn write_overhead(
    state: &ThreadState,
    kind: pti_view_overhead_kind,
    start: u64,
    end: u64,
    count: u64,
    total_ns: u64,
    api_id: ApiId,
) {
    append(
        state,
        pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD,
        pti_view_record_overhead {
            _view_kind: pti_view_record_base::of(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD),
            _overhead_start_timestamp_ns: start,
            _overhead_end_timestamp_ns: end,
            _overhead_thread_id: state.thread_id(),
            _api_id: api_id,
            _overhead_count: count,
            _overhead_duration_ns: total_ns,
            _overhead_kind: kind,
        },
    );
}
