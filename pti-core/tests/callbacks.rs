//! Behaviour of the Callback API as a tool sees it, driven through the simulated-call backend.
//!
//! Tests run in parallel in one process and subscribers see every traced call, so each test
//! passes its own token as the call's `args` and its callbacks ignore calls that carry another.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use pti_core::callback::critical;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::{level_zero, opencl, sycl};
use pti_core::{ApiGroup, ApiId, Domain, Event, ResultCode, Site, Subscriber};

/// One API callback as a test saw it.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    tag: &'static str,
    site: Site,
    domain: Domain,
    group: ApiGroup,
    api_id: ApiId,
    name: String,
    correlation_id: u32,
    local_at_entry: u64,
    return_code: Option<i32>,
    kernel: Option<String>,
    context: usize,
}

/// A token unique to one test, passed as `args`.
struct Token(Box<u8>);

impl Token {
    fn new() -> Self {
        Token(Box::new(0))
    }
    fn ptr(&self) -> usize {
        &*self.0 as *const u8 as usize
    }
    fn info(&self) -> CallInfo<'static> {
        CallInfo {
            args: self.ptr() as *const _,
            ..Default::default()
        }
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// A subscriber that logs the calls carrying `token`; at ENTER it stores `stamp` in local_data.
fn recorder(tag: &'static str, token: &Token, log: &Log, stamp: u64) -> Subscriber {
    let (log, want) = (log.clone(), token.ptr());
    Subscriber::new(move |event| {
        if let Event::ApiCall {
            domain,
            group,
            api_id,
            data,
        } = event
        {
            if data.args() as usize != want {
                return;
            }
            let local_at_entry = *data.local_data();
            if data.site() == Site::Enter {
                *data.local_data() = stamp;
            }
            log.lock().unwrap().push(Seen {
                tag,
                site: data.site(),
                domain,
                group,
                api_id,
                name: data.api_name().to_str().unwrap().into(),
                correlation_id: data.correlation_id(),
                local_at_entry,
                return_code: data.return_code(),
                kernel: data.kernel_name().map(|k| k.to_str().unwrap().into()),
                context: data.context() as usize,
            });
        }
    })
    .unwrap()
}

fn call(token: &Token, group: ApiGroup, id: ApiId, status: i32) -> i32 {
    dispatch::simulate_call(group, id, token.info(), || status).unwrap()
}

fn take(log: &Log) -> Vec<Seen> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn enter_and_exit_carry_the_call_and_share_correlation_and_local_data() {
    let (token, log) = (Token::new(), Log::default());
    let s = recorder("a", &token, &log, 77);
    s.enable(ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel, true)
        .unwrap();
    let kernel = CString::new("vector_add").unwrap();
    let info = CallInfo {
        kernel_name: Some(&kernel),
        context: 0x1234 as *mut _,
        ..token.info()
    };
    let status = dispatch::simulate_call(
        ApiGroup::OpenCl,
        opencl::clEnqueueNDRangeKernel,
        info,
        || -5,
    )
    .unwrap();
    assert_eq!(status, -5, "the body's status is returned");
    let seen = take(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let (enter, exit) = (&seen[0], &seen[1]);
    assert_eq!((enter.site, exit.site), (Site::Enter, Site::Exit));
    for s in &seen {
        assert_eq!(
            (s.domain, s.group, s.api_id),
            (
                Domain::DriverApi,
                ApiGroup::OpenCl,
                opencl::clEnqueueNDRangeKernel
            )
        );
        assert_eq!(s.name, "clEnqueueNDRangeKernel");
        assert_eq!(s.kernel.as_deref(), Some("vector_add"));
        assert_eq!(s.context, 0x1234);
    }
    assert_ne!(enter.correlation_id, 0);
    assert_eq!(enter.correlation_id, exit.correlation_id);
    assert_eq!(enter.local_at_entry, 0, "local_data starts at zero");
    assert_eq!(
        exit.local_at_entry, 77,
        "local_data is kept from ENTER to EXIT"
    );
    assert_eq!((enter.return_code, exit.return_code), (None, Some(-5)));

    // A second call gets a new correlation ID.
    call(&token, ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel, 0);
    let again = take(&log);
    assert_ne!(again[0].correlation_id, enter.correlation_id);
}

#[test]
fn each_subscriber_has_its_own_enables_and_local_data() {
    let (token, log) = (Token::new(), Log::default());
    let subs: Vec<_> = [("a", 1), ("b", 2), ("c", 3)]
        .iter()
        .map(|(t, v)| recorder(t, &token, &log, *v))
        .collect();
    for s in &subs {
        s.enable(
            ApiGroup::LevelZero,
            level_zero::zeCommandListAppendLaunchKernel,
            true,
        )
        .unwrap();
    }
    subs[2]
        .enable(
            ApiGroup::LevelZero,
            level_zero::zeEventHostSynchronize,
            true,
        )
        .unwrap();
    call(
        &token,
        ApiGroup::LevelZero,
        level_zero::zeCommandListAppendLaunchKernel,
        0,
    );
    let seen = take(&log);
    assert_eq!(seen.len(), 6);
    for (tag, stamp) in [("a", 1), ("b", 2), ("c", 3)] {
        let mine: Vec<_> = seen.iter().filter(|s| s.tag == tag).collect();
        assert_eq!(mine.len(), 2);
        assert_eq!((mine[0].local_at_entry, mine[1].local_at_entry), (0, stamp));
    }
    call(
        &token,
        ApiGroup::LevelZero,
        level_zero::zeEventHostSynchronize,
        0,
    );
    let tags: Vec<_> = take(&log).iter().map(|s| s.tag).collect();
    assert_eq!(tags, ["c", "c"]);
    subs[0]
        .enable(
            ApiGroup::LevelZero,
            level_zero::zeCommandListAppendLaunchKernel,
            false,
        )
        .unwrap();
    call(
        &token,
        ApiGroup::LevelZero,
        level_zero::zeCommandListAppendLaunchKernel,
        0,
    );
    assert!(
        take(&log).iter().all(|s| s.tag != "a"),
        "a disabled function is not delivered"
    );
}

#[test]
fn domains_enable_their_groups() {
    let (token, log) = (Token::new(), Log::default());
    let s = recorder("d", &token, &log, 0);
    s.enable_domain(Domain::DriverApi, true).unwrap();
    call(&token, ApiGroup::LevelZero, level_zero::zeInit, 0);
    call(&token, ApiGroup::OpenCl, opencl::clHostMemAllocINTEL, 0);
    call(&token, ApiGroup::Sycl, sycl::urEnqueueKernelLaunch, 0);
    let groups: Vec<_> = take(&log).iter().map(|s| (s.group, s.domain)).collect();
    assert_eq!(
        groups,
        [
            (ApiGroup::LevelZero, Domain::DriverApi),
            (ApiGroup::LevelZero, Domain::DriverApi),
            (ApiGroup::OpenCl, Domain::DriverApi),
            (ApiGroup::OpenCl, Domain::DriverApi)
        ]
    );
    s.enable_domain(Domain::DriverApi, false).unwrap();
    s.enable_domain(Domain::RuntimeApi, true).unwrap();
    call(&token, ApiGroup::OpenCl, opencl::clFinish, 0);
    call(&token, ApiGroup::Sycl, sycl::urQueueFinish, 0);
    let seen = take(&log);
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|s| s.domain == Domain::RuntimeApi && s.group == ApiGroup::Sycl)
    );
}

