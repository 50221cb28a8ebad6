//! OpenCL extension functions that libpti traces but `opencl-sys` does not declare, typed the way
//! `opencl-sys` types the others (`<name>_t`: an optional `extern "C"` function pointer).
//!
//! Sources: the `cl_intel_function_pointers` and `cl_intel_global_variable_access` extension
//! specifications. The wrapper generator (`cargo xtask gen`) reads this file beside
//! `opencl-sys`'s own, so every alias here must keep the `pub type <name>_t = Option<..>` shape.

#![allow(non_camel_case_types)]

use libc::{c_char, c_void, size_t};
use opencl_sys::{
    cl_bool, cl_command_queue, cl_device_id, cl_event, cl_int, cl_program, cl_uint, cl_ulong,
};

/// `cl_intel_function_pointers`: the device address of a function of a built program.
pub type clGetDeviceFunctionPointerINTEL_t = Option<
    unsafe extern "C" fn(
        device: cl_device_id,
        program: cl_program,
        function_name: *const c_char,
        function_pointer_ret: *mut cl_ulong,
    ) -> cl_int,
>;

/// `cl_intel_global_variable_access`: the device address and size of a program-scope variable.
pub type clGetDeviceGlobalVariablePointerINTEL_t = Option<
    unsafe extern "C" fn(
        device: cl_device_id,
        program: cl_program,
        global_variable_name: *const c_char,
        global_variable_size_ret: *mut size_t,
        global_variable_pointer_ret: *mut *mut c_void,
    ) -> cl_int,
>;

/// `cl_intel_global_variable_access`: copies host memory into a program-scope variable.
pub type clEnqueueWriteGlobalVariableINTEL_t = Option<
    unsafe extern "C" fn(
        command_queue: cl_command_queue,
        program: cl_program,
        name: *const c_char,
        blocking_write: cl_bool,
        size: size_t,
        offset: size_t,
        ptr: *const c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int,
>;

/// `cl_intel_global_variable_access`: copies a program-scope variable into host memory.
pub type clEnqueueReadGlobalVariableINTEL_t = Option<
    unsafe extern "C" fn(
        command_queue: cl_command_queue,
        program: cl_program,
        name: *const c_char,
        blocking_read: cl_bool,
        size: size_t,
        offset: size_t,
        ptr: *mut c_void,
        num_events_in_wait_list: cl_uint,
        event_wait_list: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int,
>;
