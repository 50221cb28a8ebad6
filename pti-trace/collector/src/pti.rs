//! libpti's public C API, as the collector sees it: the functions of `pti_view.h`,
//! `pti_callback.h` and `pti_ext.h` it calls, looked up by name in the `libpti.so` loaded before
//! it (the collector does not link libpti, so it builds without it and uses exactly the ABI
//! every C tool uses). It looks up `libpti_<name>`, the name libpti's headers bind tools to and
//! no other library exports, so another library with the same C names (Intel's PTI, or one
//! compatible with it) cannot answer in libpti's place.

#![allow(non_snake_case)] // the C functions keep their names

use core::ffi::{CStr, c_char, c_void};

use crate::abi::{pti_api_group_id, pti_view_kind, pti_view_memcpy_type, pti_view_record_base};

/// `pti_result` (0 is PTI_SUCCESS).
pub(crate) type Result = u32;
pub(crate) const PTI_SUCCESS: Result = 0;

/// `pti_callback_domain` PTI_DOMAIN_PTI_CRITICAL_EVENT.
pub(crate) const DOMAIN_CRITICAL_EVENT: u32 = 3;

/// `pti_critical_event_callback_data`.
#[repr(C)]
pub(crate) struct CriticalEventData {
    pub(crate) event: Result,
    pub(crate) message: *const c_char,
}

pub(crate) type BufferRequested = unsafe extern "C" fn(*mut *mut u8, *mut usize);
pub(crate) type BufferCompleted = unsafe extern "C" fn(*mut u8, usize, usize);
pub(crate) type Callback = unsafe extern "C" fn(*mut c_void, u32, u32, u32, *mut c_void);

/// The functions the collector calls.
pub(crate) struct Pti {
    pub(crate) ptiViewSetCallbacks:
        unsafe extern "C" fn(BufferRequested, BufferCompleted) -> Result,
    pub(crate) ptiViewEnable: unsafe extern "C" fn(pti_view_kind) -> Result,
    pub(crate) ptiViewEnableDriverApi: unsafe extern "C" fn(u32, pti_api_group_id, u32) -> Result,
    pub(crate) ptiViewEnableRuntimeApi: unsafe extern "C" fn(u32, pti_api_group_id, u32) -> Result,
    pub(crate) ptiFlushAllViews: unsafe extern "C" fn() -> Result,
    pub(crate) ptiViewGetNextRecord:
        unsafe extern "C" fn(*mut u8, usize, *mut *mut pti_view_record_base) -> Result,
    pub(crate) ptiViewGetApiIdName:
        unsafe extern "C" fn(pti_api_group_id, u32, *mut *const c_char) -> Result,
    pub(crate) ptiViewMemcpyTypeToString:
        unsafe extern "C" fn(pti_view_memcpy_type) -> *const c_char,
    pub(crate) ptiViewGetDroppedRecordCount:
        unsafe extern "C" fn(pti_view_kind, *mut u64) -> Result,
    pub(crate) ptiViewGetPendingDeviceRecordCount: unsafe extern "C" fn(*mut u64) -> Result,
    pub(crate) ptiCallbackSubscribe:
        unsafe extern "C" fn(*mut *mut c_void, Callback, *mut c_void) -> Result,
    pub(crate) ptiCallbackEnableDomain: unsafe extern "C" fn(u32, *mut c_void, u32) -> Result,
    pub(crate) ptiResultTypeToString: unsafe extern "C" fn(Result) -> *const c_char,
    pub(crate) ptiCallbackGetCriticalEventCount: unsafe extern "C" fn(Result, *mut u64) -> Result,
}

/// The function `name` exported by an object already loaded, typed `F` (a function pointer of
/// the signature libpti's header declares for it).
fn lookup<F: Copy>(name: &CStr) -> Option<F> {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    // SAFETY: RTLD_DEFAULT and a NUL-terminated name.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    // SAFETY: `F` is the function-pointer type of libpti's declaration of `name` (sizes are
    // checked above); a non-NULL address is that function.
    (!address.is_null()).then(|| unsafe { core::mem::transmute_copy::<*mut c_void, F>(&address) })
}

impl Pti {
    /// Looks the functions up among the objects already loaded; names the first one missing.
    pub(crate) fn resolve() -> core::result::Result<Pti, &'static str> {
        macro_rules! function {
            ($name:ident) => {
                lookup(
                    CStr::from_bytes_with_nul(
                        concat!("libpti_", stringify!($name), "\0").as_bytes(),
                    )
                    .unwrap(),
                )
                .ok_or(stringify!($name))?
            };
        }
        Ok(Pti {
            ptiViewSetCallbacks: function!(ptiViewSetCallbacks),
            ptiViewEnable: function!(ptiViewEnable),
            ptiViewEnableDriverApi: function!(ptiViewEnableDriverApi),
            ptiViewEnableRuntimeApi: function!(ptiViewEnableRuntimeApi),
            ptiFlushAllViews: function!(ptiFlushAllViews),
            ptiViewGetNextRecord: function!(ptiViewGetNextRecord),
            ptiViewGetApiIdName: function!(ptiViewGetApiIdName),
            ptiViewMemcpyTypeToString: function!(ptiViewMemcpyTypeToString),
            ptiViewGetDroppedRecordCount: function!(ptiViewGetDroppedRecordCount),
            ptiViewGetPendingDeviceRecordCount: function!(ptiViewGetPendingDeviceRecordCount),
            ptiCallbackSubscribe: function!(ptiCallbackSubscribe),
            ptiCallbackEnableDomain: function!(ptiCallbackEnableDomain),
            ptiResultTypeToString: function!(ptiResultTypeToString),
            ptiCallbackGetCriticalEventCount: function!(ptiCallbackGetCriticalEventCount),
        })
    }

    /// The name of API `id` of `group` (None for an ID libpti does not name).
    pub(crate) fn api_name(&self, group: pti_api_group_id, id: u32) -> Option<&'static str> {
        let mut name: *const c_char = core::ptr::null();
        // SAFETY: a writable pointer; libpti writes a static string on success.
        let ok = unsafe { (self.ptiViewGetApiIdName)(group, id, &mut name) } == PTI_SUCCESS;
        // SAFETY: libpti's names are NUL-terminated and live as long as the library.
        (ok && !name.is_null())
            .then(|| unsafe { CStr::from_ptr(name) }.to_str().ok())
            .flatten()
    }

    /// How many critical events libpti raised in the process, whether delivered or not.
    pub(crate) fn critical_events(&self) -> u64 {
        (0..400)
            .map(|code| {
                let mut n = 0u64;
                // SAFETY: a code (unknown ones are refused) and a writable count.
                let ok =
                    unsafe { (self.ptiCallbackGetCriticalEventCount)(code, &mut n) } == PTI_SUCCESS;
                if ok { n } else { 0 }
            })
            .sum()
    }

    /// A result code's name.
    pub(crate) fn result_name(&self, result: Result) -> String {
        // SAFETY: libpti returns a static string for every value.
        let name = unsafe { (self.ptiResultTypeToString)(result) };
        if name.is_null() {
            format!("{result}")
        } else {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        }
    }
}
