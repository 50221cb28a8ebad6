//! Fuzzes sequences of operations on pti-core's public Rust API, one thread: views enabled and
//! disabled (every kind, INVALID and RESERVED too), flushes (also from inside a traced call's
//! body and from inside a callback), simulated traced calls of four functions (the SYCL one
//! nests an OpenCL call), external correlation IDs pushed and popped, subscribers coming and
//! going (also removing themselves from inside a callback, or panicking there), and a tool whose
//! buffers' sizes and misalignments come from the input (and which refuses buffers, or panics in
//! `request` / `complete`).
//!
//! Checked after every input (each input starts from a reset: views disabled, subscribers gone,
//! ID stacks empty, filters reset, buffers flushed):
//! - no panic escapes pti-core (a panic outside the hostile callbacks aborts the fuzzer), and a
//!   traced call returns its body's result;
//! - every result is the one the model expects (a view kind that is not one is BadArgument, a
//!   pop from an empty stack is ExternalIdQueueEmpty, ...);
//! - buffers come back only once, with `used <= len`, holding well-formed records of kinds that
//!   were enabled at some point;
//! - after the final flush, for every kind: the growth of `view::emitted_count(kind)` equals the
//!   records delivered to `complete` plus the growth of `view::dropped_count(kind)`;
//! - the emitted counts of DRIVER_API, RUNTIME_API and EXTERNAL_CORRELATION equal the model's
//!   (one API record per call in its group's view while that view is enabled; one
//!   external-correlation record per pushed ID per call that owns its correlation ID while
//!   EXTERNAL_CORRELATION is enabled);
//! - no callback runs after `unsubscribe` returned.
#![no_main]

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};

use libfuzzer_sys::fuzz_target;
use pti_core::callback::SubscriberId;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::{level_zero, opencl, sycl};
use pti_core::session;
use pti_core::view::abi::*;
use pti_core::view::{self, Buffer, BufferCallbacks, FilledBuffer};
use pti_core::{ApiGroup, ApiId, Domain, Event, ResultCode, Subscriber};

const CALLS: [(ApiGroup, ApiId); 4] = [
    (ApiGroup::OpenCl, opencl::clFinish),
    (ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel),
    (ApiGroup::LevelZero, level_zero::zeEventHostSynchronize),
    (ApiGroup::Sycl, sycl::urEnqueueKernelLaunch),
];

/// Every kind (INVALID and RESERVED included, which enable_view must refuse).
fn all_kinds() -> Vec<pti_view_kind> {
    let mut kinds = vec![pti_view_kind::PTI_VIEW_INVALID];
    kinds.extend(pti_view_kind::ALL);
    kinds.extend(pti_view_kind::EXTENSIONS);
    kinds
}

fn is_real(kind: pti_view_kind) -> bool {
    !matches!(
        kind,
        pti_view_kind::PTI_VIEW_INVALID | pti_view_kind::PTI_VIEW_RESERVED
    )
}

const PUSHABLE: [pti_view_external_kind; 5] = pti_view_external_kind::PUSHABLE;

// === expected panics ===

thread_local! {
    /// Set right before a hostile callback panics on purpose: the panic hook lets that one pass
    /// (pti-core must catch it); any other panic aborts, as libfuzzer-sys's own hook does.
    static EXPECTED_PANIC: Cell<bool> = const { Cell::new(false) };
}

fn hostile_panic(what: &str) -> ! {
    EXPECTED_PANIC.set(true);
    panic!("fuzz: hostile {what}");
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if EXPECTED_PANIC.replace(false) {
                return;
            }
            eprintln!("{info}");
            std::process::abort();
        }));
    });
}

// === the tool ===

#[derive(Default)]
struct Lending {
    /// Buffer sizes in turn; `None`: refuse; `Some(usize::MAX)`: panic in request.
    sizes: Vec<Option<usize>>,
    misalign: usize,
    next: usize,
    /// Lent memory by the address lent.
    lent: HashMap<usize, Box<[u8]>>,
    /// Panic in the next `complete` (after taking the buffer back).
    panic_in_complete: bool,
}

#[derive(Default)]
struct Tool {
    lending: Mutex<Lending>,
    delivered: [AtomicU64; pti_view_kind::COUNT],
    /// What went wrong inside a callback (where a panic would be caught by pti-core).
    errors: Mutex<Vec<String>>,
}

