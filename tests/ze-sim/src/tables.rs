//! The `ze*/zet*/zes*Get*ProcAddrTable` exports through which the loader finds the fixture's
//! functions: each fills its table with what `api` implements and leaves the rest empty (the
//! loader then reports those functions as unsupported).

#![allow(clippy::missing_safety_doc)]

use pti_sys::level_zero::*;

use crate::adapters::*;
use crate::api::*;
use crate::memory::*;

/// Lets `fill` set the entries the fixture implements in a zeroed table of the newest layout,
/// then copies into the loader's `table` only the words up to the last entry set.
///
/// The loader's table has the layout of the API version it was built for (1.4 for loader
/// 1.8.12), shorter than the newest one the bindings describe: writing a whole newest-layout
/// table would overrun it. Tables only grow at their end, so the prefix holding the entries the
/// fixture sets fits, as long as every entry set here exists in that version; functions newer
/// than that are served through `zeDriverGetExtensionFunctionAddress` instead (see `modern`).
unsafe fn fill_table<T>(table: *mut T, fill: impl FnOnce(&mut T)) -> ze_result_t {
    if table.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // SAFETY: every field of a DDI table is an optional function pointer, for which all-zero
    // bytes are `None`.
    let mut full: T = unsafe { core::mem::zeroed() };
    fill(&mut full);
    let words = size_of::<T>() / size_of::<usize>();
    // SAFETY: the table is `words` pointer-sized fields.
    let entries = unsafe { core::slice::from_raw_parts((&raw const full).cast::<usize>(), words) };
    let used = entries
        .iter()
        .rposition(|&w| w != 0)
        .map_or(0, |last| last + 1);
    // SAFETY: the loader's table holds at least the entries set (see above); the copy writes
    // `used` words into it.
    unsafe {
        core::ptr::copy_nonoverlapping(entries.as_ptr(), table.cast::<usize>(), used);
    }
    ZE_RESULT_SUCCESS
}

/// The loader's entry for the fixture's `ze_global_dditable_t`.
#[unsafe(no_mangle)]
///
/// `zeInitDrivers` (spec 1.10) goes in only for a loader of that version or later, as
/// compute-runtime's table does: loader 1.8.12's table (1.4) ends at `pfnInit`.
pub unsafe extern "C" fn zeGetGlobalProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_global_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnInit = Some(zeInit);
            if version >= ZE_API_VERSION_1_10 {
                t.pfnInitDrivers = Some(zeInitDrivers);
            }
        })
    }
}

/// The loader's entry for the fixture's `ze_driver_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetDriverProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_driver_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnGet = Some(zeDriverGet);
            t.pfnGetApiVersion = Some(zeDriverGetApiVersion);
            t.pfnGetProperties = Some(zeDriverGetProperties);
            t.pfnGetIpcProperties = Some(zeDriverGetIpcProperties);
            t.pfnGetExtensionProperties = Some(zeDriverGetExtensionProperties);
            t.pfnGetExtensionFunctionAddress =
                Some(crate::modern::zeDriverGetExtensionFunctionAddress);
        })
    }
}

/// The loader's entry for the fixture's `ze_device_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetDeviceProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_device_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnGet = Some(zeDeviceGet);
            t.pfnGetSubDevices = Some(zeDeviceGetSubDevices);
            t.pfnGetProperties = Some(zeDeviceGetProperties);
            t.pfnGetComputeProperties = Some(zeDeviceGetComputeProperties);
            t.pfnGetMemoryProperties = Some(zeDeviceGetMemoryProperties);
            t.pfnGetMemoryAccessProperties = Some(zeDeviceGetMemoryAccessProperties);
            t.pfnGetModuleProperties = Some(zeDeviceGetModuleProperties);
            t.pfnGetCacheProperties = Some(zeDeviceGetCacheProperties);
            t.pfnGetImageProperties = Some(zeDeviceGetImageProperties);
            t.pfnGetExternalMemoryProperties = Some(zeDeviceGetExternalMemoryProperties);
            t.pfnGetP2PProperties = Some(zeDeviceGetP2PProperties);
            t.pfnCanAccessPeer = Some(zeDeviceCanAccessPeer);
            t.pfnGetCommandQueueGroupProperties = Some(zeDeviceGetCommandQueueGroupProperties);
            t.pfnGetGlobalTimestamps = Some(zeDeviceGetGlobalTimestamps);
            t.pfnGetStatus = Some(zeDeviceGetStatus);
            t.pfnPciGetPropertiesExt = Some(zeDevicePciGetPropertiesExt);
        })
    }
}

