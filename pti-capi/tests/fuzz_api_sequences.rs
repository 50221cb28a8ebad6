//! Fuzzing the C ABI with random sequences of calls, for a fixed time (`PTI_FUZZ_SECONDS`,
//! default 20 s): every exported `pti*` function, with valid and invalid handles, known and
//! unknown enum values, NULL and valid pointers; simulated traced calls (`ptiSimulateApiCall`,
//! nested ones too) under a tool whose buffers have random sizes and alignments (or are
//! refused); views enabled and disabled, flushes, API-record filters, subscribers coming and
//! going, external IDs pushed and popped.
//!
//! A model of the state the calls build gives the exact result every call must return (all of
//! them documented codes of `pti.h`), and the exact number of records of each kind the calls
//! made while the kind was enabled must produce: after each case's final flush, for every kind,
//! records delivered to `buffer_completed` + the growth of `ptiViewGetDroppedRecordCount(kind)`
//! = records expected. That holds exactly for every kind but PTI_VIEW_COLLECTION_OVERHEAD, whose
//! records depend on elapsed time (one per 1 ms window of traced calls, one per flush): for it
//! the check is exact (0) in cases that never enable it, and is skipped otherwise. Callbacks
//! are checked to reach only live subscribers, with ENTER and EXIT paired (same function and
//! correlation ID, nested calls properly nested); their number is not modelled (it depends on
//! every subscriber's per-domain and per-function enables, which this does not track).
//!
//! The state is process-global: the cases run one after another on one thread, each starting
//! from a reset (subscribers gone, views disabled, ID stacks empty, filters reset, buffers
//! flushed). A failure prints proptest's minimal (shrunk) sequence and the seed
//! (`PTI_FUZZ_SEED` repeats a run).

use core::ffi::{CStr, c_char, c_void};
use core::ptr;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use pti::callback::*;
use pti::ext::*;
use pti::pti::*;
use pti::raw::*;
use pti::version::*;
use pti::view::*;
use pti_core::view::abi::{pti_view_record_api, pti_view_record_external_correlation};
use pti_core::{ApiClass, ApiGroup, ids};

/// Cases per proptest run; runs repeat until the time is spent.
const BATCH: u32 = 64;

/// The raw view kinds that exist (INVALID and RESERVED excluded).
const KINDS: [u32; 14] = [
    1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 0x10001, 0x10002, 0x10003,
];
const DRIVER_API: u32 = 3;
const OVERHEAD: u32 = 5;
const RUNTIME_API: u32 = 6;
const EXTERNAL: u32 = 7;

const ALL: u32 = 0x7fff_ffff;

fn kind_index(kind: u32) -> usize {
    KINDS.iter().position(|k| *k == kind).expect("a known kind")
}

/// The codes `include/pti/pti.h` documents for `pti_result`.
fn documented_results() -> &'static HashSet<u32> {
    static CODES: OnceLock<HashSet<u32>> = OnceLock::new();
    CODES.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/pti/pti.h");
        let text = std::fs::read_to_string(path).expect("include/pti/pti.h");
        let body = text
            .split("enum _pti_result")
            .nth(1)
            .and_then(|t| t.split("} pti_result;").next())
            .expect("enum pti_result in pti.h");
        let codes: HashSet<u32> = body
            .lines()
            .filter_map(|l| {
                let (name, value) = l.trim().trim_end_matches(',').split_once(" = ")?;
                name.starts_with("PTI_").then(|| value.parse().ok())?
            })
            .collect();
        assert!(codes.len() >= 15, "pti_result codes in pti.h: {codes:?}");
        codes
    })
}

// === the tool ===

/// How the tool answers buffer_requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Requested {
    /// Buffers of the case's sizes and misalignments, in turn.
    Sized,
    /// No buffer: every record is dropped.
    Refused,
}

/// What the tool's callbacks saw and hold.
#[derive(Default)]
struct Tool {
    /// (size, misalignment) of the buffers to lend, in turn.
    sizes: Vec<(usize, usize)>,
    next: usize,
    /// Lent buffers by address: the allocation and the size lent.
    lent: HashMap<usize, (Vec<u8>, usize)>,
    /// Records delivered, per kind (index of [`KINDS`]).
    delivered: [u64; KINDS.len()],
    /// Live subscribers' tokens (their user_data), and the calls open in each.
    live: HashMap<u64, Vec<(u32, u32, u32)>>,
    callbacks: u64,
    criticals: u64,
    /// What went wrong inside a callback (which must not panic across the C ABI).
    errors: Vec<String>,
}

fn tool() -> MutexGuard<'static, Tool> {
    static TOOL: OnceLock<Mutex<Tool>> = OnceLock::new();
    TOOL.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn requested_sized(buffer: *mut *mut u8, size: *mut usize) {
    let mut t = tool();
    let (len, misalign) = if t.sizes.is_empty() {
        (4096, 0)
    } else {
        let i = t.next % t.sizes.len();
        t.next += 1;
        t.sizes[i]
    };
    let mut memory = vec![0u8; len + 8];
    let base = memory.as_mut_ptr() as usize;
    // `misalign` bytes past an 8-aligned address.
    let start = base.div_ceil(8) * 8 + misalign - base;
    let start = if start + len > memory.len() {
        start - 8
    } else {
        start
    };
    let p = memory.as_mut_ptr().wrapping_add(start);
    t.lent.insert(p as usize, (memory, len));
    // SAFETY: libpti passes pointers to writable storage.
    unsafe {
        *buffer = p;
        *size = len;
    }
}

unsafe extern "C" fn requested_refused(buffer: *mut *mut u8, size: *mut usize) {
    // SAFETY: libpti passes pointers to writable storage.
    unsafe {
        *buffer = ptr::null_mut();
        *size = 0;
    }
}

