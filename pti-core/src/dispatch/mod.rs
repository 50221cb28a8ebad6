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
//! record, one external-correlation record per pushed external ID, and its overhead. A call that
//! only views want (no callbacks, external IDs, loss counts or overhead) takes a shorter slow path
//! that does the same for it (`trace_records_only`; OpenCL's enqueue calls have their own, in
//! `backend::opencl::commands`). Calls that a callback (or a buffer callback) makes on its own
//! thread are passed through untraced. A driver call made inside a traced SYCL call shares the
//! SYCL call's correlation ID.
//!
//! # Panics
//!
//! The traced program enters here, so libpti's work on the slow path runs behind the panic
//! boundary of `crate::boundary` ([`Entry::Dispatch`]): ENTER in one [`boundary::catch`], EXIT
//! and the records in another, the body (the real call) in neither. A panic before the body
//! leaves the call untraced; one after it leaves the call's result as it was. An override (a
//! backend's function that makes the real call itself, see [`run_override`]) has its own
//! boundary, and makes the real call through [`CallScope::call_next`], so that a panic inside
//! the override never makes the real call twice nor skips it. After a caught panic, the thread's
//! traced calls pass untraced and are counted (`boundary::untraced_calls`).

use core::any::TypeId;
use core::cell::Cell;
use core::ffi::{CStr, c_void};
use core::ptr;

pub mod open;

use crate::api::{ApiGroup, ApiId, Site};
use crate::boundary::{self, Entry};
use crate::callback::ApiCallbackData;
use crate::callback::deliver::CallbackFrame;
use crate::correlation::RuntimeCallScope;
use crate::result::Error;
use crate::thread::ThreadState;
use crate::view::abi::pti_view_kind;
use crate::view::emit;
use crate::{clock, correlation, fault, ids, interest, thread, view};

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
    /// The real call of an override (see [`CallScope::call_next`]).
    real: Cell<RealCall>,
    /// The clock the call's record is stamped with, and the call's start on it (0: the call is
    /// not timed); an override times its command with them instead of reading the clock again.
    clock: clock::Source,
    start: u64,
    /// When an override's real call returned (0: not said): the call's record ends there.
    real_end: Cell<u64>,
    /// The calling thread's state (NULL: the call is not traced), so that an override need not
    /// look it up again (each look is a TLS lookup in a shared library). See
    /// [`CallScope::thread`] for why it stays valid.
    thread: *const ThreadState,
}

/// Where an override's real call stands.
#[derive(Clone, Copy, Debug)]
enum RealCall {
    NotMade,
    Making,
    /// Made; what it returned (see [`CallResult`]), and its type.
    Made(u64, TypeId),
}

mod result_sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// What a real call returns, kept as 64 bits while an override runs: statuses and handles.
///
/// Sealed: implemented for the 32- and 64-bit integers, raw pointers and `()`, every return type
/// of an OpenCL function.
pub trait CallResult: Copy + 'static + result_sealed::Sealed {
    /// The value's bits.
    fn to_bits(self) -> u64;
    /// The value from [`CallResult::to_bits`].
    fn from_bits(bits: u64) -> Self;
}

