"""The `croissant` source format: a Croissant record set's records, as mlcroissant reads them.

A split's options hold a ``recipe`` (JSON: the record sets of the Croissant file, the record
set this split reads, which field fills each feature, an optional ``where`` filter giving a
split field's value, and for each FileObject / FileSet its kind and its files) and ``files``
(the files by key, resolved to paths: a download, a member of an archive, an extracted archive
or a local folder). `catalog.interop.croissant.read` writes the recipe; this module only reads.

What a field reads: a ``source`` with an ``extract`` (``column`` of a CSV/TSV/JSON Lines/
Parquet file, ``jsonPath`` in a JSON file, ``fileProperty`` of a file) and ``transform`` s
(``regex``: the first group, through RE2; ``jsonQuery``: a JSON path in the value; ``format``:
a date written in the given strftime format), or another record set's field (a join on the
field whose ``references`` names that record set, as a left join: mlcroissant's), or inline
``data``. Values are then cast to the field's feature: text, numbers, booleans, class names,
image files' bytes, bounding boxes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError, SpecError
from catalog.features import BBox, ClassLabel, FeaturesDict, Image, Scalar, Tensor, Text
from catalog.formats.base import Examples, Option, Source, SourceFormat
from catalog.formats.croissant_files import (
    CONTENT,
    FILENAME,
    FULLPATH,
    JSON_VALUE,
    LINE_NUMBER,
    LINES,
    file_rows,
    json_path,
    parse_json_path,
    property_key,
    set_files,
)
from catalog.formats.image_files import stored_or_pixels
from catalog.formats.patterns import BoundedRegex, glob_regex, regex

__all__ = ["FORMAT", "Recipe", "examples", "listed", "ref"]

#: What mlcroissant gives for a text value that is missing (a left join without a match).
MISSING_TEXT = "None"


def listed(value: Any) -> list[Any]:
    """A JSON-LD value as a list (one value or none become a list)."""
    return value if isinstance(value, list) else [] if value is None else [value]


def ref(value: Any) -> str | None:
    """The @id a reference names (``{"@id": X}`` or a plain string)."""
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _field_name(node: Mapping[str, Any]) -> str:
    return str(node.get("@id") or node.get("name") or "?")


def references(node: Mapping[str, Any]) -> str | None:
    """The field a field ``references`` (Croissant 1.0's ``{"field": {"@id": X}}``)."""
    first = next(iter(listed(node.get("references"))), None)
    if isinstance(first, Mapping) and "field" in first:
        first = first["field"]
    return ref(first)


class FieldReader:
    """One field's extraction and transforms, compiled once."""

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.id = _field_name(node)
        self.node = node
        where = f"field {self.id}"
        source = _mapping(node.get("source"))
        self.file = ref(source.get("fileObject")) or ref(source.get("fileSet"))
        self.joined = ref(source.get("field"))
        extract = _mapping(source.get("extract"))
        self.column = extract.get("column")
        self.path_key: str | None = None
        self.steps: list[str | int | None] = []
        if "jsonPath" in extract:
            self.steps = parse_json_path(extract["jsonPath"], where)
            self.path_key = "\0path:" + str(extract["jsonPath"])
        self.property = (
            property_key(str(extract["fileProperty"]), where) if "fileProperty" in extract else None
        )
        if self.file and self.column is None and not self.steps and self.property is None:
            self.property = CONTENT  # a FileSet's field without extract: the file
        self.transforms: list[tuple[str, Any]] = []
        for transform in listed(source.get("transform")):
            transform = _mapping(transform)
            if "regex" in transform:
                self.transforms.append(("regex", regex(transform["regex"], f"{where}: regex")))
            elif "jsonQuery" in transform or "jsonPath" in transform:
                # jsonPath: the Hub's (``bytes`` of an image struct), relative to the value
                query = str(transform.get("jsonQuery", transform.get("jsonPath")))
                query = query if query.startswith("$") else f"$.{query}"
                steps = parse_json_path(query, f"{where}: jsonQuery")
                self.transforms.append(("json", steps))
            elif "format" in transform:
                self.transforms.append(("format", str(transform["format"])))
            else:
                shown = ", ".join(sorted(transform)) or "an empty transform"
                raise SpecError(f"not supported yet: transform {shown}, field {self.id}")

    def value(self, row: Mapping[str, Any]) -> Any:
        if self.path_key is not None:
            value = row.get(self.path_key)
            if self.path_key not in row and JSON_VALUE in row:
                value = next(iter(json_path(row[JSON_VALUE], self.steps)), None)
        elif self.column is not None:
            if self.column not in row:
                raise SourceFormatError(f"field {self.id}: no column {self.column!r} in the file")
            value = row[self.column]
        else:
            value = row.get(self.property or CONTENT)
        for kind, how in self.transforms:
            if value is None:
                break
            value = _transform(kind, how, value, self.id)
        return value


def _transform(kind: str, how: Any, value: Any, field: str) -> Any:
    if kind == "regex":
        assert isinstance(how, BoundedRegex)
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        found = how.first_group(text)
        return text if found is None else found  # no match: the value as it is (mlcroissant)
    if kind == "json":
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                raise SourceFormatError(
                    f"field {field}: jsonQuery on a value that is not JSON"
                ) from None
        return next(iter(json_path(value, how)), None)
    try:  # format: a date written in the strftime format given
        return datetime.fromisoformat(str(value)).strftime(how)
    except ValueError as error:
        raise SourceFormatError(f"field {field}: format {how!r}: {error}") from None


class Recipe:
    """A split's recipe (see the module's docstring) and its files, evaluated lazily."""

    def __init__(self, text: str, paths: Mapping[str, Path]) -> None:
        try:
            recipe = json.loads(text)
        except ValueError as error:
            raise SpecError(f"a croissant split's recipe is not JSON ({error})") from None
        self.target: str = recipe["record_set"]
        self.features: dict[str, str] = recipe["features"]
        self.where: dict[str, str] = recipe.get("where") or {}
        self.record_sets: dict[str, Mapping[str, Any]] = recipe["record_sets"]
        self.files: dict[str, Mapping[str, Any]] = recipe["files"]
        self.paths = paths

    @cached_property
    def fields(self) -> dict[str, dict[str, FieldReader]]:
        return {
            rs: {_field_name(f): FieldReader(f) for f in listed(node.get("field"))}
            for rs, node in self.record_sets.items()
        }

    def records(self, rs: str, depth: int = 0) -> Iterator[dict[str, Any]]:
        """Record set `rs`'s records: ``{field id: value}`` before casting."""
        node = self.record_sets[rs]
        if depth > len(self.record_sets):
            raise SpecError(f"record set {rs}: its joins go round in a circle")
        fields = self.fields[rs]
        if isinstance(node.get("data"), list):
            for row in node["data"]:
                row = _mapping(row)
                yield {f: row.get(f, row.get(f.rsplit("/", 1)[-1])) for f in fields}
            return
        direct = {f.file for f in fields.values() if f.file}
        if len(direct) != 1:
            shown = ", ".join(sorted(str(d) for d in direct)) or "no file"
            raise SpecError(
                f"not supported yet: record set {rs} reads {shown}; catalog reads one "
                f"FileObject or FileSet per record set (joins through references), field "
                f"{next(iter(fields), '?')}"
            )
        joins = self._joins(rs, fields, depth)
        for row in self._rows(direct.pop(), fields.values()):
            results = [{f.id: f.value(row) for f in fields.values() if f.file}]
            for key_field, index, pairs in joins:  # a left join, one record per match
                matches = index.get(_key(results[0].get(key_field)), [None])
                results = [
                    {**r, **{f: m.get(o) if m else None for f, o in pairs}}
                    for r in results
                    for m in matches
                ]
            yield from results

    def _joins(
        self, rs: str, fields: Mapping[str, FieldReader], depth: int
    ) -> list[tuple[str, dict[str, list[Any]], list[tuple[str, str]]]]:
        """For each other record set fields read from: the key field here, the other's
        records by key, and (field here, field there) pairs."""
        others: dict[str, list[tuple[str, str]]] = {}
        for f in fields.values():
            if f.joined:
                others.setdefault(f.joined.split("/", 1)[0], []).append((f.id, f.joined))
        joins = []
        for other, pairs in others.items():
            if other not in self.record_sets:
                raise SpecError(f"field {pairs[0][0]}: no record set {other!r} to read from")
            key = next(
                (
                    (f.id, target)
                    for f in fields.values()
                    if (target := references(f.node)) and target.split("/", 1)[0] == other
                ),
                None,
            )
            if key is None:
                raise SpecError(
                    f"not supported yet: field {pairs[0][0]} reads record set {other} but no "
                    f"field of {rs} references one of its fields (the join key)"
                )
            index: dict[str, list[Any]] = {}
            for record in self.records(other, depth + 1):
                index.setdefault(_key(record.get(key[1])), []).append(record)
            joins.append((key[0], index, pairs))
        return joins

    def _rows(self, file: str, fields: Any) -> Iterator[dict[str, Any]]:
        spec = self.files.get(file)
        if spec is None:
            raise SpecError(f"no FileObject or FileSet {file!r} in the distribution")
        kind = spec["kind"]
        paths = {f.path_key: f.steps for f in fields if f.path_key and f.file == file}
        needs = {f.property for f in fields if f.property and f.file == file}
        columns = sorted({f.column for f in fields if f.column is not None and f.file == file})
        for path, relative in self.files_of(file):
            yield from self._file(path, relative, kind, paths, needs, columns)

    def files_of(self, file: str) -> Iterator[tuple[Path, str]]:
        """The files of a FileObject (one) or FileSet, with their paths in the set."""
        spec = self.files[file]
        roots = [self.paths[key] for key in spec["roots"]]
        if spec.get("includes") is None:  # one FileObject
            yield roots[0], roots[0].name
        elif spec.get("members") is not None:  # files listed by path (a Hub repository's)
            globs = [glob_regex(g, f"FileSet {file}: includes") for g in spec["includes"]]
            for key, relative in spec["members"]:
                if any(g.fullmatch(relative) for g in globs):
                    yield self.paths[key], relative
        else:
            prefix = str(spec.get("prefix") or "")
            yield from set_files(roots, spec["includes"], f"FileSet {file}", prefix)

    def quick_count(self) -> int | None:
        """The number of records, from the Parquet files' footers, when each row is one
        record (one file source, no join, no filter, no lines); else None (read them)."""
        fields = self.fields[self.target].values()
        sources = {f.file for f in fields}
        if self.where or len(sources) != 1 or any(f.joined for f in fields):
            return None
        file = sources.pop()
        if file is None or self.files[file]["kind"] != "parquet":
            return None
        if any(f.property in (LINES, LINE_NUMBER) for f in fields):
            return None
        from catalog.formats.parquet import parquet_file

        columns = {f.column for f in fields if f.column is not None}
        count = 0
        for path, _ in self.files_of(file):
            handle = parquet_file(path)
            if not columns <= set(handle.schema_arrow.names):
                return None  # reading says which column is missing
            count += handle.metadata.num_rows
        return count

    @staticmethod
    def _file(
        path: Path, relative: str, kind: str, paths: Any, needs: set[str], columns: list[str]
    ) -> Iterator[dict[str, Any]]:
        props: dict[str, Any] = {FULLPATH: relative, FILENAME: relative.rsplit("/", 1)[-1]}
        if CONTENT in needs:
            props[CONTENT] = path.read_bytes()
        table = kind in ("csv", "tsv", "json", "jsonl", "parquet")
        if table or LINES in needs or LINE_NUMBER in needs:
            for row in file_rows(path, kind, paths, needs, columns):
                yield {**row, **props}
        else:
            yield props


def _key(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def cast(feature: Any, value: Any, field: str) -> Any:
    """`value` as `feature` stores it; SourceFormatError naming the field otherwise."""
    try:
        return _cast(feature, value)
    except (ValueError, TypeError, OverflowError) as error:
        raise SourceFormatError(f"field {field}: {error}") from None


def _cast(feature: Any, value: Any) -> Any:
    if isinstance(value, bytes) and not isinstance(feature, Image):
        value = value.decode("utf-8")
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    if isinstance(feature, Text):
        return MISSING_TEXT if missing else value if isinstance(value, str) else str(value)
    if isinstance(feature, ClassLabel):
        if isinstance(value, int) and not isinstance(value, bool):  # an index (catalog's export)
            if not 0 <= value < len(feature.names):
                raise ValueError(f"class index {value} is not in 0..{len(feature.names) - 1}")
            return value
        text = MISSING_TEXT if missing else str(value)
        if text not in feature.names:
            raise ValueError(f"{text!r} is not one of the enumeration's values")
        return feature.str2int(text)
    if isinstance(feature, Image):
        if not isinstance(value, bytes):
            raise ValueError(f"expected an image file's bytes, got {type(value).__name__}")
        return stored_or_pixels(feature, value, "an image")  # RGBA or grey: converted
    if isinstance(feature, (BBox, Tensor)):
        if isinstance(value, str):
            value = json.loads(value)
        return np.asarray(value, dtype=feature.dtype).reshape(feature.shape)
    if isinstance(feature, Scalar):
        kind = feature.dtype.kind
        if missing:
            if kind == "f":
                return float("nan")
            raise ValueError("the value is missing")
        if kind == "b":
            if isinstance(value, str):
                if value.strip().lower() not in ("true", "false", "1", "0"):
                    raise ValueError(f"expected a boolean, got {value!r}")
                return value.strip().lower() in ("true", "1")
            return bool(value)
        if kind in "iu":
            # a number with a fraction is cut to an integer, as mlcroissant's int(value) does
            number = float(value) if isinstance(value, str) and "." in value else value
            result = int(number)
            info = np.iinfo(feature.dtype)
            if not info.min <= result <= info.max:
                raise ValueError(f"{result} does not fit {feature.dtype.name}")
            return result
        return float(value)
    raise ValueError(f"catalog cannot fill {feature!r} from a Croissant field")


def _caster(feature: Any, field: str) -> Callable[[Any], Any]:
    """`cast` for one feature, with a fast path for the value types tables give (text as
    str, integers as int, floats as float), decided once per split instead of per value."""
    if isinstance(feature, Text):
        fast: type | None = str
    elif isinstance(feature, Scalar) and feature.dtype.kind in "iu":
        info = np.iinfo(feature.dtype)
        low, high = int(info.min), int(info.max)

        def integer(value: Any) -> Any:
            if type(value) is int and low <= value <= high:
                return value
            return cast(feature, value, field)

        return integer
    elif isinstance(feature, Scalar) and feature.dtype.kind == "f":
        fast = float
    else:
        fast = None

    def any_value(value: Any) -> Any:
        if fast is not None and type(value) is fast:
            return value
        return cast(feature, value, field)

    return any_value


def examples(source: Source) -> Examples:
    """Yield ``(record set:index, example)`` for the records of the split's record set (those
    whose split field has the split's value, when there is one)."""
    recipe = Recipe(source.options["recipe"], source.options["files"])
    features: FeaturesDict = source.features
    casts = [
        (name, field, _caster(features[name], field)) for name, field in recipe.features.items()
    ]
    where = [(recipe.features[f], v) for f, v in recipe.where.items()]
    index = 0
    for record in recipe.records(recipe.target):
        if where and any(_key(record.get(field)) != v for field, v in where):
            continue
        yield f"{recipe.target}:{index}", {name: c(record.get(f)) for name, f, c in casts}
        index += 1


def quick_count(source: Source) -> int | None:
    """The split's number of examples without reading them, when the files' metadata tells
    (`Recipe.quick_count`); None otherwise."""
    return Recipe(source.options["recipe"], source.options["files"]).quick_count()


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    try:
        return frozenset(json.loads(options["recipe"])["features"]), frozenset()
    except (ValueError, KeyError, TypeError):
        return frozenset(), frozenset()


FORMAT = SourceFormat(
    name="croissant",
    description="a record set of a Croissant file, read as mlcroissant reads it",
    roles=(),
    options={
        "recipe": Option("str", "", "the record set and what it reads (JSON; written by catalog)"),
        "files": Option("file_map", {}, "key -> a file, archive or folder the recipe names"),
    },
    features=_features,
    examples=examples,
)