unsafe extern "C" fn completed(buffer: *mut u8, size: usize, used: usize) {
    let mut t = tool();
    let Some((memory, len)) = t.lent.remove(&(buffer as usize)) else {
        t.errors.push(format!(
            "buffer_completed got {buffer:p}, which the tool did not lend"
        ));
        return;
    };
    if size != len || used > size {
        t.errors.push(format!(
            "buffer_completed: size {size} (lent {len}), used {used}"
        ));
        return;
    }
    let mut record: *mut pti_view_record_base = ptr::null_mut();
    let mut steps = 0;
    loop {
        // SAFETY: the buffer is ours, readable for `used` bytes; `record` is NULL or a record.
        let r = unsafe { ptiViewGetNextRecord(buffer, used, &mut record) };
        if r == pti_result::PTI_STATUS_END_OF_BUFFER {
            break;
        }
        if r != pti_result::PTI_SUCCESS {
            t.errors.push(format!(
                "walking a buffer libpti filled: {r:?} after {steps} records"
            ));
            break;
        }
        steps += 1;
        // SAFETY: the walk hands out whole records within the buffer.
        let kind = unsafe { ptr::read_unaligned(record.cast::<u32>()) };
        let Some(i) = KINDS.iter().position(|k| *k == kind) else {
            t.errors.push(format!("a record of kind {kind}"));
            break;
        };
        t.delivered[i] += 1;
        if kind == DRIVER_API || kind == RUNTIME_API {
            // SAFETY: a whole API record (the walk checked its size), 8-aligned.
            let api = unsafe { &*record.cast::<pti_view_record_api>() };
            let group = api._api_group as u32;
            let group_ok = if kind == DRIVER_API {
                group == 1 || group == 2
            } else {
                group == 3
            };
            if !group_ok
                || !group_of(group).is_some_and(|g| ids::is_valid(g, api._api_id))
                || api._start_timestamp > api._end_timestamp
                || api._correlation_id == 0
            {
                t.errors.push(format!("a bad API record: {api:?}"));
            }
        }
        if kind == EXTERNAL {
            // SAFETY: a whole external-correlation record.
            let ext = unsafe { &*record.cast::<pti_view_record_external_correlation>() };
            if !(1..=5).contains(&(ext._external_kind as u32)) || ext._correlation_id == 0 {
                t.errors.push(format!("a bad external record: {ext:?}"));
            }
        }
    }
    drop(memory);
}

unsafe extern "C" fn on_callback(
    user_data: *mut c_void,
    domain: pti_callback_domain,
    group: pti_api_group_id,
    api_id: u32,
    cb_data: *mut c_void,
) {
    let token = user_data as u64;
    let mut t = tool();
    t.callbacks += 1;
    let domain = domain as u32;
    let Some(open) = t.live.get_mut(&token) else {
        t.errors.push(format!(
            "a callback (domain {domain}) for subscriber token {token}, not live"
        ));
        return;
    };
    if domain == 3 {
        t.criticals += 1;
        return;
    }
    // SAFETY: for the API domains, cb_data is the call's callback data.
    let data = unsafe { &*cb_data.cast::<pti_apicall_callback_data>() };
    let call = (group as u32, api_id, data._correlation_id);
    match data._site {
        pti_callback_site::PTI_SITE_ENTER => open.push(call),
        pti_callback_site::PTI_SITE_EXIT => {
            if open.pop() != Some(call) {
                t.errors.push(format!(
                    "EXIT {call:?} for token {token} does not close its ENTER"
                ));
            }
        }
    }
}

static CLOCK: AtomicU64 = AtomicU64::new(1_000_000);

unsafe extern "C" fn tool_clock() -> u64 {
    CLOCK.fetch_add(997, Ordering::Relaxed)
}

// === the calls ===

/// A subscriber handle to pass.
#[derive(Clone, Debug)]
enum Handle {
    /// One of the live subscribers (NULL if none).
    Live(usize),
    /// One that was unsubscribed (a never-issued value if none).
    Stale(usize),
    Null,
    /// Any value (taken for what it is if it happens to be an issued handle).
    Any(u64),
}

/// An API ID to pass: one of the group's (or of a random traced group's, for a bad group), or
/// any number.
#[derive(Clone, Debug)]
enum Id {
    Valid(usize),
    Any(u32),
}

#[derive(Clone, Debug)]
enum Body {
    None,
    /// Returns this status.
    Status(i32),
    /// Makes a simulated call of its own, then returns the status.
    Nested {
        group: u32,
        id: Id,
        status: i32,
    },
}

#[derive(Clone, Debug)]
enum Op {
    Subscribe {
        null_out: bool,
        null_callback: bool,
    },
    Unsubscribe(Handle),
    EnableDomain {
        enable: u32,
        handle: Handle,
        domain: u32,
    },
    Enable {
        enable: u32,
        handle: Handle,
        group: u32,
        id: Id,
    },
    SetCallbacks {
        requested: Option<Requested>,
        null_completed: bool,
    },
    SetBufferSizes(Vec<(usize, usize)>),
    ViewEnable(u32),
    ViewDisable(u32),
    Flush,
    Push {
        kind: u32,
        id: u64,
    },
    Pop {
        kind: u32,
        null_out: bool,
    },
    Simulate {
        group: u32,
        id: Id,
        body: Body,
        kernel_name: bool,
        null_return_code: bool,
    },
    FilterApi {
        runtime: bool,
        enable: u32,
        group: u32,
        id: Id,
    },
    FilterClass {
        runtime: bool,
        enable: u32,
        class: u32,
        group: u32,
    },
    CriticalCount {
        event: u32,
        null_out: bool,
    },
    DroppedCount {
        kind: u32,
        null_out: bool,
    },
    PendingCount {
        null_out: bool,
    },
    InterceptedCount {
        group: u32,
        null_out: bool,
    },
    ApiIdName {
        group: u32,
        id: Id,
        null_out: bool,
    },
    Strings {
        result: u32,
        overhead: u32,
        memory: u32,
        memcpy: u32,
    },
    Version,
    Timestamp,
    SetTimestampCallback {
        null: bool,
    },
    GpuLocalAvailable,
}

fn group() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 1u32..=3, 1 => Just(0u32), 1 => 4u32..=5, 1 => Just(ALL), 1 => any::<u32>()]
}

