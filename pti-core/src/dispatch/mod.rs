//! The dispatch entry: what every backend wrapper calls around a traced function.
//!
//! ```text
//! wrapper(args) = trace_call(group, id, || CallInfo { args, .. }, |scope| {
//!     let status = next_layer(args);
//!     (status, status)                 // (what the wrapper returns, the status callbacks see)
//! })
//! ```
//!
//! With nobody interested in `(group, id)`, [`trace_call`] costs one relaxed load and a branch
//! before running the body. Otherwise its slow path gives the call a correlation ID, delivers the
//! ENTER callbacks, takes the start time (if a record needs it), runs the body, takes the end
//! time, delivers the EXIT callbacks with the status, and writes the call's view records: its API
//! record, one external-correlation record per pushed external ID, and its overhead. Calls that a
//! callback (or a buffer callback) makes on its own thread are passed through untraced. A driver
//! call made inside a traced SYCL call shares the SYCL call's correlation ID.

use core::ffi::{CStr, c_void};
use core::ptr;

pub mod open;

use crate::api::{ApiGroup, ApiId, Site};
use crate::callback::ApiCallbackData;
use crate::callback::deliver::CallbackFrame;
use crate::correlation::RuntimeCallScope;
use crate::result::Error;
use crate::thread::ThreadState;
use crate::view::abi::pti_view_kind;
use crate::view::emit;
use crate::{clock, correlation, ids, interest, thread, view};

/// What a wrapper knows about its call before making it; built only when the call is traced.
#[derive(Clone, Copy, Debug)]
pub struct CallInfo<'a> {
    /// The backend's parameter struct for this function (`_args` of the callback data).
    pub args: *const c_void,
    /// The kernel a launch submits, when known.
    pub kernel_name: Option<&'a CStr>,
    /// The Level Zero or OpenCL context, when known.
    pub context: *mut c_void,
}

impl Default for CallInfo<'_> {
    fn default() -> Self {
        CallInfo {
            args: ptr::null(),
            kernel_name: None,
            context: ptr::null_mut(),
        }
    }
}

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for super::NoReturnCode {}
}

/// A traced function's status as callbacks see it (`_return_code` points at a copy of it).
///
/// Sealed: every status libpti traces is 32 bits wide (`ze_result_t`, `cl_int`,
/// `ur_result_t`), which [`crate::ApiCallbackData::return_code`] relies on.
pub trait ReturnCode: Copy + sealed::Sealed {
    /// Whether the function has a status at all.
    const PRESENT: bool;
    /// The status's 32 bits, as API records store it (0 without a status).
    fn bits(self) -> u32;
}

impl ReturnCode for i32 {
    const PRESENT: bool = true;
    fn bits(self) -> u32 {
        self as u32
    }
}

impl ReturnCode for u32 {
    const PRESENT: bool = true;
    fn bits(self) -> u32 {
        self
    }
}

/// For functions that return no status (`_return_code` is NULL).
#[derive(Clone, Copy, Debug)]
pub struct NoReturnCode;

impl ReturnCode for NoReturnCode {
    const PRESENT: bool = false;
    fn bits(self) -> u32 {
        0
    }
}

/// What the body of a traced call can learn and change.
#[derive(Debug)]
pub struct CallScope {
    correlation_id: u32,
    context: *mut c_void,
}

impl CallScope {
    fn untraced() -> Self {
        CallScope {
            correlation_id: 0,
            context: ptr::null_mut(),
        }
    }

    /// The call's correlation ID; 0 when the call is not traced.
    pub fn correlation_id(&self) -> u32 {
        self.correlation_id
    }

    /// Whether the call is traced (ENTER was processed, EXIT will be).
    pub fn is_traced(&self) -> bool {
        self.correlation_id != 0
    }

    /// Sets the context the EXIT callbacks see, e.g. the one a create call returned.
    pub fn set_context(&mut self, context: *mut c_void) {
        self.context = context;
    }
}

/// Runs `body` as the traced call `(group, api_id)`.
///
/// `info` is called only if the call is traced. `body` returns what the wrapper returns and the
/// status the EXIT callbacks see.
#[inline(always)]
pub fn trace_call<'a, R, C: ReturnCode>(
    group: ApiGroup,
    api_id: ApiId,
    info: impl FnOnce() -> CallInfo<'a>,
    body: impl FnOnce(&mut CallScope) -> (R, C),
) -> R {
    let interest = interest::load(group, api_id);
    if interest == 0 {
        return body(&mut CallScope::untraced()).0;
    }
    trace_slow(group, api_id, interest, info, body)
}

/// One traced call between its ENTER and its records: what EXIT needs from ENTER.
struct TracedCall {
    group: ApiGroup,
    api_id: ApiId,
    interest: u8,
    clock: clock::Source,
    correlation_id: u32,
    /// The call shares an enclosing runtime call's correlation ID.
    inherited_id: bool,
    /// Callback data, built only when a subscriber listens.
    data: Option<ApiCallbackData>,
    /// Slow-path entry time, when the overhead view measures it.
    entered: Option<u64>,
    start: u64,
}

