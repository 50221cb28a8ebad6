//! The records libpti hands the collector, copied into plain data as they arrive (buffers are
//! given back at once), and the critical events it hears.

use core::cell::UnsafeCell;
use core::ffi::CStr;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::collections::HashMap;

use libpti::{Record, Records};

use crate::abi::*;
use crate::output::{Batch, Output as _};

/// An API call (driver or runtime view).
#[derive(Debug, Clone)]
pub(crate) struct ApiCall {
    pub(crate) group: u32,
    pub(crate) id: u32,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) thread: u32,
    pub(crate) correlation: u32,
    pub(crate) status: u32,
}

/// What a device operation is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum DeviceKind {
    Kernel,
    /// A copy, with its memcpy type ("H2D", ...).
    Copy(String),
    Fill,
    Barrier,
    /// A marker (a barrier record of a `...Marker...` function: it orders nothing, it signals).
    Marker,
}

/// A kernel, copy, fill or barrier on a device queue.
#[derive(Debug, Clone)]
pub(crate) struct DeviceOp {
    pub(crate) kind: DeviceKind,
    pub(crate) name: String,
    /// The device's PCI address, when the record gives one.
    pub(crate) pci: String,
    pub(crate) queue: u64,
    pub(crate) device: u64,
    /// The Level Zero engine (command-queue group ordinal, index) it ran on; None on OpenCL, or
    /// when unknown.
    pub(crate) engine: Option<crate::queues::Engine>,
    pub(crate) append: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) thread: u32,
    pub(crate) correlation: u32,
    pub(crate) bytes: u64,
    pub(crate) sycl_queue: u64,
    /// For a barrier, the API function that enqueued it (its flow starts at a call of that
    /// function); None for the rest.
    pub(crate) api: Option<(u32, u32)>,
}

/// A memory allocation or release of the SYCL runtime.
#[derive(Debug, Clone)]
pub(crate) struct Memory {
    pub(crate) allocation: bool,
    pub(crate) bytes: u64,
    pub(crate) address: u64,
    /// When the allocation or release began.
    pub(crate) at: u64,
}

/// An annotation the program made through ITT (a range, or a marker: start = end).
#[derive(Debug, Clone)]
pub(crate) struct Annotation {
    pub(crate) kind: pti_view_annotation_type,
    pub(crate) domain: String,
    pub(crate) name: String,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) thread: u32,
}

impl Annotation {
    /// Whether it is an instant.
    pub(crate) fn is_marker(&self) -> bool {
        self.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_MARKER
    }

    /// Whether it may overlap others of its thread (so it needs a track of its own).
    pub(crate) fn overlaps(&self) -> bool {
        self.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_OVERLAPPED_TASK
    }

    /// What its track on a thread is for: its domain, or for a legacy event its name (a domain's
    /// ranges nest on their thread; two domains' may not, nor events of two names).
    pub(crate) fn track_group(&self) -> String {
        if self.kind == pti_view_annotation_type::PTI_VIEW_ANNOTATION_TYPE_EVENT {
            self.label()
        } else {
            self.domain.clone()
        }
    }

    /// "domain: name", as the summary and the timeline show it.
    pub(crate) fn label(&self) -> String {
        if self.domain == self.name || self.name.is_empty() {
            self.domain.clone()
        } else {
            format!("{}: {}", self.domain, self.name)
        }
    }
}

/// A communication operation (from oneCCL's ITT annotations).
#[derive(Debug, Clone)]
pub(crate) struct Communication {
    pub(crate) name: String,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) send: u64,
    pub(crate) recv: u64,
}

impl Communication {
    /// Its name with its bytes, as the timelines show it.
    pub(crate) fn label(&self) -> String {
        format!(
            "{} ({} B sent, {} B received)",
            self.name, self.send, self.recv
        )
    }
}

