//! Intel's experimental Level Zero extensions (`zex*`) that libpti traces, which no Level Zero
//! header declares: Intel's GPU driver (compute-runtime) serves them through
//! `zeDriverGetExtensionFunctionAddress`, and the Unified Runtime's Level Zero v2 adapter creates
//! its counter-based events with `zexCounterBasedEventCreate2`.
//!
//! Written by hand from the driver's documentation of the extension, in the shape `cargo xtask
//! gen` reads (`xtask/src/level_zero.rs` parses this file beside the generated bindings): a
//! function-pointer alias `<function>_t`, and a parameter struct `_<function>_params_t` of
//! pointers to the arguments, as the loader's tracing layer would pass them.

#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::c_void;

use crate::level_zero::{ze_context_handle_t, ze_device_handle_t, ze_event_handle_t, ze_result_t};

/// `zexCounterBasedEventCreate2(hContext, hDevice, desc, phEvent)`: creates a counter-based event
/// (no pool) described by a `zex_counter_based_event_desc_t`, which libpti passes through
/// unread.
pub type zexCounterBasedEventCreate2_t = ::core::option::Option<
    unsafe extern "C" fn(
        hContext: ze_context_handle_t,
        hDevice: ze_device_handle_t,
        desc: *const c_void,
        phEvent: *mut ze_event_handle_t,
    ) -> ze_result_t,
>;

/// Pointers to the arguments of `zexCounterBasedEventCreate2`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct _zex_counter_based_event_create2_params_t {
    /// The context.
    pub phContext: *mut ze_context_handle_t,
    /// The device.
    pub phDevice: *mut ze_device_handle_t,
    /// The descriptor.
    pub pdesc: *mut *const c_void,
    /// Where the event goes.
    pub pphEvent: *mut *mut ze_event_handle_t,
}

/// Pointers to the arguments of `zexCounterBasedEventCreate2`.
pub type zex_counter_based_event_create2_params_t = _zex_counter_based_event_create2_params_t;
