//! The view API: buffered records of API calls and device work, sharing correlation IDs with the
//! callbacks, in the layouts of the published PTI view API.
//!
//! - [`abi`]: record layouts and enums, as in `pti_view.h`;
//! - `buffer`: per-thread buffers lent by the tool, flushing, drop accounting;
//! - `records`: walking a buffer's records ([`next_record`], [`Records`]);
//! - `external`: external-correlation stacks;
//! - `emit`: the records the dispatch writes for a traced call;
//! - `device`: the records of device work, written by the backends;
//! - `loss`: what could not be recorded (the loss records, commands without a record kind);
//! - `annotation`: the records of the program's ITT annotations and of oneCCL's communication.
//!
//! This file holds the configuration: which views are enabled, and which functions the API
//! views record. As in PTI, a group records every function while its API view is enabled, until
//! the first per-function or per-class call for that group switches it to *granular* mode:
//! every function off, then that call's change applied.
//!
//! The configuration is the engine's alone: what enabling a view means for the backends (attach
//! Level Zero, report a runtime that started without libpti, harvest before a flush) is the
//! session's (`crate::session`), which is how tools change it.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use pti_core::view::{abi::*, Buffer, BufferCallbacks, FilledBuffer, Record};
//! use pti_core::{dispatch, ids, session, ApiGroup};
//!
//! struct Tool(Mutex<Vec<u32>>);
//! impl BufferCallbacks for Tool {
//!     fn request(&self) -> Option<Buffer> {
//!         Some(Buffer::from_boxed(vec![0u8; 4096].into_boxed_slice()))
//!     }
//!     fn complete(&self, filled: FilledBuffer) {
//!         for record in filled.records() {
//!             if let Record::Api(api) = record {
//!                 self.0.lock().unwrap().push(api._api_id);
//!             }
//!         }
//!         // SAFETY: every buffer this tool lends comes from Buffer::from_boxed.
//!         drop(unsafe { filled.into_buffer().into_boxed() });
//!     }
//! }
//!
//! let tool = Arc::new(Tool(Mutex::new(Vec::new())));
//! session::set_buffer_callbacks(tool.clone());
//! session::enable_view(pti_view_kind::PTI_VIEW_DRIVER_API)?;
//! dispatch::simulate_call(ApiGroup::OpenCl, ids::opencl::clFinish, Default::default(), || 0)?;
//! session::flush()?;
//! assert!(tool.0.lock().unwrap().contains(&ids::opencl::clFinish));
//! session::disable_view(pti_view_kind::PTI_VIEW_DRIVER_API)?;
//! # Ok::<(), pti_core::Error>(())
//! ```

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::api::{ApiClass, ApiGroup, ApiId};
use crate::interest::{self, API_RECORDS, CELLS, DEVICE, EXTERNAL, UNRECORDED};
use crate::result::Error;
use crate::sync::writer_lock::WriterLock;
use crate::{clock, ids, thread};

/// Record layouts, enums and handle types of `pti_view.h` (the `pti-abi` crate).
pub use pti_abi as abi;

pub(crate) mod annotation;
mod buffer;
mod demangle;
pub(crate) mod device;
pub(crate) mod emit;
mod external;
pub(crate) mod loss;
mod records;

pub use crate::lent::{Buffer, FilledBuffer};
use abi::{pti_api_class, pti_api_group_id, pti_view_kind, pti_view_overhead_kind};
pub use buffer::{BufferCallbacks, dropped_count, emitted_count};
pub(crate) use buffer::{count_lost, count_lost_because, hand_back_at_exit};
pub use demangle::demangle_kernel_names;
pub(crate) use device::fills_named_as_intel;
pub use device::{level_zero_cpu_kernels_as_gpu, name_fills_as_intel};
pub use emit::overhead_per_call;
pub use external::{pop_external_correlation_id, push_external_correlation_id};
pub use loss::unrecorded_count;
pub use records::{Record, Records, next_record, next_record_raw};

