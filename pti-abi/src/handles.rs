//! What `pti.h` declares for every header above it: the size of device UUIDs and the backend
//! handle types, as Intel PTI's `pti.h` declares them. Generated into `pti.h` by cbindgen
//! (`xtask/src/headers.rs`); the records of `lib.rs` refer to them.

use core::ffi::c_void;

/// Size of `_device_uuid` in device records.
pub const PTI_MAX_DEVICE_UUID_SIZE: usize = 16;

/// Device handle (`ze_device_handle_t`, `cl_device_id`).
pub type pti_device_handle_t = *mut c_void;
/// Context handle (`ze_context_handle_t`, `cl_context`).
pub type pti_backend_ctx_t = *mut c_void;
/// Queue handle (`ze_command_queue_handle_t`, `cl_command_queue`).
pub type pti_backend_queue_t = *mut c_void;
/// Event handle (`ze_event_handle_t`, `cl_event`).
pub type pti_backend_evt_t = *mut c_void;
/// Command-list handle (`ze_command_list_handle_t`).
pub type pti_backend_command_list_t = *mut c_void;
/// Kernel handle (`ze_kernel_handle_t`, `cl_kernel`).
pub type pti_backend_kernel_t = *mut c_void;
/// Module or program handle (`ze_module_handle_t`, `cl_program`).
pub type pti_backend_module_t = *mut c_void;
