"""What an ITT annotation costs under libpti: 200,000 begin/end pairs of one ittapi task, after
2,000 of warm-up, as ns per pair. Modes: ``none`` (no collector: ITT's static part calls its null
functions), ``idle`` (libpti is the collector, no view enabled: with INTEL_LIBITTNOTIFY64 set),
``views`` (the annotation view enabled through the Python package). Prints the mode, ns per pair
and the records received. docs/BENCHMARKS.md has the command and the figures."""
import sys, time, os
import ittapi
mode = sys.argv[1]
views = None
if mode in ("views", "idle"):
    import libpti
    if mode == "views":
        views = libpti.Views("EXT_ANNOTATION").start()
d = ittapi.domain("bench")
h = ittapi.string_handle("t")
N = 200000
for _ in range(2000):
    ittapi.task_begin(d, h); ittapi.task_end(d)
t0 = time.perf_counter_ns()
for _ in range(N):
    ittapi.task_begin(d, h); ittapi.task_end(d)
t1 = time.perf_counter_ns()
n = len(views.records("EXT_ANNOTATION")) if views is not None and (views.stop() or True) else 0
print(mode, (t1 - t0) / N, n)
