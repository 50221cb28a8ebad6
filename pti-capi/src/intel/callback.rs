//! Intel PTI 1.2's Callback API (Intel's `pti_callback.h`), under the names
//! `libpti_intel_ptiCallback*` that `libpti_view.so.1` forwards to.
//!
//! Intel shipped a Callback API of its own under the names of the proposal libpti implements:
//! the same `ptiCallbackSubscribe`, other arguments. Both live on one engine subscriber table:
//! an Intel subscriber is an engine subscriber whose handler translates engine events into
//! Intel's 7-argument callback, filtered by the tool's ENTER/EXIT flags per domain.
//!
//! | domain | here |
//! | --- | --- |
//! | `DRIVER_API` (1023) | every Level Zero and OpenCL call; `cb_data` is a [`pti_callback_driver_api_data`] |
//! | `INTERNAL_EVENT` (1025) | libpti's critical events; `cb_data` is a [`pti_internal_callback_data`] |
//! | `GPU_OPERATION_APPENDED` (4) | ENTER and EXIT of each Level Zero append and OpenCL enqueue whose device view is enabled; one operation each; `cb_data` is a [`pti_callback_gpu_op_data`] |
//! | `GPU_OPERATION_COMPLETED` (6) | EXIT only, on the thread that found the operation completed, right after its record was written; one operation each; only when enabled with both flags (as Intel's library) |
//! | `KERNEL_CREATED` (8), `KERNEL_DESTROYED` (9) | ENTER and EXIT of `zeKernelCreate`/`zeKernelDestroy`, `clCreateKernel`/`clCreateKernelsInProgram`/`clCloneKernel` and the `clReleaseKernel` that drops the last reference; `cb_data` is a [`pti_callback_kernel_data`] |
//! | the other declared domains | `PTI_ERROR_NOT_IMPLEMENTED`, as Intel's library answers |
//!
//! An operation's `_operation_id` is the `_kernel_id` or `_mem_op_id` of its view record, and
//! its `_kernel_handle` the kernel object's address, the `_kernel_handle` of the kernel's
//! KERNEL_CREATED callback (Intel's library leaves both handles 0); at an append's ENTER, as
//! Intel's library, the name is "" and the kernel handle 0. `instance_user_data` points
//! at a word kept from ENTER to EXIT for DRIVER_API only; for the other domains it is a fresh
//! NULL word each time (pair ENTER and EXIT by `_correlation_id`).
//!
//! What may be touched from here: `pti_core::session` (subscribe, enable) and the boundary
//! helpers of this crate; nothing of the proposal's C types (`crate::callback`).

use core::ffi::{CStr, c_char, c_void};
use core::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use pti_core::callback::OperationMoment;
use pti_core::callback::SubscriberId;
use pti_core::callback::{GpuOperation, GpuOperations, KernelObject, OperationKind};
use pti_core::{ApiGroup, Domain, Error, Event, ResultCode, Site, session};

use crate::boundary::{export, out_ptr};
use crate::callback::subscriber_id;
use crate::pti::pti_result;
use crate::raw::{RawIntelDomain, RawIntelPhase};
use crate::view::pti_api_group_id;
use pti_core::view::abi::{
    pti_backend_command_list_t, pti_backend_ctx_t, pti_backend_kernel_t, pti_backend_module_t,
    pti_backend_queue_t, pti_device_handle_t,
};

/// Intel's callback domains (`pti_callback_domain` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_cb_domain {
    /// Not a domain.
    PTI_CB_DOMAIN_INVALID = 0,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED = 1,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_MODULE_LOADED = 2,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED = 3,
    /// A kernel or memory operation appended to a command list or enqueued.
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED = 4,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED = 5,
    /// Operations found completed.
    PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED = 6,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION = 7,
    /// Around kernel creation.
    PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED = 8,
    /// Around kernel destruction.
    PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED = 9,
    /// ENTER and EXIT of every Level Zero and OpenCL call (declared only by Intel 1.2).
    PTI_CB_DOMAIN_DRIVER_API = 1023,
    /// Declared by Intel, not implemented there or here.
    PTI_CB_DOMAIN_INTERNAL_THREADS = 1024,
    /// libpti's critical events (declared only by Intel 1.2).
    PTI_CB_DOMAIN_INTERNAL_EVENT = 1025,
    /// Keeps the enum 32 bits wide in every C compiler; never used as a value.
    PTI_CB_DOMAIN_MAX = 0x7fff_ffff,
}

