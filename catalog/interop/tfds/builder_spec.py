"""A `BuilderSpec` for ``tfds:NAME[/CONFIG][:VERSION]``: TFDS's builder as catalog's source.

`declared_spec` is what is known offline, with nothing downloaded: TFDS's features mapped to
catalog's (through `catalog.interop.tfds.features`, the same mapping as TFDS directories
use: TFDS's ``features.json`` and labels files, written by TFDS into a temporary folder),
description, homepage, citation, supervised keys, and no splits yet.

`tfds_spec` completes it as `catalog.interop.croissant.spec` does for a Croissant file: the
builder's ``_split_generators`` runs with catalog's download manager
(`catalog.formats.tfds.downloads`: cache, mirrors, offline, resume, deadlines), every file
checked against the size and sha256 TFDS registers for its URL, or that a checksums file
the builder fetches with ``dl_manager.download_checksums`` lists (a URL registered nowhere
is refused unless the download config registers checksums, then it is measured; the
checksums file itself is measured, as TFDS fetches it unverified too); each
split's examples are counted by running its generator once (TFDS's split sizes come from
what its generator yields too). The spec's splits read with the ``tfds`` source format
(`catalog.formats.tfds.reader`), its downloads are the files fetched: from there on it is a
spec like any other (sharded, parallel, resumable, Beam, publish), stored with the prepared
data so every command finds it by name.

A prepared ``tfds:NAME`` lives in the data dir as ``tfds.NAME`` (`data_dir_name`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from catalog.download import CachedFile, DownloadConfig, DownloadManager, Resource
from catalog.errors import CatalogError, ChecksumError, SourceFormatError, SpecError
from catalog.features import ClassLabel, FeaturesDict, from_json, supervised_keys_problem
from catalog.formats.tfds.downloads import TFDSDownloads, download_name
from catalog.formats.tfds.runtime import TFDSName, load_builder, split_generators
from catalog.formats.tfds.standin import running
from catalog.interop.tfds.features import from_tfds_json
from catalog.spec.model import BuilderSpec, DownloadSpec, FileRef, SplitSpec

__all__ = ["data_dir_name", "declared_spec", "tfds_spec"]


def data_dir_name(name: str) -> str:
    """The dataset name a prepared ``tfds:NAME`` has in the data dir.

    >>> data_dir_name("mnist")
    'tfds.mnist'
    """
    return f"tfds.{name}"


def _features(builder: Any, where: str) -> FeaturesDict:
    """TFDS's features as catalog's, through the features.json mapping."""
    with tempfile.TemporaryDirectory(prefix="catalog-tfds-features-") as folder, running(where):
        builder.info.features.save_config(folder)
        data = json.loads((Path(folder) / "features.json").read_text("utf-8"))
        features = from_tfds_json(data, Path(folder))
    if not isinstance(features, FeaturesDict):
        raise SpecError(f"{where}: TFDS's top feature is not a FeaturesDict")
    return features


#: The most bytes a checksums file fetched by ``dl_manager.download_checksums`` may hold
#: (crema_d's, the largest TFDS has, is 1.3 MB).
MAX_CHECKSUMS = 64 << 20


def declared_spec(name: TFDSName) -> BuilderSpec:
    """What is known of `name` offline (see the module docstring); no splits."""
    return _declared(load_builder(name), name)


def _declared(builder: Any, name: TFDSName) -> BuilderSpec:
    """`declared_spec` of a builder object (after its ``_split_generators`` ran, the class
    names some builders read from their files then, as CIFAR's, are in its features)."""
    where = str(name)
    info = builder.info
    features = _features(builder, where)
    config = builder.builder_config.name if builder.builder_config is not None else None
    configs = {c.name: c.description or "" for c in getattr(builder, "BUILDER_CONFIGS", ()) or ()}
    return BuilderSpec(
        name=data_dir_name(name.name),
        version=str(builder.version),
        features=features,
        downloads={},
        splits={},
        description=info.description or "",
        homepage=info.homepage or "",
        citation=info.citation or "",
        license=getattr(info, "license", "") or "",
        supervised_keys=_supervised(info.supervised_keys, features),
        tags=("tfds",),
        config=config,
        configs=configs,
        default_config=next(iter(configs), None),
        origin=("tfds", str(TFDSName(name.name, config, str(builder.version)))),
    )


def _supervised(keys: Any, features: FeaturesDict) -> Any:
    """TFDS's supervised keys as catalog's ``(input, target)``: two feature names, the input
    may be a dict of names -> feature names (criteo) or the target itself (lm1b); TFDS's
    other forms (a weight key, nested tuples) have no catalog equivalent: None."""
    if not isinstance(keys, tuple) or len(keys) != 2:
        return None
    inputs = dict(keys[0]) if isinstance(keys[0], dict) else keys[0]
    if supervised_keys_problem((inputs, keys[1]), features) is not None:
        return None
    return (inputs, keys[1])


def _filename(url: str, registered: Any) -> str:
    """The file name a URL's download gets: TFDS's registered one, else the URL's last part."""
    name = getattr(registered, "filename", None) or url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^\w.+-]", "_", name)[:200]
    return name if name not in ("", ".", "..") else "download"


