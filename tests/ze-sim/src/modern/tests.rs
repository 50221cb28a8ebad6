//! The driver's behaviours, called directly (the loader's route to them is tested by
//! `tests/level_zero.rs`): asynchronous execution, the three kinds of event behaviour, copies
//! of timestamps, copy engines, graph capture, mutable lists and clones, and the extension
//! route. They assume the default settings (`ZE_SIM_*` unset), as `cargo test` runs them.

use core::ffi::c_void;
use core::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::api::*;
use crate::graph::*;
use crate::mutable::*;

/// Waits for ever (a Level Zero timeout).
const FOREVER: u64 = u64::MAX;

fn kernel(name: &core::ffi::CStr) -> ze_kernel_handle_t {
    let mut module = null_mut();
    let mut k = null_mut();
    let desc = ze_kernel_desc_t {
        stype: ZE_STRUCTURE_TYPE_KERNEL_DESC,
        pNext: core::ptr::null(),
        flags: 0,
        pKernelName: name.as_ptr(),
    };
    // SAFETY: writable handles; the driver ignores the other arguments.
    unsafe {
        assert_eq!(
            crate::memory::zeModuleCreate(
                null_mut(),
                null_mut(),
                core::ptr::null(),
                &mut module,
                null_mut()
            ),
            OK
        );
        assert_eq!(crate::memory::zeKernelCreate(module, &desc, &mut k), OK);
    }
    k
}

/// A kernel that spins for `us` microseconds.
fn spin(us: u32) -> ze_kernel_handle_t {
    let k = kernel(c"spin");
    // SAFETY: a kernel of this driver and its one 4-byte argument.
    unsafe {
        assert_eq!(
            crate::memory::zeKernelSetArgumentValue(k, 0, 4, (&raw const us).cast()),
            OK
        );
    }
    k
}

/// An immediate list (in order or not, on queue group `ordinal`).
fn immediate(in_order: bool, ordinal: u32) -> ze_command_list_handle_t {
    let desc = ze_command_queue_desc_t {
        stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        pNext: core::ptr::null(),
        ordinal,
        index: 0,
        flags: if in_order {
            ZE_COMMAND_QUEUE_FLAG_IN_ORDER
        } else {
            0
        },
        mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        priority: ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    let mut h = null_mut();
    assert_eq!(
        // SAFETY: a descriptor and a writable handle.
        unsafe { zeCommandListCreateImmediate(null_mut(), null_mut(), &desc, &mut h) },
        OK
    );
    h
}

/// A regular list with `flags` and, when `next` is not NULL, that descriptor chained.
fn regular(flags: u32, next: *const c_void) -> ze_command_list_handle_t {
    let desc = ze_command_list_desc_t {
        stype: ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
        pNext: next,
        commandQueueGroupOrdinal: 0,
        flags,
    };
    let mut h = null_mut();
    assert_eq!(
        // SAFETY: a descriptor and a writable handle.
        unsafe { zeCommandListCreate(null_mut(), null_mut(), &desc, &mut h) },
        OK
    );
    h
}

fn queue() -> ze_command_queue_handle_t {
    let mut h = null_mut();
    assert_eq!(
        // SAFETY: a writable handle; no descriptor: ordinal 0, asynchronous.
        unsafe { zeCommandQueueCreate(null_mut(), null_mut(), core::ptr::null(), &mut h) },
        OK
    );
    h
}

/// An event of a new pool with `flags` (and a counter-based descriptor when `cb` is Some).
fn pool_event(flags: u32, cb: Option<u32>) -> ze_event_handle_t {
    let cb_desc = ze_event_pool_counter_based_exp_desc_t {
        stype: ZE_STRUCTURE_TYPE_COUNTER_BASED_EVENT_POOL_EXP_DESC,
        pNext: core::ptr::null(),
        flags: cb.unwrap_or(0),
    };
    let desc = ze_event_pool_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        pNext: if cb.is_some() {
            (&raw const cb_desc).cast()
        } else {
            core::ptr::null()
        },
        flags,
        count: 1,
    };
    let (mut pool, mut event) = (null_mut(), null_mut());
    // SAFETY: descriptors and writable handles.
    unsafe {
        assert_eq!(
            zeEventPoolCreate(null_mut(), &desc, 0, null_mut(), &mut pool),
            OK
        );
        assert_eq!(zeEventCreate(pool, core::ptr::null(), &mut event), OK);
    }
    event
}

const TIMED: u32 = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;

