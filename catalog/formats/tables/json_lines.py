"""JSON Lines: one JSON object per line, one example per object, keys mapped to features.

Options: ``columns``: ``{feature: key}`` (every feature of the spec gets its value from one
key); ``fill``: ``{feature: text}``, the value standing in for a missing one (a key that is
absent or ``null``), parsed as the feature's type as a CSV field is (`catalog.formats.
delimited.to_value`); without it a missing value is an error. Values must fit their feature
exactly (`catalog.formats.tables.typed_values`); a key the mapping does not name is an error unless
``extra_keys: ignore``. Blank lines are skipped. The files are read one line at a time; the
key of an example is ``<file name>:<line>``, and every error names the file, the line and the
key.

A file that is one JSON array of objects (``[{...}, {...}]``: pandas'
``to_json(orient="records")``, Alpaca's ``alpaca_data.json``, what Hugging Face's ``json``
loader also reads) is read the same way, an element at a time (`objects`); the key of an
example is ``<file name>[<index>]``, and errors name the line its element begins on.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Source
from catalog.formats.tables.compressed import open_bytes
from catalog.formats.tables.csv_dialect import LINE_BYTES, lines_of
from catalog.formats.tables.delimited import to_value
from catalog.formats.tables.typed_values import typed_example

__all__ = [
    "examples", "file_examples", "is_json_array", "json_layout", "line_objects",
    "objects",
]  # fmt: skip


def _finite(text: str) -> float:
    """A JSON number as float64; ValueError past float64 (``1e309``), which would be inf."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is outside float64 (about ±1.8e308)")
    return value


def _constant(text: str) -> float:
    """``NaN``, ``Infinity``, ``-Infinity`` (Python's JSON extension), as Python reads them."""
    return float(text)


_WHITE = " \t\r\n"
_SPACES = re.compile(r"[ \t\r\n]*")  # JSON's white space, matched where it is (no copy)
_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_constant)
#: How much of a JSON file `json_layout` reads to tell its layout.
_HEAD = 1 << 16


def json_layout(path: Path) -> str:
    """How the JSON file at `path` (compressed or not) is laid out, from its first 64 KiB (its
    first line, up to `LINE_BYTES`, when that is longer):
    ``array`` (``[`` first: records in one array), ``lines`` (an object on the first line,
    then another on a line of its own: JSON Lines, as Hugging Face's ``to_json`` writes even
    to ``x.json``), or ``document`` (one JSON value: a Croissant file, a dataset_infos.json, or
    JSON no table reader takes; also anything that does not parse)."""
    try:
        with open_bytes(path) as f:
            head = f.read(_HEAD)
            if len(head) == _HEAD and b"\n" not in head and head.lstrip()[:1] == b"{":
                head += f.readline(LINE_BYTES) + f.read(_HEAD)  # a long first line: it whole
    except (OSError, EOFError, ValueError):  # unreadable, or not the compression it says
        return "document"
    text = head.removeprefix(codecs.BOM_UTF8).decode("utf-8", "replace").lstrip(_WHITE)
    if text[:1] == "[":
        return "array"
    try:
        first, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):  # cut by the 64 KiB, or not JSON
        return "document"
    rest = text[end:].lstrip(_WHITE)
    lines = isinstance(first, dict) and "\n" not in text[:end]  # an object on its first line
    if lines and rest[:1] == "{" and "\n" in text[end : len(text) - len(rest)]:
        return "lines"
    return "document"


def is_json_array(path: Path) -> bool:
    """Whether the file at `path` is one JSON array (`json_layout`)."""
    return json_layout(path) == "array"


