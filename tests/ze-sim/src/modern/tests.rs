//! The extension route, counter-based events, host functions and `ZE_SIM_MINIMAL`'s parsing,
//! called directly (the loader's route to them is tested by `tests/level_zero.rs`). They assume
//! `ZE_SIM_MINIMAL` unset, as `cargo test` runs them.

use core::ffi::c_void;
use core::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::api::*;

/// An immediate or a regular list.
fn list(immediate: bool) -> ze_command_list_handle_t {
    let mut h = null_mut();
    // SAFETY: a writable handle; the fixture ignores the other arguments.
    unsafe {
        if immediate {
            zeCommandListCreateImmediate(null_mut(), null_mut(), core::ptr::null(), &mut h);
        } else {
            zeCommandListCreate(null_mut(), null_mut(), core::ptr::null(), &mut h);
        }
    }
    h
}

/// A counter-based event created the standard way with `flags`.
fn ze_event(flags: u32) -> ze_event_handle_t {
    let desc = ze_event_counter_based_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_COUNTER_BASED_DESC,
        pNext: core::ptr::null(),
        flags,
        signal: ZE_EVENT_SCOPE_FLAG_HOST,
        wait: ZE_EVENT_SCOPE_FLAG_HOST,
    };
    let mut h = null_mut();
    // SAFETY: a descriptor and a writable handle.
    let r = unsafe { zeEventCounterBasedCreate(null_mut(), null_mut(), &desc, &mut h) };
    assert_eq!(r, OK);
    h
}

/// A counter-based event created Intel's way with `flags`.
fn zex_event(flags: u32) -> ze_event_handle_t {
    let desc = ZexCounterBasedEventDesc {
        stype: 0,
        p_next: core::ptr::null(),
        flags,
        signal_scope: ZE_EVENT_SCOPE_FLAG_HOST,
        wait_scope: ZE_EVENT_SCOPE_FLAG_DEVICE,
    };
    let mut h = null_mut();
    // SAFETY: a descriptor of Intel's layout and a writable handle.
    let r = unsafe {
        zexCounterBasedEventCreate2(null_mut(), null_mut(), (&raw const desc).cast(), &mut h)
    };
    assert_eq!(r, OK);
    h
}

/// Whether `event` has signalled (through a wait that does not wait).
fn signalled(event: ze_event_handle_t) -> bool {
    // SAFETY: an event of this fixture.
    unsafe { zeEventHostSynchronize(event, 0) == OK }
}

/// `event`'s kernel timestamps, or the error.
fn timestamps(event: ze_event_handle_t) -> Result<(u64, u64), ze_result_t> {
    // SAFETY: all-zero bytes are a valid result structure.
    let mut t: ze_kernel_timestamp_result_t = unsafe { core::mem::zeroed() };
    // SAFETY: an event of this fixture and a writable result.
    match unsafe { zeEventQueryKernelTimestamp(event, &mut t) } {
        OK => Ok((t.global.kernelStart, t.global.kernelEnd)),
        error => Err(error),
    }
}

unsafe extern "C" fn count_call(data: *mut c_void) {
    // SAFETY: the test passes an AtomicU32 that outlives the call.
    unsafe { &*data.cast::<AtomicU32>() }.fetch_add(1, Ordering::Relaxed);
}

/// Appends a host function counting its calls in `calls`, signalling `signal`.
fn append_host_function(
    list: ze_command_list_handle_t,
    calls: &AtomicU32,
    signal: ze_event_handle_t,
) {
    let data = (calls as *const AtomicU32).cast_mut().cast();
    // SAFETY: a list and an event of this fixture; `calls` outlives the list's executions.
    let r = unsafe {
        zeCommandListAppendHostFunction(
            list,
            Some(count_call),
            data,
            null_mut(),
            signal,
            0,
            null_mut(),
        )
    };
    assert_eq!(r, OK);
}

