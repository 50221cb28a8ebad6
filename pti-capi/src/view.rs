//! `pti_view.h`: the enums and handle types shared by the view and callback APIs, and the names
//! of API IDs. The view API's buffers and records join this file with their implementation.

use core::ffi::{c_char, c_void};

use pti_core::{ApiGroup, Error, ids};

use crate::boundary::{guard, out_ptr};
use crate::pti::pti_result;
use crate::raw::RawApiGroup;

/// Size of `_device_uuid` in device records.
pub const PTI_MAX_DEVICE_UUID_SIZE: usize = 16;
/// Size of `_pci_address` in device records.
pub const PTI_MAX_PCI_ADDRESS_SIZE: usize = 16;
/// `_sycl_queue_id` of work not submitted through a SYCL queue.
pub const PTI_INVALID_QUEUE_ID: u64 = 0xFFFF_FFFF_FFFF_FFFE;

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

/// API groups. Calls are traced under 1..=3; 4, 5 and ALL only label view records and filters.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pti_api_group_id {
    /// Not a group.
    PTI_API_GROUP_RESERVED = 0,
    /// Level Zero.
    PTI_API_GROUP_LEVELZERO = 1,
    /// OpenCL.
    PTI_API_GROUP_OPENCL = 2,
    /// SYCL, seen as Unified Runtime calls.
    PTI_API_GROUP_SYCL = 3,
    /// SYCL over Level Zero (view records only).
    PTI_API_GROUP_HYBRID_SYCL_LEVELZERO = 4,
    /// SYCL over OpenCL (view records only).
    PTI_API_GROUP_HYBRID_SYCL_OPENCL = 5,
    /// Every group (view filters only).
    PTI_API_GROUP_ALL = 0x7fff_ffff,
}

impl From<ApiGroup> for pti_api_group_id {
    fn from(group: ApiGroup) -> Self {
        match group {
            ApiGroup::LevelZero => pti_api_group_id::PTI_API_GROUP_LEVELZERO,
            ApiGroup::OpenCl => pti_api_group_id::PTI_API_GROUP_OPENCL,
            ApiGroup::Sycl => pti_api_group_id::PTI_API_GROUP_SYCL,
        }
    }
}

/// Converts a group from C, accepting only the traced groups (1..=3).
pub(crate) fn traced_group(raw: RawApiGroup) -> Result<ApiGroup, Error> {
    ApiGroup::from_raw(raw.0).ok_or(Error::BadArgument(
        "API group must be LEVELZERO, OPENCL or SYCL",
    ))
}

/// The name of function `unique_id` of group `type`, as a static NUL-terminated string.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `name` is NULL or `type` is not LEVELZERO, OPENCL or SYCL;
/// PTI_ERROR_BAD_API_ID if the ID names no function of the group. `*name` is written only on
/// success; the string lives as long as the library is loaded. Thread-safe.
///
/// # Safety
/// `name` must be NULL or point to writable storage for one `const char*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetApiIdName(
    r#type: RawApiGroup,
    unique_id: u32,
    name: *mut *const c_char,
) -> pti_result {
    guard(|| {
        let out = out_ptr(name, "name must not be NULL")?;
        let group = traced_group(r#type)?;
        let found = ids::name(group, unique_id).ok_or(Error::BadApiId {
            group: r#type.0,
            id: unique_id,
        })?;
        // SAFETY: `out` is non-NULL and aligned (checked), and the caller passes storage for one
        // `const char*`.
        unsafe { out.write(found.as_ptr()) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use core::ffi::CStr;
    use core::ptr;

    use super::*;

    fn name_of(group: u32, id: u32) -> (pti_result, Option<String>) {
        let mut name: *const c_char = ptr::null();
        // SAFETY: `name` is a valid out-parameter.
        let r = unsafe { ptiViewGetApiIdName(RawApiGroup(group), id, &mut name) };
        // SAFETY: on success `name` points at a static NUL-terminated string.
        (
            r,
            (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_str().unwrap().to_owned()),
        )
    }

    #[test]
    fn every_id_of_every_table_has_its_name() {
        for group in ApiGroup::ALL {
            let mut n = 0;
            for (id, expected) in ids::iter(group) {
                assert_eq!(
                    name_of(group as u32, id),
                    (
                        pti_result::PTI_SUCCESS,
                        Some(expected.to_str().unwrap().into())
                    )
                );
                n += 1;
            }
            assert!(n > 190, "group {group:?} has only {n} ids");
        }
    }

    #[test]
    fn unknown_ids_groups_and_null_are_rejected_without_writing() {
        assert_eq!(name_of(1, 0), (pti_result::PTI_ERROR_BAD_API_ID, None));
        assert_eq!(
            name_of(3, 36),
            (pti_result::PTI_ERROR_BAD_API_ID, None),
            "a retired UR id"
        );
        assert_eq!(
            name_of(2, 100_000),
            (pti_result::PTI_ERROR_BAD_API_ID, None)
        );
        for group in [0, 4, 5, 0x7fff_ffff, 77] {
            assert_eq!(
                name_of(group, 1),
                (pti_result::PTI_ERROR_BAD_ARGUMENT, None)
            );
        }
        assert_eq!(
            // SAFETY: NULL is allowed, and refused.
            unsafe { ptiViewGetApiIdName(RawApiGroup(1), 1, ptr::null_mut()) },
            pti_result::PTI_ERROR_BAD_ARGUMENT
        );
    }
}
