"""A real SYCL program for the SYCL backend's tests, in Python on dpctl (the SYCL runtime and
Intel's CPU OpenCL runtime from .venv): USM allocations of the three kinds, copies, a fill, two
kernels built from OpenCL C with dpctl.program, run on two queues.

It knows nothing of libpti, except that with PTI_TEST_EXTERNAL_ID set it pushes that external
correlation ID around its first kernel submission (ctypes, through the libpti the tool loaded).
It prints what it computed ("W RESULT") and what it submitted ("W EXPECT ..."), which the records
must match."""
import ctypes
import os
import sys

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
__kernel void scale(__global float* c, float k) {
    size_t i = get_global_id(0);
    c[i] *= k;
}
"""


def say(*words):
    print("W", *words, flush=True)


def device():
    """Intel's CPU OpenCL device (not PoCL, which the machine may also have)."""
    for d in dpctl.get_devices(backend="opencl"):
        if "pthread" not in d.name and d.is_cpu:
            return d
    sys.exit("no Intel CPU OpenCL device: is OCL_ICD_FILENAMES set to .venv/lib/libintelocl.so?")


def main():
    d = device()
    say("DEVICE", d.name)
    q1 = dpctl.SyclQueue(d)
    q2 = dpctl.SyclQueue(q1.sycl_context, d)
    program = prog.create_program_from_source(q1, SOURCE)
    vadd, scale = program.get_sycl_kernel("vadd"), program.get_sycl_kernel("scale")

    a = mem.MemoryUSMDevice(BYTES, queue=q1)
    b = mem.MemoryUSMShared(BYTES, queue=q1)
    c = mem.MemoryUSMHost(BYTES, queue=q1)
    for m, kind in ((a, "DEVICE"), (b, "SHARED"), (c, "HOST")):
        say("EXPECT ALLOC", kind, BYTES)

    a.copy_from_host(np.arange(N, dtype=np.float32).tobytes())
    say("EXPECT COPY", BYTES)
    b.memset(0)
    say("EXPECT FILL", BYTES)
    q1.memcpy(b, a, BYTES)
    say("EXPECT COPY", BYTES)

    external = os.environ.get("PTI_TEST_EXTERNAL_ID")
    if external:
        pti = ctypes.CDLL("libpti.so.0")
        pti.ptiViewPushExternalCorrelationId(ctypes.c_uint32(2), ctypes.c_uint64(int(external)))
    q1.submit(vadd, [a, b, c], [N]).wait()
    say("EXPECT KERNEL vadd q1")
    if external:
        popped = ctypes.c_uint64(0)
        pti.ptiViewPopExternalCorrelationId(ctypes.c_uint32(2), ctypes.byref(popped))
    q2.submit(scale, [c, ctypes.c_float(0.5)], [N]).wait()
    say("EXPECT KERNEL scale q2")

    out = np.frombuffer(c.copy_to_host(), dtype=np.float32)
    say("EXPECT COPY", BYTES)
    say("RESULT", float(out.sum()))
    del a, b, c
    for kind in ("DEVICE", "SHARED", "HOST"):
        say("EXPECT RELEASE", kind, BYTES)


if __name__ == "__main__":
    main()