fn destroy_all(lists: &[ze_command_list_handle_t], events: &[ze_event_handle_t]) {
    for &l in lists {
        // SAFETY: a list of this fixture, not used again.
        assert_eq!(unsafe { zeCommandListDestroy(l) }, OK);
    }
    for &e in events {
        // SAFETY: an event of this fixture, not used again.
        assert_eq!(unsafe { zeEventDestroy(e) }, OK);
    }
}

#[test]
fn minimal_parses_known_words_and_returns_the_others() {
    let (m, unknown) = Minimal::parse(" query-status,,kernel-timestamps ,bogus");
    assert!(m.query_status && m.kernel_timestamps && !m.global_timestamps);
    assert_eq!(unknown, ["bogus"]);
    assert_eq!(Minimal::parse(""), (Minimal::default(), vec![]));
}

#[test]
fn the_extension_route_serves_its_names_and_nothing_else() {
    for name in [
        c"zeEventCounterBasedCreate",
        c"zexCounterBasedEventCreate2",
        c"zeCommandListAppendHostFunction",
        c"zeCommandListAppendLaunchKernelWithParameters",
        c"zeCommandListAppendMemoryCopyWithParameters",
        c"zeCommandListAppendMemoryFillWithParameters",
        c"zeCommandListImmediateAppendCommandListsExp",
        c"zeCommandListImmediateAppendCommandListsWithParameters",
        c"zeCommandListHostSynchronize",
    ] {
        let mut f = null_mut();
        // SAFETY: a NUL-terminated name and a writable pointer.
        let r = unsafe { zeDriverGetExtensionFunctionAddress(null_mut(), name.as_ptr(), &mut f) };
        assert_eq!((r, f.is_null()), (OK, false), "{name:?}");
    }
    let mut f = core::ptr::dangling_mut::<c_void>();
    // SAFETY: as above.
    let r = unsafe {
        zeDriverGetExtensionFunctionAddress(null_mut(), c"zeNoSuchFunction".as_ptr(), &mut f)
    };
    assert_eq!((r, f), (ZE_RESULT_ERROR_INVALID_ARGUMENT, null_mut()));
}

