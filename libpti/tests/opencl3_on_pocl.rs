//! A Rust program that runs OpenCL kernels with the `opencl3` crate on PoCL and traces itself
//! through this crate: the OpenCL calls reach its subscriber (libpti.so is the process's OpenCL
//! layer, linked through this crate), ENTER and EXIT of each with one correlation ID, and its
//! views receive the calls' API records and the kernel and copy records, each with the
//! correlation ID of the call that submitted it.
//!
//! Needs PoCL behind the system's ICD loader (`cargo xtask setup` installs both).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use libpti::abi::{pti_api_group_id, pti_view_external_kind, pti_view_kind};
use libpti::{ApiGroup, Domain, Event, Record, Site, Subscriber, Views};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_ALL, Device};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_float};

const SOURCE: &str = "__kernel void twice(__global float* v) { v[get_global_id(0)] *= 2.0f; }";
const N: usize = 1024;
const EXTERNAL_KIND: pti_view_external_kind =
    pti_view_external_kind::PTI_VIEW_EXTERNAL_KIND_CUSTOM_0;

/// A record's kind, correlation ID and name (or API ID).
type RecordSeen = (&'static str, u32, String);

#[derive(Default)]
struct Seen {
    /// (site, function, correlation ID) of every OpenCL call.
    calls: Vec<(Site, String, u32)>,
    kernels: Vec<String>,
    criticals: Vec<String>,
    /// Per callback: site, the status it gave, whether it had the parameter struct.
    statuses: Vec<(Site, Option<i32>, bool)>,
}

#[test]
fn an_opencl3_program_traces_its_own_calls_on_pocl() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = seen.clone();
    let subscriber = Subscriber::new(move |event| {
        let mut s = sink.lock().unwrap();
        match event {
            Event::ApiCall(call) if call.group == ApiGroup::OpenCl => {
                s.calls.push((
                    call.site,
                    call.name.to_string_lossy().into_owned(),
                    call.correlation_id,
                ));
                s.statuses
                    .push((call.site, call.return_code, !call.args.is_null()));
                if let Some(k) = call.kernel_name {
                    s.kernels.push(k.to_string_lossy().into_owned());
                }
            }
            Event::Critical(c) => s.criticals.push(c.message.to_string_lossy().into_owned()),
            _ => {}
        }
    })
    .expect("subscribe");
    subscriber.enable_domain(Domain::DriverApi, true).unwrap();
    subscriber
        .enable_domain(Domain::CriticalEvent, true)
        .unwrap();
    // (kind, correlation ID, name) of every record.
    let records: Arc<Mutex<Vec<RecordSeen>>> = Arc::default();
    let sink = records.clone();
    let views = Views::start(
        &[
            pti_view_kind::PTI_VIEW_DRIVER_API,
            pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL,
            pti_view_kind::PTI_VIEW_DEVICE_GPU_KERNEL,
            pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY,
            pti_view_kind::PTI_VIEW_EXTERNAL_CORRELATION,
        ],
        move |batch| {
            let mut out = sink.lock().unwrap();
            for record in batch {
                let name = record
                    .name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match record {
                    Record::Api(a) => out.push(("API", a._correlation_id, a._api_id.to_string())),
                    Record::Kernel(k) => out.push(("KERNEL", k._correlation_id, name)),
                    Record::MemoryCopy(c) => out.push(("COPY", c._correlation_id, name)),
                    Record::ExternalCorrelation(e) => {
                        out.push(("EXTERNAL", e._correlation_id, e._external_id.to_string()))
                    }
                    _ => {}
                }
            }
        },
    )
    .expect("start the views");

    let platform = get_platforms()
        .expect("OpenCL platforms")
        .into_iter()
        .find(|p| {
            p.name()
                .is_ok_and(|n| n.contains("Portable Computing Language"))
        })
        .expect("PoCL is missing: run `cargo xtask setup`");
    let device_id = *platform
        .get_devices(CL_DEVICE_TYPE_ALL)
        .unwrap()
        .first()
        .expect("a PoCL device");
    let device = Device::new(device_id);
    let context = Context::from_device(&device).unwrap();
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(&context, 0).unwrap();
    let program = Program::create_and_build_from_source(&context, SOURCE, "").unwrap();
    let kernel = Kernel::create(&program, "twice").unwrap();
    let mut data = vec![1.0 as cl_float; N];
    // SAFETY: a buffer of N floats, no host pointer.
    let mut buffer =
        unsafe { Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, N, std::ptr::null_mut()) }
            .unwrap();
    // SAFETY: blocking writes and reads of N floats into buffers of N floats.
    unsafe {
        queue
            .enqueue_write_buffer(&mut buffer, CL_BLOCKING, 0, &data, &[])
            .unwrap();
        // The calls that launch the kernel get external-correlation records naming 42.
        libpti::view::push_external_correlation(EXTERNAL_KIND, 42).unwrap();
        ExecuteKernel::new(&kernel)
            .set_arg(&buffer)
            .set_global_work_size(N)
            .enqueue_nd_range(&queue)
            .unwrap();
        assert_eq!(
            libpti::view::pop_external_correlation(EXTERNAL_KIND),
            Ok(42)
        );
        queue
            .enqueue_read_buffer(&buffer, CL_BLOCKING, 0, &mut data, &[])
            .unwrap();
    }
    queue.finish().unwrap();
    assert!(data.iter().all(|v| *v == 2.0), "the kernel ran");
    drop(subscriber);
    drop(views); // flushes
    assert_eq!(libpti::view::pending_device_records(), Ok(0));
    for kind in [
        pti_view_kind::PTI_VIEW_DRIVER_API,
        pti_view_kind::PTI_VIEW_DEVICE_CPU_KERNEL,
        pti_view_kind::PTI_VIEW_DEVICE_GPU_MEM_COPY,
    ] {
        assert_eq!(libpti::view::dropped_count(kind), Ok(0), "{kind:?}");
    }
    assert_eq!(libpti::critical_event_count(302), Ok(0), "records dropped");
    assert_eq!(
        libpti::view::api_name(pti_api_group_id::PTI_API_GROUP_OPENCL, 60),
        Some(c"clEnqueueNDRangeKernel")
    );

    let s = seen.lock().unwrap();
    assert!(s.criticals.is_empty(), "critical events: {:?}", s.criticals);
    // Every ENTER has its EXIT with the same correlation ID.
    let mut open: HashMap<u32, String> = HashMap::new();
    for (site, name, corr) in &s.calls {
        match site {
            Site::Enter => assert!(open.insert(*corr, name.clone()).is_none()),
            Site::Exit => assert_eq!(open.remove(corr).as_deref(), Some(name.as_str())),
        }
    }
    assert!(open.is_empty(), "ENTER without EXIT: {open:?}");
    // Every call had its parameters; a status at EXIT only, and each call succeeded.
    for (site, status, args) in &s.statuses {
        assert!(*args, "a callback without its parameter struct");
        let expected = if *site == Site::Exit { Some(0) } else { None };
        assert_eq!(*status, expected, "{site:?}");
    }
    let called = |f: &str| s.calls.iter().filter(|c| c.1 == f).count();
    for f in [
        "clEnqueueWriteBuffer",
        "clEnqueueNDRangeKernel",
        "clEnqueueReadBuffer",
        "clFinish",
        "clBuildProgram",
    ] {
        assert_eq!(called(f), 2, "{f}: ENTER and EXIT once: {:?}", s.calls);
    }
    assert!(s.kernels.iter().any(|k| k == "twice"), "{:?}", s.kernels);

    // The records: each device record carries the correlation ID of the call that submitted it,
    // which the callbacks and an API record of that call carry too.
    let records = records.lock().unwrap();
    let corr_of = |f: &str| -> u32 {
        s.calls
            .iter()
            .find(|c| c.1 == f)
            .map(|c| c.2)
            .unwrap_or_else(|| panic!("no {f} callback"))
    };
    let api_ids: HashMap<u32, &str> = records
        .iter()
        .filter(|r| r.0 == "API")
        .map(|r| (r.1, r.2.as_str()))
        .collect();
    let device = |kind: &str| -> Vec<(u32, &str)> {
        records
            .iter()
            .filter(|r| r.0 == kind)
            .map(|r| (r.1, r.2.as_str()))
            .collect()
    };
    assert_eq!(
        device("KERNEL"),
        [(corr_of("clEnqueueNDRangeKernel"), "twice")],
        "kernel records"
    );
    let copies = device("COPY");
    assert_eq!(copies.len(), 2, "copy records: {copies:?}");
    assert_eq!(copies[0].0, corr_of("clEnqueueWriteBuffer"));
    assert_eq!(copies[1].0, corr_of("clEnqueueReadBuffer"));
    // Every call made while 42 was pushed (the kernel's argument, its enqueue...) names it.
    let externals = device("EXTERNAL");
    assert!(
        externals.iter().all(|e| e.1 == "42")
            && externals.contains(&(corr_of("clEnqueueNDRangeKernel"), "42")),
        "external correlation records: {externals:?}"
    );
    for (corr, what) in device("KERNEL").into_iter().chain(copies) {
        assert!(
            api_ids.contains_key(&corr),
            "{what}: no API record with correlation ID {corr}"
        );
    }
    println!(
        "opencl3 on PoCL through libpti's Rust API (libpti {}): {} OpenCL callbacks, {} API \
         records, kernel and copy records correlated with their calls",
        libpti::version(),
        s.calls.len(),
        api_ids.len()
    );
}
