"""DatasetInfo: what is known about a dataset, from its spec and, once prepared, from disk.

``dataset_info.json`` beside the shards is this object as JSON: the features, the splits with
their shards (file, example count, bytes, sha256), the downloads' checksums and the record
format version.

`format_info` renders it for people: ``print(info)`` and ``catalog info`` both use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog._util.units import format_size
from catalog.errors import SpecError
from catalog.features import Feature, FeaturesDict, Sequence, from_json
from catalog.features.codec import RECORD_FORMAT
from catalog.spec.builder_spec import BuilderSpec, supervised_keys_problem
from catalog.storage.shards import WRITER_OPTIONS

__all__ = [
    "INFO_FILE",
    "DatasetInfo",
    "FeatureRow",
    "Location",
    "ShardInfo",
    "SplitInfo",
    "disk_usage",
    "feature_rows",
    "format_info",
    "reusable",
]

INFO_FILE = "dataset_info.json"


@dataclass(frozen=True)
class ShardInfo:
    """One ArrayRecord file of a split."""

    file: str
    num_examples: int
    num_bytes: int
    sha256: str


@dataclass(frozen=True)
class SplitInfo:
    """A split: its example count and, once prepared, its shards."""

    name: str
    num_examples: int
    shards: tuple[ShardInfo, ...] = ()

    @property
    def num_bytes(self) -> int:
        return sum(s.num_bytes for s in self.shards)


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of one dataset version."""

    name: str
    version: str
    features: FeaturesDict
    splits: dict[str, SplitInfo]
    description: str = ""
    homepage: str = ""
    citation: str = ""
    license: str = ""
    supervised_keys: tuple[str, str] | None = None
    tags: tuple[str, ...] = ()
    downloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    record_format: dict[str, Any] = field(default_factory=lambda: dict(RECORD_FORMAT))
    config: str | None = None
    config_description: str = ""
    #: The options the shards were written with (None: not recorded, an older catalog's zstd).
    shard_options: str | None = None
    #: The builder it was prepared from: its folder and `BuilderSpec.fingerprint` (None: not
    #: recorded by an older catalog).
    builder_path: str = ""
    fingerprint: str | None = None

    @property
    def full_name(self) -> str:
        """``name`` or ``name/config``."""
        return f"{self.name}/{self.config}" if self.config else self.name

    def __post_init__(self) -> None:
        if self.supervised_keys is not None:
            problem = supervised_keys_problem(self.supervised_keys, self.features)
            if problem:
                raise SpecError(f"{self.full_name} {self.version}: supervised_keys: {problem}")

    @property
    def download_size(self) -> int:
        """Bytes to download: the sum of the registered download sizes."""
        return sum(d.get("size") or 0 for d in self.downloads.values())

    def __str__(self) -> str:
        return format_info(self)

    @classmethod
    def from_spec(cls, spec: BuilderSpec) -> DatasetInfo:
        """The info a spec declares (example counts as expected, no shards yet)."""
        return cls(
            name=spec.name,
            version=spec.version,
            features=spec.features,
            splits={n: SplitInfo(n, s.num_examples) for n, s in spec.splits.items()},
            description=spec.description,
            homepage=spec.homepage,
            citation=spec.citation,
            license=spec.license,
            supervised_keys=spec.supervised_keys,
            tags=spec.tags,
            downloads={
                d.name: {"url": d.url, "size": d.size, "sha256": d.sha256}
                for d in spec.downloads.values()
            },
            config=spec.config,
            config_description=spec.config_description,
            builder_path=str(spec.path or ""),
            fingerprint=spec.fingerprint,
        )

    def foreign_to(self, spec: BuilderSpec, folder: Path) -> str | None:
        """Why the copy this info describes (in `folder`) was not prepared from `spec`, or None
        when it was (or an older catalog did not record it)."""
        if self.fingerprint is None or self.fingerprint == spec.fingerprint:
            return None
        here = str(spec.path or "")
        origin = (
            f"another version of the builder in {here} (its features, splits or downloads differ)"
            if self.builder_path == here
            else f"another builder ({self.builder_path or 'not recorded'}), not {here}"
        )
        return f"{folder} holds {self.full_name} {self.version} prepared from {origin}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": self.config,
            "version": self.version,
            "description": self.description,
            "config_description": self.config_description,
            "homepage": self.homepage,
            "citation": self.citation,
            "license": self.license,
            "features": self.features.to_json(),
            "supervised_keys": list(self.supervised_keys) if self.supervised_keys else None,
            "tags": list(self.tags),
            "splits": {
                name: {
                    "num_examples": s.num_examples,
                    "num_bytes": s.num_bytes,
                    "shards": [vars(shard) for shard in s.shards],
                }
                for name, s in self.splits.items()
            },
            "downloads": self.downloads,
            "record_format": self.record_format,
            "shard_options": self.shard_options,
            "builder": {"path": self.builder_path, "fingerprint": self.fingerprint},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DatasetInfo:
        features = from_json(data["features"])
        if not isinstance(features, FeaturesDict):
            raise TypeError(f"features must be a FeaturesDict, got {features!r}")
        splits = {
            name: SplitInfo(
                name,
                _count(s["num_examples"], f"splits.{name}.num_examples"),
                tuple(
                    _shard(shard, f"splits.{name}.shards[{i}]")
                    for i, shard in enumerate(s["shards"])
                ),
            )
            for name, s in data["splits"].items()
        }
        keys = data.get("supervised_keys")
        return cls(
            name=data["name"],
            version=data["version"],
            features=features,
            splits=splits,
            description=data.get("description", ""),
            homepage=data.get("homepage", ""),
            citation=data.get("citation", ""),
            license=data.get("license", ""),
            supervised_keys=(keys[0], keys[1]) if keys else None,
            tags=tuple(data.get("tags", ())),
            downloads=data.get("downloads", {}),
            record_format=data["record_format"],
            config=data.get("config"),
            config_description=data.get("config_description", ""),
            shard_options=data.get("shard_options"),
            builder_path=(data.get("builder") or {}).get("path", ""),
            fingerprint=(data.get("builder") or {}).get("fingerprint"),
        )

    def write(self, folder: Path) -> None:
        (folder / INFO_FILE).write_text(json.dumps(self.to_json(), indent=2) + "\n", "utf-8")

    @classmethod
    def read(cls, folder: Path) -> DatasetInfo:
        path = folder / INFO_FILE
        try:
            return cls.from_json(json.loads(path.read_text("utf-8")))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise SpecError(
                f"{path} is unreadable ({type(error).__name__}: {error}); prepare the dataset "
                "again with --overwrite"
            ) from None


