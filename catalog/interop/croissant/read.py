"""A Croissant file, read into the parts of a `BuilderSpec`: its metadata, its distribution as
downloads, each record set as a split of an existing source format.

What is understood (anything else is one SpecError: ``not supported yet: <what>, field
<name>``, or naming the node):

- ``cr:FileObject`` with an http(s) ``contentUrl`` and a ``sha256`` (md5 alone cannot be
  verified by catalog); its ``contentSize`` when it is an exact byte count;
- a record set whose fields all ``extract`` a ``column`` of one CSV/TSV ``FileObject`` (a
  download, or a file ``containedIn`` an archive): the `delimited` format, one feature per
  field;
- a record set over one ``cr:FileSet`` ``containedIn`` an archive, ``includes`` globs: an
  ``sc:ImageObject`` field reading the files' ``content``, a label field reading their
  ``fullpath`` / ``filename`` through a ``regex`` transform (its first group), text fields
  reading ``fullpath`` / ``filename`` as they are: the `image_folder` format (features named
  ``image``, ``label`` and the text fields' names);
- data types ``sc:Text``/``sc:URL`` (Text), ``sc:Integer`` (int64), ``sc:Float`` (float64),
  ``sc:Boolean``, ``cr:Int8``..``cr:UInt64``, ``cr:Float16``..``cr:Float64``,
  ``sc:ImageObject`` (an RGB Image, files kept as they are) and class labels: a field that
  ``references`` a field of an ``sc:Enumeration`` record set holding its ``data`` inline
  becomes a ClassLabel of those values, in their order; an image folder's label without one
  gets the sorted distinct labels found (as Hugging Face's imagefolder does).

Record sets that are enumerations (class names) are no splits; every other record set is
one, named by its ``@id`` (lower case, other characters as ``_``).

Where catalog is stricter than mlcroissant: a file of an image FileSet whose path the label's
regex does not match is left out (mlcroissant gives its whole path as the label); a value
that does not fit its field's type (an empty integer cell) is an error naming the file and
line (mlcroissant gives NaN).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog.errors import CatalogError, SpecError
from catalog.features import ClassLabel, Feature, Image, Scalar, Text
from catalog.spec.load import url_problem
from catalog.spec.model import FileRef

__all__ = ["Download", "Draft", "SplitDraft", "parse"]

_PREFIXES = {"https://schema.org/": "sc:", "http://schema.org/": "sc:"}
_CR = "http://mlcommons.org/croissant/"
#: Croissant data type -> the dtype of a Scalar.
_SCALARS = {
    "sc:Integer": "int64",
    "sc:Float": "float64",
    "sc:Number": "float64",
    "sc:Boolean": "bool",
    **{f"cr:{t.capitalize()}": t for t in ("int8", "int16", "int32", "int64")},
    **{f"cr:UInt{n}": f"uint{n}" for n in (8, 16, 32, 64)},
    **{f"cr:Float{n}": f"float{n}" for n in (16, 32, 64)},
}
_TEXTS = ("sc:Text", "sc:URL")
_DELIMITERS = {"text/csv": ",", "text/tab-separated-values": "\t"}
_PATH_PROPERTIES = {"fullpath": "path", "filepath": "path", "filename": "name"}
_SIZE = re.compile(r"^\s*(\d+)\s*(b|bytes?)?\s*$", re.IGNORECASE)
_NAME_PART = re.compile(r"[^a-z0-9_]+")
_FEATURE_PART = re.compile(r"[^A-Za-z0-9_]+")


@dataclass(frozen=True)
class Download:
    """A FileObject to fetch: `size` None when the file does not state it exactly."""

    name: str
    url: str
    sha256: str
    size: int | None
    filename: str


@dataclass
class SplitDraft:
    """A record set as a split: its format, files and options, and its features (a label
    whose names are found in the files is None until they are)."""

    name: str
    format: str
    files: dict[str, FileRef]
    options: dict[str, Any]
    features: dict[str, Feature | None]


@dataclass
class Draft:
    """Everything a Croissant file gives a spec, before its files are read."""

    name: str
    version: str
    description: str
    homepage: str
    license: str
    citation: str
    downloads: dict[str, Download] = field(default_factory=dict)
    splits: dict[str, SplitDraft] = field(default_factory=dict)


def _short(value: Any) -> str:
    text = str(value)
    for long, short in _PREFIXES.items():
        if text.startswith(long):
            return short + text[len(long) :]
    return "cr:" + text[len(_CR) :] if text.startswith(_CR) else text


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _map(value: Any) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one (a malformed node reads as absent)."""
    return value if isinstance(value, Mapping) else {}


