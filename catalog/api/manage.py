"""What a data dir holds, and keeping it: `list_prepared`, `verify`, `remove`. The CLI's
``catalog list --prepared``, ``catalog verify`` and ``catalog rm`` are thin layers over them;
each works the same on every dataset the resolver finds (`catalog.api.resolve`) in any data
dir, local or in a bucket (`catalog.storage.data_dir`).

>>> for d in catalog.list_prepared("s3://team/datasets"):  # doctest: +SKIP
...     print(d.name, d.version, d.splits)
>>> catalog.verify("mnist").ok                              # doctest: +SKIP
True
>>> catalog.remove("mytable", data_dir="~/datasets").found  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from catalog.api.builder import PathLike
from catalog.api.data_dir import resolve_data_dir
from catalog.api.resolve import DatasetHandle, plain_name, resolve_dataset
from catalog.download.config import DownloadConfig, resolve_config
from catalog.download.manual import changed_files
from catalog.errors import DatasetNotFoundError
from catalog.read.verify import Problem
from catalog.read.verify import verify as verify_shards
from catalog.spec.model import BuilderSpec
from catalog.storage import paths
from catalog.storage.data_dir import DataDir, DataDirLike, Leftover, Removal
from catalog.storage.diskspace import disk_usage

__all__ = [
    "DatasetRemoval",
    "DownloadsRemoval",
    "PreparedDataset",
    "Removal",
    "Verification",
    "list_prepared",
    "remove",
    "remove_handle",
    "remove_unnamed",
    "verify",
    "verify_handle",
]


@dataclass(frozen=True)
class PreparedDataset:
    """A dataset prepared in a data dir: ``name[/config]``, version folder (``1.0.0``,
    ``1.0.0-max64``), where it is, its example count per split and its shards' bytes."""

    name: str
    version: str
    path: str
    splits: dict[str, int]
    num_bytes: int


def list_prepared(data_dir: DataDir | None = None) -> list[PreparedDataset]:
    """Every dataset prepared in the data dir (`data_dir`, else $CATALOG_DATA_DIR, else the
    platform's user data dir; a local dir or a bucket URL), sorted by name.

    Args:
        data_dir: the data dir to list (a path or an ``s3://``, ``gs://``, ``https://`` URL).

    Returns:
        A `PreparedDataset` per prepared dataset and config: its name, version, splits and
        size on disk.

    Raises:
        StorageError: the data dir is a file, a URL of a scheme no store reads, or a bucket
            that cannot be listed (missing, access denied)."""
    found = []
    for entry in resolve_data_dir(data_dir).prepared():
        splits = entry.data.get("splits") or {}
        counts = {n: int(s.get("num_examples", 0)) for n, s in splits.items()}
        size = sum(int(s.get("num_bytes", 0)) for s in splits.values())
        found.append(PreparedDataset(entry.name, entry.version, entry.path, counts, size))
    return sorted(found, key=lambda d: (d.name, d.version))


@dataclass
class Verification:
    """What `verify` found: `problems` (empty: intact), what was checked, and the work dirs
    interrupted prepares left beside it (no problem of the prepared copy)."""

    name: str
    config: str | None
    version: str
    path: str
    problems: list[Problem]
    shards: int = 0
    num_examples: int = 0
    num_bytes: int = 0
    seconds: float = 0.0
    stale_work_dirs: list[Leftover] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(
    name: PathLike,
    *,
    data_dir: DataDirLike | None = None,
    image_max_side: int | None = None,
    manual_dir: PathLike | None = None,
) -> Verification:
    """Re-hash every shard of the prepared dataset `name` against its dataset_info.json and
    count its records (`catalog.read.verify`). NotPreparedError when it is not prepared.
    The unverified manual files it was prepared from (`catalog.download.manual`) that are
    still in the manual dir are re-hashed too: one that changed is a ``source`` problem.

    Args:
        name: what `catalog.builder` takes, or the path or URL of a prepared dataset.
        data_dir: the data dir (a path or a bucket URL); default as for `catalog.builder`.
        image_max_side: the prepared copy of that image size to verify.
        manual_dir: where manual files are placed (default ``<download dir>/manual``).

    Returns:
        A `Verification`: the problems found (empty when every shard's sha256 and record
        count match), what was checked, and work dirs interrupted prepares left.

    Raises:
        NotPreparedError: the dataset is not prepared in that data dir.
        DatasetNotFoundError: no dataset of that name.
        StorageError: the data dir is unusable."""
    handle = resolve_dataset(name, data_dir=data_dir, image_max_side=image_max_side)
    return verify_handle(handle, manual_dir, data_dir)


