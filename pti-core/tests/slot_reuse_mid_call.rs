//! ENTER/EXIT pairing when slots change hands in the middle of a call (review finding 2), in a
//! process of its own so that slot allocation is deterministic (the lowest free slot is used).
//!
//! Slots 0, 1, 2 hold A, B, E. During the ENTER of one call: A's callback removes A and E (from
//! inside a callback, so without waiting); B's callback subscribes C and D, which take slots 0
//! and 2. The ENTER loop then reaches slot 2 and delivers to D. At EXIT, slot 0 holds C, which
//! never saw the ENTER: it must not get the EXIT (nor A's `local_data`).

use std::sync::{Arc, Mutex, OnceLock};

use pti_core::callback::SubscriberId;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::{ApiGroup, Event, Site};

type Log = Arc<Mutex<Vec<(&'static str, Site)>>>;

static A: OnceLock<SubscriberId> = OnceLock::new();
static E: OnceLock<SubscriberId> = OnceLock::new();
static LATE: Mutex<Vec<SubscriberId>> = Mutex::new(Vec::new());

const CALL: (ApiGroup, u32) = (ApiGroup::OpenCl, opencl::clFinish);

fn logger(name: &'static str, log: &Log, on_enter: fn(&Log)) -> SubscriberId {
    let log = log.clone();
    let id = session::subscribe(Box::new(move |event| {
        if let Event::ApiCall { data, .. } = event {
            log.lock().unwrap().push((name, data.site()));
            if data.site() == Site::Enter {
                *data.local_data() = 0xA11CE;
                on_enter(&log);
            }
        }
    }))
    .unwrap();
    session::enable_callback(id, CALL.0, CALL.1, true).unwrap();
    id
}

fn nothing(_: &Log) {}

fn remove_a_and_e(_: &Log) {
    session::unsubscribe(*A.get().unwrap()).unwrap();
    session::unsubscribe(*E.get().unwrap()).unwrap();
}

fn add_c_and_d(log: &Log) {
    let c = logger("C", log, nothing);
    let d = logger("D", log, nothing);
    assert_eq!(
        (c.to_raw() % 32, d.to_raw() % 32),
        (0, 2),
        "precondition: C and D reuse slots 0 and 2"
    );
    LATE.lock().unwrap().extend([c, d]);
}

#[test]
fn a_subscriber_that_took_over_a_slot_mid_call_gets_no_exit() {
    let log = Log::default();
    A.set(logger("A", &log, remove_a_and_e)).unwrap();
    let _b = logger("B", &log, add_c_and_d);
    E.set(logger("E", &log, nothing)).unwrap();
    assert_eq!(
        [
            A.get().unwrap().to_raw() % 32,
            E.get().unwrap().to_raw() % 32
        ],
        [0, 2],
        "precondition"
    );

    dispatch::simulate_call(CALL.0, CALL.1, CallInfo::default(), || 0).unwrap();

    let seen = log.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("A", Site::Enter),
            ("B", Site::Enter),
            ("D", Site::Enter),
            ("B", Site::Exit),
            ("D", Site::Exit)
        ],
        "C must get neither half; A and E are gone before EXIT"
    );
}
