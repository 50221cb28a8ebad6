//! `pti_pc_sampling.h`: Intel PTI 1.2's PC-sampling API, types and entry points, answered "not
//! supported" (`super::unsupported` says how and why). The header is generated from this file,
//! with Intel's layouts.
#![allow(unused_variables)] // No handle can be valid: the entry points read no argument but one.

use core::ffi::c_char;

use pti_core::view::abi::pti_device_handle_t;

use super::unsupported::PC_SAMPLING;
use crate::pti::pti_result;

/// Opaque: tools never dereference a PC-sampling handle.
pub struct _pti_pc_sampling_handle_t {
    _private: [u8; 0],
}

/// A PC-sampling session.
pub type pti_pc_sampling_handle_t = *mut _pti_pc_sampling_handle_t;

/// A stall reason.
#[repr(C)]
pub struct pti_pc_sampling_stall_reason_info_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// Its name.
    pub _name: *const c_char,
    /// Its description.
    pub _description: *const c_char,
}

/// Where an instruction comes from.
#[repr(C)]
pub struct pti_pc_sampling_source_info_t {
    /// The source file.
    pub _file_path: *const c_char,
    /// The line in it.
    pub _file_line: u64,
}

/// A sampled instruction.
#[repr(C)]
pub struct pti_pc_sampling_instruction_t {
    /// The instruction's offset in the kernel.
    pub _instruction_offset: u64,
    /// Where it comes from.
    pub _source_info: *mut pti_pc_sampling_source_info_t,
}

/// A sampled kernel.
#[repr(C)]
pub struct pti_pc_sampling_kernel_info_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// The device.
    pub _device: pti_device_handle_t,
    /// The kernel.
    pub _kernel_handle: u64,
    /// The kernel's name.
    pub _kernel_name: *const c_char,
    /// How many stall reasons are counted.
    pub _reason_count: usize,
    /// How many instructions have samples.
    pub _instructions_with_samples_count: usize,
    /// Samples per stall reason, `_reason_count` of them.
    pub _aggregated_samples: *mut u64,
}

/// A device's sampling status.
#[repr(C)]
pub struct pti_pc_sampling_device_status_t {
    /// `sizeof` the struct, set by the tool.
    pub _struct_size: usize,
    /// The device.
    pub _device: pti_device_handle_t,
    /// Samples lost.
    pub _samples_dropped: u32,
    /// Samples taken.
    pub _total_sample_count: u64,
    /// Distinct instructions sampled.
    pub _total_pc_count: u64,
}

/// Creates a session: PTI_ERROR_BAD_ARGUMENT for a NULL out-pointer, else
/// PTI_ERROR_PC_SAMPLING_UNSUPPORTED; no handle is written.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingEnable(
    handle: *mut pti_pc_sampling_handle_t,
) -> pti_result {
    PC_SAMPLING.answer(|| {
        if handle.is_null() {
            pti_result::PTI_ERROR_BAD_ARGUMENT
        } else {
            pti_result::PTI_ERROR_PC_SAMPLING_UNSUPPORTED
        }
    })
}

/// Configures a session: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingConfigure(
    handle: pti_pc_sampling_handle_t,
    devices: *const pti_device_handle_t,
    device_count: usize,
    sampling_period_ns: u32,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Sizes the buffer: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingQueryCollectionBufferSize(
    handle: pti_pc_sampling_handle_t,
    buffer_size: *mut usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Sets the buffer size: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingSetCollectionBufferSize(
    handle: pti_pc_sampling_handle_t,
    buffer_size: usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Starts sampling: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingStartCollection(
    handle: pti_pc_sampling_handle_t,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Stops sampling: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingStopCollection(
    handle: pti_pc_sampling_handle_t,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Lists the stall reasons: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetStallReasons(
    handle: pti_pc_sampling_handle_t,
    reasons: *mut pti_pc_sampling_stall_reason_info_t,
    reason_count: *mut usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Lists the sampled devices: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetProfiledDevices(
    handle: pti_pc_sampling_handle_t,
    devices: *mut pti_device_handle_t,
    device_count: *mut usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Lists the sampled kernels: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetObservedKernelHandles(
    handle: pti_pc_sampling_handle_t,
    device: pti_device_handle_t,
    kernel_handles: *mut u64,
    kernel_count: *mut usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Describes a sampled kernel: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetObservedKernelInfo(
    handle: pti_pc_sampling_handle_t,
    device: pti_device_handle_t,
    kernel_handle: u64,
    kernel_info: *mut pti_pc_sampling_kernel_info_t,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Reads a kernel's samples: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetSamplesPerInstruction(
    handle: pti_pc_sampling_handle_t,
    device: pti_device_handle_t,
    kernel_handle: u64,
    instruction_buffer: *mut pti_pc_sampling_instruction_t,
    instruction_buffer_count: usize,
    samples_buffer: *mut u64,
    samples_buffer_count: usize,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Reads a device's status: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingGetDeviceStatus(
    handle: pti_pc_sampling_handle_t,
    device: pti_device_handle_t,
    device_status: *mut pti_pc_sampling_device_status_t,
) -> pti_result {
    PC_SAMPLING.no_handle()
}

/// Destroys a session: PTI_ERROR_BAD_ARGUMENT, no handle can be valid.
#[unsafe(no_mangle)]
pub extern "C" fn libpti_intel_ptiPcSamplingDisable(
    handle: pti_pc_sampling_handle_t,
) -> pti_result {
    PC_SAMPLING.no_handle()
}