impl Tool {
    fn lending(&self) -> MutexGuard<'_, Lending> {
        self.lending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn error(&self, e: String) {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(e);
    }
}

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        let mut l = self.lending();
        let size = if l.sizes.is_empty() {
            Some(4096)
        } else {
            let i = l.next % l.sizes.len();
            l.next += 1;
            l.sizes[i]
        };
        let size = match size {
            None => return None,
            Some(usize::MAX) => {
                drop(l);
                hostile_panic("request");
            }
            Some(size) => size,
        };
        let misalign = l.misalign;
        // At least one byte: two empty boxes would share one (dangling) address.
        let mut memory = vec![0u8; (size + misalign).max(1)].into_boxed_slice();
        let p = memory.as_mut_ptr().wrapping_add(misalign);
        l.lent.insert(p as usize, memory);
        // SAFETY: `size` bytes at `p` lie in `memory`, which the tool keeps untouched until
        // `complete` gives the buffer back.
        unsafe { Buffer::from_raw(p, size) }
    }

    fn complete(&self, filled: FilledBuffer) {
        let buffer = filled.buffer();
        let (p, len, used) = (buffer.as_ptr(), buffer.len(), filled.used());
        let memory = self.lending().lent.remove(&(p as usize));
        if memory.is_none() {
            self.error(format!(
                "complete: buffer {p:p} was not lent, or came back twice"
            ));
            return;
        }
        if used > len {
            self.error(format!("complete: used {used} > len {len}"));
        } else {
            let mut current = None;
            loop {
                // SAFETY: the buffer is ours, initialised (zeroed) and readable for `len` bytes.
                match unsafe { view::next_record_raw(p, used, current) } {
                    Ok(Some(at)) => {
                        // SAFETY: the walk checked that a whole record lies at `at`.
                        let raw = unsafe { p.add(at).cast::<u32>().read_unaligned() };
                        match pti_view_kind::from_raw(raw) {
                            Some(kind) => {
                                self.delivered[kind.index()].fetch_add(1, Ordering::Relaxed);
                            }
                            None => self.error(format!("complete: record of kind {raw}")),
                        }
                        current = Some(at);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        self.error(format!("complete: a buffer libpti filled: {e}"));
                        break;
                    }
                }
            }
        }
        drop(memory);
        let mut l = self.lending();
        if std::mem::take(&mut l.panic_in_complete) {
            drop(l);
            hostile_panic("complete");
        }
    }
}

fn tool() -> &'static Arc<Tool> {
    static TOOL: OnceLock<Arc<Tool>> = OnceLock::new();
    TOOL.get_or_init(|| {
        let tool = Arc::new(Tool::default());
        session::set_buffer_callbacks(tool.clone());
        tool
    })
}

// === subscribers ===

#[derive(Default)]
struct Checks {
    gone: AtomicBool,
    flush: AtomicBool,
    self_destruct: AtomicBool,
    panic: AtomicBool,
    id: AtomicU64,
    after_gone: AtomicUsize,
}

fn subscriber(checks: &Arc<Checks>) -> Option<Subscriber> {
    let c = checks.clone();
    let s = Subscriber::new(move |event| {
        let Event::ApiCall { .. } = event else {
            return;
        };
        if c.gone.load(Ordering::SeqCst) {
            c.after_gone.fetch_add(1, Ordering::SeqCst);
        }
        if c.flush.swap(false, Ordering::SeqCst)
            && let Err(e) = session::flush()
        {
            tool().error(format!("flush from a callback: {e}"));
        }
        if c.self_destruct.swap(false, Ordering::SeqCst) {
            let _ = session::unsubscribe(SubscriberId::from_raw(c.id.load(Ordering::SeqCst)));
        }
        if c.panic.swap(false, Ordering::SeqCst) {
            hostile_panic("callback");
        }
    });
    match s {
        Ok(s) => {
            checks.id.store(s.id().to_raw(), Ordering::SeqCst);
            Some(s)
        }
        Err(e) => {
            assert_eq!(e.code(), ResultCode::ErrorTooManySubscribers, "{e}");
            None
        }
    }
}

// === the model ===

#[derive(Default)]
struct Model {
    enabled: [bool; pti_view_kind::COUNT],
    depth: [usize; PUSHABLE.len()],
    driver: u64,
    runtime: u64,
    external: u64,
}

impl Model {
    fn on(&self, kind: pti_view_kind) -> bool {
        self.enabled[kind.index()]
    }