/// Intel's callback phases (`pti_callback_phase` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_cb_phase {
    /// Not a phase.
    PTI_CB_PHASE_INVALID = 0,
    /// Before the driver function runs.
    PTI_CB_PHASE_API_ENTER = 1,
    /// After the driver function returned.
    PTI_CB_PHASE_API_EXIT = 2,
    /// An internal thread started (not used by libpti: it starts none).
    PTI_CB_PHASE_INTERNAL_THREAD_START = 3,
    /// An internal thread ended (not used by libpti).
    PTI_CB_PHASE_INTERNAL_THREAD_END = 4,
    /// An internal event.
    PTI_CB_PHASE_INTERNAL_EVENT = 5,
    /// Keeps the enum 32 bits wide in every C compiler; never used as a value.
    PTI_CB_PHASE_MAX = 0x7fff_ffff,
}

/// How grave an internal event is (`pti_internal_event_type` of Intel's header).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_internal_event_type {
    /// For information.
    PTI_INTERNAL_EVENT_TYPE_INFO = 0,
    /// Some records are missing or inexact; collection goes on.
    PTI_INTERNAL_EVENT_TYPE_WARNING = 1,
    /// Data collected from now on is not to be trusted.
    PTI_INTERNAL_EVENT_TYPE_CRITICAL = 2,
    /// Keeps the enum 32 bits wide in every C compiler; never used as a value.
    PTI_INTERNAL_EVENT_TYPE_MAX = 0x7fff_ffff,
}

/// Which kind of command list operations were appended to (flags; Intel's
/// `pti_backend_command_list_type`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_backend_command_list_type {
    /// Not known, or a regular list (also for completions, which name no list).
    PTI_BACKEND_COMMAND_LIST_TYPE_UNKNOWN = 1,
    /// An immediate list; for OpenCL, every command queue.
    PTI_BACKEND_COMMAND_LIST_TYPE_IMMEDIATE = 2,
    /// A mutable list (libpti does not tell them apart yet).
    PTI_BACKEND_COMMAND_LIST_TYPE_MUTABLE = 4,
    /// Keeps the enum 32 bits wide in every C compiler; never used as a value.
    PTI_BACKEND_COMMAND_LIST_TYPE_MAX = 0x7fff_ffff,
}

/// What a GPU operation does (Intel's `pti_gpu_operation_kind`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_gpu_operation_kind {
    /// Not an operation.
    PTI_GPU_OPERATION_KIND_INVALID = 0,
    /// A kernel.
    PTI_GPU_OPERATION_KIND_KERNEL = 1,
    /// A memory copy or fill.
    PTI_GPU_OPERATION_KIND_MEMORY = 2,
    /// A barrier or marker.
    PTI_GPU_OPERATION_KIND_OTHER = 3,
    /// Keeps the enum 32 bits wide in every C compiler; never used as a value.
    PTI_GPU_OPERATION_KIND_MAX = 0x7fff_ffff,
}

/// One GPU operation of a [`pti_callback_gpu_op_data`] (Intel's layout).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct pti_gpu_op_details {
    /// Kernel, memory or other.
    pub _operation_kind: pti_gpu_operation_kind,
    /// Unique in the process: the `_kernel_id` or `_mem_op_id` of the operation's view record.
    pub _operation_id: u64,
    /// For a kernel, the kernel object's address (as KERNEL_CREATED gives it); else 0, and 0 at
    /// an append's ENTER.
    pub _kernel_handle: u64,
    /// The kernel's name, or the function's with memory kinds (as the view record names it); ""
    /// at an append's ENTER (as Intel's library).
    pub _name: *const c_char,
}