/// The loader's entry for the fixture's `ze_device_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetDeviceExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_device_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_context_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetContextProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_context_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeContextCreate);
            t.pfnDestroy = Some(zeContextDestroy);
            t.pfnGetStatus = Some(zeContextGetStatus);
            t.pfnMakeMemoryResident = Some(zeContextMakeMemoryResident);
            t.pfnEvictMemory = Some(zeContextEvictMemory);
        })
    }
}

/// The loader's entry for the fixture's `ze_command_queue_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetCommandQueueProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_command_queue_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeCommandQueueCreate);
            t.pfnDestroy = Some(zeCommandQueueDestroy);
            t.pfnExecuteCommandLists = Some(zeCommandQueueExecuteCommandLists);
            t.pfnSynchronize = Some(zeCommandQueueSynchronize);
        })
    }
}

/// The loader's entry for the fixture's `ze_command_list_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetCommandListProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_command_list_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeCommandListCreate);
            t.pfnCreateImmediate = Some(zeCommandListCreateImmediate);
            t.pfnDestroy = Some(zeCommandListDestroy);
            t.pfnClose = Some(zeCommandListClose);
            t.pfnReset = Some(zeCommandListReset);
            t.pfnAppendBarrier = Some(zeCommandListAppendBarrier);
            t.pfnAppendMemoryRangesBarrier = Some(zeCommandListAppendMemoryRangesBarrier);
            t.pfnAppendMemoryCopy = Some(zeCommandListAppendMemoryCopy);
            t.pfnAppendMemoryFill = Some(zeCommandListAppendMemoryFill);
            t.pfnAppendSignalEvent = Some(zeCommandListAppendSignalEvent);
            t.pfnAppendWaitOnEvents = Some(zeCommandListAppendWaitOnEvents);
            t.pfnAppendEventReset = Some(zeCommandListAppendEventReset);
            t.pfnAppendLaunchKernel = Some(zeCommandListAppendLaunchKernel);
            t.pfnAppendMemoryPrefetch = Some(zeCommandListAppendMemoryPrefetch);
            t.pfnAppendMemAdvise = Some(zeCommandListAppendMemAdvise);
            t.pfnAppendLaunchMultipleKernelsIndirect =
                Some(zeCommandListAppendLaunchMultipleKernelsIndirect);
            t.pfnAppendQueryKernelTimestamps = Some(zeCommandListAppendQueryKernelTimestamps);
            t.pfnAppendWriteGlobalTimestamp = Some(zeCommandListAppendWriteGlobalTimestamp);
        })
    }
}

/// The loader's entry for the fixture's `ze_image_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetImageProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_image_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_image_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetImageExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_image_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_fence_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetFenceProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_fence_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeFenceCreate);
            t.pfnDestroy = Some(zeFenceDestroy);
            t.pfnHostSynchronize = Some(zeFenceHostSynchronize);
            t.pfnQueryStatus = Some(zeFenceQueryStatus);
            t.pfnReset = Some(zeFenceReset);
        })
    }
}

/// The loader's entry for the fixture's `ze_event_pool_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetEventPoolProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_event_pool_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeEventPoolCreate);
            t.pfnDestroy = Some(zeEventPoolDestroy);
        })
    }
}

/// The loader's entry for the fixture's `ze_event_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetEventProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_event_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeEventCreate);
            t.pfnDestroy = Some(zeEventDestroy);
            t.pfnHostSignal = Some(zeEventHostSignal);
            t.pfnHostSynchronize = Some(zeEventHostSynchronize);
            t.pfnQueryStatus = Some(zeEventQueryStatus);
            t.pfnHostReset = Some(zeEventHostReset);
            t.pfnQueryKernelTimestamp = Some(zeEventQueryKernelTimestamp);
        })
    }
}

