//! Device commands as the driver backends describe them, from the call that submits one to its
//! record: what an OpenCL enqueue or a Level Zero append submits ([`Work`]), who submitted it
//! ([`Submission`], captured while the submitting call runs), and [`Finished::record`], which
//! writes the kernel, copy, fill or synchronisation record once its times are on the host clock.
//! Also the record of a host wait ([`host_wait`]), which both driver backends write the same way.
//!
//! Touches the engine only: the view's record writers, the thread's state, the runtime task, and
//! critical events.

use core::cell::Cell;
use core::ffi::{CStr, c_void};
use core::ptr::null_mut;

use crate::api::{ApiGroup, ApiId, Domain};
use crate::callback::OperationMoment;
use crate::callback::critical;
use crate::callback::device::{self as callbacks, GpuOperation, GpuOperations, OperationKind};
use crate::intern::intern_str;
use crate::recent::{self, Recent};
use crate::result::ResultCode;
use crate::sycl_tag::SyclTag;
use crate::thread::{self, ThreadState};
use crate::view::abi::{
    pti_view_kind, pti_view_memcpy_type, pti_view_memory_type, pti_view_synchronization_type,
};
use crate::view::device::{
    self, Command, DeviceIdentity, Engine, Launch, Synchronization, kernel_view,
};
use crate::{ids, view};

/// What a command does, as its record needs to know.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// A kernel (or native function) execution.
    Kernel {
        name: &'static CStr,
        /// The kernel object (`ze_kernel_handle_t`, `cl_kernel`); NULL for a native function.
        kernel: *mut c_void,
        /// Its launch configuration (PTI_VIEW_EXT_KERNEL_LAUNCH).
        launch: Launch,
    },
    /// A copy of `bytes` bytes between two kinds of memory.
    Copy {
        src: pti_view_memory_type,
        dst: pti_view_memory_type,
        bytes: u64,
    },
    /// A fill of `bytes` bytes with a pattern whose first 8 bytes are `value`.
    Fill {
        memory: pti_view_memory_type,
        bytes: u64,
        value: u64,
    },
    /// A barrier or marker: a synchronisation record with device times.
    Barrier {
        kind: pti_view_synchronization_type,
        wait_events: u32,
    },
}

fn memory_letter(m: pti_view_memory_type) -> char {
    match m {
        pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY => 'M',
        pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_HOST => 'H',
        pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_DEVICE => 'D',
        pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_SHARED => 'S',
    }
}

impl Work {
    /// This work as GPU-operation callbacks describe it, as the operation `id` appended by the
    /// call `(group, api_id)`.
    pub(crate) fn operation(&self, group: ApiGroup, api_id: ApiId, id: u64) -> GpuOperation {
        let (kind, kernel) = match self {
            Work::Kernel { kernel, .. } => (OperationKind::Kernel, *kernel),
            Work::Copy { .. } | Work::Fill { .. } => (OperationKind::Memory, null_mut()),
            Work::Barrier { .. } => (OperationKind::Other, null_mut()),
        };
        GpuOperation::new(kind, id, kernel, self.name(group, api_id))
    }

    /// The view that records this work on `device_is_cpu`'s kind of device.
    pub(crate) fn view(&self, device_is_cpu: bool) -> pti_view_kind {
        match self {
            Work::Kernel { .. } => kernel_view(device_is_cpu),
            Work::Copy { .. } => pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY,
            Work::Fill { .. } => pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_FILL,
            Work::Barrier { .. } => pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION,
        }
    }