def verify_handle(
    handle: DatasetHandle,
    manual_dir: PathLike | None = None,
    data_dir: DataDirLike | None = None,
) -> Verification:
    """`verify` of a dataset resolved already (`catalog.api.resolve.resolve_dataset`) in the
    data dir given as `data_dir`: the CLI resolves every argument first, so that none is
    hashed before all are known."""
    opened = handle.open()
    if opened is None:
        asked = None if data_dir is None else str(data_dir)
        raise handle.not_prepared_error(handle.text, asked)
    info = opened.info
    start = time.perf_counter()
    problems = verify_shards(handle.store, handle.target, opened)
    manual = None if manual_dir is None else Path(manual_dir)  # a bucket's: the user's cache's
    config = resolve_config(DownloadConfig(manual_dir=manual), data_dir=data_dir)
    assert config.manual_dir is not None  # resolve_config sets it
    for filename, what in changed_files(info.downloads, config.manual_dir, rehash=True):
        problems.append(
            Problem(
                "source",
                filename,
                f"the manual file changed since the dataset was prepared from it ({what}); "
                "prepare it again with --overwrite",
            )
        )
    seconds = time.perf_counter() - start
    splits = list(info.splits.values())
    return Verification(
        info.name,
        info.config,
        info.version,
        str(handle.target),
        problems,
        sum(len(s.shards) for s in splits),
        sum(s.num_examples for s in splits),
        sum(s.num_bytes for s in splits),
        seconds,
        handle.store.leftovers(handle.target) if handle.kind != "directory" else [],
    )


@dataclass
class DownloadsRemoval:
    """What removing a dataset's downloads found and did (``remove(..., downloads=True)``):
    the download cache entries of the files its spec lists (by their cache path
    ``<sha256[:16]>-<filename>``): `files` downloaded files, `paths` every entry (the file, its
    record, a partial download, its extracted archive), `size` their bytes, in
    `download_dir`. Files in the manual dir are the user's and never touched."""

    download_dir: str
    files: int = 0
    paths: list[str] = field(default_factory=list)
    size: int = 0

    @property
    def found(self) -> bool:
        return bool(self.paths)


@dataclass
class DatasetRemoval(Removal):
    """`Removal` of the prepared copy, and with ``downloads=True`` what happened to the
    downloads (`downloads`; None when not asked, or for a dataset no spec describes)."""

    downloads: DownloadsRemoval | None = None


