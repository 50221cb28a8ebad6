//! The records of device work: kernels, memory copies and fills, and synchronisation, and the
//! SYCL runtime's memory allocations (a libpti extension). Backends call these once a command has
//! completed and its times are on the host clock; each record goes into the calling thread's
//! buffer, carrying the correlation ID and thread of the call that submitted the work, and what
//! the SYCL runtime said of it ([`SyclTag`]) when SYCL submitted it.

use core::ffi::{CStr, c_char, c_void};

use super::abi::*;
use super::buffer::{append, append_with};
use super::{is_configured, is_enabled};
use crate::api::{ApiGroup, ApiId};
use crate::sycl_tag::SyclTag;
use crate::thread::ThreadState;

static LEVEL_ZERO_CPU_AS_GPU: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

/// From now on, kernels run on a Level Zero device of type CPU are recorded as GPU kernels
/// (`PTI_VIEW_DEVICE_GPU_KERNEL`), as Intel PTI's Level Zero collector records every Level Zero
/// kernel; the Intel face asks for it when its tool sets buffer callbacks. Process-wide, like the
/// faces' one clock. OpenCL's CPU devices keep their kind.
pub fn level_zero_cpu_kernels_as_gpu() {
    LEVEL_ZERO_CPU_AS_GPU.store(true, core::sync::atomic::Ordering::Relaxed);
}

/// Whether the kernels of a Level Zero device of type CPU (`is_cpu`) are recorded as CPU kernels.
pub(crate) fn level_zero_records_as_cpu(is_cpu: bool) -> bool {
    is_cpu && !LEVEL_ZERO_CPU_AS_GPU.load(core::sync::atomic::Ordering::Relaxed)
}

static FILLS_AS_INTEL: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// From now on, fills are named as Intel PTI names them, from a pattern in memory to the
/// destination (`zeCommandListAppendMemoryFill(M2D)`), instead of by the destination alone
/// (`…(D)`); the Intel face asks for it with the rest of Intel's habits. Process-wide.
pub fn name_fills_as_intel() {
    FILLS_AS_INTEL.store(true, core::sync::atomic::Ordering::Relaxed);
}

/// Whether fills are named as Intel PTI names them ([`name_fills_as_intel`]).
pub(crate) fn fills_named_as_intel() -> bool {
    FILLS_AS_INTEL.load(core::sync::atomic::Ordering::Relaxed)
}

/// The device a command ran on, as records name it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceIdentity {
    pub(crate) device: *mut c_void,
    pub(crate) pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    pub(crate) uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
}

impl DeviceIdentity {
    /// A PCI address as records write it, `"DDDD:BB:DD.F"` in hex (as Intel PTI writes it),
    /// NUL-terminated.
    pub(crate) fn pci_text(
        domain: u32,
        bus: u32,
        device: u32,
        function: u32,
    ) -> [c_char; PTI_MAX_PCI_ADDRESS_SIZE] {
        let text = format!("{domain:04x}:{bus:02x}:{device:02x}.{function:x}");
        let mut out = [0 as c_char; PTI_MAX_PCI_ADDRESS_SIZE];
        for (dst, src) in out
            .iter_mut()
            .zip(text.bytes().take(PTI_MAX_PCI_ADDRESS_SIZE - 1))
        {
            *dst = src as c_char;
        }
        out
    }
}

/// The engine a command ran on: Level Zero's command-queue group ordinal and the queue's index
/// in it (from the queue or immediate list's descriptor); 0 and 0 where the backend has no such
/// notion (OpenCL) or the object's creation was not seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Engine {
    pub(crate) ordinal: u32,
    pub(crate) index: u32,
}

