"""Croissant record sets as published, rewritten into the one shape the recipe reads: what
mlcroissant accepts beyond Croissant 1.0's plain form, said the plain way.

- A ``source.field`` naming a FileObject or FileSet (not a field) reads that file, as
  ``source.fileObject`` / ``source.fileSet`` would (mlcroissant's recipes/read_from_tar).
- A field with no ``dataType`` reading another record set's field takes that field's type.
- A field with no ``source`` whose ``references`` names a file's column (``{"fileObject": X,
  "extract": {...}}``) has no values of its own: as mlcroissant does, the record set has a
  record per row of that file and the field gives None in each (text ``"None"``, whatever its
  dataType: no number holds a missing value) (recipes/minimal_recommended, recipes/enum).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.interop.croissant.nodes import as_list, as_mapping, id_of, short_type

__all__ = ["NO_VALUES", "normalized_record_sets"]

#: Marks a field that reads its file's rows but has no values (`FieldReader` gives None).
NO_VALUES = "catalog:noValues"

_FILES = ("fileObject", "fileSet")


def normalized_record_sets(
    record_sets: list[Mapping[str, Any]], nodes: Mapping[str, Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """`record_sets` with every field in the plain form (see the module's docstring)."""
    fields = {
        str(f.get("@id") or f.get("name")): f
        for rs in record_sets
        for f in as_list(rs.get("field"))
        if isinstance(f, Mapping)
    }
    out = []
    for rs in record_sets:
        changed = [_field(f, fields, nodes) if isinstance(f, Mapping) else f
                   for f in as_list(rs.get("field"))]  # fmt: skip
        out.append({**rs, "field": changed} if "field" in rs else rs)
    return out


def _field(
    node: Mapping[str, Any],
    fields: Mapping[str, Mapping[str, Any]],
    nodes: Mapping[str, Mapping[str, Any]],
) -> Mapping[str, Any]:
    node = dict(node)
    source = as_mapping(node.get("source"))
    target = id_of(source.get("field"))
    if target is not None and target not in fields and target in nodes:
        kind = "fileSet" if short_type(nodes[target].get("@type")) == "cr:FileSet" else "fileObject"
        source = {k: v for k, v in source.items() if k != "field"}
        node["source"] = source = {**source, kind: {"@id": target}}
    if not node.get("dataType") and target in fields and fields[str(target)].get("dataType"):
        node["dataType"] = fields[str(target)]["dataType"]
    if not source and not node.get("subField"):
        for reference in as_list(node.get("references")):
            reference = as_mapping(reference)
            files = {k: reference[k] for k in _FILES if reference.get(k)}
            if files and reference.get("extract"):
                node["source"] = {**files, "extract": {"fileProperty": "filename"}}
                node["dataType"] = "sc:Text"
                node[NO_VALUES] = True
                break
    if node.get("subField"):
        node["subField"] = [_field(as_mapping(s), fields, nodes) for s in as_list(node["subField"])]
    return node