fn view_kind() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => prop::sample::select(vec![DRIVER_API, RUNTIME_API, EXTERNAL]),
        2 => prop::sample::select(KINDS.to_vec()),
        1 => prop::sample::select(vec![0u32, 4, 13, 0x10000, 0x10002]),
        1 => any::<u32>(),
    ]
}

fn external_kind() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 1u32..=5, 1 => Just(0u32), 1 => 6u32..10, 1 => any::<u32>()]
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        6 => any::<usize>().prop_map(Id::Valid),
        1 => prop_oneof![Just(u32::MAX), Just(0u32), any::<u32>(), 0u32..2000].prop_map(Id::Any),
    ]
}

fn handle() -> impl Strategy<Value = Handle> {
    prop_oneof![
        6 => any::<usize>().prop_map(Handle::Live),
        2 => any::<usize>().prop_map(Handle::Stale),
        1 => Just(Handle::Null),
        1 => prop_oneof![1u64..64, any::<u64>()].prop_map(Handle::Any),
    ]
}

fn enable_flag() -> impl Strategy<Value = u32> {
    prop_oneof![4 => Just(1u32), 3 => Just(0u32), 1 => any::<u32>()]
}

fn sizes() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec(
        (
            prop_oneof![
                1 => Just(0usize),
                2 => 1usize..200,
                1 => Just(64usize),
                2 => 200usize..1024,
                1 => Just(4096usize),
            ],
            0usize..8,
        ),
        1..5,
    )
}

fn op() -> impl Strategy<Value = Op> {
    let body = prop_oneof![
        2 => Just(Body::None),
        2 => any::<i32>().prop_map(Body::Status),
        2 => (group(), id(), any::<i32>())
            .prop_map(|(group, id, status)| Body::Nested { group, id, status }),
    ];
    prop_oneof![
        4 => (prop::bool::weighted(0.1), prop::bool::weighted(0.1))
            .prop_map(|(null_out, null_callback)| Op::Subscribe { null_out, null_callback }),
        2 => handle().prop_map(Op::Unsubscribe),
        5 => (enable_flag(), handle(), prop_oneof![6 => 1u32..=3, 1 => any::<u32>()])
            .prop_map(|(enable, handle, domain)| Op::EnableDomain { enable, handle, domain }),
        3 => (enable_flag(), handle(), group(), id())
            .prop_map(|(enable, handle, group, id)| Op::Enable { enable, handle, group, id }),
        2 => (
            prop_oneof![
                3 => Just(Some(Requested::Sized)),
                1 => Just(Some(Requested::Refused)),
                1 => Just(None)
            ],
            prop::bool::weighted(0.15)
        )
            .prop_map(|(requested, null_completed)| Op::SetCallbacks {
                requested,
                null_completed
            }),
        1 => sizes().prop_map(Op::SetBufferSizes),
        8 => view_kind().prop_map(Op::ViewEnable),
        2 => view_kind().prop_map(Op::ViewDisable),
        2 => Just(Op::Flush),
        3 => (external_kind(), any::<u64>()).prop_map(|(kind, id)| Op::Push { kind, id }),
        2 => (external_kind(), prop::bool::weighted(0.2))
            .prop_map(|(kind, null_out)| Op::Pop { kind, null_out }),
        16 => (group(), id(), body, any::<bool>(), prop::bool::weighted(0.2)).prop_map(
            |(group, id, body, kernel_name, null_return_code)| Op::Simulate {
                group,
                id,
                body,
                kernel_name,
                null_return_code
            }
        ),
        2 => (any::<bool>(), enable_flag(), group(), id())
            .prop_map(|(runtime, enable, group, id)| Op::FilterApi { runtime, enable, group, id }),
        1 => (
            any::<bool>(),
            enable_flag(),
            prop_oneof![3 => prop::sample::select(vec![0u32, 1, 2, ALL]), 1 => any::<u32>()],
            group()
        )
            .prop_map(|(runtime, enable, class, group)| Op::FilterClass {
                runtime,
                enable,
                class,
                group
            }),
        1 => (
            prop_oneof![3 => prop::sample::select(vec![0u32, 3, 5, 51, 300, 302]), 1 => any::<u32>()],
            prop::bool::weighted(0.2)
        )
            .prop_map(|(event, null_out)| Op::CriticalCount { event, null_out }),
        1 => (view_kind(), prop::bool::weighted(0.2))
            .prop_map(|(kind, null_out)| Op::DroppedCount { kind, null_out }),
        1 => prop::bool::weighted(0.2).prop_map(|null_out| Op::PendingCount { null_out }),
        1 => (group(), prop::bool::weighted(0.2))
            .prop_map(|(group, null_out)| Op::InterceptedCount { group, null_out }),
        1 => (group(), id(), prop::bool::weighted(0.2))
            .prop_map(|(group, id, null_out)| Op::ApiIdName { group, id, null_out }),
        1 => (
            prop_oneof![0u32..10, 50u32..53, 200u32..201, 300u32..304, any::<u32>()],
            prop_oneof![0u32..7, any::<u32>()],
            prop_oneof![0u32..6, any::<u32>()],
            prop_oneof![0u32..10, any::<u32>()]
        )
            .prop_map(|(result, overhead, memory, memcpy)| Op::Strings {
                result,
                overhead,
                memory,
                memcpy
            }),
        1 => Just(Op::Version),
        1 => Just(Op::Timestamp),
        1 => prop::bool::weighted(0.3).prop_map(|null| Op::SetTimestampCallback { null }),
        1 => Just(Op::GpuLocalAvailable),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    sizes: Vec<(usize, usize)>,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (sizes(), prop::collection::vec(op(), 1..80)).prop_map(|(sizes, ops)| Case { sizes, ops })
}

// === the model ===

fn group_of(raw: u32) -> Option<ApiGroup> {
    match raw {
        1 => Some(ApiGroup::LevelZero),
        2 => Some(ApiGroup::OpenCl),
        3 => Some(ApiGroup::Sycl),
        _ => None,
    }
}

fn valid_ids(group: ApiGroup) -> &'static [u32] {
    static IDS: OnceLock<Vec<Vec<u32>>> = OnceLock::new();
    let all = IDS.get_or_init(|| {
        ApiGroup::ALL
            .iter()
            .map(|g| ids::iter(*g).map(|(id, _)| id).collect())
            .collect()
    });
    &all[ApiGroup::ALL.iter().position(|g| *g == group).unwrap()]
}

