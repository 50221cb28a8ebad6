//! Which of libpti's two C faces a process uses: the proposal's (`libpti.so`) and Intel PTI
//! 1.2's (`libpti_view.so.1`). One engine serves both; what they cannot share is the View API's
//! one pair of buffer callbacks and its one clock. The first time the second face sets buffer
//! callbacks after the other did, libpti raises a critical event, once per process.

use core::sync::atomic::{AtomicU8, Ordering};

use pti_core::ResultCode;
use pti_core::callback::critical;

/// A face of libpti.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Face {
    /// The proposal's API, `libpti.so`'s own names.
    Proposal = 1,
    /// Intel PTI 1.2's API, through `libpti_view.so.1`.
    Intel = 2,
}

/// Bit per face that has set the View API's buffer callbacks; bit 4 once reported.
static VIEW_CLIENTS: AtomicU8 = AtomicU8::new(0);
const REPORTED: u8 = 4;

/// Notes that `face` sets the buffer callbacks; reports the first time both faces did.
pub(crate) fn sets_buffer_callbacks(face: Face) {
    let before = VIEW_CLIENTS.fetch_or(face as u8, Ordering::AcqRel);
    let other = (Face::Proposal as u8 | Face::Intel as u8) & !(face as u8);
    if before & other != 0 && before & REPORTED == 0 {
        let before = VIEW_CLIENTS.fetch_or(REPORTED, Ordering::AcqRel);
        if before & REPORTED == 0 {
            critical::raise(
                ResultCode::ErrorTwoViewClients,
                format_args!(
                    "libpti's View API and Intel PTI's View API (libpti_view.so.1) were both \
                     used in this process: they share one engine, so the buffer callbacks set \
                     last ({face:?}) receive every record, in the clock of the face that set \
                     them (docs/compatibility.md)"
                ),
            );
        }
    }
}
