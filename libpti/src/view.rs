//! The View API (`pti_view.h`): buffered records of calls and device work, delivered to a
//! function in batches ([`Records`]), each record a typed [`Record`] over libpti's C layout
//! (`pti_abi::records`, the walk libpti's own buffers use).
//!
//! libpti has one pair of buffer callbacks per process, so at most one [`Views`] lives at a
//! time: a second [`Views::start`] fails with `PTI_ERROR_BAD_ARGUMENT`. Nor does a [`Views`]
//! share the process with a tool that sets the buffer callbacks through the C API: libpti hands
//! a buffer back to the callbacks set when it completes, which free it as their own.
//! Buffers are allocated here (8-byte aligned, [`DEFAULT_BUFFER_SIZE`] unless
//! [`ViewsBuilder::buffer_size`] chose another size), handed to libpti, and freed once their
//! records were delivered. Records are delivered on the thread that completed the buffer (a
//! flush, or the thread whose buffer filled up). [`ViewsBuilder::on_first_buffer`] runs a
//! function once, at libpti's first request for a buffer.
//!
//! The rest are process-wide questions and settings of the View API: which functions the API
//! views record ([`record_driver_api`], [`record_runtime_api`]), names ([`api_name`],
//! [`memcpy_type_name`]), losses ([`dropped_count`], [`emitted_count`], [`pending_device_records`],
//! [`undelivered_count`]) and external
//! correlation IDs ([`push_external_correlation`], [`pop_external_correlation`]).

use core::ffi::CStr;
use core::sync::atomic::{AtomicPtr, Ordering};
use std::alloc::Layout;
use std::sync::Arc;

use parking_lot::Mutex;

use pti_abi::*;

use crate::error::{Error, check};
use crate::ffi;

/// The size of each buffer lent to libpti unless [`ViewsBuilder::buffer_size`] chose another:
/// 1 MiB.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 20;

/// The layout of a buffer of `size` bytes (`None` for 0 or a size no allocation can have).
fn buffer_layout(size: usize) -> Option<Layout> {
    if size == 0 {
        None
    } else {
        Layout::from_size_align(size, 8).ok()
    }
}

type Handler = dyn Fn(Records<'_>) + Send + Sync;
type FirstBuffer = Box<dyn FnOnce() + Send>;

/// What the live [`Views`] set up, reached by the buffer callbacks.
struct Active {
    /// The function records go to.
    handler: Box<Handler>,
    /// The size of the buffers lent.
    buffer_size: usize,
    /// The function to run at the first buffer request (a `Box<FirstBuffer>` from
    /// `Box::into_raw`), null once taken: taken by a swap, so that no lock is held there.
    first_buffer: AtomicPtr<FirstBuffer>,
}

impl Active {
    /// The first-buffer function, the first time only.
    fn take_first_buffer(&self) -> Option<FirstBuffer> {
        let raw = self
            .first_buffer
            .swap(core::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: a non-null value came from Box::into_raw, and the swap gave it to this caller
        // alone.
        (!raw.is_null()).then(|| *unsafe { Box::from_raw(raw) })
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        drop(self.take_first_buffer());
    }
}

/// The live [`Views`]' setup (`None` while none lives). The lock is held only to clone or
/// replace the `Arc`, never while tool code runs, and never across a `fork` (see
/// [`hold_across_fork`]).
static ACTIVE: Mutex<Option<Arc<Active>>> = Mutex::new(None);

/// The live [`Views`]' setup, if one lives.
fn active() -> Option<Arc<Active>> {
    ACTIVE.lock().clone()
}

/// Makes `fork` safe for [`ACTIVE`]: a child copies the lock as it was, and a lock another
/// thread held at the fork would stay held in the child forever (its next buffer would hang).
/// So the lock is taken before the fork and released after it, in the parent and in the child.
fn hold_across_fork() {
    extern "C" fn before() {
        core::mem::forget(ACTIVE.lock());
    }
    extern "C" fn after() {
        // SAFETY: `before` took the lock on this thread and forgot its guard; in the child,
        // this thread is the one that forked.
        unsafe { ACTIVE.force_unlock() };
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: three functions of the signature pthread_atfork expects, callable in a
        // fork's parent and child.
        unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after)) };
    });
}

pub use pti_abi::records::{Record, Records};