fn resolve(id: &Id, group: u32) -> u32 {
    match *id {
        Id::Any(v) => v,
        Id::Valid(i) => {
            let g = group_of(group).unwrap_or(ApiGroup::ALL[i % 3]);
            let ids = valid_ids(g);
            ids[i % ids.len()]
        }
    }
}

/// State that outlives a case (libpti's is process-global).
#[derive(Default)]
struct Persistent {
    callbacks_set: bool,
    requested: Option<Requested>,
    /// Handle value -> token, of every subscriber ever created.
    issued: HashMap<u64, u64>,
    next_token: u64,
}

fn persistent() -> MutexGuard<'static, Persistent> {
    static STATE: OnceLock<Mutex<Persistent>> = OnceLock::new();
    STATE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The model of one case.
struct Model {
    live: Vec<u64>,
    stale: Vec<u64>,
    enabled: HashSet<u32>,
    overhead_touched: bool,
    stacks: [Vec<u64>; 5],
    /// Per traced group: granular filtering, and the functions recorded then.
    granular: [bool; 3],
    recorded: [HashSet<u32>; 3],
    expected: [u64; KINDS.len()],
}

impl Model {
    fn new() -> Self {
        Model {
            live: Vec::new(),
            stale: Vec::new(),
            enabled: HashSet::new(),
            overhead_touched: false,
            stacks: Default::default(),
            granular: [false; 3],
            recorded: Default::default(),
            expected: [0; KINDS.len()],
        }
    }

    fn handle(&self, h: &Handle) -> (u64, bool) {
        match *h {
            Handle::Live(i) if !self.live.is_empty() => (self.live[i % self.live.len()], true),
            Handle::Stale(i) if !self.stale.is_empty() => (self.stale[i % self.stale.len()], false),
            Handle::Live(_) | Handle::Null => (0, false),
            Handle::Stale(_) => (u64::MAX - 1, self.live.contains(&(u64::MAX - 1))),
            Handle::Any(v) => (v, self.live.contains(&v)),
        }
    }

    fn is_recorded(&self, g: ApiGroup, id: u32) -> bool {
        let i = g as usize - 1;
        !self.granular[i] || self.recorded[i].contains(&id)
    }

    fn make_granular(&mut self, g: ApiGroup) {
        let i = g as usize - 1;
        if !self.granular[i] {
            self.granular[i] = true;
            self.recorded[i].clear();
        }
    }

    /// The records one traced call writes (`inherited`: it shares its runtime call's ID).
    fn traced_call(&mut self, g: ApiGroup, id: u32, inherited: bool) {
        let view = if g == ApiGroup::Sycl {
            RUNTIME_API
        } else {
            DRIVER_API
        };
        if self.enabled.contains(&view) && self.is_recorded(g, id) {
            self.expected[kind_index(view)] += 1;
        }
        if self.enabled.contains(&EXTERNAL) && !inherited {
            let pushed: usize = self.stacks.iter().map(Vec::len).sum();
            self.expected[kind_index(EXTERNAL)] += pushed as u64;
        }
    }
}

/// Nested-call results, written by the body.
struct NestedCall {
    group: u32,
    id: u32,
    status: i32,
    result: Option<pti_result>,
    return_code: i32,
}

unsafe extern "C" fn body_status(user_data: *mut c_void) -> i32 {
    // SAFETY: the caller passes a pointer to an i32.
    unsafe { *user_data.cast::<i32>() }
}

unsafe extern "C" fn body_nested(user_data: *mut c_void) -> i32 {
    // SAFETY: the caller passes a pointer to a NestedCall, alive for the call.
    let n = unsafe { &mut *user_data.cast::<NestedCall>() };
    let mut rc = i32::MIN;
    // SAFETY: valid pointers or NULL, a NULL body.
    let r = unsafe {
        ptiSimulateApiCall(
            RawApiGroup(n.group),
            n.id,
            ptr::null(),
            c"nested".as_ptr(),
            ptr::null_mut(),
            None,
            ptr::null_mut(),
            &mut rc,
        )
    };
    n.result = Some(r);
    n.return_code = rc;
    n.status
}

fn code(r: pti_result) -> u32 {
    r as u32
}

const SUCCESS: u32 = pti_result::PTI_SUCCESS as u32;
const BAD: u32 = pti_result::PTI_ERROR_BAD_ARGUMENT as u32;
const BAD_API_ID: u32 = pti_result::PTI_ERROR_BAD_API_ID as u32;
const NOT_TRACED: u32 = pti_result::PTI_ERROR_TRACING_NOT_INITIALIZED as u32;

/// Checks a result against the expected one; `or_not_traced`: the call may attach a runtime
/// that cannot be traced here, which it reports (its change still stands).
fn expect(
    what: &str,
    got: pti_result,
    want: u32,
    or_not_traced: bool,
) -> Result<(), TestCaseError> {
    let got = code(got);
    prop_assert!(
        documented_results().contains(&got),
        "{}: undocumented result {}",
        what,
        got
    );
    let ok = got == want || (or_not_traced && want == SUCCESS && got == NOT_TRACED);
    prop_assert!(ok, "{}: returned {}, the model expects {}", what, got, want);
    Ok(())
}

fn string_ok(what: &str, s: *const c_char) -> Result<(), TestCaseError> {
    prop_assert!(!s.is_null(), "{} returned NULL", what);
    // SAFETY: libpti returns NUL-terminated static strings.
    let s = unsafe { CStr::from_ptr(s) };
    prop_assert!(
        !s.to_bytes().is_empty() && s.to_bytes().len() < 256,
        "{what}: {s:?}"
    );
    Ok(())
}

fn take_errors() -> Vec<String> {
    std::mem::take(&mut tool().errors)
}