#[test]
fn bad_ids_are_rejected() {
    let s = Subscriber::new(|_| {}).unwrap();
    for (group, id) in [
        (ApiGroup::LevelZero, 0),
        (ApiGroup::OpenCl, opencl::MAX_ID + 1),
        (ApiGroup::Sycl, 36),
        (ApiGroup::Sycl, u32::MAX),
    ] {
        assert_eq!(
            s.enable(group, id, true).unwrap_err().code(),
            ResultCode::ErrorBadApiId,
            "{group:?} {id}"
        );
        assert_eq!(
            dispatch::simulate_call(group, id, CallInfo::default(), || 0)
                .unwrap_err()
                .code(),
            ResultCode::ErrorBadApiId
        );
    }
}

#[test]
fn nothing_is_delivered_after_unsubscribe_and_stale_handles_are_refused() {
    let (token, log) = (Token::new(), Log::default());
    let s = recorder("u", &token, &log, 0);
    s.enable(ApiGroup::OpenCl, opencl::clFlush, true).unwrap();
    let id = s.id();
    s.unsubscribe().unwrap();
    call(&token, ApiGroup::OpenCl, opencl::clFlush, 0);
    assert!(take(&log).is_empty());
    assert_eq!(
        pti_core::session::unsubscribe(id).unwrap_err().code(),
        ResultCode::ErrorBadArgument
    );
    assert_eq!(
        pti_core::session::enable_callback(id, ApiGroup::OpenCl, opencl::clFlush, true)
            .unwrap_err()
            .code(),
        ResultCode::ErrorBadArgument
    );
    // A never-issued handle in a slot that some other subscriber occupies is refused as well.
    let other = Subscriber::new(|_| {}).unwrap();
    let forged = pti_core::SubscriberId::from_raw(other.id().to_raw() + 1000 * 32);
    assert!(pti_core::session::enable_domain(forged, Domain::DriverApi, true).is_err());
}

