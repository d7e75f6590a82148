"""The bytes of one local shard, read through its memory map or with ``pread``, whichever costs
less where they are.

A read through a memory map costs nothing once its page is mapped, but a page's first read is
a page fault: the kernel maps the page and those around it in its 64 KiB window
(``fault_around_bytes``), and a fault costs several times a ``pread`` of a few hundred bytes
(measured here, in a virtual machine: about 4.5 us against 1.5 us). A fresh process reading a
batch of random records from a large shard touches a new window with nearly every record, so
its first batches would cost a fault or two a record, and only a process that has read for a
while reads at map speed.

`ShardBytes` chooses per window, as in renting skis: a window is read with ``pread`` until it
has been read `MAPPED_AFTER` times, and through the map after that (a fault maps it, and every
later read there is free). What is read is the same bytes either way; a ``pread`` that comes
back short (the file was truncated) is NotLaidOut, which makes the caller read the shard
through array_record, where the truncation is reported.
"""

from __future__ import annotations

import mmap
import os

from catalog.read.shard_layout import NotLaidOut

__all__ = ["MAPPED_AFTER", "ShardBytes"]

#: The window the kernel maps around a faulting page (``/sys/kernel/mm/.../fault_around_bytes``'s
#: default), as a shift.
_WINDOW_SHIFT = 16
#: Reads of a window by ``pread`` before it is read through the map: a fault costs about three
#: ``pread`` calls, so a window read this often has paid for its fault.
MAPPED_AFTER = 3


class ShardBytes:
    """The bytes of the file open as `fd` and mapped as `mapping`, sliced like the map
    (``shard[a:b]`` gives bytes), each read by ``pread`` or through the map (see the module
    docstring). Not a lock: two threads may both count a read; it changes only which way a
    read goes."""

    def __init__(self, fd: int, mapping: mmap.mmap) -> None:
        self._fd, self._map, self._size = fd, mapping, len(mapping)
        self._reads = bytearray((self._size >> _WINDOW_SHIFT) + 1)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, where: slice) -> bytes:
        """The bytes of ``where`` (a slice ``start:stop`` within the file, no step)."""
        start, stop = where.start, where.stop
        if not 0 <= start <= stop <= self._size:
            raise NotLaidOut("a read past the end of the file")
        window = start >> _WINDOW_SHIFT
        reads = self._reads[window]
        if reads >= MAPPED_AFTER:
            return self._map[start:stop]
        self._reads[window] = reads + 1
        data = os.pread(self._fd, stop - start, start)
        if len(data) != stop - start:
            raise NotLaidOut("the file is shorter than its map (it was truncated)")
        return data