/// Runs one op, checking its result and updating the model.
fn run_op(op: &Op, m: &mut Model) -> Result<(), TestCaseError> {
    match op {
        Op::Subscribe {
            null_out,
            null_callback,
        } => {
            let token = {
                let mut p = persistent();
                p.next_token += 1;
                p.next_token
            };
            let mut handle: pti_callback_subscriber = ptr::null_mut();
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut handle as *mut _
            };
            let callback: pti_callback_function = if *null_callback {
                None
            } else {
                Some(on_callback)
            };
            // Live before the call: nothing is enabled for it yet, so no callback comes early.
            tool().live.insert(token, Vec::new());
            // SAFETY: `out` is NULL or writable; the callback is safe to call from any thread.
            let r = unsafe { ptiCallbackSubscribe(out, callback, token as *mut c_void) };
            let want = if *null_out || *null_callback {
                BAD
            } else if m.live.len() >= 32 {
                pti_result::PTI_ERROR_TOO_MANY_SUBSCRIBERS as u32
            } else {
                SUCCESS
            };
            if code(r) == SUCCESS {
                let value = handle as u64;
                m.live.push(value);
                m.stale.retain(|v| *v != value);
                persistent().issued.insert(value, token);
            } else {
                tool().live.remove(&token);
            }
            expect("ptiCallbackSubscribe", r, want, false)?;
            prop_assert!(
                code(r) != SUCCESS || !handle.is_null(),
                "a NULL handle on success"
            );
        }
        Op::Unsubscribe(h) => {
            let (value, live) = m.handle(h);
            let r = ptiCallbackUnsubscribe(value as pti_callback_subscriber);
            if live {
                m.live.retain(|v| *v != value);
                m.stale.push(value);
                let token = persistent().issued.get(&value).copied();
                if let Some(token) = token {
                    let open = tool().live.remove(&token);
                    prop_assert!(
                        open.as_ref().is_none_or(|o| o.is_empty()),
                        "calls still open: {open:?}"
                    );
                }
            }
            expect(
                "ptiCallbackUnsubscribe",
                r,
                if live { SUCCESS } else { BAD },
                false,
            )?;
        }
        Op::EnableDomain {
            enable,
            handle,
            domain,
        } => {
            let (value, live) = m.handle(handle);
            let r = ptiCallbackEnableDomain(
                *enable,
                value as pti_callback_subscriber,
                RawDomain(*domain),
            );
            let want = if live && (1..=3).contains(domain) {
                SUCCESS
            } else {
                BAD
            };
            expect("ptiCallbackEnableDomain", r, want, false)?;
        }
        Op::Enable {
            enable,
            handle,
            group,
            id,
        } => {
            let (value, live) = m.handle(handle);
            let id = resolve(id, *group);
            let r = ptiCallbackEnable(
                *enable,
                value as pti_callback_subscriber,
                RawApiGroup(*group),
                id,
            );
            let want = match group_of(*group) {
                Some(g) if live => {
                    if ids::is_valid(g, id) {
                        SUCCESS
                    } else {
                        BAD_API_ID
                    }
                }
                _ => BAD,
            };
            let attaches = *enable != 0 && (*group == 1 || *group == 2);
            expect("ptiCallbackEnable", r, want, attaches)?;
        }
        Op::SetCallbacks {
            requested,
            null_completed,
        } => {
            let req: pti_fptr_buffer_requested = match requested {
                Some(Requested::Sized) => Some(requested_sized),
                Some(Requested::Refused) => Some(requested_refused),
                None => None,
            };
            let comp: pti_fptr_buffer_completed = if *null_completed {
                None
            } else {
                Some(completed)
            };
            let r = ptiViewSetCallbacks(req, comp);
            let ok = requested.is_some() && !*null_completed;
            if ok && code(r) == SUCCESS {
                let mut p = persistent();
                p.callbacks_set = true;
                p.requested = *requested;
            }
            expect(
                "ptiViewSetCallbacks",
                r,
                if ok { SUCCESS } else { BAD },
                false,
            )?;
        }
        Op::SetBufferSizes(sizes) => {
            let mut t = tool();
            t.sizes = sizes.clone();
            t.next = 0;
        }
        Op::ViewEnable(kind) => {
            let r = ptiViewEnable(RawViewKind(*kind));
            let want = if !KINDS.contains(kind) {
                BAD
            } else if !persistent().callbacks_set {
                pti_result::PTI_ERROR_NO_CALLBACKS_SET as u32
            } else {
                SUCCESS
            };
            if want == SUCCESS {
                m.enabled.insert(*kind);
                m.overhead_touched |= *kind == OVERHEAD;
            }
            expect("ptiViewEnable", r, want, false)?;
        }
        Op::ViewDisable(kind) => {
            let r = ptiViewDisable(RawViewKind(*kind));
            let want = if KINDS.contains(kind) { SUCCESS } else { BAD };
            m.enabled.remove(kind);
            expect("ptiViewDisable", r, want, false)?;
        }
        Op::Flush => expect("ptiFlushAllViews", ptiFlushAllViews(), SUCCESS, false)?,
        Op::Push { kind, id } => {
            let r = ptiViewPushExternalCorrelationId(RawExternalKind(*kind), *id);
            let want = if (1..=5).contains(kind) {
                m.stacks[*kind as usize - 1].push(*id);
                SUCCESS
            } else {
                BAD
            };
            expect("ptiViewPushExternalCorrelationId", r, want, false)?;
        }
        Op::Pop { kind, null_out } => {
            let mut value = u64::MAX;
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut value as *mut u64
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiViewPopExternalCorrelationId(RawExternalKind(*kind), out) };
            let (want, top) = if !(1..=5).contains(kind) {
                (BAD, None)
            } else {
                match m.stacks[*kind as usize - 1].pop() {
                    Some(top) => (SUCCESS, Some(top)),
                    None => (pti_result::PTI_ERROR_EXTERNAL_ID_QUEUE_EMPTY as u32, None),
                }
            };
            expect("ptiViewPopExternalCorrelationId", r, want, false)?;
            if let (Some(top), false) = (top, *null_out) {
                prop_assert_eq!(value, top, "popped the wrong ID");
            }
            if want != SUCCESS {
                prop_assert_eq!(value, u64::MAX, "*p_external_id written on failure");
            }
        }
        Op::Simulate {
            group,
            id,
            body,
            kernel_name,
            null_return_code,
        } => {
            let id = resolve(id, *group);
            let args = [0u64; 4];
            let mut status = match body {
                Body::Status(s) => *s,
                _ => 0i32,
            };
            let mut nested = None;
            let (body_fn, user_data): (pti_simulated_call_body, *mut c_void) = match body {
                Body::None => (None, ptr::null_mut()),
                Body::Status(_) => (Some(body_status), &mut status as *mut i32 as *mut c_void),
                Body::Nested {
                    group: ng,
                    id: nid,
                    status: s,
                } => {
                    let n = nested.insert(Box::new(NestedCall {
                        group: *ng,
                        id: resolve(nid, *ng),
                        status: *s,
                        result: None,
                        return_code: i32::MIN,
                    }));
                    (
                        Some(body_nested),
                        &mut **n as *mut NestedCall as *mut c_void,
                    )
                }
            };
            let mut rc = i32::MIN;
            let rc_ptr = if *null_return_code {
                ptr::null_mut()
            } else {
                &mut rc as *mut i32
            };
            let name = if *kernel_name {
                c"kernel".as_ptr()
            } else {
                ptr::null()
            };
            // SAFETY: valid or NULL pointers; the bodies are safe with their user data.
            let r = unsafe {
                ptiSimulateApiCall(
                    RawApiGroup(*group),
                    id,
                    args.as_ptr().cast(),
                    name,
                    0x1234 as pti_backend_ctx_t,
                    body_fn,
                    user_data,
                    rc_ptr,
                )
            };
            let valid = group_of(*group).map(|g| (g, ids::is_valid(g, id)));
            let want = match valid {
                None => BAD,
                Some((_, false)) => BAD_API_ID,
                Some((g, true)) => {
                    m.traced_call(g, id, false);
                    SUCCESS
                }
            };
            let ran = want == SUCCESS;
            expect("ptiSimulateApiCall", r, want, false)?;
            let want_rc = match body {
                Body::None => 0,
                Body::Status(s) => *s,
                Body::Nested { status, .. } => *status,
            };
            if ran && !*null_return_code {
                prop_assert_eq!(rc, want_rc, "*return_code");
            }
            if !ran {
                prop_assert_eq!(rc, i32::MIN, "*return_code written on failure");
            }
            if let Some(n) = nested {
                prop_assert_eq!(
                    n.result.is_some(),
                    ran,
                    "the body ran iff the call succeeded"
                );
                if let Some(result) = n.result {
                    let outer = group_of(*group).unwrap();
                    let want = match group_of(n.group).map(|g| (g, ids::is_valid(g, n.id))) {
                        None => BAD,
                        Some((_, false)) => BAD_API_ID,
                        Some((g, true)) => {
                            // A driver call inside a runtime call shares its ID, and its
                            // external records.
                            let inherited = outer == ApiGroup::Sycl && g != ApiGroup::Sycl;
                            m.traced_call(g, n.id, inherited);
                            SUCCESS
                        }
                    };
                    expect("nested ptiSimulateApiCall", result, want, false)?;
                    if want == SUCCESS {
                        prop_assert_eq!(n.return_code, 0, "nested *return_code");
                    }
                }
            }
        }
        Op::FilterApi {
            runtime,
            enable,
            group,
            id,
        } => {
            let id = resolve(id, *group);
            let r = if *runtime {
                ptiViewEnableRuntimeApi(*enable, RawApiGroup(*group), id)
            } else {
                ptiViewEnableDriverApi(*enable, RawApiGroup(*group), id)
            };
            let groups: &[ApiGroup] = match (*runtime, *group) {
                (false, 1) => &[ApiGroup::LevelZero],
                (false, 2) => &[ApiGroup::OpenCl],
                (false, ALL) => &[ApiGroup::LevelZero, ApiGroup::OpenCl],
                (true, 3 | ALL) => &[ApiGroup::Sycl],
                _ => &[],
            };
            let targets: Vec<ApiGroup> = groups
                .iter()
                .copied()
                .filter(|g| ids::is_valid(*g, id))
                .collect();
            let want = if groups.is_empty() {
                BAD
            } else if targets.is_empty() {
                BAD_API_ID
            } else {
                for g in &targets {
                    m.make_granular(*g);
                    let set = &mut m.recorded[*g as usize - 1];
                    if *enable != 0 {
                        set.insert(id);
                    } else {
                        set.remove(&id);
                    }
                }
                SUCCESS
            };
            let attaches = *enable != 0 && (*group == 1 || *group == 2);
            expect("ptiViewEnable{Driver,Runtime}Api", r, want, attaches)?;
        }
        Op::FilterClass {
            runtime,
            enable,
            class,
            group,
        } => {
            let r = if *runtime {
                ptiViewEnableRuntimeApiClass(*enable, RawApiClass(*class), RawApiGroup(*group))
            } else {
                ptiViewEnableDriverApiClass(*enable, RawApiClass(*class), RawApiGroup(*group))
            };
            let groups: &[ApiGroup] = match (*runtime, *group) {
                (false, 1) => &[ApiGroup::LevelZero],
                (false, 2) => &[ApiGroup::OpenCl],
                (false, ALL) => &[ApiGroup::LevelZero, ApiGroup::OpenCl],
                (true, 3 | ALL) => &[ApiGroup::Sycl],
                _ => &[],
            };
            let classes: &[ApiClass] = match *class {
                1 => &[ApiClass::GpuOperationCore],
                2 => &[ApiClass::HostOperationSynchronization],
                ALL => &ApiClass::ALL,
                _ => &[],
            };
            let want = if groups.is_empty() || classes.is_empty() {
                BAD
            } else {
                for g in groups {
                    m.make_granular(*g);
                    for c in classes {
                        for id in ids::class_members(*g, *c) {
                            let set = &mut m.recorded[*g as usize - 1];
                            if *enable != 0 {
                                set.insert(*id);
                            } else {
                                set.remove(id);
                            }
                        }
                    }
                }
                SUCCESS
            };
            let attaches = *enable != 0 && (*group == 1 || *group == 2);
            expect("ptiViewEnable{Driver,Runtime}ApiClass", r, want, attaches)?;
        }
        Op::CriticalCount { event, null_out } => {
            let mut n = u64::MAX;
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut n as *mut u64
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiCallbackGetCriticalEventCount(RawResult(*event), out) };
            let want = if !*null_out && documented_results().contains(event) {
                SUCCESS
            } else {
                BAD
            };
            expect("ptiCallbackGetCriticalEventCount", r, want, false)?;
            prop_assert!((want == SUCCESS) != (n == u64::MAX), "*count: {}", n);
        }
        Op::DroppedCount { kind, null_out } => {
            let mut n = u64::MAX;
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut n as *mut u64
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiViewGetDroppedRecordCount(RawViewKind(*kind), out) };
            let want = if !*null_out && KINDS.contains(kind) {
                SUCCESS
            } else {
                BAD
            };
            expect("ptiViewGetDroppedRecordCount", r, want, false)?;
            prop_assert!((want == SUCCESS) != (n == u64::MAX), "*count: {}", n);
        }
        Op::PendingCount { null_out } => {
            let mut n = u64::MAX;
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut n as *mut u64
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiViewGetPendingDeviceRecordCount(out) };
            expect(
                "ptiViewGetPendingDeviceRecordCount",
                r,
                if *null_out { BAD } else { SUCCESS },
                false,
            )?;
            if !*null_out {
                prop_assert_eq!(n, 0, "pending device records without a device");
            }
        }
        Op::InterceptedCount { group, null_out } => {
            let mut n = u32::MAX;
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut n as *mut u32
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiGetInterceptedFunctionCount(RawApiGroup(*group), out) };
            let want = if !*null_out && (1..=3).contains(group) {
                SUCCESS
            } else {
                BAD
            };
            expect("ptiGetInterceptedFunctionCount", r, want, false)?;
        }
        Op::ApiIdName {
            group,
            id,
            null_out,
        } => {
            let id = resolve(id, *group);
            let mut name: *const c_char = ptr::null();
            let out = if *null_out {
                ptr::null_mut()
            } else {
                &mut name as *mut *const c_char
            };
            // SAFETY: `out` is NULL or writable.
            let r = unsafe { ptiViewGetApiIdName(RawApiGroup(*group), id, out) };
            let want = match group_of(*group) {
                Some(g) if !*null_out => {
                    if ids::is_valid(g, id) {
                        SUCCESS
                    } else {
                        BAD_API_ID
                    }
                }
                _ => BAD,
            };
            expect("ptiViewGetApiIdName", r, want, false)?;
            if want == SUCCESS {
                string_ok("ptiViewGetApiIdName", name)?;
                // SAFETY: checked non-NULL; a static NUL-terminated string.
                let got = unsafe { CStr::from_ptr(name) };
                prop_assert_eq!(Some(got), ids::name(group_of(*group).unwrap(), id));
            } else {
                prop_assert!(name.is_null(), "*name written on failure");
            }
        }
        Op::Strings {
            result,
            overhead,
            memory,
            memcpy,
        } => {
            string_ok(
                "ptiResultTypeToString",
                ptiResultTypeToString(RawResult(*result)),
            )?;
            string_ok(
                "ptiViewOverheadKindToString",
                ptiViewOverheadKindToString(RawOverheadKind(*overhead)),
            )?;
            string_ok(
                "ptiViewMemoryTypeToString",
                ptiViewMemoryTypeToString(RawMemoryType(*memory)),
            )?;
            string_ok(
                "ptiViewMemcpyTypeToString",
                ptiViewMemcpyTypeToString(RawMemcpyType(*memcpy)),
            )?;
        }
        Op::Version => {
            let v = ptiVersion();
            string_ok("ptiVersionString", ptiVersionString())?;
            // SAFETY: checked above.
            let s = unsafe { CStr::from_ptr(ptiVersionString()) };
            let want = format!("{}.{}.{}", v._major, v._minor, v._patch);
            prop_assert!(
                s.to_str().is_ok_and(|s| s.starts_with(&want)),
                "{:?} vs {}",
                s,
                want
            );
        }
        Op::Timestamp => {
            let _ = ptiViewGetTimestamp();
        }
        Op::SetTimestampCallback { null } => {
            let f: pti_fptr_get_timestamp = if *null { None } else { Some(tool_clock) };
            let r = ptiViewSetTimestampCallback(f);
            expect(
                "ptiViewSetTimestampCallback",
                r,
                if *null { BAD } else { SUCCESS },
                false,
            )?;
        }
        Op::GpuLocalAvailable => {
            let r = code(ptiViewGPULocalAvailable());
            prop_assert!(
                r == SUCCESS || r == pti_result::PTI_ERROR_L0_LOCAL_PROFILING_NOT_SUPPORTED as u32,
                "ptiViewGPULocalAvailable: {}",
                r
            );
        }
    }
    let errors = take_errors();
    prop_assert!(errors.is_empty(), "in the tool's callbacks: {:?}", errors);
    let t = tool();
    for (token, open) in &t.live {
        prop_assert!(
            open.is_empty(),
            "token {}: calls left open {:?}",
            token,
            open
        );
    }
    Ok(())
}

