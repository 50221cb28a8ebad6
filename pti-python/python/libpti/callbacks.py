"""The Callback API: a Python function called at the ENTER and EXIT of each Level Zero, OpenCL
or SYCL call it enables, and libpti's critical events as warnings.

A callback runs on the thread that made the call (a runtime's own thread included), holding the
GIL, so it serialises the traced calls of all threads on the GIL: it costs a GIL acquisition
and a Python call per ENTER and per EXIT (see the package README for the measured figure).
A thread that holds the GIL while it waits for a runtime thread whose calls are subscribed
deadlocks (the runtime thread's callback waits for the GIL): subscribe only calls of threads
that do not wait so, or record them with views, which never take the GIL.
An exception it raises does not reach the traced program: its traceback goes to
``sys.unraisablehook``, it is reported as a critical event (:class:`CriticalEventWarning`,
``PTI_ERROR_CALLBACK_PANICKED``) and the call goes on.
Once the interpreter begins to exit (``atexit``), callbacks are no longer delivered: libpti's
subscribers outlive Python, and a runtime thread still calling then is not let in.

Critical events (libpti lost data, or cannot trace something) become :class:`CriticalEventWarning`
warnings, raised in the main thread at its next bytecode, or at once by ``Views.stop`` and
``Views.flush``; :func:`critical_events` lists those seen.
"""
from __future__ import annotations

import enum
import threading
import warnings
from typing import Any, Callable, List, NamedTuple, Optional, Union

from . import _native


class Domain(enum.IntEnum):
    """What a subscriber enables as a whole (``pti_callback_domain``)."""

    DRIVER_API = 1  #: Level Zero and OpenCL calls
    RUNTIME_API = 2  #: SYCL (Unified Runtime) calls
    CRITICAL_EVENT = 3  #: libpti's critical events


class ApiGroup(enum.IntEnum):
    """The API a call belongs to (``pti_api_group_id``)."""

    LEVEL_ZERO = 1
    OPENCL = 2
    SYCL = 3


class Site(enum.IntEnum):
    """Before or after the call."""

    ENTER = 0
    EXIT = 1


class ApiCall(NamedTuple):
    """A call at its ENTER or EXIT."""

    group: ApiGroup
    api_id: int  #: its ID in the group's stable table
    site: Site
    name: str
    correlation_id: int  #: the ID its records carry
    kernel_name: Optional[str]  #: for a call that submits a kernel, when known


class CriticalEvent(NamedTuple):
    """libpti lost or corrupted data, or cannot trace something."""

    code: int  #: a ``pti_result`` (PTI_ERROR_CALLBACK_PANICKED, 301, for a Python callback's exception)
    name: str  #: its name (``PTI_ERROR_...``)
    message: str


class CriticalEventWarning(RuntimeWarning):
    """A critical event, as a warning; ``event`` is the :class:`CriticalEvent`."""

    def __init__(self, event: CriticalEvent) -> None:
        super().__init__(f"libpti critical event {event.name}: {event.message}")
        self.event = event


_seen: List[CriticalEvent] = []
_seen_lock = threading.Lock()


def _on_critical(code: int, name: str, message: str) -> None:
    event = CriticalEvent(code, name, message)
    with _seen_lock:
        _seen.append(event)
    warnings.warn(CriticalEventWarning(event), stacklevel=2)


def critical_events() -> List[CriticalEvent]:
    """The critical events warned about so far in this process."""
    _native.drain_critical_events()
    with _seen_lock:
        return list(_seen)


Event = Union[ApiCall, CriticalEvent]


# Looked up by value without the enum's constructor (this runs twice per traced call).
_GROUPS = {int(g): g for g in ApiGroup}
_SITES = (Site.ENTER, Site.EXIT)
_new_call = tuple.__new__


def _wrap(function: Callable[[Event], object]) -> Callable[..., None]:
    def deliver(kind: int, *args: Any) -> None:
        if kind == 0:
            group, api_id, site, name, correlation_id, kernel_name = args
            function(
                _new_call(ApiCall, (_GROUPS[group], api_id, _SITES[site], name, correlation_id, kernel_name))
            )
        else:
            code, message = args
            function(CriticalEvent(code, _native.result_name(code), message))

    return deliver


class Subscriber:
    """A subscription whose callback is ``function(event)``, ``event`` an :class:`ApiCall` or,
    with :attr:`Domain.CRITICAL_EVENT` enabled, a :class:`CriticalEvent`. Created with nothing
    enabled; ``close`` (or leaving a ``with`` block) unsubscribes, after which no callback of it
    runs.
    """

    def __init__(self, function: Callable[[Event], object]) -> None:
        self._native = _native.Subscriber(_wrap(function))

    def enable_domain(self, domain: Domain, on: bool = True) -> "Subscriber":
        """Enables (or disables) every call of ``domain``, or critical events."""
        self._native.enable_domain(int(domain), on)
        return self

    def enable(self, group: ApiGroup, api_id: int, on: bool = True) -> "Subscriber":
        """Enables (or disables) one function by its group and ID."""
        self._native.enable(int(group), api_id, on)
        return self

    def close(self) -> None:
        """Unsubscribes; waits for callbacks running on other threads."""
        self._native.close()

    def __enter__(self) -> "Subscriber":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CallbackCounts(NamedTuple):
    """What became of the Python callbacks of the process."""

    delivered: int  #: callbacks run
    raised: int  #: of those, the ones that raised
    skipped: int  #: not run: the interpreter was exiting


def callback_counts() -> CallbackCounts:
    """How many Python callbacks ran, raised, or were skipped at exit."""
    return CallbackCounts(*_native.callback_counts())