/// Everything received. The records themselves are kept only for a JSON timeline (written at
/// exit); otherwise they live for one batch: tallied for the summary and streamed to the
/// Perfetto timeline.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) apis: Vec<ApiCall>,
    pub(crate) device: Vec<DeviceOp>,
    pub(crate) memory: Vec<Memory>,
    pub(crate) annotations: Vec<Annotation>,
    pub(crate) communication: Vec<Communication>,
    /// The summary's figures.
    pub(crate) tally: crate::summary::Tally,
    /// Kernel, device and queue names.
    pub(crate) names: crate::names::Names,
    /// Where barriers and markers ran, and which devices are Level Zero's.
    pub(crate) placement: crate::queues::Placement,
    /// External correlation IDs by correlation ID.
    pub(crate) externals: HashMap<u32, Vec<u64>>,
    pub(crate) criticals: Vec<String>,
    /// Commands of functions that have no record kind, by function (libpti's loss records):
    /// counted, not on the timeline.
    pub(crate) unrecorded: std::collections::BTreeMap<String, u64>,
    /// Kernels left out by the kernel filters (`--kernels`, `--exclude-kernels`).
    pub(crate) filtered_kernels: u64,
    /// The changes of capture (time, "collection paused (why)"), for the timeline.
    pub(crate) capture: Vec<(u64, String)>,
    /// The Perfetto timeline being streamed (opened at the first record), or why it could not
    /// be opened.
    pub(crate) stream: Option<Result<crate::perfetto::Stream, String>>,
    /// Where the file that was at the timeline's path went (`<path>.old`), to say so.
    pub(crate) kept_as: Option<std::path::PathBuf>,
    /// Records a JSON timeline did not keep (past `PTI_TRACE_JSON_MAX_RECORDS`).
    pub(crate) json_left_out: u64,
    /// Records a Perfetto timeline did not take, past `--max-size`.
    pub(crate) timeline_left_out: u64,
}

impl Collected {
    /// Whether nothing was received: no call, device work, allocation, annotation or critical
    /// event.
    pub(crate) fn recorded_nothing(&self) -> bool {
        self.tally.is_empty() && self.criticals.is_empty()
    }

    /// How many records of each kind are kept (the start of a batch's new ones).
    fn counts(&self) -> Counts {
        Counts {
            apis: self.apis.len(),
            device: self.device.len(),
            memory: self.memory.len(),
            annotations: self.annotations.len(),
            communication: self.communication.len(),
        }
    }

    /// Barrier records name no device: theirs is their queue's.
    pub(crate) fn fill_in_devices(&mut self) {
        let known: HashMap<u64, u64> = self
            .device
            .iter()
            .filter(|op| op.device != 0)
            .map(|op| (op.queue, op.device))
            .collect();
        for op in self.device.iter_mut().filter(|op| op.device == 0) {
            op.device = known.get(&op.queue).copied().unwrap_or(0);
        }
    }
}

/// How many records of each kind [`Collected`] holds.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Counts {
    apis: usize,
    device: usize,
    memory: usize,
    annotations: usize,
    communication: usize,
}

impl Counts {
    /// Records of every kind.
    fn total(&self) -> usize {
        self.apis + self.device + self.memory + self.annotations + self.communication
    }
}

/// The collected data, behind a spin lock (the collector's own code is the only user and never
/// holds it across a call into libpti or the program).
struct Store {
    locked: AtomicBool,
    data: UnsafeCell<Option<Collected>>,
}

// SAFETY: `data` is only reached while `locked` is held (see `with`), or by the only thread of a
// child just forked (see `after_fork_in_child`).
unsafe impl Sync for Store {}

static STORE: Store = Store {
    locked: AtomicBool::new(false),
    data: UnsafeCell::new(None),
};

fn lock() {
    while STORE
        .locked
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
}

fn unlock() {
    STORE.locked.store(false, Ordering::Release);
}

/// Set (under the store's lock) once the exit work has taken the records: buffers completed after
/// it are only counted.
pub(crate) static FINISHED: AtomicBool = AtomicBool::new(false);

