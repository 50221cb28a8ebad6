//! The stable API-ID tables: for each API group, which number names which function.
//!
//! An ID, once published, never changes meaning: tools store IDs, compare them across runs and
//! switch on them. The data lives in `pti-core/api-ids/<group>.tsv`; the per-group modules below
//! are generated from it by `cargo xtask gen` (never edit them), and
//! `tests/api_id_stability.rs` fails if a released `(id, name)` pair changes or disappears.
//!
//! - Level Zero: 1..4095 numbered as the published PTI Level Zero ID header numbers them; from
//!   4096 up, libpti's own numbers for functions Intel had not numbered (the rest of the 1.32
//!   headers, then Intel's extensions: `zexCounterBasedEventCreate2`, the older `…Exp` graph
//!   functions), append-only like the rest.
//!   Intel PTI later numbered 32 of those (its 219-250): libpti's Intel face writes and accepts
//!   Intel's numbers for them ([`to_intel`], [`from_intel`], `intel_level_zero.tsv`).
//! - OpenCL: 1..=149 in the order of the Khronos ICD dispatch table (`struct _cl_icd_dispatch`),
//!   then the extension functions reached through `clGetExtensionFunctionAddress[ForPlatform]`,
//!   the `cl_intel_unified_shared_memory` functions first.
//! - SYCL: the Unified Runtime function IDs (`ur_function_t`), as `ur.call` delivers them; gaps
//!   are IDs that UR retired.

use core::ffi::CStr;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::api::{ApiClass, ApiGroup, ApiId};

// Generated modules (`cargo xtask gen`, which formats them as `cargo fmt` does).
mod classes;
mod intel_level_zero;
pub mod level_zero;
pub mod opencl;
pub mod sycl;

/// Whether records carry Intel PTI's Level Zero numbers ([`write_level_zero_ids_as_intel`]).
static INTEL_NUMBERS: AtomicBool = AtomicBool::new(false);

/// From now on, records carry Intel PTI's number for the Level Zero functions Intel numbers
/// otherwise than libpti (the Intel face asks for it with the rest of Intel's habits; records
/// are the process's, as its one clock is).
pub fn write_level_zero_ids_as_intel() {
    INTEL_NUMBERS.store(true, Ordering::Relaxed);
}

/// The ID a record carries for function `id` of `group`: Intel PTI's number once the Intel
/// face asked for it, else libpti's.
#[inline]
pub(crate) fn as_written(group: ApiGroup, id: ApiId) -> ApiId {
    // Only libpti's own Level Zero IDs (from 4096) are ever renumbered: one compare on the
    // common path.
    if id >= 4096 && group == ApiGroup::LevelZero && INTEL_NUMBERS.load(Ordering::Relaxed) {
        to_intel(group, id)
    } else {
        id
    }
}

/// Intel PTI's number for function `id` of `group` (libpti's number where Intel numbers it the
/// same or not at all).
pub fn to_intel(group: ApiGroup, id: ApiId) -> ApiId {
    if group != ApiGroup::LevelZero {
        return id;
    }
    intel_level_zero::RENUMBERED
        .binary_search_by_key(&id, |(ours, _)| *ours)
        .map_or(id, |i| intel_level_zero::RENUMBERED[i].1)
}

/// libpti's number for Intel PTI's ID `id` of `group`, or `None` where `id` names no function
/// on Intel's numbering (libpti's own number of a function Intel numbers otherwise included).
pub fn from_intel(group: ApiGroup, id: ApiId) -> Option<ApiId> {
    if group == ApiGroup::LevelZero {
        let renumbered = &intel_level_zero::RENUMBERED;
        if let Some((ours, _)) = renumbered.iter().find(|(_, intel)| *intel == id) {
            return Some(*ours);
        }
        if renumbered.iter().any(|(ours, _)| *ours == id) {
            return None;
        }
    }
    is_valid(group, id).then_some(id)
}

fn names(group: ApiGroup) -> &'static [Option<&'static CStr>] {
    match group {
        ApiGroup::LevelZero => &level_zero::NAMES,
        ApiGroup::OpenCl => &opencl::NAMES,
        ApiGroup::Sycl => &sycl::NAMES,
    }
}

/// The highest ID of `group`'s table.
pub const fn max_id(group: ApiGroup) -> ApiId {
    match group {
        ApiGroup::LevelZero => level_zero::MAX_ID,
        ApiGroup::OpenCl => opencl::MAX_ID,
        ApiGroup::Sycl => sycl::MAX_ID,
    }
}

/// The function that `id` names in `group`, or `None` if it names none (0, a gap, too large).
pub fn name(group: ApiGroup, id: ApiId) -> Option<&'static CStr> {
    names(group).get(id as usize).copied().flatten()
}

/// Whether `id` names a function of `group`.
pub fn is_valid(group: ApiGroup, id: ApiId) -> bool {
    name(group, id).is_some()
}

/// Every `(id, name)` of `group`, in ID order.
pub fn iter(group: ApiGroup) -> impl Iterator<Item = (ApiId, &'static CStr)> {
    names(group)
        .iter()
        .enumerate()
        .filter_map(|(id, name)| name.map(|n| (id as ApiId, n)))
}

/// The functions of `group` in API class `class` (`pti-core/api-ids/classes.tsv`).
pub fn class_members(group: ApiGroup, class: ApiClass) -> &'static [ApiId] {
    classes::members(group, class)
}

/// The ID of function `function` in `group`, if the table has it.
pub fn find(group: ApiGroup, function: &str) -> Option<ApiId> {
    iter(group)
        .find(|(_, n)| n.to_bytes() == function.as_bytes())
        .map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree_and_reject_unknown_ids() {
        assert_eq!(
            name(ApiGroup::LevelZero, level_zero::zeInit),
            Some(c"zeInit")
        );
        assert_eq!(
            find(ApiGroup::OpenCl, "clEnqueueNDRangeKernel"),
            Some(opencl::clEnqueueNDRangeKernel)
        );
        assert_eq!(
            name(ApiGroup::Sycl, sycl::urEnqueueKernelLaunch),
            Some(c"urEnqueueKernelLaunch")
        );
        for group in ApiGroup::ALL {
            assert_eq!(name(group, 0), None);
            assert_eq!(name(group, max_id(group) + 1), None);
            assert_eq!(name(group, u32::MAX), None);
            assert!(is_valid(group, max_id(group)));
            assert!(iter(group).all(|(id, n)| name(group, id) == Some(n)));
        }
    }
}