/// Bit `kind` set: that view is enabled and collecting: the tool enabled it (see [`CONFIGURED`])
/// and collection is not paused (or the view is one a pause keeps).
static ENABLED: AtomicU32 = AtomicU32::new(0);

/// Bit `kind` set: the tool enabled that view, paused or not.
static CONFIGURED: AtomicU32 = AtomicU32::new(0);

/// Collection is paused (see [`set_paused`]).
static PAUSED: AtomicBool = AtomicBool::new(false);

/// The views a pause keeps writing: the loss records, since what is lost must be counted however
/// collection stands.
const KEPT_WHILE_PAUSED: u32 = 1 << pti_view_kind::PTI_VIEW_EXT_LOSS.index();

/// Whether view `kind` is collecting: enabled, and collection not paused. One relaxed load. What
/// decides whether a call or a command is recorded.
#[inline(always)]
pub fn is_enabled(kind: pti_view_kind) -> bool {
    ENABLED.load(Ordering::Relaxed) & (1 << kind.index()) != 0
}

/// Whether the tool enabled view `kind`, paused or not: what decides the set-up that must be in
/// place before a resume (profiling added to queues and pools, the functions traced so that
/// kernel names and queues are known), and whether a command already being tracked is written
/// when it completes.
#[inline]
pub(crate) fn is_configured(kind: pti_view_kind) -> bool {
    CONFIGURED.load(Ordering::Relaxed) & (1 << kind.index()) != 0
}

/// Whether collection is paused.
pub fn is_paused() -> bool {
    PAUSED.load(Ordering::Relaxed)
}

/// Pauses (`on`) or resumes collection; returns whether it was paused. While paused, no call or
/// command is recorded (commands already submitted are still written when they complete, and
/// loss records are still written); everything else goes on as while collecting, so that a
/// resume finds queues profiled and names known.
pub(crate) fn set_paused(on: bool) -> bool {
    let _config = CONFIG.lock();
    let was = PAUSED.swap(on, Ordering::Relaxed);
    if was != on {
        apply_configured();
        ApiGroup::ALL.into_iter().for_each(refresh_api_interest);
        refresh_external_interest();
    }
    was
}

/// Sets the collecting views from the enabled ones and the pause (under [`CONFIG`]).
fn apply_configured() {
    let configured = CONFIGURED.load(Ordering::Relaxed);
    let collecting = if PAUSED.load(Ordering::Relaxed) {
        configured & KEPT_WHILE_PAUSED
    } else {
        configured
    };
    ENABLED.store(collecting, Ordering::Relaxed);
}

/// One bit per interest cell.
type CellBits = [AtomicU64; CELLS.div_ceil(64)];

/// Per interest cell: the API views record this function (see the module docs).
static RECORDED: CellBits = [const { AtomicU64::new(u64::MAX) }; CELLS.div_ceil(64)];

/// Per group: the filter is granular.
static GRANULAR: [AtomicBool; 3] = [const { AtomicBool::new(false) }; 3];

/// Serialises configuration changes (never taken on the call path).
static CONFIG: WriterLock<()> = WriterLock::new(());

fn is_recorded(cell: usize) -> bool {
    RECORDED[cell / 64].load(Ordering::Relaxed) & (1 << (cell % 64)) != 0
}

/// Sets (`on`) or clears the bit of `cell` in `bits`.
fn set_cell(bits: &CellBits, cell: usize, on: bool) {
    let bit = 1u64 << (cell % 64);
    if on {
        bits[cell / 64].fetch_or(bit, Ordering::Relaxed);
    } else {
        bits[cell / 64].fetch_and(!bit, Ordering::Relaxed);
    }
}

fn set_recorded(cell: usize, on: bool) {
    set_cell(&RECORDED, cell, on);
}

fn cells(group: ApiGroup) -> impl Iterator<Item = (ApiId, usize)> {
    ids::iter(group)
        .map(move |(id, _)| (id, interest::cell(group, id).expect("table IDs have cells")))
}

