//! The size of each kind's record, written out from the ABI's record layouts, independently of
//! the record walk's own table: the model that the proptest fuzzer (`fuzz_view_records.rs`) and
//! the cargo-fuzz target (`fuzz/fuzz_targets/next_record.rs`, which includes this file by path)
//! check the walk against.

use core::mem::size_of;

use pti_core::view::abi::*;

/// The size of a record of raw kind `kind`, from the record layouts of the ABI; `None` for
/// INVALID, RESERVED and unknown kinds.
pub(crate) fn record_size(kind: u32) -> Option<usize> {
    Some(match kind {
        1 | 2 => size_of::<pti_view_record_kernel_v2>(),
        3 | 6 => size_of::<pti_view_record_api>(),
        5 => size_of::<pti_view_record_overhead>(),
        7 => size_of::<pti_view_record_external_correlation>(),
        8 => size_of::<pti_view_record_memory_copy_v2>(),
        9 => size_of::<pti_view_record_memory_fill_v2>(),
        10 => size_of::<pti_view_record_memory_copy_p2p_v2>(),
        11 => size_of::<pti_view_record_synchronization>(),
        12 => size_of::<pti_view_record_comms>(),
        0x10001 => size_of::<pti_view_record_memory_allocation>(),
        0x10002 => size_of::<pti_view_record_command_execution>(),
        0x10003 => size_of::<pti_view_record_kernel_launch>(),
        0x10004 => size_of::<pti_view_record_loss>(),
        0x10005 => size_of::<pti_view_record_annotation>(),
        _ => return None,
    })
}
