//! The enqueue calls: one line each saying what command a call submits (a kernel, a copy, a
//! fill, a barrier), for the device record [`submit`] writes of it.
//!
//! Each line makes the override its function's wrapper calls (`wrappers.rs`, generated: the
//! generator gives an enqueue override to every function named here). The override receives the
//! call's scope, the program's arguments by value (`a`, a struct of `args.rs`, generated, with the
//! API's parameter names) and the real call to make with the event pointer to pass (`next`), and
//! hands all three to [`submit`], which times the command when a device view wants it. On a line:
//!
//! - `name(q, a) [blocking B] => WORK`: the call returns its status; `B` (a `cl_bool`, `CL_FALSE`
//!   when left out) says whether it returns only once the command completed; `WORK`, from the
//!   queue `q` and the arguments `a`, is asked only when the command will be recorded;
//! - `map name(a) blocking B, bytes N`: a map of `N` bytes from device memory that returns the
//!   mapped pointer (status in `errcode_ret`); the mapping is remembered for its unmap;
//! - `map_svm name(q, a) blocking B, at P, bytes N`: the same for shared virtual memory at `P`,
//!   returning the status;
//! - `unmap name(q, a) at P, to M`: the unmap of `P`, as many bytes as its map took, to memory
//!   `M`.
//!
//! # Safety (every override)
//! The arguments are the program's, valid as the OpenCL API requires of them for this function
//! (so `WORK` may read the arrays and patterns they point at); `next` makes the real call with
//! the program's arguments and the event pointer it is given.

#![allow(non_snake_case)]

use core::ffi::c_void;

use pti_sys::opencl::*;

use super::args;
use super::commands::{
    self, Enqueue, OBJECT, Work, image_element_size, pattern_value, pointer_memory, region_volume,
    submit, submit_records_only,
};
use super::{errcode, kernels};
use crate::dispatch::CallScope;
use crate::ids::opencl as ids;
use crate::view::abi::{pti_view_memory_type, pti_view_synchronization_type};
use crate::view::device::Launch;

/// Host memory a map hands out (or an unmap takes back).
const MEMORY: pti_view_memory_type = pti_view_memory_type::PTI_VIEW_MEMORY_TYPE_MEMORY;

macro_rules! enqueue {
    ($name:ident($q:ident, $a:ident) $(blocking $blocking:expr)? => $work:expr) => {
        #[allow(unused_unsafe)]
        pub(super) unsafe fn $name(
            scope: &mut CallScope,
            args: args::$name,
            next: impl FnOnce(*mut cl_event) -> cl_int,
        ) -> cl_int {
            let $a = &args;
            let blocking: cl_bool = CL_FALSE $(| $blocking)?;
            submit(
                enqueue(scope, ids::$name, $a.command_queue, $a.event, blocking),
                // SAFETY: the program's arguments (see the module's safety section).
                |$q| unsafe { $work },
                returned(next),
            )
        }

        impl RecordsOnly for args::$name {
            type Returns = cl_int;
            #[allow(unused_unsafe)]
            #[inline(always)]
            unsafe fn records_only(
                self,
                next: impl FnOnce(*mut cl_event) -> cl_int,
            ) -> Option<cl_int> {
                let $a = &self;
                let blocking: cl_bool = CL_FALSE $(| $blocking)?;
                submit_records_only(
                    ids::$name,
                    $a.command_queue,
                    $a.event,
                    blocking != CL_FALSE,
                    // SAFETY: the program's arguments (see the module's safety section).
                    |$q| unsafe { $work },
                    next,
                )
            }
        }
    };
    (map $name:ident($a:ident) blocking $blocking:expr, bytes $bytes:expr) => {
        #[allow(unused_unsafe)]
        pub(super) unsafe fn $name(
            scope: &mut CallScope,
            args: args::$name,
            next: impl FnOnce(*mut cl_event) -> *mut c_void,
        ) -> *mut c_void {
            let $a = &args;
            // SAFETY: the program's arguments (see the module's safety section).
            let bytes = || unsafe { $bytes };
            let mapped = submit(
                enqueue(scope, ids::$name, $a.command_queue, $a.event, $blocking),
                |_| copy(OBJECT, MEMORY, bytes()),
                |event| {
                    let mapped = next(event);
                    // SAFETY: NULL, libpti's status variable or the program's, just written.
                    (mapped, unsafe { errcode::read($a.errcode_ret) })
                },
            );
            commands::mapped(mapped, bytes);
            mapped
        }
    };
    (map_svm $name:ident($q:ident, $a:ident) blocking $blocking:expr, at $at:expr,
        bytes $bytes:expr) => {
        pub(super) unsafe fn $name(
            scope: &mut CallScope,
            args: args::$name,
            next: impl FnOnce(*mut cl_event) -> cl_int,
        ) -> cl_int {
            let $a = &args;
            let status = submit(
                enqueue(scope, ids::$name, $a.command_queue, $a.event, $blocking),
                |$q| copy(pointer_memory($q, $at), MEMORY, $bytes),
                returned(next),
            );
            if status == CL_SUCCESS {
                commands::mapped($at, || $bytes);
            }
            status
        }
    };
    (unmap $name:ident($q:ident, $a:ident) at $at:expr, to $memory:expr) => {
        pub(super) unsafe fn $name(
            scope: &mut CallScope,
            args: args::$name,
            next: impl FnOnce(*mut cl_event) -> cl_int,
        ) -> cl_int {
            let $a = &args;
            let bytes = commands::unmapped($at);
            submit(
                enqueue(scope, ids::$name, $a.command_queue, $a.event, CL_FALSE),
                |$q| copy(MEMORY, $memory, bytes),
                returned(next),
            )
        }
    };
}

