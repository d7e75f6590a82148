"""The rows a Croissant ``FileObject`` or ``FileSet`` gives, before fields pick their values
(`catalog.formats.croissant.records`): a table's rows (CSV/TSV, JSON, JSON Lines, Parquet),
a text file's lines, or one row per file of a FileSet, with its file properties
(``fullpath``: the path inside the set's folder or archive, ``filename``, ``content``,
``lines``/``lineNumbers``).

A row is a dict: a table's columns by name, and the file properties and whole JSON values
under keys starting with NUL (no column has such a name). JSON paths (``$.a[*].b``) are read
by a small evaluator of their plain subset (names, ``[*]``, indices, ``..`` is not), linear
in the document, so an untrusted path cannot make it slow. Every error names the file.

A FileSet inside a zip is read in place (`zip_files`), nothing extracted: a member's path is
its name with ``..``, ``.`` and empty parts dropped (as Python's ``zipfile`` extracts it, so as
mlcroissant reports it), so a member named ``../../a/b.txt`` is ``a/b.txt`` of the set and is
never written anywhere.
"""

from __future__ import annotations

import csv
import io
import json
import os
import posixpath
import re
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError, SpecError
from catalog.formats.croissant.patterns import glob_regex
from catalog.formats.tables.csv_dialect import dict_reader
from catalog.formats.tables.parquet import BATCH_ROWS, parquet_file

__all__ = [
    "CONTENT",
    "FULLPATH",
    "JSON_VALUE",
    "LINES",
    "LINE_NUMBER",
    "MAX_FILES",
    "MAX_INT_DIGITS",
    "LongNumber",
    "encoding_kind",
    "file_rows",
    "json_path",
    "loads_json",
    "parse_json_path",
    "set_files",
    "zip_files",
]

FULLPATH, FILENAME, CONTENT, LINES, LINE_NUMBER = (
    "\0fullpath",
    "\0filename",
    "\0content",
    "\0lines",
    "\0lineNumbers",
)
JSON_VALUE = "\0json"
#: A FileSet matching more files than this is refused (a glob gone wrong, or a hostile one).
MAX_FILES = 10_000_000
#: The largest JSON file read whole (a JSON Lines file is read a line at a time).
MAX_JSON = 1 << 30
#: The deepest a JSON path may go.
MAX_PATH_STEPS = 64
_KINDS = {
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/json": "json",
    "application/jsonlines": "jsonl",
    "application/jsonl": "jsonl",
    "application/x-ndjson": "jsonl",
    "application/x-jsonlines": "jsonl",
    "application/x-parquet": "parquet",
    "application/parquet": "parquet",
    "application/vnd.apache.parquet": "parquet",
    "text/plain": "text",
}
_STEP = re.compile(r"\.([A-Za-z_$@][\w$@-]*)|\[\s*(\*|-?\d+|'[^']*'|\"[^\"]*\")\s*\]|\.\*")
_PROPERTIES = {
    "fullpath": FULLPATH,
    "filepath": FULLPATH,
    "filename": FILENAME,
    "content": CONTENT,
    "lines": LINES,
    "lineNumbers": LINE_NUMBER,
}


def encoding_kind(encoding: str) -> str:
    """``csv``, ``tsv``, ``json``, ``jsonl``, ``parquet``, ``text``, ``image``, ``audio`` or
    ``file`` (any other: read as bytes) for an ``encodingFormat``."""
    encoding = encoding.split(";")[0].strip().lower()
    if encoding in _KINDS:
        return _KINDS[encoding]
    return encoding.split("/")[0] if encoding.startswith(("image/", "audio/")) else "file"


def property_key(name: str, where: str) -> str:
    """The row key of a ``fileProperty``; SpecError for an unknown one."""
    if name not in _PROPERTIES:
        raise SpecError(
            f"{where}: not supported yet: fileProperty {name!r} (catalog reads "
            f"{', '.join(sorted(_PROPERTIES))})"
        )
    return _PROPERTIES[name]