macro_rules! call_result_int {
    ($($t:ty),*) => {$(
        impl result_sealed::Sealed for $t {}
        impl CallResult for $t {
            fn to_bits(self) -> u64 {
                self as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}
call_result_int!(i32, u32, i64, u64, usize);

impl result_sealed::Sealed for () {}
impl CallResult for () {
    fn to_bits(self) -> u64 {
        0
    }
    fn from_bits(_: u64) -> Self {}
}

impl<T: 'static> result_sealed::Sealed for *mut T {}
impl<T: 'static> CallResult for *mut T {
    fn to_bits(self) -> u64 {
        self as usize as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as usize as *mut T
    }
}

impl<T: 'static> result_sealed::Sealed for *const T {}
impl<T: 'static> CallResult for *const T {
    fn to_bits(self) -> u64 {
        self as usize as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as usize as *const T
    }
}

impl CallScope {
    fn new(
        correlation_id: u32,
        context: *mut c_void,
        clock: clock::Source,
        start: u64,
        thread: *const ThreadState,
    ) -> Self {
        CallScope {
            correlation_id,
            context,
            real: Cell::new(RealCall::NotMade),
            clock,
            start,
            real_end: Cell::new(0),
            thread,
        }
    }

    fn untraced() -> Self {
        Self::new(0, ptr::null_mut(), clock::Source::HOST, 0, ptr::null())
    }

    /// The state of the thread making the call; `None` where the call is not traced.
    pub(crate) fn thread(&self) -> Option<&ThreadState> {
        // SAFETY: a traced scope is made only by `traced_body`, from the state it borrows for
        // its whole run, and lives inside that run (its constructors are private to this module,
        // so a body given `&mut CallScope` cannot replace it with one of its own making, only
        // swap it with another of this thread's, which points at the same state); the state of
        // a thread outlives every call the thread makes.
        unsafe { self.thread.as_ref() }
    }

    /// The time at which the call began (as its API record has it), or now where the call is not
    /// timed: one clock read fewer for an override that times what its call submits.
    pub fn start_or_now(&self) -> u64 {
        match self.start {
            0 if !self.is_traced() => clock::now(),
            0 => self.clock.now(),
            start => start,
        }
    }

    /// Reads the clock now, and takes that as when the real call returned: the call's API
    /// record ends there, and the override uses the same time for what it submitted.
    pub fn real_call_returned(&self) -> u64 {
        if !self.is_traced() {
            return clock::now();
        }
        let now = self.clock.now();
        self.real_end.set(now);
        now
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

    /// Makes the program's call (the *real call*) for an override: `call` calls the next layer.
    /// The scope notes that it was made and what it returned, so that a panic later in the
    /// override returns that result rather than making the call again (see [`run_override`]).
    /// An override whose first real call the runtime refused may make a second, changed one
    /// (the one whose result is kept).
    pub fn call_next<T: CallResult>(&self, call: impl FnOnce() -> T) -> T {
        self.call_next_keeping(call, |r| *r)
    }

    /// As [`CallScope::call_next`], for a real call wrapped in code that returns more than the
    /// override returns (a status beside it): `keep` picks what the override returns.
    pub fn call_next_keeping<T, K: CallResult>(
        &self,
        call: impl FnOnce() -> T,
        keep: impl FnOnce(&T) -> K,
    ) -> T {
        fault::point("override.before_call");
        self.real.set(RealCall::Making);
        let result = call();
        let kept = keep(&result);
        self.real
            .set(RealCall::Made(kept.to_bits(), TypeId::of::<K>()));
        fault::point("override.after_call");
        result
    }
}

/// Runs `body`, a backend's override of a function: backend code that makes the real call itself
/// ([`CallScope::call_next`]). `untraced` makes the real call plainly, as the program asked.
///
/// The override runs behind the panic boundary ([`Entry::Dispatch`]). If it panics before its
/// real call, `untraced` makes the call; if after, the real call's result is returned: the call
/// is made exactly once either way. After a panic on this thread, or another panic of the
/// dispatch there, overrides on this thread run `untraced` only.
#[inline]
pub fn run_override<R: CallResult>(
    scope: &mut CallScope,
    untraced: impl FnOnce() -> R,
    body: impl FnOnce(&mut CallScope) -> R,
) -> R {
    // A traced scope's thread was found on by `traced_body` just before it ran this body (and a
    // panic there would have left the call untraced): only an untraced scope is asked here,
    // which saves a traced call a TLS lookup.
    if !scope.is_traced() && boundary::is_off(Entry::Dispatch) {
        return untraced();
    }
    if let Some(result) = boundary::catch(Entry::Dispatch, || body(&mut *scope)) {
        return result;
    }
    match scope.real.get() {
        RealCall::NotMade => untraced(),
        RealCall::Made(bits, ty) if ty == TypeId::of::<R>() => R::from_bits(bits),
        // Cannot happen: a real call is a call into C, which cannot unwind, and an override
        // returns what its real call returned. Neither calling again nor guessing a value
        // would be right; the zero value (a null handle, CL_SUCCESS) is what is left.
        RealCall::Making | RealCall::Made(..) => R::from_bits(0),
    }
}

/// Whether anyone traces the call `(group, api_id)` (a callback, a view, a loss count): one
/// relaxed load. A wrapper whose override has nothing to do for an untraced call (an OpenCL
/// enqueue's) asks it first and passes such a call straight on, which [`trace_call`] would do
/// too after more setup.
#[inline(always)]
pub fn traced(group: ApiGroup, api_id: ApiId) -> bool {
    interest::load(group, api_id) != 0
}

/// Runs `body` as the traced call `(group, api_id)`.
///
/// `info` is called only if the call is traced. `body` returns what the wrapper returns and the
/// status the EXIT callbacks see; it is called exactly once (`FnMut` only so that the untraced
/// fallback and the traced path can share it).
#[inline(always)]
pub fn trace_call<'a, R, C: ReturnCode>(
    group: ApiGroup,
    api_id: ApiId,
    info: impl FnOnce() -> CallInfo<'a>,
    mut body: impl FnMut(&mut CallScope) -> (R, C),
) -> R {
    let interest = interest::load(group, api_id);
    if interest == 0 {
        return body(&mut CallScope::untraced()).0;
    }
    if interest & !(interest::API_RECORDS | interest::DEVICE) == 0
        && let Some(result) = trace_records_only(group, api_id, interest, &mut body)
    {
        return result;
    }
    trace_slow(group, api_id, interest, info, body)
}

/// The slow path of a call traced for records only (no callbacks, external IDs or loss counts
/// in its interest, no overhead measured): a correlation ID, the start and end times, the body,
/// the API record. `None`, before running the body, where the general path must take the call
/// (overhead measured, a call from a callback, the dispatch off on this thread, no thread
/// state). What it does, and a panic at each of its fault points, is as on the general path.
#[inline(never)]
fn trace_records_only<R, C: ReturnCode>(
    group: ApiGroup,
    api_id: ApiId,
    interest: u8,
    body: &mut impl FnMut(&mut CallScope) -> (R, C),
) -> Option<R> {
    if view::is_enabled(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD) {
        return None;
    }
    thread::with(|state| {
        if state.in_callback.get() || boundary::is_off(Entry::Dispatch) {
            return None;
        }
        let records = interest & interest::API_RECORDS != 0;
        let entered = boundary::catch(Entry::Dispatch, || {
            fault::point("dispatch.enter");
            let clock = clock::Source::current();
            let correlation_id = correlation::for_call(group, state);
            let start = if records { clock.now() } else { 0 };
            (clock, correlation_id, start)
        });
        let Some((clock, correlation_id, start)) = entered else {
            // Untraced, as the general path leaves a call whose ENTER panicked.
            return Some(body(&mut CallScope::untraced()).0);
        };
        let mut scope = CallScope::new(correlation_id, ptr::null_mut(), clock, start, state);
        let (result, code) = {
            let _runtime = RuntimeCallScope::enter(group, correlation_id, state);
            body(&mut scope)
        };
        // The body ran: whatever happens now, its result is the call's.
        let _ = boundary::catch(Entry::Dispatch, || {
            fault::point("dispatch.exit");
            if records {
                let call = emit::ApiCall {
                    group,
                    api_id,
                    correlation_id,
                    start,
                    end: match scope.real_end.get() {
                        0 => clock.now(),
                        end => end,
                    },
                    status: code.bits(),
                };
                emit::api_record(state, &call);
            }
        });
        Some(result)
    })
    .flatten()
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
        fault::point("dispatch.enter");
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
        real_end: u64,
    ) {
        let end = match real_end {
            _ if !self.timed() => 0,
            0 => self.clock.now(),
            end => end,
        };
        if let Some(data) = self.data.as_mut() {
            data.site = Site::Exit;
            data.context = context;
            if C::PRESENT {
                data.return_code = &code as *const C as *const c_void;
            }
            frame.exit(self.group, self.api_id, data, state);
        }
        fault::point("dispatch.exit");
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
        // Status 0 is success in every traced API (ZE_RESULT_SUCCESS, CL_SUCCESS).
        if self.interest & interest::UNRECORDED != 0 && C::PRESENT && code.bits() == 0 {
            crate::view::loss::count_unrecorded(self.group, self.api_id);
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
                crate::ids::as_written(self.group, self.api_id),
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
    mut body: impl FnMut(&mut CallScope) -> (R, C),
) -> R {
    let traced = thread::with(|state| traced_body(state, group, api_id, interest, info, &mut body));
    match traced.flatten() {
        Some(result) => result,
        None => body(&mut CallScope::untraced()).0,
    }
}

/// The slow path with the thread's state: `Some` with the body's result once the body ran
/// (traced), `None` before it ran when the call is not to be traced.
#[inline(always)]
fn traced_body<'a, R, C: ReturnCode>(
    state: &ThreadState,
    group: ApiGroup,
    api_id: ApiId,
    interest: u8,
    info: impl FnOnce() -> CallInfo<'a>,
    body: &mut impl FnMut(&mut CallScope) -> (R, C),
) -> Option<R> {
    if state.in_callback.get() {
        return None;
    }
    if boundary::is_off(Entry::Dispatch) {
        boundary::count_untraced(group);
        return None;
    }
    let mut frame = CallbackFrame::new();
    let mut call = boundary::catch(Entry::Dispatch, || {
        TracedCall::enter(&mut frame, state, group, api_id, interest, info)
    })??;
    let mut scope = CallScope::new(
        call.correlation_id,
        call.data.as_ref().map_or(ptr::null_mut(), |d| d.context),
        call.clock,
        call.start,
        state,
    );
    let (result, code) = {
        let _runtime = RuntimeCallScope::enter(group, call.correlation_id, state);
        body(&mut scope)
    };
    // The body ran: whatever happens now, its result is the call's.
    let _ = boundary::catch(Entry::Dispatch, || {
        call.exit(&mut frame, state, code, scope.context, scope.real_end.get())
    });
    Some(result)
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
    let mut body = Some(body);
    Ok(trace_call(
        group,
        api_id,
        || info,
        |_| {
            let status = body.take().map_or(0, |b| b());
            (status, status)
        },
    ))
}
