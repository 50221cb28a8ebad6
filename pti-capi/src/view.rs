//! `pti_view.h`: the view API. The header holds the record layouts and enums of
//! `pti-core/src/view/abi.rs` (the core writes the records) followed by the functions here.

use core::ffi::{c_char, c_uchar};
use std::sync::Arc;

use pti_core::view::abi::pti_view_kind;
use pti_core::view::{self, ApiView, Buffer, BufferCallbacks, FilledBuffer};
use pti_core::{ApiGroup, Error, clock, ids, session};

use crate::boundary::{export, out_ptr};
use crate::intel::faces::{Face, sets_buffer_callbacks};
use crate::pti::pti_result;
use crate::raw::{
    RawApiClass, RawApiGroup, RawExternalKind, RawMemcpyType, RawMemoryType, RawOverheadKind,
    RawViewKind,
};

pub use pti_core::view::abi::{
    pti_api_class, pti_api_group_id, pti_backend_ctx_t, pti_view_external_kind,
    pti_view_memcpy_type, pti_view_memory_type, pti_view_overhead_kind, pti_view_record_base,
};

/// Called when libpti needs a buffer for records: store its address in `*buffer_ptr` and its
/// size in `*buffer_size_in_bytes`, or leave NULL (the records that needed it are dropped and
/// counted). The memory stays the tool's; libpti writes records into it until it hands it back
/// through the completed callback. Called on any thread; traced calls made in it are not traced.
pub type pti_fptr_buffer_requested =
    Option<unsafe extern "C" fn(buffer_ptr: *mut *mut c_uchar, buffer_size_in_bytes: *mut usize)>;

/// Hands a buffer back: `buffer` as lent, its size, and `used_bytes`, the bytes holding
/// records (pass them to ptiViewGetNextRecord). Called on the thread that filled the buffer, on
/// one calling ptiFlushAllViews, or at process exit; libpti never frees buffers.
pub type pti_fptr_buffer_completed = Option<
    unsafe extern "C" fn(buffer: *mut c_uchar, buffer_size_in_bytes: usize, used_bytes: usize),
>;

/// A tool's clock: nanoseconds on a timeline of its choosing.
pub type pti_fptr_get_timestamp = Option<unsafe extern "C" fn() -> u64>;

/// Converts a group from C, accepting only the traced groups (1..=3).
pub(crate) fn traced_group(raw: RawApiGroup) -> Result<ApiGroup, Error> {
    ApiGroup::from_raw(raw.0).ok_or(Error::BadArgument(
        "API group must be LEVELZERO, OPENCL or SYCL",
    ))
}

fn kind_from_raw(raw: RawViewKind) -> Result<pti_view_kind, Error> {
    pti_view_kind::from_raw(raw.0).ok_or(Error::BadArgument("unknown view kind"))
}

/// The tool's C buffer callbacks.
struct CBuffers {
    requested: unsafe extern "C" fn(*mut *mut c_uchar, *mut usize),
    completed: unsafe extern "C" fn(*mut c_uchar, usize, usize),
}

impl BufferCallbacks for CBuffers {
    fn request(&self) -> Option<Buffer> {
        let (mut ptr, mut len) = (core::ptr::null_mut(), 0usize);
        // SAFETY: the tool registered this function with this signature; both out-pointers are
        // valid locals.
        unsafe { (self.requested)(&mut ptr, &mut len) };
        // SAFETY: the C contract: a buffer handed out is the tool's memory of `len` bytes,
        // untouched by it until completed.
        unsafe { Buffer::from_raw(ptr, len) }
    }

    fn complete(&self, filled: FilledBuffer) {
        let used = filled.used();
        let buffer = filled.into_buffer();
        // SAFETY: the tool registered this function with this signature; the buffer is the one
        // it lent, handed back once.
        unsafe { (self.completed)(buffer.as_ptr(), buffer.len(), used) };
    }
}

