//! The Callback API: subscribers, their enables, and the data their callbacks receive.
//!
//! A subscriber is a callback plus its own enables: per (API group, API ID) for the call domains,
//! and one flag each for critical events and the device domains (GPU operations, kernel objects:
//! see `device`). Calls are delivered on the thread that made them, ENTER
//! before and EXIT after the traced function, each subscriber with its own `local_data` slot.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use pti_core::{ApiGroup, Domain, Event, Site, Subscriber, dispatch, ids};
//! # let _ = Domain::DriverApi;
//!
//! let enters = Arc::new(AtomicUsize::new(0));
//! let seen = enters.clone();
//! let subscriber = Subscriber::new(move |event| {
//!     if let Event::ApiCall { data, .. } = event {
//!         match data.site() {
//!             Site::Enter => *data.local_data() = 42,
//!             Site::Exit => assert_eq!(*data.local_data(), 42),
//!         }
//!         if data.site() == Site::Enter {
//!             seen.fetch_add(1, Ordering::Relaxed);
//!         }
//!     }
//! })?;
//! subscriber.enable(ApiGroup::OpenCl, ids::opencl::clFinish, true)?;
//!
//! // What a backend does around the real clFinish (here simulated):
//! let status = dispatch::simulate_call(ApiGroup::OpenCl, ids::opencl::clFinish, Default::default(), || 0)?;
//! assert_eq!(status, 0);
//! assert_eq!(enters.load(Ordering::Relaxed), 1);
//!
//! drop(subscriber); // unsubscribes: no callback runs after this returns
//! # Ok::<(), pti_core::Error>(())
//! ```
//!
//! # Guarantees
//! - Any thread may subscribe, enable or unsubscribe at any time, also while other threads are
//!   inside traced calls. Enables take effect from the next ENTER of a call.
//! - ENTER and EXIT come in pairs: a subscriber receives the EXIT of every call whose ENTER it
//!   received, unless it unsubscribed in between; one enabled in the middle of a call receives
//!   neither. `local_data` is zero at ENTER and kept until EXIT.
//! - When `unsubscribe` returns, no callback of that subscriber will start again. Called
//!   outside a callback, it also waits until callbacks of the subscriber running on other
//!   threads have returned, so their captured state may be freed. Called from inside a callback
//!   it does not wait (that could deadlock): a callback that another thread was just starting may
//!   still run once. A callback must not wait for a thread that unsubscribes its own subscriber
//!   from outside a callback: each would wait for the other.
//! - After a thread's first traced call, the call path takes no lock and allocates nothing
//!   (delivering a critical event allocates its message).
//! - Traced calls made from inside a callback (the tool's own calls) are not delivered and not
//!   recorded, and critical events raised there are delivered after the callback returned, so a
//!   callback is never re-entered on its own thread.
//! - A panic in a Rust callback is caught; it is reported as the critical event
//!   [`crate::ResultCode::ErrorCallbackPanicked`] and the program goes on.
//!
//! This module is the engine's half: the subscriber table and delivery. Tools subscribe and
//! enable through the session (`crate::session`, whose [`crate::Subscriber`] is shown above),
//! which also tells the backends what an enable means for them.

use core::ffi::{CStr, c_char, c_void};
use core::mem::offset_of;

use crate::api::{ApiGroup, ApiId, Domain, Site};
use crate::result::ResultCode;

pub mod critical;
pub(crate) mod deliver;
pub(crate) mod device;
mod registry;

pub use device::{GpuOperation, GpuOperations, KernelObject, OperationKind, OperationMoment};

pub(crate) use registry::{enable, enable_domain, subscribe, unsubscribe};
pub(crate) use registry::{fork_child, fork_parent, fork_prepare};

/// How many subscribers can exist at once.
pub const MAX_SUBSCRIBERS: usize = 32;