#[test]
fn enables_and_removals_during_a_call_keep_enter_exit_pairs() {
    let (token, log) = (Token::new(), Log::default());
    let early = recorder("early", &token, &log, 5);
    early
        .enable(ApiGroup::OpenCl, opencl::clGetDeviceInfo, true)
        .unwrap();
    let leaving = recorder("leaving", &token, &log, 6);
    leaving
        .enable(ApiGroup::OpenCl, opencl::clGetDeviceInfo, true)
        .unwrap();
    let mut late = None;
    dispatch::simulate_call(
        ApiGroup::OpenCl,
        opencl::clGetDeviceInfo,
        token.info(),
        || {
            let s = recorder("late", &token, &log, 7);
            s.enable(ApiGroup::OpenCl, opencl::clGetDeviceInfo, true)
                .unwrap();
            late = Some(s);
            early
                .enable(ApiGroup::OpenCl, opencl::clGetDeviceInfo, false)
                .unwrap();
            0
        },
    )
    .unwrap();
    drop(leaving); // unsubscribed after the call: it got both halves
    let seen: Vec<_> = take(&log).iter().map(|s| (s.tag, s.site)).collect();
    // Subscribers are called in slot order, which other tests of this process running at the
    // same time may shuffle: each subscriber's own sequence is what is checked, and that both
    // ENTERs come before both EXITs.
    let of = |tag: &str| {
        seen.iter()
            .filter(|(t, _)| *t == tag)
            .map(|(_, site)| *site)
            .collect::<Vec<_>>()
    };
    let both = [Site::Enter, Site::Exit];
    assert_eq!(
        (of("early"), of("leaving"), of("late")),
        (both.to_vec(), both.to_vec(), vec![]),
        "a subscriber enabled mid-call gets neither half; one disabled mid-call keeps its EXIT"
    );
    assert!(
        seen[..2].iter().all(|(_, s)| *s == Site::Enter),
        "ENTERs before EXITs: {seen:?}"
    );

    let leaving = recorder("gone", &token, &log, 8);
    leaving
        .enable(ApiGroup::OpenCl, opencl::clGetDeviceInfo, true)
        .unwrap();
    let mut leaving = Some(leaving);
    dispatch::simulate_call(
        ApiGroup::OpenCl,
        opencl::clGetDeviceInfo,
        token.info(),
        || {
            drop(leaving.take());
            0
        },
    )
    .unwrap();
    let seen: Vec<_> = take(&log).iter().map(|s| (s.tag, s.site)).collect();
    assert!(
        seen.contains(&("gone", Site::Enter)) && !seen.contains(&("gone", Site::Exit)),
        "{seen:?}"
    );
    drop(late);
}

#[test]
fn callbacks_may_reenter_pti_and_the_traced_api() {
    let token = Token::new();
    let want = token.ptr();
    let nested_body_ran = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let (nb, sn) = (nested_body_ran.clone(), seen.clone());
    let s = Arc::new(Mutex::new(None::<Subscriber>));
    let s2 = s.clone();
    let subscriber = Subscriber::new(move |event| {
        let Event::ApiCall { data, .. } = event else {
            return;
        };
        if data.args() as usize != want {
            return;
        }
        sn.fetch_add(1, Ordering::SeqCst);
        // A traced call from inside a callback runs, untraced (no recursion into this callback).
        let nb = nb.clone();
        let r = dispatch::simulate_call(
            ApiGroup::OpenCl,
            opencl::clFinish,
            CallInfo {
                args: want as *const _,
                ..Default::default()
            },
            move || {
                nb.fetch_add(1, Ordering::SeqCst);
                3
            },
        );
        assert_eq!(r.unwrap(), 3);
        // PTI calls from inside a callback: subscribe, enable, unsubscribe another subscriber.
        let other = Subscriber::new(|_| {}).unwrap();
        other.enable_domain(Domain::DriverApi, true).unwrap();
        drop(other);
        if let Some(me) = s2.lock().unwrap().as_ref() {
            me.enable(ApiGroup::OpenCl, opencl::clFlush, true).unwrap();
        }
    })
    .unwrap();
    subscriber
        .enable(ApiGroup::OpenCl, opencl::clFinish, true)
        .unwrap();
    *s.lock().unwrap() = Some(subscriber);
    call(&token, ApiGroup::OpenCl, opencl::clFinish, 0);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "ENTER and EXIT, and no callback for the nested calls"
    );
    assert_eq!(nested_body_ran.load(Ordering::SeqCst), 2);
    drop(s.lock().unwrap().take());
}

