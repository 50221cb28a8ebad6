"""A dpctl (SYCL) program on Intel's CPU OpenCL runtime: USM memory, a copy, a kernel built from
OpenCL C, the result read back.

With LIBPTI_TEST_TRACE=1 it traces itself with libpti, imported before dpctl: views of the SYCL
runtime's calls, the OpenCL calls under them, kernels and copies; one ``RESULT {json}`` line. Its
``OUTPUT`` lines are the same either way.
"""
import json
import os

TRACE = os.environ.get("LIBPTI_TEST_TRACE") == "1"
if TRACE:
    import libpti

import dpctl
import dpctl.memory as mem
import dpctl.program as prog
import numpy as np

N = 4096
BYTES = 4 * N
SOURCE = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
"""


def work():
    queue = dpctl.SyclQueue("opencl:cpu")
    program = prog.create_program_from_source(queue, SOURCE)
    vadd = program.get_sycl_kernel("vadd")
    a = mem.MemoryUSMDevice(BYTES, queue=queue)
    b = mem.MemoryUSMShared(BYTES, queue=queue)
    c = mem.MemoryUSMShared(BYTES, queue=queue)
    a.copy_from_host(np.arange(N, dtype=np.float32).tobytes())
    queue.memcpy(b, a, BYTES)
    queue.submit(vadd, [a, b, c], [N]).wait()
    out = np.frombuffer(c.copy_to_host(), dtype=np.float32)
    print("OUTPUT device", queue.sycl_device.name, flush=True)
    print("OUTPUT sum", float(out.sum()), "first", out[:4].tolist(), flush=True)


if not TRACE:
    work()
else:
    kinds = ["RUNTIME_API", "DRIVER_API", "DEVICE_CPU_KERNEL", "DEVICE_GPU_KERNEL", "DEVICE_GPU_MEM_COPY"]
    with libpti.Views(*kinds) as views:
        work()
    kernels = [r for k in ("DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL") for r in views.records(k)]
    print(
        "RESULT",
        json.dumps(
            {
                "runtime": [[r.correlation_id, r.api_name] for r in views.records("RUNTIME_API")],
                "driver": [[r.correlation_id, r.api_name] for r in views.records("DRIVER_API")],
                "kernels": [[r.correlation_id, r.name] for r in kernels],
                "copies": [[r.correlation_id, r.name, r.bytes] for r in views.records("DEVICE_GPU_MEM_COPY")],
                "dropped": sum(views.dropped.values()),
                "pending": views.pending_device_records,
                "criticals": [list(e) for e in libpti.critical_events()],
            }
        ),
    )