/// `cb_data` of GPU_OPERATION_APPENDED and GPU_OPERATION_COMPLETED callbacks (Intel's layout).
#[repr(C)]
pub struct pti_callback_gpu_op_data {
    /// The callback's domain.
    pub _domain: pti_cb_domain,
    /// IMMEDIATE for an immediate list or an OpenCL queue; else UNKNOWN.
    pub _cmd_list_properties: pti_backend_command_list_type,
    /// The Level Zero command list appended to; NULL for OpenCL and for completions.
    pub _cmd_list_handle: pti_backend_command_list_t,
    /// The Level Zero immediate list or the OpenCL queue; at a completion, the queue its record
    /// names.
    pub _queue_handle: pti_backend_queue_t,
    /// The device.
    pub _device_handle: pti_device_handle_t,
    /// ENTER or EXIT (completions: always EXIT).
    pub _phase: pti_cb_phase,
    /// At the EXIT of an append, its status; else 0.
    pub _return_code: u32,
    /// The append call's correlation ID (completions too: what the operation's record carries).
    pub _correlation_id: u32,
    /// How many operations `_operation_details` holds.
    pub _operation_count: u32,
    /// The operations.
    pub _operation_details: *mut pti_gpu_op_details,
}

/// `cb_data` of KERNEL_CREATED and KERNEL_DESTROYED callbacks (Intel's layout).
#[repr(C)]
pub struct pti_callback_kernel_data {
    /// The callback's domain.
    pub _domain: pti_cb_domain,
    /// ENTER or EXIT.
    pub _phase: pti_cb_phase,
    /// At EXIT, the call's status; 0 at ENTER.
    pub _return_code: u32,
    /// The call's correlation ID (0 when the call itself is not traced).
    pub _correlation_id: u32,
    /// The kernel object's address (0 at the ENTER of a creation and after a failed one).
    pub _kernel_handle: u64,
    /// The kernel object (`ze_kernel_handle_t`, `cl_kernel`), NULL where `_kernel_handle` is 0.
    pub _device_kernel_handle: pti_backend_kernel_t,
    /// The device where known, else NULL.
    pub _device_handle: pti_device_handle_t,
    /// At a creation, the module (`ze_module_handle_t`) or program (`cl_program`); else NULL.
    pub _module_handle: pti_backend_module_t,
    /// At the EXIT of a creation, the kernel's name; else NULL.
    pub _name: *const c_char,
}

const _: () = {
    assert!(core::mem::size_of::<pti_gpu_op_details>() == 32);
    assert!(core::mem::size_of::<pti_callback_gpu_op_data>() == 56);
    assert!(core::mem::offset_of!(pti_callback_gpu_op_data, _phase) == 32);
    assert!(core::mem::offset_of!(pti_callback_gpu_op_data, _operation_details) == 48);
    assert!(core::mem::size_of::<pti_callback_kernel_data>() == 56);
    assert!(core::mem::offset_of!(pti_callback_kernel_data, _kernel_handle) == 16);
    assert!(core::mem::offset_of!(pti_callback_kernel_data, _name) == 48);
};

/// `cb_data` of a `PTI_CB_DOMAIN_DRIVER_API` callback: one Level Zero or OpenCL call. A libpti
/// definition (Intel declares the domain without data); its first four fields are those of
/// Intel's `pti_callback_kernel_data`.
#[repr(C)]
pub struct pti_callback_driver_api_data {
    /// Always `PTI_CB_DOMAIN_DRIVER_API`.
    pub _domain: pti_cb_domain,
    /// `PTI_CB_PHASE_API_ENTER` or `PTI_CB_PHASE_API_EXIT`.
    pub _phase: pti_cb_phase,
    /// At EXIT, the call's status (`ze_result_t` or `cl_int`); 0 at ENTER.
    pub _return_code: u32,
    /// The ID the view records of this call carry.
    pub _correlation_id: u32,
    /// The function's name, a static string.
    pub _api_name: *const c_char,
    /// The backend's parameter struct: the tracing layer's `ze_*_params_t` or libpti's
    /// `pti_cl_params.h`; NULL where the backend gives none.
    pub _args: *const c_void,
    /// For a call that submits a kernel, its name when known; else NULL.
    pub _kernel_name: *const c_char,
}

