//! # pti-abi: the C layouts of libpti's view records
//!
//! The view API's C ABI: record layouts, enums and handle types, exactly as `pti_view.h`
//! declares them (the header is generated from this file by cbindgen, `cargo xtask gen`).
//!
//! Names follow C, because these types *are* the ABI: tools written for the published PTI view
//! API read these records, field by field. Every enum is 4 bytes wide; every record starts with
//! `_view_kind` and its size is a multiple of 8, so records laid back to back stay aligned. The
//! `const` block at the end checks every size and offset against the published layout; the
//! header repeats the checks as `static_assert`s with the numbers Rust measured ([`LAYOUTS`]).
//!
//! Device records are written in their `_v2` layouts, which extend the v1 layout at its end.
//! [`records`] walks a filled buffer and types its records.
//!
//! A leaf crate with no dependencies, shared by everything that reads or writes these layouts:
//! pti-core (which writes the records, and re-exports this crate as `pti_core::view::abi`), the
//! pti-trace collector (which reads them through libpti's C API) and the header generator
//! (`xtask/src/headers.rs`, which regenerates headers even while pti-core does not build).
#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::c_char;
use core::mem::{offset_of, size_of};

mod handles;
pub use handles::*;
pub mod records;

/// Size of `_pci_address` in device records.
pub const PTI_MAX_PCI_ADDRESS_SIZE: usize = 16;
/// `_sycl_queue_id` of work not submitted through a SYCL queue.
pub const PTI_INVALID_QUEUE_ID: u64 = 0xFFFF_FFFF_FFFF_FFFE;

/// Kinds of view records.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_kind {
    /// Not a kind.
    PTI_VIEW_INVALID = 0,
    /// Kernels executed on a GPU: pti_view_record_kernel (v2 layout).
    PTI_VIEW_DEVICE_GPU_KERNEL = 1,
    /// Kernels executed on a CPU device: pti_view_record_kernel (v2 layout).
    PTI_VIEW_DEVICE_CPU_KERNEL = 2,
    /// Driver API calls (Level Zero, OpenCL): pti_view_record_api.
    PTI_VIEW_DRIVER_API = 3,
    /// Reserved.
    PTI_VIEW_RESERVED = 4,
    /// libpti's own overhead: pti_view_record_overhead.
    PTI_VIEW_COLLECTION_OVERHEAD = 5,
    /// Runtime API calls (SYCL / Unified Runtime): pti_view_record_api.
    PTI_VIEW_RUNTIME_API = 6,
    /// External correlation: pti_view_record_external_correlation.
    PTI_VIEW_EXTERNAL_CORRELATION = 7,
    /// Memory copies: pti_view_record_memory_copy (v2 layout).
    PTI_VIEW_DEVICE_GPU_MEM_COPY = 8,
    /// Memory fills: pti_view_record_memory_fill (v2 layout).
    PTI_VIEW_DEVICE_GPU_MEM_FILL = 9,
    /// Peer-to-peer memory copies: pti_view_record_memory_copy_p2p (v2 layout).
    PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P = 10,
    /// Synchronisation: pti_view_record_synchronization.
    PTI_VIEW_DEVICE_SYNCHRONIZATION = 11,
    /// Collective communication (not produced by libpti).
    PTI_VIEW_COMMUNICATION = 12,
    /// libpti extension (`pti_ext.h`): memory allocations and releases of the SYCL runtime,
    /// pti_view_record_memory_allocation. Extensions take values from 0x10000 on, away from
    /// the published kinds.
    PTI_VIEW_EXT_MEMORY_ALLOCATION = 0x10001,
    /// libpti extension (`pti_ext.h`): each execution of a command recorded on a regular Level
    /// Zero command list, pti_view_record_command_execution. The command's kernel, copy or fill
    /// record carries its append call's correlation ID (as Intel PTI's does); this record
    /// carries the execute call's.
    PTI_VIEW_EXT_COMMAND_EXECUTION = 0x10002,
    /// libpti extension (`pti_ext.h`): the launch configuration of each kernel record (OpenCL
    /// global and local sizes, Level Zero group count and group size),
    /// pti_view_record_kernel_launch.
    PTI_VIEW_EXT_KERNEL_LAUNCH = 0x10003,
    /// libpti extension (`pti_ext.h`): what libpti could not record, pti_view_record_loss:
    /// records dropped (no buffer, or the process exiting), device records whose data the
    /// runtime would not give, and commands of functions that have no record kind. Written at
    /// each flush while enabled: one record per kind, reason and function, counting the losses
    /// since the previous loss record.
    PTI_VIEW_EXT_LOSS = 0x10004,
    /// libpti extension (`pti_ext.h`): the program's own annotations, made through Intel's ITT
    /// API (tasks, overlapped tasks, markers, frames, events) with libpti as the ITT collector
    /// (`INTEL_LIBITTNOTIFY64`), pti_view_record_annotation: one record per range when it ends,
    /// or per marker.
    PTI_VIEW_EXT_ANNOTATION = 0x10005,
}

impl pti_view_kind {
    /// Every kind but INVALID, in numeric order.
    pub const ALL: [pti_view_kind; 12] = [
        pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL,
        pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL,
        pti_view_kind::PTI_VIEW_DRIVER_API,
        pti_view_kind::PTI_VIEW_RESERVED,
        pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD,
        pti_view_kind::PTI_VIEW_RUNTIME_API,
        pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION,
        pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY,
        pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_FILL,
        pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P,
        pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION,
        pti_view_kind::PTI_VIEW_COMMUNICATION,
    ];

    /// libpti's extension kinds.
    ///
    /// cbindgen:ignore
    pub const EXTENSIONS: [pti_view_kind; 5] = [
        pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION,
        pti_view_kind::PTI_VIEW_EXT_COMMAND_EXECUTION,
        pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH,
        pti_view_kind::PTI_VIEW_EXT_LOSS,
        pti_view_kind::PTI_VIEW_EXT_ANNOTATION,
    ];

    /// Number of [`pti_view_kind::index`] values.
    ///
    /// cbindgen:ignore
    pub const COUNT: usize = 18;