/// Records that arrived after the exit work had written the timeline (reported at unload).
pub(crate) static LATE_RECORDS: AtomicU64 = AtomicU64::new(0);

/// Runs `f` on the collected data.
pub(crate) fn with<R>(f: impl FnOnce(&mut Collected) -> R) -> R {
    struct Unlock;
    impl Drop for Unlock {
        fn drop(&mut self) {
            unlock();
        }
    }
    lock();
    let _unlock = Unlock;
    // SAFETY: the lock is held until `_unlock` drops; `f` cannot reach `with` again (the
    // collector's code calls it from no callback of its own).
    f(unsafe { &mut *STORE.data.get() }.get_or_insert_with(Collected::default))
}

/// In a child of a program that forks without `exec`: start with no records (the parent's are
/// the parent's to write) and an open lock.
///
/// Nothing is taken before the fork (a lock taken there could wait on a thread the fork is
/// about to lose); so another parent thread may have been inside `with` at the fork, and the
/// child's copy of the data may be half-updated. It is abandoned, never read or freed.
extern "C" fn after_fork_in_child() {
    // SAFETY: the child has one thread, this one; no other code of the child runs until the
    // handler returns. The old value is forgotten, not dropped (see above).
    unsafe {
        let old = core::ptr::replace(STORE.data.get(), None);
        core::mem::forget(old);
    }
    LATE_RECORDS.store(0, Ordering::Relaxed);
    unlock();
}

/// Installs the fork handler (once, when the collector starts).
pub(crate) fn install_fork_handlers() {
    // SAFETY: a function with the signature pthread_atfork expects.
    unsafe {
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
    }
}

/// The size of the buffers lent to libpti.
pub(crate) const BUFFER_SIZE: usize = 4 << 20;

/// Where the views' records go: copies them out, or, once the exit work took the records, only
/// counts them.
pub(crate) fn deliver(records: Records<'_>) {
    with(|c| {
        // Checked under the lock the exit work holds while it sets the flag: a buffer is either
        // in the timeline or counted as late, never lost between.
        let late = FINISHED.load(Ordering::Acquire);
        let before = c.counts();
        for record in records {
            if late {
                LATE_RECORDS.fetch_add(1, Ordering::Relaxed);
            } else {
                take(c, record);
            }
        }
        for op in &c.device[before.device..] {
            c.names.see_device(op.device, &op.pci);
            c.names.queue(op.queue);
        }
        if c.counts() != before {
            open_stream(c);
        }
        let batch = Batch {
            apis: &c.apis[before.apis..],
            device: &c.device[before.device..],
            memory: &c.memory[before.memory..],
            annotations: &c.annotations[before.annotations..],
            communication: &c.communication[before.communication..],
        };
        c.tally.batch(&batch, &c.names);
        // `--max-size`: past it, a batch is counted (the summary says how many records the
        // timeline left out), not written; the file ends with its last whole batch.
        let max_size = crate::OPTIONS.get().and_then(|o| o.max_size);
        if let Some(Ok(stream)) = c.stream.as_mut() {
            if max_size.is_some_and(|max| stream.bytes() >= max) {
                c.timeline_left_out += batch.len() as u64;
            } else if !batch.is_empty() {
                stream.batch(&batch, &c.names);
            }
        }
        let json_max = crate::OPTIONS
            .get()
            .filter(|o| o.output.is_some() && o.format == crate::options::Format::Json)
            .map(|o| o.json_max_records);
        // A JSON timeline holds its records until exit: past its bound, a batch is counted and
        // let go (the summary says how many), so memory stays bounded.
        let over = json_max.is_some_and(|max| c.counts().total() > max);
        if over {
            c.json_left_out += (c.counts().total() - before.total()) as u64;
        }
        if json_max.is_none() || over {
            c.apis.truncate(before.apis);
            c.device.truncate(before.device);
            c.memory.truncate(before.memory);
            c.annotations.truncate(before.annotations);
            c.communication.truncate(before.communication);
        }
    });
}

