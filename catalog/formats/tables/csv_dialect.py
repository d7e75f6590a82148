"""How a delimited text file is written: its encoding and its delimiter, found from its head.

`encoding_of` reads the byte order mark: UTF-8 with a BOM is ``utf-8-sig`` (the BOM is not
part of the first column's name), UTF-16 and UTF-32 with a BOM are those encodings; a file
with no BOM is read as UTF-8, and a byte that is not UTF-8 is one error naming its line
(`catalog.formats.tables.delimited`), which says to give ``encoding``.

`sniff` picks the delimiter among `DELIMITERS` (``,`` ``;`` tab ``|``) as pandas' ``sep=None``
and Python's ``csv.Sniffer`` aim to, but from whole rows: the first `SNIFF_BYTES` of the file
are parsed with each candidate (double quotes quote a field, so a quoted ``;`` or ``,`` is
text), and the one that splits the header into two or more fields and gives the most rows
the header's field count wins (then the one giving more fields; then the order of
`DELIMITERS`). A file no candidate splits
has one column. A delimiter given by the user is taken as it is.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from catalog.errors import SourceFormatError
from catalog.formats.tables.compressed import open_bytes

__all__ = [
    "DELIMITERS",
    "FIELD_LIMIT",
    "LINE_BYTES",
    "PANDAS_MISSING",
    "SNIFF_BYTES",
    "Dialect",
    "dict_reader",
    "encoding_of",
    "lines_of",
    "reader",
    "sniff",
    "splitting",
]

#: The longest field read, in characters (Python's csv module stops at 128 KiB by default):
#: a longer one is one error naming its line, memory staying a few times this.
FIELD_LIMIT = 1 << 26
#: The longest line read, in bytes (a header line too): a longer one is one error naming its
#: line, before it is held whole.
LINE_BYTES = 1 << 26
#: The texts pandas' ``read_csv`` reads as missing by default that are not numbers here
#: (pandas' ``nan``, ``NaN``, ``-nan``... are float NaN here too).
PANDAS_MISSING = frozenset(
    {"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN", "<NA>", "N/A",
     "NA", "NULL", "None", "n/a", "null"}
)  # fmt: skip

#: The delimiters `sniff` chooses from, in order of preference.
DELIMITERS = (",", ";", "\t", "|")
#: How much of a file `sniff` reads.
SNIFF_BYTES = 1 << 16
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class Dialect:
    """A delimited file's `delimiter` (one character) and text `encoding`."""

    delimiter: str
    encoding: str


