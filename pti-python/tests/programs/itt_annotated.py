"""A program annotated with Intel's ITT API through the unmodified PyPI ``ittapi`` package, whose
static part loads libpti as its collector (``INTEL_LIBITTNOTIFY64``, set by the test or by
pti-trace). It makes:

- in domain ``app``: a task ``outer`` holding two tasks ``inner``, an overlapped task ``async``,
  a legacy event ``mark`` (ittapi's nearest thing to a marker, which it has no API for), and a
  task ``hidden`` between ``ittapi.pause()`` and ``ittapi.resume()`` (and, with ``views``, a task
  ``hidden_too`` between ``libpti.pause()`` and ``libpti.resume()``);
- in domain ``oneCCL::API``, the names oneCCL 2021.14 gives its collectives: ``allreduce``
  through ittapi's own API, then ``allreduce``, ``allgatherv`` and ``bcast`` with their sizes as
  ITT metadata ``send_size``, through the static part's exported function pointers, as oneCCL's
  C code calls them (ittapi has no metadata API);
- two overlapped tasks ``first`` and ``second`` whose IDs share their first word, and a marker
  ``tick`` in ``app``, and a frame in domain ``frames``, through the same pointers;
- with ``pyopencl`` as its argument, one kernel on PoCL inside ``outer``, so that a trace shows
  the annotation around the calls.

With ``views`` as its first argument it reads the annotation and communication records back
through libpti's views and prints them in one ``RESULT {json}`` line.
"""
import ctypes
import json
import sys

import ittapi
import ittapi.native

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
views = None
if mode == "views":
    import libpti

    views = libpti.Views("EXT_ANNOTATION", "COMMUNICATION").start()


def kernel():
    if mode != "pyopencl":
        return
    import numpy as np
    import pyopencl as cl

    platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")
    context = cl.Context(platform.get_devices())
    queue = cl.CommandQueue(context)
    program = cl.Program(context, "__kernel void twice(__global float* v) { v[get_global_id(0)] *= 2.0f; }").build()
    host = np.ones(64, dtype=np.float32)
    buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    program.twice(queue, host.shape, None, buffer)
    queue.finish()


app = ittapi.domain("app")
with ittapi.task("outer", domain=app):
    with ittapi.task("inner", domain=app):
        kernel()
    with ittapi.task("inner", domain=app):
        pass
with ittapi.task("async", domain=app, overlapped=True):
    pass
with ittapi.event("mark"):
    pass
ittapi.pause()
with ittapi.task("hidden", domain=app):
    pass
ittapi.resume()
paused_seen = None
if views is not None:  # libpti's own pause, from Python
    libpti.pause()
    paused_seen = libpti.is_paused()
    with ittapi.task("hidden_too", domain=app):
        pass
    libpti.resume()

with ittapi.task("allreduce", domain=ittapi.domain("oneCCL::API")):
    pass


class Id(ctypes.Structure):
    _fields_ = [("d1", ctypes.c_ulonglong), ("d2", ctypes.c_ulonglong), ("d3", ctypes.c_ulonglong)]


static_part = ctypes.CDLL(ittapi.native.__file__)


def itt(name, restype, *argtypes):
    """The static part's current pointer for ITT function ``name`` (the collector's function,
    once the static part loaded it), called as ITT's own macros call it: not at all when NULL."""
    address = ctypes.c_void_p.in_dll(static_part, f"__itt_{name}_ptr__3_0").value
    if not address:  # no collector: ITT's macros skip the call
        return lambda *args: None
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


domain_create = itt("domain_create", ctypes.c_void_p, ctypes.c_char_p)
handle = itt("string_handle_create", ctypes.c_void_p, ctypes.c_char_p)
task_begin = itt("task_begin", None, ctypes.c_void_p, Id, Id, ctypes.c_void_p)
task_end = itt("task_end", None, ctypes.c_void_p)
metadata_add = itt(
    "metadata_add", None, ctypes.c_void_p, Id, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
)
U64 = 1  # __itt_metadata_u64
ccl = domain_create(b"oneCCL::API")
for operation, size in (("allreduce", 1 << 20), ("allgatherv", 4096), ("bcast", 64)):
    task_begin(ccl, Id(), Id(), handle(operation.encode()))
    value = ctypes.c_uint64(size)
    metadata_add(ccl, Id(), handle(b"send_size"), U64, 1, ctypes.byref(value))
    task_end(ccl)

# Two overlapped tasks whose IDs share their first word (as `__itt_id_make(&object, n)` makes
# them), ended in the order they began.
begin_overlapped = itt("task_begin_overlapped", None, ctypes.c_void_p, Id, Id, ctypes.c_void_p)
end_overlapped = itt("task_end_overlapped", None, ctypes.c_void_p, Id)
app_domain = domain_create(b"app")
begin_overlapped(app_domain, Id(7, 1, 0), Id(), handle(b"first"))
begin_overlapped(app_domain, Id(7, 2, 0), Id(), handle(b"second"))
end_overlapped(app_domain, Id(7, 1, 0))
end_overlapped(app_domain, Id(7, 2, 0))

# A marker and a frame, which ittapi has no API for, through the same pointers.
marker = itt("marker", None, ctypes.c_void_p, Id, ctypes.c_void_p, ctypes.c_int)
frame_begin = itt("frame_begin_v3", None, ctypes.c_void_p, ctypes.c_void_p)
frame_end = itt("frame_end_v3", None, ctypes.c_void_p, ctypes.c_void_p)
THREAD_SCOPE = 3  # __itt_marker_scope_thread
marker(domain_create(b"app"), Id(), handle(b"tick"), THREAD_SCOPE)
frames = domain_create(b"frames")
frame_begin(frames, None)
frame_end(frames, None)

print("OUTPUT done", flush=True)

if views is not None:
    views.stop()
    annotations = [
        {"type": r.annotation_type, "domain": r.domain, "name": r.name, "depth": r.depth,
         "start": r.start_timestamp, "end": r.end_timestamp}
        for r in views.records("EXT_ANNOTATION")
    ]
    communication = [
        {"name": r.name, "send": r.send_size, "start": r.start_timestamp, "end": r.end_timestamp}
        for r in views.records("COMMUNICATION")
    ]
    print("RESULT", json.dumps({"annotations": annotations, "communication": communication,
                                "dropped": sum(views.dropped.values()), "paused_seen": paused_seen,
                                "paused_after": libpti.is_paused()}))