/// Sets the buffer callbacks. Call it before enabling a view; both must be non-NULL
/// (PTI_ERROR_BAD_ARGUMENT otherwise). Setting them again replaces them for buffers requested
/// and handed back from then on. Registers a process-exit hook that hands back every buffer.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewSetCallbacks(
    fptr_bufferRequested: pti_fptr_buffer_requested,
    fptr_bufferCompleted: pti_fptr_buffer_completed,
) -> pti_result {
    crate::caller::pass_caller!(2, crate::caller::view_set_callbacks)
}

/// libpti's `ptiViewSetCallbacks`, documented above.
pub(crate) extern "C" fn own_ptiViewSetCallbacks(
    fptr_bufferRequested: pti_fptr_buffer_requested,
    fptr_bufferCompleted: pti_fptr_buffer_completed,
) -> pti_result {
    set_callbacks(Face::Proposal, fptr_bufferRequested, fptr_bufferCompleted)
}

/// ptiViewSetCallbacks of either face: sets the engine's one pair of buffer callbacks and notes
/// which face set them.
pub(crate) fn set_callbacks(
    face: Face,
    fptr_bufferRequested: pti_fptr_buffer_requested,
    fptr_bufferCompleted: pti_fptr_buffer_completed,
) -> pti_result {
    export(|| {
        let requested =
            fptr_bufferRequested.ok_or(Error::BadArgument("buffer_requested must not be NULL"))?;
        let completed =
            fptr_bufferCompleted.ok_or(Error::BadArgument("buffer_completed must not be NULL"))?;
        session::set_buffer_callbacks(Arc::new(CBuffers {
            requested,
            completed,
        }));
        sets_buffer_callbacks(face);
        Ok(())
    })
}

/// Enables a view: its records are written from now on. Returns PTI_ERROR_NO_CALLBACKS_SET
/// before ptiViewSetCallbacks, PTI_ERROR_BAD_ARGUMENT for INVALID, RESERVED and unknown kinds.
/// Device views are accepted and filled by the backends that observe device work;
/// Kernels that run on a CPU device (PoCL, Intel's CPU runtime, a Level Zero CPU device) are
/// recorded in PTI_VIEW_DEVICE_CPU_KERNEL, those on other devices in PTI_VIEW_DEVICE_GPU_KERNEL;
/// PTI_VIEW_COMMUNICATION is accepted but never produced.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewEnable(view_kind: RawViewKind) -> pti_result {
    crate::caller::pass_caller!(1, crate::caller::view_enable)
}

/// libpti's `ptiViewEnable`, documented above.
pub(crate) extern "C" fn own_ptiViewEnable(view_kind: RawViewKind) -> pti_result {
    export(|| session::enable_view(kind_from_raw(view_kind)?))
}

/// Disables a view. Records already written stay in their buffers until a flush.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewDisable(view_kind: RawViewKind) -> pti_result {
    export(|| session::disable_view(kind_from_raw(view_kind)?))
}

/// PTI_SUCCESS if Level Zero device activity can be collected from whenever the tool enables it,
/// whatever the environment was at the program's first zeInit: the Level Zero loader can load its
/// tracing layer at run time (it exports zelEnableTracingLayer; loader 1.32 does, 1.8.12 does
/// not). Otherwise PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED: Level Zero is then traced only if
/// ZE_ENABLE_TRACING_LAYER=1 was set before the first zeInit, which libpti does when it is loaded
/// before the program uses Level Zero.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewGPULocalAvailable() -> pti_result {
    export(session::gpu_local_available)
}

/// Hands every finished record of every thread (exited threads included) to the completed
/// callback before returning; buffers without records stay with their threads. Records of device
/// work not finished yet come with a later flush. May be called from any thread, also from a
/// buffer or subscriber callback.
#[unsafe(no_mangle)]
pub extern "C" fn ptiFlushAllViews() -> pti_result {
    export(session::flush)
}