/// The records-only path of an enqueue call, which its wrapper tries first once the call is
/// traced ([`submit_records_only`]: `None` where it does not apply, and the general path runs).
/// Plain lines only: maps and unmaps always take the general path, which remembers their sizes.
pub(super) trait RecordsOnly {
    /// What the function returns.
    type Returns;
    /// # Safety
    /// As the overrides' (see the module's safety section): `self` holds the program's
    /// arguments and `next` makes the real call with the event pointer it is given.
    unsafe fn records_only(
        self,
        next: impl FnOnce(*mut cl_event) -> Self::Returns,
    ) -> Option<Self::Returns>;
}

// Kernels.
enqueue!(clEnqueueNDRangeKernel(_q, a)
    => kernel(a.kernel, nd_range(a.work_dim, a.global_work_size, a.local_work_size)));
enqueue!(clEnqueueTask(_q, a) => kernel(a.kernel, Launch::nd_range(1, [1, 0, 0], Some([1, 0, 0]))));
enqueue!(clEnqueueNativeKernel(_q, _a) => native_kernel());

// Copies between buffers, images and host or shared memory.
enqueue!(clEnqueueReadBuffer(q, a) blocking a.blocking_read
    => copy(OBJECT, pointer_memory(q, a.ptr), a.size as u64));
enqueue!(clEnqueueWriteBuffer(q, a) blocking a.blocking_write
    => copy(pointer_memory(q, a.ptr), OBJECT, a.size as u64));
enqueue!(clEnqueueCopyBuffer(_q, a) => copy(OBJECT, OBJECT, a.size as u64));
enqueue!(clEnqueueReadBufferRect(q, a) blocking a.blocking_read
    => copy(OBJECT, pointer_memory(q, a.ptr), region_volume(a.region)));
enqueue!(clEnqueueWriteBufferRect(q, a) blocking a.blocking_write
    => copy(pointer_memory(q, a.ptr), OBJECT, region_volume(a.region)));
enqueue!(clEnqueueCopyBufferRect(_q, a) => copy(OBJECT, OBJECT, region_volume(a.region)));
enqueue!(clEnqueueReadImage(q, a) blocking a.blocking_read
    => copy(OBJECT, pointer_memory(q, a.ptr), image_bytes(a.image, a.region)));
enqueue!(clEnqueueWriteImage(q, a) blocking a.blocking_write
    => copy(pointer_memory(q, a.ptr), OBJECT, image_bytes(a.image, a.region)));
enqueue!(clEnqueueCopyImage(_q, a) => copy(OBJECT, OBJECT, image_bytes(a.src_image, a.region)));
enqueue!(clEnqueueCopyImageToBuffer(_q, a)
    => copy(OBJECT, OBJECT, image_bytes(a.src_image, a.region)));
enqueue!(clEnqueueCopyBufferToImage(_q, a)
    => copy(OBJECT, OBJECT, image_bytes(a.dst_image, a.region)));
enqueue!(clEnqueueSVMMemcpy(q, a) blocking a.blocking_copy
    => copy(pointer_memory(q, a.src_ptr), pointer_memory(q, a.dst_ptr), a.size as u64));
enqueue!(clEnqueueMemcpyINTEL(q, a) blocking a.blocking
    => copy(pointer_memory(q, a.src_ptr), pointer_memory(q, a.dst_ptr), a.size as u64));
enqueue!(clEnqueueReadGlobalVariableINTEL(q, a) blocking a.blocking_read
    => copy(OBJECT, pointer_memory(q, a.ptr), a.size as u64));
enqueue!(clEnqueueWriteGlobalVariableINTEL(q, a) blocking a.blocking_write
    => copy(pointer_memory(q, a.ptr), OBJECT, a.size as u64));
enqueue!(clEnqueueReadHostPipeINTEL(q, a) blocking a.blocking_read
    => copy(OBJECT, pointer_memory(q, a.ptr), a.size as u64));
enqueue!(clEnqueueWriteHostPipeINTEL(q, a) blocking a.blocking_write
    => copy(pointer_memory(q, a.ptr), OBJECT, a.size as u64));