/// A subscriber's callback.
pub type Handler = Box<dyn Fn(Event<'_>) + Send + Sync + 'static>;

/// What a callback receives.
#[non_exhaustive]
pub enum Event<'a> {
    /// ENTER or EXIT of a traced call.
    ApiCall {
        /// [`Domain::DriverApi`] or [`Domain::RuntimeApi`].
        domain: Domain,
        /// The API group of the call.
        group: ApiGroup,
        /// The function's stable ID (see [`crate::ids`]).
        api_id: ApiId,
        /// Details of the call; C callbacks receive a pointer to it as `cb_data`.
        data: &'a mut ApiCallbackData,
    },
    /// Something inside libpti lost or corrupted data or stopped collection.
    Critical(&'a mut CriticalEventData),
    /// GPU operations appended or completed ([`Domain::GpuOperations`]).
    GpuOperations(&'a GpuOperations<'a>),
    /// A kernel object created or destroyed ([`Domain::KernelObjects`]).
    KernelObject(&'a KernelObject),
}

/// Details of one traced call, laid out as C's `pti_apicall_callback_data`.
///
/// Only the dispatch creates it, and only lends it to callbacks: the pointers it holds are valid
/// for the duration of the callback.
#[repr(C)]
#[derive(Debug)]
pub struct ApiCallbackData {
    pub(crate) site: Site,
    pub(crate) api_name: *const c_char,
    pub(crate) args: *const c_void,
    pub(crate) kernel_name: *const c_char,
    pub(crate) return_code: *const c_void,
    pub(crate) context: *mut c_void,
    pub(crate) correlation_id: u32,
    pub(crate) local_data: *mut u64,
}

impl ApiCallbackData {
    /// Byte offsets of the fields, in C order: the C ABI checks its declaration against them.
    #[doc(hidden)]
    pub const FIELD_OFFSETS: [usize; 8] = [
        offset_of!(Self, site),
        offset_of!(Self, api_name),
        offset_of!(Self, args),
        offset_of!(Self, kernel_name),
        offset_of!(Self, return_code),
        offset_of!(Self, context),
        offset_of!(Self, correlation_id),
        offset_of!(Self, local_data),
    ];

    /// ENTER or EXIT.
    pub fn site(&self) -> Site {
        self.site
    }

    /// The traced function's name.
    pub fn api_name(&self) -> &CStr {
        // SAFETY: the dispatch sets it from the static ID tables, never NULL.
        unsafe { CStr::from_ptr(self.api_name) }
    }

    /// The kernel a launch submits, if this call submits one and its name is known.
    pub fn kernel_name(&self) -> Option<&CStr> {
        // SAFETY: NULL or a string the traced call keeps alive for its whole duration.
        (!self.kernel_name.is_null()).then(|| unsafe { CStr::from_ptr(self.kernel_name) })
    }

    /// The backend's parameter struct of the call, or NULL if the backend provides none.
    /// Its type depends on the group and function (see `pti_cl_params.h` and the tracing
    /// layer's `ze_*_params_t`).
    pub fn args(&self) -> *const c_void {
        self.args
    }

    /// At EXIT, the function's status (`ze_result_t`, `cl_int` or `ur_result_t`, all 32 bits);
    /// `None` at ENTER and for functions that return no status.
    pub fn return_code(&self) -> Option<i32> {
        // SAFETY: the dispatch points it at a 32-bit status that lives until the callback ends.
        (!self.return_code.is_null()).then(|| unsafe { *(self.return_code as *const i32) })
    }

    /// The Level Zero or OpenCL context of the call when known, else NULL.
    pub fn context(&self) -> *mut c_void {
        self.context
    }

    /// The ID the view records of this call carry too.
    pub fn correlation_id(&self) -> u32 {
        self.correlation_id
    }

    /// This subscriber's word for this call: zero at ENTER, kept until EXIT.
    pub fn local_data(&mut self) -> &mut u64 {
        // SAFETY: the dispatch points it at this subscriber's own slot of the call's frame, which
        // outlives the callback and which nothing else touches while the callback runs.
        unsafe { &mut *self.local_data }
    }

    /// A copy for one more subscriber (not `Clone`: the pointers must not outlive the call).
    pub(crate) fn duplicate(&self) -> Self {
        ApiCallbackData { ..*self }
    }
}

/// A critical event, laid out as C's `pti_critical_event_callback_data`.
#[repr(C)]
#[derive(Debug)]
pub struct CriticalEventData {
    pub(crate) code: ResultCode,
    pub(crate) message: *const c_char,
}

impl CriticalEventData {
    /// Byte offsets of the fields, in C order: the C ABI checks its declaration against them.
    #[doc(hidden)]
    pub const FIELD_OFFSETS: [usize; 2] = [offset_of!(Self, code), offset_of!(Self, message)];

    /// What happened.
    pub fn code(&self) -> ResultCode {
        self.code
    }

    /// Details for a human.
    pub fn message(&self) -> &CStr {
        // SAFETY: the raiser keeps the string alive while the callback runs; never NULL.
        unsafe { CStr::from_ptr(self.message) }
    }
}

/// Names one subscription. It stays unique for the life of the process: a handle of a removed
/// subscriber is rejected, even after its slot was given to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SubscriberId {
    slot: u8,
    serial: u64,
}

const SLOT_BITS: u32 = MAX_SUBSCRIBERS.trailing_zeros();
const _: () = assert!(MAX_SUBSCRIBERS == 1 << SLOT_BITS && MAX_SUBSCRIBERS <= 32);

impl SubscriberId {
    /// A nonzero number that encodes the ID, for handles given to C.
    pub fn to_raw(self) -> u64 {
        (self.serial << SLOT_BITS) | self.slot as u64
    }

    /// Decodes [`SubscriberId::to_raw`]; any number is accepted here and checked when used.
    pub fn from_raw(raw: u64) -> Self {
        SubscriberId {
            slot: (raw & (MAX_SUBSCRIBERS as u64 - 1)) as u8,
            serial: raw >> SLOT_BITS,
        }
    }

    pub(crate) fn slot(self) -> usize {
        self.slot as usize
    }
}