    /// The kind with C value `raw`, INVALID included; `None` for unknown values.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(pti_view_kind::PTI_VIEW_INVALID),
            0x10001 => Some(pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION),
            0x10002 => Some(pti_view_kind::PTI_VIEW_EXT_COMMAND_EXECUTION),
            0x10003 => Some(pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH),
            0x10004 => Some(pti_view_kind::PTI_VIEW_EXT_LOSS),
            0x10005 => Some(pti_view_kind::PTI_VIEW_EXT_ANNOTATION),
            _ => Self::ALL.get(raw as usize - 1).copied(),
        }
    }

    /// A dense index of the kind (0 to [`pti_view_kind::COUNT`] - 1), for per-kind tables: the
    /// published kinds' values, then the extensions.
    pub const fn index(self) -> usize {
        match self {
            pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION => 13,
            pti_view_kind::PTI_VIEW_EXT_COMMAND_EXECUTION => 14,
            pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH => 15,
            pti_view_kind::PTI_VIEW_EXT_LOSS => 16,
            pti_view_kind::PTI_VIEW_EXT_ANNOTATION => 17,
            kind => kind as usize,
        }
    }

    /// The size of the record this kind labels (the v2 layout for device records), or `None`
    /// for INVALID and RESERVED, which label no record.
    pub const fn record_size(self) -> Option<usize> {
        Some(match self {
            pti_view_kind::PTI_VIEW_INVALID | pti_view_kind::PTI_VIEW_RESERVED => return None,
            pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL
            | pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL => size_of::<pti_view_record_kernel_v2>(),
            pti_view_kind::PTI_VIEW_DRIVER_API | pti_view_kind::PTI_VIEW_RUNTIME_API => {
                size_of::<pti_view_record_api>()
            }
            pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD => size_of::<pti_view_record_overhead>(),
            pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION => {
                size_of::<pti_view_record_external_correlation>()
            }
            pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY => {
                size_of::<pti_view_record_memory_copy_v2>()
            }
            pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_FILL => {
                size_of::<pti_view_record_memory_fill_v2>()
            }
            pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P => {
                size_of::<pti_view_record_memory_copy_p2p_v2>()
            }
            pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION => {
                size_of::<pti_view_record_synchronization>()
            }
            pti_view_kind::PTI_VIEW_COMMUNICATION => size_of::<pti_view_record_comms>(),
            pti_view_kind::PTI_VIEW_EXT_MEMORY_ALLOCATION => {
                size_of::<pti_view_record_memory_allocation>()
            }
            pti_view_kind::PTI_VIEW_EXT_COMMAND_EXECUTION => {
                size_of::<pti_view_record_command_execution>()
            }
            pti_view_kind::PTI_VIEW_EXT_KERNEL_LAUNCH => size_of::<pti_view_record_kernel_launch>(),
            pti_view_kind::PTI_VIEW_EXT_LOSS => size_of::<pti_view_record_loss>(),
            pti_view_kind::PTI_VIEW_EXT_ANNOTATION => size_of::<pti_view_record_annotation>(),
        })
    }
}

/// Kinds of synchronisation.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_synchronization_type {
    /// Unknown.
    PTI_VIEW_SYNCHRONIZATION_TYPE_UNKNOWN = 0,
    /// An execution barrier on the device.
    PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_EXECUTION = 1,
    /// A memory barrier on the device.
    PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_MEMORY = 2,
    /// The host waited for a fence.
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_FENCE = 3,
    /// The host waited for an event.
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_EVENT = 4,
    /// The host waited for a command list.
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_LIST = 5,
    /// The host waited for a command queue.
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_COMMAND_QUEUE = 6,
    /// The host waited for a device.
    PTI_VIEW_SYNCHRONIZATION_TYPE_HOST_DEVICE = 7,
}

/// Where memory lives.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_memory_type {
    /// Unknown, or the program's own (not USM) host memory.
    PTI_VIEW_MEMORY_TYPE_MEMORY = 0,
    /// USM host memory.
    PTI_VIEW_MEMORY_TYPE_HOST = 1,
    /// USM device memory.
    PTI_VIEW_MEMORY_TYPE_DEVICE = 2,
    /// USM shared memory.
    PTI_VIEW_MEMORY_TYPE_SHARED = 3,
}

/// Direction of a copy: source to destination memory type (M: memory, H: host, D: device,
/// S: shared).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_memcpy_type {
    /// Memory to memory.
    PTI_VIEW_MEMCPY_TYPE_M2M = 0,
    /// Memory to host.
    PTI_VIEW_MEMCPY_TYPE_M2H = 1,
    /// Memory to device.
    PTI_VIEW_MEMCPY_TYPE_M2D = 2,
    /// Memory to shared.
    PTI_VIEW_MEMCPY_TYPE_M2S = 3,
    /// Host to memory.
    PTI_VIEW_MEMCPY_TYPE_H2M = 4,
    /// Host to host.
    PTI_VIEW_MEMCPY_TYPE_H2H = 5,
    /// Host to device.
    PTI_VIEW_MEMCPY_TYPE_H2D = 6,
    /// Host to shared.
    PTI_VIEW_MEMCPY_TYPE_H2S = 7,
    /// Device to memory.
    PTI_VIEW_MEMCPY_TYPE_D2M = 8,
    /// Device to host.
    PTI_VIEW_MEMCPY_TYPE_D2H = 9,
    /// Device to device.
    PTI_VIEW_MEMCPY_TYPE_D2D = 10,
    /// Device to shared.
    PTI_VIEW_MEMCPY_TYPE_D2S = 11,
    /// Shared to memory.
    PTI_VIEW_MEMCPY_TYPE_S2M = 12,
    /// Shared to host.
    PTI_VIEW_MEMCPY_TYPE_S2H = 13,
    /// Shared to device.
    PTI_VIEW_MEMCPY_TYPE_S2D = 14,
    /// Shared to shared.
    PTI_VIEW_MEMCPY_TYPE_S2S = 15,
}

/// Checked conversion from a C value, for enums whose values run from 0 without gaps.
macro_rules! from_raw_dense {
    ($t:ident, $($v:ident),+ $(,)?) => {
        impl $t {
            /// The value with C value `raw`, or `None` if the enum has none.
            pub fn from_raw(raw: u32) -> Option<Self> {
                [$($t::$v),+].into_iter().find(|v| *v as u32 == raw)
            }
        }
    };
}