fn dropped() -> [u64; KINDS.len()] {
    let mut out = [0; KINDS.len()];
    for (i, kind) in KINDS.iter().enumerate() {
        // SAFETY: a writable u64.
        let r = unsafe { ptiViewGetDroppedRecordCount(RawViewKind(*kind), &mut out[i]) };
        assert_eq!(r, pti_result::PTI_SUCCESS);
    }
    out
}

fn critical_drops() -> u64 {
    let mut n = 0;
    // SAFETY: a writable u64.
    let r = unsafe {
        ptiCallbackGetCriticalEventCount(
            RawResult(pti_result::PTI_ERROR_RECORDS_DROPPED as u32),
            &mut n,
        )
    };
    assert_eq!(r, pti_result::PTI_SUCCESS);
    n
}

/// Back to a known state: no subscribers, no views, empty ID stacks, every function recorded,
/// every record delivered.
fn reset() {
    let issued: Vec<u64> = persistent().issued.keys().copied().collect();
    for h in issued {
        let _ = ptiCallbackUnsubscribe(h as pti_callback_subscriber);
    }
    for kind in KINDS {
        let _ = ptiViewDisable(RawViewKind(kind));
    }
    for kind in 1..=5 {
        // SAFETY: a NULL output is allowed.
        while unsafe { ptiViewPopExternalCorrelationId(RawExternalKind(kind), ptr::null_mut()) }
            == pti_result::PTI_SUCCESS
        {}
    }
    pti_core::session::reset_api_filters();
    let _ = ptiFlushAllViews();
    let mut t = tool();
    t.live.clear();
    t.delivered = [0; KINDS.len()];
    t.errors.clear();
}

