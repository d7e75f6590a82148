"""BuilderSpec: everything a builder folder declares, as frozen dataclasses.

`catalog.spec.load` makes one from a folder's builder.yaml and checksums.tsv, checking every
field; the any-dataset builders of the future make one in memory. Prepare, the site and the
CLI read only this object, never the YAML.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.spec.files import CHECKSUMS_FILE, SPEC_FILE

if TYPE_CHECKING:  # annotations only: loading a spec imports the features, naming one does not
    from catalog.features import FeaturesDict

__all__ = [
    "CHECKSUMS_FILE",
    "SPEC_FILE",
    "BuilderSpec",
    "DownloadSpec",
    "FileRef",
    "SplitSpec",
]


@dataclass(frozen=True)
class DownloadSpec:
    """One file a dataset needs. `size`/`sha256` are None until registered in checksums.tsv."""

    name: str
    url: str
    mirrors: tuple[str, ...] = ()
    size: int | None = None
    sha256: str | None = None
    filename: str = ""
    #: The most its archive may extract to (bytes), past catalog's default bomb limits.
    max_extracted_size: int | None = None

    @property
    def urls(self) -> tuple[str, ...]:
        """The builder's url, then its mirrors: the order they are tried in."""
        return (self.url, *self.mirrors)


@dataclass(frozen=True)
class FileRef:
    """A file a split reads: a download, or the member(s) of its archive a path/glob names."""

    download: str
    member: str | None = None


@dataclass(frozen=True)
class SplitSpec:
    """One split: the source format, the file filling each of its roles, the format's options
    (file references among them) and the expected example count."""

    name: str
    format: str
    files: dict[str, FileRef]
    num_examples: int
    options: dict[str, Any] = field(default_factory=dict)


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
    #: Modality and task tags (``image``, ``image-classification``, ``text``, ...).
    tags: tuple[str, ...] = ()
    path: Path | None = field(default=None, compare=False)
    #: The config this spec is (None for a dataset without configs), and every config of
    #: the dataset with its description, in the order builder.yaml gives them.
    config: str | None = None
    config_description: str = ""
    configs: dict[str, str] = field(default_factory=dict)
    default_config: str | None = None

    @property
    def full_name(self) -> str:
        """``name`` or ``name/config``: how the catalog addresses this spec."""
        return f"{self.name}/{self.config}" if self.config else self.name

    def replace(self, **changes: Any) -> BuilderSpec:
        """A copy with some fields changed (e.g. by the builder test harness)."""
        return dataclasses.replace(self, **changes)

    @property
    def fingerprint(self) -> str:
        """A sha256 of everything that decides the prepared bytes: name, config, version,
        features, splits (format, files, options, counts) and downloads (url, size, sha256).
        Recorded in dataset_info.json, so a copy prepared from another builder with the same
        name and version (a cut-down folder of one's own) is never taken for this one's.
        Descriptions, citations and tags do not count: editing them keeps prepared data."""
        content = {
            "name": self.name,
            "config": self.config,
            "version": self.version,
            "features": self.features.to_json(),
            "splits": {
                n: [s.format, s.files, s.options, s.num_examples] for n, s in self.splits.items()
            },
            "downloads": {n: [d.url, d.size, d.sha256] for n, d in self.downloads.items()},
        }
        text = json.dumps(content, sort_keys=True, default=_plain)
        return hashlib.sha256(text.encode()).hexdigest()


def _plain(value: Any) -> Any:
    """JSON for the spec's own value types (file references, paths)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return value.name
    raise TypeError(f"cannot fingerprint {value!r}")
