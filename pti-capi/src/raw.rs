//! Enum parameters as they arrive from C: plain 32-bit numbers that may hold any value.
//!
//! cbindgen prints each newtype under its C enum's name (see `xtask/src/headers.rs`), so the
//! prototypes read exactly as the spec writes them while Rust never holds an unchecked enum.

/// A `pti_result` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawResult(pub u32);

/// A `pti_api_group_id` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawApiGroup(pub u32);

/// A `pti_callback_domain` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawDomain(pub u32);

/// A `pti_callback_site` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSite(pub u32);

/// A `pti_view_kind` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawViewKind(pub u32);

/// A `pti_view_external_kind` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawExternalKind(pub u32);

/// A `pti_view_overhead_kind` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawOverheadKind(pub u32);

/// A `pti_view_memory_type` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawMemoryType(pub u32);

/// A `pti_view_memcpy_type` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawMemcpyType(pub u32);

/// A `pti_api_class` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawApiClass(pub u32);

/// A `pti_callback_domain` of Intel's Callback API from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawIntelDomain(pub u32);

/// A `pti_callback_phase` of Intel's Callback API from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawIntelPhase(pub u32);

/// A `pti_metrics_scope_mode_t` from C.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawMetricsScopeMode(pub u32);