fn run_case(case: &Case) -> Result<(), TestCaseError> {
    reset();
    {
        let mut t = tool();
        t.sizes = case.sizes.clone();
        t.next = 0;
    }
    let dropped_before = dropped();
    let criticals_before = critical_drops();
    let mut m = Model::new();
    for (step, op) in case.ops.iter().enumerate() {
        run_op(op, &mut m).map_err(|e| TestCaseError::fail(format!("op {step} ({op:?}): {e}")))?;
    }
    expect("final ptiFlushAllViews", ptiFlushAllViews(), SUCCESS, false)?;
    let errors = take_errors();
    prop_assert!(errors.is_empty(), "in the tool's callbacks: {:?}", errors);
    let dropped_after = dropped();
    let delivered = tool().delivered;
    let mut total_dropped = 0;
    for (i, kind) in KINDS.iter().enumerate() {
        let dropped = dropped_after[i] - dropped_before[i];
        total_dropped += dropped;
        if *kind == OVERHEAD && m.overhead_touched {
            continue; // time-dependent: see the module docs
        }
        prop_assert_eq!(
            delivered[i] + dropped,
            m.expected[i],
            "view kind {}: {} delivered + {} dropped, but the calls made while it was enabled \
             produce {}",
            kind,
            delivered[i],
            dropped,
            m.expected[i]
        );
    }
    // Each run of drops raises PTI_ERROR_RECORDS_DROPPED once (a run may have begun in an
    // earlier case: no record was written since).
    let criticals = critical_drops() - criticals_before;
    prop_assert!(
        criticals <= total_dropped,
        "{} records dropped, {} PTI_ERROR_RECORDS_DROPPED events",
        total_dropped,
        criticals
    );
    let mut stats = STATS.lock().unwrap_or_else(|e| e.into_inner());
    stats.drop_events += criticals;
    stats.ops += case.ops.len() as u64;
    stats.records += m.expected.iter().sum::<u64>();
    stats.dropped += total_dropped;
    Ok(())
}

