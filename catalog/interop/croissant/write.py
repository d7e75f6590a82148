"""A dataset's Croissant 1.0 description: what ``catalog croissant NAME`` prints and the web
catalog embeds in each dataset page (``<script type="application/ld+json">``).

What it holds, from the dataset's `DatasetInfo` (the prepared copy's, else the spec's):

- ``name``, ``description``, ``license``, ``url`` (the homepage), ``citeAs``, ``version``,
  ``keywords`` (the tags);
- ``distribution``: every source file with a registered sha256 as a ``cr:FileObject`` (its
  URL, size and sha256), and for each split a ``cr:FileSet`` naming the Parquet file
  ``catalog export NAME --format parquet`` writes for it (`parquet_file_name`);
- ``recordSet``: one per split (``@id`` the split's name), a ``cr:Field`` per feature with its
  data type, read from that split's Parquet file (a Croissant reader such as mlcroissant,
  given this file saved beside the Parquet files, reads the examples back), and for each
  ClassLabel a ``sc:Enumeration`` record set of its class names (``index``, ``name``), which
  the label fields reference.

Nested features become ``subField`` s; Tensors and Sequences keep their element's data type
and are ``repeated``.
"""

from __future__ import annotations

import copy
from typing import Any

from catalog.features import (
    Audio,
    BBox,
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.info.dataset_info import DatasetInfo
from catalog.interop.croissant import CROISSANT_1_0
from catalog.interop.parquet.export import parquet_file_name

__all__ = ["CONTEXT", "data_type", "to_croissant"]

#: The JSON-LD context of a Croissant 1.0 file, as the specification gives it.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

#: Croissant's data type of each NumPy dtype a Scalar or Tensor may have.
_DTYPES = {
    "bool": "sc:Boolean",
    "int8": "cr:Int8",
    "int16": "cr:Int16",
    "int32": "cr:Int32",
    "int64": "cr:Int64",
    "uint8": "cr:UInt8",
    "uint16": "cr:UInt16",
    "uint32": "cr:UInt32",
    "uint64": "cr:UInt64",
    "float16": "cr:Float16",
    "float32": "cr:Float32",
    "float64": "cr:Float64",
}

#: File suffixes -> the encodingFormat (MIME type) of a source file.
_FORMATS = {
    ".zip": "application/zip",
    ".tar": "application/x-tar",
    ".tgz": "application/x-gzip",
    ".gz": "application/gzip",
    ".bz2": "application/x-bzip2",
    ".xz": "application/x-xz",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".jsonl": "application/jsonlines",
    ".parquet": "application/x-parquet",
    ".txt": "text/plain",
    ".mat": "application/x-matlab-data",
    ".npz": "application/octet-stream",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tfrecord": "application/x-tfrecord",
}


def data_type(feature: Feature) -> str:
    """Croissant's data type of a leaf feature (a Sequence: its element's)."""
    while isinstance(feature, Sequence):
        feature = feature.feature
    if isinstance(feature, Image):
        return "sc:ImageObject"
    if isinstance(feature, Audio):
        return "sc:AudioObject"
    if isinstance(feature, BBox):
        return "cr:BoundingBox"
    if isinstance(feature, ClassLabel):
        return "sc:Integer"
    if isinstance(feature, Text):
        return "sc:Text"
    if isinstance(feature, (Scalar, Tensor)):
        return _DTYPES[feature.dtype.name]
    raise ValueError(f"no Croissant data type for {feature!r}")  # FeaturesDict: subFields


def _encoding(filename: str) -> str:
    name = filename.lower()
    if name.endswith((".tar.gz", ".tgz")):
        return "application/x-gzip"
    suffix = name[name.rfind(".") :] if "." in name else ""
    return _FORMATS.get(suffix, "application/octet-stream")


def _classes_id(path: str) -> str:
    """The @id of the record set of a ClassLabel's names (``.`` is in no split name)."""
    return f"{path}.classes".replace(" ", "_")


def _field(
    feature: Feature, split: str, name: str, path: str, column: str, json_path: str | None
) -> dict[str, Any]:
    """The cr:Field of feature `name` (which may hold '/', TFDS's ``image/filename``) at
    `path` in `split`'s record set."""
    # Croissant readers refuse whitespace in an @id (wine_quality's "fixed acidity"): the
    # @id writes it as "_", the name keeps it.
    uid = f"{split}/{path}".replace(" ", "_")
    field: dict[str, Any] = {"@type": "cr:Field", "@id": uid, "name": name}
    inner = feature
    repeated = False
    while isinstance(inner, Sequence):
        repeated, inner = True, inner.feature
    if isinstance(feature, Tensor) and feature.shape:
        repeated = True
    if isinstance(inner, FeaturesDict):
        field["subField"] = [
            _field(child, split, n, f"{path}/{n}", column, _join(json_path, n))
            for n, child in inner.items()
        ]
    else:
        field["dataType"] = data_type(inner)
        source: dict[str, Any] = {
            "fileSet": {"@id": f"parquet-{split}"},
            "extract": {"column": column},
        }
        if isinstance(inner, Image) and not repeated:
            json_path = _join(json_path, "bytes")  # the {bytes, path} struct's bytes
        if json_path:
            source["transform"] = {"jsonPath": json_path}
        field["source"] = source
        if isinstance(inner, ClassLabel):
            field["references"] = {"field": {"@id": f"{_classes_id(path)}/index"}}
            field["description"] = f"class index; names in record set {_classes_id(path)}"
    if repeated:
        field["repeated"] = True
    return field


def _join(json_path: str | None, name: str) -> str:
    return name if not json_path else f"{json_path}.{name}"


def _class_labels(features: FeaturesDict) -> dict[str, ClassLabel]:
    """Every ClassLabel (nested ones too) by its path."""
    found = {}
    for path, feature in features.leaves():
        while isinstance(feature, Sequence):
            feature = feature.feature
        if isinstance(feature, ClassLabel):
            found[path] = feature
    return found


def _classes(path: str, label: ClassLabel) -> dict[str, Any]:
    rid = _classes_id(path)
    return {
        "@type": "cr:RecordSet",
        "@id": rid,
        "name": rid,
        "description": f"The class names of feature {path!r}, by index.",
        "dataType": "sc:Enumeration",
        "key": {"@id": f"{rid}/index"},
        "field": [
            {"@type": "cr:Field", "@id": f"{rid}/index", "name": "index", "dataType": "sc:Integer"},
            {"@type": "cr:Field", "@id": f"{rid}/name", "name": "name", "dataType": "sc:Text"},
        ],
        "data": [{f"{rid}/index": i, f"{rid}/name": n} for i, n in enumerate(label.names)],
    }


def to_croissant(info: DatasetInfo) -> dict[str, Any]:
    """The Croissant 1.0 JSON-LD (as a dict) of the dataset `info` describes."""
    name = info.full_name.replace("/", "-")
    description = info.description or f"The {info.full_name} dataset."
    if info.config_description:
        description += f"\n\nConfig {info.config}: {info.config_description}"
    doc: dict[str, Any] = {
        "@context": copy.deepcopy(CONTEXT),  # a reader may change the document it is given
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_1_0,
        "name": name,
        "description": description,
        "version": info.version,
    }
    if info.license:
        doc["license"] = info.license
    if info.homepage:
        doc["url"] = info.homepage
    if info.citation:
        doc["citeAs"] = info.citation
    if info.tags:
        doc["keywords"] = list(info.tags)
    distribution: list[dict[str, Any]] = []
    for key, download in info.downloads.items():
        sha256, url = download.get("sha256"), download.get("url")
        if not sha256 or not url:
            continue  # a file without a registered checksum is no verifiable FileObject
        file: dict[str, Any] = {
            "@type": "cr:FileObject",
            "@id": f"source-{key}",
            "name": f"source-{key}",
            "description": f"Source file {key!r} of {info.full_name}.",
            "contentUrl": url,
            "encodingFormat": _encoding(url.rsplit("/", 1)[-1]),
            "sha256": sha256,
        }
        if download.get("size") is not None:
            file["contentSize"] = f"{download['size']} B"
        distribution.append(file)
    record_sets = [_classes(path, label) for path, label in _class_labels(info.features).items()]
    for split in info.splits:
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": f"parquet-{split}",
                "name": f"parquet-{split}",
                "description": f"The {split} split as 'catalog export {info.full_name} "
                "--format parquet' writes it, beside this file.",
                "encodingFormat": "application/x-parquet",
                "includes": parquet_file_name(info.name, split),
            }
        )
        fields = [
            _field(feature, split, path, path, path, None)
            for path, feature in info.features.items()
        ]
        count = info.splits[split].num_examples
        record_sets.append(
            {
                "@type": "cr:RecordSet",
                "@id": split,
                "name": split,
                "description": f"The {split} split: {count} examples.",
                "field": fields,
            }
        )
    doc["distribution"] = distribution
    doc["recordSet"] = record_sets
    return doc