def reusable(
    spec: BuilderSpec, target: Path, max_examples_per_split: int | None = None
) -> DatasetInfo | None:
    """The info of the copy prepared in `target` if it holds what is asked for, else None.

    It must have been prepared from `spec` (`BuilderSpec.fingerprint`), in shards of today's
    format (`catalog.storage.shards.WRITER_OPTIONS`; older copies are prepared again), with every
    shard present at its recorded size. Its split counts tell the rest: a full copy (every
    split as the spec expects) serves any request; a copy prepared with
    ``max_examples_per_split=N`` (min(N, expected) per split) serves only the same limit, so
    preparing without one replaces it.
    """
    if not (target / INFO_FILE).is_file():
        return None
    info = DatasetInfo.read(target)
    if info.shard_options != WRITER_OPTIONS or info.foreign_to(spec, target):
        return None
    for split in info.splits.values():
        for shard in split.shards:
            try:
                if (target / shard.file).stat().st_size != shard.num_bytes:
                    return None
            except OSError:
                return None
    counts = {name: s.num_examples for name, s in info.splits.items()}
    full = {name: s.num_examples for name, s in spec.splits.items()}
    limit = max_examples_per_split
    if counts == full or (
        limit is not None and counts == {n: min(limit, c) for n, c in full.items()}
    ):
        return info
    return None


def _count(value: Any, where: str) -> int:
    """A count read from dataset_info.json: an int >= 0 (not a bool, a string, a float)."""
    if type(value) is not int or value < 0:
        raise TypeError(f"{where} must be a whole number >= 0, got {value!r}")
    return value


def _shard(data: Any, where: str) -> ShardInfo:
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object, got {data!r}")
    file, sha256 = data.get("file"), data.get("sha256")
    if not isinstance(file, str) or "/" in file or file in ("", ".", ".."):
        raise TypeError(f"{where}.file must be a file name, got {file!r}")
    if not isinstance(sha256, str):
        raise TypeError(f"{where}.sha256 must be a string, got {sha256!r}")
    return ShardInfo(
        file,
        _count(data.get("num_examples"), f"{where}.num_examples"),
        _count(data.get("num_bytes"), f"{where}.num_bytes"),
        sha256,
    )


@dataclass(frozen=True)
class Location:
    """Where a dataset version is prepared, or would be, and how much it takes on disk."""

    path: Path
    prepared: bool
    num_bytes: int = 0


