//! A Rust program that runs OpenCL kernels with the `opencl3` crate on PoCL and traces itself
//! through this crate: the OpenCL calls reach its subscriber (libpti.so is the process's OpenCL
//! layer, linked through this crate), ENTER and EXIT of each with one correlation ID.
//!
//! Needs PoCL behind the system's ICD loader (`cargo xtask setup` installs both).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use libpti::{ApiGroup, Domain, Event, Site, Subscriber};
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

#[derive(Default)]
struct Seen {
    /// (site, function, correlation ID) of every OpenCL call.
    calls: Vec<(Site, String, u32)>,
    kernels: Vec<String>,
    criticals: Vec<String>,
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
        ExecuteKernel::new(&kernel)
            .set_arg(&buffer)
            .set_global_work_size(N)
            .enqueue_nd_range(&queue)
            .unwrap();
        queue
            .enqueue_read_buffer(&buffer, CL_BLOCKING, 0, &mut data, &[])
            .unwrap();
    }
    queue.finish().unwrap();
    assert!(data.iter().all(|v| *v == 2.0), "the kernel ran");
    drop(subscriber);

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
    println!(
        "opencl3 on PoCL through libpti's Rust API (libpti {}): {} OpenCL callbacks",
        libpti::version(),
        s.calls.len()
    );
}
