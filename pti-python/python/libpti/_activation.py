"""How libpti gets into a Python process before the runtimes it traces.

The OpenCL loader, the SYCL runtime (XPTI) and the Level Zero loader read their set-up from the
environment when they initialise: ``OPENCL_LAYERS`` must name libpti before the first OpenCL
call, ``XPTI_SUBSCRIBERS`` (with ``XPTI_TRACE_ENABLE``, ``XPTI_FRAMEWORK_DISPATCHER`` and
``UR_ENABLE_LAYERS``) before the SYCL runtime loads, ``ZE_ENABLE_TRACING_LAYER`` before the
first ``zeInit``. libpti's constructor sets them when ``libpti.so`` loads, but only while the
process has one thread; a Python process often has more (NumPy's BLAS threads), so this module
checks the result and sets what is missing itself, with the constructor's rules (nothing the user
set is overridden, libpti's path is added to lists). It also keeps ``os.environ`` in step, so that
processes the program starts inherit the set-up.

A runtime already loaded when libpti is imported has read its environment: its calls would not
be traced. That is an ``ImportError`` naming it, unless ``LIBPTI_ALLOW_LATE_IMPORT=1`` (then a
warning; libpti reports what it misses as critical events).
"""
from __future__ import annotations

import ctypes
import os
import re
import warnings
from typing import Dict, List, Optional

# Libraries whose presence means a runtime may have read its environment already.
_RUNTIMES = [
    (re.compile(r"^libsycl\.so"), "the SYCL runtime (dpctl, dpnp, torch XPU)"),
    (re.compile(r"^libur_loader\.so"), "the Unified Runtime"),
    (re.compile(r"^libOpenCL[-.]"), "an OpenCL loader (pyopencl, dpctl)"),
    (re.compile(r"^libze_loader\.so"), "the Level Zero loader"),
]


def _loaded_libraries() -> List[str]:
    """Paths of the shared objects mapped in this process."""
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    paths.append(parts[5].strip())
    except OSError:
        return []
    return sorted(set(paths))


def loaded_libpti() -> Optional[str]:
    """The path of the libpti.so mapped in this process, if one is."""
    for path in _loaded_libraries():
        if re.match(r"^libpti\.so(\.\d+)*$", os.path.basename(path)):
            return path
    return None


def loaded_collector() -> Optional[str]:
    """The path of pti-trace's collector, if it is loaded in this process."""
    for path in _loaded_libraries():
        if os.path.basename(path) == "libpti_trace_collector.so":
            return path
    return None


def check_runtimes_not_loaded() -> None:
    """Raises ImportError if a runtime libpti traces was loaded before libpti (see module docs)."""
    if loaded_libpti() is not None:
        return  # libpti was there first (preloaded, or imported through another route)
    late = []
    for path in _loaded_libraries():
        name = os.path.basename(path)
        for pattern, what in _RUNTIMES:
            if pattern.match(name):
                late.append(f"{what}: {path}")
    if not late:
        return
    message = (
        "libpti must be imported before the runtimes it traces, which read their set-up when "
        "they load; already loaded: " + "; ".join(late) + ". Import libpti first (before dpctl, "
        "dpnp, pyopencl, torch), or run the program under pti-trace."
    )
    if os.environ.get("LIBPTI_ALLOW_LATE_IMPORT") == "1":
        warnings.warn(message + " (LIBPTI_ALLOW_LATE_IMPORT=1: imported anyway)", RuntimeWarning)
        return
    raise ImportError(message + " LIBPTI_ALLOW_LATE_IMPORT=1 imports it anyway.")


def _getenv(name: str) -> Optional[str]:
    """The process environment's value (libc's, which the constructor may have changed behind
    ``os.environ``'s back)."""
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    value = libc.getenv(name.encode())
    return None if value is None else os.fsdecode(value)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _wanted(libpti: str) -> Dict[str, str]:
    """What the constructor's rules make of the current environment, for ``libpti``."""
    env: Dict[str, str] = {}
    layers = _getenv("OPENCL_LAYERS") or ""
    listed = [p for p in layers.split(":") if p]
    if os.environ.get("PTI_OPENCL_LAYER") != "0" and not any(_same_file(p, libpti) for p in listed):
        env["OPENCL_LAYERS"] = ":".join(listed + [libpti])
    if os.environ.get("PTI_LEVEL_ZERO") != "0" and _getenv("ZE_ENABLE_TRACING_LAYER") is None:
        env["ZE_ENABLE_TRACING_LAYER"] = "1"
    if os.environ.get("PTI_SYCL") != "0":
        subscribers = (_getenv("XPTI_SUBSCRIBERS") or "").strip()
        if not subscribers:
            env["XPTI_SUBSCRIBERS"] = libpti
        if not subscribers or any(_same_file(p.strip(), libpti) for p in subscribers.split(",")):
            if _getenv("XPTI_TRACE_ENABLE") is None:
                env["XPTI_TRACE_ENABLE"] = "1"
            if _getenv("XPTI_FRAMEWORK_DISPATCHER") is None:
                env["XPTI_FRAMEWORK_DISPATCHER"] = "libxptifw.so.1"
            ur = _getenv("UR_ENABLE_LAYERS") or ""
            if "UR_LAYER_TRACING" not in [x.strip() for x in ur.split(";")]:
                env["UR_ENABLE_LAYERS"] = f"{ur};UR_LAYER_TRACING" if ur.strip() else "UR_LAYER_TRACING"
    return env


_VARIABLES = (
    "OPENCL_LAYERS",
    "ZE_ENABLE_TRACING_LAYER",
    "XPTI_SUBSCRIBERS",
    "XPTI_TRACE_ENABLE",
    "XPTI_FRAMEWORK_DISPATCHER",
    "UR_ENABLE_LAYERS",
)


def export_environment() -> None:
    """After libpti.so loaded: completes the set-up its constructor may have skipped, and copies
    the variables into ``os.environ``."""
    libpti = loaded_libpti()
    if libpti is None:
        raise ImportError("libpti._native loaded, but no libpti.so is mapped in the process")
    for name, value in _wanted(libpti).items():
        os.environ[name] = value  # putenv too: the runtimes read libc's environment
    for name in _VARIABLES:
        current = _getenv(name)
        if current is not None and os.environ.get(name) != current:
            os.environ[name] = current