/// What every device-work record shares: where it ran, who submitted it, and when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Command<'a> {
    /// The kernel or memory operation ID of the record.
    pub(crate) operation_id: u64,
    pub(crate) queue: *mut c_void,
    pub(crate) context: *mut c_void,
    pub(crate) device: &'a DeviceIdentity,
    pub(crate) engine: Engine,
    pub(crate) name: &'static CStr,
    pub(crate) correlation_id: u32,
    pub(crate) thread_id: u32,
    /// Host times (ns): appended to the queue, submitted to the device, started, ended.
    pub(crate) append: u64,
    pub(crate) submit: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// What SYCL said of the task that submitted it, if SYCL did.
    pub(crate) sycl: Option<&'a SyclTag>,
}

impl Command<'_> {
    fn sycl_queue_id(&self) -> u64 {
        self.sycl.map_or(PTI_INVALID_QUEUE_ID, |s| s.queue_id)
    }
}

/// The fields of a kernel record that SYCL's task fills.
#[derive(Clone, Copy)]
struct SyclFields {
    source_file: *const c_char,
    line: u64,
    task_begin: u64,
    enqueue_begin: u64,
    node_id: u64,
    queue_id: u64,
    invocation_id: u32,
}

/// The view that a kernel on a CPU device (`cpu`) or another device is recorded in.
pub(crate) const fn kernel_view(cpu: bool) -> pti_view_kind {
    if cpu {
        pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL
    } else {
        pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL
    }
}

/// Writes a kernel record, if the view for its device kind is enabled.
pub(crate) fn kernel(state: &ThreadState, cpu: bool, c: &Command<'_>) {
    let kind = kernel_view(cpu);
    if !is_configured(kind) {
        return;
    }
    let sycl = c.sycl;
    // The driver's name names the kernel that ran; SYCL's (a lambda's type, or the function
    // that submitted it) only stands in where the driver had none.
    let name = super::demangle::kernel_name(match sycl.and_then(|s| s.kernel_name) {
        Some(sycl_name) if c.name.is_empty() => sycl_name,
        _ => c.name,
    });
    // What SYCL adds, decided once (most commands have no SYCL task).
    let no_task = SyclFields {
        source_file: core::ptr::null(),
        line: 0,
        task_begin: 0,
        enqueue_begin: 0,
        node_id: 0,
        queue_id: PTI_INVALID_QUEUE_ID,
        invocation_id: 0,
    };
    let task = sycl.map_or(no_task, |s| SyclFields {
        source_file: s.source_file.map_or(core::ptr::null(), CStr::as_ptr),
        line: s.line,
        task_begin: s.task_begin,
        enqueue_begin: s.enqueue_begin,
        node_id: s.node_id,
        queue_id: s.queue_id,
        invocation_id: s.invocation_id,
    });
    append_with(state, kind, || pti_view_record_kernel_v2 {
        _view_kind: pti_view_record_base::of(kind),
        _queue_handle: c.queue,
        _context_handle: c.context,
        _name: name.as_ptr(),
        _source_file_name: task.source_file,
        _source_line_number: task.line,
        _kernel_id: c.operation_id,
        _correlation_id: c.correlation_id,
        _thread_id: c.thread_id,
        _pci_address: c.device.pci_address,
        _device_uuid: c.device.uuid,
        _append_timestamp: c.append,
        _start_timestamp: c.start,
        _end_timestamp: c.end,
        _submit_timestamp: c.submit,
        _sycl_task_begin_timestamp: task.task_begin,
        _sycl_enqk_begin_timestamp: task.enqueue_begin,
        _sycl_node_id: task.node_id,
        _sycl_queue_id: task.queue_id,
        _sycl_invocation_id: task.invocation_id,
        _device_handle: c.device.device,
        _engine_ordinal: c.engine.ordinal,
        _engine_index: c.engine.index,
    });
}

