"""Small readers of Croissant JSON-LD nodes shared by `catalog.interop.croissant.read`'s
parts: short type names, lists, references, ids, text, and the names catalog gives."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from catalog.errors import SpecError

__all__ = [
    "SIZE_TEXT",
    "as_list",
    "as_mapping",
    "as_text",
    "dataset_name",
    "field_reference",
    "id_of",
    "md5_hex",
    "node_uid",
    "short_type",
    "version_text",
]

_PREFIXES = {"https://schema.org/": "sc:", "http://schema.org/": "sc:"}
_CR = "http://mlcommons.org/croissant/"
#: A ``contentSize`` in bytes (``"1234"``, ``"1234 B"``).
SIZE_TEXT = re.compile(r"^\s*(\d+)\s*(b|bytes?)?\s*$", re.IGNORECASE)
_NAME_PART = re.compile(r"[^a-z0-9_]+")


def short_type(value: Any) -> str:
    """A type's short name: ``sc:Text`` for ``https://schema.org/Text``, ``cr:Split`` for
    Croissant's namespace; any other as it is."""
    text = str(value)
    for long, short in _PREFIXES.items():
        if text.startswith(long):
            return short + text[len(long) :]
    return "cr:" + text[len(_CR) :] if text.startswith(_CR) else text


def as_list(value: Any) -> list[Any]:
    """A JSON-LD value as a list (one value or none become a list)."""
    return value if isinstance(value, list) else [] if value is None else [value]


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one (a malformed node reads as absent)."""
    return value if isinstance(value, Mapping) else {}


def id_of(value: Any) -> str | None:
    """The @id a reference names (``{"@id": X}`` or a plain string)."""
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value if isinstance(value, str) else None


def field_reference(node: Mapping[str, Any]) -> str | None:
    """The field a field ``references``: ``{"field": {"@id": X}}`` (Croissant 1.0) or
    ``{"@id": X}``."""
    found = as_list(node.get("references"))
    if not found:
        return None
    first = found[0]
    if isinstance(first, Mapping) and "field" in first:
        first = first["field"]
    return id_of(first)


def node_uid(node: Mapping[str, Any]) -> str:
    """A node's ``@id`` (or its ``name``); SpecError for a node with neither."""
    uid = node.get("@id", node.get("name"))
    if not isinstance(uid, str) or not uid:
        raise SpecError(f"a Croissant node has no @id: {str(dict(node))[:200]}")
    return uid


def as_text(value: Any) -> str:
    """A text property (a plain string, a language map, or a list of either)."""
    if isinstance(value, list):
        return "\n".join(as_text(v) for v in value if v)
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


def version_text(value: Any) -> str:
    """A ``version`` as catalog's ``X.Y.Z`` (its first three numbers; none: ``1.0.0``)."""
    parts = re.findall(r"\d+", str(value or ""))[:3]
    return ".".join([*parts, "0", "0", "0"][:3]) if parts else "1.0.0"


def md5_hex(value: str) -> str | None:
    """An ``md5`` as 32 lowercase hex digits: as written, or base64 of its 16 bytes (what
    Kaggle writes, ``zW6hk+us6JWXnT7xutqIUA==``); None when it is neither.

    >>> md5_hex("zW6hk+us6JWXnT7xutqIUA==")
    'cd6ea193ebace895979d3ef1bada8850'
    """
    if re.fullmatch(r"[0-9a-fA-F]{32}", value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == 16 else None