/// `cb_data` of a `PTI_CB_DOMAIN_INTERNAL_EVENT` callback (Intel's layout).
#[repr(C)]
pub struct pti_internal_callback_data {
    /// Always `PTI_CB_DOMAIN_INTERNAL_EVENT`.
    pub _domain: pti_cb_domain,
    /// Always `PTI_CB_PHASE_INTERNAL_EVENT`.
    pub _phase: pti_cb_phase,
    /// A `pti_internal_event_type`.
    pub _detail: u32,
    /// What happened, for a human: libpti's result-code name, a colon, and the details.
    pub _message: *const c_char,
}

/// Intel's callback: `(domain, driver_api_group_id, driver_api_id, backend_context, cb_data,
/// global_user_data, instance_user_data)`. `instance_user_data` points at a word that is NULL
/// at ENTER and kept until the EXIT of the same call.
pub type pti_intel_callback_function = Option<IntelCallback>;

/// The function of a [`pti_intel_callback_function`].
pub type IntelCallback = unsafe extern "C" fn(
    domain: pti_cb_domain,
    driver_api_group_id: pti_api_group_id,
    driver_api_id: u32,
    backend_context: pti_backend_ctx_t,
    cb_data: *mut c_void,
    global_user_data: *mut c_void,
    instance_user_data: *mut *mut c_void,
);

/// The domains libpti delivers, and the engine domain behind each.
const DELIVERED: [(u32, Domain); 6] = [
    (4, Domain::GpuOperations),
    (6, Domain::GpuOperations),
    (8, Domain::KernelObjects),
    (9, Domain::KernelObjects),
    (1023, Domain::DriverApi),
    (1025, Domain::CriticalEvent),
];

/// Which phases a subscriber wants, per delivered domain (in [`DELIVERED`]'s order): bit 0
/// ENTER, bit 1 EXIT.
#[derive(Default)]
struct Phases([AtomicU32; DELIVERED.len()]);

impl Phases {
    /// Whether `domain` is enabled at `bit` (ENTER or EXIT).
    fn wants(&self, domain: pti_cb_domain, bit: u32) -> bool {
        delivered_index(domain as u32).is_some_and(|i| self.0[i].load(Ordering::Relaxed) & bit != 0)
    }
}

fn delivered_index(domain: u32) -> Option<usize> {
    DELIVERED.iter().position(|(d, _)| *d == domain)
}

const ENTER: u32 = 1;
const EXIT: u32 = 2;

/// A tool's callback with its user data and wishes.
struct Tool {
    function: IntelCallback,
    user_data: *mut c_void,
    phases: Phases,
}

// SAFETY: Intel's API documents that callbacks run on any thread; the tool owns `user_data`
// and its synchronisation, libpti only hands the pointer back.
unsafe impl Send for Tool {}
// SAFETY: as above; `phases` are atomics.
unsafe impl Sync for Tool {}

