"""An inferred spec written out as a builder folder: ``builder.yaml`` + ``checksums.tsv``.

``catalog prepare PATH --write-spec DIR`` writes what it inferred, for the user to read, edit
(a description, a license, other class names) and commit. A builder folder reads only files
inside it (`catalog.spec.local_files`), so DIR must be the data's folder or a folder above it:
the downloads become ``path:`` entries relative to DIR, their sizes and sha256 the lines of
checksums.tsv. Loading DIR gives back the same spec (`BuilderSpec.fingerprint` and all), so
``catalog prepare DIR`` prepares the same dataset; only a feature name builder.yaml's rule
refuses (a table column named ``1960``) is written renamed, reading the same column.
Options left at their format's defaults are not written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from catalog.download.checksums import write_checksums
from catalog.errors import SpecError
from catalog.formats import FORMATS
from catalog.spec.load import FEATURE_NAME_RULE
from catalog.spec.model import CHECKSUMS_FILE, SPEC_FILE, BuilderSpec, FileRef

__all__ = ["spec_yaml", "write_spec", "yaml_names"]


def _local_path(url: str) -> Path | None:
    parts = urlsplit(url)
    return Path(url2pathname(parts.path)) if parts.scheme == "file" else None


def _relative(url: str, folder: Path, what: str) -> str:
    path = _local_path(url)
    if path is None:
        return url
    root = folder.resolve()
    if not path.is_relative_to(root):
        raise SpecError(
            f"--write-spec {folder}: {what} is {path}, outside {folder}; a builder folder reads "
            "only files inside it, so write the spec into the data's folder or a folder above it"
        )
    return path.relative_to(root).as_posix() or "."


#: Split options naming features: by their keys, and in their lists / text.
_FEATURE_KEYS = ("columns", "fill", "values", "stack", "constant")
_FEATURE_LISTS = ("strip", "doubled_quotes", "via_float32")
_RULE = re.compile(f"^{FEATURE_NAME_RULE}\\Z")


def yaml_names(names: list[str]) -> dict[str, str]:
    """``{feature name: the name builder.yaml gives it}`` for the names builder.yaml's rule
    (`catalog.spec.load.FEATURE_NAME_RULE`) refuses, such as a table's ``1960`` or
    ``'popul'`` (kept as pandas reads them): their words joined by ``_``, ``feature_`` first
    when that is no name either. The columns keep their names in the file.

    >>> yaml_names(["1960", "'popul'", "age", "a b"])
    {'1960': 'feature_1960', "'popul'": 'popul'}
    """
    out: dict[str, str] = {}
    taken = set(names)
    for name in names:
        if _RULE.match(name):
            continue
        words = "_".join(re.findall(r"[A-Za-z0-9_]+", name)).strip("_")
        new = words if _RULE.match(words) else f"feature_{words}".rstrip("_")
        while new in taken:
            new = f"{new}_"
        taken.add(new)
        out[name] = new
    return out


def _renamed_options(options: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    out = dict(options)
    for key in _FEATURE_KEYS:
        if isinstance(out.get(key), dict):
            out[key] = {renames.get(k, k): v for k, v in out[key].items()}
    for key in _FEATURE_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [renames.get(v, v) for v in out[key]]
    if isinstance(out.get("row_index"), str):
        out["row_index"] = renames.get(out["row_index"], out["row_index"])
    return out


def spec_yaml(spec: BuilderSpec, folder: Path) -> dict[str, Any]:
    """The builder.yaml content of `spec`, its local downloads relative to `folder`; feature
    names builder.yaml refuses renamed (`yaml_names`), the columns they read unchanged."""
    renames = yaml_names(list(spec.features))
    downloads: dict[str, Any] = {}
    for name, d in spec.downloads.items():
        rel = _relative(d.url, folder, f"download {name!r}")
        downloads[name] = {"path": rel} if _local_path(d.url) else {"url": d.url}
    splits: dict[str, Any] = {}
    for name, split in spec.splits.items():
        defaults = FORMATS[split.format].options
        options = {
            k: v
            for k, v in _renamed_options(dict(split.options), renames).items()
            if v != defaults[k].default
        }
        entry: dict[str, Any] = {"format": split.format, "files": _refs(split.files)}
        if options:
            entry["options"] = options
        entry["num_examples"] = split.num_examples
        splits[name] = entry
    data: dict[str, Any] = {"name": spec.name, "version": spec.version}
    for key in ("description", "homepage", "license", "citation"):
        if getattr(spec, key):
            data[key] = getattr(spec, key)
    if spec.tags:
        data["tags"] = list(spec.tags)
    features = spec.features.to_json()["features"]
    data["features"] = {renames.get(k, k): v for k, v in features.items()}
    if spec.supervised_keys:
        data["supervised_keys"] = [renames.get(str(k), k) for k in spec.supervised_keys]
    data["downloads"] = downloads
    data["splits"] = splits
    return data


def _refs(files: dict[str, FileRef]) -> dict[str, Any]:
    return {
        role: ref.download
        if ref.member is None
        else {"download": ref.download, "member": ref.member}
        for role, ref in files.items()
    }


def write_spec(spec: BuilderSpec, folder: str | Path) -> Path:
    """Write `spec` into `folder` (created if needed) as builder.yaml + checksums.tsv; the
    builder.yaml path. SpecError when the folder holds a builder.yaml already, or the data is
    outside it."""
    import yaml

    folder = Path(folder).expanduser()
    target = folder / SPEC_FILE
    if target.exists():
        raise SpecError(f"{target} exists; remove it, or write the spec into another folder")
    folder.mkdir(parents=True, exist_ok=True)
    data = spec_yaml(spec, folder)
    checksums = {
        data["downloads"][name]["path"]: (d.size, d.sha256, d.filename)
        for name, d in spec.downloads.items()
        if "path" in data["downloads"][name] and d.size is not None and d.sha256 is not None
    }
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    header = f"# Inferred by catalog prepare from {spec.description.rpartition(', from ')[2]}\n"
    temp = target.with_name(f".{SPEC_FILE}.tmp")
    temp.write_text(header + text, "utf-8")
    write_checksums(folder / CHECKSUMS_FILE, checksums)
    temp.replace(target)
    return target