from_raw_dense!(
    pti_view_memory_type,
    PTI_VIEW_MEMORY_TYPE_MEMORY,
    PTI_VIEW_MEMORY_TYPE_HOST,
    PTI_VIEW_MEMORY_TYPE_DEVICE,
    PTI_VIEW_MEMORY_TYPE_SHARED
);
from_raw_dense!(
    pti_view_memcpy_type,
    PTI_VIEW_MEMCPY_TYPE_M2M,
    PTI_VIEW_MEMCPY_TYPE_M2H,
    PTI_VIEW_MEMCPY_TYPE_M2D,
    PTI_VIEW_MEMCPY_TYPE_M2S,
    PTI_VIEW_MEMCPY_TYPE_H2M,
    PTI_VIEW_MEMCPY_TYPE_H2H,
    PTI_VIEW_MEMCPY_TYPE_H2D,
    PTI_VIEW_MEMCPY_TYPE_H2S,
    PTI_VIEW_MEMCPY_TYPE_D2M,
    PTI_VIEW_MEMCPY_TYPE_D2H,
    PTI_VIEW_MEMCPY_TYPE_D2D,
    PTI_VIEW_MEMCPY_TYPE_D2S,
    PTI_VIEW_MEMCPY_TYPE_S2M,
    PTI_VIEW_MEMCPY_TYPE_S2H,
    PTI_VIEW_MEMCPY_TYPE_S2D,
    PTI_VIEW_MEMCPY_TYPE_S2S,
);
from_raw_dense!(
    pti_view_overhead_kind,
    PTI_VIEW_OVERHEAD_KIND_INVALID,
    PTI_VIEW_OVERHEAD_KIND_UNKNOWN,
    PTI_VIEW_OVERHEAD_KIND_RESOURCE,
    PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH,
    PTI_VIEW_OVERHEAD_KIND_DRIVER,
    PTI_VIEW_OVERHEAD_KIND_TIME,
);
from_raw_dense!(
    pti_api_group_id,
    PTI_API_GROUP_RESERVED,
    PTI_API_GROUP_LEVELZERO,
    PTI_API_GROUP_OPENCL,
    PTI_API_GROUP_SYCL,
    PTI_API_GROUP_HYBRID_SYCL_LEVELZERO,
    PTI_API_GROUP_HYBRID_SYCL_OPENCL,
    PTI_API_GROUP_ALL,
);
from_raw_dense!(
    pti_api_class,
    PTI_API_CLASS_RESERVED,
    PTI_API_CLASS_GPU_OPERATION_CORE,
    PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION,
    PTI_API_CLASS_ALL,
);

impl pti_view_memcpy_type {
    /// The copy type from the memory types of source and destination.
    pub const fn from_memory_types(src: pti_view_memory_type, dst: pti_view_memory_type) -> Self {
        use pti_view_memcpy_type::*;
        const TABLE: [pti_view_memcpy_type; 16] = [
            PTI_VIEW_MEMCPY_TYPE_M2M,
            PTI_VIEW_MEMCPY_TYPE_M2H,
            PTI_VIEW_MEMCPY_TYPE_M2D,
            PTI_VIEW_MEMCPY_TYPE_M2S,
            PTI_VIEW_MEMCPY_TYPE_H2M,
            PTI_VIEW_MEMCPY_TYPE_H2H,
            PTI_VIEW_MEMCPY_TYPE_H2D,
            PTI_VIEW_MEMCPY_TYPE_H2S,
            PTI_VIEW_MEMCPY_TYPE_D2M,
            PTI_VIEW_MEMCPY_TYPE_D2H,
            PTI_VIEW_MEMCPY_TYPE_D2D,
            PTI_VIEW_MEMCPY_TYPE_D2S,
            PTI_VIEW_MEMCPY_TYPE_S2M,
            PTI_VIEW_MEMCPY_TYPE_S2H,
            PTI_VIEW_MEMCPY_TYPE_S2D,
            PTI_VIEW_MEMCPY_TYPE_S2S,
        ];
        TABLE[src as usize * 4 + dst as usize]
    }
}

/// Kinds of external correlation IDs a tool can push.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_external_kind {
    /// Not a kind.
    PTI_VIEW_EXTERNAL_KIND_INVALID = 0,
    /// Unknown.
    PTI_VIEW_EXTERNAL_KIND_UNKNOWN = 1,
    /// Tool-defined 0.
    PTI_VIEW_EXTERNAL_KIND_CUSTOM_0 = 2,
    /// Tool-defined 1.
    PTI_VIEW_EXTERNAL_KIND_CUSTOM_1 = 3,
    /// Tool-defined 2.
    PTI_VIEW_EXTERNAL_KIND_CUSTOM_2 = 4,
    /// Tool-defined 3.
    PTI_VIEW_EXTERNAL_KIND_CUSTOM_3 = 5,
}

impl pti_view_external_kind {
    /// The kinds a tool can push (all but INVALID).
    pub const PUSHABLE: [pti_view_external_kind; 5] = [
        pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_UNKNOWN,
        pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_CUSTOM_0,
        pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_CUSTOM_1,
        pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_CUSTOM_2,
        pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_CUSTOM_3,
    ];

    /// A pushable kind from its C value; `None` for INVALID and unknown values.
    pub fn pushable_from_raw(raw: u32) -> Option<Self> {
        Self::PUSHABLE.iter().copied().find(|k| *k as u32 == raw)
    }
}

/// Kinds of overhead.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_overhead_kind {
    /// Not a kind.
    PTI_VIEW_OVERHEAD_KIND_INVALID = 0,
    /// Unknown.
    PTI_VIEW_OVERHEAD_KIND_UNKNOWN = 1,
    /// Resource management.
    PTI_VIEW_OVERHEAD_KIND_RESOURCE = 2,
    /// Flushing buffers (ptiFlushAllViews).
    PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH = 3,
    /// Work libpti made the driver do.
    PTI_VIEW_OVERHEAD_KIND_DRIVER = 4,
    /// Time spent in libpti around traced calls (callbacks included).
    PTI_VIEW_OVERHEAD_KIND_TIME = 5,
}

/// API groups. Calls are traced under 1..=3; 4, 5 and ALL only label records and filters.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_api_group_id {
    /// Not a group.
    PTI_API_GROUP_RESERVED = 0,
    /// Level Zero.
    PTI_API_GROUP_LEVELZERO = 1,
    /// OpenCL.
    PTI_API_GROUP_OPENCL = 2,
    /// SYCL, seen as Unified Runtime calls.
    PTI_API_GROUP_SYCL = 3,
    /// SYCL over Level Zero (records only).
    PTI_API_GROUP_HYBRID_SYCL_LEVELZERO = 4,
    /// SYCL over OpenCL (records only).
    PTI_API_GROUP_HYBRID_SYCL_OPENCL = 5,
    /// Every group (filters only).
    PTI_API_GROUP_ALL = 0x7fff_ffff,
}

/// Classes of API functions, for coarse filtering of API records.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_api_class {
    /// Not a class.
    PTI_API_CLASS_RESERVED = 0,
    /// Calls that submit memory or kernel work to a device.
    PTI_API_CLASS_GPU_OPERATION_CORE = 1,
    /// Calls in which the host waits (not device barriers).
    PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION = 2,
    /// Every class.
    PTI_API_CLASS_ALL = 0x7fff_ffff,
}

/// What every record starts with (as its member `_view_kind`, so that a record's kind reads
/// `record->_view_kind._view_kind`, as in the published header).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct pti_view_record_base {
    /// Which record this is, hence its layout and size.
    pub _view_kind: pti_view_kind,
}

impl pti_view_record_base {
    /// The base of a record of `kind`.
    pub const fn of(kind: pti_view_kind) -> Self {
        pti_view_record_base { _view_kind: kind }
    }
}