def tfds_spec(name: TFDSName, config: DownloadConfig) -> BuilderSpec:
    """The complete spec of `name`: files fetched and verified, examples counted (see the
    module docstring). ChecksumError for a URL TFDS registers no checksum for (unless
    `config` registers checksums); a download's failure as catalog's download layer says."""
    builder = load_builder(name)
    spec = _declared(builder, name)  # features that map: checked before anything is fetched
    where = str(name)
    url_infos = dict(builder.url_infos or {})
    cached: dict[Path, CachedFile] = {}
    with contextlib.ExitStack() as stack:
        manager = stack.enter_context(DownloadManager(config))
        measuring: list[DownloadManager] = []  # for checksums files TFDS registers none for

        def fetch(url: str) -> Path:
            registered = dl.url_infos.get(url) or url_infos.get(url)  # as TFDS: file last
            if registered is None and not config.register_checksums:
                if url in dl.checksums_files:  # TFDS fetches it unverified: measured
                    return _measured(url)
                raise ChecksumError(
                    f"{where}: TFDS registers no size and sha256 for {url}; prepare with "
                    "--register-checksums to measure it instead (it is then not verified)"
                )
            size = sha256 = None
            if registered is not None and not config.register_checksums:
                size, sha256 = int(registered.size), str(registered.checksum)
            resource = Resource((url,), size, sha256, _filename(url, registered))
            file = manager.download_all({"file": resource})["file"]
            cached[file.path] = file
            return file.path

        def _measured(url: str) -> Path:
            if not measuring:
                measuring_config = dataclasses.replace(config, register_checksums=True)
                measuring.append(stack.enter_context(DownloadManager(measuring_config)))
            wanted = Resource((url,), None, None, _filename(url, None), max_size=MAX_CHECKSUMS)
            file = measuring[0].download(wanted)
            cached[file.path] = file
            return file.path

        def unpack(path: Path) -> Path:
            file = cached.get(path)
            if file is None:  # a file inside an extracted archive: extracted beside it
                from catalog.download.extract import extract

                return extract(path, manager.download_dir / "extracted")
            return manager.extract(file)

        dl = TFDSDownloads(where, fetch, unpack, manager.manual_dir)
        generators = split_generators(builder, dl, where)
        spec = _declared(builder, name)  # what _split_generators found (class names)
        unlabeled: set[str] = set()
        counts = {
            split: _count(start(), where, split, spec.features, unlabeled)
            for split, start in generators.items()
        }
        spec = _declared(builder, name)  # and what the generators found (deep_weeds' names)
    files = {download_name(url): FileRef(download_name(url)) for url in dl.fetched}
    extracted = {
        download_name(url): FileRef(download_name(url), ".")
        for url, path in dl.fetched.items()
        if path in dl.extracted
    }
    downloads = {}
    for url, path in dl.fetched.items():
        file = cached[path]
        downloads[download_name(url)] = DownloadSpec(
            download_name(url), url, size=file.size, sha256=file.sha256, filename=file.filename
        )
    options = {
        "builder": name.name,
        "config": spec.config or "",
        "version": spec.version,
        "files": files,
        "extracted": extracted,
        "feature_names": sorted(spec.features),
    }
    audio = _feature_paths(builder.info.features, "Audio")
    if audio:
        options["audio_features"] = audio
    translations = _feature_paths(builder.info.features, "TranslationVariableLanguages")
    if translations:
        options["translation_features"] = translations
    splits = {
        split: SplitSpec(split, "tfds", {}, count, {**options, "split": split})
        for split, count in counts.items()
    }
    features = _allow_unlabeled(spec.features, unlabeled) if unlabeled else spec.features
    return spec.replace(features=features, downloads=downloads, splits=splits)


def _count(
    examples: Any, where: str, split: str, features: FeaturesDict, unlabeled: set[str]
) -> int:
    """How many examples a split's generator yields (each one read, none kept); the
    ClassLabel features given -1 (no label, which TFDS's ClassLabel takes) go into
    `unlabeled`, by path."""
    labels = _class_labels(features)
    count = 0
    try:
        for _, example in examples:
            for path in labels - unlabeled:
                if _is_unlabeled(_at(example, path)):
                    unlabeled.add(path)
            count += 1
    except CatalogError:
        raise
    except Exception as error:  # TFDS's code: whatever it raises is this split's failure
        raise SourceFormatError(
            f"{where}: split {split!r}, after example {count}: TFDS's generator failed: "
            f"{type(error).__name__}: {error}"
        ) from None
    return count


def _class_labels(features: FeaturesDict) -> set[str]:
    """The paths (``a/b``) of the ClassLabel features directly in `features` or in its
    nested FeaturesDicts (not inside Sequences)."""
    found = set()
    for name, feature in features.items():
        if isinstance(feature, ClassLabel):
            found.add(name)
        elif isinstance(feature, FeaturesDict):
            found.update(f"{name}/{inner}" for inner in _class_labels(feature))
    return found


def _at(example: Any, path: str) -> Any:
    for part in path.split("/"):
        if not isinstance(example, dict):
            return None
        example = example.get(part)
    return example


def _is_unlabeled(value: Any) -> bool:
    return not isinstance(value, (bool, str, bytes)) and value is not None and value == -1


def _allow_unlabeled(features: FeaturesDict, paths: set[str]) -> FeaturesDict:
    """`features` with the ClassLabels at `paths` taking -1 (no label)."""
    data = features.to_json()
    for path in paths:
        node = data
        for part in path.split("/"):
            node = node["features"][part]
        node["allow_unlabeled"] = True
    rebuilt = from_json(data)
    assert isinstance(rebuilt, FeaturesDict)
    return rebuilt


def _feature_paths(feature: Any, kind: str, path: str = "") -> list[str]:
    """The paths (``a/b``) of TFDS features of class `kind` in TFDS's FeaturesDict `feature`
    (not in Sequences): Audio, whose values may be audio files, TranslationVariableLanguages,
    whose values are a dict of language -> text(s) (`catalog.formats.tfds.values`)."""
    if type(feature).__name__ == kind:
        return [path]
    if type(feature).__name__ == "FeaturesDict":
        return [
            found
            for name, child in feature.items()
            for found in _feature_paths(child, kind, f"{path}/{name}" if path else name)
        ]
    return []