    /// The record's name: the kernel's, or the API function's with the memory kinds, such as
    /// `clEnqueueReadBuffer(D2M)` or `zeCommandListAppendMemoryFill(D)` (`…(M2D)` once the Intel
    /// face asked for Intel's names, [`view::name_fills_as_intel`]). Asked for every command
    /// (at its submission and at its record), so the names built from the function are
    /// remembered per thread ([`NAMES`]) instead of formatted and interned each time.
    #[inline]
    pub(crate) fn name(&self, group: ApiGroup, api_id: ApiId) -> &'static CStr {
        match self {
            Work::Kernel { name, .. } => name,
            _ => self.remembered_name(group, api_id),
        }
    }

    /// [`Work::name`] of work other than a kernel's.
    fn remembered_name(&self, group: ApiGroup, api_id: ApiId) -> &'static CStr {
        let key = match self {
            Work::Kernel { name, .. } => return name,
            Work::Copy { src, dst, .. } => (*src as u32) << 8 | *dst as u32,
            Work::Fill { memory, .. } => {
                1 << 16 | u32::from(view::fills_named_as_intel()) << 12 | *memory as u32
            }
            Work::Barrier { .. } => 2 << 16,
        };
        let key = (group as u64) << 56 | u64::from(api_id) << 24 | u64::from(key);
        if let Some(name) = recent::recall(&NAMES, key) {
            return name;
        }
        let name = self.build_name(group, api_id);
        recent::remember(&NAMES, key, name);
        name
    }

    fn build_name(&self, group: ApiGroup, api_id: ApiId) -> &'static CStr {
        let function = ids::name(group, api_id).map_or("".into(), CStr::to_string_lossy);
        match self {
            Work::Kernel { name, .. } => name,
            Work::Copy { src, dst, .. } => {
                let kind = pti_view_memcpy_type::from_memory_types(*src, *dst);
                let label = format!("{kind:?}");
                let short = label.rsplit('_').next().unwrap_or("M2M");
                intern_str(&format!("{function}({short})"))
            }
            Work::Fill { memory, .. } => {
                // Intel PTI names the pattern's side too, as a copy from memory.
                let from = if view::fills_named_as_intel() {
                    "M2"
                } else {
                    ""
                };
                intern_str(&format!("{function}({from}{})", memory_letter(*memory)))
            }
            Work::Barrier { .. } => intern_str(&function),
        }
    }
}

/// Names of copies, fills and barriers each thread built lately, by (group, function, memory
/// kinds): a program's loop submits few kinds of command, and building a name formats and
/// interns it.
const NAMES_REMEMBERED: usize = 8;

thread_local! {
    static NAMES: Recent<u64, &'static CStr, NAMES_REMEMBERED> =
        const { Cell::new([None; NAMES_REMEMBERED]) };
}

/// Who submitted a command: the call, its correlation ID and thread, and the runtime task it
/// belongs to, captured while that call runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Submission {
    pub(crate) work: Work,
    pub(crate) group: ApiGroup,
    /// The API call that submitted it.
    pub(crate) api_id: ApiId,
    pub(crate) correlation_id: u32,
    pub(crate) thread_id: u32,
    /// What the runtime (SYCL) said of the task that submitted it, if a task did.
    pub(crate) task: Option<SyclTag>,
    /// The operation's ID (see [`GpuOperation::id`]): its record's kernel or memory
    /// operation ID.
    pub(crate) operation_id: u64,
}

// SAFETY: the names inside are interned (`'static`, never freed) and never written through; the
// kernel handle is an opaque value passed back to the runtime, usable from any thread.
unsafe impl Send for Submission {}

impl Submission {
    /// `work`, submitted now on this thread by the call `(group, api_id)` with `correlation_id`,
    /// as the operation `operation_id` (from [`callbacks::next_operation_id`]).
    pub(crate) fn now(
        group: ApiGroup,
        api_id: ApiId,
        correlation_id: u32,
        operation_id: u64,
        work: Work,
    ) -> Self {
        let on = |state: Option<&ThreadState>| {
            Self::on(state, group, api_id, correlation_id, operation_id, work)
        };
        thread::with(|state| on(Some(state))).unwrap_or_else(|| on(None))
    }

