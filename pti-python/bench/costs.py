"""What the Python package costs, measured in one process against itself (these machines are
noisy: only ratios and differences within one run mean much).

For N calls of clGetPlatformInfo through PyOpenCL on PoCL, the time per call: libpti loaded
with nothing enabled, with a Python callback subscribed (ENTER and EXIT), and with the
DRIVER_API view on; then, for the records of that view, the time per record to read them as
NumPy arrays and as Record objects.

Run it with the venv the tests make (target/python-tests/venv), from the workspace root:
    target/python-tests/venv/bin/python pti-python/bench/costs.py [N]
and, for the same calls without libpti in the process:
    target/python-tests/venv/bin/python pti-python/bench/costs.py [N] --untraced
"""
import sys
import time

UNTRACED = "--untraced" in sys.argv
if not UNTRACED:
    import libpti
import pyopencl as cl

N = int(next((a for a in sys.argv[1:] if a.isdigit()), "20000"))
platform = next(p for p in cl.get_platforms() if p.name == "Portable Computing Language")


def per_call():
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(N):
            platform.get_info(cl.platform_info.VERSION)
        best = min(best, (time.perf_counter() - start) / N)
    return best * 1e9


base = per_call()
print(f"calls: {N}, best of 5 rounds, ns per call")
print(f"  {'without libpti' if UNTRACED else 'libpti loaded, nothing enabled'}: {base:8.0f}")
if UNTRACED:
    sys.exit(0)

seen = [0]


def callback(event):
    seen[0] += 1


with libpti.Subscriber(callback) as subscriber:
    subscriber.enable_domain(libpti.Domain.DRIVER_API)
    traced = per_call()
print(f"  Python callback, ENTER+EXIT: {traced:8.0f}  (+{traced - base:.0f} ns, x{traced / base:.2f})")

with libpti.Views("DRIVER_API") as views:
    viewed = per_call()
print(f"  DRIVER_API view:            {viewed:8.0f}  (+{viewed - base:.0f} ns, x{viewed / base:.2f})")

start = time.perf_counter()
arrays = views.arrays()
array_s = time.perf_counter() - start
n = len(arrays[libpti.ViewKind.DRIVER_API])
start = time.perf_counter()
records = views.records("DRIVER_API")
records_s = time.perf_counter() - start
copied, copy_ns = libpti._native.copy_stats()
print(f"records: {n}, dropped {sum(views.dropped.values())}")
print(f"  copied out of libpti's buffers (on libpti's thread):  {copy_ns / copied:8.1f} ns per record")
print(f"  as NumPy arrays (first read, joins the buffers' bytes): {array_s / n * 1e9:8.1f} ns per record")
print(f"  as Record objects:                                    {records_s / n * 1e9:8.1f} ns per record")