/// Enabled views, their records going to one function. Dropping it disables them, flushes (the
/// last records are delivered) and stops delivering.
///
/// ```no_run
/// use libpti::Views;
/// use libpti::abi::pti_view_kind::*;
///
/// let views = Views::builder(&[PTI_VIEW_DRIVER_API, PTI_VIEW_DEVICE_GPU_KERNEL])
///     .buffer_size(4 << 20)
///     .on_first_buffer(|| eprintln!("libpti asked for its first buffer"))
///     .start(|records| {
///         for record in records {
///             println!("{record:?}");
///         }
///     })?;
/// // ... the program's calls and device work are recorded ...
/// views.flush()?;
/// # Ok::<(), libpti::Error>(())
/// ```
pub struct Views {
    kinds: Vec<pti_view_kind>,
}

/// How a [`Views`] starts: its views, the size of the buffers it lends to libpti and a function
/// for libpti's first buffer request. Made by [`Views::builder`]; [`ViewsBuilder::start`] starts
/// it.
#[must_use = "a ViewsBuilder does nothing until started"]
pub struct ViewsBuilder {
    kinds: Vec<pti_view_kind>,
    buffer_size: usize,
    first_buffer: Option<FirstBuffer>,
}

impl ViewsBuilder {
    /// Lends libpti buffers of `bytes` bytes (default [`DEFAULT_BUFFER_SIZE`]). Larger buffers
    /// mean fewer, larger batches. libpti hands back unused a buffer too small for a record and
    /// drops that record (counted by [`dropped_count`]); with 0, no buffer is lent and every
    /// record is dropped.
    pub fn buffer_size(mut self, bytes: usize) -> Self {
        self.buffer_size = bytes;
        self
    }

    /// Runs `f` once, on the thread of libpti's first request for a buffer after
    /// [`ViewsBuilder::start`], before that buffer is handed out: the moment the first record of
    /// the views is written, usually inside the program's first traced call. A tool may, for
    /// instance, register its exit work with `atexit` there, so that it runs before the exit
    /// handlers of runtimes that started after the tool was set up. `f` runs inside libpti's
    /// buffer request: it must not flush, nor start or drop a [`Views`] (its traced calls are
    /// not traced). A panic in it is caught.
    pub fn on_first_buffer(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.first_buffer = Some(Box::new(f));
        self
    }