/// Recomputes the API-record interest of `group`'s functions.
fn refresh_api_interest(group: ApiGroup) {
    let view_on = is_enabled(emit::api_view(group));
    for (_, cell) in cells(group) {
        interest::set(cell, API_RECORDS, view_on && is_recorded(cell));
    }
}

/// Sets the external-correlation interest of every function.
fn refresh_external_interest() {
    let on = is_enabled(pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION);
    for group in ApiGroup::ALL {
        for (_, cell) in cells(group) {
            interest::set(cell, EXTERNAL, on);
        }
    }
}

/// The views of device work: while any is enabled, the functions that submit or wait for
/// device work are traced, so that their records carry correlation IDs.
pub(crate) const DEVICE_VIEWS: [pti_view_kind; 6] = [
    pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL,
    pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL,
    pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY,
    pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_FILL,
    pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY_P2P,
    pti_view_kind::PTI_VIEW_DEVICE_SYNCHRONIZATION,
];

/// Whether any device view is collecting (commands submitted now are to be recorded).
#[inline]
pub(crate) fn any_device_view() -> bool {
    DEVICE_VIEWS.iter().any(|k| is_enabled(*k))
}

/// Whether the tool enabled any device view, paused or not (queues and pools created now need
/// profiling; see [`is_configured`]).
#[inline]
pub(crate) fn any_device_view_configured() -> bool {
    DEVICE_VIEWS.iter().any(|k| is_configured(*k))
}

/// Per interest cell: the function submits or waits for device work (see [`DEVICE_VIEWS`]).
static DEVICE_WORK: CellBits = [const { AtomicU64::new(0) }; CELLS.div_ceil(64)];

/// Marks the functions of `group` that submit or wait for device work: they are traced while a
/// device view is enabled. The session tells the view each backend's, before the first enable.
pub(crate) fn mark_device_work(group: ApiGroup, functions: &[ApiId]) {
    let _config = CONFIG.lock();
    mark(&DEVICE_WORK, group, functions.iter().copied());
}

/// Sets the bits of `group`'s `functions` in `marks`, and the interest that follows from them.
fn mark(marks: &CellBits, group: ApiGroup, functions: impl Iterator<Item = ApiId>) {
    for cell in functions.filter_map(|id| interest::cell(group, id)) {
        set_cell(marks, cell, true);
    }
    refresh_device_interest();
}

/// Per interest cell: the function submits device work that has no record kind; its
/// successful calls are counted while a device view is enabled (see `loss`).
static UNRECORDED_WORK: CellBits = [const { AtomicU64::new(0) }; CELLS.div_ceil(64)];

/// Marks the functions of `group` whose commands have no record kind (each with what its
/// commands are): counted while a device view is enabled. The session tells the view each
/// backend's, before the first enable.
pub(crate) fn mark_unrecorded_work(group: ApiGroup, functions: &'static [(ApiId, &'static str)]) {
    let _config = CONFIG.lock();
    loss::describe(group, functions);
    mark(&UNRECORDED_WORK, group, functions.iter().map(|(id, _)| *id));
}

/// Sets the device interest of the functions marked as device work, and the counting interest
/// of those marked as unrecorded work.
fn refresh_device_interest() {
    let on = any_device_view_configured();
    for (marks, bit) in [(&DEVICE_WORK, DEVICE), (&UNRECORDED_WORK, UNRECORDED)] {
        for (w, word) in marks.iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != 0 {
                interest::set(w * 64 + bits.trailing_zeros() as usize, bit, on);
                bits &= bits - 1;
            }
        }
    }
}

/// Sets the tool's buffer callbacks (the session's `set_buffer_callbacks`).
pub(crate) fn set_callbacks(callbacks: std::sync::Arc<dyn BufferCallbacks>) {
    crate::sync::barrier::init();
    buffer::set_callbacks(callbacks);
}