/// Opens the Perfetto stream at the first record, when that format was asked (with the changes
/// of capture made before it).
fn open_stream(c: &mut Collected) {
    let Some(options) = crate::OPTIONS.get() else {
        return;
    };
    if options.format != crate::options::Format::Perfetto || c.stream.is_some() {
        return;
    }
    let pid = std::process::id();
    let Some(path) = options.output_path(pid) else {
        return;
    };
    let created = pti_files::create(&path, options.if_exists).and_then(|created| {
        c.kept_as = created.kept_as.clone();
        let name = crate::process_name();
        crate::perfetto::Stream::create(created.file, &created.path, pid, &name, options.api)
    });
    c.stream = Some(created.map_err(|e| format!("cannot write {}: {e}", path.display())));
    if let Some(Ok(stream)) = c.stream.as_mut() {
        for (at, text) in &c.capture {
            stream.capture(*at, text);
        }
    }
}

/// Notes a change of capture at `at` (see `capture`): kept for the timeline, and on the Perfetto
/// timeline at once if one is open.
pub(crate) fn capture_changed(at: u64, text: &str) {
    with(|c| {
        if FINISHED.load(Ordering::Acquire) {
            return;
        }
        c.capture.push((at, text.to_string()));
        if let Some(Ok(stream)) = c.stream.as_mut() {
            stream.capture(at, text);
            stream.flush();
        }
    });
}

/// Puts a sample of the pending device commands on the Perfetto timeline, if one is open.
pub(crate) fn sample_pending(at: u64, commands: u64) {
    with(|c| {
        if FINISHED.load(Ordering::Acquire) {
            return;
        }
        if let Some(Ok(stream)) = c.stream.as_mut() {
            stream.pending(at, commands);
            stream.flush();
        }
    });
}

