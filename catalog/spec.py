"""Builder specs: a dataset described as data, in ``builders/<name>/``.

A builder folder holds ``builder.yaml`` (name, version, metadata, features, downloads, splits)
and ``checksums.tsv`` (one line per download: ``url<TAB>size<TAB>sha256<TAB>filename``, the
same form as the public checksum registries). Loading validates every field and names the
file and the field when one is wrong. Features are their JSON form (`catalog.features`) in
YAML; a ClassLabel's ``names_file`` is relative to the builder folder.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from catalog.errors import FeatureError, SpecError
from catalog.features import FeaturesDict, from_json
from catalog.formats import FORMATS

__all__ = [
    "BuilderSpec",
    "DownloadSpec",
    "SplitSpec",
    "load_spec",
    "read_checksums",
    "read_yaml",
    "supervised_keys_problem",
    "write_checksums",
]

SPEC_FILE = "builder.yaml"
CHECKSUMS_FILE = "checksums.tsv"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class DownloadSpec:
    """One file a dataset needs. `size`/`sha256` are None until registered in checksums.tsv."""

    name: str
    url: str
    mirrors: tuple[str, ...] = ()
    size: int | None = None
    sha256: str | None = None
    filename: str = ""

    @property
    def urls(self) -> tuple[str, ...]:
        """The builder's url, then its mirrors: the order they are tried in."""
        return (self.url, *self.mirrors)


@dataclass(frozen=True)
class SplitSpec:
    """One split: the source format, the download filling each of its roles, the count."""

    name: str
    format: str
    files: dict[str, str]
    num_examples: int


@dataclass(frozen=True)
class BuilderSpec:
    """Everything a builder folder declares."""

    name: str
    version: str
    features: FeaturesDict
    downloads: dict[str, DownloadSpec]
    splits: dict[str, SplitSpec]
    description: str = ""
    homepage: str = ""
    citation: str = ""
    license: str = ""
    supervised_keys: tuple[str, str] | None = None
    path: Path | None = field(default=None, compare=False)

    def replace(self, **changes: Any) -> BuilderSpec:
        """A copy with some fields changed (e.g. by the builder test harness)."""
        return dataclasses.replace(self, **changes)


class _Fields:
    """Reads typed fields out of a YAML mapping, naming file and field in every error."""

    def __init__(self, source: Path, data: Any, prefix: str = "") -> None:
        self.source, self.prefix = source, prefix
        if not isinstance(data, Mapping):
            raise self.error(prefix.rstrip(".") or "(top level)", "expected a mapping")
        self.data: Mapping[str, Any] = data

    def error(self, name: str, problem: str) -> SpecError:
        return SpecError(f"{self.source}: field '{self.prefix}{name}': {problem}")

    def get(self, name: str, kind: type, default: Any = ..., *, check: Any = None) -> Any:
        if name not in self.data:
            if default is ...:
                raise self.error(name, "missing")
            return default
        value = self.data[name]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.error(name, f"expected {kind.__name__}, got {value!r}")
        if check is not None and not check(value):
            raise self.error(name, f"invalid value {value!r}")
        return value

    def sub(self, name: str) -> _Fields:
        return _Fields(self.source, self.get(name, dict), f"{self.prefix}{name}.")


def read_yaml(path: Path) -> Any:
    """Load a YAML file safely (no Python objects); SpecError naming the file if malformed."""
    # Imported here: YAML is read only when a spec is loaded, and importing it costs a fifth
    # of numpy's import time, which `import catalog` must stay close to.
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except yaml.YAMLError as error:
        raise SpecError(f"{path}: not valid YAML: {error}") from None


def read_checksums(path: Path) -> dict[str, tuple[int, str, str]]:
    """Read checksums.tsv into ``{url: (size, sha256, filename)}``; a missing file is empty."""
    if not path.is_file():
        return {}
    table: dict[str, tuple[int, str, str]] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) not in (3, 4) or not parts[1].isdigit() or not _SHA256.match(parts[2]):
                raise SpecError(
                    f"{path}:{number}: expected 'url<TAB>size<TAB>sha256[<TAB>filename]', "
                    f"got {line!r}"
                )
            filename = parts[3] if len(parts) == 4 else _basename(parts[0])
            table[parts[0]] = (int(parts[1]), parts[2], filename)
    return table