fn launch(list: ze_command_list_handle_t, k: ze_kernel_handle_t, signal: ze_event_handle_t) {
    let groups = ze_group_count_t {
        groupCountX: 1,
        groupCountY: 1,
        groupCountZ: 1,
    };
    // SAFETY: a list, a kernel and an event of this driver.
    let r = unsafe { zeCommandListAppendLaunchKernel(list, k, &groups, signal, 0, null_mut()) };
    assert_eq!(r, OK);
}

/// `launch`, with the command held back until `gate` is signalled.
fn launch_after(
    list: ze_command_list_handle_t,
    k: ze_kernel_handle_t,
    signal: ze_event_handle_t,
    gate: ze_event_handle_t,
) {
    let groups = ze_group_count_t {
        groupCountX: 1,
        groupCountY: 1,
        groupCountZ: 1,
    };
    let mut waits = [gate];
    // SAFETY: a list, a kernel and events of this driver.
    let r =
        unsafe { zeCommandListAppendLaunchKernel(list, k, &groups, signal, 1, waits.as_mut_ptr()) };
    assert_eq!(r, OK);
}

/// A host-signalled event that holds back the commands waiting on it, so that a test can look
/// at them before they run however loaded the machine is. (A kernel spinning a few milliseconds
/// is no such guarantee: in one CI run a 2 ms one completed before the test's next line.)
fn gate() -> ze_event_handle_t {
    pool_event(ZE_EVENT_POOL_FLAG_HOST_VISIBLE, None)
}

fn open(gate: ze_event_handle_t) {
    // SAFETY: an event of this driver.
    assert_eq!(unsafe { zeEventHostSignal(gate) }, OK);
}

fn done(event: ze_event_handle_t) -> bool {
    // SAFETY: an event of this driver.
    unsafe { zeEventQueryStatus(event) == OK }
}

fn wait(event: ze_event_handle_t) {
    // SAFETY: an event of this driver.
    assert_eq!(unsafe { zeEventHostSynchronize(event, FOREVER) }, OK);
}

/// `event`'s kernel timestamps (global start, end), or the error.
fn timestamps(event: ze_event_handle_t) -> Result<(u64, u64), ze_result_t> {
    // SAFETY: all-zero bytes are a valid result structure.
    let mut t: ze_kernel_timestamp_result_t = unsafe { core::mem::zeroed() };
    // SAFETY: an event of this driver and a writable result.
    match unsafe { zeEventQueryKernelTimestamp(event, &mut t) } {
        OK => Ok((t.global.kernelStart, t.global.kernelEnd)),
        error => Err(error),
    }
}

fn zex_event(flags: u32) -> ze_event_handle_t {
    #[repr(C)]
    struct Desc {
        stype: u32,
        p_next: *const c_void,
        flags: u32,
        signal_scope: u32,
        wait_scope: u32,
    }
    let desc = Desc {
        stype: 0,
        p_next: core::ptr::null(),
        flags,
        signal_scope: ZE_EVENT_SCOPE_FLAG_HOST,
        wait_scope: 0,
    };
    let mut h = null_mut();
    // SAFETY: a descriptor of Intel's layout and a writable handle.
    let r = unsafe {
        zexCounterBasedEventCreate2(null_mut(), null_mut(), (&raw const desc).cast(), &mut h)
    };
    assert_eq!(r, OK);
    h
}

#[test]
fn an_append_returns_before_its_command_ran() {
    // Not in order: the event stays regular (see the next tests for counter-based ones, whose
    // timestamp query polls until the command completes).
    let list = immediate(false, 0);
    let event = pool_event(TIMED, None);
    let held = gate();
    // A driver that ran commands in the append would wait on the gate there; this thread opens
    // it after 10 s so that such a driver fails the assertion below instead of hanging.
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (opened, held) = (opened.clone(), held as usize);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(10));
            opened.store(true, Ordering::SeqCst);
            open(held as ze_event_handle_t);
        })
    };
    launch_after(list, spin(2_000), event, held);
    assert!(
        !opened.load(Ordering::SeqCst),
        "the append returned only after its command could run"
    );
    assert!(!done(event), "a command held back has completed");
    assert_eq!(timestamps(event), Err(ZE_RESULT_NOT_READY));
    open(held);
    wait(event);
    drop(watchdog);
    let (start, end) = timestamps(event).unwrap();
    // 2 ms at 19.2 MHz, within a tick's worth of slack for the spin loop.
    assert!(end - start >= 38_000, "{start} {end}");
}