    /// A top-level call of `CALLS[call]`.
    fn call(&mut self, call: usize) {
        let (group, _) = CALLS[call];
        if group == ApiGroup::Sycl {
            self.runtime += u64::from(self.on(pti_view_kind::PTI_VIEW_RUNTIME_API));
        }
        // Every call makes one driver call (the SYCL call nests one, which shares its ID).
        self.driver += u64::from(self.on(pti_view_kind::PTI_VIEW_DRIVER_API));
        if self.on(pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION) {
            self.external += self.depth.iter().sum::<usize>() as u64;
        }
    }
}

/// Makes traced call `CALLS[call]`; `in_body` runs inside its body (inside the nested call for
/// SYCL).
fn traced_call(call: usize, status: i32, in_body: &dyn Fn()) {
    let (group, id) = CALLS[call];
    let result = dispatch::simulate_call(group, id, CallInfo::default(), || {
        if group == ApiGroup::Sycl {
            let inner = dispatch::simulate_call(
                ApiGroup::OpenCl,
                opencl::clEnqueueNDRangeKernel,
                CallInfo::default(),
                || {
                    in_body();
                    status ^ 1
                },
            );
            assert_eq!(inner.ok(), Some(status ^ 1), "the nested call's result");
        } else {
            in_body();
        }
        status
    });
    assert_eq!(result.ok(), Some(status), "the traced call's result");
}

// === the input ===

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }
}

fn counts(kinds: &[pti_view_kind]) -> Vec<(u64, u64)> {
    kinds
        .iter()
        .map(|k| (view::emitted_count(*k), view::dropped_count(*k)))
        .collect()
}

