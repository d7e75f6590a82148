"""The CSV byte check on the way into pyarrow (`Checked`): every opening quote starts a
field, every closing quote ends one, no lone ``\\r``, no NUL, quotes balanced at the end; and
whether rows span lines (`Checked.multiline`). In a file whose quotes are text (the
``quoting: none`` option) only the ``\\r``, NUL and blank-line checks apply. See
`catalog.formats.tables.csv_batches`."""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from catalog._util.hashing import Stamp, file_stamp
from catalog.download.local_tree import HashingReader

__all__ = ["Checked"]

_BOM = codecs.BOM_UTF8
_QUOTE, _CR, _LF = 34, 13, 10


#: What `Checked` found in files it read whole, unchanged while read (the same `file_stamp`
#: when opened, at the end and by the path) and regular, by (path, stamp, delimiter, whether
#: quotes quote): their `multiline`. A later reader of the same file and stamp (the prepare
#: after the type scan) takes that instead of checking its bytes again; a file written since
#: has another stamp.
#: Bytes changed while that reader reads are caught by the prepare's source watch
#: (`catalog.download.watch`), which refuses to publish what was not the hashed file.
_REGULAR: dict[tuple[str, Stamp, str, bool], bool] = {}
_MAX_REGULAR = 4096


class Checked:
    """The file, read as pyarrow asks, each block checked to be CSV pyarrow and Python's
    ``csv`` module read alike (see `catalog.formats.tables.csv_batches`); `irregular` once
    one is not. A
    file checked whole before with the same stamp is not checked again (`_REGULAR`)."""

    def __init__(
        self, path: Path, delimiter: str, hashed: bool = False, quoted: bool = True
    ) -> None:
        # hashed: the file's sha256 taken as it is read (`HashingReader`), so a whole read
        # spares the download step's own pass over it
        self._file: HashingReader | BinaryIO = (
            HashingReader(path) if hashed else open(path, "rb")  # noqa: SIM115
        )
        self._path, self._read = path, 0
        self._stamp = file_stamp(os.fstat(self._file.fileno()))
        self._key = (str(path.resolve()), self._stamp, delimiter, quoted)
        self._quoted = quoted  # False: quotes are text (pyarrow is told so)
        known = _REGULAR.get(self._key)
        #: checked whole before, unchanged since: its bytes are not checked again
        self.known = known is not None
        self._ends = np.array([ord(delimiter), _LF, _CR, _QUOTE], np.uint8)
        self.irregular = False
        self._quotes = 0  # quotes so far: odd while inside a quoted field
        self._previous = _LF  # the byte before the next block (a line's end at the start)
        self._open_end = False  # the last byte closed a quoted field: what follows must end it
        self._open_cr = False  # the last byte was \r: a \n must follow
        self._first = True
        #: a value holds a line break, or a line is blank: rows are not one line each
        self.multiline = False
        self._line_start = True  # the last line break ended a line that was blank so far
        if known is not None:
            self.multiline = known

    closed = False

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        if self.known or self.irregular:
            return data
        self._read += len(data)
        self._check(data)
        if not data and size != 0 and not self.irregular:
            self._remember()
        return data

    def _remember(self) -> None:
        """At the end of a regular file: its findings, if it was not written while read."""
        try:
            now = file_stamp(os.fstat(self._file.fileno()))
            by_path = file_stamp(self._path.stat())
        except OSError:
            return
        if self._stamp == now == by_path and self._read == now[2]:
            if len(_REGULAR) >= _MAX_REGULAR:
                _REGULAR.clear()
            _REGULAR[self._key] = self.multiline

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self._file.close()
        self.closed = True

    def _check(self, data: bytes) -> None:
        if not data:  # the end: no quoted field or \r left open
            self.irregular = self.irregular or self._quotes % 2 == 1 or self._open_cr
            return
        if self._first:
            self._first = False
            data = data[len(_BOM) :] if data.startswith(_BOM) else data
            if not data:
                return
        if b"\0" in data:
            self.irregular = True
            return
        if self._plain and (not self._quoted or b'"' not in data) and b"\r" not in data:
            self._check_plain(data)
            return
        block = np.frombuffer(data, np.uint8)
        bad = (self._open_end and block[0] not in self._ends) or (self._open_cr and block[0] != _LF)
        if bad:
            self.irregular = True
            return
        cr = np.flatnonzero(block == _CR)
        inside = cr[cr + 1 < len(block)]
        if len(inside) and bool((block[inside + 1] != _LF).any()):
            self.irregular = True
            return
        self._open_cr = bool(len(cr)) and int(cr[-1]) == len(block) - 1
        quotes = np.flatnonzero(block == _QUOTE) if self._quoted else np.zeros(0, np.int64)
        if not self.multiline:
            self._lines(block, quotes)
        self._open_end = False
        if len(quotes):
            closing = (self._quotes + np.arange(len(quotes))) % 2 == 1
            before = np.where(quotes > 0, block[np.maximum(quotes - 1, 0)], self._previous)
            if not np.isin(before[~closing], self._ends).all():
                self.irregular = True
                return
            ends = quotes[closing]
            self._open_end = bool(len(ends)) and int(ends[-1]) == len(block) - 1
            after = ends[ends + 1 < len(block)] + 1
            if not np.isin(block[after], self._ends).all():
                self.irregular = True
                return
            self._quotes += len(quotes)
        self._previous = int(block[-1])

    #: Whether blocks without quotes and ``\r`` take `_check_plain` (False: every block the
    #: general path, which tests compare it with).
    _plain = True

    def _check_plain(self, data: bytes) -> None:
        """`_check` of a block holding no quote, no ``\r`` and no NUL (most CSV): bytes
        searches instead of arrays; the same findings as the general path."""
        first = data[0]
        if (self._open_end and first not in self._ends) or (self._open_cr and first != _LF):
            self.irregular = True
            return
        self._open_end = self._open_cr = False
        if not self.multiline:
            if self._quotes % 2 == 1:  # inside a quoted field opened before: any break is in it
                self.multiline = b"\n" in data
            else:  # a blank line: a break right after another (or after the last block's)
                self.multiline = b"\n\n" in data or (first == _LF and self._line_start)
            self._line_start = data[-1] == _LF
        self._previous = data[-1]

    def _lines(self, block: np.ndarray[Any, Any], quotes: np.ndarray[Any, Any]) -> None:
        """Sets `multiline` if a line break of `block` is inside quotes, or ends a blank line."""
        breaks = np.flatnonzero(block == _LF)
        if not len(breaks):
            self._line_start = self._line_start and bool((block == _CR).all())
            return
        inside = (self._quotes + np.searchsorted(quotes, breaks)) % 2 == 1
        text = np.flatnonzero(block != _CR)  # a line's bytes, its \r aside
        # the last byte that is not \r before each break: a break before it (or none) is blank
        last = np.searchsorted(text, breaks) - 1
        before = np.where(last >= 0, text[np.maximum(last, 0)], -1)
        blank = np.where(before >= 0, block[np.maximum(before, 0)] == _LF, self._line_start)
        if bool(inside.any() or blank.any()):
            self.multiline = True
        self._line_start = bool((block[int(breaks[-1]) + 1 :] == _CR).all())