/// A kernel execution (v1 layout; libpti writes pti_view_record_kernel_v2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_kernel {
    /// PTI_VIEW_DEVICE_GPU_KERNEL.
    pub _view_kind: pti_view_record_base,
    /// Queue or command list the kernel ran on.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Kernel name; valid until the library is unloaded.
    pub _name: *const c_char,
    /// Source file of the submission, if known.
    pub _source_file_name: *const c_char,
    /// Source line of the submission, if known.
    pub _source_line_number: u64,
    /// Unique ID of this kernel execution.
    pub _kernel_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// When it was appended to a command list (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted to the device (ns).
    pub _submit_timestamp: u64,
    /// When the SYCL task began (ns).
    pub _sycl_task_begin_timestamp: u64,
    /// When the SYCL runtime began enqueuing the kernel (ns).
    pub _sycl_enqk_begin_timestamp: u64,
    /// SYCL graph node ID.
    pub _sycl_node_id: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
    /// SYCL invocation ID.
    pub _sycl_invocation_id: u32,
}

/// A kernel execution, v2 layout: v1 plus the device and engine.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_kernel_v2 {
    /// PTI_VIEW_DEVICE_GPU_KERNEL.
    pub _view_kind: pti_view_record_base,
    /// Queue or command list the kernel ran on.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Kernel name; valid until the library is unloaded.
    pub _name: *const c_char,
    /// Source file of the submission, if known.
    pub _source_file_name: *const c_char,
    /// Source line of the submission, if known.
    pub _source_line_number: u64,
    /// Unique ID of this kernel execution.
    pub _kernel_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// When it was appended to a command list (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted to the device (ns).
    pub _submit_timestamp: u64,
    /// When the SYCL task began (ns).
    pub _sycl_task_begin_timestamp: u64,
    /// When the SYCL runtime began enqueuing the kernel (ns).
    pub _sycl_enqk_begin_timestamp: u64,
    /// SYCL graph node ID.
    pub _sycl_node_id: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
    /// SYCL invocation ID.
    pub _sycl_invocation_id: u32,
    /// Device handle.
    pub _device_handle: pti_device_handle_t,
    /// Engine: Level Zero command-queue group ordinal of the immediate list or of the queue that
    /// executed the regular list; 0 on OpenCL.
    pub _engine_ordinal: u32,
    /// Engine: the queue's index within that group (Level Zero); 0 on OpenCL.
    pub _engine_index: u32,
}

/// A memory copy (v1 layout; libpti writes pti_view_record_memory_copy_v2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_copy {
    /// PTI_VIEW_DEVICE_GPU_MEM_COPY.
    pub _view_kind: pti_view_record_base,
    /// Direction.
    pub _memcpy_type: pti_view_memcpy_type,
    /// Source memory type.
    pub _mem_src: pti_view_memory_type,
    /// Destination memory type.
    pub _mem_dst: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes copied.
    pub _bytes: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
}

/// A memory copy, v2 layout: v1 plus the device and engine.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_copy_v2 {
    /// PTI_VIEW_DEVICE_GPU_MEM_COPY.
    pub _view_kind: pti_view_record_base,
    /// Direction.
    pub _memcpy_type: pti_view_memcpy_type,
    /// Source memory type.
    pub _mem_src: pti_view_memory_type,
    /// Destination memory type.
    pub _mem_dst: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes copied.
    pub _bytes: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
    /// Device handle.
    pub _device_handle: pti_device_handle_t,
    /// Engine: Level Zero command-queue group ordinal of the immediate list or of the queue that
    /// executed the regular list; 0 on OpenCL.
    pub _engine_ordinal: u32,
    /// Engine: the queue's index within that group (Level Zero); 0 on OpenCL.
    pub _engine_index: u32,
}

/// A peer-to-peer memory copy (v1 layout; libpti writes the v2 layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_copy_p2p {
    /// PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P.
    pub _view_kind: pti_view_record_base,
    /// Direction.
    pub _memcpy_type: pti_view_memcpy_type,
    /// Source memory type.
    pub _mem_src: pti_view_memory_type,
    /// Destination memory type.
    pub _mem_dst: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the source device.
    pub _src_pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// PCI address of the destination device.
    pub _dst_pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the source device.
    pub _src_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// UUID of the destination device.
    pub _dst_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes copied.
    pub _bytes: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
}

/// A peer-to-peer memory copy, v2 layout: v1 plus both devices and the engine.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_copy_p2p_v2 {
    /// PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P.
    pub _view_kind: pti_view_record_base,
    /// Direction.
    pub _memcpy_type: pti_view_memcpy_type,
    /// Source memory type.
    pub _mem_src: pti_view_memory_type,
    /// Destination memory type.
    pub _mem_dst: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the source device.
    pub _src_pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// PCI address of the destination device.
    pub _dst_pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the source device.
    pub _src_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// UUID of the destination device.
    pub _dst_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes copied.
    pub _bytes: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
    /// Source device handle.
    pub _src_device_handle: pti_device_handle_t,
    /// Destination device handle.
    pub _dst_device_handle: pti_device_handle_t,
    /// Engine: Level Zero command-queue group ordinal of the immediate list or of the queue that
    /// executed the regular list; 0 on OpenCL.
    pub _engine_ordinal: u32,
    /// Engine: the queue's index within that group (Level Zero); 0 on OpenCL.
    pub _engine_index: u32,
}

/// A memory fill (v1 layout; libpti writes pti_view_record_memory_fill_v2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_fill {
    /// PTI_VIEW_DEVICE_GPU_MEM_FILL.
    pub _view_kind: pti_view_record_base,
    /// Type of the filled memory.
    pub _mem_type: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes filled.
    pub _bytes: u64,
    /// The fill value (the pattern's first 8 bytes).
    pub _value_for_set: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
}

/// A memory fill, v2 layout: v1 plus the device and engine.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_fill_v2 {
    /// PTI_VIEW_DEVICE_GPU_MEM_FILL.
    pub _view_kind: pti_view_record_base,
    /// Type of the filled memory.
    pub _mem_type: pti_view_memory_type,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Name of the operation.
    pub _name: *const c_char,
    /// PCI address of the device, "DDDD:BB:DD.F" (empty if the driver gives none).
    pub _pci_address: [c_char; PTI_MAX_PCI_ADDRESS_SIZE],
    /// UUID of the device.
    pub _device_uuid: [u8; PTI_MAX_DEVICE_UUID_SIZE],
    /// Unique ID of this operation.
    pub _mem_op_id: u64,
    /// Correlation ID of the API call that submitted it.
    pub _correlation_id: u32,
    /// Thread that submitted it.
    pub _thread_id: u32,
    /// When it was appended (ns).
    pub _append_timestamp: u64,
    /// When it started on the device (ns).
    pub _start_timestamp: u64,
    /// When it ended on the device (ns).
    pub _end_timestamp: u64,
    /// When it was submitted (ns).
    pub _submit_timestamp: u64,
    /// Bytes filled.
    pub _bytes: u64,
    /// The fill value (the pattern's first 8 bytes).
    pub _value_for_set: u64,
    /// SYCL queue ID, or PTI_INVALID_QUEUE_ID.
    pub _sycl_queue_id: u64,
    /// Device handle.
    pub _device_handle: pti_device_handle_t,
    /// Engine: Level Zero command-queue group ordinal of the immediate list or of the queue that
    /// executed the regular list; 0 on OpenCL.
    pub _engine_ordinal: u32,
    /// Engine: the queue's index within that group (Level Zero); 0 on OpenCL.
    pub _engine_index: u32,
}