#[test]
fn a_subscriber_can_unsubscribe_itself_from_its_callback() {
    let token = Token::new();
    let want = token.ptr();
    let calls = Arc::new(AtomicUsize::new(0));
    let slot: Arc<Mutex<Option<Subscriber>>> = Arc::default();
    let (c, sl) = (calls.clone(), slot.clone());
    let s = Subscriber::new(move |event| {
        if let Event::ApiCall { data, .. } = event
            && data.args() as usize == want
        {
            c.fetch_add(1, Ordering::SeqCst);
            if let Some(me) = sl.lock().unwrap().take() {
                me.unsubscribe().unwrap();
            }
        }
    })
    .unwrap();
    s.enable(ApiGroup::Sycl, sycl::urQueueFinish, true).unwrap();
    *slot.lock().unwrap() = Some(s);
    for _ in 0..3 {
        call(&token, ApiGroup::Sycl, sycl::urQueueFinish, 0);
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "only the ENTER that unsubscribed"
    );
}

#[test]
fn driver_calls_inside_a_runtime_call_share_its_correlation_id() {
    let (token, log) = (Token::new(), Log::default());
    let s = recorder("n", &token, &log, 0);
    s.enable(ApiGroup::Sycl, sycl::urEnqueueKernelLaunch, true)
        .unwrap();
    s.enable(ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel, true)
        .unwrap();
    s.enable(ApiGroup::OpenCl, opencl::clFlush, true).unwrap();
    dispatch::simulate_call(
        ApiGroup::Sycl,
        sycl::urEnqueueKernelLaunch,
        token.info(),
        || call(&token, ApiGroup::OpenCl, opencl::clEnqueueNDRangeKernel, 0),
    )
    .unwrap();
    call(&token, ApiGroup::OpenCl, opencl::clFlush, 0);
    let seen = take(&log);
    let ids: Vec<_> = seen
        .iter()
        .map(|s| (s.name.as_str(), s.site, s.correlation_id))
        .collect();
    assert_eq!(seen.len(), 6, "{ids:?}");
    assert_eq!(seen[0].correlation_id, seen[1].correlation_id);
    assert_eq!(seen[1].name, "clEnqueueNDRangeKernel");
    assert!(
        seen[..4]
            .iter()
            .all(|s| s.correlation_id == seen[0].correlation_id),
        "{ids:?}"
    );
    assert_ne!(
        seen[4].correlation_id, seen[0].correlation_id,
        "a driver call outside any runtime call has its own id"
    );
}

#[test]
fn a_panicking_callback_is_contained_and_reported() {
    let token = Token::new();
    let want = token.ptr();
    let before = critical::count(ResultCode::ErrorCallbackPanicked);
    let reported = Arc::new(Mutex::new(Vec::<String>::new()));
    let r = reported.clone();
    let listener = Subscriber::new(move |event| {
        if let Event::Critical(data) = event
            && data.code() == ResultCode::ErrorCallbackPanicked
        {
            r.lock()
                .unwrap()
                .push(data.message().to_str().unwrap().into());
        }
    })
    .unwrap();
    listener.enable_domain(Domain::CriticalEvent, true).unwrap();
    let exits = Arc::new(AtomicUsize::new(0));
    let e = exits.clone();
    let panicker = Subscriber::new(move |event| {
        if let Event::ApiCall { data, .. } = event
            && data.args() as usize == want
        {
            if data.site() == Site::Exit {
                e.fetch_add(1, Ordering::SeqCst);
            }
            panic!("tool bug");
        }
    })
    .unwrap();
    panicker
        .enable(
            ApiGroup::LevelZero,
            level_zero::zeCommandQueueSynchronize,
            true,
        )
        .unwrap();
    let status = call(
        &token,
        ApiGroup::LevelZero,
        level_zero::zeCommandQueueSynchronize,
        9,
    );
    assert_eq!(status, 9, "the traced call completes");
    assert_eq!(
        exits.load(Ordering::SeqCst),
        1,
        "a panicking subscriber still gets its EXIT"
    );
    assert!(critical::count(ResultCode::ErrorCallbackPanicked) >= before + 2);
    assert!(reported.lock().unwrap().len() >= 2);
}

