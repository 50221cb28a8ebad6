//! What the Unified Runtime's Level Zero adapters query beyond what the test programs use: the
//! device's memory, module, cache, image and peer properties, module and kernel properties,
//! and the newer functions they call that the tests' loader (API 1.4) has no table entry for,
//! served by name through `modern::served` (the `ze-loader-compat` fixture asks for them).
//!
//! The answers describe the fixture truthfully where they can (host memory, no images, no
//! peers, no IPC) and say "unsupported" otherwise, as a real driver does for a feature it lacks.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::c_void;

use pti_sys::level_zero::*;

use crate::objects::*;

const OK: ze_result_t = ZE_RESULT_SUCCESS;

/// The device memory the fixture reports (it allocates from the host heap).
const MEMORY_BYTES: u64 = 4 << 30;

pub(crate) unsafe extern "C" fn zeDeviceGetMemoryProperties(
    _: ze_device_handle_t,
    pCount: *mut u32,
    p: *mut ze_device_memory_properties_t,
) -> ze_result_t {
    if pCount.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's count, and room for that many properties when `p` is not NULL.
    unsafe {
        if *pCount > 0 && !p.is_null() {
            (*p).totalSize = MEMORY_BYTES;
            (*p).maxClockRate = 1000;
            (*p).maxBusWidth = 64;
            *pCount = 1;
        } else {
            *pCount = 1;
        }
    }
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetMemoryAccessProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_memory_access_properties_t,
) -> ze_result_t {
    let all = ZE_MEMORY_ACCESS_CAP_FLAG_RW
        | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC
        | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT
        | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    // SAFETY: the caller's properties.
    let p = unsafe { &mut *p };
    p.hostAllocCapabilities = all;
    p.deviceAllocCapabilities = all;
    p.sharedSingleDeviceAllocCapabilities = all;
    p.sharedCrossDeviceAllocCapabilities = 0;
    p.sharedSystemAllocCapabilities = 0;
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetModuleProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_module_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's properties.
    let p = unsafe { &mut *p };
    p.spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    p.flags = 0;
    p.fp16flags = 0;
    p.fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
    p.fp64flags = 0;
    p.maxArgumentsSize = 2048;
    p.printfBufferSize = 1 << 20;
    p.nativeKernelSupported.id = [0; 16];
    OK
}

/// A Level Zero version number, as `ZE_MAKE_VERSION`.
#[allow(non_snake_case)]
const fn ZE_MAKE_VERSION(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xffff)
}

