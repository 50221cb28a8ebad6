//! Calls that a backend sees as two events: a tracing layer's prologue and epilogue (Level Zero),
//! a runtime's begin and end notifications (XPTI). [`begin`] does everything [`super::trace_call`]
//! does before the traced function runs, and leaves the call *open* on this thread; [`end`] does
//! the rest.
//!
//! Open calls live on a per-thread stack (`crate::thread_stack`), because calls on one thread
//! nest and never overlap. `begin` returns a token (the call's depth on the stack, 0 for a call
//! that is not traced) that the backend keeps with the call (the tracing layer's per-call user
//! data) and hands to `end`. The stack is never borrowed while tool code runs: a call is built,
//! delivered, then pushed, and popped before its EXIT is delivered.
//!
//! The backends that call these have their own panic boundaries (the Level Zero tracer, XPTI);
//! one that catches a panic between `begin` and `end` drops what it opened with [`abandon_from`].

use core::ffi::c_void;

use super::{CallInfo, ReturnCode, TracedCall};
use crate::api::{ApiGroup, ApiId, Domain};
use crate::callback::deliver::CallbackFrame;
use crate::thread_stack::{LocalStack, ThreadStack};
use crate::{interest, thread};

/// A call whose ENTER was delivered and whose EXIT is still to come.
struct OpenCall {
    call: TracedCall,
    frame: CallbackFrame,
    /// The enclosing runtime call's correlation ID, restored at `end`.
    previous_runtime: u32,
}

thread_local! {
    /// Open calls by token (their depth on the stack).
    static OPEN: ThreadStack<usize, OpenCall> = const { ThreadStack::new() };
}

/// Opens the traced call `(group, api_id)`: correlation ID, ENTER callbacks, start time. Returns
/// the token to give to [`end`]; 0 when the call is not traced (nobody listens, or it is made
/// from a callback). `info` is called only if the call is traced.
#[inline(always)]
pub fn begin<'a>(group: ApiGroup, api_id: ApiId, info: impl FnOnce() -> CallInfo<'a>) -> usize {
    let interest = interest::load(group, api_id);
    if interest == 0 {
        return 0;
    }
    begin_slow(group, api_id, interest, info)
}

#[inline(never)]
fn begin_slow<'a>(
    group: ApiGroup,
    api_id: ApiId,
    interest: u8,
    info: impl FnOnce() -> CallInfo<'a>,
) -> usize {
    thread::with(|state| {
        if state.in_callback.get() {
            return 0;
        }
        let mut frame = CallbackFrame::new();
        let Some(call) = TracedCall::enter(&mut frame, state, group, api_id, interest, info) else {
            return 0;
        };
        let previous_runtime = state.runtime_correlation.get();
        if group.domain() == Domain::RuntimeApi {
            state.runtime_correlation.set(call.correlation_id);
        }
        let token = OPEN.depth() + 1;
        let open = OpenCall {
            call,
            frame,
            previous_runtime,
        };
        if OPEN.push(token, open) {
            token
        } else {
            // Not kept: no EXIT will come. The runtime call it began ends here too.
            state.runtime_correlation.set(previous_runtime);
            0
        }
    })
    .unwrap_or(0)
}

/// How many calls are open on this thread: a backend notes it before [`begin`], to drop what it
/// opened if it has to give up on the call ([`abandon_from`]).
pub fn depth() -> usize {
    OPEN.depth()
}

/// Drops the calls opened on this thread since it had `depth` open, without their EXIT (a backend
/// caught a panic while opening or closing one), and restores the runtime call that was running
/// then.
pub fn abandon_from(depth: usize) {
    if let Some((open, _)) = OPEN.close(depth + 1) {
        thread::with(|state| state.runtime_correlation.set(open.previous_runtime));
    }
}

/// The correlation ID of the open call `token` (0 for none).
pub fn correlation_id(token: usize) -> u32 {
    if token == 0 {
        return 0;
    }
    OPEN.with_key(token, |o| o.call.correlation_id).unwrap_or(0)
}

/// Closes the open call `token` with status `code`: EXIT callbacks, the call's records. Calls
/// opened after it and never closed (a runtime that skipped their end) are dropped with it.
pub fn end<C: ReturnCode>(token: usize, code: C, context: *mut c_void) {
    if token == 0 {
        return;
    }
    let Some((mut open, skipped)) = OPEN.close(token) else {
        return;
    };
    if skipped > 0 {
        crate::callback::critical::raise(
            crate::result::ResultCode::ErrorRecordsDropped,
            format_args!(
                "{skipped} traced call(s) opened inside another never ended (their runtime did \
                 not report the end): their EXIT callbacks and API records are lost"
            ),
        );
    }
    thread::with(|state| {
        state.runtime_correlation.set(open.previous_runtime);
        open.call.exit(&mut open.frame, state, code, context, 0);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Site;
    use crate::callback::{self, Event};
    use crate::ids;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_call_opened_and_closed_in_two_steps_delivers_enter_and_exit() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        // The engine's own subscriber table (the session would also tell the backends).
        let sub = callback::subscribe(Box::new(move |event| {
            if let Event::ApiCall { api_id, data, .. } = event {
                sink.lock().unwrap().push((
                    api_id,
                    data.site(),
                    data.correlation_id(),
                    data.return_code(),
                ));
            }
        }))
        .unwrap();
        let (outer_id, inner_id) = (
            ids::opencl::clEnqueueNDRangeKernel,
            ids::opencl::clCreateKernel,
        );
        callback::enable(sub, ApiGroup::OpenCl, outer_id, true).unwrap();
        callback::enable(sub, ApiGroup::OpenCl, inner_id, true).unwrap();
        let outer = begin(ApiGroup::OpenCl, outer_id, CallInfo::default);
        let inner = begin(ApiGroup::OpenCl, inner_id, CallInfo::default);
        assert_eq!((outer, inner), (1, 2));
        let (outer_corr, inner_corr) = (correlation_id(outer), correlation_id(inner));
        assert!(outer_corr != 0 && inner_corr != 0 && outer_corr != inner_corr);
        end(inner, 7i32, core::ptr::null_mut());
        end(outer, 0i32, core::ptr::null_mut());
        // An inner call whose end never comes is dropped with its outer call.
        let outer = begin(ApiGroup::OpenCl, outer_id, CallInfo::default);
        let _lost = begin(ApiGroup::OpenCl, inner_id, CallInfo::default);
        end(outer, 0i32, core::ptr::null_mut());
        assert_eq!(depth(), 0);
        callback::unsubscribe(sub).unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], (outer_id, Site::Enter, outer_corr, None));
        assert_eq!(seen[1], (inner_id, Site::Enter, inner_corr, None));
        assert_eq!(seen[2], (inner_id, Site::Exit, inner_corr, Some(7)));
        assert_eq!(seen[3], (outer_id, Site::Exit, outer_corr, Some(0)));
        assert_eq!(seen.len(), 7, "{seen:?}");
        assert_eq!(
            begin(
                ApiGroup::OpenCl,
                ids::opencl::clGetPlatformInfo,
                CallInfo::default
            ),
            0
        );
    }
}