/// Walks the records of a buffer: with `*record` NULL, stores the first record in `*record`;
/// otherwise the record after `*record`. Returns PTI_STATUS_END_OF_BUFFER (leaving `*record`)
/// when no record follows, or the next one is of kind PTI_VIEW_INVALID (a zeroed tail), and
/// PTI_ERROR_BAD_ARGUMENT for NULL pointers, a `*record` outside the buffer or not 8-aligned in
/// it, or bytes that are not records. A `*record` inside the buffer that was not handed out by an
/// earlier call is not detected (that would take a walk from the start): the walk goes on from
/// whatever record it finds there. Never reads outside `[buffer, buffer + valid_bytes)`.
///
/// # Safety
/// `buffer` must be readable for `valid_bytes` bytes; `record` must be NULL or point to a
/// `pti_view_record_base*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetNextRecord(
    buffer: *mut u8,
    valid_bytes: usize,
    record: *mut *mut pti_view_record_base,
) -> pti_result {
    // The walk of a well-formed buffer first, which cannot panic, builds no error and touches
    // nothing of libpti's (so it needs neither the panic boundary nor the load-time work): a tool
    // calls this once per record, and their frames (kept for the full walk, below) cost about a
    // fifth of each call.
    if !buffer.is_null() && !record.is_null() && record.is_aligned() {
        // SAFETY: `record` is non-NULL and aligned (checked) and points to a record pointer.
        let current = unsafe { *record };
        let current = match current.is_null() {
            true => None,
            false => Some((current as usize).wrapping_sub(buffer as usize)),
        };
        // SAFETY: the caller promises `buffer` is readable for `valid_bytes` bytes, and the
        // records' kinds are initialised (libpti wrote them); the walk reads nothing else.
        let quick = unsafe { view::abi::records::next_record_quick(buffer, valid_bytes, current) };
        if let Some(at) = quick {
            // SAFETY: `at` lies within the buffer; `record` as above.
            unsafe { record.write(buffer.add(at) as *mut pti_view_record_base) };
            return pti_result::PTI_SUCCESS;
        }
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { next_record_checked(buffer, valid_bytes, record) }
}

/// [`ptiViewGetNextRecord`] where the quick walk found no record: what is wrong, or that the
/// records end.
///
/// # Safety
/// As [`ptiViewGetNextRecord`].
#[cold]
#[inline(never)]
unsafe fn next_record_checked(
    buffer: *mut u8,
    valid_bytes: usize,
    record: *mut *mut pti_view_record_base,
) -> pti_result {
    export(|| {
        let out = out_ptr(record, "record must not be NULL")?;
        if buffer.is_null() {
            return Err(Error::BadArgument("buffer must not be NULL"));
        }
        // SAFETY: `out` is non-NULL and aligned (checked) and points to a record pointer.
        let current = unsafe { *out.as_ptr() };
        let current = match current.is_null() {
            true => None,
            false => Some((current as usize).wrapping_sub(buffer as usize)),
        };
        // SAFETY: the caller promises `buffer` is readable for `valid_bytes` bytes, and the
        // records' kinds are initialised (libpti wrote them); the walk reads nothing else.
        match unsafe { view::next_record_raw(buffer, valid_bytes, current) }? {
            // SAFETY: `at` lies within the buffer.
            Some(at) => unsafe { out.write(buffer.add(at) as *mut pti_view_record_base) },
            None => return Ok(pti_result::PTI_STATUS_END_OF_BUFFER),
        }
        Ok(pti_result::PTI_SUCCESS)
    })
}

/// Pushes an external correlation ID onto this thread's stack of its kind: every traced call
/// made while it is pushed gets a PTI_VIEW_EXTERNAL_CORRELATION record with it (when that view
/// is enabled). PTI_ERROR_BAD_ARGUMENT for INVALID or unknown kinds.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewPushExternalCorrelationId(
    external_kind: RawExternalKind,
    external_id: u64,
) -> pti_result {
    export(|| {
        let kind = pti_view_external_kind::pushable_from_raw(external_kind.0)
            .ok_or(Error::BadArgument("not a pushable external kind"))?;
        view::push_external_correlation_id(kind, external_id)
    })
}