/// Writes a memory-copy record, if the copy view is enabled.
pub(crate) fn memory_copy(
    state: &ThreadState,
    c: &Command<'_>,
    src: pti_view_memory_type,
    dst: pti_view_memory_type,
    bytes: u64,
) {
    let kind = pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_memory_copy_v2 {
            _view_kind: pti_view_record_base::of(kind),
            _memcpy_type: pti_view_memcpy_type::from_memory_types(src, dst),
            _mem_src: src,
            _mem_dst: dst,
            _queue_handle: c.queue,
            _context_handle: c.context,
            _name: c.name.as_ptr(),
            _pci_address: c.device.pci_address,
            _device_uuid: c.device.uuid,
            _mem_op_id: c.operation_id,
            _correlation_id: c.correlation_id,
            _thread_id: c.thread_id,
            _append_timestamp: c.append,
            _start_timestamp: c.start,
            _end_timestamp: c.end,
            _submit_timestamp: c.submit,
            _bytes: bytes,
            _sycl_queue_id: c.sycl_queue_id(),
            _device_handle: c.device.device,
            _engine_ordinal: c.engine.ordinal,
            _engine_index: c.engine.index,
        },
    );
}

/// Writes a memory-fill record, if the fill view is enabled.
pub(crate) fn memory_fill(
    state: &ThreadState,
    c: &Command<'_>,
    memory: pti_view_memory_type,
    bytes: u64,
    value: u64,
) {
    let kind = pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_FILL;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_memory_fill_v2 {
            _view_kind: pti_view_record_base::of(kind),
            _mem_type: memory,
            _queue_handle: c.queue,
            _context_handle: c.context,
            _name: c.name.as_ptr(),
            _pci_address: c.device.pci_address,
            _device_uuid: c.device.uuid,
            _mem_op_id: c.operation_id,
            _correlation_id: c.correlation_id,
            _thread_id: c.thread_id,
            _append_timestamp: c.append,
            _start_timestamp: c.start,
            _end_timestamp: c.end,
            _submit_timestamp: c.submit,
            _bytes: bytes,
            _value_for_set: value,
            _sycl_queue_id: c.sycl_queue_id(),
            _device_handle: c.device.device,
            _engine_ordinal: c.engine.ordinal,
            _engine_index: c.engine.index,
        },
    );
}

/// A synchronisation: a host wait (host times of the call) or a device barrier (device times).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Synchronization {
    pub(crate) kind: pti_view_synchronization_type,
    pub(crate) group: ApiGroup,
    pub(crate) api_id: ApiId,
    pub(crate) context: *mut c_void,
    pub(crate) queue: *mut c_void,
    pub(crate) event: *mut c_void,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) thread_id: u32,
    pub(crate) correlation_id: u32,
    pub(crate) wait_events: u32,
    pub(crate) status: u32,
}

/// Writes a synchronisation record, if the synchronisation view is enabled.
pub(crate) fn synchronization(state: &ThreadState, s: &Synchronization) {
    let kind = pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_synchronization {
            _view_kind: pti_view_record_base::of(kind),
            _synch_type: s.kind,
            _context_handle: s.context,
            _queue_handle: s.queue,
            _event_handle: s.event,
            _start_timestamp: s.start,
            _end_timestamp: s.end.max(s.start),
            _thread_id: s.thread_id,
            _correlation_id: s.correlation_id,
            _number_wait_events: s.wait_events,
            _return_code: s.status,
            _api_id: crate::ids::as_written(s.group, s.api_id),
            _api_group: s.group.into(),
        },
    );
}

/// A memory allocation or release by the SYCL runtime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemoryEvent {
    pub(crate) operation: pti_view_memory_operation,
    pub(crate) memory: pti_view_memory_type,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) address: u64,
    pub(crate) bytes: u64,
    pub(crate) name: Option<&'static CStr>,
    pub(crate) device_name: Option<&'static CStr>,
    pub(crate) thread_id: u32,
    pub(crate) correlation_id: u32,
}

/// How a kernel was launched (see `pti_view_record_kernel_launch` for each backend's meaning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Launch {
    pub(crate) work_dim: u32,
    pub(crate) group_count: [u32; 3],
    pub(crate) group_size: [u32; 3],
    pub(crate) global_size: [u64; 3],
}

