"""The View API: records of calls and device work, buffered by libpti and collected here.

Start views for some kinds (:class:`Views`, also a context manager); the records arrive in
libpti's buffers, and each is copied once, field by field, into a byte array of its kind (the C
layout of ``pti_view.h``, padding zeroed). They are read as NumPy structured arrays
(:meth:`Views.arrays`, one per kind, their dtypes those C layouts: :func:`dtype`) or as Python
objects (:meth:`Views.records`). libpti has one pair of buffer callbacks per process, so one
:class:`Views` runs at a time.

Names (kernel, copy, allocation) are addresses in the arrays (libpti's interned strings, valid as
long as the process) and ``str`` in :class:`Record`.
"""
from __future__ import annotations

import ctypes
import enum
import functools
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

import numpy as np

from . import _activation, _native

class ViewKind(enum.IntEnum):
    """A view kind, ``pti_view_kind`` (names without ``PTI_VIEW_``), libpti's extensions
    included (``EXT_``)."""

    DEVICE_GPU_KERNEL = 1
    DEVICE_CPU_KERNEL = 2
    DRIVER_API = 3
    RESERVED = 4
    COLLECTION_OVERHEAD = 5
    RUNTIME_API = 6
    EXTERNAL_CORRELATION = 7
    DEVICE_GPU_MEM_COPY = 8
    DEVICE_GPU_MEM_FILL = 9
    DEVICE_GPU_MEM_COPY_P2P = 10
    DEVICE_SYNCHRONIZATION = 11
    COMMUNICATION = 12
    EXT_MEMORY_ALLOCATION = 0x10001
    EXT_COMMAND_EXECUTION = 0x10002
    EXT_KERNEL_LAUNCH = 0x10003
    EXT_LOSS = 0x10004
    EXT_ANNOTATION = 0x10005


# The members above are the library's: checked once, so that a kind added to libpti without
# being added here is an import error, not a silently missing kind.
if sorted((k.name, int(k)) for k in ViewKind) != sorted(_native.view_kinds()):
    raise ImportError(f"libpti.ViewKind differs from the library's kinds: {_native.view_kinds()}")

KindLike = Union["ViewKind", int, str]

# Fields holding a NUL-terminated string's address.
_STRING_FIELDS = ("name", "source_file_name", "device_name", "domain")


def _layouts() -> Dict[int, np.dtype]:
    dtypes = {}
    for kind, (struct, size, fields) in _native.record_layouts().items():
        for name, _offset, field_size, fmt in fields:
            if np.dtype(fmt).itemsize != field_size:
                raise ImportError(f"{struct}.{name}: format {fmt} is not {field_size} bytes")
        dtypes[kind] = np.dtype(
            {
                "names": [f[0] for f in fields],
                "formats": [f[3] for f in fields],
                "offsets": [f[1] for f in fields],
                "itemsize": size,
            }
        )
    return dtypes


_DTYPES = _layouts()

# The running Views of the process, if one was started here.
_current: Optional["Views"] = None


def _kind(kind: KindLike) -> "ViewKind":
    if isinstance(kind, str):
        try:
            return ViewKind[kind.upper().removeprefix("PTI_VIEW_")]
        except KeyError:
            raise ValueError(f"{kind!r} is no view kind ({', '.join(k.name for k in ViewKind)})") from None
    try:
        return ViewKind(int(kind))
    except ValueError:
        raise ValueError(f"{kind!r} is no view kind") from None


def dtype(kind: KindLike) -> np.dtype:
    """The NumPy structured dtype of the records of ``kind``: the C struct's fields, without
    their leading underscore, at their C offsets, with its size."""
    k = _kind(kind)
    if int(k) not in _DTYPES:
        raise ValueError(f"libpti defines no record for {k.name}")
    return _DTYPES[int(k)]


def _text(address: int) -> Optional[str]:
    return None if address == 0 else ctypes.string_at(address).decode("utf-8", "replace")


@functools.lru_cache(maxsize=None)
def _api_name(group: int, api_id: int) -> Optional[str]:
    return _native.api_name(group, api_id)


class Record:
    """One record as a Python object: ``kind``, then each field of its C struct as an attribute
    (``correlation_id``, ``start_timestamp``, ...); names as ``str`` (or None), PCI addresses as
    ``str``, UUIDs as ``bytes``, API records with ``api_name``."""

    def __init__(self, kind: "ViewKind", fields: Dict[str, Any]) -> None:
        self.kind = kind
        self.__dict__.update(fields)

    @classmethod
    def _from_array(cls, kind: "ViewKind", array: np.ndarray) -> List["Record"]:
        names = array.dtype.names or ()
        strings = [i for i, n in enumerate(names) if n in _STRING_FIELDS]
        convert = [
            (i, array.dtype[i]) for i, n in enumerate(names) if array.dtype[i].kind in "SV" or array.dtype[i].shape
        ]
        is_api = kind.name.endswith("_API")
        records = []
        # tolist() turns the whole array into Python values in C, row by row.
        for row in array.tolist():
            values = list(row)
            for i in strings:
                values[i] = _text(values[i])
            for i, field in convert:
                value = values[i]
                if field.kind == "S":  # a PCI address
                    values[i] = value.decode("ascii", "replace")
                elif field.base == np.uint8:  # a UUID
                    values[i] = bytes(value)
            fields = dict(zip(names, values))
            if is_api:
                fields["api_name"] = _api_name(fields["api_group"], fields["api_id"])
            records.append(cls(kind, fields))
        return records

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "kind")
        return f"Record({self.kind.name}, {shown})"