/// Pops the top ID of this thread's stack of `external_kind` into `*p_external_id` (if not
/// NULL). PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY when the stack is empty.
///
/// # Safety
/// `p_external_id` must be NULL or point to writable storage for one `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewPopExternalCorrelationId(
    external_kind: RawExternalKind,
    p_external_id: *mut u64,
) -> pti_result {
    export(|| {
        let out = match p_external_id.is_null() {
            true => None,
            false => Some(out_ptr(p_external_id, "p_external_id is misaligned")?),
        };
        let kind = pti_view_external_kind::pushable_from_raw(external_kind.0)
            .ok_or(Error::BadArgument("not a pushable external kind"))?;
        let id = view::pop_external_correlation_id(kind)?;
        if let Some(out) = out {
            // SAFETY: checked non-NULL and aligned; the caller passes storage for one uint64_t.
            unsafe { out.write(id) };
        }
        Ok(())
    })
}

/// The name of an overhead kind ("TIME", "BUFFER_FLUSH", ...); "INVALID" for unknown values.
/// A static string.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewOverheadKindToString(r#type: RawOverheadKind) -> *const c_char {
    crate::caller::pass_caller!(1, crate::caller::view_overhead_kind_to_string)
}

/// libpti's `ptiViewOverheadKindToString`, documented above.
pub(crate) extern "C" fn own_ptiViewOverheadKindToString(r#type: RawOverheadKind) -> *const c_char {
    use pti_view_overhead_kind::*;
    export(|| {
        match pti_view_overhead_kind::from_raw(r#type.0) {
            Some(PTI_VIEW_OVERHEAD_KIND_UNKNOWN) => c"UNKNOWN",
            Some(PTI_VIEW_OVERHEAD_KIND_RESOURCE) => c"RESOURCE",
            Some(PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH) => c"BUFFER_FLUSH",
            Some(PTI_VIEW_OVERHEAD_KIND_DRIVER) => c"DRIVER",
            Some(PTI_VIEW_OVERHEAD_KIND_TIME) => c"TIME",
            Some(PTI_VIEW_OVERHEAD_KIND_INVALID) | None => c"INVALID",
        }
        .as_ptr()
    })
}

/// The name of a memory type ("MEMORY", "HOST", "DEVICE", "SHARED"); "INVALID" for unknown
/// values. A static string.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewMemoryTypeToString(r#type: RawMemoryType) -> *const c_char {
    crate::caller::pass_caller!(1, crate::caller::view_memory_type_to_string)
}

/// libpti's `ptiViewMemoryTypeToString`, documented above.
pub(crate) extern "C" fn own_ptiViewMemoryTypeToString(r#type: RawMemoryType) -> *const c_char {
    use pti_view_memory_type::*;
    export(|| {
        match pti_view_memory_type::from_raw(r#type.0) {
            Some(PTI_VIEW_MEMORY_TYPE_MEMORY) => c"MEMORY",
            Some(PTI_VIEW_MEMORY_TYPE_HOST) => c"HOST",
            Some(PTI_VIEW_MEMORY_TYPE_DEVICE) => c"DEVICE",
            Some(PTI_VIEW_MEMORY_TYPE_SHARED) => c"SHARED",
            None => c"INVALID",
        }
        .as_ptr()
    })
}

const MEMCPY_NAMES: [&core::ffi::CStr; 16] = [
    c"M2M", c"M2H", c"M2D", c"M2S", c"H2M", c"H2H", c"H2D", c"H2S", c"D2M", c"D2H", c"D2D", c"D2S",
    c"S2M", c"S2H", c"S2D", c"S2S",
];

/// The name of a copy direction ("H2D", "D2H", ...); "INVALID" for unknown values. A static
/// string.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewMemcpyTypeToString(r#type: RawMemcpyType) -> *const c_char {
    export(|| {
        pti_view_memcpy_type::from_raw(r#type.0)
            .map_or(c"INVALID", |t| MEMCPY_NAMES[t as usize])
            .as_ptr()
    })
}

/// The current time on the clock of every record: the tool's timestamp callback if set, else
/// CLOCK_MONOTONIC_RAW in nanoseconds.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewGetTimestamp() -> u64 {
    crate::caller::pass_caller!(0, crate::caller::view_get_timestamp)
}

/// libpti's `ptiViewGetTimestamp`, documented above.
pub(crate) extern "C" fn own_ptiViewGetTimestamp() -> u64 {
    export(clock::now)
}

