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

__all__ = ["Cursor", "Resumed", "stamp"]

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


class Cursor:
    """The range ``start..stop-1`` the caller reading a stream asks for now (`Resumed`
    updates it when the stream is resumed for a later range): a stream that reads it as it
    goes may pass over the positions outside it without converting them (they are not
    asked for by this caller; another process reads them), its items then carrying where
    they begin (``where``)."""

    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, stop


class Resumed(Generic[T]):
    """``resumed(key, start, stop)``: the items of positions ``start..stop-1`` of
    ``stream(key, cursor)`` (an iterator of the items from ``cursor.start`` to the end; see
    `Cursor`), each item `size` positions long (`cut` splits one in two: its first n
    positions and the rest); see the module docstring. `where(item)`: the position an item
    begins at, for a stream that passes over positions (default: the items are
    consecutive); `keep(item)`: an item given to the caller even before its range (an error
    to raise); `ahead(key)`: whether a range starting after the held stream's position goes
    on to it (else it opens a new stream); `files(key)`: what holds the key's files (for
    `stamp`)."""

    def __init__(
        self,
        stream: Callable[[Any, Cursor], Iterator[T]],
        size: Callable[[T], int] = lambda _: 1,
        cut: Callable[[T, int], tuple[T, T]] | None = None,
        ahead: Callable[[Any], bool] = lambda _: True,
        files: Callable[[Any], Any] = lambda key: key,
        where: Callable[[T], int] | None = None,
        keep: Callable[[T], bool] = lambda _: False,
    ) -> None:
        self._open = stream
        self._size = size
        self._cut = cut
        self._ahead = ahead
        self._files = files
        self._where = where
        self._keep = keep
        self._lock = threading.Lock()
        #: key, its stamp, the stream's position, the stream, an item read ahead, its cursor
        self._left: tuple[Hashable, Any, int, Iterator[T], T | None, Cursor] | None = None
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
            _, _, at, held, ahead_item, cursor = left
            if at == start or (at < start and self._ahead(key)):
                stream, pending, position = held, ahead_item, at
                cursor.start, cursor.stop = start, stop
        if stream is None:
            cursor = Cursor(start, stop)
            stream = self._open(key, cursor)
        while position < stop:
            item = pending if pending is not None else next(stream, None)
            pending = None
            if item is None:
                return
            first = position if self._where is None else self._where(item)
            n = self._size(item)
            if first < start:  # before the range: skipped (or its part in the range kept)
                if first + n > start:
                    item = self._split(item, start - first)[1]
                    first, n = start, self._size(item)
                elif not self._keep(item):
                    position = first + n
                    continue
                else:
                    first, n = start, 0  # given as it is: the caller raises its error
            if first >= stop:
                pending, position = item, stop
                break
            if first + n > stop:
                item, pending = self._split(item, stop - first)
                n = stop - first
            yield item
            position = first + n
        with self._lock:
            self._left = (key, signature, position, stream, pending, cursor)

    def _split(self, item: T, n: int) -> tuple[T, T]:
        if self._cut is None:
            raise ValueError(f"an item of {self._size(item)} positions cannot be cut at {n}")
        return self._cut(item, n)