/// A synchronisation: a device barrier or a host wait.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_synchronization {
    /// PTI_VIEW_DEVICE_SYNCHRONIZATION.
    pub _view_kind: pti_view_record_base,
    /// What kind of synchronisation.
    pub _synch_type: pti_view_synchronization_type,
    /// Context.
    pub _context_handle: pti_backend_ctx_t,
    /// Queue or command list.
    pub _queue_handle: pti_backend_queue_t,
    /// The event waited for or signalled, if any.
    pub _event_handle: pti_backend_evt_t,
    /// Start (ns).
    pub _start_timestamp: u64,
    /// End (ns).
    pub _end_timestamp: u64,
    /// Thread.
    pub _thread_id: u32,
    /// Correlation ID of the API call.
    pub _correlation_id: u32,
    /// Events waited for.
    pub _number_wait_events: u32,
    /// Status of the API call.
    pub _return_code: u32,
    /// API ID of the call.
    pub _api_id: u32,
    /// API group of the call.
    pub _api_group: pti_api_group_id,
}

/// Ties an API call to an ID the tool pushed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_external_correlation {
    /// PTI_VIEW_EXTERNAL_CORRELATION.
    pub _view_kind: pti_view_record_base,
    /// Correlation ID of the API call.
    pub _correlation_id: u32,
    /// The tool's ID.
    pub _external_id: u64,
    /// The kind it was pushed with.
    pub _external_kind: pti_view_external_kind,
}

/// Time libpti spent on its own work.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_overhead {
    /// PTI_VIEW_COLLECTION_OVERHEAD.
    pub _view_kind: pti_view_record_base,
    /// Start of the measured window (ns).
    pub _overhead_start_timestamp_ns: u64,
    /// End of the measured window (ns).
    pub _overhead_end_timestamp_ns: u64,
    /// Thread on which the overhead was spent.
    pub _overhead_thread_id: u32,
    /// API ID, when the overhead belongs to one function; else 0.
    pub _api_id: u32,
    /// How many overhead events the window holds.
    pub _overhead_count: u64,
    /// Their total duration (ns).
    pub _overhead_duration_ns: u64,
    /// What the overhead was spent on.
    pub _overhead_kind: pti_view_overhead_kind,
}

/// A traced API call (PTI_VIEW_DRIVER_API or PTI_VIEW_RUNTIME_API).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_api {
    /// PTI_VIEW_DRIVER_API or PTI_VIEW_RUNTIME_API.
    pub _view_kind: pti_view_record_base,
    /// When the call entered (ns).
    pub _start_timestamp: u64,
    /// When the call returned (ns).
    pub _end_timestamp: u64,
    /// The function's API group.
    pub _api_group: pti_api_group_id,
    /// The function's stable API ID.
    pub _api_id: u32,
    /// Process.
    pub _process_id: u32,
    /// Thread.
    pub _thread_id: u32,
    /// The same ID the callbacks of the call saw.
    pub _correlation_id: u32,
    /// The call's status (ze_result_t, cl_int or ur_result_t, as 32 bits); 0 when the function
    /// returns none.
    pub _return_code: u32,
}

/// What happened to memory (libpti extension, `pti_ext.h`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_memory_operation {
    /// Not an operation.
    PTI_VIEW_MEMORY_OPERATION_INVALID = 0,
    /// Memory was allocated.
    PTI_VIEW_MEMORY_OPERATION_ALLOCATION = 1,
    /// Memory was released.
    PTI_VIEW_MEMORY_OPERATION_RELEASE = 2,
}

/// A memory allocation or release by the SYCL runtime (libpti extension, `pti_ext.h`:
/// PTI_VIEW_EXT_MEMORY_ALLOCATION), from its `sycl.experimental.mem_alloc` XPTI stream.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_memory_allocation {
    /// PTI_VIEW_EXT_MEMORY_ALLOCATION.
    pub _view_kind: pti_view_record_base,
    /// Allocation or release.
    pub _operation: pti_view_memory_operation,
    /// The kind of memory: HOST, DEVICE or SHARED for USM; MEMORY when not known.
    pub _mem_type: pti_view_memory_type,
    /// Unused, 0.
    pub _reserved: u32,
    /// When the runtime began the operation (ns).
    pub _start_timestamp: u64,
    /// When it ended (ns).
    pub _end_timestamp: u64,
    /// The memory's address.
    pub _address: u64,
    /// Its size in bytes (for a release, the size it was allocated with; 0 if not known).
    pub _bytes: u64,
    /// The runtime's name for the operation ("alignedAlloc", "free", ...); valid for the life of
    /// the library. NULL if none.
    pub _name: *const c_char,
    /// The SYCL device's name, when the runtime gave it; valid for the life of the library.
    pub _device_name: *const c_char,
    /// Thread that made the call.
    pub _thread_id: u32,
    /// The correlation ID of the runtime call that did the work (the Unified Runtime's allocation
    /// or free function), when it was traced; else 0.
    pub _correlation_id: u32,
}

/// One execution of a command recorded on a regular Level Zero command list (libpti extension,
/// `pti_ext.h`: PTI_VIEW_EXT_COMMAND_EXECUTION).
///
/// A command appended to a regular list runs each time the list is executed. Its kernel, copy
/// or fill record (one per execution) carries the correlation ID and thread of the append call,
/// as Intel PTI's records do, so the chain runtime call -> append -> device work holds when a
/// runtime batches work into regular lists; this record, written beside it, names the call that
/// executed it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_command_execution {
    /// PTI_VIEW_EXT_COMMAND_EXECUTION.
    pub _view_kind: pti_view_record_base,
    /// Thread of the execute call.
    pub _thread_id: u32,
    /// The `_kernel_id` or `_mem_op_id` of the command's record for this execution.
    pub _operation_id: u64,
    /// Correlation ID of the execute call (`zeCommandQueueExecuteCommandLists`, or an immediate
    /// list's `zeCommandListImmediateAppendCommandLists*`).
    pub _correlation_id: u32,
    /// API ID (Level Zero group) of the execute call.
    pub _api_id: u32,
    /// When the execute call began (ns): the record's `_submit_timestamp`.
    pub _submit_timestamp: u64,
    /// The queue or immediate list that executed it.
    pub _queue_handle: pti_backend_queue_t,
}

