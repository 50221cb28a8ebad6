//! What the benchmarks share: the traced and untraced call loops, and the interleaved timing.
#![allow(dead_code)] // each benchmark uses its own subset

use std::hint::black_box;
use std::time::Instant;

use pti_core::ApiGroup;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;

/// The "traced function": an opaque call the compiler cannot remove.
#[inline(never)]
pub(crate) fn real_call(x: u64) -> i32 {
    black_box(x) as i32
}

/// `real_call` through the dispatch entry, as OpenCL's clFinish.
#[inline(never)]
pub(crate) fn traced_call(x: u64) -> i32 {
    dispatch::trace_call(
        ApiGroup::OpenCl,
        opencl::clFinish,
        CallInfo::default,
        |_| {
            let status = real_call(x);
            (status, status)
        },
    )
}

/// `real_call` without the dispatch entry.
#[inline(never)]
pub(crate) fn untraced_call(x: u64) -> i32 {
    real_call(x)
}

/// Nanoseconds per call of `call`, over `n` calls.
pub(crate) fn time_loop(call: fn(u64) -> i32, n: u64) -> f64 {
    let start = Instant::now();
    let mut acc = 0i64;
    for i in 0..n {
        acc = acc.wrapping_add(i64::from(call(black_box(i))));
    }
    black_box(acc);
    start.elapsed().as_nanos() as f64 / n as f64
}

/// The median of `v`.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
