//! `fork()` while other threads subscribe, unsubscribe and run callbacks: the child must not
//! inherit the writers' lock held by a thread that does not exist there, nor wait for the
//! announcements of such threads; it keeps tracing its own calls. In a process of its own.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use pti_core::callback::SubscriberId;
use pti_core::dispatch::{self, CallInfo};
use pti_core::ids::opencl;
use pti_core::session;
use pti_core::{ApiGroup, Event, Site};

const CALL: (ApiGroup, u32) = (ApiGroup::OpenCl, opencl::clEnqueueReadBuffer);

/// A subscriber whose callback is slow, so that it is often running when the process forks.
static SLOW: OnceLock<SubscriberId> = OnceLock::new();
static STOP: AtomicBool = AtomicBool::new(false);

/// What the child does; its exit status says how it went (0: fine).
fn child() -> i32 {
    // The slow subscriber may have been running on a thread the child does not have.
    if session::unsubscribe(*SLOW.get().unwrap()).is_err() {
        return 2;
    }
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    let Ok(id) = session::subscribe(Box::new(|event| {
        if let Event::ApiCall { data, .. } = event
            && data.site() == Site::Exit
        {
            SEEN.fetch_add(1, Ordering::SeqCst);
        }
    })) else {
        return 3;
    };
    if session::enable_callback(id, CALL.0, CALL.1, true).is_err() {
        return 4;
    }
    for _ in 0..3 {
        let _ = dispatch::simulate_call(CALL.0, CALL.1, CallInfo::default(), || 0);
    }
    if SEEN.load(Ordering::SeqCst) < 3 {
        return 5;
    }
    if session::unsubscribe(id).is_err() {
        return 6;
    }
    0
}

#[test]
fn a_forked_child_keeps_tracing_whatever_other_threads_were_doing() {
    let slow = session::subscribe(Box::new(|event| {
        if let Event::ApiCall { .. } = event {
            std::thread::sleep(Duration::from_micros(300));
        }
    }))
    .unwrap();
    session::enable_callback(slow, CALL.0, CALL.1, true).unwrap();
    SLOW.set(slow).unwrap();
    let tracer = std::thread::spawn(|| {
        while !STOP.load(Ordering::Relaxed) {
            dispatch::simulate_call(CALL.0, CALL.1, CallInfo::default(), || 0).unwrap();
        }
    });
    let writer = std::thread::spawn(|| {
        while !STOP.load(Ordering::Relaxed) {
            let id = session::subscribe(Box::new(|_| {})).unwrap();
            session::enable_domain(id, pti_core::Domain::DriverApi, true).unwrap();
            session::unsubscribe(id).unwrap();
        }
    });
    std::thread::sleep(Duration::from_millis(20));
    for round in 0..40 {
        // SAFETY: the child only runs `child()` (libpti calls, which are fork-safe by the atfork
        // handlers under test, and malloc, which glibc makes fork-safe) and then `_exit`s.
        match unsafe { libc::fork() } {
            -1 => panic!("fork failed"),
            0 => {
                // SAFETY: alarm and _exit are async-signal-safe; SIGALRM kills a hung child.
                unsafe {
                    libc::alarm(10);
                    libc::_exit(child());
                }
            }
            pid => {
                let mut status = 0;
                // SAFETY: waiting for our own child with a valid out-pointer.
                assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
                assert!(
                    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                    "round {round}: the child failed (raw wait status {status:#x}; a signal 14 means it hung)"
                );
            }
        }
    }
    STOP.store(true, Ordering::Relaxed);
    tracer.join().unwrap();
    writer.join().unwrap();
    session::unsubscribe(slow).unwrap();
}
