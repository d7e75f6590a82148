"""Parquet columns -> features: what a column of each Arrow type fills.

`parquet_types` maps a Parquet file's schema as Hugging Face datasets maps its features to
Arrow (`arrow_feature`): numbers and booleans a `Scalar` of their width; strings, dates, times
and timestamps a `Text` (the latter as Python shows them); lists `Sequence`s (a fixed-size list
one of that length); structs `FeaturesDict`s; Hugging Face's ``Image`` struct (bytes and path)
an `Image`. Where the file holds Hugging Face's own features (its schema metadata,
`hf_features`), an integer column it calls a ``ClassLabel`` is one, with its names. Anything
else (binary, decimals, durations, maps, an image inside a list, another Hugging Face file
struct such as ``Audio``, values nested more than `MAX_NESTING` deep) is one SpecError naming
the file, the column and the part of its type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog.errors import SpecError
from catalog.features import ClassLabel, Feature, FeaturesDict, Image, Scalar, Sequence, Text
from catalog.spec.infer.column_types import FIELD_NAME, FIELD_NAME_WORDS, MAX_NESTING

__all__ = ["arrow_feature", "hf_features", "parquet_types"]


def parquet_types(path: Path, sample: int) -> tuple[list[str], dict[str, Feature]]:
    from catalog.formats.tables.parquet import parquet_file

    schema = parquet_file(path).schema_arrow
    described = hf_features(schema.metadata)
    types: dict[str, Feature] = {}
    for item in schema:
        said = described.get(item.name)
        kind = said.get("_type") if isinstance(said, dict) else None
        if _is_image_struct(item.type) and kind not in (None, "Image"):
            clips = " (a folder of WAV or FLAC clips, <root>/<split>/<label>/*.wav)"
            raise SpecError(
                f"{path}: column {item.name!r} holds Hugging Face {kind} files (a struct of "
                "their bytes and path); not supported yet (Image columns are): write them out "
                f"as files{clips if kind == 'Audio' else ''}"
            )
        if _is_image_struct(item.type):
            types[item.name] = _image_column(path, item.name, sample)
            continue
        try:
            types[item.name] = arrow_feature(item.type, described.get(item.name))
        except _Unsupported as why:
            raise SpecError(
                f"{path}: column {item.name!r} is of Parquet type {_short(item.type)}; not "
                f"supported yet{why.args[0] if why.args else ''} (integers, floats, booleans, "
                "strings, dates, times, timestamps, and lists and structs of those are)"
            ) from None
    return list(schema.names), types


def _short(kind: Any) -> str:
    """An Arrow type as text, cut at 120 characters."""
    text = str(kind)
    return text if len(text) <= 120 else text[:117] + "..."


class _Unsupported(Exception):
    """An Arrow type no feature holds; its argument says which part (``: its field 'x'``)."""


class _TooDeep(_Unsupported):
    """Lists and structs nested deeper than `MAX_NESTING` (said once, not field by field)."""


def hf_features(metadata: dict[bytes, bytes] | None) -> dict[str, Any]:
    """The features Hugging Face datasets wrote into a Parquet file's schema metadata (under
    ``huggingface``: ``{"info": {"features": {...}}}``), as JSON; {} when there are none or
    they do not parse (the Arrow types alone are then read)."""
    import json

    try:
        found = json.loads((metadata or {})[b"huggingface"])["info"]["features"]
    except (KeyError, TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def arrow_feature(kind: Any, described: Any = None, depth: int = 0) -> Feature:
    """The feature a Parquet column of Arrow type `kind` fills, as Hugging Face's features map
    to Arrow: numbers and booleans a `Scalar` of their width, strings (and dates, times,
    timestamps, read as text) a `Text`, a list a `Sequence` of its element's feature (a
    fixed-size list one of that length), a struct a `FeaturesDict` of its fields' (a list of
    structs: a Sequence of that dict, decoded as TFDS decodes one: a dict of sequences).
    _Unsupported otherwise (binary, decimals, durations, maps, an image inside a struct).

    `described`: Hugging Face's own JSON of this column's feature (`hf_features`), where the
    file has it: an integer column it calls a ``ClassLabel`` is one, with its names (and -1,
    Hugging Face's "no label", taken); anything it says that does not match the Arrow type is
    not used."""
    import pyarrow as pa

    from catalog.formats.tables.parquet import is_temporal

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if depth > MAX_NESTING:
        raise _TooDeep(f": lists and structs nested more than {MAX_NESTING} deep")
    if isinstance(described, list) and len(described) == 1:  # older files' list of a feature
        described = {"_type": "List", "feature": described[0]}
    described = described if isinstance(described, dict) else {}
    if pa.types.is_boolean(kind):
        return Scalar("bool")
    if pa.types.is_integer(kind):
        names = described.get("names")
        if described.get("_type") == "ClassLabel" and _names(names):
            return ClassLabel(names=names, allow_unlabeled=True)
        return Scalar(kind.to_pandas_dtype().__name__)
    if pa.types.is_float32(kind) or pa.types.is_float64(kind):
        return Scalar(kind.to_pandas_dtype().__name__)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or is_temporal(kind):
        return Text()  # dates, times, timestamps: as text (`temporal_as_text`)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        try:
            element = arrow_feature(kind.value_type, described.get("feature"), depth + 1)
        except _TooDeep:
            raise
        except _Unsupported as why:
            raise _Unsupported(f": its elements{why.args[0] if why.args else ''}") from None
        return Sequence(element, length=getattr(kind, "list_size", None))
    if pa.types.is_struct(kind) and kind.num_fields and not _is_image_struct(kind):
        fields = {}
        inner = described.get("feature") if "_type" in described else described
        inner = inner if isinstance(inner, dict) else {}  # a struct of lists: older files say
        for i in range(kind.num_fields):  # Sequence({field: ...}) for it
            field = kind.field(i)
            if not FIELD_NAME.match(field.name):  # builder.yaml could not name it
                raise _Unsupported(
                    f": its field {field.name!r} (a field's name must be {FIELD_NAME_WORDS})"
                )
            part = inner.get(field.name)
            if part is not None and inner is not described:
                part = {"_type": "List", "feature": part}
            try:
                fields[field.name] = arrow_feature(field.type, part, depth + 1)
            except _TooDeep:
                raise
            except _Unsupported as why:
                detail = why.args[0] if why.args else ""
                raise _Unsupported(f": its field {field.name!r}{detail}") from None
        return FeaturesDict(fields)
    raise _Unsupported()


def _names(names: Any) -> bool:
    """Whether `names` are class names: distinct texts, at least one."""
    return (
        isinstance(names, list)
        and bool(names)
        and all(isinstance(name, str) for name in names)
        and len(set(names)) == len(names)
    )


def _is_image_struct(kind: Any) -> bool:
    """Hugging Face's ``Image`` layout: a struct of ``bytes`` (binary) and ``path``."""
    import pyarrow as pa

    if not pa.types.is_struct(kind):
        return False
    names = {kind.field(i).name: kind.field(i).type for i in range(kind.num_fields)}
    binary = names.get("bytes")
    return (
        set(names) <= {"bytes", "path"}
        and binary is not None
        and (pa.types.is_binary(binary) or pa.types.is_large_binary(binary))
    )


def _image_column(path: Path, column: str, sample: int) -> Feature:
    """An Image feature for a column of image structs: the widest channels its first rows'
    images hold."""
    from catalog.formats.images.image_files import decode_pixels
    from catalog.formats.tables.parquet import parquet_file

    channels = 1
    for batch in parquet_file(path).iter_batches(batch_size=min(sample, 64), columns=[column]):
        for value in batch.column(0).to_pylist():
            data = value.get("bytes") if isinstance(value, dict) else None
            if data is None:
                raise SpecError(
                    f"{path}: column {column!r} holds an image without its bytes (only a path); "
                    "not supported yet"
                )
            pixels = decode_pixels(data, f"{path}: column {column!r}")
            depth = 1 if pixels.ndim == 2 else pixels.shape[2]
            channels = max(channels, 3 if depth == 3 else depth)
        break
    return Image((None, None, channels), encoding="png")
