"""Preparation: downloads -> source-format reader -> features -> ArrayRecord shards.

Everything is written into ``<version>.incomplete-XXXX`` beside the target and renamed into
place only when every split and ``dataset_info.json`` are complete, under a file lock, so a
crash or a second process never exposes half a dataset; leftovers of a killed run are removed
by the next one. A copy that is already prepared is reused without taking the lock, so a
read-only data dir serves prepared datasets. Directories are created with the permissions the
umask gives (readable by the other users of a shared data dir). A write that fails (a full
disk, a file size limit) is a StorageError naming the file and the space needed, and leaves
nothing behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import glob
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

from array_record.python.array_record_module import ArrayRecordWriter

from catalog.checksums import sha256_file, write_checksums
from catalog.codec import RecordCodec
from catalog.download import CachedFile, DownloadConfig, DownloadManager, Resource
from catalog.errors import FeatureError, SourceFormatError, SpecError, StorageError
from catalog.extract import archive_format
from catalog.features import ClassLabel
from catalog.features.class_label import abbreviate
from catalog.formats import FORMATS, Source, SourceFile
from catalog.info import DatasetInfo, ShardInfo, SplitInfo, reusable
from catalog.locking import INCOMPLETE, dataset_lock, make_dir, work_dirs
from catalog.paths import DATA_DIR_ENV, DOWNLOAD_DIR_ENV, usable_dir
from catalog.shards import WRITER_OPTIONS, shard_name
from catalog.spec import CHECKSUMS_FILE, BuilderSpec, FileRef, SplitSpec
from catalog.units import format_size

__all__ = [
    "WRITER_OPTIONS",
    "prepare",
    "register_checksums",
    "resources",
    "reusable",
    "shard_name",
]

#: Errors of a write that no retry fixes: the fix is space, a limit, or permissions.
_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES}


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
        out[d.name] = Resource(d.urls, d.size, d.sha256, d.filename, d.max_extracted_size)
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
    spec: BuilderSpec,
    target: Path,
    downloads: DownloadConfig,
    *,
    overwrite: bool = False,
    max_examples_per_split: int | None = None,
) -> DatasetInfo:
    """Prepare `spec` into `target` unless it is there already; return its DatasetInfo.

    With ``downloads.register_checksums`` the files are fetched and their checksums
    registered first, even when the dataset is prepared already. ``max_examples_per_split``
    stops each split after that many examples (smoke tests, CI); dataset_info.json then
    holds the counts written, and `reusable` says when such a copy is reused.
    """
    if max_examples_per_split is not None and max_examples_per_split < 1:
        raise ValueError(f"max_examples_per_split must be >= 1, got {max_examples_per_split}")
    for name in {s.format for s in spec.splits.values()}:
        check = FORMATS[name].check
        if check is not None:
            check()  # a missing optional library is reported before any download
    if not overwrite and not downloads.register_checksums:
        prepared = reusable(spec, target, max_examples_per_split)
        if prepared is not None:
            return prepared  # no lock needed to read a complete copy: read-only dirs work
    usable_dir(target.parent, "the data dir", f"--data-dir or ${DATA_DIR_ENV}")
    if downloads.download_dir is not None:
        usable_dir(
            downloads.download_dir, "the download dir", f"--download-dir or ${DOWNLOAD_DIR_ENV}"
        )
    with dataset_lock(target), DownloadManager(downloads) as manager:
        fetched = None
        if downloads.register_checksums:
            fetched = _download(spec, manager)
            spec = register_checksums(spec, fetched)
        prepared = None if overwrite else reusable(spec, target, max_examples_per_split)
        if prepared is not None:
            return prepared
        for stale in work_dirs(target):
            shutil.rmtree(stale, ignore_errors=True)  # left by a run that was killed
        sources = _sources(spec, fetched or _download(spec, manager), manager)
        work = make_dir(target.parent, f"{target.name}{INCOMPLETE}")
        bars = downloads.progress == "bars"
        try:
            splits = {
                s.name: _write_split(spec, s, sources[s.name], work, max_examples_per_split, bars)
                for s in spec.splits.values()
            }
            info = dataclasses.replace(
                DatasetInfo.from_spec(spec), splits=splits, shard_options=WRITER_OPTIONS
            )
            info.write(work)
            _move_into_place(work, target)
        except OSError as exc:
            shutil.rmtree(work, ignore_errors=True)
            if exc.errno in _STORAGE_ERRNOS and not isinstance(exc, StorageError):
                raise _storage_error(exc.filename or work, exc.strerror or str(exc)) from None
            raise
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return info


def _storage_error(path: Any, reason: str, needed: int | None = None) -> StorageError:
    """A failed write: the file, why, the free space there and, when known, the space needed."""
    where = Path(path)
    probe = where if where.is_dir() else where.parent
    try:
        free = f"{format_size(shutil.disk_usage(probe).free)} free there"
    except OSError:
        free = "free space unknown"
    need = f", about {format_size(needed)} needed" if needed else ""
    return StorageError(
        f"cannot write {where}: {reason} ({free}{need}); free some space or prepare into "
        f"another data dir (--data-dir or ${DATA_DIR_ENV}); nothing was kept"
    )


def _download(spec: BuilderSpec, manager: DownloadManager) -> dict[str, CachedFile]:
    register = manager.config.register_checksums
    return manager.download_all(resources(spec, register=register))


def _natural_order(path: Path) -> list[str | int]:
    """Sort key putting ``batch_2`` before ``batch_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.as_posix())]