/// Intel PTI's buffer habits for the callbacks just set (the Intel face's
/// `ptiViewSetCallbacks`): a buffer is asked for at once, and flushes hand back empty buffers
/// too. Setting callbacks again brings back libpti's habits.
pub fn lend_buffers_as_intel() {
    buffer::lend_as_intel();
}

fn check_kind(kind: pti_view_kind) -> Result<(), Error> {
    match kind {
        pti_view_kind::PTI_VIEW_INVALID | pti_view_kind::PTI_VIEW_RESERVED => {
            Err(Error::BadArgument("not a view kind"))
        }
        _ => Ok(()),
    }
}

/// Enables (`on`) or disables view `kind`: its records are written from then on, or no longer.
/// Records already written stay in their buffers until a flush. Enabling needs the buffer
/// callbacks set.
pub(crate) fn set_enabled(kind: pti_view_kind, on: bool) -> Result<(), Error> {
    check_kind(kind)?;
    let _config = CONFIG.lock();
    if on && !buffer::callbacks_set() {
        return Err(Error::NoCallbacksSet);
    }
    let bit = 1u32 << kind.index();
    if on {
        CONFIGURED.fetch_or(bit, Ordering::Relaxed);
    } else {
        CONFIGURED.fetch_and(!bit, Ordering::Relaxed);
    }
    apply_configured();
    match kind {
        pti_view_kind::PTI_VIEW_DRIVER_API => [ApiGroup::LevelZero, ApiGroup::OpenCl]
            .into_iter()
            .for_each(refresh_api_interest),
        pti_view_kind::PTI_VIEW_RUNTIME_API => refresh_api_interest(ApiGroup::Sycl),
        pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION => refresh_external_interest(),
        k if DEVICE_VIEWS.contains(&k) => refresh_device_interest(),
        _ => {}
    }
    Ok(())
}

/// Writes what a flush delivers, once the backends harvested: every buffer goes to the tool (see
/// [`FilledBuffer`]). `started` is when the flush began (before the harvest). With the overhead
/// view enabled, first closes the calling thread's overhead window (other threads close theirs
/// with their next traced call after the window ends), and records the flush's own time,
/// delivered by the next flush.
pub(crate) fn flush(started: u64) -> Result<(), Error> {
    if is_enabled(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD) {
        thread::with(|s| emit::close_overhead_window(s, started));
    }
    write_loss_records();
    let result = buffer::flush();
    if is_enabled(pti_view_kind::PTI_VIEW_COLLECTION_OVERHEAD) {
        let end = clock::now();
        thread::with(|s| {
            emit::write_overhead(
                s,
                pti_view_overhead_kind::PTI_VIEW_OVERHEAD_KIND_BUFFER_FLUSH,
                started,
                end,
                1,
                end - started,
                0,
            )
        });
    }
    result
}

/// With `PTI_VIEW_EXT_LOSS` enabled, writes the loss records of what was lost since the last
/// ones, on this thread (a flush, and the exit hook before the buffers go back), or on the
/// state of threads whose own is gone (a flush from an `atexit` handler runs after the main
/// thread's locals were destroyed).
pub(crate) fn write_loss_records() {
    if is_enabled(pti_view_kind::PTI_VIEW_EXT_LOSS) {
        thread::with_any(loss::write_pending);
    }
}

/// Which API view a filter applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiView {
    /// `PTI_VIEW_DRIVER_API`: Level Zero and OpenCL.
    Driver,
    /// `PTI_VIEW_RUNTIME_API`: SYCL.
    Runtime,
}

/// The groups a filter call names: one group of the view, or every group of it for ALL.
fn filter_groups(view: ApiView, group: pti_api_group_id) -> Result<&'static [ApiGroup], Error> {
    use pti_api_group_id::*;
    match (view, group) {
        (ApiView::Driver, PTI_API_GROUP_LEVELZERO) => Ok(&[ApiGroup::LevelZero]),
        (ApiView::Driver, PTI_API_GROUP_OPENCL) => Ok(&[ApiGroup::OpenCl]),
        (ApiView::Driver, PTI_API_GROUP_ALL) => Ok(&[ApiGroup::LevelZero, ApiGroup::OpenCl]),
        (ApiView::Runtime, PTI_API_GROUP_SYCL | PTI_API_GROUP_ALL) => Ok(&[ApiGroup::Sycl]),
        _ => Err(Error::BadArgument(
            "the API group is not one of this view's groups",
        )),
    }
}