    /// Sets libpti's buffer callbacks to deliver records to `f` and enables the views. Fails
    /// with `PTI_ERROR_BAD_ARGUMENT` if another [`Views`] lives (one pair of buffer callbacks
    /// per process), or with libpti's answer to an enable (then nothing stays enabled).
    pub fn start(self, f: impl Fn(Records<'_>) + Send + Sync + 'static) -> Result<Views, Error> {
        hold_across_fork();
        {
            let mut active = ACTIVE.lock();
            if active.is_some() {
                return Err(Error::BadArgument);
            }
            *active = Some(Arc::new(Active {
                handler: Box::new(f),
                buffer_size: self.buffer_size,
                first_buffer: AtomicPtr::new(
                    self.first_buffer
                        .map_or(core::ptr::null_mut(), |f| Box::into_raw(Box::new(f))),
                ),
            }));
        }
        let mut views = Views { kinds: Vec::new() };
        // SAFETY: two functions of the C signatures, callable from any thread.
        check(unsafe { ffi::libpti_ptiViewSetCallbacks(Some(requested), Some(completed)) })?;
        for kind in self.kinds {
            views.enable(kind)?;
        }
        Ok(views)
    }
}

impl Views {
    /// Sets libpti's buffer callbacks to deliver records to `f` and enables `kinds`, with the
    /// default buffer size: `Views::builder(kinds).start(f)` (see [`ViewsBuilder::start`]).
    pub fn start(
        kinds: &[pti_view_kind],
        f: impl Fn(Records<'_>) + Send + Sync + 'static,
    ) -> Result<Views, Error> {
        Views::builder(kinds).start(f)
    }

    /// A [`ViewsBuilder`] that enables `kinds` (none: enable them later with
    /// [`Views::enable`]), with the default buffer size and no function at the first buffer.
    pub fn builder(kinds: &[pti_view_kind]) -> ViewsBuilder {
        ViewsBuilder {
            kinds: kinds.to_vec(),
            buffer_size: DEFAULT_BUFFER_SIZE,
            first_buffer: None,
        }
    }

    /// Enables one more view (`ptiViewEnable`); it is disabled with the others on drop. On an
    /// error (libpti refused the kind) the views enabled before stay enabled.
    pub fn enable(&mut self, kind: pti_view_kind) -> Result<(), Error> {
        // SAFETY: plain values.
        check(unsafe { ffi::libpti_ptiViewEnable(kind as u32) })?;
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        Ok(())
    }

    /// Disables a view (`ptiViewDisable`); its records already written are still delivered.
    pub fn disable(&mut self, kind: pti_view_kind) -> Result<(), Error> {
        // SAFETY: plain values.
        check(unsafe { ffi::libpti_ptiViewDisable(kind as u32) })?;
        self.kinds.retain(|k| *k != kind);
        Ok(())
    }

    /// The views enabled through this [`Views`].
    pub fn kinds(&self) -> &[pti_view_kind] {
        &self.kinds
    }

    /// Delivers every finished record now (`ptiFlushAllViews`).
    pub fn flush(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        check(unsafe { ffi::libpti_ptiFlushAllViews() })
    }
}

impl Drop for Views {
    fn drop(&mut self) {
        for kind in &self.kinds {
            // SAFETY: plain values.
            let _ = unsafe { ffi::libpti_ptiViewDisable(*kind as u32) };
        }
        let _ = self.flush();
        let active = ACTIVE.lock().take();
        // Dropped outside the lock: the handler's own drop is tool code.
        drop(active);
    }
}

/// Records (`on`) or stops recording function `api_id` of `group` (`PTI_API_GROUP_LEVELZERO`,
/// `PTI_API_GROUP_OPENCL`, or `PTI_API_GROUP_ALL` for every driver group whose table has the
/// ID) in the `PTI_VIEW_DRIVER_API` view (`ptiViewEnableDriverApi`), process-wide.
///
/// Every function of a group is recorded until the first such call for it; that call turns
/// every function of the group off and then applies its change, so `record_driver_api(group,
/// id, true)` records only `id` (and what later calls add). `PTI_ERROR_BAD_ARGUMENT` for
/// another group, `PTI_ERROR_BAD_API_ID` for an ID the group's table does not name.
pub fn record_driver_api(group: pti_api_group_id, api_id: u32, on: bool) -> Result<(), Error> {
    // SAFETY: plain values; libpti checks them.
    check(unsafe { ffi::libpti_ptiViewEnableDriverApi(u32::from(on), group as u32, api_id) })
}

/// As [`record_driver_api`], for SYCL runtime functions in the `PTI_VIEW_RUNTIME_API` view
/// (`ptiViewEnableRuntimeApi`; `group`: `PTI_API_GROUP_SYCL` or `PTI_API_GROUP_ALL`).
pub fn record_runtime_api(group: pti_api_group_id, api_id: u32, on: bool) -> Result<(), Error> {
    // SAFETY: plain values; libpti checks them.
    check(unsafe { ffi::libpti_ptiViewEnableRuntimeApi(u32::from(on), group as u32, api_id) })
}

/// The name of a copy direction (`"H2D"`, `"D2H"`, ...), as `ptiViewMemcpyTypeToString` gives
/// it.
pub fn memcpy_type_name(kind: pti_view_memcpy_type) -> &'static CStr {
    // SAFETY: a plain value; libpti returns a static string for every value.
    let name = unsafe { ffi::libpti_ptiViewMemcpyTypeToString(kind as u32) };
    if name.is_null() {
        c"INVALID"
    } else {
        // SAFETY: libpti's names are NUL-terminated and live as long as the library.
        unsafe { CStr::from_ptr(name) }
    }
}

/// Pushes `id` on this thread's stack of external correlation IDs of `kind`: the calls the thread
/// makes until it is popped get a `PTI_VIEW_EXTERNAL_CORRELATION` record naming it.
pub fn push_external_correlation(kind: pti_view_external_kind, id: u64) -> Result<(), Error> {
    // SAFETY: plain values.
    check(unsafe { ffi::libpti_ptiViewPushExternalCorrelationId(kind as u32, id) })
}

/// Pops the last ID pushed for `kind` on this thread (`PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY` when
/// none is).
pub fn pop_external_correlation(kind: pti_view_external_kind) -> Result<u64, Error> {
    let mut id = 0u64;
    // SAFETY: a writable ID.
    check(unsafe { ffi::libpti_ptiViewPopExternalCorrelationId(kind as u32, &mut id) })?;
    Ok(id)
}

/// The name of function `api_id` of API group `group` (`pti_api_group_id`), from the stable ID
/// tables; `None` for an ID they do not name.
pub fn api_name(group: pti_api_group_id, api_id: u32) -> Option<&'static CStr> {
    let mut name: *const core::ffi::c_char = core::ptr::null();
    // SAFETY: a writable pointer; libpti writes a static string on success.
    let ok = unsafe { ffi::libpti_ptiViewGetApiIdName(group as u32, api_id, &mut name) } == 0;
    // SAFETY: libpti's names are NUL-terminated and live as long as the library.
    (ok && !name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}

/// How many records of `kind` were lost for want of buffer space, in the whole process.
pub fn dropped_count(kind: pti_view_kind) -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiViewGetDroppedRecordCount(kind as u32, &mut n) })?;
    Ok(n)
}

