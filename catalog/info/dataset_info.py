"""DatasetInfo: what is known about a dataset version, and its dataset_info.json.

``dataset_info.json`` beside the shards is this object as JSON: the features, the splits with
their shards (file, example count, bytes, sha256), the downloads' checksums and the record
format version.

`catalog.info.text` renders it for people: ``print(info)`` and ``catalog info`` both use it.
How an info is made from a builder spec, and whether a prepared copy matches its spec, is the
prepare side's business (`catalog.prepare.reuse`): this module knows no spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog._util.about import about_fields
from catalog.errors import SpecError
from catalog.features import FeaturesDict, SupervisedKeys, from_json, supervised_keys_problem
from catalog.features.codec import RECORD_FORMAT
from catalog.info.splits import SplitArg, resolve, split_text
from catalog.info.text import format_info

__all__ = [
    "INFO_FILE",
    "DatasetInfo",
    "FileInstruction",
    "ShardInfo",
    "SplitDict",
    "SplitInfo",
    "SubSplitInfo",
]

INFO_FILE = "dataset_info.json"


@dataclass(frozen=True)
class ShardInfo:
    """One ArrayRecord file of a split.

    Args:
        file: the shard's file name (``<name>-<split>.array_record-00000-of-00001``).
        num_examples: its record count.
        num_bytes: its size.
        sha256: its sha256, hex.

    Raises:
        Nothing: a plain record (dataset_info.json's types are checked when it is read).
    """

    file: str
    num_examples: int
    num_bytes: int
    sha256: str


@dataclass(frozen=True)
class SplitInfo:
    """A split: its example count and, once prepared, its shards.

    Args:
        name: the split's name, or the spec it was resolved from.
        num_examples: its example count.
        shards: its `ShardInfo` list, empty until prepared.

    Raises:
        Nothing: a plain record (dataset_info.json's types are checked when it is read).
    """

    name: str
    num_examples: int
    shards: tuple[ShardInfo, ...] = ()

    @property
    def num_bytes(self) -> int:
        return sum(s.num_bytes for s in self.shards)


@dataclass(frozen=True)
class FileInstruction:
    """Which examples of one shard file a split spec reads: `take` of them after `skip`."""

    file: str
    skip: int
    take: int


@dataclass(frozen=True)
class SubSplitInfo:
    """What a split spec selects (``info.splits["train[:10%]"]``): its example count and, once
    the dataset is prepared, the examples of each shard it reads (`file_instructions`)."""

    name: str
    num_examples: int
    file_instructions: tuple[FileInstruction, ...] = ()

    @property
    def num_shards(self) -> int:
        return len(self.file_instructions)

    @property
    def shard_lengths(self) -> list[int]:
        """Examples read from each shard the spec touches, in order."""
        return [f.take for f in self.file_instructions]


class SplitDict(dict[str, SplitInfo]):
    """`DatasetInfo.splits`: the splits by name, and what any split spec selects.

    ``splits["train"]`` is the `SplitInfo`; ``splits["train[:10%]"]``, ``splits["all"]`` or
    ``splits[ReadInstruction(...)]`` is a `SubSplitInfo` of the examples that spec reads, as
    `catalog.info.splits` resolves it (shard bounds need the shards of a prepared dataset).
    """

    def __missing__(self, key: SplitArg) -> SubSplitInfo:
        pieces = resolve(key, self.sizes())
        files = []
        for name, rows in pieces:
            start = 0
            for shard in self[name].shards:
                stop = start + shard.num_examples
                skip, end = max(rows.start, start), min(rows.stop, stop)
                if end > skip:
                    files.append(FileInstruction(shard.file, skip - start, end - skip))
                start = stop
        return SubSplitInfo(split_text(key), sum(len(r) for _, r in pieces), tuple(files))

    def sizes(self) -> dict[str, int | tuple[int, ...]]:
        """Each split's shard lengths (its example count while it has no shards)."""
        return {
            name: tuple(s.num_examples for s in info.shards) or info.num_examples
            for name, info in self.items()
        }

    @property
    def total_num_examples(self) -> int:
        return sum(s.num_examples for s in self.values())


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of one dataset version.

    What ``dataset_info.json`` holds, and ``catalog info`` prints: ``print(info)``.

    Args:
        name: the dataset's name.
        version: its version (``"3.0.1"``).
        features: the `FeaturesDict` of an example.
        splits: `SplitInfo` per split name; ``info.splits["train[:10%]"]`` resolves a spec.
        description: what the data is.
        homepage: its home page URL.
        citation: BibTeX.
        license: its license.
        supervised_keys: ``(input, target)`` feature names, or None.
        tags: search tags (``image-classification``).
        downloads: per download name, its ``url``, ``size`` and ``sha256`` (and ``manual:
            true`` for a file the user downloads by hand into the manual dir); a file placed
            by hand with no published checksum: ``manual`` (its name), ``size``, ``sha256``
            (as found) and ``verified: false`` (`catalog.download.manual`).
        record_format: how the records are stored (the format's name and version).
        config: the config's name, None without configs.
        config_description: what the config is.
        shard_options: the array_record writer options of the shards.
        builder_path: the builder folder it was prepared from.
        fingerprint: a hash of the spec it was prepared from.
        source: for a dataset prepared from local files or a Croissant file, its spec and
            where it came from (`catalog.spec.stored`), so it is found by name; else None.

    Raises:
        SplitError: (``splits[spec]``) a split spec that is malformed or names no split.
    """

    name: str
    version: str
    features: FeaturesDict
    splits: dict[str, SplitInfo]  #: a `SplitDict` (a dict given here becomes one)
    description: str = ""
    homepage: str = ""
    citation: str = ""
    license: str = ""
    supervised_keys: SupervisedKeys | None = None
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
    #: What a dataset with no builder folder was prepared from (local files, a Croissant
    #: file): its spec as JSON and where it came from (`catalog.spec.stored`); None otherwise.
    source: dict[str, Any] | None = None

    @property
    def full_name(self) -> str:
        """``name`` or ``name/config``."""
        return f"{self.name}/{self.config}" if self.config else self.name

    def __post_init__(self) -> None:
        if not isinstance(self.splits, SplitDict):
            object.__setattr__(self, "splits", SplitDict(self.splits))
        if self.supervised_keys is not None:
            problem = supervised_keys_problem(self.supervised_keys, self.features)
            if problem:
                raise SpecError(f"{self.full_name} {self.version}: supervised_keys: {problem}")

    @property
    def download_size(self) -> int:
        """Bytes to download: the sum of the registered download sizes."""
        return sum(d.get("size") or 0 for d in self.downloads.values())

    @property
    def manual_download_size(self) -> int:
        """The bytes of `download_size` the user downloads by hand (into the manual dir)."""
        return sum(d.get("size") or 0 for d in self.downloads.values() if d.get("manual") is True)

    def __str__(self) -> str:
        return format_info(self)

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
            **({"source": self.source} if self.source is not None else {}),
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
        return cls(
            name=data["name"],
            version=data["version"],
            features=features,
            splits=splits,
            **about_fields(data),
            downloads=data.get("downloads", {}),
            record_format=data["record_format"],
            config=data.get("config"),
            config_description=data.get("config_description", ""),
            shard_options=data.get("shard_options"),
            builder_path=(data.get("builder") or {}).get("path", ""),
            fingerprint=(data.get("builder") or {}).get("fingerprint"),
            source=data.get("source") if isinstance(data.get("source"), dict) else None,
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
