//! The safe Rust API's callbacks: a subscriber whose closure sees ENTER and EXIT of the calls it
//! enabled, times them with its per-call `local_data` slot, and hears critical events; the calls
//! come from libpti's simulated-call backend, which drives the same dispatch as the real
//! interception (so this example needs no GPU runtime).
//!
//! Run: `cargo run -p pti-core --example callbacks`

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use pti_core::dispatch::{CallInfo, simulate_call};
use pti_core::ids::opencl::{clEnqueueNDRangeKernel, clFinish, clGetPlatformInfo};
use pti_core::{ApiGroup, Domain, Event, Site, Subscriber};

/// Nanoseconds on a monotonic clock (the wall clock can step backwards mid-call).
fn now_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

fn main() -> Result<(), pti_core::Error> {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let subscriber = Subscriber::new(move |event| match event {
        Event::ApiCall { api_id, data, .. } => match data.site() {
            Site::Enter => *data.local_data() = now_ns(),
            Site::Exit => {
                let took = now_ns().saturating_sub(*data.local_data());
                log.lock().unwrap().push(format!(
                    "{} (ID {api_id}, correlation {}): {took} ns, status {:?}",
                    data.api_name().to_string_lossy(),
                    data.correlation_id(),
                    data.return_code()
                ));
            }
        },
        Event::Critical(c) => eprintln!(
            "critical event {:?}: {}",
            c.code(),
            c.message().to_string_lossy()
        ),
        _ => {}
    })?;
    subscriber.enable_domain(Domain::CriticalEvent, true)?;
    // Two functions, not the third.
    subscriber.enable(ApiGroup::OpenCl, clEnqueueNDRangeKernel, true)?;
    subscriber.enable(ApiGroup::OpenCl, clFinish, true)?;

    for id in [clGetPlatformInfo, clEnqueueNDRangeKernel, clFinish] {
        simulate_call(ApiGroup::OpenCl, id, CallInfo::default(), || {
            std::thread::sleep(std::time::Duration::from_micros(100));
            0
        })?;
    }
    subscriber.unsubscribe()?;

    let seen = seen.lock().unwrap();
    for line in seen.iter() {
        println!("{line}");
    }
    assert_eq!(
        seen.len(),
        2,
        "callbacks for the two enabled functions only"
    );
    Ok(())
}
