//! Where barriers and markers ran, and which devices are Level Zero devices.
//!
//! A synchronisation record names its queue but no device, so a queue that ran only barriers or
//! markers would have no device to sit under. The collector asks at the call instead, through a
//! subscriber enabled for a few functions only (a disabled function costs the program nothing):
//! - OpenCL: at the ENTER of `clEnqueueMarker`, `clEnqueueMarkerWithWaitList` and
//!   `clEnqueueBarrierWithWaitList`, the queue is asked its device (`clGetCommandQueueInfo`,
//!   `CL_QUEUE_DEVICE`, of the program's `libOpenCL.so.1`; a call made inside a callback is not
//!   traced);
//! - Level Zero: the EXIT of `zeCommandListCreate` and `zeCommandListCreateImmediate` tells each
//!   list's device (and, for an immediate list, its engine); `zeCommandListDestroy` forgets it; at
//!   the ENTER of `zeCommandListAppendBarrier` and `zeCommandListAppendMemoryRangesBarrier` the
//!   list's device is that one.
//!
//! What a barrier call learnt is kept under its correlation ID until its record comes (at most
//! [`WAITING`] of them). The devices met in Level Zero list creations are the Level Zero devices:
//! their work is placed on engine tracks (OpenCL has no engines to show).
//!
//! The data lives in the collector's store ([`crate::collect::with`]); the one call into a
//! runtime (the OpenCL query) is made outside it.

use core::ffi::c_void;
use std::collections::{HashMap, HashSet, VecDeque};

use libpti::{ApiCall, ApiGroup, Site};

/// How many barrier calls may wait for their record (the oldest are forgotten beyond).
const WAITING: usize = 1 << 16;

/// A Level Zero engine: command-queue group ordinal and index.
pub(crate) type Engine = (u32, u32);

/// What the collector knows of where queues run.
#[derive(Default)]
pub(crate) struct Placement {
    /// Level Zero command list → its device and, for an immediate list, its engine.
    lists: HashMap<u64, (u64, Option<Engine>)>,
    /// Barrier or marker call (correlation ID) → its device and engine, until its record comes.
    barriers: HashMap<u32, (u64, Option<Engine>)>,
    barrier_order: VecDeque<u32>,
    /// Devices met in Level Zero calls.
    level_zero: HashSet<u64>,
}

impl Placement {
    /// The device (and engine) of the barrier or marker that call `correlation` enqueued, taken
    /// out (each has one record).
    pub(crate) fn barrier(&mut self, correlation: u32) -> Option<(u64, Option<Engine>)> {
        self.barriers.remove(&correlation)
    }

    /// Whether `device` is a Level Zero device (its records' engines mean something).
    pub(crate) fn is_level_zero(&self, device: u64) -> bool {
        self.level_zero.contains(&device)
    }

    fn note_barrier(&mut self, correlation: u32, place: (u64, Option<Engine>)) {
        if self.barrier_order.len() == WAITING
            && let Some(old) = self.barrier_order.pop_front()
        {
            self.barriers.remove(&old);
        }
        self.barriers.insert(correlation, place);
        self.barrier_order.push_back(correlation);
    }
}

/// The functions the subscriber enables: (group, name).
pub(crate) const FUNCTIONS: &[(ApiGroup, &str)] = &[
    (ApiGroup::OpenCl, "clEnqueueMarker"),
    (ApiGroup::OpenCl, "clEnqueueMarkerWithWaitList"),
    (ApiGroup::OpenCl, "clEnqueueBarrierWithWaitList"),
    (ApiGroup::LevelZero, "zeCommandListCreate"),
    (ApiGroup::LevelZero, "zeCommandListCreateImmediate"),
    (ApiGroup::LevelZero, "zeCommandListDestroy"),
    (ApiGroup::LevelZero, "zeCommandListAppendBarrier"),
    (
        ApiGroup::LevelZero,
        "zeCommandListAppendMemoryRangesBarrier",
    ),
];

/// The first fields of the Level Zero tracing layer's `ze_command_list_create_params_t` and
/// `ze_command_list_create_immediate_params_t` (each field points at an argument).
#[repr(C)]
struct ListCreateParams {
    context: *const *mut c_void,
    device: *const *mut c_void,
    /// `const ze_command_list_desc_t**` or `const ze_command_queue_desc_t**`.
    desc: *const *const c_void,
    list: *const *mut *mut c_void,
}

/// The head of `ze_command_queue_desc_t`: type, extension chain, then the engine.
#[repr(C)]
struct QueueDescHead {
    stype: u32,
    next: *const c_void,
    ordinal: u32,
    index: u32,
}

