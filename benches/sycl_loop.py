"""The SYCL program of the overhead benchmark (issue #8): the SYCL tests' workload
(tests/python/sycl_workload.py: USM copy, fill, two kernels on two queues) in a timed loop, on
dpctl and Intel's CPU OpenCL runtime from .venv. It knows nothing of libpti;
benches/overhead.py runs it untraced and with libpti and benches/bench_tool.c preloaded.

usage: sycl_loop.py <timed iterations> [warm-up iterations] [workload|burst]
burst: each iteration submits 16 small kernels to one queue and waits once (the cost per
submission, without the waits that dominate the workload).
Prints "RESULT <ns per iteration> maxrss_kib <peak resident set>"."""
import ctypes
import resource
import sys
import time

import dpctl
import dpctl.memory as mem
import dpctl.program as prog

N = 4096
BYTES = 4 * N
SOURCE = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
__kernel void scale(__global float* c, float k) {
    size_t i = get_global_id(0);
    c[i] *= k;
}
"""


def device():
    for d in dpctl.get_devices(backend="opencl"):
        if "pthread" not in d.name and d.is_cpu:
            return d
    sys.exit("sycl_loop: no Intel CPU OpenCL device (OCL_ICD_FILENAMES=.venv/lib/libintelocl.so?)")


def main():
    n = int(sys.argv[1])
    warm = int(sys.argv[2]) if len(sys.argv) > 2 else n // 10
    d = device()
    q1 = dpctl.SyclQueue(d)
    q2 = dpctl.SyclQueue(q1.sycl_context, d)
    program = prog.create_program_from_source(q1, SOURCE)
    vadd, scale = program.get_sycl_kernel("vadd"), program.get_sycl_kernel("scale")
    a = mem.MemoryUSMDevice(BYTES, queue=q1)
    b = mem.MemoryUSMShared(BYTES, queue=q1)
    c = mem.MemoryUSMHost(BYTES, queue=q1)

    def burst():
        for _ in range(16):
            q1.submit(scale, [c, ctypes.c_float(1.0)], [64])
        q1.wait()

    def workload():
        b.memset(0)
        q1.memcpy(b, a, BYTES)
        q1.submit(vadd, [a, b, c], [N]).wait()
        q2.submit(scale, [c, ctypes.c_float(0.5)], [N]).wait()

    once = burst if len(sys.argv) > 3 and sys.argv[3] == "burst" else workload
    for _ in range(warm):
        once()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        once()
    per = (time.perf_counter_ns() - t0) / n
    print(f"RESULT {per:.1f} maxrss_kib {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)


if __name__ == "__main__":
    main()