impl Tool {
    fn call(&self, event: Event<'_>) {
        match event {
            Event::ApiCall {
                domain: Domain::DriverApi,
                group,
                api_id,
                data,
            } => {
                let (phase, bit) = match data.site() {
                    Site::Enter => (pti_cb_phase::PTI_CB_PHASE_API_ENTER, ENTER),
                    Site::Exit => (pti_cb_phase::PTI_CB_PHASE_API_EXIT, EXIT),
                };
                if !self
                    .phases
                    .wants(pti_cb_domain::PTI_CB_DOMAIN_DRIVER_API, bit)
                {
                    return;
                }
                let mut cb = pti_callback_driver_api_data {
                    _domain: pti_cb_domain::PTI_CB_DOMAIN_DRIVER_API,
                    _phase: phase,
                    _return_code: data.return_code().unwrap_or(0) as u32,
                    _correlation_id: data.correlation_id(),
                    _api_name: data.api_name().as_ptr(),
                    _args: data.args(),
                    _kernel_name: data.kernel_name().map_or(core::ptr::null(), CStr::as_ptr),
                };
                let context = data.context();
                // The call's word for this subscriber: zero at ENTER, kept until EXIT; a u64
                // holds a pointer on every target libpti builds for (64-bit only).
                let instance = data.local_data() as *mut u64 as *mut *mut c_void;
                // SAFETY: the tool registered this function with Intel's signature; every
                // pointer is valid for the duration of the call.
                unsafe {
                    (self.function)(
                        pti_cb_domain::PTI_CB_DOMAIN_DRIVER_API,
                        group.into(),
                        pti_core::ids::to_intel(group, api_id),
                        context,
                        &mut cb as *mut _ as *mut c_void,
                        self.user_data,
                        instance,
                    )
                }
            }
            Event::Critical(data) => {
                if !self
                    .phases
                    .wants(pti_cb_domain::PTI_CB_DOMAIN_INTERNAL_EVENT, ENTER | EXIT)
                {
                    return;
                }
                let mut cb = pti_internal_callback_data {
                    _domain: pti_cb_domain::PTI_CB_DOMAIN_INTERNAL_EVENT,
                    _phase: pti_cb_phase::PTI_CB_PHASE_INTERNAL_EVENT,
                    _detail: severity(data.code()) as u32,
                    _message: data.message().as_ptr(),
                };
                let mut instance: *mut c_void = core::ptr::null_mut();
                // SAFETY: as above; `instance` lives on this frame for the call.
                unsafe {
                    (self.function)(
                        pti_cb_domain::PTI_CB_DOMAIN_INTERNAL_EVENT,
                        pti_api_group_id::PTI_API_GROUP_RESERVED,
                        0,
                        core::ptr::null_mut(),
                        &mut cb as *mut _ as *mut c_void,
                        self.user_data,
                        &mut instance,
                    )
                }
            }
            Event::GpuOperations(ops) => self.operations(ops),
            Event::KernelObject(kernel) => self.kernel(kernel),
            _ => {}
        }
    }

    /// Calls the tool with `cb_data` for `domain`, from `group`'s function `api_id` in `context`.
    fn deliver(
        &self,
        domain: pti_cb_domain,
        (group, api_id, context): (ApiGroup, u32, *mut c_void),
        cb_data: *mut c_void,
    ) {
        let mut instance: *mut c_void = core::ptr::null_mut();
        // SAFETY: the tool registered this function with Intel's signature; `cb_data` and
        // `instance` live on the caller's frame for the call.
        unsafe {
            (self.function)(
                domain,
                group.into(),
                pti_core::ids::to_intel(group, api_id),
                context,
                cb_data,
                self.user_data,
                &mut instance,
            )
        }
    }

    fn operations(&self, ops: &GpuOperations<'_>) {
        let at_enter = matches!(ops.moment, OperationMoment::Appended(Site::Enter));
        let (domain, phase, bit) = match ops.moment {
            OperationMoment::Appended(Site::Enter) => (APPENDED, PHASE_ENTER, ENTER),
            OperationMoment::Appended(Site::Exit) => (APPENDED, PHASE_EXIT, EXIT),
            OperationMoment::Completed => (COMPLETED, PHASE_EXIT, EXIT),
        };
        if !self.phases.wants(domain, bit) {
            return;
        }
        let list_type = if ops.immediate {
            pti_backend_command_list_type::PTI_BACKEND_COMMAND_LIST_TYPE_IMMEDIATE
        } else {
            pti_backend_command_list_type::PTI_BACKEND_COMMAND_LIST_TYPE_UNKNOWN
        };
        // In chunks on the stack: no allocation on a traced call's path.
        for chunk in ops.operations.chunks(DETAILS_PER_CALL) {
            let mut details = [EMPTY_DETAILS; DETAILS_PER_CALL];
            for (d, op) in details.iter_mut().zip(chunk) {
                *d = op_details(op, at_enter);
            }
            let mut cb = pti_callback_gpu_op_data {
                _domain: domain,
                _cmd_list_properties: list_type,
                _cmd_list_handle: ops.list,
                _queue_handle: ops.queue,
                _device_handle: ops.device,
                _phase: phase,
                _return_code: ops.return_code.unwrap_or(0) as u32,
                _correlation_id: ops.correlation_id,
                _operation_count: chunk.len() as u32,
                _operation_details: details.as_mut_ptr(),
            };
            let from = (ops.group, ops.api_id, ops.context);
            self.deliver(domain, from, &mut cb as *mut _ as *mut c_void);
        }
    }