/// How many records of `kind` libpti emitted in the whole process (written or dropped): once the
/// program's threads are quiet and a flush returned, this is the records delivered plus
/// [`dropped_count`].
pub fn emitted_count(kind: pti_view_kind) -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiViewGetEmittedRecordCount(kind as u32, &mut n) })?;
    Ok(n)
}

/// How many device records wait for their work to complete (delivered by a later flush).
pub fn pending_device_records() -> Result<u64, Error> {
    let mut n = 0u64;
    // SAFETY: a writable count.
    check(unsafe { ffi::libpti_ptiViewGetPendingDeviceRecordCount(&mut n) })?;
    Ok(n)
}

/// Pauses collection in the whole process (`ptiViewPause`): no call or command is recorded until
/// [`resume`]; views stay enabled, commands submitted before still get their records. Pauses do
/// not nest. The same switch as `PTI_START_PAUSED=1`.
pub fn pause() -> Result<(), Error> {
    // SAFETY: no arguments.
    check(unsafe { ffi::libpti_ptiViewPause() })
}

/// Resumes collection (`ptiViewResume`); see [`pause`].
pub fn resume() -> Result<(), Error> {
    // SAFETY: no arguments.
    check(unsafe { ffi::libpti_ptiViewResume() })
}

/// Whether collection is paused (`ptiViewIsPaused`).
pub fn is_paused() -> Result<bool, Error> {
    let mut paused = 0u32;
    // SAFETY: a writable flag.
    check(unsafe { ffi::libpti_ptiViewIsPaused(&mut paused) })?;
    Ok(paused != 0)
}

/// Now, in nanoseconds on the clock of the records' timestamps (`ptiViewGetTimestamp`), for a
/// tool that places its own events beside libpti's records.
pub fn timestamp() -> u64 {
    // SAFETY: no arguments.
    unsafe { ffi::libpti_ptiViewGetTimestamp() }
}

/// Records of buffers completed while no [`Views`] lived, freed undelivered.
static UNDELIVERED: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// How many records this crate freed undelivered, in the process: those of buffers libpti
/// completed while no [`Views`] lived. A dropped [`Views`] disables its views and flushes, but
/// device work still running then completes later, into a buffer nobody receives; this counts
/// those records (as libpti's [`dropped_count`] counts those it had no room for).
pub fn undelivered_count() -> u64 {
    UNDELIVERED.load(Ordering::Relaxed)
}

/// `buffer_requested`: runs the live [`Views`]' first-buffer function the first time, then
/// lends a new buffer of its size (none, and libpti counts the records it cannot write, if
/// memory is short or the size is 0).
unsafe extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize) {
    let active = active();
    if let Some(first) = active.as_ref().and_then(|a| a.take_first_buffer()) {
        // A panic must not unwind into libpti.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(first));
    }
    let wanted = active.map_or(DEFAULT_BUFFER_SIZE, |a| a.buffer_size);
    let memory = match buffer_layout(wanted) {
        // SAFETY: a layout of non-zero size.
        Some(layout) => unsafe { std::alloc::alloc(layout) },
        None => core::ptr::null_mut(),
    };
    // SAFETY: libpti passes two writable out-parameters.
    unsafe {
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { wanted };
    }
}

/// `buffer_completed`: delivers the buffer's records, then frees it.
unsafe extern "C" fn completed(buffer: *mut u8, size: usize, used: usize) {
    if buffer.is_null() {
        return;
    }
    // SAFETY: a buffer `requested` allocated, of `size` bytes, `used` of them filled by
    // libpti with records, unchanged while they are delivered.
    let records = unsafe { Records::new(buffer, used.min(size)) };
    if let Some(active) = active() {
        // A panic must not unwind into libpti.
        let _ =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (active.handler)(records)));
    } else {
        UNDELIVERED.fetch_add(records.count() as u64, Ordering::Relaxed);
    }
    if let Some(layout) = buffer_layout(size) {
        // SAFETY: `requested` allocated the buffer with the layout of the size it lent, the
        // `size` libpti hands back with it, once.
        unsafe { std::alloc::dealloc(buffer, layout) };
    }
}