#[test]
fn a_host_function_signals_a_counter_based_event_with_timestamps() {
    let (immediate, calls) = (list(true), AtomicU32::new(0));
    let event = ze_event(
        ZE_EVENT_COUNTER_BASED_FLAG_IMMEDIATE | ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP,
    );
    assert!(!signalled(event));
    assert_eq!(timestamps(event), Err(ZE_RESULT_NOT_READY));
    append_host_function(immediate, &calls, event);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert!(signalled(event));
    assert!(timestamps(event).is_ok());
    let (start, end) = event_span(event);
    assert!(start <= end, "{start} {end}");
    // The host must neither reset nor signal a counter-based event.
    // SAFETY: an event of this fixture.
    unsafe {
        assert_eq!(zeEventHostReset(event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        assert_eq!(zeEventHostSignal(event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        assert_eq!(
            zeCommandListAppendEventReset(immediate, event),
            ZE_RESULT_ERROR_INVALID_ARGUMENT
        );
    }
    assert!(signalled(event));
    destroy_all(&[immediate], &[event]);
}

#[test]
fn timestamps_only_with_a_timestamp_flag() {
    let immediate = list(true);
    let calls = AtomicU32::new(0);
    let plain = ze_event(ZE_EVENT_COUNTER_BASED_FLAG_IMMEDIATE);
    let zex_plain = zex_event(1 | 4);
    let zex_timed = zex_event(1 | ZEX_KERNEL_TIMESTAMP);
    let zex_mapped = zex_event(1 | ZEX_KERNEL_MAPPED_TIMESTAMP);
    for event in [plain, zex_plain, zex_timed, zex_mapped] {
        append_host_function(immediate, &calls, event);
        assert!(signalled(event));
    }
    assert_eq!(timestamps(plain), Err(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    assert_eq!(timestamps(zex_plain), Err(ZE_RESULT_ERROR_INVALID_ARGUMENT));
    assert!(timestamps(zex_timed).is_ok());
    assert!(timestamps(zex_mapped).is_ok());
    destroy_all(&[immediate], &[plain, zex_plain, zex_timed, zex_mapped]);
}

#[test]
fn regular_lists_run_on_an_immediate_list_re_arm_their_events() {
    let (immediate, regular, calls) = (list(true), list(false), AtomicU32::new(0));
    let flags = ZE_EVENT_COUNTER_BASED_FLAG_DEVICE_TIMESTAMP;
    let (inner, whole) = (ze_event(flags), ze_event(flags));
    append_host_function(immediate, &calls, inner);
    assert!(signalled(inner));
    // Appended to a regular list, the event follows that command: pending until it runs.
    append_host_function(regular, &calls, inner);
    assert!(!signalled(inner));
    append_host_function(regular, &calls, null_mut());
    // SAFETY: a regular list of this fixture.
    assert_eq!(unsafe { zeCommandListClose(regular) }, OK);
    let mut lists = [regular];
    // Only an immediate list runs lists.
    // SAFETY: lists of this fixture.
    let r = unsafe {
        zeCommandListImmediateAppendCommandListsExp(
            regular,
            1,
            lists.as_mut_ptr(),
            whole,
            0,
            null_mut(),
        )
    };
    assert_eq!(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    for run in 0..2 {
        let mut waits = [inner];
        // SAFETY: lists and events of this fixture.
        let r = unsafe {
            if run == 0 {
                zeCommandListImmediateAppendCommandListsExp(
                    immediate,
                    1,
                    lists.as_mut_ptr(),
                    whole,
                    0,
                    null_mut(),
                )
            } else {
                zeCommandListImmediateAppendCommandListsWithParameters(
                    immediate,
                    1,
                    lists.as_mut_ptr(),
                    core::ptr::null(),
                    whole,
                    1,
                    waits.as_mut_ptr(),
                )
            }
        };
        assert_eq!(r, OK);
        assert_eq!(calls.load(Ordering::Relaxed), 3 + 2 * run);
        assert!(signalled(inner) && signalled(whole));
        // The whole run's span holds its commands' (full-width ticks: no wrap in between).
        let (i, w) = (event_span(inner), event_span(whole));
        assert!(w.0 <= i.0 && i.1 <= w.1, "{w:?} does not hold {i:?}");
    }
    // SAFETY: lists of this fixture (NULL handles are refused).
    unsafe {
        assert_eq!(zeCommandListHostSynchronize(immediate, u64::MAX), OK);
        assert_eq!(
            zeCommandListHostSynchronize(null_mut(), 0),
            ZE_RESULT_ERROR_INVALID_NULL_HANDLE
        );
    }
    destroy_all(&[regular, immediate], &[inner, whole]);
}

/// The full-width device ticks of the last command that signalled `event`.
fn event_span(event: ze_event_handle_t) -> (u64, u64) {
    // SAFETY: an event of this fixture.
    unsafe { object::<Event, _>(event) }
        .span
        .lock()
        .unwrap()
        .unwrap()
}

#[test]
fn with_parameters_copies_and_fills_as_the_plain_forms() {
    let immediate = list(true);
    let (src, mut dst) = ([1u8, 2, 3, 4, 5, 6, 7, 8], [0u8; 8]);
    let pattern = [0xABu8, 0xCD];
    // SAFETY: a list of this fixture and buffers of the sizes given.
    unsafe {
        let r = zeCommandListAppendMemoryCopyWithParameters(
            immediate,
            dst.as_mut_ptr().cast(),
            src.as_ptr().cast(),
            8,
            core::ptr::null(),
            null_mut(),
            0,
            null_mut(),
        );
        assert_eq!(r, OK);
        assert_eq!(dst, src);
        let r = zeCommandListAppendMemoryFillWithParameters(
            immediate,
            dst.as_mut_ptr().cast(),
            pattern.as_ptr().cast(),
            2,
            6,
            core::ptr::null(),
            null_mut(),
            0,
            null_mut(),
        );
        assert_eq!(r, OK);
    }
    assert_eq!(dst, [0xAB, 0xCD, 0xAB, 0xCD, 0xAB, 0xCD, 7, 8]);
    destroy_all(&[immediate], &[]);
}
