"""Batches through POSIX shared memory: a worker writes them, the consumer copies them out.

A process worker writes every NumPy array of an order's blocks into a shared-memory segment
(the ``shm_open`` segments `multiprocessing.shared_memory` uses, under ``/dev/shm`` on Linux)
and sends only a small description through its queue (a few hundred bytes). Each worker
keeps a few segments (*slots*) and reuses them order after order: a new segment costs a page
fault and a zeroed page for every 4 KiB written, which made writing a batch as slow as making
it; a reused one costs a memory copy. The consumer maps each segment once and copies the
arrays out (`Reader.read`), so the batches it hands out are ordinary arrays that stay valid
however long they are kept, and the slot can be written again. A slot is rewritten only
after the consumer has read it: a worker has at most as many orders outstanding as it has
slots (see `catalog.loader.processes`).

A segment's name is removed as soon as both sides have it mapped: the consumer unlinks it
right after mapping it (`Reader.read`), and the worker, which made it, keeps its own mapping
and reuses it by that mapping alone. From then on ``/dev/shm`` lists nothing, and the memory
goes back when the last of the two processes unmaps it or dies, however it dies. Only a name
made and not yet read can be left (a slot's first order; a plan for the workers has no name
at all, see `put_bytes`). Names carry a per-pool prefix (``catalog-<pid>-<token>-``), so
`sweep` finds those: when the workers shut down, or in a worker whose consumer was killed
(`catalog.loader.processes`).

This module talks to ``_posixshmem`` and ``mmap`` directly instead of through
``SharedMemory`` objects: those register every segment with a resource-tracker process
(which would outlive the workers).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from catalog._util.nested import map_leaves
from catalog.errors import StorageError

try:
    import _posixshmem  # type: ignore[import-not-found]
except ImportError:  # Windows: no POSIX shared memory; blocks are pickled instead
    _posixshmem = None

__all__ = ["AVAILABLE", "Reader", "Writer", "get_bytes", "put_bytes", "sweep"]

AVAILABLE = _posixshmem is not None
_ALIGN = 64
_SHM_DIR = "/dev/shm"


@dataclass(frozen=True)
class _Slot:
    """Where one array lies in the segment."""

    offset: int
    shape: tuple[int, ...]
    dtype: str


def _arrays(struct: Any, found: list[tuple[np.ndarray[Any, Any], int]]) -> tuple[Any, int]:
    """`struct` with each shareable array replaced by the `_Slot` it gets in a segment (the
    arrays and their offsets collected in `found`), and the segment size they need."""
    size = 0

    def place(value: Any) -> Any:
        nonlocal size
        if isinstance(value, np.ndarray) and value.dtype != object and value.nbytes:
            found.append((value, size))
            slot = _Slot(size, value.shape, value.dtype.str)
            size += -(-value.nbytes // _ALIGN) * _ALIGN
            return slot
        return value

    return map_leaves(place, struct), size


def _copies(struct: Any, mapping: mmap.mmap) -> Any:
    def copy(value: Any) -> Any:
        if isinstance(value, _Slot):
            view = np.ndarray(value.shape, np.dtype(value.dtype), mapping, value.offset)
            return view.copy()
        return value

    return map_leaves(copy, struct)


def _unlink(name: str) -> None:
    if _posixshmem is not None:
        with contextlib.suppress(FileNotFoundError):
            _posixshmem.shm_unlink("/" + name)


def _map(name: str, size: int, create: bool) -> mmap.mmap:
    assert _posixshmem is not None
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = _posixshmem.shm_open("/" + name, flags, mode=0o600)
    try:
        if create:
            os.ftruncate(fd, size)
            _reserve(fd, size)
        return mmap.mmap(fd, size)
    except BaseException:
        if create:
            _unlink(name)
        raise
    finally:
        os.close(fd)


def _reserve(fd: int, size: int) -> None:
    """Allocate the segment's memory now: writing into a mapping of a full tmpfs is SIGBUS
    (a dead worker), where this is an error that says what to do."""
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is None:  # not on this platform: the write finds out
        return
    try:
        fallocate(fd, 0, size)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.ENOMEM):
            raise
        free = shutil.disk_usage(_SHM_DIR).free if Path(_SHM_DIR).is_dir() else 0
        raise StorageError(
            f"shared memory is full: a batch needs {size:,} bytes and {_SHM_DIR} has "
            f"{free:,} free. Give it more room (docker run --shm-size=2g, or a bigger "
            f"/dev/shm), use smaller batches, or prefetch(kind='thread')"
        ) from None


def put_bytes(name: str, data: bytes) -> int:
    """A new segment holding `data` (e.g. a pickled plan too big to pass cheaply to a starting
    process), as an open file descriptor. Its name (new, used only to make it) is removed at
    once: the memory goes when the last descriptor or mapping of it is closed, whoever dies.
    Pass the descriptor on with multiprocessing (`multiprocessing.reduction.DupFd`)."""
    assert _posixshmem is not None
    fd: int = _posixshmem.shm_open("/" + name, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode=0o600)
    _unlink(name)
    try:
        size = max(len(data), 1)
        os.ftruncate(fd, size)
        _reserve(fd, size)
        with mmap.mmap(fd, size) as mapping:
            mapping[: len(data)] = data
    except BaseException:
        os.close(fd)
        raise
    return fd


def get_bytes(fd: int, size: int) -> bytes:
    """The first `size` bytes of the segment open as `fd` (from `put_bytes`)."""
    with mmap.mmap(fd, max(size, 1), access=mmap.ACCESS_READ) as mapping:
        return mapping[:size]


class Writer:
    """A worker's slots: `write` puts a structure's arrays into one, growing it when needed."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._slots: dict[int, tuple[str, mmap.mmap]] = {}
        self._made = 0

    def write(self, slot: int, struct: Any) -> tuple[Any, str | None, int]:
        """(description, segment name or None when nothing is shared, segment size)."""
        found: list[tuple[np.ndarray[Any, Any], int]] = []
        described, size = _arrays(struct, found)
        if not found or _posixshmem is None:
            return struct, None, 0
        name, mapping = self._slots.get(slot, ("", None))
        if mapping is None or len(mapping) < size:
            self._drop(slot)
            name = f"{self._prefix}{self._made}"
            self._made += 1
            mapping = _map(name, size + size // 4, create=True)  # room for bigger batches
            self._slots[slot] = name, mapping
        for array, offset in found:
            target = np.ndarray(array.shape, array.dtype, mapping, offset)
            target[...] = array
            del target
        return described, name, len(mapping)

    def _drop(self, slot: int) -> None:
        name, mapping = self._slots.pop(slot, ("", None))
        if mapping is not None:
            mapping.close()
            _unlink(name)

    def close(self) -> None:
        for slot in list(self._slots):
            self._drop(slot)


class Reader:
    """The consumer's side for one worker: maps each of its slots once, removing its name
    (the worker has it mapped already: see the module docstring), and copies out what a
    description names."""

    def __init__(self) -> None:
        self._maps: dict[int, tuple[str, mmap.mmap]] = {}

    def read(self, slot: int, described: Any, name: str | None, size: int) -> Any:
        if name is None:
            return described
        known, mapping = self._maps.get(slot, ("", None))
        if mapping is None or known != name:  # new, or the worker replaced it with a bigger one
            if mapping is not None:
                mapping.close()
            mapping = _map(name, size, create=False)
            _unlink(name)
            self._maps[slot] = name, mapping
        return _copies(described, mapping)

    def close(self) -> None:
        for _, mapping in self._maps.values():
            mapping.close()
        self._maps.clear()


def sweep(prefix: str) -> list[str]:
    """Remove every segment whose name starts with `prefix`; returns their names."""
    try:
        names = [p.name for p in Path(_SHM_DIR).iterdir() if p.name.startswith(prefix)]
    except OSError:  # no /dev/shm to list (not Linux): nothing more can be found
        return []
    for name in names:
        _unlink(name)
    return names
