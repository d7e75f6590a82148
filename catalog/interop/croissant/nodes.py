"""Small readers of Croissant JSON-LD nodes shared by `catalog.interop.croissant.read`'s
parts: short type names, lists, references, ids, text, and the names catalog gives."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from catalog.errors import SpecError

__all__ = [
    "dataset_name",
]

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
_PATH_PROPERTIES = {"fullpath": "path", "filepath": "path", "filename": "name"}
_SIZE = re.compile(r"^\s*(\d+)\s*(b|bytes?)?\s*$", re.IGNORECASE)
_NAME_PART = re.compile(r"[^a-z0-9_]+")
_FEATURE_PART = re.compile(r"[^A-Za-z0-9_]+")


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
