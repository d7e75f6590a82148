"""A `BuilderSpec` for ``tfds:NAME[/CONFIG][:VERSION]``: TFDS's builder as catalog's source.

`declared_spec` (`catalog.interop.tfds.declared`) is what is known offline, with nothing
downloaded: TFDS's features mapped to catalog's, description, homepage, citation, supervised
keys, and no splits yet.

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
data so every command finds it by name."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path
from typing import Any

from catalog.download import CachedFile, DownloadConfig, DownloadManager, Resource
from catalog.errors import CatalogError, ChecksumError, SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, from_json
from catalog.formats.tfds.downloads import TFDSDownloads, download_name
from catalog.formats.tfds.runtime import TFDSName, load_builder, split_generators
from catalog.interop.tfds.declared import data_dir_name, declared_of, declared_spec
from catalog.spec.model import BuilderSpec, DownloadSpec, FileRef, SplitSpec

__all__ = ["data_dir_name", "declared_spec", "tfds_spec"]


#: The most bytes a checksums file fetched by ``dl_manager.download_checksums`` may hold
#: (crema_d's, the largest TFDS has, is 1.3 MB).
MAX_CHECKSUMS = 64 << 20


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
    spec = declared_of(builder, name)  # features that map: checked before anything is fetched
    where = str(name)
    url_infos = dict(builder.url_infos or {})
    cached: dict[Path, CachedFile] = {}
    with contextlib.ExitStack() as stack:
        manager = stack.enter_context(DownloadManager(config))
        measuring: list[DownloadManager] = []  # for checksums files TFDS registers none for
        measured: list[str] = []  # URLs fetched without TFDS's checksum to verify them

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
            else:
                measured.append(url)
            resource = Resource((url,), size, sha256, _filename(url, registered))
            file = manager.download_all({"file": resource})["file"]
            cached[file.path] = file
            return file.path

        def _measured(url: str) -> Path:
            measured.append(url)
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

        instructions = getattr(builder, "MANUAL_DOWNLOAD_INSTRUCTIONS", None) or ""
        dl = TFDSDownloads(where, fetch, unpack, manager.manual_dir, instructions)
        generators = split_generators(builder, dl, where)
        spec = declared_of(builder, name)  # what _split_generators found (class names)
        unlabeled: set[str] = set()
        counts = {
            split: _count(start(), where, split, spec.features, unlabeled)
            for split, start in generators.items()
        }
        spec = declared_of(builder, name)  # and what the generators found (deep_weeds' names)
        if not measured and not getattr(builder, "MANUAL_DOWNLOAD_INSTRUCTIONS", None):
            _check_recorded(builder, counts, where)  # the real files: TFDS's sizes hold
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
    if dl.manual is not None:  # the units' generators read it again
        options["manual_dir"] = str(dl.manual)
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


def _check_recorded(builder: Any, counts: dict[str, int], where: str) -> None:
    """SourceFormatError when a split's count differs from the size TFDS records for it
    (``builder.info.splits``, where TFDS has one: its dataset_info, which tensorflow-datasets
    4.9.10 reads from a TFDS data dir but no longer fetches from its bucket). Called only when
    every file was verified against TFDS's registered checksums: from other files (a test's,
    ``--register-checksums``, a manual dir) other counts are right."""
    try:
        recorded = {str(k): int(v.num_examples) for k, v in builder.info.splits.items()}
    except (AttributeError, TypeError, ValueError):  # no split info of TFDS's
        return
    for split, count in counts.items():
        wanted = recorded.get(split)
        if wanted and wanted != count:
            raise SourceFormatError(
                f"{where}: split {split!r}: TFDS's generator yielded {count} examples from "
                f"files whose checksums are TFDS's, but TFDS records {wanted} for it: the "
                "builder's code or constants differ from what TFDS measured (patched? another "
                "tensorflow-datasets version?); nothing was prepared"
            )


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
