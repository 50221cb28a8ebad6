"""A Python callback that raises: the exception becomes a critical event (a
CriticalEventWarning), the traced calls go on, and the program's result is right."""
import json
import warnings

import libpti
import numpy as np
import pyopencl as cl

warnings.simplefilter("always")


def callback(event):
    if event.name == "clGetPlatformIDs":
        raise ValueError("the tool's bug")


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    subscriber = libpti.Subscriber(callback).enable_domain(libpti.Domain.DRIVER_API)
    platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")
    context = cl.Context(platform.get_devices())
    queue = cl.CommandQueue(context)
    host = np.ones(16, dtype=np.float32)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    out = np.empty_like(host)
    cl.enqueue_copy(queue, out, buffer)
    queue.finish()
    subscriber.close()

warned = [w for w in caught if issubclass(w.category, libpti.CriticalEventWarning)]
print(
    "RESULT",
    json.dumps(
        {
            "sum": float(out.sum()),
            "warnings": [str(w.message) for w in warned],
            "events": [list(e) for e in libpti.critical_events()],
            "counts": list(libpti.callback_counts()),
        }
    ),
)
