"""libpti for Python: see what a program does on Level Zero, OpenCL and SYCL, from inside it.

This package holds ``libpti.so`` and links it through its native module, so the tracing engine
of the process is that one library, whoever else uses it (the OpenCL loader and the SYCL runtime
load the same file as their layer and subscriber; C tools in the process share it).

Import it **before** the runtimes it traces (dpctl, dpnp, pyopencl, torch): they read their
set-up from the environment when they load, and importing libpti is what writes it (see
``libpti._activation``). Importing it after one of them raises ImportError naming it.

>>> import libpti                      # first
>>> import dpctl
>>> with libpti.Views("DEVICE_GPU_KERNEL", "DEVICE_CPU_KERNEL", "RUNTIME_API") as views:
...     run_my_kernels()
>>> views.arrays()                     # {ViewKind: NumPy structured array}

``pti-trace`` (installed with the package) profiles a whole program instead.
"""
from __future__ import annotations

import atexit as _atexit
import contextlib as _contextlib
import enum as _enum
import functools as _functools
from typing import Dict as _Dict, Iterator as _Iterator, Optional as _Optional

from . import _activation

_activation.check_runtimes_not_loaded()

# Loading the native module loads libpti.so.0 (beside it), whose constructor sets up the
# runtimes while the process may still have one thread; NumPy, which may start threads, comes
# after.
from . import _native  # noqa: E402

_activation.export_environment()

from .callbacks import (  # noqa: E402
    ApiCall,
    CallbackCounts,
    ApiGroup,
    CriticalEvent,
    CriticalEventWarning,
    Domain,
    Site,
    Subscriber,
    callback_counts,
    critical_events,
    _on_critical,
)
from .views import Record, ViewKind, Views, dtype  # noqa: E402

PtiError = _native.PtiError
"""A libpti function answered with an error; ``code`` and ``name`` say which."""

__version__ = "0.1.0"

__all__ = [
    "ApiCall",
    "ApiGroup",
    "CallbackCounts",
    "CriticalEvent",
    "CriticalEventWarning",
    "Domain",
    "ExternalKind",
    "PtiError",
    "Record",
    "Site",
    "Subscriber",
    "ViewKind",
    "Views",
    "api_id",
    "api_name",
    "callback_counts",
    "critical_event_count",
    "critical_events",
    "dtype",
    "external_correlation",
    "is_paused",
    "library_path",
    "pause",
    "pop_external_correlation",
    "push_external_correlation",
    "record_api",
    "resume",
    "version",
]


class ExternalKind(_enum.IntEnum):
    """Kinds of external correlation IDs (``pti_view_external_kind``)."""

    UNKNOWN = 1
    CUSTOM_0 = 2
    CUSTOM_1 = 3
    CUSTOM_2 = 4
    CUSTOM_3 = 5


def pause() -> None:
    """Pauses collection in the whole process (``ptiViewPause``): no call or command is recorded
    until :func:`resume`; views stay enabled, and commands submitted before still get their
    records. Pauses do not nest. ITT's ``ittapi.pause()`` does the same with libpti as the
    program's ITT collector."""
    _native.set_paused(True)


def resume() -> None:
    """Resumes collection (``ptiViewResume``); see :func:`pause`."""
    _native.set_paused(False)


def is_paused() -> bool:
    """Whether collection is paused (``ptiViewIsPaused``)."""
    return _native.is_paused()


def version() -> str:
    """The version of the libpti.so in use."""
    return _native.version()


def library_path() -> str:
    """The path of the libpti.so in use (the wheel's, unless one was preloaded)."""
    path = _activation.loaded_libpti()
    assert path is not None, "libpti.so is loaded with this module"
    return path


def api_name(group: ApiGroup, api_id: int) -> _Optional[str]:
    """The name of function ``api_id`` of ``group`` in libpti's stable ID tables, or None."""
    return _native.api_name(int(group), api_id)


_ID_LIMIT = 8192  # every table's IDs are below this (libpti's own Level Zero range starts at 4096)


@_functools.lru_cache(maxsize=None)
def _ids(group: int) -> _Dict[str, int]:
    names = {}
    for api_id in range(_ID_LIMIT):
        name = _native.api_name(group, api_id)
        if name is not None:
            names[name] = api_id
    return names


def api_id(group: ApiGroup, name: str) -> int:
    """The ID of function ``name`` in ``group``'s stable table (KeyError if it names none)."""
    try:
        return _ids(int(group))[name]
    except KeyError:
        raise KeyError(f"{name!r} is no function of {ApiGroup(group).name}") from None


def record_api(group: ApiGroup, api_id: int, on: bool = True) -> None:
    """Records (or not) function ``api_id`` of ``group`` in the API views, process-wide
    (``ptiViewEnableDriverApi``, or ``ptiViewEnableRuntimeApi`` for SYCL). Every function of a
    group is recorded until the first call for that group, which records only what it names
    (and what later calls add)."""
    _native.record_api(group == ApiGroup.SYCL, int(group), api_id, on)


def critical_event_count(code: int) -> int:
    """How many critical events of kind ``code`` (a ``pti_result``) libpti raised in the
    process, delivered or not (those of libpti's engine; a Python callback's exception is
    counted by :func:`callback_counts`)."""
    return _native.critical_event_count(code)


def push_external_correlation(kind: ExternalKind, external_id: int) -> None:
    """Pushes ``external_id`` on this thread's stack for ``kind``: the calls the thread makes
    until it is popped get an ``EXTERNAL_CORRELATION`` record naming it."""
    _native.push_external_correlation(int(kind), external_id)


def pop_external_correlation(kind: ExternalKind) -> int:
    """Pops this thread's last ID of ``kind`` (PtiError when none was pushed)."""
    return _native.pop_external_correlation(int(kind))


@_contextlib.contextmanager
def external_correlation(external_id: int, *, kind: ExternalKind = ExternalKind.CUSTOM_0) -> _Iterator[None]:
    """``with external_correlation(42):`` pushes the ID (of ``kind``) for the block and pops it
    after."""
    push_external_correlation(kind, external_id)
    try:
        yield
    finally:
        pop_external_correlation(kind)


_native.set_critical_sink(_on_critical)
# Registered now, so it runs after the exit handlers of what is imported later (dpctl's teardown
# among them): from then on no callback enters the interpreter.
_atexit.register(_native.shutdown, 5.0)
