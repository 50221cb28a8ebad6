"""A real SYCL program for the SYCL backend's tests, in Python on dpctl (the SYCL runtime and
Intel's CPU OpenCL runtime from .venv): USM allocations of the three kinds, copies, a fill, two
kernels built from OpenCL C with dpctl.program, run on two queues.

With PTI_TEST_BACKEND=level_zero it runs the same on the first Level Zero GPU instead (the
simulated driver of the tests, through the Unified Runtime's Level Zero adapter), its kernels
built from SPIR-V: a Level Zero device takes no OpenCL C, and the simulated driver implements
kernels by name (SPIRV below declares the two entry points, with empty bodies).

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


def spirv_module():
    """A SPIR-V 1.0 module declaring the kernels vadd(float*, float*, float*) and
    scale(float*, float), each body a bare return."""
    words = []

    def op(code, *operands):
        words.append(((1 + len(operands)) << 16) | code)
        words.extend(operands)

    def string(text):
        raw = text.encode() + b"\0"
        raw += b"\0" * (-len(raw) % 4)
        return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]

    void, f32, ptr, fn3, fn2, vadd_id, scale_id = range(1, 8)
    next_id = 8
    op(17, 4)  # OpCapability Addresses
    op(17, 6)  # OpCapability Kernel
    op(14, 2, 2)  # OpMemoryModel Physical64 OpenCL
    op(15, 6, vadd_id, *string("vadd"))  # OpEntryPoint Kernel
    op(15, 6, scale_id, *string("scale"))
    op(19, void)  # OpTypeVoid
    op(22, f32, 32)  # OpTypeFloat 32
    op(32, ptr, 5, f32)  # OpTypePointer CrossWorkgroup float
    op(33, fn3, void, ptr, ptr, ptr)  # OpTypeFunction
    op(33, fn2, void, ptr, f32)
    for fid, ftype, params in ((vadd_id, fn3, (ptr, ptr, ptr)), (scale_id, fn2, (ptr, f32))):
        op(54, void, fid, 0, ftype)  # OpFunction
        for ptype in params:
            op(55, ptype, next_id)  # OpFunctionParameter
            next_id += 1
        op(248, next_id)  # OpLabel
        next_id += 1
        op(253)  # OpReturn
        op(56)  # OpFunctionEnd
    header = [0x07230203, 0x00010000, 0, next_id, 0]
    return b"".join(w.to_bytes(4, "little") for w in header + words)


def say(*words):
    print("W", *words, flush=True)


def level_zero():
    return os.environ.get("PTI_TEST_BACKEND") == "level_zero"


def device():
    """Intel's CPU OpenCL device (not PoCL, which the machine may also have), or the first
    Level Zero GPU."""
    if level_zero():
        for d in dpctl.get_devices(backend="level_zero", device_type="gpu"):
            return d
        sys.exit("no Level Zero GPU: is ZE_ENABLE_ALT_DRIVERS set to the simulated driver?")
    for d in dpctl.get_devices(backend="opencl"):
        if "pthread" not in d.name and d.is_cpu:
            return d
    sys.exit("no Intel CPU OpenCL device: is OCL_ICD_FILENAMES set to .venv/lib/libintelocl.so?")


def profiled(d, q1, kernels):
    """With PTI_TEST_PROFILED_KERNELS=n: n kernels (the two, in turn) on an in-order queue with
    SYCL's event profiling on, submitted without a wait between them; prints each event's
    profiling start and end ("W PROFILE <i> <kernel> <start ns> <end ns>"), what SYCL reads from
    the event's kernel timestamps."""
    n = int(os.environ.get("PTI_TEST_PROFILED_KERNELS", "0"))
    if not n:
        return
    q3 = dpctl.SyclQueue(q1.sycl_context, d, property=["enable_profiling", "in_order"])
    events = []
    for i in range(n):
        kernel, args, name = kernels[i % len(kernels)]
        events.append((name, q3.submit(kernel, args, [N])))
        say("EXPECT KERNEL", name, "q3")
    for _, event in events:
        event.wait()
    for i, (name, event) in enumerate(events):
        say("PROFILE", i, name, event.profiling_info_start, event.profiling_info_end)


def main():
    d = device()
    say("DEVICE", d.name)
    q1 = dpctl.SyclQueue(d)
    q2 = dpctl.SyclQueue(q1.sycl_context, d)
    if level_zero():
        program = prog.create_program_from_spirv(q1, spirv_module())
    else:
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
    profiled(d, q1, [(vadd, [a, b, c], "vadd"), (scale, [c, ctypes.c_float(1.0)], "scale")])
    del a, b, c
    for kind in ("DEVICE", "SHARED", "HOST"):
        say("EXPECT RELEASE", kind, BYTES)


if __name__ == "__main__":
    main()
