//! # pti-core: the libpti engine
//!
//! Safe Rust that the C library (`pti-capi`, `libpti.so`) and Rust tools share. It holds:
//!
//! - [`api`]: the vocabulary (API groups, callback domains, call sites, API IDs);
//! - [`ids`]: the stable API-ID tables, generated from `pti-core/api-ids/*.tsv`;
//! - [`callback`]: subscribers and their enables, and the safe [`Subscriber`] for Rust tools;
//! - [`dispatch`]: the entry every backend wrapper calls around a traced function;
//! - [`critical`]: critical events, counted always and delivered to those who listen;
//! - [`view`]: the view API: buffered records in the published PTI layouts;
//! - [`clock`]: the host clock of every timestamp, and device-to-host conversion;
//! - [`backend`]: the interception layers (OpenCL loader layer, Level Zero tracer, XPTI
//!   subscriber) and what they share.
//!
//! `examples/callbacks.rs` and `examples/records.rs` show the Rust API; `docs/activation.md` says
//! what a Rust tool that links this crate can see.
//!
//! Internals: `interest` (the one byte per function the fast path reads), `thread` (per-thread
//! state), `correlation` (correlation IDs), `sync` (the asymmetric barrier of the lock-free
//! subscriber protocol). `docs/ARCHITECTURE.md` draws how they fit together.
//!
//! Nothing in the public API takes a raw pointer and dereferences it: pointers that appear
//! ([`dispatch::CallInfo`], [`ApiCallbackData`]) are opaque values passed through to callbacks.

pub mod api;
pub mod backend;
pub mod callback;
pub mod clock;
mod correlation;
pub mod critical;
pub mod dispatch;
pub mod fault;
mod fork;
pub mod ids;
mod interest;
mod intern;
mod result;
mod sync;
mod thread;
pub mod view;

pub use api::{ApiClass, ApiGroup, ApiId, Domain, Site};
pub use callback::{ApiCallbackData, CriticalEventData, Event, Subscriber, SubscriberId};
pub use result::{Error, ResultCode};

/// libpti's version, as in `Cargo.toml`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