    fn kernel(&self, kernel: &KernelObject) {
        let domain = if kernel.created {
            pti_cb_domain::PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED
        } else {
            pti_cb_domain::PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED
        };
        let (phase, bit) = match kernel.site {
            Site::Enter => (PHASE_ENTER, ENTER),
            Site::Exit => (PHASE_EXIT, EXIT),
        };
        if !self.phases.wants(domain, bit) {
            return;
        }
        let mut cb = pti_callback_kernel_data {
            _domain: domain,
            _phase: phase,
            _return_code: kernel.return_code.unwrap_or(0) as u32,
            _correlation_id: kernel.correlation_id,
            _kernel_handle: kernel.kernel as usize as u64,
            _device_kernel_handle: kernel.kernel,
            _device_handle: kernel.device,
            _module_handle: kernel.module,
            _name: kernel.name.map_or(core::ptr::null(), CStr::as_ptr),
        };
        let from = (kernel.group, kernel.api_id, kernel.context);
        self.deliver(domain, from, &mut cb as *mut _ as *mut c_void);
    }
}

const APPENDED: pti_cb_domain = pti_cb_domain::PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED;
const COMPLETED: pti_cb_domain = pti_cb_domain::PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED;
const PHASE_ENTER: pti_cb_phase = pti_cb_phase::PTI_CB_PHASE_API_ENTER;
const PHASE_EXIT: pti_cb_phase = pti_cb_phase::PTI_CB_PHASE_API_EXIT;

/// Operations handed to one callback at most (libpti reports one at a time today).
const DETAILS_PER_CALL: usize = 8;

const EMPTY_DETAILS: pti_gpu_op_details = pti_gpu_op_details {
    _operation_kind: pti_gpu_operation_kind::PTI_GPU_OPERATION_KIND_INVALID,
    _operation_id: 0,
    _kernel_handle: 0,
    _name: core::ptr::null(),
};

/// Intel's details of `op`; at an append's ENTER (`at_enter`) with an empty name and no kernel
/// handle, as Intel's library gives them before the append ran.
fn op_details(op: &GpuOperation, at_enter: bool) -> pti_gpu_op_details {
    if at_enter {
        return pti_gpu_op_details {
            _kernel_handle: 0,
            _name: c"".as_ptr(),
            ..op_details(op, false)
        };
    }
    pti_gpu_op_details {
        _operation_kind: match op.kind {
            OperationKind::Kernel => pti_gpu_operation_kind::PTI_GPU_OPERATION_KIND_KERNEL,
            OperationKind::Memory => pti_gpu_operation_kind::PTI_GPU_OPERATION_KIND_MEMORY,
            OperationKind::Other => pti_gpu_operation_kind::PTI_GPU_OPERATION_KIND_OTHER,
        },
        _operation_id: op.id,
        _kernel_handle: op.kernel as usize as u64,
        _name: op.name.as_ptr(),
    }
}

/// Intel's grading of a libpti critical event: collection goes on after all of them except a
/// backend whose interception failed and an internal error.
fn severity(code: ResultCode) -> pti_internal_event_type {
    match code {
        ResultCode::ErrorTracingNotInitialized | ResultCode::ErrorInternal => {
            pti_internal_event_type::PTI_INTERNAL_EVENT_TYPE_CRITICAL
        }
        _ => pti_internal_event_type::PTI_INTERNAL_EVENT_TYPE_WARNING,
    }
}

/// The live Intel subscribers by engine ID, so that the enables reach a subscriber's wishes.
/// Touched by subscribe, unsubscribe and the enables only, never on a traced call's path.
static TOOLS: Mutex<Vec<(SubscriberId, Arc<Tool>)>> = Mutex::new(Vec::new());

