"""Batches through POSIX shared memory: a worker writes, the consumer maps them in place.

A process worker writes every NumPy array of a block into one shared-memory segment (the
``shm_open`` segments `multiprocessing.shared_memory` uses, under ``/dev/shm`` on Linux) and
sends only a small description through its queue (a few hundred bytes). The consumer maps
the segment, *unlinks it at once* and hands out arrays that are views of the mapping: no
copy, and the memory goes back to the system when the last array is dropped. Segment names
carry a per-iterator prefix (``catalog-<pid>-<token>-``), so whatever a stopped or killed
worker left between writing and sending is found and removed by `sweep` when the iterator
shuts down.

This module talks to ``_posixshmem`` and ``mmap`` directly instead of through
``SharedMemory`` objects: those register every segment with a resource-tracker process
(which would outlive the iterator) and refuse to close while NumPy views exist.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    import _posixshmem  # type: ignore[import-not-found]
except ImportError:  # Windows: no POSIX shared memory; blocks are pickled instead
    _posixshmem = None

__all__ = ["AVAILABLE", "discard", "read_block", "sweep", "write_block"]

AVAILABLE = _posixshmem is not None
_ALIGN = 64
_SHM_DIR = "/dev/shm"


@dataclass(frozen=True)
class _Slot:
    """Where one array of a block lies in the segment."""

    offset: int
    shape: tuple[int, ...]
    dtype: str


def _arrays(struct: Any, found: list[np.ndarray[Any, Any]]) -> Any:
    """`struct` with its shareable arrays replaced by their index in `found`."""
    if isinstance(struct, dict):
        return {k: _arrays(v, found) for k, v in struct.items()}
    if isinstance(struct, tuple):
        return tuple(_arrays(v, found) for v in struct)
    if isinstance(struct, list):
        return [_arrays(v, found) for v in struct]
    if isinstance(struct, np.ndarray) and struct.dtype != object and struct.nbytes:
        found.append(struct)
        return _Slot(-len(found), struct.shape, struct.dtype.str)
    return struct


def _place(struct: Any, offsets: list[int]) -> Any:
    if isinstance(struct, dict):
        return {k: _place(v, offsets) for k, v in struct.items()}
    if isinstance(struct, tuple):
        return tuple(_place(v, offsets) for v in struct)
    if isinstance(struct, list):
        return [_place(v, offsets) for v in struct]
    if isinstance(struct, _Slot):
        return _Slot(offsets[-struct.offset - 1], struct.shape, struct.dtype)
    return struct


def write_block(struct: Any, name: str) -> tuple[Any, str | None, int]:
    """Write the arrays of `struct` into a new segment `name`; returns (description, the
    segment's name or None when there are no arrays, its size)."""
    found: list[np.ndarray[Any, Any]] = []
    described = _arrays(struct, found)
    if not found or _posixshmem is None:
        return struct, None, 0
    offsets, size = [], 0
    for array in found:
        offsets.append(size)
        size += -(-array.nbytes // _ALIGN) * _ALIGN
    fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, size)
        with mmap.mmap(fd, size) as mapping:
            for array, offset in zip(found, offsets, strict=True):
                target = np.ndarray(array.shape, array.dtype, mapping, offset)
                target[...] = array
                del target
    except BaseException:
        _unlink(name)
        raise
    finally:
        os.close(fd)
    return _place(described, offsets), name, size


def read_block(described: Any, name: str | None, size: int) -> Any:
    """The block `write_block` described: arrays are views of the mapped segment, which is
    unlinked before this returns."""
    if name is None:
        return described
    assert _posixshmem is not None
    try:
        fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    finally:
        _unlink(name)
    try:
        mapping = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    return _views(described, mapping)


def _views(struct: Any, mapping: mmap.mmap) -> Any:
    if isinstance(struct, dict):
        return {k: _views(v, mapping) for k, v in struct.items()}
    if isinstance(struct, tuple):
        return tuple(_views(v, mapping) for v in struct)
    if isinstance(struct, list):
        return [_views(v, mapping) for v in struct]
    if isinstance(struct, _Slot):
        return np.ndarray(struct.shape, np.dtype(struct.dtype), mapping, struct.offset)
    return struct


def _unlink(name: str) -> None:
    if _posixshmem is not None:
        with contextlib.suppress(FileNotFoundError):
            _posixshmem.shm_unlink("/" + name)


def discard(name: str | None) -> None:
    """Remove a segment that will not be read."""
    if name is not None:
        _unlink(name)


def sweep(prefix: str) -> list[str]:
    """Remove every segment whose name starts with `prefix`; returns their names."""
    try:
        names = [p.name for p in Path(_SHM_DIR).iterdir() if p.name.startswith(prefix)]
    except OSError:  # no /dev/shm to list (not Linux): nothing more can be found
        return []
    for name in names:
        _unlink(name)
    return names
