"""JSON Lines files read in batches by pyarrow's JSON parser, for units that encode rows in
bulk; the values and errors are exactly those of `catalog.formats.tables.json_lines`' rows.

A file is read a block of whole lines at a time (`BLOCK_BYTES`, cut after its last line
break); pyarrow parses the block against a schema made from the features (`arrow_schema`:
integers as int64, floats as float64, texts, booleans, and lists and structs of those), and
`catalog.formats.tables.typed_batches.from_typed` converts each column. pyarrow's parser takes
what Python's ``json`` takes here, with the same values (floats bit for bit, checked on half a
million; a key given twice, ``NaN``, a lone surrogate, a string where a number is, a number
past 64 bits are its errors), with one exception: two objects on one line are two rows to it.
So a block is taken only when pyarrow's rows are its non-blank lines. Anything else (a parse
error, a value `from_typed` does not show to be the row reader's, a missing value, a byte
order mark past the file's start) sends that block alone to the row reader, which gives the
same values or the same error naming file and line; the next block is read in bulk again.
A file that is one JSON array of records is read by the row reader (an element at a time).
"""

from __future__ import annotations

import codecs
import io
import itertools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog._util.optional import importable
from catalog.errors import CatalogError, SourceFormatError
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Text
from catalog.formats.base import Batch, Source
from catalog.formats.resume import Cursor
from catalog.formats.tables.compressed import open_bytes
from catalog.formats.tables.csv_dialect import LINE_BYTES
from catalog.formats.tables.json_lines import (
    examples,
    file_examples,
    fill_values,
    is_json_array,
    line_objects,
    objects,
)
from catalog.formats.tables.table_batches import Refused, resumable, row_batches
from catalog.formats.tables.typed_batches import from_typed

__all__ = ["BLOCK_BYTES", "arrow_schema", "batches"]

#: Bytes of whole lines pyarrow parses at once (a longer line: a block of its own).
BLOCK_BYTES = 1 << 20


def arrow_schema(features: FeaturesDict, columns: Mapping[str, str]) -> Any:
    """The pyarrow schema pyarrow's JSON parser reads the keys of `columns` with, each as its
    feature's values come in JSON; None when a feature has no such type (an image...) or two
    features read one key."""
    import pyarrow as pa

    if len(set(columns.values())) != len(columns):
        return None
    fields = []
    for name, key in columns.items():
        kind = _arrow_type(features[name])
        if kind is None:
            return None
        fields.append(pa.field(key, kind))
    return pa.schema(fields)


def _arrow_type(feature: Feature) -> Any:
    import pyarrow as pa

    if isinstance(feature, (Text, ClassLabel)):  # (a ClassLabel's values: its class names)
        return pa.string()
    if isinstance(feature, Scalar):
        kind = feature.dtype.kind
        if kind == "b":
            return pa.bool_()
        if kind in "iu":
            return pa.uint64() if feature.dtype.name == "uint64" else pa.int64()
        return pa.float64()
    if isinstance(feature, FeaturesDict):
        fields = [(name, _arrow_type(child)) for name, child in feature.items()]
        return None if any(kind is None for _, kind in fields) else pa.struct(fields)
    if isinstance(feature, Sequence):
        element = _arrow_type(feature.feature)
        return None if element is None else pa.list_(element)
    return None


def _stream(source: Source, cursor: Cursor) -> Iterator[Batch]:
    """The examples of a JSON Lines split from ``cursor.start`` on, in `Batch` es (the blocks
    wholly before a later ``cursor.start`` counted, not parsed)."""
    options, features = source.options, source.features
    schema = arrow_schema(features, options["columns"]) if importable("pyarrow") else None
    if schema is None:
        yield from row_batches(itertools.islice(examples(source), cursor.start, None), cursor.start)
        return
    fills = fill_values(options["fill"], features)
    position = 0
    for path in source.paths("files"):
        if is_json_array(path):  # the row reader, an element at a time
            pairs = file_examples(path, objects(path, array=True), source, fills, array=True)
            for batch in row_batches(pairs, position):
                yield batch
                if batch.error is not None:
                    return
                position += batch.rows
            continue
        blocks = _blocks(path)
        while True:
            try:
                first, block = next(blocks)
            except StopIteration:
                break
            except CatalogError as error:
                yield Batch(position, 0, examples=[], error=error)
                return
            lines = block.split(b"\n")
            if block.endswith(b"\n"):
                lines.pop()
            rows = sum(1 for line in lines if line.strip())
            if position + rows <= cursor.start:  # before the range: only counted
                position += rows
                continue
            converted = _converted(block, first, rows, schema, source, fills)
            if converted is not None:
                yield Batch(position, rows, columns=converted)
            else:  # the row reader's values, or its error, for this block alone
                raw = (line + b"\n" for line in lines)
                pairs = file_examples(path, line_objects(raw, path, first), source, fills, False)
                for batch in row_batches(pairs, position, max(rows, 1)):
                    yield batch
                    if batch.error is not None:
                        return
            position += rows


#: ``batches(source, start, stop)``: the examples ``start..stop-1`` of a JSON Lines split, in
#: `Batch` es (see the module docstring); a call starting where the last one stopped goes on
#: reading the same files.
batches = resumable(_stream)


def _blocks(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(its first line's number, block)``: the file's bytes in blocks of whole lines (each
    but the last ending with a line break), about `BLOCK_BYTES` each; SourceFormatError, as
    the row reader's, for a line longer than `LINE_BYTES` (read no further)."""
    line, left = 1, b""
    with open_bytes(path) as f:
        while True:
            data = f.read(BLOCK_BYTES)
            block = left + data
            if not data:
                if block:
                    yield line, block
                return
            cut = block.rfind(b"\n") + 1
            if not cut and len(block) <= LINE_BYTES:
                left = block  # a line not ended yet: read on
                continue
            if not cut:  # the row reader's error, where it would stop reading
                raise SourceFormatError(
                    f"{path}:{line}: a line longer than {LINE_BYTES >> 20} MiB; catalog reads "
                    "lines up to that (is this a text table? a line break may be missing)"
                )
            yield line, block[:cut]
            line += block.count(b"\n", 0, cut)
            left = block[cut:]


def _converted(
    block: bytes, first: int, rows: int, schema: Any, source: Source, fills: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The block's columns as its features' values (see the module docstring); None for the
    row reader to read it."""
    import pyarrow as pa
    import pyarrow.json as pj

    if not rows or block.find(codecs.BOM_UTF8, 1 if first == 1 else 0) >= 0:
        return None  # (a mark past the file's start: an error to the row reader)
    options, features = source.options, source.features
    parse = pj.ParseOptions(
        explicit_schema=schema,
        unexpected_field_behavior="error" if options["extra_keys"] == "error" else "ignore",
    )
    read = pj.ReadOptions(use_threads=False, block_size=max(len(block), 1 << 16) + 1)
    try:
        table = pj.read_json(io.BytesIO(block), read_options=read, parse_options=parse)
    except (pa.ArrowException, UnicodeDecodeError):
        return None
    if table.num_rows != rows:  # two objects on one line: the row reader's error
        return None
    try:
        return {
            name: from_typed(table.column(key).combine_chunks(), features[name], fills.get(name))
            for name, key in options["columns"].items()
        }
    except (Refused, CatalogError):
        return None