def _zip_member(file: CachedFile, member: str, where: str) -> zipfile.Path | None:
    """`member` of a zip download, to read in place; None if the download is not a zip or
    `member` is a glob."""
    if glob.has_magic(member) or archive_format(file.path) != "zip":
        return None
    found = zipfile.Path(file.path, member)
    if found.is_file():
        return found
    if zipfile.Path(file.path, member.rstrip("/") + "/").exists():
        return None  # a directory: extracted as usual
    raise SourceFormatError(f"{where}: {member!r} in {file.filename} is not a file in the zip")


def _resolve(
    ref: FileRef,
    files: dict[str, CachedFile],
    manager: DownloadManager,
    where: str,
    many: bool,
    stream: bool = False,
) -> tuple[SourceFile, ...]:
    """The paths a file reference names: the download itself, or the members of its archive
    (extracted once, into the download dir) its path or glob matches, in natural order. For a
    role that streams, a zip's member is read in place instead (the zip is not extracted)."""
    file = files[ref.download]
    if ref.member is None:
        return (file.path,)
    member = _zip_member(file, ref.member, where) if stream else None
    if member is not None:
        return (member,)
    root = manager.extract(file)
    if ref.member == ".":  # the extracted archive's top folder itself
        return (root,)
    found = sorted(root.glob(ref.member), key=_natural_order)
    if found and (many or len(found) == 1):
        return tuple(found)
    where = f"{where}: {ref.member!r} in {file.filename} ({root})"
    if not found:
        held = ", ".join(sorted(p.name for p in root.iterdir())[:10])
        raise SourceFormatError(f"{where} matches no file; the archive holds {held}")
    shown = ", ".join(str(p.relative_to(root)) for p in found[:5])
    raise SourceFormatError(f"{where} must match one file, matches {shown}")


def _sources(
    spec: BuilderSpec, files: dict[str, CachedFile], manager: DownloadManager
) -> dict[str, Source]:
    """What each split's reader gets: its files and its options, file references resolved."""
    sources = {}
    for split in spec.splits.values():
        where = f"{spec.full_name}: splits.{split.name}"
        fmt = FORMATS[split.format]
        roles = {role.name: role for role in fmt.roles}
        paths = {
            name: _resolve(
                ref, files, manager, f"{where}.files.{name}", roles[name].many, roles[name].stream
            )
            for name, ref in split.files.items()
        }
        options = {
            name: {
                key: _resolve(ref, files, manager, f"{where}.options.{name}.{key}", False)[0]
                for key, ref in value.items()
            }
            if fmt.options[name].kind == "file_map"
            else value
            for name, value in split.options.items()
        }
        sources[split.name] = Source(split.name, paths, options, spec.features)
    return sources


