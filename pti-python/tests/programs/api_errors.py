"""Bad input to the Python API: each a clear Python exception, never a crash."""
import json

import libpti

found = {}


def attempt(name, f):
    try:
        f()
        found[name] = "no error"
    except Exception as e:  # noqa: BLE001 - the test records which
        found[name] = [type(e).__name__, getattr(e, "name", None), str(e)]


attempt("unknown kind name", lambda: libpti.Views("NO_SUCH_VIEW"))
attempt("unknown kind value", lambda: libpti.Views(12345))
attempt("no kind", lambda: libpti.Views())
attempt("pop with nothing pushed", lambda: libpti.pop_external_correlation(libpti.ExternalKind.CUSTOM_1))
attempt("push kind 0", lambda: libpti.push_external_correlation(0, 1))
attempt("bad domain", lambda: libpti.Subscriber(print).enable_domain(9))
attempt("bad api id", lambda: libpti.Subscriber(print).enable(libpti.ApiGroup.OPENCL, 999999))
attempt("record-less kind", lambda: libpti.dtype("RESERVED"))
views = libpti.Views("DRIVER_API").start()
attempt("second views", lambda: libpti.Views("DEVICE_GPU_KERNEL").start())
views.stop()
closed = libpti.Subscriber(print)
closed.close()
attempt("closed subscriber", lambda: closed.enable_domain(libpti.Domain.DRIVER_API))
attempt("views again after stop", lambda: libpti.Views("DRIVER_API").start().stop())
print("RESULT", json.dumps(found))
