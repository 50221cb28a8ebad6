//! A `Views` started from a builder: buffers of the size chosen (each batch holds no more
//! records than one fits), the first-buffer function run once and before the first batch, views
//! enabled and disabled one by one, and the driver API view filtered to one function. The calls
//! are OpenCL's `clGetPlatformIDs` and `clGetDeviceIDs` through the `opencl3` crate (libpti is the
//! process's OpenCL layer, linked through this crate).
//!
//! Needs an OpenCL platform behind the system's ICD loader (`cargo xtask setup` installs PoCL).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use libpti::abi::{pti_api_group_id, pti_view_kind, pti_view_memcpy_type, pti_view_record_api};
use libpti::{Record, Views};
use opencl3::device::CL_DEVICE_TYPE_ALL;
use opencl3::platform::get_platforms;

const BUFFER: usize = 4096;
/// Calls of clGetPlatformIDs made while the view records (opencl3 makes two per listing).
const LISTINGS: usize = 100;

/// The ID of OpenCL function `name` in the stable table.
fn opencl_id(name: &str) -> u32 {
    (1..2048)
        .find(|id| {
            libpti::view::api_name(pti_api_group_id::PTI_API_GROUP_OPENCL, *id)
                .is_some_and(|n| n.to_str() == Ok(name))
        })
        .unwrap_or_else(|| panic!("{name} has no ID"))
}

/// Lists the platforms and their devices (clGetPlatformIDs twice, clGetDeviceIDs twice a
/// platform).
fn list() -> usize {
    let platforms = get_platforms().expect("OpenCL platforms");
    for platform in &platforms {
        let _ = platform.get_devices(CL_DEVICE_TYPE_ALL);
    }
    platforms.len()
}

#[test]
fn a_built_views_lends_buffers_of_its_size_and_runs_its_first_buffer_function_once() {
    /// Batches delivered when the first-buffer function ran (usize::MAX until it ran).
    static BATCHES_AT_FIRST: AtomicUsize = AtomicUsize::new(usize::MAX);
    static FIRST_RUNS: AtomicUsize = AtomicUsize::new(0);
    // (records of each batch, API IDs of the records)
    let batches: Arc<Mutex<Vec<Vec<u32>>>> = Arc::default();
    let sink = batches.clone();
    let seen = batches.clone();
    let mut views = Views::builder(&[])
        .buffer_size(BUFFER)
        .on_first_buffer(move || {
            FIRST_RUNS.fetch_add(1, Ordering::SeqCst);
            BATCHES_AT_FIRST.store(seen.lock().unwrap().len(), Ordering::SeqCst);
        })
        .start(move |records| {
            let ids = records
                .filter_map(|record| match record {
                    Record::Api(a) => Some(a._api_id),
                    _ => None,
                })
                .collect();
            sink.lock().unwrap().push(ids);
        })
        .expect("start the views");
    assert!(views.kinds().is_empty());
    assert_eq!(
        Views::start(&[], |_| {}).map(|_| ()).unwrap_err(),
        libpti::Error::BadArgument,
        "one Views at a time"
    );

    let platforms = opencl_id("clGetPlatformIDs");
    let devices = opencl_id("clGetDeviceIDs");
    // Only clGetPlatformIDs is recorded.
    libpti::view::record_driver_api(pti_api_group_id::PTI_API_GROUP_OPENCL, platforms, true)
        .unwrap();
    assert_eq!(
        libpti::view::record_driver_api(pti_api_group_id::PTI_API_GROUP_SYCL, platforms, true)
            .unwrap_err(),
        libpti::Error::BadArgument,
        "SYCL functions are runtime API"
    );
    views.enable(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    assert_eq!(views.kinds(), [pti_view_kind::PTI_VIEW_DRIVER_API]);
    assert_eq!(
        FIRST_RUNS.load(Ordering::SeqCst),
        0,
        "no buffer asked for yet"
    );

    let mut found = 0;
    for _ in 0..LISTINGS {
        found = list();
    }
    assert!(found > 0, "no OpenCL platform: run `cargo xtask setup`");
    views.flush().unwrap();
    let recorded: usize = batches.lock().unwrap().iter().map(Vec::len).sum();
    assert_eq!(
        recorded,
        2 * LISTINGS,
        "two clGetPlatformIDs records a listing"
    );

    // Disabled: nothing more is recorded.
    views.disable(pti_view_kind::PTI_VIEW_DRIVER_API).unwrap();
    assert!(views.kinds().is_empty());
    list();
    views.flush().unwrap();
    drop(views);

    let batches = batches.lock().unwrap();
    let all: Vec<u32> = batches.iter().flatten().copied().collect();
    assert_eq!(all.len(), 2 * LISTINGS, "nothing recorded once disabled");
    assert!(
        all.iter().all(|id| *id == platforms),
        "only clGetPlatformIDs"
    );
    assert!(!all.contains(&devices));
    let most = BUFFER / size_of::<pti_view_record_api>();
    assert!(
        batches.iter().all(|b| b.len() <= most),
        "a batch holds at most the {most} records a {BUFFER}-byte buffer fits"
    );
    assert!(batches.len() > 1, "{} records in one batch", all.len());
    assert_eq!(
        FIRST_RUNS.load(Ordering::SeqCst),
        1,
        "the first buffer only"
    );
    assert_eq!(
        BATCHES_AT_FIRST.load(Ordering::SeqCst),
        0,
        "before the first batch"
    );
    assert_eq!(
        libpti::view::dropped_count(pti_view_kind::PTI_VIEW_DRIVER_API),
        Ok(0)
    );
    assert_eq!(
        libpti::view::memcpy_type_name(pti_view_memcpy_type::PTI_VIEW_MEMCPY_TYPE_H2D),
        c"H2D"
    );
}