fuzz_target!(|input: &[u8]| {
    install_panic_hook();
    let tool = tool();
    let kinds = all_kinds();
    let real: Vec<pti_view_kind> = kinds.iter().copied().filter(|k| is_real(*k)).collect();

    // Reset: whatever an earlier input left goes out before counting starts.
    for k in &real {
        session::disable_view(*k).unwrap();
    }
    session::reset_api_filters();
    *tool.lending() = Lending::default();
    session::flush().unwrap();
    for d in &tool.delivered {
        d.store(0, Ordering::SeqCst);
    }
    tool.errors.lock().unwrap().clear();
    let before = counts(&real);

    let mut model = Model::default();
    let mut live: Vec<(Subscriber, Arc<Checks>)> = Vec::new();
    let mut all_checks: Vec<Arc<Checks>> = Vec::new();
    let mut next_id = 0u64;
    let mut bytes = Bytes(input);
    let pick = |i: u8, len: usize| i as usize % len.max(1);

    while let Some(op) = bytes.byte() {
        let arg = bytes.byte().unwrap_or(0);
        match op % 16 {
            0 | 1 => {
                let kind = kinds[arg as usize % kinds.len()];
                let on = op % 16 == 0;
                let r = if on {
                    session::enable_view(kind)
                } else {
                    session::disable_view(kind)
                };
                if is_real(kind) {
                    r.unwrap_or_else(|e| panic!("switching {kind:?} to {on}: {e}"));
                    model.enabled[kind.index()] = on;
                } else {
                    let e = r.expect_err("a kind that is not one");
                    assert_eq!(e.code(), ResultCode::ErrorBadArgument, "{kind:?}: {e}");
                }
            }
            2 => session::flush().unwrap(),
            3..=5 => {
                let call = arg as usize % CALLS.len();
                traced_call(call, arg as i32, &|| {});
                model.call(call);
            }
            6 => {
                // A flush from inside a traced call's body.
                let call = arg as usize % CALLS.len();
                traced_call(call, -(arg as i32), &|| session::flush().unwrap());
                model.call(call);
            }
            7 | 8 => {
                let k = arg as usize % PUSHABLE.len();
                next_id += 1;
                view::push_external_correlation_id(PUSHABLE[k], next_id).unwrap();
                model.depth[k] += 1;
            }
            9 => {
                let k = arg as usize % PUSHABLE.len();
                match view::pop_external_correlation_id(PUSHABLE[k]) {
                    Ok(_) => {
                        assert!(model.depth[k] > 0, "popped from an empty stack");
                        model.depth[k] -= 1;
                    }
                    Err(e) => {
                        assert_eq!(e.code(), ResultCode::ErrorExternalIdQueueEmpty, "{e}");
                        assert_eq!(model.depth[k], 0, "the stack was not empty");
                    }
                }
            }
            10 if live.len() < 8 => {
                let checks = Arc::new(Checks::default());
                if let Some(s) = subscriber(&checks) {
                    all_checks.push(checks.clone());
                    // Some subscribers listen to everything, others to one function.
                    if arg & 1 == 0 {
                        let _ = s.enable_domain(Domain::DriverApi, true);
                        let _ = s.enable_domain(Domain::RuntimeApi, true);
                    } else {
                        let (g, id) = CALLS[(arg >> 1) as usize % CALLS.len()];
                        let _ = s.enable(g, id, true);
                    }
                    live.push((s, checks));
                }
            }
            11 if !live.is_empty() => {
                let (s, checks) = live.swap_remove(pick(arg, live.len()));
                // Fails only if it removed itself from a callback.
                if s.unsubscribe().is_ok() {
                    checks.gone.store(true, Ordering::SeqCst);
                }
            }
            12 if !live.is_empty() => {
                let c = &live[pick(arg >> 2, live.len())].1;
                match arg & 3 {
                    0 => c.flush.store(true, Ordering::SeqCst),
                    1 => c.self_destruct.store(true, Ordering::SeqCst),
                    _ => c.panic.store(true, Ordering::SeqCst),
                }
            }
            13 if !live.is_empty() => {
                let s = &live[pick(arg >> 3, live.len())].0;
                let (g, id) = CALLS[(arg >> 1) as usize % CALLS.len()];
                // Fails only for a subscriber that removed itself.
                let _ = s.enable(g, id, arg & 1 == 1);
            }
            14 => {
                // The tool's lending: arg % 8 + 1 sizes from the next bytes, and a misalignment.
                let n = arg as usize % 8 + 1;
                let mut sizes = Vec::with_capacity(n);
                for _ in 0..n {
                    let b = bytes.byte().unwrap_or(0);
                    sizes.push(match b {
                        255 => None,
                        254 => Some(usize::MAX),
                        b => Some(b as usize * 3),
                    });
                }
                let mut l = tool.lending();
                l.sizes = sizes;
                l.next = 0;
                l.misalign = (arg >> 4) as usize % 8;
            }
            15 => tool.lending().panic_in_complete = true,
            _ => {}
        }
    }

    // The end: subscribers gone, IDs popped, every record handed back.
    for (s, checks) in live.drain(..) {
        if s.unsubscribe().is_ok() {
            checks.gone.store(true, Ordering::SeqCst);
        }
    }
    for (k, kind) in PUSHABLE.iter().enumerate() {
        for _ in 0..model.depth[k] {
            view::pop_external_correlation_id(*kind).unwrap();
        }
        assert_eq!(
            view::pop_external_correlation_id(*kind).map_err(|e| e.code()),
            Err(ResultCode::ErrorExternalIdQueueEmpty)
        );
    }
    tool.lending().panic_in_complete = false;
    for k in &real {
        session::disable_view(*k).unwrap();
    }
    session::flush().unwrap();

    let errors = std::mem::take(&mut *tool.errors.lock().unwrap());
    assert!(errors.is_empty(), "inside callbacks: {errors:#?}");
    assert!(
        tool.lending().lent.is_empty(),
        "{} buffers still lent after the final flush",
        tool.lending().lent.len()
    );
    for c in &all_checks {
        assert_eq!(
            c.after_gone.load(Ordering::SeqCst),
            0,
            "a callback ran after unsubscribe returned"
        );
    }
    let after = counts(&real);
    for (i, kind) in real.iter().enumerate() {
        let emitted = after[i].0 - before[i].0;
        let dropped = after[i].1 - before[i].1;
        let delivered = tool.delivered[kind.index()].load(Ordering::SeqCst);
        assert_eq!(
            emitted,
            delivered + dropped,
            "{kind:?}: emitted {emitted} != delivered {delivered} + dropped {dropped}"
        );
        let expected = match kind {
            pti_view_kind::PTI_VIEW_DRIVER_API => Some(model.driver),
            pti_view_kind::PTI_VIEW_RUNTIME_API => Some(model.runtime),
            pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION => Some(model.external),
            _ => None,
        };
        if let Some(n) = expected {
            assert_eq!(
                emitted, n,
                "{kind:?}: libpti emitted {emitted}, the calls made {n}"
            );
        }
    }
});
