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
//! ENTER callbacks, runs the body, and delivers the EXIT callbacks with the status. Calls that a
//! callback makes on its own thread are passed through untraced. A driver call made inside a
//! traced SYCL call shares the SYCL call's correlation ID.

use core::ffi::{CStr, c_void};
use core::ptr;

use crate::api::{ApiGroup, ApiId, Site};
use crate::callback::ApiCallbackData;
use crate::callback::deliver::CallbackFrame;
use crate::correlation::RuntimeCallScope;
use crate::result::Error;
use crate::{correlation, ids, interest, thread};

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
}

impl ReturnCode for i32 {
    const PRESENT: bool = true;
}

impl ReturnCode for u32 {
    const PRESENT: bool = true;
}

/// For functions that return no status (`_return_code` is NULL).
#[derive(Clone, Copy, Debug)]
pub struct NoReturnCode;

impl ReturnCode for NoReturnCode {
    const PRESENT: bool = false;
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
    if interest::load(group, api_id) == 0 {
        return body(&mut CallScope::untraced()).0;
    }
    trace_slow(group, api_id, info, body)
}

#[inline(never)]
fn trace_slow<'a, R, C: ReturnCode>(
    group: ApiGroup,
    api_id: ApiId,
    info: impl FnOnce() -> CallInfo<'a>,
    body: impl FnOnce(&mut CallScope) -> (R, C),
) -> R {
    let mut body = Some(body);
    let traced = thread::with(|state| {
        let cell = interest::cell(group, api_id)?;
        if state.in_callback.get() {
            return None;
        }
        let body = body.take().expect("body runs once");
        let info = info();
        let mut data = ApiCallbackData {
            site: Site::Enter,
            api_name: ids::name(group, api_id).map_or(ptr::null(), CStr::as_ptr),
            args: info.args,
            kernel_name: info.kernel_name.map_or(ptr::null(), CStr::as_ptr),
            return_code: ptr::null(),
            context: info.context,
            correlation_id: correlation::for_call(group, state),
            local_data: ptr::null_mut(),
        };
        let mut frame = CallbackFrame::new();
        frame.enter(cell, group, api_id, &data, state);
        let mut scope = CallScope {
            correlation_id: data.correlation_id,
            context: info.context,
        };
        let (result, code) = {
            let _runtime = RuntimeCallScope::enter(group, data.correlation_id, state);
            body(&mut scope)
        };
        data.site = Site::Exit;
        data.context = scope.context;
        if C::PRESENT {
            data.return_code = &code as *const C as *const c_void;
        }
        frame.exit(group, api_id, &data, state);
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