/// Makes `fptr_timestampRequested` the clock of every timestamp libpti writes from now on
/// (records already written keep theirs; a record's timestamps always come from one clock). Set
/// it before enabling views. PTI_ERROR_BAD_ARGUMENT for NULL.
///
/// Called from code built for Intel's PTI (an object that links `libpti_view.so.1`), this
/// name of `libpti.so` behaves as Intel's function (docs/compatibility.md, "Both faces in one
/// process"; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewSetTimestampCallback(
    fptr_timestampRequested: pti_fptr_get_timestamp,
) -> pti_result {
    crate::caller::pass_caller!(1, crate::caller::view_set_timestamp_callback)
}

/// libpti's `ptiViewSetTimestampCallback`, documented above.
pub(crate) extern "C" fn own_ptiViewSetTimestampCallback(
    fptr_timestampRequested: pti_fptr_get_timestamp,
) -> pti_result {
    export(|| {
        let f = fptr_timestampRequested.ok_or(Error::BadArgument(
            "the timestamp callback must not be NULL",
        ))?;
        // SAFETY: the tool registered a function without arguments returning uint64_t, callable
        // from any thread.
        clock::set_timestamp_source(Box::new(move || unsafe { f() }));
        Ok(())
    })
}

/// The name of function `unique_id` of group `type`, as a static NUL-terminated string.
///
/// Returns PTI_ERROR_BAD_ARGUMENT if `name` is NULL or `type` is not LEVELZERO, OPENCL or SYCL;
/// PTI_ERROR_BAD_API_ID if the ID names no function of the group. `*name` is written only on
/// success; the string lives as long as the library is loaded. Thread-safe.
///
/// # Safety
/// `name` must be NULL or point to writable storage for one `const char*`.
///
/// Called from code built for Intel's PTI, this name of `libpti.so` behaves as Intel's function
/// (Intel's Level Zero numbers; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ptiViewGetApiIdName(
    r#type: RawApiGroup,
    unique_id: u32,
    name: *mut *const c_char,
) -> pti_result {
    crate::caller::pass_caller!(3, crate::caller::view_get_api_id_name)
}

/// libpti's `ptiViewGetApiIdName`, documented above.
///
/// # Safety
/// As [`ptiViewGetApiIdName`].
pub(crate) unsafe extern "C" fn own_ptiViewGetApiIdName(
    r#type: RawApiGroup,
    unique_id: u32,
    name: *mut *const c_char,
) -> pti_result {
    export(|| {
        let out = out_ptr(name, "name must not be NULL")?;
        let group = traced_group(r#type)?;
        let found = ids::name(group, unique_id).ok_or(Error::BadApiId {
            group: r#type.0,
            id: unique_id,
        })?;
        // SAFETY: `out` is non-NULL and aligned (checked), and the caller passes storage for one
        // `const char*`.
        unsafe { out.write(found.as_ptr()) };
        Ok(())
    })
}

fn api_group(raw: RawApiGroup) -> Result<pti_api_group_id, Error> {
    pti_api_group_id::from_raw(raw.0).ok_or(Error::BadArgument("unknown API group"))
}

fn class_from_raw(raw: RawApiClass) -> Result<pti_api_class, Error> {
    pti_api_class::from_raw(raw.0).ok_or(Error::BadArgument("unknown API class"))
}

/// Records (`enable` != 0) or stops recording one driver function in PTI_VIEW_DRIVER_API.
/// `api_group_id`: LEVELZERO, OPENCL, or ALL (every driver group whose table has the ID).
///
/// Every function is recorded until the first per-function or per-class call for a group; that
/// call turns every function of the group off and then applies its change, so
/// `ptiViewEnableDriverApi(1, group, id)` records only `id` (and what later calls add).
/// PTI_ERROR_BAD_ARGUMENT for another group, PTI_ERROR_BAD_API_ID for an unknown ID.
///
/// Called from code built for Intel's PTI, this name of `libpti.so` behaves as Intel's function
/// (Intel's Level Zero numbers; `crate::caller`).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewEnableDriverApi(
    enable: u32,
    api_group_id: RawApiGroup,
    api_id: u32,
) -> pti_result {
    crate::caller::pass_caller!(3, crate::caller::view_enable_driver_api)
}