def objects(path: Path, array: bool | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-blank line, or of every element of a file that
    is one JSON array (`is_json_array`: pandas' ``to_json(orient="records")``, a JSON export
    of records such as Alpaca's), each with the line it begins on; SourceFormatError naming
    file:line for a line (an element) that is not UTF-8 JSON holding an object (nested past
    the interpreter's recursion limit included: never a RecursionError). A UTF-8 byte order
    mark opening the file (as Windows tools write one) is not part of the first line. An
    array is read an element at a time: memory holds one element (at most `LINE_BYTES`),
    not the file. `array`: whether the file is one, when the caller knows already."""
    if is_json_array(path) if array is None else array:
        yield from _array_objects(path)
        return
    with open_bytes(path) as f:
        yield from line_objects(lines_of(f, path), path)


def line_objects(
    lines: Iterable[bytes], path: Path, first: int = 1
) -> Iterator[tuple[int, dict[str, Any]]]:
    """`objects` of JSON Lines `lines` (raw, with their line breaks), the first being line
    `first` of the file at `path` (a byte order mark opening line 1 is not part of it)."""
    for number, raw in enumerate(lines, first):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
            value = json.loads(text, parse_float=_finite, parse_constant=_constant)
        except UnicodeDecodeError as error:
            raise SourceFormatError(
                f"{path}:{number}: not UTF-8 text at byte {error.start} of the line"
            ) from None
        except json.JSONDecodeError as error:
            where = (
                "the line ends before the JSON does"
                if error.pos >= len(text)
                else f"at column {error.pos + 1} of the line"
            )
            message = f"{path}:{number}: not JSON: {error.msg}, {where}"
            raise SourceFormatError(message) from None
        except ValueError as error:
            raise SourceFormatError(f"{path}:{number}: not JSON ({error})") from None
        except RecursionError:  # Python's parser recurses once per [ or {
            raise SourceFormatError(
                f"{path}:{number}: JSON nested too deeply (more than about "
                f"{sys.getrecursionlimit()} levels of [ and {{)"
            ) from None
        if not isinstance(value, dict):
            raise SourceFormatError(
                f"{path}:{number}: expected a JSON object per line, got {type(value).__name__}"
            )
        yield number, value


def _array_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """`objects` of a file holding one JSON array: its elements, each decoded when the text
    read so far holds it whole (more is read, up to `LINE_BYTES` for one element, until it
    does), with the line each begins on."""
    decode = codecs.getincrementaldecoder("utf-8")()
    text, at, line, done = "", 0, 1, False  # text read; where in it; at's line; at the end

    def more() -> bool:  # read on: False at the end of the file
        nonlocal text, at, done
        if done:
            return False
        data = f.read(_READ)
        done = not data
        try:
            text = text[at:] + decode.decode(data, final=done)
        except UnicodeDecodeError:
            raise SourceFormatError(f"{path}:{line}: not UTF-8 text") from None
        at = 0
        return not done or bool(text)

    def skip() -> str:  # white space skipped: the next character ("" at the end)
        nonlocal at, line
        while True:
            spaces = _SPACES.match(text, at)  # (always matches: maybe nothing)
            end = spaces.end() if spaces else at
            line += text.count("\n", at, end)
            at = end
            if at < len(text) or not more():
                return text[at : at + 1]

    def read_so_far() -> tuple[str, int]:  # the text read, and where the element begins
        return text, at

    with open_bytes(path) as f:
        more()
        text = text.removeprefix("\ufeff")
        skip()
        at += 1  # the [ (`is_json_array`)
        if skip() == "]":  # []
            at += 1
        else:
            while True:
                value, end = _element(path, line, read_so_far, more)
                yield line, value
                line += text.count("\n", at, end)  # (its own line breaks)
                at = end
                found = skip()
                at += 1
                if found == "]":
                    break
                if found != ",":
                    raise SourceFormatError(
                        f"{path}:{line}: not JSON: expected ',' or ']' after an element of the "
                        f"array, got {found or 'the end of the file'!r}"
                    )
                skip()
        if skip():
            raise SourceFormatError(f"{path}:{line}: not JSON: more after the array's ]")


#: Bytes read at a time from a JSON array.
_READ = 1 << 20
#: An error this near the end of the text read may be a token cut by the read (a number, a
#: ``true``): more is read. One farther from it is the file's.
_TOKEN = 1 << 10


def _element(
    path: Path, line: int, where: Callable[[], tuple[str, int]], more: Callable[[], bool]
) -> tuple[dict[str, Any], int]:
    """The array element beginning at ``where()`` (text, position), and where it ends: read on
    (`more`) until the text holds it whole; SourceFormatError naming `line` for one that is no
    JSON object, or longer than `LINE_BYTES`."""
    while True:
        text, at = where()
        try:
            value, end = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError as error:
            cut = len(text) - error.pos < _TOKEN or error.msg.startswith("Unterminated string")
            if cut and len(text) - at <= LINE_BYTES and more():
                continue  # where the text read so far ends: perhaps not all of it read yet
            if len(text) - at > LINE_BYTES:
                raise SourceFormatError(
                    f"{path}:{line}: an array element of more than {LINE_BYTES >> 20} MiB; "
                    "catalog reads elements up to that"
                ) from None
            at_line = line + text.count("\n", at, error.pos)
            raise SourceFormatError(f"{path}:{at_line}: not JSON: {error.msg}") from None
        except ValueError as error:
            raise SourceFormatError(f"{path}:{line}: not JSON ({error})") from None
        except RecursionError:
            raise SourceFormatError(
                f"{path}:{line}: JSON nested too deeply (more than about "
                f"{sys.getrecursionlimit()} levels of [ and {{)"
            ) from None
        if not isinstance(value, dict):
            raise SourceFormatError(
                f"{path}:{line}: expected an array of JSON objects, got a {type(value).__name__}"
            )
        return value, end


def examples(source: Source) -> Examples:
    """Yield ``(file:line, example)`` for every object of the files, in order."""
    fills = fill_values(source.options["fill"], source.features)
    for path in source.paths("files"):
        array = is_json_array(path)
        yield from file_examples(path, objects(path, array), source, fills, array)


def file_examples(
    path: Path,
    numbered: Iterable[tuple[int, dict[str, Any]]],
    source: Source,
    fills: Mapping[str, Any],
    array: bool,
    index: int = 0,
) -> Examples:
    """``(key, example)`` of the ``(line, object)`` pairs `numbered` of the file at `path`
    (`objects`'s, or some of them), checked and typed (`fills`: `fill_values`'); keys
    ``file:line``, or ``file[index]`` in an `array` (several elements may share a line; the
    first one given being element `index`)."""
    options, features = source.options, source.features
    columns: Mapping[str, str] = options["columns"]
    wanted = set(columns.values())
    for at, (number, obj) in enumerate(numbered, index):
        if options["extra_keys"] == "error":
            extra = sorted(set(obj) - wanted)
            if extra:
                raise SourceFormatError(
                    f"{path}:{number}: key {extra[0]!r} is none of the dataset's columns "
                    f"({', '.join(sorted(wanted))}); map it to a feature, or give "
                    "options.extra_keys: ignore"
                )
        example = typed_example(
            obj.get, columns, fills, features, f"{path}:{number}", "key",
            "is missing (null or absent)",
        )  # fmt: skip
        yield f"{path.name}[{at}]" if array else f"{path.name}:{number}", example


def fill_values(fill: Mapping[str, str], features: FeaturesDict) -> dict[str, Any]:
    """The ``fill`` option's texts as values of their features; SourceFormatError if one
    does not parse."""
    values = {}
    for name, text in fill.items():
        try:
            values[name] = to_value(features[name], text)
        except ValueError as error:
            raise SourceFormatError(f"options.fill {name!r}: {error}") from None
    return values


def validate_columns(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    """What is wrong with ``columns``/``fill`` for these features (shared with Parquet)."""
    missing = sorted(set(features) - set(options["columns"]))
    if missing:
        return f"options.columns gives no key for feature {missing[0]!r}"
    for name in options["fill"]:
        if name not in options["columns"]:
            return f"options.fill: {name!r} is not a mapped feature"
    return None
