"""The lifecycle of views and subscribers in one PyOpenCL program on PoCL, each scenario's facts
in one ``RESULT {json}`` line:

- flush while the views run delivers the kernel record before stop;
- two Views in turn: the second gets none of the first's records, and stopping the first (no
  longer running) leaves the second running;
- a callback that closes its own subscriber: no crash, no callback after;
- fork with views and a subscriber running: the child runs and exits, the parent goes on;
- a critical event reaches Python as a warning at the next bytecode, without a stop or flush
  (a kernel on a queue created before a device view was enabled: libpti cannot time it).
"""
import json
import os
import warnings

import libpti
import numpy as np
import pyopencl as cl

found = {}
platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")
context = cl.Context(platform.get_devices())
early_queue = cl.CommandQueue(context)
twice = cl.Kernel(cl.Program(context, "__kernel void twice(__global float* v) { v[get_global_id(0)] *= 2.0f; }").build(), "twice")
host = np.ones(256, dtype=np.float32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)


def launch(on=None):
    q = on or queue
    twice(q, host.shape, None, buffer)
    q.finish()


# A critical event, delivered by the pending call (no stop, no flush).
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    untimed = libpti.Views("DEVICE_CPU_KERNEL", "DEVICE_GPU_KERNEL").start()
    launch(early_queue)
    for _ in range(1000000):
        if caught:
            break
    found["warned before stop"] = [str(w.message) for w in caught]
    untimed.stop()
found["untimed kernels"] = len(untimed.records("DEVICE_CPU_KERNEL")) + len(untimed.records("DEVICE_GPU_KERNEL"))

# Flush while running.
first = libpti.Views("DEVICE_CPU_KERNEL", "DEVICE_GPU_KERNEL", "DRIVER_API").start()
queue = cl.CommandQueue(context)
launch()
first.flush()
found["kernels after flush"] = len(first.records("DEVICE_CPU_KERNEL")) + len(first.records("DEVICE_GPU_KERNEL"))
first.stop()
found["first: api records"] = len(first.records("DRIVER_API"))

# A second Views, in turn.
second = libpti.Views("DRIVER_API").start()
first.stop()  # not running: does nothing
cl.enqueue_copy(queue, host, buffer)
queue.finish()
found["first stop left second running"] = libpti._native.running()
second.stop()
second_ids = {r.correlation_id for r in second.records("DRIVER_API")}
first_ids = {r.correlation_id for r in first.records("DRIVER_API")}
found["second's records"] = len(second_ids)
found["shared records"] = len(first_ids & second_ids)
found["first unchanged"] = len(first.records("DRIVER_API")) == found["first: api records"]

# A callback that closes its own subscriber.
after_close = []
closer = None


def close_on_first(event):
    after_close.append(event.name)
    closer.close()


closer = libpti.Subscriber(close_on_first)
closer.enable_domain(libpti.Domain.DRIVER_API)
launch()
launch()
found["callbacks of the closed subscriber"] = len(after_close)

# fork while views and a subscriber run.
seen = []
with libpti.Subscriber(seen.append) as s, libpti.Views("DRIVER_API") as v:
    s.enable_domain(libpti.Domain.DRIVER_API)
    launch()
    pid = os.fork()
    if pid == 0:
        total = sum(range(1000))
        os._exit(0 if total == 499500 else 1)
    _, status = os.waitpid(pid, 0)
    launch()
found["child exit status"] = os.waitstatus_to_exitcode(status)
found["parent records after fork"] = len(v.records("DRIVER_API"))

print("RESULT", json.dumps(found))
