//! Device work as the backends describe it, and the record each finished command gets: what an
//! OpenCL enqueue or a Level Zero append submits ([`Work`]), and [`Finished::record`], which
//! writes the kernel, copy, fill or synchronisation record with times already on the host clock.

use core::ffi::{CStr, c_void};

use crate::api::{ApiGroup, ApiId};
use crate::intern::intern_str;
use crate::result::ResultCode;
use crate::view::abi::{
    pti_view_kind, pti_view_memcpy_type, pti_view_memory_type, pti_view_synchronization_type,
};
use crate::view::device::{self, Command, DeviceIdentity, SyclTag, Synchronization, kernel_view};
use crate::{critical, ids, thread, view};

/// What a command does, as its record needs to know.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// A kernel (or native function) execution.
    Kernel { name: &'static CStr },
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
    /// `clEnqueueReadBuffer(D2M)` or `zeCommandListAppendMemoryFill(D)`.
    pub(crate) fn name(&self, group: ApiGroup, api_id: ApiId) -> &'static CStr {
        let function = ids::name(group, api_id).map_or("".into(), CStr::to_string_lossy);
        match self {
            Work::Kernel { name } => name,
            Work::Copy { src, dst, .. } => {
                let kind = pti_view_memcpy_type::from_memory_types(*src, *dst);
                let label = format!("{kind:?}");
                let short = label.rsplit('_').next().unwrap_or("M2M");
                intern_str(&format!("{function}({short})"))
            }
            Work::Fill { memory, .. } => {
                intern_str(&format!("{function}({})", memory_letter(*memory)))
            }
            Work::Barrier { .. } => intern_str(&function),
        }
    }
}

/// A command that has completed, with its times on the host clock.
pub(crate) struct Finished<'a> {
    pub(crate) work: Work,
    pub(crate) group: ApiGroup,
    /// The API call that submitted it.
    pub(crate) api_id: ApiId,
    pub(crate) correlation_id: u32,
    pub(crate) thread_id: u32,
    pub(crate) queue: *mut c_void,
    pub(crate) context: *mut c_void,
    pub(crate) device: &'a DeviceIdentity,
    pub(crate) device_is_cpu: bool,
    /// The event a synchronisation record names (NULL for one libpti injected).
    pub(crate) event: *mut c_void,
    pub(crate) append: u64,
    pub(crate) submit: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// What SYCL said of the task that submitted the command, if SYCL did.
    pub(crate) sycl: Option<SyclTag>,
}

impl Finished<'_> {
    /// Writes the command's record into this thread's buffer (if its view is enabled). A thread
    /// whose state is gone (a wait in a thread-local destructor) cannot write: the record is
    /// counted as lost, with a critical event.
    pub(crate) fn record(&self) {
        let command = Command {
            queue: self.queue,
            context: self.context,
            device: self.device,
            name: self.work.name(self.group, self.api_id),
            correlation_id: self.correlation_id,
            thread_id: self.thread_id,
            append: self.append,
            submit: self.submit,
            start: self.start,
            end: self.end,
            sycl: self.sycl,
        };
        let written = thread::with_any(|state| match self.work {
            Work::Kernel { .. } => device::kernel(state, self.device_is_cpu, &command),
            Work::Copy { src, dst, bytes } => device::memory_copy(state, &command, src, dst, bytes),
            Work::Fill {
                memory,
                bytes,
                value,
            } => device::memory_fill(state, &command, memory, bytes, value),
            Work::Barrier { kind, wait_events } => device::synchronization(
                state,
                &Synchronization {
                    kind,
                    group: self.group,
                    api_id: self.api_id,
                    context: self.context,
                    queue: self.queue,
                    event: self.event,
                    start: self.start,
                    end: self.end,
                    thread_id: self.thread_id,
                    correlation_id: self.correlation_id,
                    wait_events,
                    status: 0,
                },
            ),
        });
        if written.is_none() {
            let view = self.work.view(self.device_is_cpu);
            let total = view::count_lost(view);
            critical::raise(
                ResultCode::ErrorRecordsDropped,
                format_args!(
                    "a {view:?} record was completed on a thread that is exiting and could not be \
                     written ({total} lost so far)"
                ),
            );
        }
    }
}
