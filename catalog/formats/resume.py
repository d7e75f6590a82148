"""Sources read from their start, resumed where the last range stopped.

A format without random access reads a range ``start..stop-1`` by reading from its first
example (or row). Preparing a split cuts it into work units read one after the other (in this
process, or in each of N worker processes, each getting ranges in increasing order): read from
the start each time, a split of U units reads U(U+1)/2 units of examples. `Resumed` keeps the
stream the last range was read from (one per `Resumed`, with at most one item read ahead), and
a range that starts where it stopped goes on reading it; one that starts further on skips the
items between (with ``ahead``: a stream only read from its start), so each process reads the
split about once. Any other range opens a new stream. A stream is only resumed for the same
key (a `catalog.formats.base.Source` compares by value) whose files on disk have not changed
since (`stamp`), and is held by one caller at a time (thread safe); `Resumed.clear` (and
the process's exit) drops it.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = ["Resumed", "stamp"]

T = TypeVar("T")


def stamp(value: Any) -> tuple[tuple[str, int, int], ...]:
    """The paths in `value` (a path, or lists, tuples and mappings holding paths: a
    `catalog.formats.base.Source`'s files and options) with their modification time and
    size: a file changed on disk gives another stamp."""
    found: list[tuple[str, int, int]] = []

    def walk(item: Any) -> None:
        if isinstance(item, Path):
            try:
                info = item.stat()
                found.append((str(item), info.st_mtime_ns, info.st_size))
            except OSError:
                found.append((str(item), -1, -1))
        elif isinstance(item, Mapping):
            for part in item.values():
                walk(part)
        elif isinstance(item, (list, tuple)):
            for part in item:
                walk(part)

    walk(value)
    return tuple(found)


class Resumed(Generic[T]):
    """``resumed(key, start, stop)``: the items of positions ``start..stop-1`` of
    ``stream(key, start)`` (an iterator of the items from `start` to the end), each item
    `size` positions long (`cut` splits one in two: its first n positions and the rest);
    see the module docstring. `ahead(key)`: whether a range starting after the held
    stream's position skips to it (else it opens a new stream); `files(key)`: what holds
    the key's files (for `stamp`)."""

    def __init__(
        self,
        stream: Callable[[Any, int], Iterator[T]],
        size: Callable[[T], int] = lambda _: 1,
        cut: Callable[[T, int], tuple[T, T]] | None = None,
        ahead: Callable[[Any], bool] = lambda _: True,
        files: Callable[[Any], Any] = lambda key: key,
    ) -> None:
        self._open = stream
        self._size = size
        self._cut = cut
        self._ahead = ahead
        self._files = files
        self._lock = threading.Lock()
        #: key, its stamp, the stream's position, the stream, an item read ahead
        self._left: tuple[Hashable, Any, int, Iterator[T], T | None] | None = None
        # a stream still held at exit is closed while the modules it uses are there
        atexit.register(self.clear)

    def clear(self) -> None:
        """Drop the stream held (its files are closed)."""
        with self._lock:
            self._left = None

    def __call__(self, key: Any, start: int, stop: int) -> Iterator[T]:
        with self._lock:
            left, self._left = self._left, None
        signature = stamp(self._files(key))
        stream: Iterator[T] | None = None
        pending: T | None = None
        position = start
        if left is not None and left[0] == key and left[1] == signature:
            _, _, at, held, ahead_item = left
            if at == start or (at < start and self._ahead(key)):
                stream, pending, position = held, ahead_item, at
        if stream is None:
            stream = self._open(key, start)
        while position < start:  # skip to the range
            item = pending if pending is not None else next(stream, None)
            pending = None
            if item is None:
                return
            n = self._size(item)
            if position + n > start:
                pending = self._split(item, start - position)[1]
                position = start
            else:
                position += n
        while position < stop:
            item = pending if pending is not None else next(stream, None)
            pending = None
            if item is None:
                return
            n = self._size(item)
            if n > stop - position:
                item, pending = self._split(item, stop - position)
                n = stop - position
            yield item
            position += n
        with self._lock:
            self._left = (key, signature, position, stream, pending)

    def _split(self, item: T, n: int) -> tuple[T, T]:
        if self._cut is None:
            raise ValueError(f"an item of {self._size(item)} positions cannot be cut at {n}")
        return self._cut(item, n)