/// Switches `group` to granular filtering, if it is not yet: every function off.
fn make_granular(group: ApiGroup) {
    if !GRANULAR[group.index()].swap(true, Ordering::Relaxed) {
        for (_, cell) in cells(group) {
            set_recorded(cell, false);
        }
    }
}

/// Records (`enable`) or stops recording one function in an API view. With
/// `PTI_API_GROUP_ALL`, applies to every group of the view whose table has `api_id`. Returns the
/// groups it changed.
pub(crate) fn enable_api(
    view: ApiView,
    enable: bool,
    group: pti_api_group_id,
    api_id: ApiId,
) -> Result<Vec<ApiGroup>, Error> {
    let groups = filter_groups(view, group)?;
    let targets: Vec<ApiGroup> = groups
        .iter()
        .copied()
        .filter(|g| ids::is_valid(*g, api_id))
        .collect();
    if targets.is_empty() {
        return Err(Error::BadApiId {
            group: group as u32,
            id: api_id,
        });
    }
    {
        let _config = CONFIG.lock();
        for &g in &targets {
            make_granular(g);
            set_recorded(
                interest::cell(g, api_id).expect("valid IDs have cells"),
                enable,
            );
            refresh_api_interest(g);
        }
    }
    Ok(targets)
}

/// Records (`enable`) or stops recording the functions of a class in an API view. Returns the
/// groups it changed.
pub(crate) fn enable_api_class(
    view: ApiView,
    enable: bool,
    class: pti_api_class,
    group: pti_api_group_id,
) -> Result<&'static [ApiGroup], Error> {
    let groups = filter_groups(view, group)?;
    let classes: &[ApiClass] = match class {
        pti_api_class::PTI_API_CLASS_GPU_OPERATION_CORE => &[ApiClass::GpuOperationCore],
        pti_api_class::PTI_API_CLASS_HOST_OPERATION_SYNCHRONIZATION => {
            &[ApiClass::HostOperationSynchronization]
        }
        pti_api_class::PTI_API_CLASS_ALL => &ApiClass::ALL,
        pti_api_class::PTI_API_CLASS_RESERVED => {
            return Err(Error::BadArgument("not an API class"));
        }
    };
    {
        let _config = CONFIG.lock();
        for &g in groups {
            make_granular(g);
            for &c in classes {
                for &id in ids::class_members(g, c) {
                    set_recorded(
                        interest::cell(g, id).expect("class members have cells"),
                        enable,
                    );
                }
            }
            refresh_api_interest(g);
        }
    }
    Ok(groups)
}

/// Returns every group to its initial filter: every function recorded while its API view is
/// enabled (a Rust-API extension; C tools re-enable functions one by one).
pub(crate) fn reset_api_filters() {
    let _config = CONFIG.lock();
    for group in ApiGroup::ALL {
        GRANULAR[group.index()].store(false, Ordering::Relaxed);
        for (_, cell) in cells(group) {
            set_recorded(cell, true);
        }
        refresh_api_interest(group);
    }
}

/// `fork()` hooks of the view configuration and buffers.
pub(crate) fn fork_prepare() {
    CONFIG.acquire_for_fork();
    buffer::fork_prepare();
}

pub(crate) fn fork_parent() {
    buffer::fork_parent();
    // SAFETY: fork_prepare took the lock on this thread; no guard is held across fork().
    unsafe { CONFIG.release_after_fork() };
}

pub(crate) fn fork_child() {
    buffer::fork_child();
    // SAFETY: as in fork_parent.
    unsafe { CONFIG.release_after_fork() };
}
