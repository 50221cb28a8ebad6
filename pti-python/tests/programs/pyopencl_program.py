"""A PyOpenCL program on PoCL: a kernel run three times on a buffer, read back.

With LIBPTI_TEST_TRACE=1 it traces itself with libpti (imported first): a Subscriber on the
driver API, views of API calls, kernels, copies and external correlation, an external ID pushed
around each launch; it prints what it saw as one ``RESULT {json}`` line. Its own output (the
``OUTPUT`` lines) is the same either way.
"""
import json
import os

TRACE = os.environ.get("LIBPTI_TEST_TRACE") == "1"
if TRACE:
    import libpti

import numpy as np
import pyopencl as cl

N = 4096
SOURCE = "__kernel void twice(__global float* v) { v[get_global_id(0)] *= 2.0f; }"


def work(traced):
    platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")
    context = cl.Context(platform.get_devices())
    queue = cl.CommandQueue(context)
    twice = cl.Kernel(cl.Program(context, SOURCE).build(), "twice")
    host = np.arange(N, dtype=np.float32)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    for i in range(3):
        if traced:
            with libpti.external_correlation(100 + i):
                twice(queue, (N,), None, buffer)
        else:
            twice(queue, (N,), None, buffer)
    cl.enqueue_copy(queue, host, buffer)
    queue.finish()
    print("OUTPUT sum", float(host.sum()), "first", host[:4].tolist(), flush=True)


if not TRACE:
    work(False)
else:
    calls = []
    subscriber = libpti.Subscriber(calls.append).enable_domain(libpti.Domain.DRIVER_API)
    kinds = ["DRIVER_API", "DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL", "DEVICE_GPU_MEM_COPY", "EXTERNAL_CORRELATION"]
    with libpti.Views(*kinds) as views:
        work(True)
    subscriber.close()
    arrays = views.arrays()
    kernels = [r for k in ("DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL") for r in views.records(k)]
    kernel_array = np.concatenate(
        [arrays[k] for k in arrays if k.name in ("DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL")]
    )
    print(
        "RESULT",
        json.dumps(
            {
                "calls": [[c.site.name, c.name, c.correlation_id] for c in calls],
                "apis": [[r.correlation_id, r.api_name] for r in views.records("DRIVER_API")],
                "kernels": [[r.correlation_id, r.name] for r in kernels],
                "kernel_array_ids": [int(x) for x in kernel_array["correlation_id"]],
                "kernel_array_durations_ok": bool(
                    (kernel_array["end_timestamp"] >= kernel_array["start_timestamp"]).all()
                ),
                "copies": [[r.correlation_id, r.name] for r in views.records("DEVICE_GPU_MEM_COPY")],
                "externals": [[r.correlation_id, r.external_id] for r in views.records("EXTERNAL_CORRELATION")],
                "dropped": sum(views.dropped.values()),
                "accounting": {
                    k.name: [n, len(arrays.get(k, ())), views.dropped[k]] for k, n in views.emitted.items()
                },
                "pending": views.pending_device_records,
                "criticals": [list(e) for e in libpti.critical_events()],
                "callback_counts": list(libpti.callback_counts()),
            }
        ),
    )