fn tools() -> std::sync::MutexGuard<'static, Vec<(SubscriberId, Arc<Tool>)>> {
    // A panic while holding it left a consistent Vec: every mutation is one call.
    TOOLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opaque: tools never dereference a subscriber handle.
pub struct _pti_callback_subscriber_intel {
    _private: [u8; 0],
}

/// A subscription of Intel's Callback API (`pti_callback_subscriber_handle`).
pub type pti_callback_subscriber_handle = *mut _pti_callback_subscriber_intel;

fn tool_of(handle: pti_callback_subscriber_handle) -> Result<(SubscriberId, Arc<Tool>), Error> {
    let id = subscriber_id(handle)?;
    let tool = tools()
        .iter()
        .find(|(k, _)| *k == id)
        .map(|(_, t)| t.clone())
        .ok_or(Error::BadArgument(
            "not a live subscriber of Intel's Callback API",
        ))?;
    Ok((id, tool))
}

/// Intel's `ptiCallbackSubscribe`: a subscriber with nothing enabled yet.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `subscriber` or `callback` is NULL. Unlike Intel's
/// library, it does not require a device view to be enabled first.
///
/// # Safety
/// `subscriber` must be NULL or point to storage for one handle; `callback` must be callable
/// with `user_data` from any thread until ptiCallbackUnsubscribe returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libpti_intel_ptiCallbackSubscribe(
    subscriber: *mut pti_callback_subscriber_handle,
    callback: pti_intel_callback_function,
    user_data: *mut c_void,
) -> pti_result {
    export(|| {
        let out = out_ptr(subscriber, "subscriber must not be NULL")?;
        let function = callback.ok_or(Error::BadArgument("callback must not be NULL"))?;
        // The operations' names, as the records', are Intel's.
        crate::intel::view::adopt_intel_habits();
        let tool = Arc::new(Tool {
            function,
            user_data,
            phases: Phases::default(),
        });
        let handler_tool = tool.clone();
        let id = session::subscribe(Box::new(move |event| handler_tool.call(event)))?;
        tools().push((id, tool));
        // SAFETY: checked non-NULL and aligned; the caller passes storage for one handle.
        unsafe { out.write(id.to_raw() as usize as pti_callback_subscriber_handle) };
        Ok(())
    })
}

/// Intel's `ptiCallbackUnsubscribe`: disables every domain and removes the subscriber. The
/// same guarantees as libpti's own unsubscribe: afterwards no callback of it starts again.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackUnsubscribe(
    subscriber: pti_callback_subscriber_handle,
) -> pti_result {
    export(|| {
        let (id, _) = tool_of(subscriber)?;
        session::unsubscribe(id)?;
        tools().retain(|(k, _)| *k != id);
        Ok(())
    })
}

/// Sets `subscriber`'s phases of `domain` (0 disables it), answering as Intel's header
/// documents for domains that are not delivered. The engine domain behind it stays enabled while
/// any Intel domain resting on it is.
fn set_phases(subscriber: pti_callback_subscriber_handle, domain: u32, wanted: u32) -> pti_result {
    export(|| {
        let (id, tool) = tool_of(subscriber)?;
        let Some(index) = delivered_index(domain) else {
            return match domain {
                1..=9 | 1024 => Ok(pti_result::PTI_ERROR_NOT_IMPLEMENTED),
                _ => Err(Error::BadArgument("unknown callback domain")),
            };
        };
        tool.phases.0[index].store(wanted, Ordering::Relaxed);
        let engine = DELIVERED[index].1;
        let on = DELIVERED
            .iter()
            .zip(&tool.phases.0)
            .any(|((_, e), p)| *e == engine && p.load(Ordering::Relaxed) != 0);
        session::enable_domain(id, engine, on)?;
        Ok(pti_result::PTI_SUCCESS)
    })
}

