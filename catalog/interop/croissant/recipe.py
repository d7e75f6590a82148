"""A Croissant record set as a split of the `croissant` source format
(`catalog.formats.croissant.records`): its features from the fields' data types, the files
it reads as file references (downloads, archive members, extracted archives, local folders)
and the recipe the reader follows.

Local files: a ``contentUrl`` that is a relative path names a file inside the Croissant
file's folder (never outside: ``..``, absolute paths, ``file://`` and symlinks leading out
are refused), and a FileSet outside an archive lists files in that folder. Both are downloads
of the local kind (`catalog.spec.local_files`), measured now and checked against the
Croissant file's ``sha256`` / ``md5`` when it gives one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog._util.hashing import md5_file
from catalog.errors import ChecksumError, SpecError
from catalog.features import (
    Audio,
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.formats.croissant.records import FieldReader, listed, ref, references, subfields
from catalog.interop.croissant.nodes import md5_hex
from catalog.spec.local_files import inside, measured_download
from catalog.spec.model import DownloadSpec, FileRef

__all__ = [
    "PLACEHOLDER_RATE",
    "SPLIT_TYPES",
    "FileEntry",
    "check_fields",
    "field_feature",
    "local_file",
    "local_folder",
    "recipe_split",
]
_TABLES = ("csv", "tsv", "json", "jsonl", "parquet")
#: A distribution node as the recipe sees it: (kind, file keys, includes globs or None, the
#: prefix of its paths, or its files listed as [key, path] when they are no folder).
FileEntry = tuple[str, list[str], list[str] | None, str, list[list[str]] | None]

_PREFIXES = {"https://schema.org/": "sc:", "http://schema.org/": "sc:"}
_CR = "http://mlcommons.org/croissant/"
_SCALARS = {
    "sc:Integer": "int64",
    "sc:Float": "float64",
    "sc:Number": "float64",
    "sc:Boolean": "bool",
    **{f"cr:{t.capitalize()}": t for t in ("int8", "int16", "int32", "int64")},
    **{f"cr:UInt{n}": f"uint{n}" for n in (8, 16, 32, 64)},
    **{f"cr:Float{n}": f"float{n}" for n in (16, 32, 64)},
}
_TEXTS = ("sc:Text", "sc:URL", "sc:Date", "sc:DateTime", "sc:Time")
_OTHERS = ("sc:ImageObject", "cr:BoundingBox", "sc:AudioObject", "sc:VideoObject")
#: Data types of a record set whose values name splits.
SPLIT_TYPES = ("cr:Split", "cr:TrainingSplit", "cr:ValidationSplit", "cr:TestSplit")
_FEATURE_PART = re.compile(r"[^A-Za-z0-9_]+")
#: An audio feature's sample rate until its files tell (`catalog.interop.croissant.spec`).
PLACEHOLDER_RATE = 1


def short(value: Any) -> str:
    text = str(value)
    for long, prefix in _PREFIXES.items():
        if text.startswith(long):
            return prefix + text[len(long) :]
    return "cr:" + text[len(_CR) :] if text.startswith(_CR) else text


def feature_name(node: Mapping[str, Any]) -> str:
    """A field's feature name: its name's last part (``persons/name`` -> ``name``)."""
    name = node.get("name")
    if isinstance(name, Mapping):  # a language map (Croissant 1.1): English, else the first
        name = name.get("en", next(iter(name.values()), None))
    name = str(name or node.get("@id") or "field").rsplit("/", 1)[-1]
    words = _FEATURE_PART.sub("_", name).strip("_")
    return words if words[:1].isalpha() else f"f_{words}".rstrip("_")


def _data_type(node: Mapping[str, Any]) -> str:
    types = [short(t) for t in listed(node.get("dataType"))]
    known = [t for t in types if t in _SCALARS or t in _TEXTS or t in _OTHERS or t in SPLIT_TYPES]
    return known[0] if known else types[0] if types else "sc:Text"


def field_feature(node: Mapping[str, Any], classes: Mapping[str, list[str]]) -> Feature:
    """The feature a field's values fill; SpecError ``not supported yet: <what>, field <id>``."""
    uid = str(node.get("@id") or node.get("name"))
    if node.get("parentField"):
        raise SpecError(f"not supported yet: parentField, field {uid}")
    if subfields(node):  # a nested value: a dict of its parts, as mlcroissant gives it
        parts = {feature_name(f): field_feature(f, classes) for f in subfields(node)}
        if len(parts) != len(subfields(node)):
            raise SpecError(f"field {uid}: two subFields are both named alike")
        return FeaturesDict(parts)
    if node.get("repeated") or node.get("isArray"):  # a list of values: a Sequence of them
        element = field_feature({**node, "repeated": False, "isArray": False}, classes)
        if not isinstance(element, (Scalar, Text, ClassLabel)):
            raise SpecError(f"not supported yet: repeated {type(element).__name__}, field {uid}")
        return Sequence(element)
    target = references(node)
    if target is not None and target in classes:
        return ClassLabel(names=classes[target])
    kind = _data_type(node)
    if kind in _TEXTS or kind in SPLIT_TYPES:
        return Text()
    if kind in _SCALARS:
        return Scalar(_SCALARS[kind])
    if kind == "sc:ImageObject":
        return Image((None, None, 3))
    if kind == "cr:BoundingBox":
        return Tensor((4,), "float64")
    if kind == "sc:AudioObject":  # its sample rate and channels: the first file's (spec.py)
        return Audio(sample_rate=PLACEHOLDER_RATE, dtype="float32")
    raise SpecError(f"not supported yet: dataType {kind}, field {uid}")