    /// As [`Submission::now`], on the thread whose state the caller has (a traced call's
    /// scope has it: no TLS lookup); `None` where the thread's state is gone (no thread ID, no
    /// runtime task).
    pub(crate) fn on(
        state: Option<&ThreadState>,
        group: ApiGroup,
        api_id: ApiId,
        correlation_id: u32,
        operation_id: u64,
        work: Work,
    ) -> Self {
        Submission {
            work,
            group,
            api_id,
            correlation_id,
            thread_id: state.map_or(0, ThreadState::thread_id),
            task: state.and_then(|s| s.runtime_task.get()),
            operation_id,
        }
    }

    /// The command as GPU-operation callbacks describe it.
    pub(crate) fn operation(&self) -> GpuOperation {
        self.work
            .operation(self.group, self.api_id, self.operation_id)
    }

    /// The record's name (see [`Work::name`]).
    pub(crate) fn name(&self) -> &'static CStr {
        self.work.name(self.group, self.api_id)
    }

    /// The view that records it on `device_is_cpu`'s kind of device.
    pub(crate) fn view(&self, device_is_cpu: bool) -> pti_view_kind {
        self.work.view(device_is_cpu)
    }

    /// Counts its record as lost and raises a critical event with `code`; `why` completes
    /// "... (name, correlation ID n): {why}; its VIEW record is lost (N so far)".
    pub(crate) fn lost(&self, device_is_cpu: bool, code: ResultCode, why: &str) {
        let view = self.view(device_is_cpu);
        let total = view::count_lost(view);
        critical::raise(
            code,
            format_args!(
                "a device command ({}, correlation ID {}) gets no record: {why}; its {view:?} \
                 record is lost ({total} so far)",
                self.name().to_string_lossy(),
                self.correlation_id
            ),
        );
    }
}

/// A command that has completed, with its times on the host clock.
pub(crate) struct Finished<'a> {
    pub(crate) submission: &'a Submission,
    pub(crate) queue: *mut c_void,
    pub(crate) context: *mut c_void,
    pub(crate) device: &'a DeviceIdentity,
    pub(crate) device_is_cpu: bool,
    pub(crate) engine: Engine,
    /// The event a synchronisation record names (NULL for one libpti injected).
    pub(crate) event: *mut c_void,
    pub(crate) append: u64,
    pub(crate) submit: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl Finished<'_> {
    /// Writes the command's record into the buffer of `state` (if its view is enabled; the
    /// harvesting thread's, looked up once per harvest), or, without one (the thread's own is
    /// gone), into the state [`thread::with_any`] finds. If none can be had, the record is
    /// counted as lost, with a critical event. Inlined into each backend's `finish` (two), with
    /// the rare paths out of line: the call and the copies of the command's description cost
    /// about 35 instructions a command on PoCL (issue 39).
    #[inline(always)]
    pub(crate) fn record(&self, state: Option<&ThreadState>) {
        match state {
            Some(state) => self.write(state),
            None => self.write_anywhere(),
        }
        self.report_completed();
    }

    /// Writes the record into `state`'s buffer.
    #[inline(always)]
    fn write(&self, state: &ThreadState) {
        let s = self.submission;
        let command = Command {
            operation_id: s.operation_id,
            queue: self.queue,
            context: self.context,
            device: self.device,
            engine: self.engine,
            name: s.name(),
            correlation_id: s.correlation_id,
            thread_id: s.thread_id,
            append: self.append,
            submit: self.submit,
            start: self.start,
            end: self.end,
            sycl: s.task.as_ref(),
        };
        // By reference: the launch and the task are copied only into the records.
        match &s.work {
            Work::Kernel { launch, .. } => {
                device::kernel(state, self.device_is_cpu, &command);
                device::kernel_launch(state, s.operation_id, launch);
            }
            &Work::Copy { src, dst, bytes } => {
                device::memory_copy(state, &command, src, dst, bytes)
            }
            &Work::Fill {
                memory,
                bytes,
                value,
            } => device::memory_fill(state, &command, memory, bytes, value),
            &Work::Barrier { kind, wait_events } => device::synchronization(
                state,
                &Synchronization {
                    kind,
                    group: s.group,
                    api_id: s.api_id,
                    context: self.context,
                    queue: self.queue,
                    event: self.event,
                    start: self.start,
                    end: self.end,
                    thread_id: s.thread_id,
                    correlation_id: s.correlation_id,
                    wait_events,
                    status: 0,
                },
            ),
        }
    }

    /// [`Finished::write`] where the harvesting thread's state is gone: into the state
    /// [`thread::with_any`] finds, or counted as lost.
    #[cold]
    #[inline(never)]
    fn write_anywhere(&self) {
        if thread::with_any(|state| self.write(state)).is_none() {
            self.not_written();
        }
    }

    /// Counts the record lost, with a critical event: no thread state could be had to write it.
    #[cold]
    #[inline(never)]
    fn not_written(&self) {
        let view = self.submission.view(self.device_is_cpu);
        let total = view::count_lost(view);
        critical::raise(
            ResultCode::ErrorRecordsDropped,
            format_args!(
                "a {view:?} record was completed on a thread that is exiting and could not be \
                 written ({total} lost so far)"
            ),
        );
    }

    /// Tells the subscribers of GPU operations that this one completed.
    #[inline(always)]
    fn report_completed(&self) {
        if callbacks::listening(Domain::GpuOperations) {
            self.report_completed_to_subscribers();
        }
    }

    #[cold]
    #[inline(never)]
    fn report_completed_to_subscribers(&self) {
        let s = self.submission;
        callbacks::operations(&GpuOperations {
            moment: OperationMoment::Completed,
            group: s.group,
            api_id: s.api_id,
            correlation_id: s.correlation_id,
            return_code: None,
            context: self.context,
            list: null_mut(),
            queue: self.queue,
            device: self.device.device,
            immediate: false,
            operations: &[s.operation()],
        });
    }
}