/// libpti's `ptiViewEnableDriverApi`, documented above.
pub(crate) extern "C" fn own_ptiViewEnableDriverApi(
    enable: u32,
    api_group_id: RawApiGroup,
    api_id: u32,
) -> pti_result {
    export(|| {
        session::enable_api(
            ApiView::Driver,
            enable != 0,
            api_group(api_group_id)?,
            api_id,
        )
    })
}

/// As ptiViewEnableDriverApi, for SYCL functions in PTI_VIEW_RUNTIME_API (`api_group_id`: SYCL
/// or ALL).
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewEnableRuntimeApi(
    enable: u32,
    api_group_id: RawApiGroup,
    api_id: u32,
) -> pti_result {
    export(|| {
        session::enable_api(
            ApiView::Runtime,
            enable != 0,
            api_group(api_group_id)?,
            api_id,
        )
    })
}

/// Records (`enable` != 0) or stops recording a class of driver functions (GPU_OPERATION_CORE,
/// HOST_OPERATION_SYNCHRONIZATION or ALL) in PTI_VIEW_DRIVER_API, for LEVELZERO, OPENCL or
/// ALL; like ptiViewEnableDriverApi, the first such call makes the group's filter granular.
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewEnableDriverApiClass(
    enable: u32,
    api_class: RawApiClass,
    group: RawApiGroup,
) -> pti_result {
    export(|| {
        session::enable_api_class(
            ApiView::Driver,
            enable != 0,
            class_from_raw(api_class)?,
            api_group(group)?,
        )
    })
}

/// As ptiViewEnableDriverApiClass, for SYCL functions in PTI_VIEW_RUNTIME_API (`group`: SYCL or
/// ALL).
#[unsafe(no_mangle)]
pub extern "C" fn ptiViewEnableRuntimeApiClass(
    enable: u32,
    api_class: RawApiClass,
    group: RawApiGroup,
) -> pti_result {
    export(|| {
        session::enable_api_class(
            ApiView::Runtime,
            enable != 0,
            class_from_raw(api_class)?,
            api_group(group)?,
        )
    })
}

#[cfg(test)]
mod tests {
    use core::ffi::CStr;
    use core::ptr;

    use super::*;

    fn name_of(group: u32, id: u32) -> (pti_result, Option<String>) {
        let mut name: *const c_char = ptr::null();
        // SAFETY: `name` is a valid out-parameter.
        let r = unsafe { ptiViewGetApiIdName(RawApiGroup(group), id, &mut name) };
        // SAFETY: on success `name` points at a static NUL-terminated string.
        (
            r,
            (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_str().unwrap().to_owned()),
        )
    }

    #[test]
    fn every_id_of_every_table_has_its_name() {
        for group in ApiGroup::ALL {
            let mut n = 0;
            for (id, expected) in ids::iter(group) {
                assert_eq!(
                    name_of(group as u32, id),
                    (
                        pti_result::PTI_SUCCESS,
                        Some(expected.to_str().unwrap().into())
                    )
                );
                n += 1;
            }
            assert!(n > 190, "group {group:?} has only {n} ids");
        }
    }

    #[test]
    fn unknown_ids_groups_and_null_are_rejected_without_writing() {
        assert_eq!(name_of(1, 0), (pti_result::PTI_ERROR_BAD_API_ID, None));
        assert_eq!(
            name_of(3, 36),
            (pti_result::PTI_ERROR_BAD_API_ID, None),
            "a retired UR id"
        );
        assert_eq!(
            name_of(2, 100_000),
            (pti_result::PTI_ERROR_BAD_API_ID, None)
        );
        for group in [0, 4, 5, 0x7fff_ffff, 77] {
            assert_eq!(
                name_of(group, 1),
                (pti_result::PTI_ERROR_BAD_ARGUMENT, None)
            );
        }
        // SAFETY: NULL is allowed, and refused.
        let r = unsafe { ptiViewGetApiIdName(RawApiGroup(1), 1, ptr::null_mut()) };
        assert_eq!(r, pti_result::PTI_ERROR_BAD_ARGUMENT);
    }