def _ref(value: Any) -> str | None:
    """The @id a reference names (``{"@id": X}`` or a plain string)."""
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value if isinstance(value, str) else None


def _reference(node: Mapping[str, Any]) -> str | None:
    """The field a field ``references``: ``{"field": {"@id": X}}`` (Croissant 1.0) or
    ``{"@id": X}``."""
    found = _list(node.get("references"))
    if not found:
        return None
    first = found[0]
    if isinstance(first, Mapping) and "field" in first:
        first = first["field"]
    return _ref(first)


def _uid(node: Mapping[str, Any]) -> str:
    uid = node.get("@id", node.get("name"))
    if not isinstance(uid, str) or not uid:
        raise SpecError(f"a Croissant node has no @id: {str(dict(node))[:200]}")
    return uid


def _text(value: Any) -> str:
    """A text property (a plain string, a language map, or a list of either)."""
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value if v)
    if isinstance(value, Mapping):
        for key in ("en", "@value", "name", "url", "@id"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return ""
    return value.strip() if isinstance(value, str) else ""


def dataset_name(name: str) -> str:
    """`name` as a catalog dataset or split name: ``[a-z][a-z0-9_]*``."""
    words = _NAME_PART.sub("_", name.lower()).strip("_")
    return words if words[:1].isalpha() else f"d_{words}".rstrip("_")


def _feature_name(name: str) -> str:
    words = _FEATURE_PART.sub("_", name).strip("_")
    return words if words[:1].isalpha() else f"f_{words}".rstrip("_")


def _version(value: Any) -> str:
    parts = re.findall(r"\d+", str(value or ""))[:3]
    return ".".join([*parts, "0", "0", "0"][:3]) if parts else "1.0.0"


def _data_type(node: Mapping[str, Any]) -> str:
    types = [_short(t) for t in _list(node.get("dataType"))]
    known = [t for t in types if t in _SCALARS or t in _TEXTS or t == "sc:ImageObject"]
    if known:
        return known[0]
    return types[0] if types else "(none)"


def _not_supported(what: str, name: str) -> SpecError:
    return SpecError(f"not supported yet: {what}, field {name}")


def _download(node: Mapping[str, Any], where: str) -> Download:
    uid = _uid(node)
    url = node.get("contentUrl")
    if not isinstance(url, str) or url_problem(url):
        raise SpecError(
            f"{where}: FileObject {uid!r}: not supported yet: contentUrl {url!r} (catalog "
            "downloads http(s) URLs; local files: serve them, or use a --mirror directory)"
        )
    sha256 = node.get("sha256")
    if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        has_md5 = "md5" in node
        raise SpecError(
            f"{where}: FileObject {uid!r}: "
            + ("not supported yet: md5 only (catalog verifies sha256)" if has_md5 else "no sha256")
            + "; add its sha256 to the Croissant file"
        )
    size_match = _SIZE.match(str(node.get("contentSize", "")))
    size = int(size_match[1]) if size_match else None
    filename = url.rstrip("/").rsplit("/", 1)[-1] or uid
    filename = re.sub(r"[^A-Za-z0-9._-]", "_", filename).lstrip(".") or "file"
    return Download(dataset_name(uid), url, sha256.lower(), size, filename)


def _classes(record_sets: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Field @id -> class names, for every field of an enumeration record set with data."""
    names: dict[str, list[str]] = {}
    for rs in record_sets:
        types = [_short(t) for t in _list(rs.get("dataType"))]
        data = rs.get("data")
        if "sc:Enumeration" not in types and not rs.get("isEnumeration"):
            continue
        if not isinstance(data, list) or not all(isinstance(row, Mapping) for row in data):
            continue
        fields = [_uid(f) for f in _list(rs.get("field"))]
        for fid in fields:
            values = [row.get(fid, row.get(fid.rsplit("/", 1)[-1])) for row in data]
            text_field = next(
                (
                    f
                    for f in fields
                    if f != fid and all(isinstance(row.get(f), str) for row in data)
                ),
                None,
            )
            if all(isinstance(v, str) for v in values):
                names[fid] = [str(v) for v in values]
            elif text_field and sorted(values) == list(range(len(values))):  # index -> name
                by_index = {row[fid]: row[text_field] for row in data}
                names[fid] = [by_index[i] for i in range(len(values))]
    return names


def _is_enumeration(rs: Mapping[str, Any]) -> bool:
    types = [_short(t) for t in _list(rs.get("dataType"))]
    return "sc:Enumeration" in types or bool(rs.get("isEnumeration")) or "data" in rs


def _scalar_feature(node: Mapping[str, Any], name: str, classes: dict[str, list[str]]) -> Feature:
    for key in ("subField", "parentField"):
        if node.get(key):
            raise _not_supported(key, name)
    if node.get("repeated") or node.get("isArray"):
        raise _not_supported("repeated values", name)
    reference = _reference(node)
    if reference is not None:
        if reference not in classes:
            raise _not_supported(f"references to {reference!r} (not an inline enumeration)", name)
        return ClassLabel(names=classes[reference])
    kind = _data_type(node)
    if kind in _TEXTS:
        return Text()
    if kind in _SCALARS:
        return Scalar(_SCALARS[kind])
    raise _not_supported(kind, name)


def _csv_split(
    split: str, fields: list[Mapping[str, Any]], file: Mapping[str, Any], ref: FileRef,
    classes: dict[str, list[str]],
) -> SplitDraft:  # fmt: skip
    fmt = _short(next(iter(_list(file.get("encodingFormat"))), ""))
    if fmt not in _DELIMITERS:
        raise SpecError(
            f"not supported yet: encodingFormat {fmt!r} of FileObject {_uid(file)!r} "
            f"(record set {split}); catalog reads CSV and TSV files here"
        )
    columns, features = {}, {}
    for node in fields:
        name = str(node.get("name") or _uid(node).rsplit("/", 1)[-1])
        source = _map(node.get("source"))
        column = _map(source.get("extract")).get("column")
        if not isinstance(column, str) or source.get("transform"):
            what = "a transform" if source.get("transform") else "a source other than a column"
            raise _not_supported(what, name)
        feature = _feature_name(name)
        if feature in features:
            raise SpecError(f"record set {split}: two fields are both named {feature!r}")
        features[feature] = _scalar_feature(node, name, classes)
        columns[feature] = column
    options = {"columns": columns, "delimiter": _DELIMITERS[fmt]}
    return SplitDraft(split, "delimited", {"file": ref}, options, dict(features))


def _label_pattern(regex: str, on_name: bool) -> str:
    """A Croissant `regex` transform (``re.match``, the first group is the value) as a part of
    an image_folder ``match`` (a full match with a group named label)."""
    found = re.search(r"(?<!\\)\((?!\?)", regex)
    if found is None:
        raise SpecError(f"the regex {regex!r} has no group to take the label from")
    named = f"{regex[: found.start()]}(?P<label>{regex[found.end() :]}"
    body = named.removeprefix("^")
    prefix = "(?:.*/)?" if on_name else ""
    return f"{prefix}(?:{body}).*" if not body.endswith("$") else f"{prefix}(?:{body})"


def _folder_split(
    split: str, fields: list[Mapping[str, Any]], file_set: Mapping[str, Any], archive: str,
    classes: dict[str, list[str]],
) -> SplitDraft:  # fmt: skip
    includes = [g for g in _list(file_set.get("includes")) if isinstance(g, str)]
    if not includes:
        raise SpecError(f"FileSet {_uid(file_set)!r}: no includes glob")
    features: dict[str, Feature | None] = {}
    texts: dict[str, str] = {}
    label: str | None = None
    for node in fields:
        name = str(node.get("name") or _uid(node).rsplit("/", 1)[-1])
        source = _map(node.get("source"))
        prop = _map(source.get("extract")).get("fileProperty")
        transforms = [_map(t) for t in _list(source.get("transform"))]
        kind = _data_type(node)
        if kind == "sc:ImageObject" and prop == "content" and not transforms:
            features["image"] = Image((None, None, 3))
        elif prop in _PATH_PROPERTIES and kind in _TEXTS and not transforms:
            texts[_feature_name(name)] = _PATH_PROPERTIES[prop]
            features[_feature_name(name)] = Text()
        elif prop in _PATH_PROPERTIES and len(transforms) == 1 and "regex" in transforms[0]:
            if label is not None:
                raise _not_supported("a second label field", name)
            label = _label_pattern(str(transforms[0]["regex"]), prop == "filename")
            reference = _reference(node)
            features["label"] = (
                ClassLabel(names=classes[reference]) if reference in classes else None
            )
            if reference is not None and reference not in classes:
                raise _not_supported(f"references to {reference!r}", name)
        else:
            raise _not_supported(f"{kind} from file property {prop!r} in a FileSet", name)
    if "image" not in features or label is None:
        raise SpecError(
            f"not supported yet: record set {split} over FileSet {_uid(file_set)!r} needs an "
            "sc:ImageObject field (fileProperty content) and a label field (a regex on fullpath)"
        )
    globs = "|".join(
        fnmatch.translate(g).removeprefix("(?s:").removesuffix(")\\Z") for g in includes
    )
    options = {
        "match": f"(?s)(?=(?:{globs})\\Z){label}",
        "reencode_invalid": True,  # an RGBA or odd file becomes RGB, as Croissant readers do
        "text_features": texts,
    }
    return SplitDraft(split, "image_folder", {"root": FileRef(archive)}, options, features)


def parse(doc: Any, where: str) -> Draft:
    """The `Draft` of the Croissant document `doc` (read from `where`); SpecError (or
    FeatureError: class names that cannot be a ClassLabel's) for anything it cannot use."""
    try:
        return _parse(doc, where)
    except CatalogError as error:
        if str(error).startswith(f"{where}: "):
            raise
        raise type(error)(f"{where}: {error}") from None  # every message names the file
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as error:
        raise SpecError(
            f"{where}: a Croissant file catalog cannot read: a node is not what Croissant 1.0 "
            f"says ({type(error).__name__}: {error})"
        ) from None


def _parse(doc: Any, where: str) -> Draft:
    if not isinstance(doc, Mapping) or "recordSet" not in doc:
        raise SpecError(f"{where}: not a Croissant file (a JSON-LD object with a recordSet)")
    name = _text(doc.get("name")) or "croissant"
    draft = Draft(
        name=dataset_name(name),
        version=_version(doc.get("version")),
        description=_text(doc.get("description")),
        homepage=_text(doc.get("url")),
        license=_text(doc.get("license")),
        citation=_text(doc.get("citeAs") or doc.get("citation")),
    )
    nodes = {_uid(n): n for n in _list(doc.get("distribution")) if isinstance(n, Mapping)}
    kinds = {uid: _short(n.get("@type")) for uid, n in nodes.items()}
    for uid, node in nodes.items():
        if kinds[uid] in ("cr:FileObject", "sc:FileObject") and not node.get("containedIn"):
            download = _download(node, where)
            same = [u for u, d in draft.downloads.items() if d.name == download.name]
            if same:
                raise SpecError(
                    f"{where}: FileObjects {same[0]!r} and {uid!r} both become download "
                    f"{download.name!r}; give them @ids that differ in letters or digits"
                )
            draft.downloads[uid] = download
    record_sets = [rs for rs in _list(doc.get("recordSet")) if isinstance(rs, Mapping)]
    classes = _classes(record_sets)
    for rs in record_sets:
        if _is_enumeration(rs):
            continue
        split = dataset_name(_uid(rs))
        if split in draft.splits:
            raise SpecError(
                f"{where}: two record sets become split {split!r} (record set {_uid(rs)!r}); "
                "give them @ids that differ in letters or digits"
            )
        fields = [f for f in _list(rs.get("field")) if isinstance(f, Mapping)]
        if not fields:
            raise SpecError(f"{where}: record set {_uid(rs)!r} has no fields")
        files = set()
        for node in fields:
            source = _map(node.get("source"))
            file_id = _ref(source.get("fileObject")) or _ref(source.get("fileSet"))
            if file_id is None:
                raise _not_supported(
                    "a source that is no FileObject or FileSet", str(node.get("name"))
                )
            files.add(file_id)
        if len(files) != 1 or next(iter(files)) not in nodes:
            raise SpecError(
                f"{where}: not supported yet: record set {_uid(rs)!r} reads "
                f"{', '.join(sorted(files))}; catalog reads one known file or file set per "
                "record set"
            )
        uid = files.pop()
        node = nodes[uid]
        container = _ref(next(iter(_list(node.get("containedIn"))), None)) or ""
        if kinds[uid] == "cr:FileSet":
            if container not in draft.downloads:
                raise SpecError(
                    f"{where}: not supported yet: FileSet {uid!r} outside an archive FileObject"
                )
            draft.splits[split] = _folder_split(
                split, fields, node, draft.downloads[container].name, classes
            )
        elif uid in draft.downloads:
            ref = FileRef(draft.downloads[uid].name)
            draft.splits[split] = _csv_split(split, fields, node, ref, classes)
        elif container in draft.downloads:
            member = str(node.get("contentUrl") or "")
            parts = member.split("/")
            if not member or member.startswith("/") or "\\" in member or ".." in parts:
                raise SpecError(
                    f"{where}: FileObject {uid!r}: contentUrl {member!r} must be a relative path "
                    f"inside {container!r} (no '..')"
                )
            ref = FileRef(draft.downloads[container].name, member)
            draft.splits[split] = _csv_split(split, fields, node, ref, classes)
        else:
            raise SpecError(f"{where}: not supported yet: {kinds[uid]} {uid!r}")
    if not draft.splits:
        raise SpecError(f"{where}: no record set to prepare (only enumerations)")
    return draft