/// What an append (enqueue) reports to the subscribers of GPU operations, at its ENTER and EXIT.
pub(crate) struct Appending {
    pub(crate) group: ApiGroup,
    pub(crate) api_id: ApiId,
    pub(crate) correlation_id: u32,
    pub(crate) context: *mut c_void,
    pub(crate) list: *mut c_void,
    pub(crate) queue: *mut c_void,
    pub(crate) device: *mut c_void,
    pub(crate) immediate: bool,
    pub(crate) operation: GpuOperation,
}

impl Appending {
    /// Delivers the append's ENTER (`return_code` None) or EXIT.
    pub(crate) fn report(&self, site: crate::Site, return_code: Option<i32>) {
        callbacks::operations(&GpuOperations {
            moment: OperationMoment::Appended(site),
            group: self.group,
            api_id: self.api_id,
            correlation_id: self.correlation_id,
            return_code,
            context: self.context,
            list: self.list,
            queue: self.queue,
            device: self.device,
            immediate: self.immediate,
            operations: core::slice::from_ref(&self.operation),
        });
    }
}

/// Writes the synchronisation record of a host wait (`clFinish`, `zeEventHostSynchronize`, ...)
/// made by the traced call `correlation_id` (0: untraced, no record), which waited from `start` to
/// `end`. `sync` describes the wait; it is asked only while the synchronisation view is enabled,
/// and its start, end, thread and correlation ID are filled in here.
pub(crate) fn host_wait(
    correlation_id: u32,
    (start, end): (u64, u64),
    sync: impl FnOnce() -> Synchronization,
) {
    if correlation_id == 0 || !view::is_enabled(pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION) {
        return;
    }
    let mut sync = sync();
    sync.start = start;
    sync.end = end;
    sync.correlation_id = correlation_id;
    thread::with(|state| {
        sync.thread_id = state.thread_id();
        device::synchronization(state, &sync);
    });
}