/// One call of an enabled function, at ENTER or EXIT.
pub(crate) fn on_call(call: &ApiCall<'_>) {
    if call.args.is_null() {
        return;
    }
    let Ok(name) = call.name.to_str() else {
        return;
    };
    match (call.group, call.site, name) {
        (ApiGroup::OpenCl, Site::Exit, _) => {
            if call.return_code != Some(0) {
                return;
            }
            // SAFETY: every enabled OpenCL function's parameter struct starts with a pointer to
            // its `command_queue` argument, valid during the callback.
            let queue = unsafe { *call.args.cast::<*const *mut c_void>().read() };
            if let Some(device) = opencl_queue_device(queue) {
                crate::collect::with(|c| {
                    c.placement
                        .note_barrier(call.correlation_id, (device as u64, None))
                });
            }
        }
        (
            ApiGroup::LevelZero,
            Site::Exit,
            "zeCommandListCreate" | "zeCommandListCreateImmediate",
        ) => {
            if call.return_code != Some(0) {
                return;
            }
            // SAFETY: the parameter struct of these two functions (see `ListCreateParams`),
            // its pointers valid during the callback; at EXIT the list was written.
            let (device, list, engine) = unsafe {
                let p = &*call.args.cast::<ListCreateParams>();
                let list = if (*p.list).is_null() {
                    core::ptr::null_mut()
                } else {
                    **p.list
                };
                let engine =
                    (name == "zeCommandListCreateImmediate" && !(*p.desc).is_null()).then(|| {
                        let d = &*(*p.desc).cast::<QueueDescHead>();
                        (d.ordinal, d.index)
                    });
                (*p.device as u64, list as u64, engine)
            };
            crate::collect::with(|c| {
                c.placement.level_zero.insert(device);
                c.placement.lists.insert(list, (device, engine));
            });
        }
        (ApiGroup::LevelZero, Site::Enter, "zeCommandListDestroy") => {
            // SAFETY: its parameter struct is a pointer to the list argument.
            let list = unsafe { *call.args.cast::<*const *mut c_void>().read() } as u64;
            crate::collect::with(|c| c.placement.lists.remove(&list));
        }
        (ApiGroup::LevelZero, Site::Enter, _) => {
            // SAFETY: both barrier appends' parameter structs start with a pointer to the list.
            let list = unsafe { *call.args.cast::<*const *mut c_void>().read() } as u64;
            crate::collect::with(|c| {
                if let Some(place) = c.placement.lists.get(&list).copied() {
                    c.placement.note_barrier(call.correlation_id, place);
                }
            });
        }
        _ => {}
    }
}

/// The device of an OpenCL queue the program just used successfully, asked of its platform.
///
/// Through the queue's own dispatch table (an ICD object begins with a pointer to its platform's
/// `cl_icd_dispatch`): the program's OpenCL loader may be a private copy out of the global scope
/// (PyOpenCL's wheel carries a renamed `libOpenCL`), and the driver's function answers without
/// going through libpti's layer.
fn opencl_queue_device(queue: *mut c_void) -> Option<*mut c_void> {
    use opencl_sys::cl_icd::_cl_icd_dispatch;
    if queue.is_null() {
        return None;
    }
    // SAFETY: the call that just returned CL_SUCCESS took `queue`, so it is a live ICD queue of
    // the program (the program holds it during the call): its first field is its dispatch table.
    let get = unsafe {
        let dispatch = *queue.cast::<*const _cl_icd_dispatch>();
        if dispatch.is_null() {
            return None;
        }
        (*dispatch).clGetCommandQueueInfo?
    };
    let mut device: *mut c_void = core::ptr::null_mut();
    // SAFETY: a live queue and a pointer-sized answer.
    let status = unsafe {
        get(
            queue.cast(),
            opencl_sys::CL_QUEUE_DEVICE,
            size_of::<*mut c_void>(),
            (&raw mut device).cast(),
            core::ptr::null_mut(),
        )
    };
    (status == 0 && !device.is_null()).then_some(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_wait_bounded_and_are_taken_once() {
        let mut p = Placement::default();
        for corr in 0..(WAITING as u32 + 10) {
            p.note_barrier(corr, (7, Some((0, 1))));
        }
        assert_eq!(p.barriers.len(), WAITING);
        assert_eq!(p.barrier(3), None, "the oldest were forgotten");
        assert_eq!(p.barrier(WAITING as u32 + 9), Some((7, Some((0, 1)))));
        assert_eq!(p.barrier(WAITING as u32 + 9), None, "taken once");
    }
}