def remove(
    name: PathLike,
    *,
    data_dir: DataDirLike | None = None,
    image_max_side: int | None = None,
    dry_run: bool = False,
    downloads: bool = False,
    download_dir: PathLike | None = None,
) -> DatasetRemoval:
    """Remove the prepared dataset `name` from the data dir, under the lock preparing holds
    (a prepare running meanwhile is waited for): its pointer, every generation no reader
    holds, and what interrupted prepares left. ``found`` is False when nothing was
    there (not an error, for every kind of dataset: a registered one not prepared, and a name
    nothing answers to, such as a dataset prepared from files and removed already); with
    ``dry_run`` nothing is removed, the answer says what would be. A generation a reader in
    another process holds is left (``held``) and removed by the next `remove` of the
    same name, though the name no longer resolves; this process's own hold on it (the one
    taken to find it, or a data source of this process) does not keep it.

    Args:
        name: what `catalog.builder` takes, or the path or URL of a prepared dataset.
        data_dir: the data dir (a path or a bucket URL); default as for `catalog.builder`.
        image_max_side: the prepared copy of that image size to remove.
        dry_run: say what would be removed, remove nothing.
        downloads: also remove the files its spec lists from the download cache
            (``catalog rm --downloads``; `DatasetRemoval.downloads` says what went).
        download_dir: the download cache; default ``$CATALOG_DOWNLOAD_DIR``, else beside a
            local data dir (as preparing uses it).

    Returns:
        A `DatasetRemoval`: whether anything was found, and what was (or would be) removed.

    Raises:
        DatasetNotFoundError: `name` is no plain ``name[/config][:version]`` and names no
            dataset (a path of local files, a folder that is no dataset).
        StorageError: the data dir is unusable, or a bucket refuses the removal."""
    try:
        handle = resolve_dataset(name, data_dir=data_dir, image_max_side=image_max_side)
    except DatasetNotFoundError:
        if not plain_name(os.fspath(name)):
            raise
        # Nothing answers to the name: its pointer is gone. What an earlier rm left because a
        # reader held it (it said "run 'catalog rm' again") is removed now, else nothing is.
        return remove_unnamed(os.fspath(name), data_dir, image_max_side, dry_run)
    return remove_handle(handle, dry_run, downloads=downloads, download_dir=download_dir)


def remove_handle(
    handle: DatasetHandle,
    dry_run: bool = False,
    *,
    downloads: bool = False,
    download_dir: PathLike | None = None,
) -> DatasetRemoval:
    """`remove` of a dataset resolved already (`catalog.api.resolve.resolve_dataset`): the CLI
    resolves every argument before it removes any."""
    removal = DatasetRemoval(**vars(handle.store.remove(handle.target, dry_run)))
    if downloads and handle.builder is not None:
        where = paths.download_dir(download_dir, handle.data_dir)
        removal.downloads = _remove_downloads(handle.builder.spec, where, dry_run)
    return removal


def _remove_downloads(spec: BuilderSpec, download_dir: Path, dry_run: bool) -> DownloadsRemoval:
    """Remove (unless `dry_run`) the cache entries of the files `spec` lists."""
    from catalog.download import Resource, cache_path  # imports requests: only here
    from catalog.download.cache import EXTRACTED_DIR, META_DIR

    found = DownloadsRemoval(str(download_dir))
    doomed: list[Path] = []
    for d in spec.downloads.values():
        if d.sha256 is None:  # never verified, so never cached under a content name
            continue
        path = cache_path(Resource(d.urls, d.size, d.sha256, d.filename), download_dir)
        found.files += path.is_file()
        meta = download_dir / META_DIR
        for candidate in (
            path,
            meta / f"{path.name}.json",
            meta / f"{path.name}.part",
            download_dir / EXTRACTED_DIR / path.name,
        ):
            if candidate.exists():
                doomed.append(candidate)
    found.paths = [str(p) for p in doomed]
    found.size = sum(p.stat().st_size if p.is_file() else disk_usage(p) for p in doomed)
    if not dry_run:
        for path in doomed:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    return found


def remove_unnamed(
    name: str, data_dir: DataDir | None, image_max_side: int | None, dry_run: bool = False
) -> DatasetRemoval:
    """Remove the generations left under the plain `name` (``name[/config][:version]``) whose
    pointer an earlier removal took; ``Removal(False)`` when there are none."""
    path, _, version = name.partition(":")
    store = resolve_data_dir(data_dir)
    suffix = f"-max{image_max_side}" if image_max_side is not None else ""
    total = DatasetRemoval(False)
    for version_dir in store.unnamed(path):
        base, _, last = version_dir.rpartition("/")
        config = f"/{base}" if base else ""
        plain, _, side = last.partition("-max")  # `<version>-maxN`: an --image-max-side copy
        if (version and plain != version) or (f"-max{side}" if side else "") != suffix:
            continue
        done = store.remove(store.target(f"{path}{config}", last), dry_run)
        if done.found:
            what = ", ".join(w for w in (total.what, done.what) if w)
            total = DatasetRemoval(
                True, what, total.leftovers + done.leftovers, total.size + done.size,
                total.freed + done.freed, total.held + done.held,
            )  # fmt: skip
    return total
