"""A `BuilderSpec` stored inside the dataset it prepared, and read back from there.

A dataset prepared from local files (`catalog.spec.infer`) or a Croissant file has no builder
folder to find it by. Its spec travels with it instead: `source_json` is what
``dataset_info.json`` holds under ``"source"`` (the spec as JSON, and where it came from),
and `stored_spec` makes the same spec again, `BuilderSpec.fingerprint` and all, so every
command finds, reads, verifies, removes and prepares it again by name, in any data dir.

>>> from catalog.features import FeaturesDict, Scalar
>>> spec = BuilderSpec("t", "1.0.0", FeaturesDict({"x": Scalar("int64")}), {}, {})
>>> stored_spec(source_json(spec, "files", "/data/t.csv")).fingerprint == spec.fingerprint
True
"""

from __future__ import annotations

from typing import Any

from catalog._util.about import about_fields
from catalog.errors import SpecError
from catalog.features import FeaturesDict, from_json
from catalog.spec.model import BuilderSpec, DownloadSpec, FileRef, SplitSpec

__all__ = ["SOURCE_KINDS", "source_json", "stored_origin", "stored_spec"]

#: What a stored spec was made from: local files (``catalog prepare PATH``), a Croissant file,
#: or TFDS's own builder (``tfds:NAME``, `catalog.interop.tfds.builder_spec`).
SOURCE_KINDS = ("files", "croissant", "tfds")
_VERSION = 1


def source_json(spec: BuilderSpec, kind: str, origin: str) -> dict[str, Any]:
    """What ``dataset_info.json`` keeps of `spec`, made from `kind` (`SOURCE_KINDS`) at
    `origin` (the path or URL the user gave)."""
    assert kind in SOURCE_KINDS, kind
    return {
        "kind": kind,
        "origin": origin,
        "spec_version": _VERSION,
        "spec": {
            "name": spec.name,
            "version": spec.version,
            "config": spec.config,
            "features": spec.features.to_json(),
            "downloads": [
                {
                    "name": d.name,
                    "url": d.url,
                    "mirrors": list(d.mirrors),
                    "size": d.size,
                    "sha256": d.sha256,
                    "filename": d.filename,
                    "max_extracted_size": d.max_extracted_size,
                }
                for d in spec.downloads.values()
            ],
            "splits": [
                {
                    "name": s.name,
                    "format": s.format,
                    "files": {role: _ref(ref) for role, ref in s.files.items()},
                    "num_examples": s.num_examples,
                    "options": {k: _plain(v) for k, v in s.options.items()},
                }
                for s in spec.splits.values()
            ],
            "description": spec.description,
            "homepage": spec.homepage,
            "citation": spec.citation,
            "license": spec.license,
            "supervised_keys": list(spec.supervised_keys) if spec.supervised_keys else None,
            "tags": list(spec.tags),
        },
    }


def stored_origin(source: dict[str, Any] | None) -> tuple[str, str] | None:
    """(kind, origin) of a stored spec, or None."""
    if not isinstance(source, dict) or source.get("kind") not in SOURCE_KINDS:
        return None
    return str(source["kind"]), str(source.get("origin", ""))


def stored_spec(source: dict[str, Any], where: str = "dataset_info.json") -> BuilderSpec:
    """The spec `source_json` stored; SpecError naming `where` when it is not one."""
    from catalog.formats import FORMATS  # the readers' option kinds: only when a spec is read

    try:
        data = source["spec"]
        features = from_json(data["features"])
        if not isinstance(features, FeaturesDict):
            raise TypeError("features is not a FeaturesDict")
        downloads = {
            d["name"]: DownloadSpec(
                d["name"],
                d["url"],
                tuple(d["mirrors"]),
                d["size"],
                d["sha256"],
                d["filename"],
                d.get("max_extracted_size"),
            )
            for d in data["downloads"]
        }
        splits = {}
        for s in data["splits"]:
            kinds = {name: option.kind for name, option in FORMATS[s["format"]].options.items()}
            options = {
                k: {key: FileRef(**ref) for key, ref in v.items()}
                if kinds.get(k) == "file_map" and isinstance(v, dict)
                else v
                for k, v in s["options"].items()
            }
            files = {role: FileRef(**ref) for role, ref in s["files"].items()}
            splits[s["name"]] = SplitSpec(s["name"], s["format"], files, s["num_examples"], options)
        return BuilderSpec(
            name=data["name"],
            version=data["version"],
            features=features,
            downloads=downloads,
            splits=splits,
            **about_fields(data),
            config=data.get("config"),
            origin=(str(source["kind"]), str(source.get("origin", ""))),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise SpecError(
            f"{where}: the spec stored with the dataset is unreadable ({type(error).__name__}: "
            f"{error}); prepare it again from its files with --overwrite"
        ) from None


def _ref(ref: FileRef) -> dict[str, Any]:
    return {"download": ref.download, "member": ref.member}


def _plain(value: Any) -> Any:
    if isinstance(value, FileRef):
        return _ref(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
