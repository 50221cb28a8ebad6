//! What the device domains deliver: GPU operations appended to a command list or queue and found
//! completed ([`Domain::GpuOperations`]), and kernel objects created and destroyed
//! ([`Domain::KernelObjects`]). Both are on/off per subscriber, like critical events.
//!
//! The driver backends call [`operations`] and [`kernel_object`] from their hooks; nothing is
//! delivered for libpti's own calls or for calls a callback makes, and nothing is built unless a
//! subscriber listens (one load, [`listening`]).
//!
//! Touches the subscriber table (through `deliver`) and the thread's state only.

use core::ffi::{CStr, c_void};
use core::sync::atomic::{AtomicU64, Ordering};

use super::deliver;
use crate::api::{ApiGroup, ApiId, Domain, Site};
use crate::thread;

/// What a GPU operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationKind {
    /// A kernel (or native function).
    Kernel,
    /// A memory copy or fill.
    Memory,
    /// A barrier or marker.
    Other,
}

/// One GPU operation.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct GpuOperation {
    /// What it does.
    pub kind: OperationKind,
    /// Its ID, unique in the process: the `_kernel_id` or `_mem_op_id` of its view record.
    pub id: u64,
    /// For a kernel, the kernel object (`ze_kernel_handle_t`, `cl_kernel`); else NULL.
    pub kernel: *mut c_void,
    /// The name its view record carries (the kernel's, or the function's with memory kinds).
    pub name: &'static CStr,
}

impl GpuOperation {
    pub(crate) fn new(
        kind: OperationKind,
        id: u64,
        kernel: *mut c_void,
        name: &'static CStr,
    ) -> Self {
        GpuOperation {
            kind,
            id,
            kernel,
            name,
        }
    }
}

/// When the operations are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationMoment {
    /// Around the call that appends (enqueues) the operation, on its thread: at ENTER and EXIT.
    Appended(Site),
    /// Found completed, on the thread that harvested it; its record has just been written.
    Completed,
}

/// GPU operations, as a [`crate::Event::GpuOperations`] carries them.
#[derive(Debug)]
#[non_exhaustive]
pub struct GpuOperations<'a> {
    /// Appended (with the site) or completed.
    pub moment: OperationMoment,
    /// The API of the call that appended the operations.
    pub group: ApiGroup,
    /// The function that appended them.
    pub api_id: ApiId,
    /// The correlation ID of the call that appended them (what their view records carry).
    pub correlation_id: u32,
    /// At the EXIT of an append, its status; else `None`.
    pub return_code: Option<i32>,
    /// The context.
    pub context: *mut c_void,
    /// The command list (OpenCL: NULL).
    pub list: *mut c_void,
    /// The queue (Level Zero: the list when it is immediate, else NULL; OpenCL: the command
    /// queue).
    pub queue: *mut c_void,
    /// The device.
    pub device: *mut c_void,
    /// Whether the operations run as they are appended (an immediate list, an OpenCL queue).
    pub immediate: bool,
    /// The operations, in the order they were appended.
    pub operations: &'a [GpuOperation],
}

/// A kernel object created or destroyed, as a [`crate::Event::KernelObject`] carries it.
#[derive(Debug)]
#[non_exhaustive]
pub struct KernelObject {
    /// Created (true) or destroyed.
    pub created: bool,
    /// ENTER or EXIT of the call that creates or destroys it.
    pub site: Site,
    /// The API of that call.
    pub group: ApiGroup,
    /// The function of that call.
    pub api_id: ApiId,
    /// The call's correlation ID; 0 when the call itself is not traced.
    pub correlation_id: u32,
    /// At EXIT, the call's status; else `None`.
    pub return_code: Option<i32>,
    /// The kernel (NULL at the ENTER of a creation and after a failed one).
    pub kernel: *mut c_void,
    /// Its module (`ze_module_handle_t`, `cl_program`) where the call names it, else NULL.
    pub module: *mut c_void,
    /// The context where known, else NULL.
    pub context: *mut c_void,
    /// The device where known, else NULL.
    pub device: *mut c_void,
    /// At a creation, the kernel's name when known.
    pub name: Option<&'static CStr>,
}

impl KernelObject {
    /// The event of `(group, api_id)` at `site`, everything else unknown yet.
    pub(crate) fn new(created: bool, site: Site, group: ApiGroup, api_id: ApiId) -> Self {
        KernelObject {
            created,
            site,
            group,
            api_id,
            correlation_id: 0,
            return_code: None,
            kernel: core::ptr::null_mut(),
            module: core::ptr::null_mut(),
            context: core::ptr::null_mut(),
            device: core::ptr::null_mut(),
            name: None,
        }
    }
}

/// IDs of GPU operations, unique in the process, also the records' kernel and memory-operation
/// IDs. One sequence for both, so that an ID names one operation whatever its kind.
static OPERATION_IDS: AtomicU64 = AtomicU64::new(1);

/// A fresh operation ID.
pub(crate) fn next_operation_id() -> u64 {
    OPERATION_IDS.fetch_add(1, Ordering::Relaxed)
}

/// Whether some subscriber enabled `domain` (a flag domain).
#[inline(always)]
pub(crate) fn listening(domain: Domain) -> bool {
    domain
        .flag()
        .is_some_and(|bit| deliver::flag_listeners() & bit != 0)
}

/// Delivers `ops` to the subscribers of [`Domain::GpuOperations`] (not from inside a callback).
/// A thread whose locals are gone (a tool's flush from an `atexit` handler completes operations
/// after the main thread's were destroyed) delivers with the state of such threads, as its
/// records are written.
pub(crate) fn operations(ops: &GpuOperations<'_>) {
    if ops.operations.is_empty() || !listening(Domain::GpuOperations) {
        return;
    }
    thread::with_any(|state| {
        if !state.in_callback.get() {
            deliver::flagged(Domain::GpuOperations, state, || {
                crate::Event::GpuOperations(ops)
            });
        }
    });
}

/// Delivers `kernel` to the subscribers of [`Domain::KernelObjects`] (not from inside a
/// callback).
pub(crate) fn kernel_object(kernel: &KernelObject) {
    if !listening(Domain::KernelObjects) {
        return;
    }
    thread::with_any(|state| {
        if !state.in_callback.get() {
            deliver::flagged(Domain::KernelObjects, state, || {
                crate::Event::KernelObject(kernel)
            });
        }
    });
}