/// How a kernel was launched (libpti extension, `pti_ext.h`: PTI_VIEW_EXT_KERNEL_LAUNCH), one
/// per kernel record, joined to it by `_kernel_id`.
///
/// Level Zero: `_group_count` as appended (`ze_group_count_t`), `_group_size` as last set on the
/// kernel (`zeKernelSetGroupSize`, or the launch's own group size), `_global_size` their product
/// per dimension; `_work_dim` 3. Where the group size was never set, `_group_size` and
/// `_global_size` are 0 (the driver's default, not known to libpti). Indirect launches (group
/// counts in device memory) have `_group_count` 0.
///
/// OpenCL: `_global_size` and `_work_dim` as enqueued, `_group_size` the local size (0 when the
/// program let the runtime choose), `_group_count` the global size divided by the local size,
/// rounded up (0 without a local size). `clEnqueueTask`: one work-item; native kernels: 0s.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_kernel_launch {
    /// PTI_VIEW_EXT_KERNEL_LAUNCH.
    pub _view_kind: pti_view_record_base,
    /// Dimensions used (1 to 3); 0 when nothing is known.
    pub _work_dim: u32,
    /// The `_kernel_id` of the kernel record.
    pub _kernel_id: u64,
    /// Work-groups per dimension.
    pub _group_count: [u32; 3],
    /// Work-items per work-group per dimension.
    pub _group_size: [u32; 3],
    /// Work-items per dimension.
    pub _global_size: [u64; 3],
}

/// Why libpti could not record something (libpti extension, `pti_ext.h`: the `_reason` of
/// pti_view_record_loss).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_loss_reason {
    /// Not a reason.
    PTI_VIEW_LOSS_INVALID = 0,
    /// Records dropped: buffer_requested gave no buffer, or one too small for the record.
    PTI_VIEW_LOSS_NO_BUFFER = 1,
    /// Records dropped because the process was exiting: written after libpti handed back its
    /// buffers, or of device work still running at exit.
    PTI_VIEW_LOSS_PROCESS_EXITING = 2,
    /// Device records whose data could not be had: a queue without profiling, timestamps or
    /// status the runtime refused, an event destroyed or reset before its command completed,
    /// a command list executed again before libpti read its times. The critical event
    /// PTI_ERROR_RECORDS_DROPPED says which.
    PTI_VIEW_LOSS_DEVICE_DATA_UNAVAILABLE = 3,
    /// Commands submitted while a device view was enabled by a function whose commands have no
    /// record kind (`_api_group` and `_api_id` name it; `_lost_kind` is PTI_VIEW_INVALID), for
    /// example memory migration or advice. Each such function is announced once with the
    /// critical event PTI_ERROR_COMMANDS_NOT_RECORDED.
    PTI_VIEW_LOSS_NO_RECORD_KIND = 4,
}

/// What libpti could not record (libpti extension, `pti_ext.h`: PTI_VIEW_EXT_LOSS). Written at
/// each flush while the kind is enabled, one per lost kind, reason and function, covering the
/// losses since the previous loss record of the same key (since the process started for the
/// first). A tool that enabled it learns what is missing from its other records, when, and why;
/// the totals stay readable with ptiViewGetDroppedRecordCount and
/// ptiViewGetUnrecordedCommandCount. Loss records that cannot be written are counted as
/// dropped records of PTI_VIEW_EXT_LOSS, and reported nowhere else.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_loss {
    /// PTI_VIEW_EXT_LOSS.
    pub _view_kind: pti_view_record_base,
    /// Why.
    pub _reason: pti_view_loss_reason,
    /// When the first of these losses happened (ns, the records' clock).
    pub _first_timestamp: u64,
    /// When the last of them happened (ns).
    pub _last_timestamp: u64,
    /// How many records (or, for PTI_VIEW_LOSS_NO_RECORD_KIND, commands) were lost.
    pub _count: u64,
    /// The kind of the records lost; PTI_VIEW_INVALID for commands that have no record kind.
    pub _lost_kind: pti_view_kind,
    /// The API group of the function whose commands had no record kind; otherwise
    /// PTI_API_GROUP_RESERVED.
    pub _api_group: pti_api_group_id,
    /// That function's API ID; otherwise 0.
    pub _api_id: u32,
    /// The process.
    pub _process_id: u32,
}

/// What an annotation is (libpti extension, `pti_ext.h`: the `_annotation_type` of
/// pti_view_record_annotation).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum pti_view_annotation_type {
    /// Not an annotation.
    PTI_VIEW_ANNOTATION_TYPE_INVALID = 0,
    /// A task (`__itt_task_begin` to `__itt_task_end`): nested in the tasks open on its thread.
    PTI_VIEW_ANNOTATION_TYPE_TASK = 1,
    /// An overlapped task (`__itt_task_begin_overlapped` to `__itt_task_end_overlapped`): may
    /// overlap others and end on another thread (the record's thread is the one that ended it).
    PTI_VIEW_ANNOTATION_TYPE_OVERLAPPED_TASK = 2,
    /// A marker (`__itt_marker`): an instant, start and end equal.
    PTI_VIEW_ANNOTATION_TYPE_MARKER = 3,
    /// A frame (`__itt_frame_begin_v3` to `__itt_frame_end_v3`), named by its domain.
    PTI_VIEW_ANNOTATION_TYPE_FRAME = 4,
    /// A legacy event (`__itt_event_start` to `__itt_event_end`), in the domain "ITT event".
    PTI_VIEW_ANNOTATION_TYPE_EVENT = 5,
}

/// An annotation the program made through ITT (libpti extension, `pti_ext.h`:
/// PTI_VIEW_EXT_ANNOTATION), written when the range ends (a marker when it is made), if
/// collection ran when it began. Times are on the records' clock, so annotations nest with the
/// calls and device work of the same thread.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_annotation {
    /// PTI_VIEW_EXT_ANNOTATION.
    pub _view_kind: pti_view_record_base,
    /// Task, overlapped task, marker, frame or event.
    pub _annotation_type: pti_view_annotation_type,
    /// Begin (ns).
    pub _start_timestamp: u64,
    /// End (ns); equal to the start for a marker.
    pub _end_timestamp: u64,
    /// The ITT domain's name; valid until libpti is unloaded.
    pub _domain: *const c_char,
    /// The task's, marker's or event's name (a frame's is its domain's); valid until libpti is
    /// unloaded.
    pub _name: *const c_char,
    /// The ID the program gave the task (`__itt_id`'s first word), or 0.
    pub _id: u64,
    /// The parent task's ID the program gave, or 0.
    pub _parent_id: u64,
    /// The process.
    pub _process_id: u32,
    /// The thread that ended it.
    pub _thread_id: u32,
    /// How many ranges were open around it on its thread (0: outermost).
    pub _depth: u32,
    /// Zero.
    pub _reserved: u32,
}