def write_checksums(path: Path, entries: Mapping[str, tuple[int, str, str]]) -> None:
    """Merge ``{url: (size, sha256, filename)}`` into checksums.tsv (``--register-checksums``).

    Entries for other URLs are kept (never dropped), lines are sorted by URL, comment lines
    stay at the top, and the file is replaced atomically.
    """
    table = {**read_checksums(path), **entries}
    text = path.read_text("utf-8") if path.is_file() else ""
    lines = [line for line in text.splitlines() if line.startswith("#")]
    lines += [f"{url}\t{size}\t{sha}\t{name}" for url, (size, sha, name) in sorted(table.items())]
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text("\n".join(lines) + "\n", "utf-8")
    temp.replace(path)


def supervised_keys_problem(keys: Any, features: FeaturesDict) -> str | None:
    """What is wrong with `keys` as ``[input, target]`` feature names, or None."""
    if (
        not isinstance(keys, (list, tuple))
        or len(keys) != 2
        or not all(isinstance(k, str) for k in keys)
    ):
        return f"expected [input, target] naming two features, got {keys!r}"
    unknown = [k for k in keys if k not in features]
    if unknown:
        return (
            f"expected [input, target] naming two features, got {list(keys)}: {unknown[0]!r} "
            f"is not a feature; features: {', '.join(features)}"
        )
    if keys[0] == keys[1]:
        return f"expected [input, target] naming two different features, got {list(keys)}"
    return None


def _resolve_names_files(features: Any, folder: Path) -> Any:
    """The features' YAML with every ``names_file`` made relative to the builder folder."""
    if isinstance(features, Mapping):
        return {
            key: str(folder / value)
            if key == "names_file" and isinstance(value, str)
            else _resolve_names_files(value, folder)
            for key, value in features.items()
        }
    return features


def _basename(url: str) -> str:
    return Path(urlparse(url).path).name or "download"


def load_spec(folder: str | Path) -> BuilderSpec:
    """Load and validate the builder in `folder` (``builder.yaml`` + ``checksums.tsv``)."""
    folder = Path(folder)
    source = folder / SPEC_FILE
    if not source.is_file():
        raise SpecError(f"{folder}: no {SPEC_FILE} in this folder; a builder folder needs one")
    data = read_yaml(source)
    top = _Fields(source, data)
    name = top.get("name", str, check=_NAME.match)
    checksums = read_checksums(folder / CHECKSUMS_FILE)

    try:
        raw = _resolve_names_files(top.get("features", dict), folder)
        features = from_json({"type": "FeaturesDict", "features": raw})
    except FeatureError as error:
        raise top.error("features", str(error)) from None
    assert isinstance(features, FeaturesDict)

    downloads: dict[str, DownloadSpec] = {}
    for key in top.get("downloads", dict):
        item = top.sub("downloads").sub(key)
        url = item.get("url", str)
        mirrors = item.get("mirrors", list, [])
        if not all(isinstance(m, str) for m in mirrors):
            raise item.error("mirrors", "expected a list of URLs")
        size, sha256, filename = checksums.get(url, (None, None, _basename(url)))
        downloads[key] = DownloadSpec(key, url, tuple(mirrors), size, sha256, filename)

    splits: dict[str, SplitSpec] = {}
    for split in top.get("splits", dict):
        item = top.sub("splits").sub(split)
        fmt = item.get("format", str)
        if fmt not in FORMATS:
            raise item.error(
                "format", f"unknown format {fmt!r}; known: {', '.join(sorted(FORMATS))}"
            )
        files = item.sub("files")
        roles = {}
        for role in FORMATS[fmt].roles:
            roles[role] = files.get(role, str)
            if roles[role] not in downloads:
                raise files.error(
                    role, f"no download named {roles[role]!r}; downloads: {sorted(downloads)}"
                )
        extra = sorted(set(files.data) - set(roles))
        if extra:
            raise files.error(extra[0], f"format {fmt!r} reads only {list(roles)}")
        count = item.get("num_examples", int, check=lambda n: n > 0)
        splits[split] = SplitSpec(split, fmt, roles, count)
    if not splits:
        raise top.error("splits", "at least one split is needed")

    keys = top.get("supervised_keys", list, None)
    if keys is not None:
        problem = supervised_keys_problem(keys, features)
        if problem:
            raise top.error("supervised_keys", problem)

    return BuilderSpec(
        name=name,
        version=str(top.get("version", str, check=_VERSION.match)),
        features=features,
        downloads=downloads,
        splits=splits,
        description=top.get("description", str, "").strip(),
        homepage=top.get("homepage", str, ""),
        citation=top.get("citation", str, "").strip(),
        license=top.get("license", str, ""),
        supervised_keys=(keys[0], keys[1]) if keys else None,
        path=folder,
    )