// Maps and unmaps: copies between device memory and the mapped host memory.
enqueue!(map clEnqueueMapBuffer(a) blocking a.blocking_map, bytes a.size as u64);
enqueue!(map clEnqueueMapImage(a) blocking a.blocking_map, bytes image_bytes(a.image, a.region));
enqueue!(map_svm clEnqueueSVMMap(q, a) blocking a.blocking_map, at a.svm_ptr, bytes a.size as u64);
enqueue!(unmap clEnqueueUnmapMemObject(_q, a) at a.mapped_ptr, to OBJECT);
enqueue!(unmap clEnqueueSVMUnmap(q, a) at a.svm_ptr, to pointer_memory(q, a.svm_ptr));

// Fills.
enqueue!(clEnqueueFillBuffer(_q, a)
    => fill(OBJECT, a.size as u64, pattern_value(a.pattern, a.pattern_size)));
enqueue!(clEnqueueFillImage(_q, a)
    => fill(OBJECT, image_bytes(a.image, a.region), pattern_value(a.fill_color, 16)));
enqueue!(clEnqueueSVMMemFill(q, a)
    => fill(pointer_memory(q, a.svm_ptr), a.size as u64, pattern_value(a.pattern, a.pattern_size)));
enqueue!(clEnqueueMemFillINTEL(q, a)
    => fill(pointer_memory(q, a.dst_ptr), a.size as u64, pattern_value(a.pattern, a.pattern_size)));
enqueue!(clEnqueueMemsetINTEL(q, a)
    => fill(pointer_memory(q, a.dst_ptr), a.size as u64, u64::from(a.value as u8)));

// Barriers and markers: device-side synchronisation, with device times.
enqueue!(clEnqueueMarker(_q, _a) => barrier(0));
enqueue!(clEnqueueMarkerWithWaitList(_q, a) => barrier(a.num_events_in_wait_list));
enqueue!(clEnqueueBarrierWithWaitList(_q, a) => barrier(a.num_events_in_wait_list));

/// The real call as [`submit`] wants it: what the wrapper returns, and the call's status (the
/// same, for calls that return their status).
fn returned(
    next: impl FnOnce(*mut cl_event) -> cl_int,
) -> impl FnOnce(*mut cl_event) -> (cl_int, cl_int) {
    move |event| {
        let status = next(event);
        (status, status)
    }
}

fn enqueue(
    scope: &CallScope,
    api_id: u32,
    queue: cl_command_queue,
    event: *mut cl_event,
    blocking: cl_bool,
) -> Enqueue<'_> {
    Enqueue {
        scope,
        api_id,
        queue,
        event,
        blocking: blocking != CL_FALSE,
    }
}

/// A launch of `kernel` (named as the program created it).
#[inline(always)]
fn kernel(kernel: cl_kernel, launch: Launch) -> Work {
    Work::Kernel {
        name: kernels::name(kernel).unwrap_or(c"<unnamed kernel>"),
        kernel: kernel.cast(),
        launch,
    }
}

/// A host function run as a command: no kernel object, no NDRange.
fn native_kernel() -> Work {
    Work::Kernel {
        name: c"clEnqueueNativeKernel",
        kernel: core::ptr::null_mut(),
        launch: Launch::default(),
    }
}

fn copy(src: pti_view_memory_type, dst: pti_view_memory_type, bytes: u64) -> Work {
    Work::Copy { src, dst, bytes }
}

fn fill(memory: pti_view_memory_type, bytes: u64, value: u64) -> Work {
    Work::Fill {
        memory,
        bytes,
        value,
    }
}

fn barrier(wait_events: cl_uint) -> Work {
    Work::Barrier {
        kind: pti_view_synchronization_type::PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_EXECUTION,
        wait_events,
    }
}

/// The launch of an NDRange: `work_dim` dimensions of `global` work-items, in work-groups of
/// `local` (NULL: the runtime chooses).
///
/// # Safety
/// `global` and `local` are NULL or point at `work_dim` sizes when `work_dim` is 1 to 3.
unsafe fn nd_range(work_dim: cl_uint, global: *const usize, local: *const usize) -> Launch {
    if global.is_null() || !(1..=3).contains(&work_dim) {
        return Launch::default();
    }
    // Each dimension by itself (not a loop the compiler makes a `memcpy` call of).
    let read = |p: *const usize| {
        let at = |d: u32| match d < work_dim {
            // SAFETY: `d` < `work_dim` entries, as the caller promises.
            true => (unsafe { *p.add(d as usize) }) as u64,
            false => 0,
        };
        [at(0), at(1), at(2)]
    };
    Launch::nd_range(
        work_dim,
        read(global),
        (!local.is_null()).then(|| read(local)),
    )
}

/// Bytes of an image region: pixels times the image's element size.
///
/// # Safety
/// `region` is NULL or three values.
unsafe fn image_bytes(image: cl_mem, region: *const usize) -> u64 {
    // SAFETY: the caller's contract.
    let pixels = unsafe { region_volume(region) };
    pixels.saturating_mul(image_element_size(image))
}