/// The loader's entry for the fixture's `ze_event_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetEventExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_event_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_module_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetModuleProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_module_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeModuleCreate);
            t.pfnDestroy = Some(zeModuleDestroy);
            t.pfnGetKernelNames = Some(zeModuleGetKernelNames);
            t.pfnGetProperties = Some(zeModuleGetProperties);
        })
    }
}

/// The loader's entry for the fixture's `ze_module_build_log_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetModuleBuildLogProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_module_build_log_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnDestroy = Some(zeModuleBuildLogDestroy);
            t.pfnGetString = Some(zeModuleBuildLogGetString);
        })
    }
}

/// The loader's entry for the fixture's `ze_kernel_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetKernelProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_kernel_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnCreate = Some(zeKernelCreate);
            t.pfnDestroy = Some(zeKernelDestroy);
            t.pfnSetGroupSize = Some(zeKernelSetGroupSize);
            t.pfnSuggestGroupSize = Some(zeKernelSuggestGroupSize);
            t.pfnSetArgumentValue = Some(zeKernelSetArgumentValue);
            t.pfnGetName = Some(zeKernelGetName);
            t.pfnGetProperties = Some(zeKernelGetProperties);
            t.pfnSetIndirectAccess = Some(zeKernelSetIndirectAccess);
            t.pfnGetIndirectAccess = Some(zeKernelGetIndirectAccess);
            t.pfnSetCacheConfig = Some(zeKernelSetCacheConfig);
        })
    }
}

/// The loader's entry for the fixture's `ze_kernel_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetKernelExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_kernel_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_sampler_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetSamplerProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_sampler_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_physical_mem_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetPhysicalMemProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_physical_mem_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_mem_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetMemProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_mem_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe {
        fill_table(table, |t| {
            t.pfnAllocShared = Some(zeMemAllocShared);
            t.pfnAllocDevice = Some(zeMemAllocDevice);
            t.pfnAllocHost = Some(zeMemAllocHost);
            t.pfnFree = Some(zeMemFree);
            t.pfnGetAllocProperties = Some(zeMemGetAllocProperties);
            t.pfnGetAddressRange = Some(zeMemGetAddressRange);
            t.pfnFreeExt = Some(zeMemFreeExt);
        })
    }
}

/// The loader's entry for the fixture's `ze_virtual_mem_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetVirtualMemProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_virtual_mem_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_fabric_vertex_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetFabricVertexExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_fabric_vertex_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `ze_fabric_edge_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zeGetFabricEdgeExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut ze_fabric_edge_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_device_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetDeviceProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_device_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_context_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetContextProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_context_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_command_list_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetCommandListProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_command_list_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_module_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetModuleProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_module_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_kernel_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetKernelProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_kernel_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_group_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricGroupProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_group_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_group_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricGroupExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_group_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_streamer_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricStreamerProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_streamer_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_query_pool_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricQueryPoolProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_query_pool_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_metric_query_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetMetricQueryProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_metric_query_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_tracer_exp_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetTracerExpProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_tracer_exp_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zet_debug_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zetGetDebugProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zet_debug_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_driver_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetDriverProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_driver_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_device_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetDeviceProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_device_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_scheduler_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetSchedulerProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_scheduler_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_performance_factor_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetPerformanceFactorProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_performance_factor_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_power_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetPowerProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_power_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_frequency_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetFrequencyProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_frequency_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_engine_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetEngineProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_engine_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_standby_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetStandbyProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_standby_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_firmware_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetFirmwareProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_firmware_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_memory_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetMemoryProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_memory_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_fabric_port_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetFabricPortProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_fabric_port_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_temperature_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetTemperatureProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_temperature_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_psu_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetPsuProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_psu_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_fan_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetFanProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_fan_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_led_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetLedProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_led_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_ras_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetRasProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_ras_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}

/// The loader's entry for the fixture's `zes_diagnostics_dditable_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn zesGetDiagnosticsProcAddrTable(
    _version: ze_api_version_t,
    table: *mut zes_diagnostics_dditable_t,
) -> ze_result_t {
    // SAFETY: the loader passes a writable table.
    unsafe { fill_table(table, |_| {}) }
}
