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
image files' bytes, bounding boxes, lists; a missing value as the ``fill`` option gives it
(`catalog.formats.croissant.values`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError, SpecError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Source
from catalog.formats.croissant.files import (
    CONTENT,
    FILENAME,
    FULLPATH,
    JSON_VALUE,
    LINE_NUMBER,
    LINES,
    LongNumber,
    file_rows,
    json_path,
    loads_json,
    parse_json_path,
    property_key,
    set_files,
    zip_files,
)
from catalog.formats.croissant.patterns import BoundedRegex, glob_regex, regex
from catalog.formats.croissant.values import caster, fills_of, match_key, resampled
from catalog.formats.tables.parquet import parquet_file

__all__ = ["Recipe", "examples", "inline_rows", "listed", "ref"]


def listed(value: Any) -> list[Any]:
    """A JSON-LD value as a list (one value or none become a list)."""
    return value if isinstance(value, list) else [] if value is None else [value]


def ref(value: Any) -> str | None:
    """The @id a reference names (``{"@id": X}`` or a plain string)."""
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value if isinstance(value, str) else None


def inline_rows(node: Mapping[str, Any]) -> list[Any] | None:
    """A record set's records given inline (``data``): a list of them, or one object as one
    record (as mlcroissant reads it, the Hub's split record sets); None when it reads them
    from elsewhere."""
    data = node.get("data")
    if isinstance(data, Mapping):
        return [data]
    return data if isinstance(data, list) else None


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


def file_reference(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A field's ``references`` naming a file's column (``{"fileObject": X, "extract":
    ...}``): a join key between two files of one record set; None otherwise."""
    first = next(iter(listed(node.get("references"))), None)
    if isinstance(first, Mapping) and (first.get("fileObject") or first.get("fileSet")):
        return first
    return None


def subfields(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A field's ``subField`` s (the parts of a nested value)."""
    return [f for f in listed(node.get("subField")) if isinstance(f, Mapping)]


_DATES = ("sc:Date", "sc:DateTime", "Date", "DateTime")


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
        types = [str(t).rsplit("/", 1)[-1] for t in listed(node.get("dataType"))]
        #: A date: its text as mlcroissant's pandas.Timestamp shows it (``2007-05-06 06:11:48``).
        self.date = any(t in _DATES for t in types)
        #: A field with no source of its own (``references`` only): None in every row.
        self.no_values = bool(node.get("catalog:noValues"))
        #: The sample rate a ``samplingRate`` transform resamples audio to.
        self.sampling_rate: int | None = None
        self.transforms: list[tuple[str, Any]] = []
        rate_given = {"samplingRate": source["samplingRate"]} if "samplingRate" in source else None
        for transform in [*listed(source.get("transform")), *listed(rate_given)]:
            # samplingRate: in a transform, or on the source itself (mlcommons' 1.1 examples)
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
            elif "samplingRate" in transform:  # audio, resampled (Croissant 1.1)
                rate = transform["samplingRate"]
                if isinstance(rate, bool) or not isinstance(rate, int) or not 0 < rate <= 10**6:
                    raise SpecError(f"field {self.id}: samplingRate {rate!r} is not a rate in Hz")
                self.sampling_rate = rate
                self.transforms.append(("rate", rate))
            else:
                shown = ", ".join(sorted(transform)) or "an empty transform"
                raise SpecError(f"not supported yet: transform {shown}, field {self.id}")

    @cached_property
    def plain_column(self) -> str | None:
        """The column this field reads as it is (no transform, no date): the fast path."""
        plain = not (self.transforms or self.date or self.no_values or self.path_key)
        return self.column if plain and isinstance(self.column, str) else None

    def value(self, row: Mapping[str, Any]) -> Any:
        if self.no_values:
            return None
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
        if self.date and isinstance(value, str):
            with contextlib.suppress(ValueError):  # not ISO 8601: the text as it is
                value = str(datetime.fromisoformat(value))
        return value


def _transform(kind: str, how: Any, value: Any, field: str) -> Any:
    if kind == "rate":
        return resampled(value, how, field)
    if kind == "regex":
        assert isinstance(how, BoundedRegex)
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        found = how.first_group(text)
        return text if found is None else found  # no match: the value as it is (mlcroissant)
    if kind == "json":
        if isinstance(value, (str, bytes)):
            try:
                value = loads_json(value if isinstance(value, str) else value.decode("utf-8"))
            except LongNumber as error:
                raise SourceFormatError(f"field {field}: {error}") from None
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
        """Each record set's fields by id, the parts of a nested field (``subField``) among
        them (the nested field itself reads nothing)."""
        found: dict[str, dict[str, FieldReader]] = {}
        for rs, node in self.record_sets.items():
            readers = found[rs] = {}
            for f in listed(node.get("field")):
                for part in subfields(f) or [f]:
                    readers[_field_name(part)] = FieldReader(part)
        return found

    def records(self, rs: str, depth: int = 0) -> Iterator[dict[str, Any]]:
        """Record set `rs`'s records: ``{field id: value}`` before casting."""
        node = self.record_sets[rs]
        if depth > len(self.record_sets):
            raise SpecError(f"record set {rs}: its joins go round in a circle")
        fields = self.fields[rs]
        rows = inline_rows(node)
        if rows is not None:
            for row in rows:
                row = _mapping(row)
                yield {f: row.get(f, row.get(f.rsplit("/", 1)[-1])) for f in fields}
            return
        direct = {f.file for f in fields.values() if f.file is not None}
        joins = self._joins(rs, fields, depth)
        bases: Iterator[dict[str, Any]]
        if not direct and joins:  # every field from other record sets: one of them leads
            base, base_pairs = self._base(rs, joins)
            bases = ({f: record.get(o) for f, o in base_pairs} for record in base)
        elif direct:
            bases = self._file_rows(rs, fields, direct)
        else:
            raise SpecError(f"not supported yet: record set {rs} reads no file")
        for first in bases:
            results = [first]
            for key_field, index, pairs in joins:  # a left join, one record per match
                matches = index.get(match_key(results[0].get(key_field)), [None])
                results = [
                    {**r, **{f: m.get(o) if m else None for f, o in pairs}}
                    for r in results
                    for m in matches
                ]
            yield from results

    def _base(
        self, rs: str, joins: list[tuple[Any, Any, list[tuple[str, str]]]]
    ) -> tuple[Any, list[tuple[str, str]]]:
        """A record set made only of other record sets' fields: the one no field of `rs`
        references leads (its records, in order); the others join onto it."""
        leading = [j for j in joins if j[0] is None]
        if len(leading) != 1:
            raise SpecError(
                f"not supported yet: record set {rs} reads {len(leading)} record sets that no "
                "field references (catalog joins one record set with those its fields reference)"
            )
        joins.remove(leading[0])
        return leading[0][1], leading[0][2]

    def _file_rows(
        self, rs: str, fields: Mapping[str, FieldReader], direct: set[str]
    ) -> Iterator[dict[str, Any]]:
        """The values of the fields read from files: one file's rows, each joined with the
        rows of the other files whose column a field of the first ``references``."""
        keyed = {}
        for f in fields.values():
            key = file_reference(f.node)
            other = key and (ref(key.get("fileObject")) or ref(key.get("fileSet")))
            if key and other and other != f.file:  # a column of another file: a join key
                keyed[other] = (f.id, key)
        leading = direct - set(keyed)
        if len(leading) != 1:
            shown = ", ".join(sorted(str(d) for d in direct))
            raise SpecError(
                f"not supported yet: record set {rs} reads {shown}; catalog reads one FileObject "
                f"or FileSet per record set, others joined through a field's references to "
                f"their column, field {next(iter(fields), '?')}"
            )
        lead = str(leading.pop())
        others = []
        for other in sorted(str(d) for d in direct - {lead}):
            fid, key = keyed[other]
            reader = FieldReader({"@id": f"{fid}#key", "source": key})
            mine = [f for f in fields.values() if f.file == other]
            index: dict[str, list[Any]] = {}
            for row in self._rows(other, [*mine, reader]):
                index.setdefault(match_key(reader.value(row)), []).append(
                    {f.id: f.value(row) for f in mine}
                )
            others.append((fid, index))
        mine = [f for f in fields.values() if f.file == lead]
        if not others:  # one file (the common case): each row one record
            plain = [(f.id, f.plain_column) for f in mine if f.plain_column is not None]
            rest = [f for f in mine if f.plain_column is None]
            try:
                for row in self._rows(lead, mine):
                    record = {fid: row[column] for fid, column in plain}
                    for f in rest:
                        record[f.id] = f.value(row)
                    yield record
            except KeyError as error:  # a plain column the file lacks
                lacking = [fid for fid, column in plain if error.args[:1] == (column,)]
                if not lacking:
                    raise
                raise SourceFormatError(
                    f"field {lacking[0]}: no column {error.args[0]!r} in the file"
                ) from None
            return
        for row in self._rows(lead, mine):
            results = [{f.id: f.value(row) for f in mine}]
            for fid, index in others:
                matches = index.get(match_key(results[0].get(fid)), [None])
                results = [{**r, **(m or {})} for r in results for m in matches]
            yield from results

    def _joins(
        self, rs: str, fields: Mapping[str, FieldReader], depth: int
    ) -> list[tuple[Any, Any, list[tuple[str, str]]]]:
        """For each other record set fields read from: the key field here, the other's
        records by key, and (field here, field there) pairs; in a record set reading no file,
        one no field references is (None, its records, pairs): it leads (`_base`)."""
        others: dict[str, list[tuple[str, str]]] = {}
        for f in fields.values():
            if f.joined:
                others.setdefault(f.joined.split("/", 1)[0], []).append((f.id, f.joined))
        joins: list[tuple[Any, Any, list[tuple[str, str]]]] = []
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
            if key is None and not any(f.file for f in fields.values()):
                joins.append((None, self.records(other, depth + 1), pairs))  # may lead
                continue
            if key is None:
                raise SpecError(
                    f"not supported yet: field {pairs[0][0]} reads record set {other} but no "
                    f"field of {rs} references one of its fields (the join key)"
                )
            index: dict[str, list[Any]] = {}
            for record in self.records(other, depth + 1):
                index.setdefault(match_key(record.get(key[1])), []).append(record)
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

    def files_of(self, file: str) -> Iterator[tuple[Any, str]]:
        """The files of a FileObject (one) or FileSet (a `Path`, or a `zipfile.Path` of a
        zip read in place), with their paths in the set."""
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
            for root in roots:  # a folder, or a zip read in place
                where = f"FileSet {file}"
                if root.is_dir():
                    yield from set_files([root], spec["includes"], where, prefix)
                else:
                    yield from zip_files(root, spec["includes"], where, prefix)

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
        if table and not needs & {FULLPATH, FILENAME, CONTENT}:  # the rows as they are
            yield from file_rows(path, kind, paths, needs, columns)
        elif table or LINES in needs or LINE_NUMBER in needs:
            for row in file_rows(path, kind, paths, needs, columns):
                yield {**row, **props}
        else:
            yield props


def examples(source: Source) -> Examples:
    """Yield ``(record set:index, example)`` for the records of the split's record set (those
    whose split field has the split's value, when there is one)."""
    recipe = Recipe(source.options["recipe"], source.options["files"])
    features: FeaturesDict = source.features
    fills = fills_of(source)
    casts = [(name, field, caster(features[name], str(field), name, fills.get(name)))
             for name, field in recipe.features.items()]  # fmt: skip
    plain = [(name, f, c) for name, f, c in casts if isinstance(f, str)]
    nested = [(name, f, c) for name, f, c in casts if not isinstance(f, str)]
    where = [(recipe.features[f], v) for f, v in recipe.where.items()]
    index = 0
    for record in recipe.records(recipe.target):
        if where and any(match_key(record.get(field)) != v for field, v in where):
            continue
        example = {name: c(record.get(f)) for name, f, c in plain}
        for name, f, c in nested:
            example[name] = c(_value(record, f))
        yield f"{recipe.target}:{index}", example
        index += 1


def _value(record: Mapping[str, Any], field: str | Mapping[str, Any]) -> Any:
    """A field's value; a nested field's (``{part: field id}``) a dict of its parts'."""
    if isinstance(field, str):
        return record.get(field)
    return {name: _value(record, part) for name, part in field.items()}


def quick_count(source: Source) -> int | None:
    """The split's number of examples without reading them, when the files' metadata tells
    (`Recipe.quick_count`); None otherwise."""
    return Recipe(source.options["recipe"], source.options["files"]).quick_count()
