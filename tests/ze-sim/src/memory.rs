//! Modules, kernels and memory: every module holds the driver's kernels (`vadd`, `scale`,
//! `spin`; a module's binary is not read), and memory of every kind is host memory, which the
//! engines read and write directly.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pti_sys::level_zero::*;

use crate::api::list_out;
use crate::device::devices;
use crate::objects::*;

const OK: ze_result_t = ZE_RESULT_SUCCESS;

/// The kernels every module of the driver holds.
const KERNELS: [&core::ffi::CStr; 3] = [c"vadd", c"scale", c"spin"];

pub(crate) unsafe extern "C" fn zeModuleCreate(
    _: ze_context_handle_t,
    _: ze_device_handle_t,
    _: *const ze_module_desc_t,
    ph: *mut ze_module_handle_t,
    log: *mut ze_module_build_log_handle_t,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        *ph = into_handle(Kind::Module, Arc::new(Module));
        if !log.is_null() {
            *log = core::ptr::null_mut();
        }
    }
    OK
}

pub(crate) unsafe extern "C" fn zeModuleDestroy(h: ze_module_handle_t) -> ze_result_t {
    // SAFETY: a module of this fixture, not used again.
    unsafe { destroy::<Module, _>(Kind::Module, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeModuleGetKernelNames(
    _: ze_module_handle_t,
    pCount: *mut u32,
    pNames: *mut *const c_char,
) -> ze_result_t {
    let names: Vec<*const c_char> = KERNELS.iter().map(|k| k.as_ptr()).collect();
    // SAFETY: see the module docs.
    unsafe { list_out(pCount, pNames, &names) }
}

pub(crate) unsafe extern "C" fn zeModuleBuildLogDestroy(
    _: ze_module_build_log_handle_t,
) -> ze_result_t {
    OK
}

pub(crate) unsafe extern "C" fn zeModuleBuildLogGetString(
    _: ze_module_build_log_handle_t,
    size: *mut usize,
    log: *mut c_char,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe {
        if !log.is_null() && *size > 0 {
            *log = 0;
        }
        *size = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeKernelCreate(
    _: ze_module_handle_t,
    desc: *const ze_kernel_desc_t,
    ph: *mut ze_kernel_handle_t,
) -> ze_result_t {
    // SAFETY: a kernel descriptor with a NUL-terminated name, as the API requires.
    let name = unsafe { core::ffi::CStr::from_ptr((*desc).pKernelName) };
    if !KERNELS.contains(&name) {
        return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    }
    let kernel = Kernel {
        name: name.to_owned(),
        args: Mutex::new(HashMap::new()),
        group_size: Mutex::new([1, 1, 1]),
    };
    // SAFETY: see the module docs.
    unsafe { *ph = into_handle(Kind::Kernel, Arc::new(kernel)) };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelDestroy(h: ze_kernel_handle_t) -> ze_result_t {
    // SAFETY: a kernel of this fixture, not used again.
    unsafe { destroy::<Kernel, _>(Kind::Kernel, h) };
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetGroupSize(
    h: ze_kernel_handle_t,
    x: u32,
    y: u32,
    z: u32,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture.
    let k: &Kernel = unsafe { object(h) };
    *k.group_size.lock().unwrap() = [x.max(1), y.max(1), z.max(1)];
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSuggestGroupSize(
    _: ze_kernel_handle_t,
    gx: u32,
    _: u32,
    _: u32,
    x: *mut u32,
    y: *mut u32,
    z: *mut u32,
) -> ze_result_t {
    let size = [256, 128, 64, 32, 16, 8, 4, 2, 1]
        .into_iter()
        .find(|s| gx.is_multiple_of(*s))
        .unwrap_or(1);
    // SAFETY: see the module docs.
    unsafe {
        *x = size;
        *y = 1;
        *z = 1;
    }
    OK
}

pub(crate) unsafe extern "C" fn zeKernelSetArgumentValue(
    h: ze_kernel_handle_t,
    index: u32,
    size: usize,
    value: *const c_void,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture; `value` holds `size` bytes (or is NULL).
    let (k, bytes): (&Kernel, Vec<u8>) = unsafe {
        (
            object(h),
            if value.is_null() {
                vec![0; size]
            } else {
                core::slice::from_raw_parts(value.cast::<u8>(), size).to_vec()
            },
        )
    };
    k.args.lock().unwrap().insert(index, bytes);
    OK
}

pub(crate) unsafe extern "C" fn zeKernelGetName(
    h: ze_kernel_handle_t,
    size: *mut usize,
    name: *mut c_char,
) -> ze_result_t {
    // SAFETY: a kernel of this fixture; `name` has room for `*size` bytes when not NULL.
    unsafe {
        let k: &Kernel = object(h);
        let bytes = k.name.as_bytes_with_nul();
        if !name.is_null() {
            let n = (*size).min(bytes.len());
            core::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), name, n);
        }
        *size = bytes.len();
    }
    OK
}

unsafe fn allocate(
    kind: ze_memory_type_t,
    size: usize,
    alignment: usize,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    let align = alignment.max(64);
    let mut ptr = core::ptr::null_mut();
    // SAFETY: a power-of-two alignment and a writable out-pointer.
    if unsafe { libc::posix_memalign(&mut ptr, align, size.max(1)) } != 0 {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    created(Kind::Allocation);
    ALLOCATIONS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(ptr as usize, (kind, size));
    // SAFETY: see the module docs.
    unsafe { *pptr = ptr };
    OK
}

pub(crate) unsafe extern "C" fn zeMemAllocShared(
    _: ze_context_handle_t,
    _: *const ze_device_mem_alloc_desc_t,
    _: *const ze_host_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    _: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_SHARED, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemAllocDevice(
    _: ze_context_handle_t,
    _: *const ze_device_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    _: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_DEVICE, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemAllocHost(
    _: ze_context_handle_t,
    _: *const ze_host_mem_alloc_desc_t,
    size: usize,
    alignment: usize,
    pptr: *mut *mut c_void,
) -> ze_result_t {
    // SAFETY: see the module docs.
    unsafe { allocate(ZE_MEMORY_TYPE_HOST, size, alignment, pptr) }
}

pub(crate) unsafe extern "C" fn zeMemFree(_: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
    let known = ALLOCATIONS
        .lock()
        .unwrap()
        .as_mut()
        .and_then(|m| m.remove(&(ptr as usize)))
        .is_some();
    if !known {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    destroyed(Kind::Allocation);
    // SAFETY: memory this fixture allocated with posix_memalign.
    unsafe { libc::free(ptr) };
    OK
}

/// The allocation holding `ptr`: (base, type, size).
fn find_allocation(ptr: usize) -> Option<(usize, ze_memory_type_t, usize)> {
    ALLOCATIONS
        .lock()
        .unwrap()
        .as_ref()?
        .iter()
        .find(|(base, (_, size))| ptr >= **base && ptr < **base + *size)
        .map(|(base, (kind, size))| (*base, *kind, *size))
}

pub(crate) unsafe extern "C" fn zeMemGetAllocProperties(
    _: ze_context_handle_t,
    ptr: *const c_void,
    p: *mut ze_memory_allocation_properties_t,
    device: *mut ze_device_handle_t,
) -> ze_result_t {
    let found = find_allocation(ptr as usize);
    // SAFETY: see the module docs.
    unsafe {
        (*p).type_ = found.map_or(ZE_MEMORY_TYPE_UNKNOWN, |f| f.1);
        (*p).id = found.map_or(0, |f| f.0 as u64);
        (*p).pageSize = 4096;
        if !device.is_null() {
            *device = if found.is_some_and(|f| f.1 != ZE_MEMORY_TYPE_HOST) {
                devices()[0].handle()
            } else {
                core::ptr::null_mut()
            };
        }
    }
    OK
}

pub(crate) unsafe extern "C" fn zeMemGetAddressRange(
    _: ze_context_handle_t,
    ptr: *const c_void,
    base: *mut *mut c_void,
    size: *mut usize,
) -> ze_result_t {
    let Some((b, _, s)) = find_allocation(ptr as usize) else {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    };
    // SAFETY: see the module docs.
    unsafe {
        if !base.is_null() {
            *base = b as *mut c_void;
        }
        if !size.is_null() {
            *size = s;
        }
    }
    OK
}
