//! # libpti: the Rust API over `libpti.so`
//!
//! A Rust tool that depends on this crate links `libpti.so`, the shared library the OpenCL
//! loader, the XPTI framework and the Level Zero loader load: one engine per process, whatever
//! language its tools are written in. A tool sees every OpenCL, Level Zero and SYCL call of its
//! process, as C tools do (`include/pti/`), and never a second copy of libpti's state.
//!
//! What lives here:
//!
//! | module | what |
//! | --- | --- |
//! | [`callback`] | [`Subscriber`]: ENTER/EXIT callbacks of every call, critical events |
//! | [`view`] | [`Views`] ([`ViewsBuilder`]): views whose records ([`Record`]) go to a function; API filters, names, losses |
//! | [`error`] | [`Error`]: a libpti result code other than success |
//! | `ffi` | the C functions called, under their `libpti_<name>` symbols |
//!
//! ```no_run
//! use libpti::{ApiGroup, Domain, Event, Subscriber};
//!
//! let subscriber = Subscriber::new(|event| {
//!     if let Event::ApiCall(call) = event {
//!         println!("{:?} {:?} [{}]", call.site, call.name, call.correlation_id);
//!     }
//! })?;
//! subscriber.enable_domain(Domain::DriverApi, true)?;
//! // ... OpenCL or Level Zero calls of this process are delivered ...
//! drop(subscriber); // unsubscribes; no callback runs after this
//! # Ok::<(), libpti::Error>(())
//! ```
//!
//! The record layouts of the View API are those of the `pti-abi` crate, re-exported as [`abi`].

pub mod callback;
pub mod error;
mod ffi;
pub mod view;

pub use callback::{
    ApiCall, ApiGroup, CriticalEvent, Domain, Event, Site, Subscriber, critical_event_count,
};
pub use error::Error;
/// The C layouts of the View API's records and enums (`pti_view.h`).
pub use pti_abi as abi;
pub use view::{Record, Records, Views, ViewsBuilder};

/// libpti's version, `"<major>.<minor>.<patch>"` (the library's, which may be newer than this
/// crate).
pub fn version() -> &'static str {
    // SAFETY: ptiVersionString returns a static NUL-terminated string.
    unsafe { core::ffi::CStr::from_ptr(ffi::libpti_ptiVersionString()) }
        .to_str()
        .unwrap_or("?")
}