class Views:
    """Enabled views whose records are collected in this process.

    >>> with libpti.Views("DEVICE_GPU_KERNEL", "DRIVER_API") as views:
    ...     run_my_kernels()
    >>> views.arrays()[libpti.ViewKind.DEVICE_GPU_KERNEL]["start_timestamp"]

    ``flush`` delivers the records of finished work while the views run; records of work still
    running come with a later flush (:attr:`pending_device_records` counts them). ``stop`` (or
    leaving the ``with`` block) disables the views and flushes: every record of finished work is
    then in :meth:`arrays` and :meth:`records`; work that completes after it is not delivered,
    and counted (:attr:`undelivered`).

    ``buffer_size`` is the size of each buffer lent to libpti (records arrive a buffer at a
    time, or at a flush).
    """

    def __init__(self, *kinds: KindLike, buffer_size: int = 1 << 20) -> None:
        if not kinds:
            raise ValueError("name at least one view kind")
        if buffer_size <= 0:
            raise ValueError(f"buffer_size must be positive, not {buffer_size}")
        self.kinds: List[ViewKind] = [_kind(k) for k in kinds]
        self.buffer_size = buffer_size
        self._chunks: Dict[int, List[bytes]] = {}

    def start(self) -> "Views":
        """Enables the views. Fails with PtiError if libpti refuses one, RuntimeError if views
        already run in the process (one :class:`Views` at a time) or pti-trace's collector
        holds libpti's views in this process."""
        global _current
        if _current is not None:
            raise RuntimeError("views are already started in this process: stop them first")
        if _activation.loaded_collector() is not None:
            raise RuntimeError(
                "pti-trace's collector records this process's views: a Views started here would "
                "take libpti's buffers from it (libpti has one pair of buffer callbacks per process)"
            )
        _native.start([int(k) for k in self.kinds], self.buffer_size)
        _current = self
        return self

    def stop(self) -> None:
        """Disables the views and flushes; collects their records. Nothing if they do not run."""
        global _current
        if _current is not self:
            return
        try:
            _native.stop()
            self._collect()
        finally:
            _current = None
        _native.drain_critical_events()

    def flush(self) -> None:
        """Delivers every finished record now (``ptiFlushAllViews``) and collects it."""
        if _current is self:
            _native.flush()
            self._collect()
        _native.drain_critical_events()

    def __enter__(self) -> "Views":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _collect(self) -> None:
        if _current is not self:
            return  # the records kept natively are another Views'
        for kind, data in _native.take().items():
            self._chunks.setdefault(kind, []).append(data)

    def arrays(self) -> Dict["ViewKind", np.ndarray]:
        """The records collected so far, one structured array per kind (see :func:`dtype`),
        in the order they arrived. The arrays read the collected bytes in place; when records
        arrived since the last call, each kind's bytes are first joined into one block (a copy
        of all its records)."""
        self._collect()
        out = {}
        for kind, chunks in self._chunks.items():
            if len(chunks) > 1:
                chunks[:] = [b"".join(chunks)]
            out[ViewKind(kind)] = np.frombuffer(chunks[0], dtype=_DTYPES[kind])
        return out

    def array(self, kind: KindLike) -> np.ndarray:
        """The records of one kind (an empty array if none came)."""
        k = _kind(kind)
        return self.arrays().get(k, np.empty(0, dtype=dtype(k)))

    def records(self, kind: Optional[KindLike] = None) -> List[Record]:
        """The records collected so far as :class:`Record` objects: of ``kind``, or of every
        kind (grouped by kind, each in arrival order)."""
        arrays = self.arrays()
        kinds: Iterable[ViewKind] = [_kind(kind)] if kind is not None else sorted(arrays)
        return [r for k in kinds if k in arrays for r in Record._from_array(k, arrays[k])]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    @property
    def dropped(self) -> Dict["ViewKind", int]:
        """Records lost for want of buffer space, per kind of these views, in the process."""
        return {k: _native.dropped_count(int(k)) for k in self.kinds}

    @property
    def emitted(self) -> Dict["ViewKind", int]:
        """Records libpti emitted (written or dropped), per kind of these views, in the process:
        after the program's last wait and a flush, the records delivered plus :attr:`dropped`."""
        return {k: _native.emitted_count(int(k)) for k in self.kinds}

    @property
    def undelivered(self) -> int:
        """Records of work that completed after views stopped, freed undelivered, in the
        process."""
        return _native.undelivered_count()

    @property
    def pending_device_records(self) -> int:
        """Device records waiting for their work to complete."""
        return _native.pending_device_records()
