//! External correlation: IDs a tool pushes around its own operations, tied to the API calls made
//! while they are pushed.
//!
//! Each thread keeps one stack per pushable kind. While `PTI_VIEW_EXTERNAL_CORRELATION` is
//! enabled, every traced call that owns its correlation ID (not a driver call nested in a runtime
//! call, which shares the runtime call's) gets one external-correlation record per pushed ID:
//! every kind, and every ID of nested pushes, bottom of each stack first.

use super::abi::pti_view_external_kind;
use crate::result::Error;
use crate::thread;

fn stack_index(kind: pti_view_external_kind) -> usize {
    kind as usize - pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_UNKNOWN as usize
}

/// Pushes `id` onto this thread's stack of `kind`. INVALID is not a pushable kind.
pub fn push_external_correlation_id(kind: pti_view_external_kind, id: u64) -> Result<(), Error> {
    if kind == pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_INVALID {
        return Err(Error::BadArgument(
            "PTI_VIEW_EXTERNAL_KIND_INVALID cannot be pushed",
        ));
    }
    thread::with(|s| {
        s.external.borrow_mut()[stack_index(kind)].push(id);
        s.external_count.set(s.external_count.get() + 1);
    })
    .ok_or(Error::Internal("the thread is exiting"))
}

/// Pops the top ID of this thread's stack of `kind`.
pub fn pop_external_correlation_id(kind: pti_view_external_kind) -> Result<u64, Error> {
    if kind == pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_INVALID {
        return Err(Error::BadArgument(
            "PTI_VIEW_EXTERNAL_KIND_INVALID has no stack",
        ));
    }
    thread::with(|s| {
        let id = s.external.borrow_mut()[stack_index(kind)].pop()?;
        s.external_count.set(s.external_count.get() - 1);
        Some(id)
    })
    .ok_or(Error::Internal("the thread is exiting"))?
    .ok_or(Error::ExternalIdQueueEmpty)
}
