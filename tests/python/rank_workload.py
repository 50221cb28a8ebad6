"""One rank of the multi-rank job of pti-trace's dataset tests (tests/pti_trace/dataset.rs),
started by `mpirun`, which gives it its rank (OMPI_COMM_WORLD_RANK, as pti-trace's collector
reads it; the program itself calls no MPI).

Rank r runs STEPS steps on Intel's CPU OpenCL device through dpctl (SYCL), each an ITT task
`step` of domain `app` holding kernel `scale` (r + 1) times and kernel `shift` once, then a
collective in oneCCL's ITT domain (`oneCCL::API`, task `allreduce`, as oneCCL's own
instrumentation names it; played here by the unmodified PyPI `ittapi`), which libpti records as
communication, lasting about (r + 1) ms. So every table of the export has rows, ranks differ in
kernel counts and in communication time, and the slowest rank of `scale` is the last.

Prints "RANK r DONE" at the end."""
import ctypes
import os
import sys
import time

import dpctl
import dpctl.memory as mem
import dpctl.program as prog
import ittapi

N = 1024
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
SOURCE = """
__kernel void scale(__global float* v, float k) { v[get_global_id(0)] *= k; }
__kernel void shift(__global float* v, float k) { v[get_global_id(0)] += k; }
"""


def cpu_device():
    """Intel's CPU OpenCL device (not PoCL, which the machine may also have)."""
    for d in dpctl.get_devices(backend="opencl"):
        if "pthread" not in d.name and d.is_cpu:
            return d
    sys.exit("no Intel CPU OpenCL device: is OCL_ICD_FILENAMES set to .venv/lib/libintelocl.so?")


def main():
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    queue = dpctl.SyclQueue(cpu_device())
    program = prog.create_program_from_source(queue, SOURCE)
    scale, shift = program.get_sycl_kernel("scale"), program.get_sycl_kernel("shift")
    data = mem.MemoryUSMDevice(4 * N, queue=queue)
    data.memset(0)
    app, ccl = ittapi.domain("app"), ittapi.domain("oneCCL::API")
    for _ in range(STEPS):
        with ittapi.task("step", domain=app):
            for _ in range(rank + 1):
                queue.submit(scale, [data, ctypes.c_float(1.0)], [N]).wait()
            queue.submit(shift, [data, ctypes.c_float(0.0)], [N]).wait()
        with ittapi.task("allreduce", domain=ccl):
            time.sleep((rank + 1) / 1000)
    print(f"RANK {rank} DONE", flush=True)


main()