def parse_json_path(path: str, where: str) -> list[str | int | None]:
    """The steps of a plain JSON path: a key, an index, or None for ``[*]``/``.*``."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise SpecError(f"{where}: expected a JSON path starting with '$', got {path!r}")
    steps: list[str | int | None] = []
    at = 1
    while at < len(path):
        found = _STEP.match(path, at)
        if found is None or len(steps) >= MAX_PATH_STEPS:
            raise SpecError(
                f"{where}: not supported yet: JSON path {path[:200]!r} (catalog reads names, "
                f"[*], [index] and ['name'], at most {MAX_PATH_STEPS} steps; not '..' or filters)"
            )
        name, bracket = found.group(1), found.group(2)
        if name is not None:
            steps.append(name)
        elif bracket is None or bracket == "*":
            steps.append(None)
        elif bracket[0] in "'\"":
            steps.append(bracket[1:-1])
        else:
            steps.append(int(bracket))
        at = found.end()
    return steps


def json_path(value: Any, steps: list[str | int | None]) -> list[Any]:
    """The values `steps` select in `value`, in document order (each node visited once)."""
    found = [value]
    for step in steps:
        after: list[Any] = []
        for node in found:
            if step is None and isinstance(node, Mapping):
                after.extend(node.values())
            elif step is None and isinstance(node, list):
                after.extend(node)
            elif isinstance(step, int) and isinstance(node, list):
                if -len(node) <= step < len(node):
                    after.append(node[step])
            elif isinstance(step, str) and isinstance(node, Mapping) and step in node:
                after.append(node[step])
        found = after
    return found


def set_files(
    roots: list[Path], globs: list[Any], where: str, prefix: str = ""
) -> Iterator[tuple[Path, str]]:
    """The files of a FileSet: under each root, those whose path relative to it (after
    `prefix`) matches one of the ``includes`` globs (RE2, `catalog.formats.croissant.patterns`), in
    path
    order; symlinks that lead out of the root are skipped, none is followed into a loop."""

    matchers = [glob_regex(g, f"{where}: includes") for g in globs]
    count = 0
    for root in roots:
        real_root = root.resolve()
        found: list[tuple[str, Path]] = []
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            for name in names:
                path = Path(folder, name)
                relative = prefix + path.relative_to(root).as_posix()
                if not any(m.fullmatch(relative) for m in matchers):
                    continue
                if path.is_symlink() and not path.resolve().is_relative_to(real_root):
                    continue  # never read outside the set's folder
                found.append((relative, path))
                count += 1
                if count > MAX_FILES:
                    raise SourceFormatError(f"{where}: matches more than {MAX_FILES} files")
        for relative, path in sorted(found):
            yield path, relative


def member_path(name: str) -> str | None:
    """An archive member's path inside the set: its name without ``..``, ``.`` and empty
    parts (``../../a/./b.txt`` -> ``a/b.txt``); None for a directory or an empty name."""
    if name.endswith("/"):
        return None
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return posixpath.join(*parts) if parts else None


def zip_files(
    archive: Path, globs: list[Any], where: str, prefix: str = ""
) -> Iterator[tuple[zipfile.Path, str]]:
    """The members of a zip file a FileSet's ``includes`` match (paths as `member_path`
    gives them, after `prefix`), in path order, each to be read in place."""

    matchers = [glob_regex(g, f"{where}: includes") for g in globs]
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise SourceFormatError(f"{where}: {archive} is not a zip file ({error})") from None
    with zf:
        found: list[tuple[str, str]] = []
        for info in zf.infolist():
            relative = member_path(info.filename)
            if relative is None or info.is_dir():
                continue
            relative = prefix + relative
            if any(m.fullmatch(relative) for m in matchers):
                found.append((relative, info.filename))
                if len(found) > MAX_FILES:
                    raise SourceFormatError(f"{where}: matches more than {MAX_FILES} files")
        for relative, name in sorted(found):
            yield zipfile.Path(zf, name), relative


def open_binary(path: Path | zipfile.Path) -> Any:
    """A file or a zip member, opened for reading bytes."""
    return path.open("rb") if isinstance(path, zipfile.Path) else open(path, "rb")


def _read(path: Path, limit: int | None = None) -> bytes:
    with open_binary(path) as f:
        data: bytes = f.read(-1 if limit is None else limit + 1)
    if limit is not None and len(data) > limit:
        raise SourceFormatError(f"{path}: larger than {limit >> 20} MiB, more than catalog reads")
    return data


#: The most digits a JSON integer may have (uint64's maximum has 20): a longer one is an
#: error naming it, before Python's 4,300-digit limit (or its quadratic conversion) is met.
MAX_INT_DIGITS = 100


class LongNumber(ValueError):
    """A JSON integer longer than `MAX_INT_DIGITS` digits."""

    def __init__(self, text: str) -> None:
        digits = len(text.lstrip("-"))
        super().__init__(
            f"an integer of {digits} digits ({text[:12]}...); no field holds more than "
            f"{MAX_INT_DIGITS} (an integer field's largest, uint64, has 20)"
        )


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS + 1:
        raise LongNumber(text)
    return int(text)


def loads_json(text: str) -> Any:
    """`json.loads`, every integer at most `MAX_INT_DIGITS` digits (`LongNumber` else)."""
    return json.loads(text, parse_int=_int)


def _json(data: bytes, path: Path) -> Any:
    try:
        return loads_json(data.decode("utf-8"))
    except LongNumber as error:
        raise SourceFormatError(f"{path}: {error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        kind = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise SourceFormatError(f"{path}: not JSON catalog can read ({kind})") from None


def file_rows(
    path: Path,
    kind: str,
    paths: Mapping[str, list[str | int | None]],
    needs: set[str],
    columns: list[str],
) -> Iterator[dict[str, Any]]:
    """The rows of one file read as `kind`; `paths` are the JSON paths fields read
    (``{key: steps}``), `needs` the file properties they read, `columns` the columns."""
    if kind in ("csv", "tsv"):
        with io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", newline="") as f:
            try:
                yield from dict_reader(f, delimiter="\t" if kind == "tsv" else ",")
            except (csv.Error, UnicodeDecodeError) as error:
                raise SourceFormatError(f"{path}: not CSV catalog can read ({error})") from None
    elif kind == "json":
        document = _json(_read(path, MAX_JSON), path)
        selected = {key: json_path(document, steps) for key, steps in paths.items()}
        lengths = {len(v) for v in selected.values()}
        if len(lengths) > 1:
            raise SourceFormatError(
                f"{path}: the JSON paths select different numbers of values "
                f"({', '.join(f'{k.lstrip(chr(0))}: {len(v)}' for k, v in selected.items())})"
            )
        for i in range(lengths.pop() if lengths else 1):
            yield {JSON_VALUE: document, **{key: v[i] for key, v in selected.items()}}
    elif kind == "jsonl":
        with open_binary(path) as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    value = _json(line, path)
                except SourceFormatError as error:
                    raise SourceFormatError(f"{error} (line {number})") from None
                row = dict(value) if isinstance(value, Mapping) else {}
                row[JSON_VALUE] = value
                row.update({key: next(iter(json_path(value, s)), None) for key, s in paths.items()})
                yield row
    elif kind == "parquet":
        yield from _parquet_rows(path, columns)
    elif kind == "text" or LINES in needs or LINE_NUMBER in needs:
        with open_binary(path) as f:
            for number, line in enumerate(f.read().splitlines()):
                yield {LINES: line, LINE_NUMBER: number}
    else:
        yield {}


def _parquet_rows(path: Path, wanted: list[str]) -> Iterator[dict[str, Any]]:
    import pyarrow

    handle = parquet_file(path if isinstance(path, Path) else io.BytesIO(path.read_bytes()))
    present = set(handle.schema_arrow.names)
    absent = sorted(set(wanted) - present)
    if absent:
        raise SourceFormatError(
            f"{path}: no column {absent[0]!r}; the columns are {', '.join(sorted(present))}"
        )
    try:
        for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=wanted or None):
            columns = [(name, batch.column(name).to_pylist()) for name in batch.schema.names]
            for i in range(batch.num_rows):
                yield {name: values[i] for name, values in columns}
    except pyarrow.ArrowException as error:
        raise SourceFormatError(f"{path}: cannot read it ({error})") from None