/// Properties listed by count with nothing to list: caches, P2P and the like.
unsafe fn none<T>(pCount: *mut u32) -> ze_result_t {
    if pCount.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's count.
    unsafe { *pCount = 0 };
    let _ = core::marker::PhantomData::<T>;
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetCacheProperties(
    _: ze_device_handle_t,
    pCount: *mut u32,
    _: *mut ze_device_cache_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's count.
    unsafe { none::<ze_device_cache_properties_t>(pCount) }
}

pub(crate) unsafe extern "C" fn zeDeviceGetImageProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_image_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's properties; all zero: no image support.
    let p = unsafe { &mut *p };
    p.maxImageDims1D = 0;
    p.maxImageDims2D = 0;
    p.maxImageDims3D = 0;
    p.maxImageBufferSize = 0;
    p.maxImageArraySlices = 0;
    p.maxSamplers = 0;
    p.maxReadImageArgs = 0;
    p.maxWriteImageArgs = 0;
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetExternalMemoryProperties(
    _: ze_device_handle_t,
    p: *mut ze_device_external_memory_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's properties; no external memory types.
    let p = unsafe { &mut *p };
    p.memoryAllocationImportTypes = 0;
    p.memoryAllocationExportTypes = 0;
    p.imageImportTypes = 0;
    p.imageExportTypes = 0;
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceGetP2PProperties(
    _: ze_device_handle_t,
    _: ze_device_handle_t,
    p: *mut ze_device_p2p_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's properties.
    unsafe { (*p).flags = 0 };
    OK
}

pub(crate) unsafe extern "C" fn zeDeviceCanAccessPeer(
    _: ze_device_handle_t,
    _: ze_device_handle_t,
    value: *mut ze_bool_t,
) -> ze_result_t {
    // SAFETY: the caller's answer.
    unsafe { *value = 0 };
    OK
}

pub(crate) unsafe extern "C" fn zeModuleGetProperties(
    _: ze_module_handle_t,
    p: *mut ze_module_properties_t,
) -> ze_result_t {
    // SAFETY: the caller's properties.
    unsafe { (*p).flags = 0 };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelGetProperties(
    h: ze_kernel_handle_t,
    p: *mut ze_kernel_properties_t,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture.
    let k: &Kernel = unsafe { object(h) };
    // SAFETY: the caller's properties.
    let p = unsafe { &mut *p };
    p.numKernelArgs = crate::modern::argument_sizes(k.name.to_str().unwrap_or("")).len() as u32;
    p.requiredGroupSizeX = 0;
    p.requiredGroupSizeY = 0;
    p.requiredGroupSizeZ = 0;
    p.requiredNumSubGroups = 0;
    p.requiredSubgroupSize = 0;
    p.maxSubgroupSize = 16;
    p.maxNumSubgroups = 64;
    p.localMemSize = 0;
    p.privateMemSize = 0;
    p.spillMemSize = 0;
    p.uuid.kid = [0; 16];
    p.uuid.mid = [0; 16];
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetIndirectAccess(
    _: ze_kernel_handle_t,
    _: ze_kernel_indirect_access_flags_t,
) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeKernelGetIndirectAccess(
    _: ze_kernel_handle_t,
    flags: *mut ze_kernel_indirect_access_flags_t,
) -> ze_result_t {
    // SAFETY: the caller's flags.
    unsafe { *flags = 0 };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetCacheConfig(
    _: ze_kernel_handle_t,
    _: ze_cache_config_flags_t,
) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeContextMakeMemoryResident(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *mut c_void,
    _: usize,
) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeContextEvictMemory(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *mut c_void,
    _: usize,
) -> ze_result_t {
    OK
}

// Newer than API 1.4: served by name (see `modern::served`).

/// `zeDeviceGetRootDevice`: a tile's root device, as the hierarchy exposes it (see `device`).
pub(crate) unsafe extern "C" fn zeDeviceGetRootDevice(
    h: ze_device_handle_t,
    root: *mut ze_device_handle_t,
) -> ze_result_t {
    if root.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: the caller's out-parameter.
    unsafe { *root = crate::device::root_device(crate::device::device(h)) };
    OK
}

/// `zeCommandListIsImmediate`.
pub(crate) unsafe extern "C" fn zeCommandListIsImmediate(
    h: ze_command_list_handle_t,
    value: *mut ze_bool_t,
) -> ze_result_t {
    if h.is_null() || value.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: a list of this driver, and the caller's answer.
    unsafe {
        let list: &crate::list::List = object(h);
        *value = ze_bool_t::from(list.immediate);
    }
    OK
}

/// `zeMemFreeExt`: as `zeMemFree`, after the device has finished what it was given (what the
/// blocking policy asks; the deferred one is taken as blocking, which a program cannot tell).
pub(crate) unsafe extern "C" fn zeMemFreeExt(
    context: ze_context_handle_t,
    _: *const ze_memory_free_ext_desc_t,
    ptr: *mut c_void,
) -> ze_result_t {
    // SAFETY: the driver's own device.
    unsafe { crate::api::zeDeviceSynchronize(crate::device::devices()[0].handle()) };
    // SAFETY: the caller's allocation, as zeMemFree takes it.
    unsafe { crate::memory::zeMemFree(context, ptr) }
}

/// `zeDriverGetDefaultContext`: the fixture has no default context.
pub(crate) unsafe extern "C" fn zeDriverGetDefaultContext(
    _: ze_driver_handle_t,
) -> ze_context_handle_t {
    core::ptr::null_mut()
}

/// The functions newer than API 1.4 that the adapters call and the fixture does not model
/// (vector widths, counter-based event IPC, image views, physical memory): whatever they are
/// passed (ignored, as the C calling convention allows), unsupported.
pub(crate) unsafe extern "C" fn unmodelled() -> ze_result_t {
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
}