def _check_class_names(spec: BuilderSpec, split: SplitSpec, source: Source) -> None:
    """The class names the source files declare must be the spec's, in the same order."""
    declared = FORMATS[split.format].class_names
    for feature, (path, names) in (declared(source) if declared else {}).items():
        label = spec.features[feature]
        assert isinstance(label, ClassLabel)  # checked when the spec was loaded
        if names != label.names:
            where = spec.path / "builder.yaml" if spec.path else "the builder spec"
            first = next(
                (i for i, (a, b) in enumerate(zip(names, label.names, strict=False)) if a != b),
                min(len(names), len(label.names)),
            )
            got = names[first] if first < len(names) else "(end)"
            want = label.names[first] if first < len(label.names) else "(end)"
            raise SourceFormatError(
                f"{path} names {len(names)} classes ({abbreviate(names)}) but {where} gives "
                f"feature {feature!r} {len(label.names)} ({abbreviate(label.names)}); first "
                f"difference at index {first}: {got!r} in the file, {want!r} in the spec"
            )


def _write_split(
    spec: BuilderSpec,
    split: SplitSpec,
    source: Source,
    work: Path,
    limit: int | None = None,
    bars: bool = False,
) -> SplitInfo:
    _check_class_names(spec, split, source)
    encode = RecordCodec(spec.features).encode
    path = work / shard_name(spec.name, split.name)
    expected = split.num_examples if limit is None else min(limit, split.num_examples)
    writer = ArrayRecordWriter(str(path), WRITER_OPTIONS)
    count = written = 0
    bar = _examples_bar(f"{spec.full_name} {split.name}", expected) if bars else None
    try:
        for key, example in FORMATS[split.format].examples(source):
            if limit is not None and count >= limit:
                break
            try:
                record = encode(example)
                writer.write(record)
            except FeatureError as error:
                raise FeatureError(
                    error.reason,
                    feature_path=error.feature_path,
                    example=f"split {split.name!r}, example {count} (key {key!r})",
                ) from None
            except RuntimeError as exc:  # array_record reports I/O failures as RuntimeError
                needed = written * expected // max(count, 1)
                raise _storage_error(path, _reason(exc), needed) from None
            written += len(record)
            count += 1
            if bar is not None:
                bar.update()
    except BaseException:
        with contextlib.suppress(RuntimeError):
            writer.close()  # the error in flight says what went wrong
        raise
    finally:
        if bar is not None:
            bar.close()
    try:
        writer.close()  # the last chunk and the index are written here
    except RuntimeError as exc:
        raise _storage_error(path, _reason(exc), written) from None
    if count != (split.num_examples if limit is None else min(limit, split.num_examples)):
        where = spec.path / "builder.yaml" if spec.path else "the builder spec"
        raise SourceFormatError(
            f"split {split.name!r} of {spec.full_name}: the source files hold {count} examples but "
            f"{where} (splits.{split.name}.num_examples) expects {split.num_examples}"
        )
    shard = ShardInfo(path.name, count, path.stat().st_size, sha256_file(path))
    return SplitInfo(split.name, count, (shard,))


def _reason(exc: BaseException) -> str:
    """The system's reason in an array_record error ("write() failed: No space left on
    device; writing ...; at byte N" -> "No space left on device")."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    match = re.search(r"failed: ([^;]+)", text)
    return match.group(1) if match else text


def _examples_bar(description: str, total: int) -> Any:
    """A tqdm bar of examples written (examples/s, ETA) on stderr, for a terminal."""
    from tqdm import tqdm  # only with bars

    return tqdm(total=total, desc=description, unit=" ex", file=sys.stderr)


def _move_into_place(work: Path, target: Path) -> None:
    """Replace `target` by `work` with renames, so readers see the old or the new, never half."""
    if target.exists():
        old = target.with_name(f"{target.name}{INCOMPLETE}old")
        os.rename(target, old)
        os.rename(work, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(work, target)