/// A PCI address field as text (empty when the driver gave none).
fn pci(field: &[core::ffi::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A name libpti handed out (NUL-terminated, living as long as libpti), or None for NULL.
fn c_str<'a>(p: *const core::ffi::c_char) -> Option<&'a CStr> {
    // SAFETY: libpti's names are NUL-terminated and never freed while it is loaded.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

/// A name as text (an absent name is empty).
fn text(name: Option<&CStr>) -> String {
    name.map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The engine of a record on `device`, when that is a Level Zero device (OpenCL records carry 0).
fn engine(
    c: &Collected,
    device: u64,
    engine: crate::queues::Engine,
) -> Option<crate::queues::Engine> {
    c.placement.is_level_zero(device).then_some(engine)
}

/// Copies one record (kinds the collector does not use are skipped).
/// A kernel, copy or fill record (`$r`; the three record types have the same fields under the
/// same names) as the collector's device operation of `$kind`, named `$name`.
macro_rules! device_op {
    ($c:expr, $r:expr, $kind:expr, $name:expr, $bytes:expr) => {
        DeviceOp {
            kind: $kind,
            name: $name,
            pci: pci(&$r._pci_address),
            queue: $r._queue_handle as u64,
            device: $r._device_handle as u64,
            engine: engine(
                $c,
                $r._device_handle as u64,
                ($r._engine_ordinal, $r._engine_index),
            ),
            append: $r._append_timestamp,
            start: $r._start_timestamp,
            end: $r._end_timestamp,
            thread: $r._thread_id,
            correlation: $r._correlation_id,
            bytes: $bytes,
            sycl_queue: $r._sycl_queue_id,
            api: None,
        }
    };
}

fn take(c: &mut Collected, record: Record<'_>) {
    let name = text(record.name());
    match record {
        Record::Api(a) => {
            c.apis.push(ApiCall {
                group: a._api_group as u32,
                id: a._api_id,
                start: a._start_timestamp,
                end: a._end_timestamp,
                thread: a._thread_id,
                correlation: a._correlation_id,
                status: a._return_code,
            });
        }
        Record::Kernel(k) => {
            let shown = c.names.kernel(name.clone());
            if !crate::OPTIONS
                .get()
                .is_none_or(|o| o.records_kernel(&shown, &name))
            {
                c.filtered_kernels += 1;
                return;
            }
            let op = device_op!(c, k, DeviceKind::Kernel, shown, 0);
            c.device.push(op);
        }
        Record::MemoryCopy(m) => {
            let kind = text(Some(libpti::view::memcpy_type_name(m._memcpy_type)));
            let op = device_op!(c, m, DeviceKind::Copy(kind), name, m._bytes);
            c.device.push(op);
        }
        Record::MemoryFill(f) => {
            let op = device_op!(c, f, DeviceKind::Fill, name, f._bytes);
            c.device.push(op);
        }
        Record::Synchronization(s) => {
            use pti_view_synchronization_type::*;
            // Host waits are API calls already; device barriers are device work.
            if matches!(
                s._synch_type,
                PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_EXECUTION
                    | PTI_VIEW_SYNCHRONIZATION_TYPE_GPU_BARRIER_MEMORY
            ) {
                let api = crate::api_name(s._api_group, s._api_id).unwrap_or("barrier");
                let (device, engine) = c.placement.barrier(s._correlation_id).unwrap_or((0, None));
                c.device.push(DeviceOp {
                    kind: if api.contains("Marker") {
                        DeviceKind::Marker
                    } else {
                        DeviceKind::Barrier
                    },
                    name: api.to_string(),
                    pci: String::new(),
                    queue: s._queue_handle as u64,
                    device,
                    engine,
                    append: s._start_timestamp,
                    start: s._start_timestamp,
                    end: s._end_timestamp,
                    thread: s._thread_id,
                    correlation: s._correlation_id,
                    bytes: 0,
                    sycl_queue: PTI_INVALID_QUEUE_ID,
                    api: Some((s._api_group as u32, s._api_id)),
                });
            }
        }
        Record::ExternalCorrelation(e) => {
            c.externals
                .entry(e._correlation_id)
                .or_default()
                .push(e._external_id);
        }
        Record::Loss(l) if l._reason == pti_view_loss_reason::PTI_VIEW_LOSS_NO_RECORD_KIND => {
            let function = crate::api_name(l._api_group, l._api_id).unwrap_or("?");
            *c.unrecorded.entry(function.to_string()).or_default() += l._count;
        }
        Record::Annotation(a) => {
            c.annotations.push(Annotation {
                kind: a._annotation_type,
                domain: text(c_str(a._domain)),
                name,
                start: a._start_timestamp,
                end: a._end_timestamp,
                thread: a._thread_id,
            });
        }
        Record::Communication(m) => {
            c.communication.push(Communication {
                name,
                start: m._start_timestamp,
                end: m._end_timestamp,
                send: m._send_size,
                recv: m._recv_size,
            });
        }
        Record::MemoryAllocation(m) => {
            c.memory.push(Memory {
                allocation: m._operation
                    == pti_view_memory_operation::PTI_VIEW_MEMORY_OPERATION_ALLOCATION,
                bytes: m._bytes,
                address: m._address,
                at: m._start_timestamp,
            });
        }
        _ => {}
    }
}

/// A critical event libpti delivered: keeps it, named.
pub(crate) fn on_critical(event: &libpti::CriticalEvent<'_>) {
    let name = libpti::Error::from_code(event.code).name();
    let message = event.message.to_string_lossy();
    let at = libpti::view::timestamp();
    with(|c| {
        let text = format!("{name}: {message}");
        if let Some(Ok(stream)) = c.stream.as_mut() {
            stream.critical(at, &text);
            stream.flush();
        }
        c.criticals.push(text);
    });
}