/// Intel's `ptiCallbackEnableDomain`: callbacks of `domain` at ENTER when `enter_cb` != 0, at
/// EXIT when `exit_cb` != 0. INTERNAL_EVENT has one phase: any flags enable it, even none.
/// GPU_OPERATION_COMPLETED (EXIT only) is delivered only when enabled with both flags set:
/// Intel's 1.2.0 library answers success to the other three pairs and delivers nothing for
/// them (measured: `completions_are_delivered_for_the_enable_flags_intel_delivers_them_for`,
/// tests/beside_intel_pti.rs).
///
/// Returns PTI_ERROR_BAD_ARGUMENT for a bad handle, an unknown domain, or no phase for
/// GPU_OPERATION_APPENDED, KERNEL_CREATED or KERNEL_DESTROYED (as Intel's library does), and
/// PTI_ERROR_NOT_IMPLEMENTED for a declared domain libpti does not deliver.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackEnableDomain(
    subscriber: pti_callback_subscriber_handle,
    domain: RawIntelDomain,
    enter_cb: u32,
    exit_cb: u32,
) -> pti_result {
    let domain = domain.0;
    let wanted = u32::from(enter_cb != 0) * ENTER + u32::from(exit_cb != 0) * EXIT;
    match domain {
        6 if wanted == ENTER | EXIT => set_phases(subscriber, domain, ENTER | EXIT),
        6 => set_phases(subscriber, domain, 0),
        1025 => set_phases(subscriber, domain, ENTER | EXIT),
        4 | 8 | 9 if wanted == 0 => export(|| -> Result<(), Error> {
            tool_of(subscriber)?;
            Err(Error::BadArgument(
                "enable at least one phase (enter_cb or exit_cb) of this domain",
            ))
        }),
        _ => set_phases(subscriber, domain, wanted),
    }
}

/// Intel's `ptiCallbackDisableDomain`.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDisableDomain(
    subscriber: pti_callback_subscriber_handle,
    domain: RawIntelDomain,
) -> pti_result {
    set_phases(subscriber, domain.0, 0)
}

/// Intel's `ptiCallbackDisableAllDomains`.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDisableAllDomains(
    subscriber: pti_callback_subscriber_handle,
) -> pti_result {
    for (domain, _) in DELIVERED {
        let status = set_phases(subscriber, domain, 0);
        if status != pti_result::PTI_SUCCESS {
            return status;
        }
    }
    pti_result::PTI_SUCCESS
}

/// The name of Intel's callback domain `domain`, or "INVALID".
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackDomainTypeToString(
    domain: RawIntelDomain,
) -> *const c_char {
    export(|| domain_name(domain.0).as_ptr())
}

/// The name of Intel's callback phase `phase`, or "INVALID".
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiCallbackPhaseTypeToString(phase: RawIntelPhase) -> *const c_char {
    export(|| phase_name(phase.0).as_ptr())
}

fn domain_name(domain: u32) -> &'static CStr {
    match domain {
        1 => c"PTI_CB_DOMAIN_DRIVER_CONTEXT_CREATED",
        2 => c"PTI_CB_DOMAIN_DRIVER_MODULE_LOADED",
        3 => c"PTI_CB_DOMAIN_DRIVER_MODULE_UNLOADED",
        4 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_APPENDED",
        5 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_DISPATCHED",
        6 => c"PTI_CB_DOMAIN_DRIVER_GPU_OPERATION_COMPLETED",
        7 => c"PTI_CB_DOMAIN_DRIVER_HOST_SYNCHRONIZATION",
        8 => c"PTI_CB_DOMAIN_DRIVER_KERNEL_CREATED",
        9 => c"PTI_CB_DOMAIN_DRIVER_KERNEL_DESTROYED",
        1023 => c"PTI_CB_DOMAIN_DRIVER_API",
        1024 => c"PTI_CB_DOMAIN_INTERNAL_THREADS",
        1025 => c"PTI_CB_DOMAIN_INTERNAL_EVENT",
        _ => c"INVALID",
    }
}

fn phase_name(phase: u32) -> &'static CStr {
    match phase {
        1 => c"PTI_CB_PHASE_API_ENTER",
        2 => c"PTI_CB_PHASE_API_EXIT",
        3 => c"PTI_CB_PHASE_INTERNAL_THREAD_START",
        4 => c"PTI_CB_PHASE_INTERNAL_THREAD_END",
        5 => c"PTI_CB_PHASE_INTERNAL_EVENT",
        _ => c"INVALID",
    }
}