    /// Bytes that end exactly where a PROT_NONE page begins: reading past them faults.
    struct Guarded {
        map: *mut u8,
        page: usize,
    }

    impl Guarded {
        fn new() -> Self {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            // SAFETY: an anonymous private mapping of two pages; the second is made inaccessible.
            let map = unsafe {
                let m = libc::mmap(
                    ptr::null_mut(),
                    2 * page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(m, libc::MAP_FAILED);
                assert_eq!(
                    libc::mprotect((m as *mut u8).add(page).cast(), page, libc::PROT_NONE),
                    0
                );
                m as *mut u8
            };
            Guarded { map, page }
        }

        /// Copies `bytes` so that they end at the guard page; returns where they start.
        fn place(&self, bytes: &[u8]) -> *mut u8 {
            assert!(bytes.len() <= self.page);
            // SAFETY: the destination lies within the first (writable) page.
            unsafe {
                let start = self.map.add(self.page - bytes.len());
                ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
                start
            }
        }
    }

    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: unmapping the mapping made in `new`.
            unsafe { libc::munmap(self.map.cast(), 2 * self.page) };
        }
    }

    proptest::proptest! {
        /// ptiViewGetNextRecord on arbitrary bytes, lengths and record pointers (inside, outside,
        /// misaligned): never reads past the valid bytes (they end at a guard page), answers
        /// BAD_ARGUMENT or END_OF_BUFFER for garbage, and a record it returns lies within.
        #[test]
        fn get_next_record_never_reads_out_of_bounds(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            kinds in proptest::collection::vec((0usize..600, 0u32..14), 0..6),
            pointer in proptest::prelude::any::<Option<i64>>(),
        ) {
            let mut bytes = bytes;
            // Sprinkle valid kinds so that walks get somewhere.
            for (at, kind) in kinds {
                if at + 4 <= bytes.len() {
                    bytes[at..at + 4].copy_from_slice(&kind.to_ne_bytes());
                }
            }
            let guarded = Guarded::new();
            let buffer = guarded.place(&bytes);
            let mut record = match pointer {
                None => ptr::null_mut(),
                Some(off) => (buffer as isize).wrapping_add(off as isize % 1024) as *mut pti_view_record_base,
            };
            for _ in 0..64 {
                let before = record;
                // SAFETY: `buffer` is readable for `bytes.len()` bytes; `record` is a valid
                // out-parameter.
                let r = unsafe { ptiViewGetNextRecord(buffer, bytes.len(), &mut record) };
                match r {
                    pti_result::PTI_SUCCESS => {
                        let at = record as usize - buffer as usize;
                        // SAFETY: the record lies within the bytes (asserted next).
                        let kind = unsafe { record.cast::<u32>().read_unaligned() };
                        let size = pti_view_kind::from_raw(kind).and_then(|k| k.record_size());
                        proptest::prop_assert!(size.is_some_and(|s| at + s <= bytes.len()));
                    }
                    pti_result::PTI_STATUS_END_OF_BUFFER | pti_result::PTI_ERROR_BAD_ARGUMENT => {
                        proptest::prop_assert_eq!(record, before, "record changed on {:?}", r);
                        break;
                    }
                    other => proptest::prop_assert!(false, "unexpected {:?}", other),
                }
            }
        }
    }

    #[test]
    fn to_string_helpers_name_every_value_and_refuse_unknown_ones() {
        let s = |p: *const c_char| {
            // SAFETY: the helpers return static NUL-terminated strings.
            unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned()
        };
        assert_eq!(s(ptiViewMemcpyTypeToString(RawMemcpyType(6))), "H2D");
        assert_eq!(s(ptiViewMemcpyTypeToString(RawMemcpyType(16))), "INVALID");
        assert_eq!(s(ptiViewMemoryTypeToString(RawMemoryType(2))), "DEVICE");
        assert_eq!(s(ptiViewMemoryTypeToString(RawMemoryType(9))), "INVALID");
        assert_eq!(s(ptiViewOverheadKindToString(RawOverheadKind(5))), "TIME");
        assert_eq!(
            s(ptiViewOverheadKindToString(RawOverheadKind(u32::MAX))),
            "INVALID"
        );
    }
}