def disk_usage(folder: Path) -> int:
    """Bytes in the files under `folder` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while walking
                total += (Path(root) / name).stat().st_size
    return total


_WIDTH = 96  # text is wrapped to this many columns


def format_info(
    info: DatasetInfo,
    location: Location | None = None,
    *,
    configs: Mapping[str, str] | None = None,
    default_config: str | None = None,
) -> str:
    """`info` for people: metadata, a features tree, splits, sizes and the citation.

    With `location`, also whether (and where) the dataset is prepared; with `configs` (name ->
    description), the dataset's configs, `default_config` marked. ``print(info)`` and
    ``catalog info`` show this text.
    """
    lines = [f"{info.full_name} {info.version}"]
    paragraphs = info.description.split("\n\n")
    if info.config_description:
        paragraphs.append(f"Config {info.config}: {info.config_description}")
    for paragraph in paragraphs:
        if paragraph.strip():
            text = " ".join(paragraph.split())
            lines += ["", textwrap.fill(text, _WIDTH, initial_indent="  ", subsequent_indent="  ")]
    fields = {"homepage": info.homepage, "license": info.license, "tags": ", ".join(info.tags)}
    if info.supervised_keys:
        fields["supervised keys"] = f"({', '.join(info.supervised_keys)})"
    if info.downloads:
        files = len(info.downloads)
        unknown = sum(1 for d in info.downloads.values() if not d.get("size"))
        fields["download size"] = (
            f"{format_size(info.download_size)} ({files} file{'s' if files != 1 else ''}"
            + (f", {unknown} of unknown size)" if unknown else ")")
        )
    if location is not None:
        fields["prepared"] = (
            f"yes, {format_size(location.num_bytes)} in {location.path}"
            if location.prepared
            else f"no (would be at {location.path})"
        )
    fields = {name: value for name, value in fields.items() if value}
    width = max(map(len, fields), default=0) + 2
    lines.append("")
    lines += [f"{f'{name}:':<{width}}{value}" for name, value in fields.items()]
    tree = feature_rows(info.features)
    lines += ["", "features:", *_table(("  " * r.depth + r.name, *r.columns) for r in tree)]
    split_rows = [
        (name, f"{s.num_examples:,} examples", format_size(s.num_bytes) if s.shards else "")
        for name, s in info.splits.items()
    ]
    lines += ["", "splits:", *_table(split_rows)]
    if configs:
        rows = [
            (name, "(default)" if name == default_config else "", description)
            for name, description in configs.items()
        ]
        lines += ["", "configs:", *_table(rows)]
    if info.citation:
        lines += ["", "citation:", textwrap.indent(info.citation, "  ")]
    return "\n".join(lines) + "\n"


def _type_label(feature: Feature) -> str:
    """``Image``, ``Sequence(ClassLabel)``; a Sequence of a dict is just ``Sequence``."""
    if isinstance(feature, Sequence) and not isinstance(feature.feature, FeaturesDict):
        return f"Sequence({_type_label(feature.feature)})"
    return feature.type_name


@dataclass(frozen=True)
class FeatureRow:
    """One line of the features tree: a feature `depth` levels deep, named `name`, its type
    label (``Image``, ``Sequence(ClassLabel)``), shape, dtype and details (its describe())."""

    depth: int
    name: str
    type: str
    shape: str
    dtype: str
    details: str

    @property
    def columns(self) -> tuple[str, str, str, str]:
        return self.type, self.shape, self.dtype, self.details


def feature_rows(
    features: Mapping[str, Feature], depth: int = 0, lead: tuple[int | None, ...] = ()
) -> Iterator[FeatureRow]:
    """The features tree, depth first: nested features follow theirs, one level deeper.

    The features of a Sequence of a dict show the shape they decode to (one more dimension).
    ``catalog info`` and ``catalog site`` both show these rows.
    """
    for name, feature in features.items():
        element, dims = feature, lead
        while isinstance(element, Sequence):
            dims = (*dims, element.length)
            element = element.feature
        if isinstance(element, FeaturesDict):
            yield FeatureRow(depth, name, _type_label(feature), "", "", "")
            yield from feature_rows(element, depth + 1, dims)
        else:
            shape = "" if element.shape is None else str((*dims, *element.shape))
            yield FeatureRow(
                depth,
                name,
                _type_label(feature),
                shape,
                element.dtype_name,
                element.describe(),
            )


def _table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Rows as left-aligned columns two spaces apart, indented by two."""
    rows = list(rows)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
