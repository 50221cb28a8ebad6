"""PyOpenCL on PoCL: one queue copies a buffer, another runs only markers and a barrier (PyOpenCL
loads its own, renamed OpenCL loader, out of the process's global scope)."""
import numpy as np
import pyopencl as cl

platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")
context = cl.Context(platform.get_devices()[:1])
work = cl.CommandQueue(context)
sync = cl.CommandQueue(context)
host = np.arange(256, dtype=np.float32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=host.nbytes)
cl.enqueue_copy(work, buffer, host)
first = cl.enqueue_marker(sync)
cl.enqueue_barrier(sync, wait_for=[first])
cl.enqueue_marker(sync)
sync.finish()
cl.enqueue_copy(work, host, buffer)
work.finish()
print("OUTPUT done", float(host.sum()), flush=True)
