//! # libpti's C ABI
//!
//! `libpti.so`: thin `extern "C"` shells over `pti-core`. Every export has the same
//! shape (see `boundary`): catch panics, check pointers and enum values, make one call into the
//! core, map its error to a `pti_result`. Anything longer belongs in the core.
//!
//! One source file per public header; cbindgen writes each header from its file alone
//! (`cargo xtask gen`), and a test fails when the committed headers drift:
//!
//! | file | header |
//! | --- | --- |
//! | [`version`] | `pti_version.h`: the PTI API level and libpti's version |
//! | [`pti`] | `pti.h`: result codes (and, from `pti-abi`, handle types) |
//! | [`view`] | `pti_view.h`: the View API, shared enums, API-ID names |
//! | [`callback`] | `pti_callback.h`: the Callback API |
//! | [`ext`] | `pti_ext.h`: libpti's extensions (critical-event counts, simulated calls) |
//! | [`layer`] | none: the OpenCL loader-layer entry points of Khronos's `CL/cl_layer.h` |
//! | [`xpti`] | none: the XPTI subscriber entry points of XPTI's `xpti_data_types.h` |
//! | [`itt`] | none: the ITT collector entry point (`__itt_api_init`) of ittnotify's static part |
//! | [`symbols`] | none: `libpti_<name>`, each function's second name, which headers bind to |
//! | [`intel`] | Intel PTI 1.2's API as `libpti_intel_<name>`, which `libpti_view.so.1` forwards to: `pti_metrics*.h`, `pti_pc_sampling.h`, `pti-intel/pti/pti_callback.h` |
//! | `caller` | none: which face a call to a name both faces export was meant for |
//!
//! `load` holds libpti's constructor, which prepares the runtimes' interception when the library
//! is loaded.
//!
//! C enum parameters are received as the `u32` newtypes of [`raw`] and converted with checks,
//! never as Rust enums: an unknown value from C must be an error code, not undefined behaviour.
#![allow(non_camel_case_types, non_snake_case)]

/// Defines exports that call a function of this crate with their arguments and do nothing else:
/// the `libpti_<name>` aliases (`symbols`) and the Intel face's functions that are libpti's
/// unchanged (`intel::view`). `$what` ends each export's doc line.
macro_rules! forwarding_exports {
    ($what:literal; $($module:ident::$name:ident as $alias:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`, ", $what, ".")]
        ///
        /// # Safety
        /// As for the function it names.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $alias($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: the caller's contract is the named function's, whose arguments these are.
            unsafe { crate::$module::$name($($arg),*) }
        }
    )*};
}

mod boundary;
pub mod callback;
mod caller;
pub mod ext;
pub mod intel;
pub mod itt;
pub mod layer;
mod load;
pub mod pti;
pub mod raw;
pub mod symbols;
pub mod version;
pub mod view;
pub mod xpti;