#[derive(Default)]
struct Stats {
    ops: u64,
    records: u64,
    dropped: u64,
    drop_events: u64,
}

static STATS: Mutex<Stats> = Mutex::new(Stats {
    ops: 0,
    records: 0,
    dropped: 0,
    drop_events: 0,
});

/// The seconds to fuzz for: `PTI_FUZZ_SECONDS`, default 20.
fn fuzz_seconds() -> f64 {
    match std::env::var("PTI_FUZZ_SECONDS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("PTI_FUZZ_SECONDS={s:?} is not a number of seconds")),
        Err(_) => 20.0,
    }
}

/// The base seed: `PTI_FUZZ_SEED`, else from the clock.
fn fuzz_seed() -> u64 {
    match std::env::var("PTI_FUZZ_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("PTI_FUZZ_SEED={s:?} is not a u64")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    }
}

#[test]
fn random_call_sequences_return_documented_results_and_account_for_every_record() {
    let seconds = fuzz_seconds();
    let seed = fuzz_seed();
    println!("fuzz_api_sequences: seed {seed} (PTI_FUZZ_SEED={seed} repeats this run)");
    let strategy = case();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let mut cases = 0u64;
    let mut batch = 0u64;
    while Instant::now() < deadline {
        let mut runner = TestRunner::new(Config {
            cases: BATCH,
            failure_persistence: None,
            rng_seed: RngSeed::Fixed(seed.wrapping_add(batch)),
            max_shrink_iters: 20_000,
            ..Config::default()
        });
        match runner.run(&strategy, |case| run_case(&case)) {
            Ok(()) => cases += u64::from(BATCH),
            Err(TestError::Fail(why, minimal)) => panic!(
                "fuzz_api_sequences: failure after {cases} cases (seed {seed}, batch {batch}); \
                 minimal failing sequence (shrunk by proptest):\n{minimal:#?}\n{why}"
            ),
            Err(TestError::Abort(why)) => panic!("fuzz_api_sequences: aborted: {why}"),
        }
        batch += 1;
    }
    reset();
    let stats = STATS.lock().unwrap_or_else(|e| e.into_inner());
    let t = tool();
    println!(
        "fuzz_api_sequences: {cases} inputs ({} calls) in {:.1} s, 0 failures; {} records \
         expected and accounted for ({} of them dropped), {} callbacks, {} critical events",
        stats.ops,
        started.elapsed().as_secs_f64(),
        stats.records,
        stats.dropped,
        t.callbacks,
        t.criticals
    );
    // A run that produced no records would not have checked the accounting.
    assert!(
        stats.records > 0 && t.callbacks > 0,
        "no records or no callbacks: the run checked little"
    );
    // Drops raise critical events.
    assert!(
        (stats.dropped == 0) == (stats.drop_events == 0),
        "{} records dropped, {} PTI_ERROR_RECORDS_DROPPED events",
        stats.dropped,
        stats.drop_events
    );
}