def encoding_of(head: bytes, default: str = "utf-8") -> str:
    """The encoding a file's first bytes announce by their byte order mark, else `default`.

    >>> encoding_of(b"\\xef\\xbb\\xbfa,b"), encoding_of(b"\\xff\\xfea\\x00"), encoding_of(b"a,b")
    ('utf-8-sig', 'utf-16', 'utf-8')
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return default


def lines_of(f: IO[bytes], path: Path | str) -> Iterator[bytes]:
    """The lines of the binary file `f` (each with its line break), none longer than
    `LINE_BYTES`: a longer one is one SourceFormatError naming `path` and the line, read no
    further than the budget (a line of gigabytes is never held)."""
    number = 0
    while line := f.readline(LINE_BYTES + 1):
        number += 1
        if len(line) > LINE_BYTES:
            raise SourceFormatError(
                f"{path}:{number}: a line longer than {LINE_BYTES >> 20} MiB; catalog reads "
                "lines up to that (is this a text table? a line break may be missing)"
            )
        yield line


def sniff(
    path: Path, delimiter: str | None = None, default: str = ",", encoding: str | None = None
) -> Dialect:
    """The dialect of the file at `path`: its encoding from its BOM (or `encoding`), its
    delimiter `delimiter` when given, else the `DELIMITERS` candidate that fits its rows best
    (see the module docstring; the whole first line is read, however long, up to
    `LINE_BYTES`), else `default`. SourceFormatError for text that is UTF-16 without a BOM
    (unless `encoding` is given) and for a header split by one delimiter whose rows are split
    by another."""
    with open_bytes(path) as f:
        head = f.read(SNIFF_BYTES)
        cut = len(head) == SNIFF_BYTES and f.read(1) != b""
    if cut and b"\n" not in head:
        with open_bytes(path) as f:
            head = next(lines_of(f, path), b"")  # the header, whole, however long
    found = encoding_of(head)
    if encoding is None:
        _refuse_bomless_utf16(path, head, found)
    encoding = encoding or found
    if delimiter is not None:
        return Dialect(delimiter, encoding)
    text = head.decode(encoding, errors="replace")
    if cut and not text.endswith("\n"):  # drop the last line, which is partial
        text = text[: max(text.rfind("\n"), 0)]
    chosen = _best(text)
    _refuse_mixed(path, text, chosen)
    return Dialect(chosen or default, encoding)


def splitting(path: Path, dialect: Dialect, skip_rows: int = 0) -> str | None:
    """The delimiter (a space, or one of `DELIMITERS` other than the dialect's) that splits
    every row of the head of a one-column file into the same two or more fields: what to
    suggest when a file reads as one column (None: none does)."""
    with open_bytes(path) as f:
        head = f.read(SNIFF_BYTES)
    text = head.decode(dialect.encoding, errors="replace")
    lines = [line for line in text.splitlines()[skip_rows:] if line.strip()]
    if len(head) == SNIFF_BYTES:
        lines = lines[:-1]  # the last may be partial
    for candidate in (" ", *DELIMITERS):
        if candidate == dialect.delimiter or not lines:
            continue
        counts = {len(_field_counts(line, candidate)[:1]) and _field_counts(line, candidate)[0]
                  for line in lines[:50]}  # fmt: skip
        if len(counts) == 1 and counts.pop() >= 2:
            return candidate
    return None


def _refuse_bomless_utf16(path: Path, head: bytes, encoding: str) -> None:
    """SourceFormatError when `head` (no BOM) looks like UTF-16: NUL bytes at every other
    position and none between, as ASCII text encoded so has."""
    if encoding != "utf-8" or len(head) < 4:
        return
    even, odd = head[0::2], head[1::2]
    for zeros, text, name in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and text.count(0) < 0.1 * len(text):
            raise SourceFormatError(
                f"{path}: looks like {name.upper()} text without a byte order mark (every "
                f"other byte is 0); give its encoding: --encoding {name} (encoding={name!r})"
            )


def _refuse_mixed(path: Path, text: str, chosen: str | None) -> None:
    """SourceFormatError when the header is split by one delimiter and every row of the head
    by another, into as many fields (``a,b,c`` over ``1;2;3``): read either way, the columns
    would be wrong."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return
    header, rows = lines[0], lines[1:]
    for by_header in [chosen] if chosen else DELIMITERS:
        counts = _field_counts(header, by_header)
        width = counts[0] if counts else 0
        if width < 2 or any(_field_counts(row, by_header)[:1] != [1] for row in rows):
            continue
        for by_rows in DELIMITERS:
            if by_rows != by_header and all(
                _field_counts(row, by_rows)[:1] == [width] for row in rows
            ):
                raise SourceFormatError(
                    f"{path}: its header is split by {by_header!r} and its rows by "
                    f"{by_rows!r}; write the header with {by_rows!r} too (or give "
                    f"--delimiter, reading it as one column)"
                )


def _best(text: str) -> str | None:
    best: tuple[int, int, int] | None = None
    chosen = None
    for rank, candidate in enumerate(DELIMITERS):
        counts = _field_counts(text, candidate)
        if not counts or counts[0] < 2:
            continue
        score = (sum(1 for c in counts if c == counts[0]), counts[0], -rank)
        if best is None or score > best:
            best, chosen = score, candidate
    return chosen


def _field_counts(text: str, delimiter: str) -> list[int]:
    """The field count of each non-blank row `text` holds (up to where it stops parsing)."""
    counts: list[int] = []
    rows = reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        for row in rows:
            if row:
                counts.append(len(row))
    except csv.Error:  # a quote this delimiter does not explain: judge the rows before it
        pass
    return counts


def reader(lines: Iterable[str], **dialect: Any) -> Any:
    """`csv.reader` over `lines` with `dialect`, reading fields of up to `FIELD_LIMIT`
    characters. The csv module's limit is one for the whole process: it is raised before
    every reader made here (never lowered), so no reader depends on another having run."""
    _allow_long_fields()
    return csv.reader(lines, **dialect)


def dict_reader(f: IO[str], **dialect: Any) -> csv.DictReader[str]:
    """`csv.DictReader` over `f` with `dialect`, fields of up to `FIELD_LIMIT` characters."""
    _allow_long_fields()
    return csv.DictReader(f, **dialect)


def _allow_long_fields() -> None:
    if csv.field_size_limit() < FIELD_LIMIT:  # the module's default is 128 KiB
        csv.field_size_limit(FIELD_LIMIT)