def local_file(name: str, node: Mapping[str, Any], folder: Path, where: str) -> DownloadSpec:
    """The download of a FileObject whose ``contentUrl`` is a path inside `folder`, checked
    against its ``sha256`` or ``md5``; declared sizes are not trusted (measured)."""
    uid = str(node.get("@id"))
    text = str(node.get("contentUrl"))
    try:
        real = inside(text, folder)
    except ValueError as error:
        raise SpecError(
            f"{where}: FileObject {uid!r}: contentUrl {text!r} must be a path inside the "
            f"Croissant file's folder ({error})"
        ) from None
    if not real.is_file():
        raise SpecError(f"{where}: FileObject {uid!r}: {real} is not a file")
    download = measured_download(name, real)
    for algorithm in ("sha256", "md5"):
        declared = node.get(algorithm)
        if not isinstance(declared, str):
            continue
        got = download.sha256 if algorithm == "sha256" else md5_file(real)
        wanted = (md5_hex(declared) if algorithm == "md5" else None) or declared.lower()
        if got != wanted:
            raise ChecksumError(
                f"{where}: FileObject {uid!r}: {real} has {algorithm} {got}, the Croissant file "
                f"says {declared}; the file changed, or the Croissant file is wrong"
            )
        break
    return download


def local_folder(name: str, globs: list[str], folder: Path, where: str) -> tuple[DownloadSpec, str]:
    """A FileSet outside an archive: the download of the folder its globs' fixed prefix names
    (inside `folder`), and that prefix (``data/``; the set's paths are matched with it)."""
    parts = [g.split("/") for g in globs]
    prefix: list[str] = []
    for column in zip(*[p[:-1] for p in parts], strict=False):
        if len(set(column)) != 1 or any(c in column[0] for c in "*?["):
            break
        prefix.append(column[0])
    root = "/".join(prefix) or "."
    try:
        real = inside(root, folder) if prefix else folder.resolve()
    except ValueError as error:
        raise SpecError(f"{where}: includes {globs[0]!r}: {error}") from None
    if not real.is_dir():
        raise SpecError(f"{where}: includes {globs[0]!r}: {real} is not a folder")
    top = folder.resolve()
    for path in real.rglob("*"):  # what measuring the folder would read: nothing outside
        if path.is_symlink() and not path.resolve().is_relative_to(top):
            raise SpecError(
                f"{where}: includes {globs[0]!r}: {path} is a symlink leading outside the "
                f"Croissant file's folder (to {path.resolve()})"
            )
    return measured_download(name, real), "".join(f"{p}/" for p in prefix)


def recipe_split(
    rs: Mapping[str, Any],
    record_sets: list[Mapping[str, Any]],
    files: Mapping[str, FileEntry],
    refs: Mapping[str, FileRef],
    features: Mapping[str, Any],
) -> dict[str, Any]:
    """The `croissant` format's options for record set `rs`: ``files`` maps a distribution
    @id to (kind, file keys, includes or None, the prefix of its paths); `refs` the file
    references by key."""
    recipe = {
        "record_set": str(rs.get("@id") or rs.get("name")),
        "features": dict(features),
        "where": {},
        "record_sets": {str(r.get("@id") or r.get("name")): r for r in record_sets},
        "files": {
            uid: {
                "kind": kind,
                "roots": keys,
                "includes": includes,
                "prefix": prefix,
                "members": members,
            }
            for uid, (kind, keys, includes, prefix, members) in files.items()
        },
    }
    return {"recipe": json.dumps(recipe, sort_keys=True), "files": dict(refs)}


def read_ids(rs: Mapping[str, Any]) -> set[str]:
    """The distribution @ids the fields of a record set read."""
    found = set()
    for node in listed(rs.get("field")):
        source = node.get("source") if isinstance(node, Mapping) else None
        if isinstance(source, Mapping):
            uid = ref(source.get("fileObject")) or ref(source.get("fileSet"))
            if uid:
                found.add(uid)
    return found


def check_fields(
    record_sets: list[Mapping[str, Any]],
    files: Mapping[str, FileEntry],
    by_id: Mapping[str, Mapping[str, Any]],
) -> None:
    """What the reader would find wrong, found before any download: every field's extract
    and transforms compile (regexes through RE2), every ``references`` and ``source.field``
    names a field that exists, every ``column`` / ``jsonPath`` reads a table."""
    known = {
        str(_field.get("@id"))
        for rs in by_id.values()
        for _field in listed(rs.get("field"))
        if isinstance(_field, Mapping)
    }
    for rs in record_sets:
        nodes = [f for f in listed(rs.get("field")) if isinstance(f, Mapping)]
        for node in [part for f in nodes for part in (subfields(f) or [f])]:
            reader = FieldReader(node)
            for target in (references(node), reader.joined):
                if (
                    target is not None
                    and target not in known
                    and "fileObject" not in str(node.get("references"))
                ):
                    raise SpecError(
                        f"field {reader.id} names field {target!r}, which no record set has"
                    )
            kind = files[reader.file][0] if reader.file and reader.file in files else None
            if kind is not None and kind not in _TABLES and (reader.column or reader.steps):
                raise SpecError(
                    f"not supported yet: a column or jsonPath of a file of encodingFormat "
                    f"{kind!r} (catalog reads CSV, TSV, JSON, JSON Lines and Parquet tables), "
                    f"field {reader.id}"
                )
