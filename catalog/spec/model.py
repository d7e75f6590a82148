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

from catalog.errors import SpecError
from catalog.spec.files import CHECKSUMS_FILE, SPEC_FILE

if TYPE_CHECKING:  # annotations only: loading a spec imports the features, naming one does not
    from catalog.features import FeaturesDict, SupervisedKeys

__all__ = [
    "CHECKSUMS_FILE",
    "SPEC_FILE",
    "BuilderSpec",
    "DownloadSpec",
    "FileRef",
    "SplitSpec",
    "images_max_side",
]


@dataclass(frozen=True)
class DownloadSpec:
    """One file a dataset needs. `size`/`sha256` are None until registered in checksums.tsv.

    A local file or folder (a builder's ``path:``, or what `catalog.spec.infer` makes of
    ``catalog prepare PATH``) has its ``file://`` URL as `url` (a folder is checked by its
    manifest's digest, `catalog.download.local_tree`)."""

    name: str
    url: str
    mirrors: tuple[str, ...] = ()
    size: int | None = None
    sha256: str | None = None
    filename: str = ""
    #: The most its archive may extract to (bytes), past catalog's default bomb limits.
    max_extracted_size: int | None = None
    #: A file or folder the user places in the manual dir as `filename`, of which nobody
    #: published a checksum (builder.yaml's ``manual: NAME``; `url` is ``manual:<filename>``):
    #: never registered, measured when prepared (`catalog.download.manual`).
    manual: bool = False
    #: Downloaded by hand from `url` (a login, an agreement) into the manual dir
    #: (``<download dir>/manual``, or ``--manual-dir``) and checked against its registered
    #: size and sha256 like any download (builder.yaml's ``manual: true`` beside ``url``).
    by_hand: bool = False
    #: A manual file (``manual: NAME``) a dataset can do without (builder.yaml's
    #: ``optional: true``): when it is not in the manual dir, the splits reading it are left
    #: out with a note (ImageNet's test tar, as TFDS skips that split).
    optional: bool = False

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
    supervised_keys: SupervisedKeys | None = None
    #: Modality and task tags (``image``, ``image-classification``, ``text``, ...).
    tags: tuple[str, ...] = ()
    path: Path | None = field(default=None, compare=False)
    #: The config this spec is (None for a dataset without configs), and every config of
    #: the dataset with its description, in the order builder.yaml gives them.
    config: str | None = None
    config_description: str = ""
    configs: dict[str, str] = field(default_factory=dict)
    default_config: str | None = None
    #: For a spec with no builder folder: what it was made from, (kind, path or URL), kind
    #: ``files`` or ``croissant``; stored with the prepared data (`catalog.spec.stored`).
    origin: tuple[str, str] | None = field(default=None, compare=False)
    #: The fingerprint of the whole spec this one was cut from by leaving out the splits of
    #: an absent optional manual file (`catalog.prepare.needed.without_absent`): its prepared
    #: copy is the whole builder's, with fewer splits.
    whole: str | None = field(default=None, compare=False)

    @property
    def full_name(self) -> str:
        """``name`` or ``name/config``: how the catalog addresses this spec."""
        return f"{self.name}/{self.config}" if self.config else self.name

    @property
    def image_max_side(self) -> int | None:
        """The longest side images are stored at (``--image-max-side``), or None at full size.

        Set on the image features themselves (`with_image_max_side`, or in builder.yaml as
        ``image: {type: Image, max_side: 256}``), so it is in the fingerprint and in
        dataset_info.json."""
        return images_max_side(self.features)

    @property
    def version_dir(self) -> str:
        """The folder the prepared copy lives in under ``<data_dir>/<name>[/<config>]``: the
        version, ``3.0.1``, or for images stored smaller ``3.0.1-max256``. A downscaled copy
        is a variant of the version beside the full-size one: neither is ever read, reused or
        replaced for the other."""
        side = self.image_max_side
        return self.version if side is None else f"{self.version}-max{side}"

    def with_image_max_side(self, max_side: int | None) -> BuilderSpec:
        """This spec with every image feature stored at most `max_side` pixels on its longer
        side (None: at full size). SpecError when it has no image feature or the value is
        not a positive int."""
        if max_side is not None and (
            isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 1
        ):
            raise SpecError(f"image_max_side must be a positive int (pixels), got {max_side!r}")
        data = self.features.to_json()
        nodes = _images(data)
        if not nodes:
            raise SpecError(
                f"{self.full_name} has no image feature: image_max_side ({max_side}) applies to "
                "image features only"
            )
        for node in nodes:
            node["shape"] = node.pop("source_shape", node["shape"])
            node.pop("max_side", None)
            if max_side is None:
                node.pop("quality", None)  # a quality the builder gives for its images stays
            else:
                node["max_side"] = max_side
        from catalog.features import FeaturesDict, from_json  # only when a size is asked for

        features = from_json(data)
        assert isinstance(features, FeaturesDict)
        return self.replace(features=features)

    def replace(self, **changes: Any) -> BuilderSpec:
        """A copy with some fields changed (e.g. by the builder test harness)."""
        return dataclasses.replace(self, **changes)

    @property
    def fingerprint(self) -> str:
        """A sha256 of everything that decides the prepared bytes: name, config, version,
        features, splits (format, files, options, counts) and downloads (url, size, sha256).
        Recorded in dataset_info.json, so a copy prepared from another builder with the same
        name and version (a cut-down folder of one's own) is never taken for this one's.
        Descriptions, citations and tags do not count: editing them keeps prepared data.
        A spec with splits left out (`whole`) has the whole spec's."""
        if self.whole is not None:
            return self.whole
        # Imported here: the readers are loaded with the spec's splits anyway (catalog.spec.load).
        from catalog.formats import FORMATS

        def counted(split: SplitSpec) -> dict[str, Any]:
            """The options that count: not those added later and left at their default."""
            declared = FORMATS[split.format].options
            return {
                k: v
                for k, v in split.options.items()
                if declared[k].counted_at_default or v != declared[k].default
            }

        content = {
            "name": self.name,
            "config": self.config,
            "version": self.version,
            "features": self.features.to_json(),
            "splits": {
                n: [s.format, s.files, counted(s), s.num_examples] for n, s in self.splits.items()
            },
            "downloads": {n: [d.url, d.size, d.sha256] for n, d in self.downloads.items()},
        }
        text = json.dumps(content, sort_keys=True, default=_plain)
        return hashlib.sha256(text.encode()).hexdigest()


def images_max_side(features: FeaturesDict) -> int | None:
    """The longest side the image features store (the largest `Image.max_side` among
    them), or None when every image is stored at full size."""
    sides = [n["max_side"] for n in _images(features.to_json()) if n.get("max_side")]
    return max(sides) if sides else None


def _images(data: Any) -> list[dict[str, Any]]:
    """The Image features' JSON in a features JSON, wherever they are nested."""
    if isinstance(data, dict):
        found = [data] if data.get("type") == "Image" else []
        return found + [n for value in data.values() for n in _images(value)]
    if isinstance(data, list):
        return [n for value in data for n in _images(value)]
    return []


def _plain(value: Any) -> Any:
    """JSON for the spec's own value types (file references, paths)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return value.name
    raise TypeError(f"cannot fingerprint {value!r}")
