"""DatasetInfo: what is known about a dataset, from its spec and, once prepared, from disk.

``dataset_info.json`` beside the shards is this object as JSON: the features, the splits with
their shards (file, example count, bytes, sha256), the downloads' checksums and the record
format version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.codec import RECORD_FORMAT
from catalog.errors import SpecError
from catalog.features import FeaturesDict
from catalog.spec import BuilderSpec

__all__ = ["INFO_FILE", "DatasetInfo", "ShardInfo", "SplitInfo"]

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
    downloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    record_format: dict[str, Any] = field(default_factory=lambda: dict(RECORD_FORMAT))

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
            downloads={
                d.name: {"url": d.url, "size": d.size, "sha256": d.sha256}
                for d in spec.downloads.values()
            },
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "homepage": self.homepage,
            "citation": self.citation,
            "license": self.license,
            "features": self.features.to_json(),
            "supervised_keys": list(self.supervised_keys) if self.supervised_keys else None,
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
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DatasetInfo:
        features = FeaturesDict.from_json(data["features"])
        splits = {
            name: SplitInfo(
                name, s["num_examples"], tuple(ShardInfo(**shard) for shard in s["shards"])
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
            downloads=data.get("downloads", {}),
            record_format=data["record_format"],
        )

    def write(self, folder: Path) -> None:
        (folder / INFO_FILE).write_text(json.dumps(self.to_json(), indent=2) + "\n", "utf-8")

    @classmethod
    def read(cls, folder: Path) -> DatasetInfo:
        path = folder / INFO_FILE
        try:
            return cls.from_json(json.loads(path.read_text("utf-8")))
        except (ValueError, KeyError, TypeError) as error:
            raise SpecError(
                f"{path} is unreadable ({type(error).__name__}: {error}); prepare the dataset "
                "again with --overwrite"
            ) from None
