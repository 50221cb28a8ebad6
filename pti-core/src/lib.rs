//! # pti-core: the libpti engine
//!
//! Safe Rust that the C library (`pti-capi`, `libpti.so`) is built from. In three layers, each
//! using only the layers below it:
//!
//! 1. **The engine** (knows no backend):
//!    - [`api`], [`ids`], [`result`]: the vocabulary (API groups, domains, API IDs, result codes);
//!    - [`callback`]: subscribers, their enables, and delivery;
//!    - [`dispatch`]: the entry every backend wrapper calls around a traced function;
//!    - [`view`]: buffered records in the published PTI layouts (`pti-abi`);
//!    - [`clock`], [`callback::critical`], [`boundary`]: timestamps, critical events, panic boundaries;
//!    - [`annotation`]: the program's ITT annotations and oneCCL's communication, as records;
//!    - internals: `interest` (the one byte per function the fast path reads), `thread`
//!      (per-thread state), `correlation` (correlation IDs), `runtime_task` (the SYCL task a
//!      driver call belongs to), `thread_stack`, `linker`, `intern`, `fork`, `sync`.
//! 2. **The backends** ([`backend`]): the OpenCL loader layer, the Level Zero tracer and the XPTI
//!    subscriber, and the device plumbing the driver backends share. Each uses the engine only;
//!    none uses another.
//! 3. **The session** ([`session`]): what a tool asks (subscribe, enable, flush) and what that
//!    means for each backend, decided once. The only caller of the backends.
//!
//! `docs/ARCHITECTURE.md` draws how they fit together; each module's doc says what it may touch.
//!
//! `examples/callbacks.rs` and `examples/records.rs` show the Rust API; `docs/activation.md` says
//! what a Rust tool that links this crate can see. Nothing in the public API takes a raw pointer
//! and dereferences it: pointers that appear ([`dispatch::CallInfo`], [`ApiCallbackData`]) are
//! opaque values passed through to callbacks.

pub mod annotation;
pub mod api;
pub mod backend;
pub mod boundary;
pub mod callback;
pub mod clock;
mod correlation;
pub mod dispatch;
pub mod fault;
mod fork;
pub mod ids;
mod interest;
mod intern;
mod lent;
mod linker;
mod log;
mod recent;
pub mod result;
mod runtime_task;
pub mod session;
mod sycl_tag;
mod sync;
mod thread;
mod thread_stack;
pub mod view;

pub use api::{ApiClass, ApiGroup, ApiId, Domain, Site};
pub use callback::{ApiCallbackData, CriticalEventData, Event, SubscriberId};
pub use result::{Error, ResultCode};
pub use session::Subscriber;

/// libpti's version, as in `Cargo.toml`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