/// Collective communication: libpti writes one for each task the program annotated in oneCCL's
/// ITT domain `oneCCL::API` (a collective, named by its operation), with the bytes oneCCL gave
/// as its `send_size`, `recv_size` and `comm_id` metadata (0 when not given).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pti_view_record_comms {
    /// PTI_VIEW_COMMUNICATION.
    pub _view_kind: pti_view_record_base,
    /// Start (ns).
    pub _start_timestamp: u64,
    /// End (ns).
    pub _end_timestamp: u64,
    /// Process.
    pub _process_id: u32,
    /// Thread.
    pub _thread_id: u32,
    /// Bytes sent.
    pub _send_size: u64,
    /// Bytes received.
    pub _recv_size: u64,
    /// Communicator.
    pub _communicator_id: u64,
    /// Operation name.
    pub _name: *const c_char,
}

/// One record's layout: C type name, size, and each field's offset.
pub type RecordLayout = (&'static str, usize, &'static [(&'static str, usize)]);

/// Checks at compile time that a record has the published size and field offsets (64-bit
/// targets: pointers and `size_t` are 8 bytes), and yields them for the header's checks.
macro_rules! layout {
    ($t:ident = $size:literal { $($field:ident @ $offset:literal),* $(,)? }) => {{
        const _: () = {
            assert!(size_of::<$t>() == $size, concat!("size of ", stringify!($t)));
            $(assert!(
                offset_of!($t, $field) == $offset,
                concat!("offset of ", stringify!($t), ".", stringify!($field))
            );)*
        };
        (stringify!($t), $size, &[$((stringify!($field), $offset)),*])
    }};
}

const _: () = assert!(
    size_of::<usize>() == 8,
    "libpti supports 64-bit targets only"
);

/// Every record's layout, as the published PTI view API defines it. `pti_view.h` asserts each
/// number with `static_assert`, so a C compiler that lays a struct out differently fails.
#[doc(hidden)]
pub const LAYOUTS: [RecordLayout; 14] = [
    layout!(pti_view_record_base = 4 { _view_kind @ 0 }),
    layout!(pti_view_record_kernel = 168 {
        _view_kind @ 0, _queue_handle @ 8, _context_handle @ 16, _name @ 24,
        _source_file_name @ 32, _source_line_number @ 40, _kernel_id @ 48, _correlation_id @ 56,
        _thread_id @ 60, _pci_address @ 64, _device_uuid @ 80, _append_timestamp @ 96,
        _start_timestamp @ 104, _end_timestamp @ 112, _submit_timestamp @ 120,
        _sycl_task_begin_timestamp @ 128, _sycl_enqk_begin_timestamp @ 136, _sycl_node_id @ 144,
        _sycl_queue_id @ 152, _sycl_invocation_id @ 160,
    }),
    layout!(pti_view_record_kernel_v2 = 184 {
        _view_kind @ 0, _queue_handle @ 8, _context_handle @ 16, _name @ 24,
        _source_file_name @ 32, _source_line_number @ 40, _kernel_id @ 48, _correlation_id @ 56,
        _thread_id @ 60, _pci_address @ 64, _device_uuid @ 80, _append_timestamp @ 96,
        _start_timestamp @ 104, _end_timestamp @ 112, _submit_timestamp @ 120,
        _sycl_task_begin_timestamp @ 128, _sycl_enqk_begin_timestamp @ 136, _sycl_node_id @ 144,
        _sycl_queue_id @ 152, _sycl_invocation_id @ 160, _device_handle @ 168,
        _engine_ordinal @ 176, _engine_index @ 180,
    }),
    layout!(pti_view_record_memory_copy = 136 {
        _view_kind @ 0, _memcpy_type @ 4, _mem_src @ 8, _mem_dst @ 12, _queue_handle @ 16,
        _context_handle @ 24, _name @ 32, _pci_address @ 40, _device_uuid @ 56, _mem_op_id @ 72,
        _correlation_id @ 80, _thread_id @ 84, _append_timestamp @ 88, _start_timestamp @ 96,
        _end_timestamp @ 104, _submit_timestamp @ 112, _bytes @ 120, _sycl_queue_id @ 128,
    }),
    layout!(pti_view_record_memory_copy_v2 = 152 {
        _view_kind @ 0, _memcpy_type @ 4, _mem_src @ 8, _mem_dst @ 12, _queue_handle @ 16,
        _context_handle @ 24, _name @ 32, _pci_address @ 40, _device_uuid @ 56, _mem_op_id @ 72,
        _correlation_id @ 80, _thread_id @ 84, _append_timestamp @ 88, _start_timestamp @ 96,
        _end_timestamp @ 104, _submit_timestamp @ 112, _bytes @ 120, _sycl_queue_id @ 128,
        _device_handle @ 136, _engine_ordinal @ 144, _engine_index @ 148,
    }),
    layout!(pti_view_record_memory_copy_p2p = 168 {
        _view_kind @ 0, _memcpy_type @ 4, _mem_src @ 8, _mem_dst @ 12, _queue_handle @ 16,
        _context_handle @ 24, _name @ 32, _src_pci_address @ 40, _dst_pci_address @ 56,
        _src_uuid @ 72, _dst_uuid @ 88, _mem_op_id @ 104, _correlation_id @ 112, _thread_id @ 116,
        _append_timestamp @ 120, _start_timestamp @ 128, _end_timestamp @ 136,
        _submit_timestamp @ 144, _bytes @ 152, _sycl_queue_id @ 160,
    }),
    layout!(pti_view_record_memory_copy_p2p_v2 = 192 {
        _view_kind @ 0, _memcpy_type @ 4, _mem_src @ 8, _mem_dst @ 12, _queue_handle @ 16,
        _context_handle @ 24, _name @ 32, _src_pci_address @ 40, _dst_pci_address @ 56,
        _src_uuid @ 72, _dst_uuid @ 88, _mem_op_id @ 104, _correlation_id @ 112, _thread_id @ 116,
        _append_timestamp @ 120, _start_timestamp @ 128, _end_timestamp @ 136,
        _submit_timestamp @ 144, _bytes @ 152, _sycl_queue_id @ 160, _src_device_handle @ 168,
        _dst_device_handle @ 176, _engine_ordinal @ 184, _engine_index @ 188,
    }),
    layout!(pti_view_record_memory_fill = 136 {
        _view_kind @ 0, _mem_type @ 4, _queue_handle @ 8, _context_handle @ 16, _name @ 24,
        _pci_address @ 32, _device_uuid @ 48, _mem_op_id @ 64, _correlation_id @ 72,
        _thread_id @ 76, _append_timestamp @ 80, _start_timestamp @ 88, _end_timestamp @ 96,
        _submit_timestamp @ 104, _bytes @ 112, _value_for_set @ 120, _sycl_queue_id @ 128,
    }),
    layout!(pti_view_record_memory_fill_v2 = 152 {
        _view_kind @ 0, _mem_type @ 4, _queue_handle @ 8, _context_handle @ 16, _name @ 24,
        _pci_address @ 32, _device_uuid @ 48, _mem_op_id @ 64, _correlation_id @ 72,
        _thread_id @ 76, _append_timestamp @ 80, _start_timestamp @ 88, _end_timestamp @ 96,
        _submit_timestamp @ 104, _bytes @ 112, _value_for_set @ 120, _sycl_queue_id @ 128,
        _device_handle @ 136, _engine_ordinal @ 144, _engine_index @ 148,
    }),
    layout!(pti_view_record_synchronization = 72 {
        _view_kind @ 0, _synch_type @ 4, _context_handle @ 8, _queue_handle @ 16,
        _event_handle @ 24, _start_timestamp @ 32, _end_timestamp @ 40, _thread_id @ 48,
        _correlation_id @ 52, _number_wait_events @ 56, _return_code @ 60, _api_id @ 64,
        _api_group @ 68,
    }),
    layout!(pti_view_record_external_correlation = 24 {
        _view_kind @ 0, _correlation_id @ 4, _external_id @ 8, _external_kind @ 16,
    }),
    layout!(pti_view_record_overhead = 56 {
        _view_kind @ 0, _overhead_start_timestamp_ns @ 8, _overhead_end_timestamp_ns @ 16,
        _overhead_thread_id @ 24, _api_id @ 28, _overhead_count @ 32, _overhead_duration_ns @ 40,
        _overhead_kind @ 48,
    }),
    layout!(pti_view_record_api = 48 {
        _view_kind @ 0, _start_timestamp @ 8, _end_timestamp @ 16, _api_group @ 24, _api_id @ 28,
        _process_id @ 32, _thread_id @ 36, _correlation_id @ 40, _return_code @ 44,
    }),
    layout!(pti_view_record_comms = 64 {
        _view_kind @ 0, _start_timestamp @ 8, _end_timestamp @ 16, _process_id @ 24,
        _thread_id @ 28, _send_size @ 32, _recv_size @ 40, _communicator_id @ 48, _name @ 56,
    }),
];

/// The layouts of libpti's extension records (`pti_ext.h` asserts them as `pti_view.h` does
/// [`LAYOUTS`]).
#[doc(hidden)]
pub const EXT_LAYOUTS: [RecordLayout; 5] = [
    layout!(pti_view_record_memory_allocation = 72 {
        _view_kind @ 0, _operation @ 4, _mem_type @ 8, _reserved @ 12, _start_timestamp @ 16,
        _end_timestamp @ 24, _address @ 32, _bytes @ 40, _name @ 48, _device_name @ 56,
        _thread_id @ 64, _correlation_id @ 68,
    }),
    layout!(pti_view_record_command_execution = 40 {
        _view_kind @ 0, _thread_id @ 4, _operation_id @ 8, _correlation_id @ 16, _api_id @ 20,
        _submit_timestamp @ 24, _queue_handle @ 32,
    }),
    layout!(pti_view_record_kernel_launch = 64 {
        _view_kind @ 0, _work_dim @ 4, _kernel_id @ 8, _group_count @ 16, _group_size @ 28,
        _global_size @ 40,
    }),
    layout!(pti_view_record_loss = 48 {
        _view_kind @ 0, _reason @ 4, _first_timestamp @ 8, _last_timestamp @ 16, _count @ 24,
        _lost_kind @ 32, _api_group @ 36, _api_id @ 40, _process_id @ 44,
    }),
    layout!(pti_view_record_annotation = 72 {
        _view_kind @ 0, _annotation_type @ 4, _start_timestamp @ 8, _end_timestamp @ 16,
        _domain @ 24, _name @ 32, _id @ 40, _parent_id @ 48, _process_id @ 56, _thread_id @ 60,
        _depth @ 64, _reserved @ 68,
    }),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_the_library_writes_keep_buffers_aligned() {
        for kind in pti_view_kind::ALL
            .into_iter()
            .chain(pti_view_kind::EXTENSIONS)
        {
            if let Some(size) = kind.record_size() {
                assert_eq!(size % 8, 0, "{kind:?}");
            }
        }
        for (name, size, fields) in LAYOUTS {
            assert!(
                fields.windows(2).all(|w| w[0].1 < w[1].1),
                "{name}: fields out of order"
            );
            assert!(fields.last().unwrap().1 < size);
        }
    }

    #[test]
    fn v2_records_extend_v1_at_its_end() {
        assert_eq!(
            offset_of!(pti_view_record_kernel_v2, _device_handle),
            size_of::<pti_view_record_kernel>()
        );
        assert_eq!(
            offset_of!(pti_view_record_memory_copy_v2, _device_handle),
            size_of::<pti_view_record_memory_copy>()
        );
        assert_eq!(
            offset_of!(pti_view_record_memory_fill_v2, _device_handle),
            size_of::<pti_view_record_memory_fill>()
        );
        assert_eq!(
            offset_of!(pti_view_record_memory_copy_p2p_v2, _src_device_handle),
            size_of::<pti_view_record_memory_copy_p2p>()
        );
    }

    #[test]
    fn kinds_and_copy_types_convert() {
        for kind in pti_view_kind::ALL
            .into_iter()
            .chain(pti_view_kind::EXTENSIONS)
        {
            assert_eq!(pti_view_kind::from_raw(kind as u32), Some(kind));
            assert!(kind.index() < pti_view_kind::COUNT);
        }
        assert_eq!(
            pti_view_kind::from_raw(0),
            Some(pti_view_kind::PTI_VIEW_INVALID)
        );
        assert_eq!(pti_view_kind::from_raw(13), None);
        assert_eq!(pti_view_kind::from_raw(u32::MAX), None);
        use pti_view_memory_type::*;
        assert_eq!(
            pti_view_memcpy_type::from_memory_types(
                PTI_VIEW_MEMORY_TYPE_HOST,
                PTI_VIEW_MEMORY_TYPE_DEVICE
            ),
            pti_view_memcpy_type::PTI_VIEW_MEMCPY_TYPE_H2D
        );
        assert_eq!(
            pti_view_memcpy_type::from_memory_types(
                PTI_VIEW_MEMORY_TYPE_SHARED,
                PTI_VIEW_MEMORY_TYPE_MEMORY
            ),
            pti_view_memcpy_type::PTI_VIEW_MEMCPY_TYPE_S2M
        );
    }
}
