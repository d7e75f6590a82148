"""Preparation: downloads -> source-format reader -> features -> ArrayRecord shards.

Everything is written into ``<version>.incomplete-XXXX`` beside the target and renamed into
place only when every split and ``dataset_info.json`` are complete, under a file lock, so a
crash or a second process never exposes half a dataset; leftovers of a killed run are removed
by the next one.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from pathlib import Path

from array_record.python.array_record_module import ArrayRecordWriter
from filelock import FileLock, Timeout

from catalog.checksums import sha256_file
from catalog.codec import RecordCodec
from catalog.download import CachedFile, DownloadConfig, DownloadManager, Resource
from catalog.errors import FeatureError, SourceFormatError, SpecError
from catalog.formats import FORMATS
from catalog.info import INFO_FILE, DatasetInfo, ShardInfo, SplitInfo
from catalog.spec import CHECKSUMS_FILE, BuilderSpec, SplitSpec, write_checksums

__all__ = ["WRITER_OPTIONS", "prepare", "register_checksums", "resources", "shard_name"]

#: group_size:1 keeps every record individually addressable: larger groups make one random
#: read cost tens of milliseconds.
WRITER_OPTIONS = "group_size:1"
_INCOMPLETE = ".incomplete-"


def shard_name(dataset: str, split: str, index: int = 0, count: int = 1) -> str:
    return f"{dataset}-{split}.array_record-{index:05d}-of-{count:05d}"


def resources(spec: BuilderSpec, *, register: bool = False) -> dict[str, Resource]:
    """The spec's downloads as verified-download requests; each needs a registered checksum
    unless `register` (then the download registers it)."""
    out = {}
    for d in spec.downloads.values():
        if (d.size is None or d.sha256 is None) and not register:
            where = spec.path / CHECKSUMS_FILE if spec.path else CHECKSUMS_FILE
            raise SpecError(
                f"{where}: no size and sha256 registered for {d.url} (download {d.name!r}); "
                "add a line 'url<TAB>size<TAB>sha256<TAB>filename' for it, or let "
                f"'catalog prepare {spec.path or spec.name} --register-checksums' add it"
            )
        out[d.name] = Resource(d.urls, d.size, d.sha256, d.filename)
    return out


def register_checksums(spec: BuilderSpec, files: dict[str, CachedFile]) -> BuilderSpec:
    """Merge the downloads' size and sha256 into the builder's checksums.tsv (new and changed
    entries; others are kept) and return the spec with them."""
    downloads, changed = {}, {}
    for name, d in spec.downloads.items():
        got = files[name]
        downloads[name] = dataclasses.replace(d, size=got.size, sha256=got.sha256)
        if (d.size, d.sha256) != (got.size, got.sha256):
            changed[d.url] = (got.size, got.sha256, d.filename)
            status = "new" if d.sha256 is None else f"changed, was {d.size} bytes {d.sha256}"
            print(f"{d.url}: {got.size} bytes, sha256 {got.sha256} ({status})", file=sys.stderr)
    if spec.path is not None and changed:
        write_checksums(spec.path / CHECKSUMS_FILE, changed)
        print(
            f"registered {len(changed)} checksums in {spec.path / CHECKSUMS_FILE}", file=sys.stderr
        )
    return spec.replace(downloads=downloads)


def prepare(
    spec: BuilderSpec, target: Path, downloads: DownloadConfig, *, overwrite: bool = False
) -> DatasetInfo:
    """Prepare `spec` into `target` unless it is there already; return its DatasetInfo.

    With ``downloads.register_checksums`` the files are fetched and their checksums
    registered first, even when the dataset is prepared already.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(target.parent / f".{target.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"waiting for another process preparing {target} ...", file=sys.stderr)
        lock.acquire()
    try:
        fetched = None
        if downloads.register_checksums:
            fetched = _download(spec, downloads)
            spec = register_checksums(spec, fetched)
        if (target / INFO_FILE).is_file() and not overwrite:
            return DatasetInfo.read(target)
        for stale in target.parent.glob(f"{target.name}{_INCOMPLETE}*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a run that was killed
        files = {name: f.path for name, f in (fetched or _download(spec, downloads)).items()}
        work = Path(tempfile.mkdtemp(prefix=f"{target.name}{_INCOMPLETE}", dir=target.parent))
        try:
            splits = {s.name: _write_split(spec, s, files, work) for s in spec.splits.values()}
            info = dataclasses.replace(DatasetInfo.from_spec(spec), splits=splits)
            info.write(work)
            _move_into_place(work, target)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return info
    finally:
        lock.release()


def _download(spec: BuilderSpec, config: DownloadConfig) -> dict[str, CachedFile]:
    with DownloadManager(config) as manager:
        return manager.download_all(resources(spec, register=config.register_checksums))


def _write_split(
    spec: BuilderSpec, split: SplitSpec, files: dict[str, Path], work: Path
) -> SplitInfo:
    source = {role: files[download] for role, download in split.files.items()}
    encode = RecordCodec(spec.features).encode
    path = work / shard_name(spec.name, split.name)
    writer = ArrayRecordWriter(str(path), WRITER_OPTIONS)
    count = 0
    try:
        for key, example in FORMATS[split.format].examples(source):
            try:
                writer.write(encode(example))
            except FeatureError as error:
                raise FeatureError(
                    error.reason,
                    feature_path=error.feature_path,
                    example=f"split {split.name!r}, example {count} (key {key!r})",
                ) from None
            count += 1
    finally:
        writer.close()
    if count != split.num_examples:
        where = spec.path / "builder.yaml" if spec.path else "the builder spec"
        raise SourceFormatError(
            f"split {split.name!r} of {spec.name}: the source files hold {count} examples but "
            f"{where} (splits.{split.name}.num_examples) expects {split.num_examples}"
        )
    shard = ShardInfo(path.name, count, path.stat().st_size, sha256_file(path))
    return SplitInfo(split.name, count, (shard,))


def _move_into_place(work: Path, target: Path) -> None:
    """Replace `target` by `work` with renames, so readers see the old or the new, never half."""
    if target.exists():
        old = target.with_name(f"{target.name}{_INCOMPLETE}old")
        os.rename(target, old)
        os.rename(work, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(work, target)