#[test]
fn a_counter_based_event_follows_its_latest_append() {
    let list = immediate(true, 0);
    let event = zex_event(1 | 16); // immediate, kernel timestamps
    assert!(done(event), "a new counter-based event reports completion");
    launch(list, spin(200), event);
    wait(event);
    let first = timestamps(event).unwrap();
    let held = gate();
    launch_after(list, spin(200), event, held);
    // Re-armed: NOT_READY until the second command completes, whatever the first did.
    assert!(!done(event));
    open(held);
    wait(event);
    let second = timestamps(event).unwrap();
    assert!(second.0 > first.1, "{first:?} then {second:?}");
    // The host may neither reset nor signal it; a list may not reset it.
    // SAFETY: an event of this driver.
    unsafe {
        assert_eq!(zeEventHostReset(event), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        assert_eq!(
            zeEventHostSignal(event),
            ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
        );
        assert_eq!(
            zeCommandListAppendEventReset(list, event),
            ZE_RESULT_ERROR_INVALID_ARGUMENT
        );
    }
    // Not on a list that is not in order.
    let ooo = immediate(false, 0);
    let groups = ze_group_count_t {
        groupCountX: 1,
        groupCountY: 1,
        groupCountZ: 1,
    };
    // SAFETY: a list, a kernel and an event of this driver.
    let r = unsafe { zeCommandListAppendLaunchKernel(ooo, spin(1), &groups, event, 0, null_mut()) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

#[test]
fn a_regular_event_signalled_again_without_a_reset_reports_the_old_completion() {
    // Out of order: no implicit counter-based mode.
    let list = immediate(false, 0);
    let event = pool_event(TIMED, None);
    launch(list, spin(100), event);
    wait(event);
    let first = timestamps(event).unwrap();
    let held = gate();
    launch_after(list, spin(100), event, held);
    // Still signalled, with the first command's timestamps, until the second overwrites them.
    assert!(done(event));
    assert_eq!(timestamps(event).unwrap(), first);
    open(held);
    // SAFETY: a list of this driver.
    assert_eq!(unsafe { zeCommandListHostSynchronize(list, FOREVER) }, OK);
    assert_ne!(timestamps(event).unwrap(), first);
}

#[test]
fn a_regular_event_on_an_in_order_immediate_list_is_counter_based_until_reset() {
    let list = immediate(true, 0);
    let event = pool_event(TIMED, None);
    launch(list, spin(100), event);
    wait(event);
    // Implicitly counter-based: the next append re-arms it.
    let held = gate();
    launch_after(list, spin(100), event, held);
    assert!(!done(event));
    open(held);
    wait(event);
    // A reset in a list leaves the mode for good: signalled again, it keeps its old state.
    // SAFETY: a list and an event of this driver.
    unsafe {
        assert_eq!(zeCommandListAppendEventReset(list, event), OK);
        assert_eq!(zeCommandListHostSynchronize(list, FOREVER), OK);
    }
    assert!(!done(event));
}

#[test]
fn a_copy_of_timestamps_waits_for_a_counter_based_event_only() {
    let list = immediate(true, 0);
    let event = zex_event(1 | 16);
    let mut copied = [0u64; 4];
    launch(list, spin(1_000), event);
    let mut handle = event;
    // SAFETY: an event of this driver, room for one result, and no wait list.
    let r = unsafe {
        zeCommandListAppendQueryKernelTimestamps(
            list,
            1,
            &mut handle,
            copied.as_mut_ptr().cast(),
            core::ptr::null(),
            null_mut(),
            0,
            null_mut(),
        )
    };
    assert_eq!(r, OK);
    // SAFETY: a list of this driver.
    assert_eq!(unsafe { zeCommandListHostSynchronize(list, FOREVER) }, OK);
    let (start, end) = timestamps(event).unwrap();
    // kernelStart and kernelEnd of `global`, as the driver wrote them.
    assert_eq!((copied[0], copied[1]), (start, end));
    // A copy engine runs no kernel, nor the copy of timestamps (a built-in kernel).
    let copy = immediate(true, 1);
    let groups = ze_group_count_t {
        groupCountX: 1,
        groupCountY: 1,
        groupCountZ: 1,
    };
    // SAFETY: a list and a kernel of this driver.
    let r = unsafe {
        zeCommandListAppendLaunchKernel(copy, spin(1), &groups, null_mut(), 0, null_mut())
    };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

#[test]
fn a_regular_list_runs_at_each_execution_and_re_arms_counter_based_events() {
    let list = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, core::ptr::null());
    let event = pool_event(TIMED, Some(crate::event::CB_NON_IMMEDIATE));
    launch(list, spin(1_000), event);
    // SAFETY: a list and a queue of this driver.
    unsafe {
        assert_eq!(zeCommandListClose(list), OK);
        let q = queue();
        let mut l = list;
        assert_eq!(
            zeCommandQueueExecuteCommandLists(q, 1, &mut l, null_mut()),
            OK
        );
        assert!(!done(event));
        assert_eq!(zeCommandQueueSynchronize(q, FOREVER), OK);
        let first = timestamps(event).unwrap();
        assert_eq!(
            zeCommandQueueExecuteCommandLists(q, 1, &mut l, null_mut()),
            OK
        );
        // Re-armed; the former timestamps stay readable until overwritten.
        assert!(!done(event));
        assert_eq!(zeCommandQueueSynchronize(q, FOREVER), OK);
        assert!(timestamps(event).unwrap().0 > first.1);
    }
    // An IMMEDIATE-only counter-based event may not signal on a regular list.
    let other = regular(ZE_COMMAND_LIST_FLAG_IN_ORDER, core::ptr::null());
    let only_immediate = pool_event(TIMED, Some(crate::event::CB_IMMEDIATE));
    let groups = ze_group_count_t {
        groupCountX: 1,
        groupCountY: 1,
        groupCountZ: 1,
    };
    // SAFETY: a list, a kernel and an event of this driver.
    let r = unsafe {
        zeCommandListAppendLaunchKernel(other, spin(1), &groups, only_immediate, 0, null_mut())
    };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

static CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn count_call(_: *mut c_void) {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn a_captured_graph_runs_only_when_replayed() {
    let list = immediate(true, 0);
    let event = zex_event(3 | 16);
    // SAFETY: lists, events and graphs of this driver, and writable handles.
    unsafe {
        assert_eq!(zeCommandListBeginGraphCaptureExp(list, null_mut()), OK);
        assert_eq!(
            zeCommandListIsGraphCaptureEnabledExt(list),
            ZE_RESULT_QUERY_TRUE
        );
        let r = zeCommandListAppendHostFunction(
            list,
            Some(count_call),
            null_mut(),
            core::ptr::null(),
            event,
            0,
            null_mut(),
        );
        assert_eq!(r, OK);
        assert_eq!(
            zeCommandListHostSynchronize(list, FOREVER),
            ZE_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED
        );
        let mut graph = null_mut();
        assert_eq!(
            zeCommandListEndGraphCaptureExp(list, &mut graph, null_mut()),
            OK
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(CALLS.load(Ordering::Relaxed), 0, "a captured command ran");
        let mut exec = null_mut();
        assert_eq!(
            zeCommandListInstantiateGraphExp(graph, &mut exec, null_mut()),
            OK
        );
        for run in 1..=2 {
            assert_eq!(
                zeCommandListAppendGraphExp(list, exec, null_mut(), null_mut(), 0, null_mut()),
                OK
            );
            assert_eq!(zeCommandListHostSynchronize(list, FOREVER), OK);
            assert_eq!(CALLS.load(Ordering::Relaxed), run);
            assert!(done(event));
        }
        assert_eq!(zeExecutableGraphDestroyExt(exec), OK);
        assert_eq!(zeGraphDestroyExt(graph), OK);
    }
}

#[test]
fn a_mutable_list_changes_a_numbered_command_and_a_clone_keeps_the_commands() {
    let mutable_desc = ze_mutable_command_list_exp_desc_t {
        stype: ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_LIST_EXP_DESC,
        pNext: core::ptr::null(),
        flags: 0,
    };
    let list = regular(
        ZE_COMMAND_LIST_FLAG_IN_ORDER | ZE_COMMAND_LIST_FLAG_EXP_CLONEABLE,
        (&raw const mutable_desc).cast(),
    );
    let event = pool_event(TIMED, None);
    // SAFETY: lists, kernels, events and queues of this driver, and writable answers.
    unsafe {
        let mut id = 0;
        let id_desc = ze_mutable_command_id_exp_desc_t {
            stype: ZE_STRUCTURE_TYPE_MUTABLE_COMMAND_ID_EXP_DESC,
            pNext: core::ptr::null(),
            flags: 0,
        };
        assert_eq!(
            zeCommandListGetNextCommandIdExp(list, &id_desc, &mut id),
            OK
        );
        launch(list, spin(100), event);
        assert_eq!(zeCommandListClose(list), OK);
        // A longer spin, through an argument update.
        let us: u32 = 3_000;
        let arg = ze_mutable_kernel_argument_exp_desc_t {
            stype: ZE_STRUCTURE_TYPE_MUTABLE_KERNEL_ARGUMENT_EXP_DESC,
            pNext: core::ptr::null(),
            commandId: id,
            argIndex: 0,
            argSize: 4,
            pArgValue: (&raw const us).cast(),
        };
        let update = ze_mutable_commands_exp_desc_t {
            stype: ZE_STRUCTURE_TYPE_MUTABLE_COMMANDS_EXP_DESC,
            pNext: (&raw const arg).cast(),
            flags: 0,
        };
        assert_eq!(zeCommandListUpdateMutableCommandsExp(list, &update), OK);
        let mut clone = null_mut();
        assert_eq!(zeCommandListCreateCloneExp(list, &mut clone), OK);
        let q = queue();
        let mut l = clone;
        assert_eq!(
            zeCommandQueueExecuteCommandLists(q, 1, &mut l, null_mut()),
            OK
        );
        assert_eq!(zeCommandQueueSynchronize(q, FOREVER), OK);
        let (start, end) = timestamps(event).unwrap();
        assert!(end - start >= 3 * 19_000, "{start} {end}");
        // Another command ID than one handed out: refused.
        let none = zeCommandListUpdateMutableCommandSignalEventExp(list, id + 7, null_mut());
        assert_eq!(none, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
}

#[test]
fn counter_based_creation_checks_its_flags() {
    let mut h = null_mut();
    for (flags, want) in [
        (1 | 16 | 32, ZE_RESULT_ERROR_INVALID_ARGUMENT), // both kinds of timestamps
        (1 | 8 | 16, ZE_RESULT_ERROR_INVALID_ARGUMENT),  // IPC with timestamps
        (1 << 12, ZE_RESULT_ERROR_INVALID_ENUMERATION),  // unknown
        (1 | 4 | 16, OK),
    ] {
        let desc = ze_event_counter_based_desc_t {
            stype: ZE_STRUCTURE_TYPE_EVENT_COUNTER_BASED_DESC,
            pNext: core::ptr::null(),
            flags,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: 0,
        };
        // SAFETY: a descriptor and a writable handle.
        let r = unsafe { zeEventCounterBasedCreate(null_mut(), null_mut(), &desc, &mut h) };
        assert_eq!(r, want, "flags {flags:#x}");
    }
}

#[test]
fn the_extension_route_serves_its_names_and_nothing_else() {
    for name in [
        c"zeEventCounterBasedCreate",
        c"zexCounterBasedEventCreate2",
        c"zeCommandListAppendHostFunction",
        c"zeCommandListImmediateAppendCommandListsExp",
        c"zeCommandListHostSynchronize",
        c"zeEventPoolGetFlags",
        c"zeCommandListBeginGraphCaptureExp",
        c"zeCommandListBeginGraphCaptureExt",
        c"zeGraphDestroyExp",
        c"zeCommandListUpdateMutableCommandsExp",
        c"zeCommandListCreateCloneExp",
    ] {
        let mut f = null_mut();
        // SAFETY: a NUL-terminated name and a writable pointer.
        let r = unsafe { zeDriverGetExtensionFunctionAddress(null_mut(), name.as_ptr(), &mut f) };
        assert_eq!((r, f.is_null()), (OK, false), "{name:?}");
    }
    let mut f = std::ptr::dangling_mut::<c_void>();
    // SAFETY: as above.
    let r = unsafe {
        zeDriverGetExtensionFunctionAddress(null_mut(), c"zeNoSuchThing".as_ptr(), &mut f)
    };
    assert_eq!((r, f.is_null()), (ZE_RESULT_ERROR_INVALID_ARGUMENT, true));
}

#[test]
fn pool_flags_are_the_programs_and_timestamp_kinds_do_not_mix() {
    let desc = ze_event_pool_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        pNext: core::ptr::null(),
        flags: ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP,
        count: 1,
    };
    let mut pool = null_mut();
    // SAFETY: a descriptor and a writable handle.
    let r = unsafe { zeEventPoolCreate(null_mut(), &desc, 0, null_mut(), &mut pool) };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    let desc = ze_event_pool_desc_t {
        flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        ..desc
    };
    let mut flags = 0;
    // SAFETY: as above, and a writable answer.
    unsafe {
        assert_eq!(
            zeEventPoolCreate(null_mut(), &desc, 0, null_mut(), &mut pool),
            OK
        );
        assert_eq!(zeEventPoolGetFlags(pool, &mut flags), OK);
    }
    assert_eq!(flags, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
}
