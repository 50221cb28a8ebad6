//! The C layouts of the View API's records, as the Python package needs them to build NumPy
//! structured dtypes: for each record type, its size and each field's name, offset, size and
//! NumPy format. Offsets and sizes come from the `pti-abi` structs (`offset_of!`), which
//! `tests/c_abi.rs` checks against `pti_view.h`; the format follows from the field's Rust type
//! ([`Dtype`]), so a field whose type changes cannot keep a stale format.
//!
//! It touches nothing at run time but the structs' definitions.

use core::ffi::{c_char, c_void};
use core::mem::{MaybeUninit, offset_of, size_of};

use pti_abi::*;

/// A field's NumPy format (array-protocol strings, little-endian).
pub(crate) trait Dtype {
    const FORMAT: &'static str;
}

macro_rules! dtype {
    ($($t:ty => $f:literal),* $(,)?) => { $(impl Dtype for $t { const FORMAT: &'static str = $f; })* };
}

dtype! {
    u32 => "<u4",
    u64 => "<u8",
    // Pointers (names, handles) are addresses; names are read with `ctypes.string_at` (libpti's
    // names live as long as the library).
    *const c_char => "<u8",
    *mut c_void => "<u8",
    [c_char; PTI_MAX_PCI_ADDRESS_SIZE] => "S16",
    [u8; PTI_MAX_DEVICE_UUID_SIZE] => "(16,)u1",
    [u32; 3] => "(3,)<u4",
    [u64; 3] => "(3,)<u8",
    // The enums of the C header are `uint32_t`-sized (`*_FORCE_UINT32`).
    pti_view_record_base => "<u4",
    pti_view_memcpy_type => "<u4",
    pti_view_memory_type => "<u4",
    pti_view_synchronization_type => "<u4",
    pti_api_group_id => "<u4",
    pti_view_external_kind => "<u4",
    pti_view_overhead_kind => "<u4",
    pti_view_memory_operation => "<u4",
    pti_view_loss_reason => "<u4",
    pti_view_annotation_type => "<u4",
    pti_view_kind => "<u4",
}

/// One field of a record type.
pub(crate) struct Field {
    /// The C member's name without its leading underscore (`start_timestamp`).
    pub(crate) name: &'static str,
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) format: &'static str,
}

/// One record type.
pub(crate) struct Layout {
    /// The C struct's name.
    pub(crate) name: &'static str,
    pub(crate) size: usize,
    pub(crate) fields: Vec<Field>,
}

/// The size and format of the field `place` points to (only its type is used).
fn describe<T: Dtype>(_place: *const T) -> (usize, &'static str) {
    (size_of::<T>(), T::FORMAT)
}

macro_rules! layout {
    ($t:ident { $($f:ident),* $(,)? }) => {{
        let probe = MaybeUninit::<$t>::uninit();
        let base = probe.as_ptr();
        Layout {
            name: stringify!($t),
            size: size_of::<$t>(),
            fields: vec![$({
                // SAFETY: only the place's address is taken (`&raw const`), never read: the
                // field of an uninitialised value of the struct.
                let (size, format) = describe(unsafe { &raw const (*base).$f });
                Field {
                    name: &stringify!($f)[1..],
                    offset: offset_of!($t, $f),
                    size,
                    format,
                }
            }),*],
        }
    }};
}

/// The layout of the records of `kind` (the `_v2` layouts libpti writes), or None for a kind
/// libpti defines no record for.
pub(crate) fn of(kind: pti_view_kind) -> Option<Layout> {
    use pti_view_kind::*;
    Some(match kind {
        PTI_VIEW_DRIVER_API | PTI_VIEW_RUNTIME_API => layout!(pti_view_record_api {
            _view_kind,
            _start_timestamp,
            _end_timestamp,
            _api_group,
            _api_id,
            _process_id,
            _thread_id,
            _correlation_id,
            _return_code,
        }),
        PTI_VIEW_DEVICE_GPU_KERNEL | PTI_VIEW_DEVICE_CPU_KERNEL => {
            layout!(pti_view_record_kernel_v2 {
                _view_kind,
                _queue_handle,
                _context_handle,
                _name,
                _source_file_name,
                _source_line_number,
                _kernel_id,
                _correlation_id,
                _thread_id,
                _pci_address,
                _device_uuid,
                _append_timestamp,
                _start_timestamp,
                _end_timestamp,
                _submit_timestamp,
                _sycl_task_begin_timestamp,
                _sycl_enqk_begin_timestamp,
                _sycl_node_id,
                _sycl_queue_id,
                _sycl_invocation_id,
                _device_handle,
                _engine_ordinal,
                _engine_index,
            })
        }
        PTI_VIEW_DEVICE_GPU_MEM_COPY => layout!(pti_view_record_memory_copy_v2 {
            _view_kind,
            _memcpy_type,
            _mem_src,
            _mem_dst,
            _queue_handle,
            _context_handle,
            _name,
            _pci_address,
            _device_uuid,
            _mem_op_id,
            _correlation_id,
            _thread_id,
            _append_timestamp,
            _start_timestamp,
            _end_timestamp,
            _submit_timestamp,
            _bytes,
            _sycl_queue_id,
            _device_handle,
            _engine_ordinal,
            _engine_index,
        }),
        PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P => layout!(pti_view_record_memory_copy_p2p_v2 {
            _view_kind,
            _memcpy_type,
            _mem_src,
            _mem_dst,
            _queue_handle,
            _context_handle,
            _name,
            _src_pci_address,
            _dst_pci_address,
            _src_uuid,
            _dst_uuid,
            _mem_op_id,
            _correlation_id,
            _thread_id,
            _append_timestamp,
            _start_timestamp,
            _end_timestamp,
            _submit_timestamp,
            _bytes,
            _sycl_queue_id,
            _src_device_handle,
            _dst_device_handle,
            _engine_ordinal,
            _engine_index,
        }),
        PTI_VIEW_DEVICE_GPU_MEM_FILL => layout!(pti_view_record_memory_fill_v2 {
            _view_kind,
            _mem_type,
            _queue_handle,
            _context_handle,
            _name,
            _pci_address,
            _device_uuid,
            _mem_op_id,
            _correlation_id,
            _thread_id,
            _append_timestamp,
            _start_timestamp,
            _end_timestamp,
            _submit_timestamp,
            _bytes,
            _value_for_set,
            _sycl_queue_id,
            _device_handle,
            _engine_ordinal,
            _engine_index,
        }),
        PTI_VIEW_DEVICE_SYNCHRONIZATION => layout!(pti_view_record_synchronization {
            _view_kind,
            _synch_type,
            _context_handle,
            _queue_handle,
            _event_handle,
            _start_timestamp,
            _end_timestamp,
            _thread_id,
            _correlation_id,
            _number_wait_events,
            _return_code,
            _api_id,
            _api_group,
        }),
        PTI_VIEW_EXTERNAL_CORRELATION => layout!(pti_view_record_external_correlation {
            _view_kind,
            _correlation_id,
            _external_id,
            _external_kind,
        }),
        PTI_VIEW_COLLECTION_OVERHEAD => layout!(pti_view_record_overhead {
            _view_kind,
            _overhead_start_timestamp_ns,
            _overhead_end_timestamp_ns,
            _overhead_thread_id,
            _api_id,
            _overhead_count,
            _overhead_duration_ns,
            _overhead_kind,
        }),
        PTI_VIEW_COMMUNICATION => layout!(pti_view_record_comms {
            _view_kind,
            _start_timestamp,
            _end_timestamp,
            _process_id,
            _thread_id,
            _send_size,
            _recv_size,
            _communicator_id,
            _name,
        }),
        PTI_VIEW_EXT_MEMORY_ALLOCATION => layout!(pti_view_record_memory_allocation {
            _view_kind,
            _operation,
            _mem_type,
            _reserved,
            _start_timestamp,
            _end_timestamp,
            _address,
            _bytes,
            _name,
            _device_name,
            _thread_id,
            _correlation_id,
        }),
        PTI_VIEW_EXT_COMMAND_EXECUTION => layout!(pti_view_record_command_execution {
            _view_kind,
            _thread_id,
            _operation_id,
            _correlation_id,
            _api_id,
            _submit_timestamp,
            _queue_handle,
        }),
        PTI_VIEW_EXT_KERNEL_LAUNCH => layout!(pti_view_record_kernel_launch {
            _view_kind,
            _work_dim,
            _kernel_id,
            _group_count,
            _group_size,
            _global_size,
        }),
        PTI_VIEW_EXT_LOSS => layout!(pti_view_record_loss {
            _view_kind,
            _reason,
            _first_timestamp,
            _last_timestamp,
            _count,
            _lost_kind,
            _api_group,
            _api_id,
            _process_id,
        }),
        PTI_VIEW_EXT_ANNOTATION => layout!(pti_view_record_annotation {
            _view_kind,
            _annotation_type,
            _start_timestamp,
            _end_timestamp,
            _domain,
            _name,
            _id,
            _parent_id,
            _process_id,
            _thread_id,
            _depth,
            _reserved,
        }),
        PTI_VIEW_INVALID | PTI_VIEW_RESERVED => return None,
    })
}