#[test]
fn critical_events_are_counted_without_listeners_and_delivered_to_listeners() {
    let before = critical::count(ResultCode::ErrorDriver);
    critical::raise(ResultCode::ErrorDriver, format_args!("no listener {}", 1));
    assert_eq!(critical::count(ResultCode::ErrorDriver), before + 1);

    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let s = Subscriber::new(move |event| {
        if let Event::Critical(d) = event {
            g.lock()
                .unwrap()
                .push((d.code(), d.message().to_str().unwrap().to_owned()));
        }
    })
    .unwrap();
    critical::raise(ResultCode::ErrorDriver, format_args!("not enabled yet"));
    s.enable_domain(Domain::CriticalEvent, true).unwrap();
    critical::raise(ResultCode::ErrorDriver, format_args!("driver said {}", -5));
    s.enable_domain(Domain::CriticalEvent, false).unwrap();
    critical::raise(ResultCode::ErrorDriver, format_args!("disabled again"));
    let got = got.lock().unwrap().clone();
    assert!(
        got.contains(&(ResultCode::ErrorDriver, "driver said -5".into())),
        "{got:?}"
    );
    assert!(
        !got.iter()
            .any(|(_, m)| m == "not enabled yet" || m == "disabled again")
    );
    assert!(critical::count(ResultCode::ErrorDriver) >= before + 4);
}

#[test]
fn unsubscribe_waits_for_callbacks_running_on_other_threads() {
    let token = Token::new();
    let want = token.ptr();
    let inside = Arc::new(Barrier::new(2));
    let finished = Arc::new(AtomicBool::new(false));
    let (i, f) = (inside.clone(), finished.clone());
    let s = Subscriber::new(move |event| {
        if let Event::ApiCall { data, .. } = event
            && data.args() as usize == want
            && data.site() == Site::Enter
        {
            i.wait();
            std::thread::sleep(Duration::from_millis(100));
            f.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    s.enable(ApiGroup::OpenCl, opencl::clReleaseEvent, true)
        .unwrap();
    let caller = std::thread::spawn(move || {
        call(&token, ApiGroup::OpenCl, opencl::clReleaseEvent, 0);
    });
    inside.wait(); // the callback is running on the other thread
    s.unsubscribe().unwrap();
    assert!(
        finished.load(Ordering::SeqCst),
        "unsubscribe returned while the callback still ran"
    );
    caller.join().unwrap();
}

thread_local! {
    static INSIDE_API_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[test]
fn critical_events_raised_inside_a_callback_arrive_after_it_returned() {
    let token = Token::new();
    let want = token.ptr();
    let received = Arc::new(Mutex::new(Vec::new()));
    let r = received.clone();
    let listener = Subscriber::new(move |event| {
        if let Event::Critical(d) = event
            && d.message().to_bytes() == b"raised inside a callback"
        {
            r.lock()
                .unwrap()
                .push(INSIDE_API_CALLBACK.with(|i| i.get()));
        }
    })
    .unwrap();
    listener.enable_domain(Domain::CriticalEvent, true).unwrap();
    let raiser = Subscriber::new(move |event| {
        if let Event::ApiCall { data, .. } = event
            && data.args() as usize == want
            && data.site() == Site::Enter
        {
            INSIDE_API_CALLBACK.with(|i| i.set(true));
            critical::raise(
                ResultCode::ErrorBadTimestamp,
                format_args!("raised inside a callback"),
            );
            INSIDE_API_CALLBACK.with(|i| i.set(false));
        }
    })
    .unwrap();
    raiser
        .enable(ApiGroup::OpenCl, opencl::clWaitForEvents, true)
        .unwrap();
    call(&token, ApiGroup::OpenCl, opencl::clWaitForEvents, 0);
    assert_eq!(
        *received.lock().unwrap(),
        [false],
        "delivered once, after the raising callback returned"
    );
}

struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("a tool's value panics when dropped");
    }
}

#[test]
fn a_callback_whose_drop_panics_is_contained() {
    let before = critical::count(ResultCode::ErrorCallbackPanicked);
    let owned = PanicsOnDrop;
    let s = Subscriber::new(move |_| {
        let _ = &owned;
    })
    .unwrap();
    s.unsubscribe().unwrap();
    // The closure is dropped by whichever writer frees the slot: this thread, or another test's
    // thread that reclaimed it meanwhile and may still be dropping it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while critical::count(ResultCode::ErrorCallbackPanicked) == before {
        assert!(
            std::time::Instant::now() < deadline,
            "the panic in the callback's drop was not counted"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let again = Subscriber::new(|_| {}).unwrap();
    again.enable_domain(Domain::DriverApi, true).unwrap();
}