impl TracedCall {
    /// Everything before the traced function runs: correlation ID, ENTER callbacks, start time.
    /// `frame` (large, so never moved) keeps what the callbacks need until EXIT.
    #[inline(always)]
    fn enter<'a>(
        frame: &mut CallbackFrame,
        state: &ThreadState,
        group: ApiGroup,
        api_id: ApiId,
        interest: u8,
        info: impl FnOnce() -> CallInfo<'a>,
    ) -> Option<Self> {
        let cell = interest::cell(group, api_id)?;
        let clock = clock::Source::current();
        let overhead_on = view::is_enabled(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD);
        let entered = overhead_on.then(|| clock.now());
        let outer = state.runtime_correlation.get();
        let correlation_id = correlation::for_call(group, state);
        let mut call = TracedCall {
            group,
            api_id,
            interest,
            clock,
            correlation_id,
            inherited_id: correlation_id == outer,
            data: None,
            entered,
            start: 0,
        };
        if interest & interest::CALLBACKS != 0 {
            let info = info();
            let data = call.data.insert(ApiCallbackData {
                site: Site::Enter,
                api_name: ids::name(group, api_id).map_or(ptr::null(), CStr::as_ptr),
                args: info.args,
                kernel_name: info.kernel_name.map_or(ptr::null(), CStr::as_ptr),
                return_code: ptr::null(),
                context: info.context,
                correlation_id,
                local_data: ptr::null_mut(),
            });
            frame.enter(cell, group, api_id, data, state);
        }
        if call.timed() {
            call.start = clock.now();
        }
        Some(call)
    }

    fn timed(&self) -> bool {
        self.interest & interest::API_RECORDS != 0 || self.entered.is_some()
    }

    /// Everything after the traced function returned: EXIT callbacks, then the view records.
    #[inline(always)]
    fn exit<C: ReturnCode>(
        &mut self,
        frame: &mut CallbackFrame,
        state: &ThreadState,
        code: C,
        context: *mut c_void,
    ) {
        let end = if self.timed() { self.clock.now() } else { 0 };
        if let Some(data) = self.data.as_mut() {
            data.site = Site::Exit;
            data.context = context;
            if C::PRESENT {
                data.return_code = &code as *const C as *const c_void;
            }
            frame.exit(self.group, self.api_id, data, state);
        }
        if self.interest & interest::API_RECORDS != 0 {
            let call = emit::ApiCall {
                group: self.group,
                api_id: self.api_id,
                correlation_id: self.correlation_id,
                start: self.start,
                end,
                status: code.bits(),
            };
            emit::api_record(state, &call);
        }
        // A call sharing its runtime call's ID had its pushed IDs recorded with that call.
        if self.interest & interest::EXTERNAL != 0 && !self.inherited_id {
            emit::external_records(state, self.correlation_id);
        }
        if let Some(entered) = self.entered {
            let left = self.clock.now();
            emit::overhead(
                state,
                left,
                self.start.saturating_sub(entered) + left.saturating_sub(end),
            );
        }
    }
}

#[inline(never)]
fn trace_slow<'a, R, C: ReturnCode>(
    group: ApiGroup,
    api_id: ApiId,
    interest: u8,
    info: impl FnOnce() -> CallInfo<'a>,
    body: impl FnOnce(&mut CallScope) -> (R, C),
) -> R {
    let mut body = Some(body);
    let traced = thread::with(|state| {
        if state.in_callback.get() {
            return None;
        }
        let mut frame = CallbackFrame::new();
        let mut call = TracedCall::enter(&mut frame, state, group, api_id, interest, info)?;
        let body = body.take().expect("body runs once");
        let mut scope = CallScope {
            correlation_id: call.correlation_id,
            context: call.data.as_ref().map_or(ptr::null_mut(), |d| d.context),
        };
        let (result, code) = {
            let _runtime = RuntimeCallScope::enter(group, call.correlation_id, state);
            body(&mut scope)
        };
        call.exit(&mut frame, state, code, scope.context);
        Some(result)
    })
    .flatten();
    match traced {
        Some(result) => result,
        None => (body.take().expect("body runs once"))(&mut CallScope::untraced()).0,
    }
}

/// Runs `body` as a simulated traced call of `(group, api_id)`: the test backend.
///
/// Subscribers see exactly what a real backend would deliver for that function. Tools use it to
/// test their callbacks without a runtime; libpti's own tests use it to drive the dispatch.
pub fn simulate_call(
    group: ApiGroup,
    api_id: ApiId,
    info: CallInfo<'_>,
    body: impl FnOnce() -> i32,
) -> Result<i32, Error> {
    if !ids::is_valid(group, api_id) {
        return Err(Error::BadApiId {
            group: group as u32,
            id: api_id,
        });
    }
    Ok(trace_call(
        group,
        api_id,
        || info,
        |_| {
            let status = body();
            (status, status)
        },
    ))
}