impl Launch {
    /// A Level Zero launch: `group_count` groups of `group_size` (0s where not known).
    pub(crate) fn groups(group_count: [u32; 3], group_size: [u32; 3]) -> Self {
        let mut global_size = [0u64; 3];
        for (g, (n, s)) in global_size
            .iter_mut()
            .zip(group_count.iter().zip(group_size))
        {
            *g = u64::from(*n) * u64::from(s);
        }
        Launch {
            work_dim: 3,
            group_count,
            group_size,
            global_size,
        }
    }

    /// An OpenCL NDRange of `work_dim` dimensions (1 to 3; others give nothing), `global`
    /// work-items, in work-groups of `local` when the program chose them.
    pub(crate) fn nd_range(work_dim: u32, global: [u64; 3], local: Option<[u64; 3]>) -> Self {
        if !(1..=3).contains(&work_dim) {
            return Launch::default();
        }
        let mut launch = Launch {
            work_dim,
            global_size: global,
            ..Launch::default()
        };
        if let Some(local) = local {
            for d in 0..work_dim as usize {
                launch.group_size[d] = u32::try_from(local[d]).unwrap_or(u32::MAX);
                launch.group_count[d] = match local[d] {
                    0 => 0,
                    l => u32::try_from(global[d].div_ceil(l)).unwrap_or(u32::MAX),
                };
            }
        }
        launch
    }
}

/// Writes the launch record of kernel `kernel_id`, if that (extension) view is enabled. The
/// check is inlined: asked for every kernel, and mostly off.
#[inline]
pub(crate) fn kernel_launch(state: &ThreadState, kernel_id: u64, l: &Launch) {
    if is_configured(pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH) {
        write_kernel_launch(state, kernel_id, l);
    }
}

fn write_kernel_launch(state: &ThreadState, kernel_id: u64, l: &Launch) {
    let kind = pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH;
    append(
        state,
        kind,
        pti_view_record_kernel_launch {
            _view_kind: pti_view_record_base::of(kind),
            _work_dim: l.work_dim,
            _kernel_id: kernel_id,
            _group_count: l.group_count,
            _group_size: l.group_size,
            _global_size: l.global_size,
        },
    );
}

/// One execution of a command of a regular Level Zero list: who executed it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Execution {
    pub(crate) correlation_id: u32,
    pub(crate) thread_id: u32,
    pub(crate) api_id: ApiId,
    /// Host time at which the execute call began (ns).
    pub(crate) submitted: u64,
    pub(crate) queue: *mut c_void,
}

/// Writes the command-execution record of operation `operation_id`, if that (extension) view is
/// enabled.
pub(crate) fn command_execution(state: &ThreadState, operation_id: u64, e: &Execution) {
    let kind = pti_view_kind::PTI_VIEW_EXT_COMMAND_EXECUTION;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_command_execution {
            _view_kind: pti_view_record_base::of(kind),
            _thread_id: e.thread_id,
            _operation_id: operation_id,
            _correlation_id: e.correlation_id,
            _api_id: e.api_id,
            _submit_timestamp: e.submitted,
            _queue_handle: e.queue,
        },
    );
}

/// Writes a memory-allocation record, if that (extension) view is enabled.
pub(crate) fn memory_allocation(state: &ThreadState, m: &MemoryEvent) {
    let kind = pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION;
    if !is_enabled(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_memory_allocation {
            _view_kind: pti_view_record_base::of(kind),
            _operation: m.operation,
            _mem_type: m.memory,
            _reserved: 0,
            _start_timestamp: m.start,
            _end_timestamp: m.end.max(m.start),
            _address: m.address,
            _bytes: m.bytes,
            _name: m.name.map_or(core::ptr::null(), CStr::as_ptr),
            _device_name: m.device_name.map_or(core::ptr::null(), CStr::as_ptr),
            _thread_id: m.thread_id,
            _correlation_id: m.correlation_id,
        },
    );
}
