"""Exits while a native thread (caller_thread.c, its path the first argument) still makes
OpenCL calls that a Python callback is subscribed to. The second argument is how long the
callback sleeps (seconds), to have callbacks in flight when the interpreter exits.
Prints ``RESULT {json}`` and returns from the main module with the thread running; an exit
handler registered before libpti's (so it runs after it) prints ``LATE {json}``: what became of
the callbacks once libpti closed the interpreter's door."""
import atexit
import ctypes
import json
import sys
import time


def late():
    seen_then = seen[0]
    time.sleep(0.05)  # the thread goes on calling
    counts = libpti.callback_counts()
    print("LATE", json.dumps({"seen": seen_then, "seen_after": seen[0], "skipped": counts.skipped}), flush=True)


atexit.register(late)

import libpti  # noqa: E402

library = ctypes.CDLL(sys.argv[1])
library.caller_calls.restype = ctypes.c_long
pause = float(sys.argv[2])
seen = [0]


def callback(event):
    seen[0] += 1
    if pause:
        time.sleep(pause)


subscriber = libpti.Subscriber(callback).enable_domain(libpti.Domain.DRIVER_API)
assert library.start_caller() == 0
deadline = time.time() + 30
while seen[0] < 200 and time.time() < deadline:
    time.sleep(0.01)
print("RESULT", json.dumps({"seen": seen[0], "native_calls": library.caller_calls()}), flush=True)
# The main module ends here; the thread goes on calling, and its callbacks with it.
