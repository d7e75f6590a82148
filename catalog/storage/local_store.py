"""A data dir on a local (or network) file system: the `catalog.storage.data_dir.Store`
protocol over generations behind a symlink (`catalog.storage.generations`), the dataset
lock and work dirs (`catalog.storage.locking`); its shards opened in place (`LocalShards`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from catalog._util.hashing import Stamp, file_stamp, sha256_file
from catalog.errors import NotPreparedError, StorageError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo
from catalog.storage.data_dir import (
    Leftover,
    Opened,
    OpenFile,
    OpenRanges,
    Prepared,
    Removal,
    ShardSink,
    parts_of,
)
from catalog.storage.diskspace import disk_usage
from catalog.storage.environment import DATA_DIR_ENV
from catalog.storage.generations import GENERATION, Pin, collect, generations, pin, publish
from catalog.storage.generations import remove_pointer as _remove_pointer
from catalog.storage.locking import INCOMPLETE, dataset_lock, work_dirs
from catalog.storage.paths import usable_dir
from catalog.storage.remote import RemoteDir
from catalog.storage.shards import shard_error

__all__ = ["LocalPublisher", "LocalShards", "LocalStore"]

_HOW = f"--data-dir or ${DATA_DIR_ENV}"
#: Where `LocalSink` remembers the stamps of the shards it was given, in the prepare's
#: bookkeeping folder of the work dir (removed before the work dir is published).
_STAMPS = Path(".work") / "shard-stamps"
#: Folders of a data dir that hold no datasets (never walked when listing them).
_NOT_DATASETS = frozenset({"downloads", "tfrecord-index"})


def _local(location: Path | RemoteDir) -> Path:
    assert isinstance(location, Path), location
    return location


class LocalStore:
    """A local data dir (see `catalog.storage.data_dir`)."""

    read_only = False

    def __init__(self, root: str | os.PathLike[str], *, check: bool = True) -> None:
        text = os.fspath(root)
        if text.startswith("file://"):
            text = text[len("file://") :]
        if not text.strip():
            raise StorageError(f"the data dir is an empty string: give a directory ({_HOW})")
        self.root: Path = Path(text).expanduser()
        if check:
            existing = next((p for p in (self.root, *self.root.parents) if p.exists()), None)
            if existing is not None and not existing.is_dir():
                raise StorageError(
                    f"the data dir {self.root}: {existing} is a file, not a directory; use "
                    f"another ({_HOW})"
                )

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def target(self, name: str, version_dir: str) -> Path:
        return self.root.joinpath(*parts_of(name), version_dir)

    # -- reading ---------------------------------------------------------------------------
    def open(self, target: Path | RemoteDir) -> Opened | None:
        generation = pin(_local(target))
        if not (generation.path / INFO_FILE).is_file():
            return None
        return Opened(generation.path, DatasetInfo.read(generation.path), generation)

    def shard_sizes(self, opened: Opened) -> dict[str, int]:
        folder = _local(opened.folder)
        sizes = {}
        for split in opened.info.splits.values():
            for shard in split.shards:
                with contextlib.suppress(OSError):
                    sizes[shard.file] = (folder / shard.file).stat().st_size
        return sizes

    def usage(self, opened: Opened) -> int:
        return disk_usage(_local(opened.folder))

    def source_options(
        self, remote_read: str, cache_dir: Any, cache_size: Any
    ) -> Mapping[str, Any]:
        return {}

    def shards(
        self,
        folder: Path | RemoteDir,
        info: DatasetInfo,
        open_file: OpenFile,
        open_ranges: OpenRanges,
        remote_read: str = "cache",
        cache: Any = None,
    ) -> LocalShards:
        return LocalShards(_local(folder), info, open_file)

    def shard_files(self, opened: Opened) -> Iterator[tuple[ShardInfo, Path | None]]:
        folder = _local(opened.folder)
        for split in opened.info.splits.values():
            for shard in split.shards:
                yield shard, folder / shard.file

    def found(self, name: str) -> list[str]:
        """``<version>`` and ``<config>/<version>`` folders prepared under `name`."""
        folder = self.root.joinpath(*parts_of(name))
        return [
            str(child.relative_to(folder).as_posix())
            for child in _candidates(folder, 2)
            if (child / INFO_FILE).is_file()
        ]

    def unnamed(self, name: str) -> list[str]:
        """``<version>`` and ``<config>/<version>`` under `name` whose pointer is gone but whose
        generations are left (a reader in another process held them when it was removed):
        what `rm` of the name still removes, though the name no longer resolves."""
        folder = self.root.joinpath(*parts_of(name))
        found = set()
        for parent in (folder, *_candidates(folder, 1)):
            with contextlib.suppress(OSError):
                for child in parent.iterdir():
                    version, gen, _ = child.name.partition(GENERATION)
                    pointer = parent / version
                    if gen and child.is_dir() and not os.path.lexists(pointer):
                        found.add(pointer.relative_to(folder).as_posix())
        return sorted(found)

    def prepared(self) -> list[Prepared]:
        """Every dataset behind a pointer (or an older catalog's plain directory)."""
        if not self.root.is_dir():
            return []
        found = []
        for folder in _candidates(self.root, 3):
            relative = folder.relative_to(self.root).parts
            if len(relative) < 2 or relative[0] == "downloads":
                continue
            try:
                data = json.loads((folder / INFO_FILE).read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                found.append(Prepared("/".join(relative[:-1]), relative[-1], str(folder), data))
        return found

    def leftovers(self, target: Path | RemoteDir) -> list[Leftover]:
        return [
            Leftover(
                str(w),
                sum(1 for f in w.glob("*.array_record-*") if f.is_file()),
                disk_usage(w),
            )
            for w in work_dirs(_local(target))
        ]

    # -- writing ---------------------------------------------------------------------------
    def lock(self, target: Path | RemoteDir) -> contextlib.AbstractContextManager[bool]:
        return dataset_lock(_local(target))

    def publisher(self, target: Path | RemoteDir, scratch: Path | None) -> LocalPublisher:
        return LocalPublisher(_local(target))

    def check_writable(self, target: Path | RemoteDir) -> None:
        usable_dir(_local(target).parent, "the data dir", _HOW)

    def remove(self, target: Path | RemoteDir, dry_run: bool = False) -> Removal:
        """Remove the prepared version under the prepare lock: its pointer, every generation
        no reader holds (`catalog.storage.generations`) and the work dirs."""
        target = _local(target)
        if not target.parent.is_dir():
            return Removal(False)
        with dataset_lock(target):
            leftovers = work_dirs(target)
            prepared = os.path.lexists(target)
            plain = [target] if target.is_dir() and not target.is_symlink() else []
            kept = generations(target)
            if not (prepared or kept or leftovers):
                return Removal(False)
            sizes = {path: disk_usage(path) for path in [*plain, *kept, *leftovers]}
            removal = Removal(
                True,
                str(target) if prepared or kept else "",
                [str(p) for p in leftovers],
                sum(sizes.values()),
            )
            if dry_run:
                return removal
            _remove_pointer(target)
            held = collect(target, ours=True)  # the pin that found it is no reader
            for path in leftovers:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            removal.freed = removal.size - sum(sizes.get(path, 0) for path in held)
            removal.held = [str(p) for p in held]
            return removal


def _candidates(root: Path, depth: int) -> list[Path]:
    """Folders 1..`depth` levels under `root` that may be a dataset version: not hidden, not a
    generation (listed through its pointer), not a work dir."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth):
        deeper = []
        for folder in level:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                name = child.name
                if name.startswith(".") or GENERATION in name or INCOMPLETE in name:
                    continue
                if folder == root and name in _NOT_DATASETS:  # caches beside the datasets
                    continue
                if child.is_dir():
                    deeper.append(child)
        found += deeper
        level = deeper
    return sorted(p for p in found if (p / INFO_FILE).is_file())


class LocalShards:
    """The shards of a local generation, opened in place by the record format's reader
    (`catalog.storage.data_dir.Shards`). A pointer given as `folder` is resolved once: the
    generation it names is held (`catalog.storage.generations`) while this lives."""

    ranged = False

    def __init__(self, folder: Path, info: DatasetInfo, open_file: OpenFile) -> None:
        self.pin: Pin = pin(folder)
        self.folder: Path = self.pin.path
        if self.folder != folder and self.pin.held:
            _check_generation(folder, self.folder, info)
        shards = [s for split in info.splits.values() for s in split.shards]
        self.paths = [str(self.folder / s.file) for s in shards]
        self._sizes = [s.num_bytes for s in shards]
        self._open_file = open_file

    def check(self) -> None:
        """Every shard must be there with the size it was written with (a stat each)."""
        for path, written in zip(self.paths, self._sizes, strict=True):
            try:
                size = Path(path).stat().st_size
            except FileNotFoundError:
                raise shard_error(path, "the file is missing") from None
            if size != written:
                raise shard_error(path, f"it has {size} bytes, but {written} were written")

    def open(self, shard: int) -> Any:
        return self._open_file(self.paths[shard])

    def local_path(self, shard: int) -> str:
        return self.paths[shard]

    def stamp(self) -> tuple[int, int, int] | None:
        """Which dataset_info.json the generation holds now (inode, mtime, size), or None."""
        try:
            st = (self.folder / INFO_FILE).stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def close(self) -> None:
        pass


def _check_generation(pointer: Path, generation: Path, info: DatasetInfo) -> None:
    """`info`, read through `pointer` before it was resolved, must be the info of the
    `generation` it names now (else the dataset was prepared again in between)."""
    if DatasetInfo.read(generation).splits != info.splits:
        raise NotPreparedError(
            f"{pointer} was prepared again while this data source of {info.full_name} was "
            f"being made (its {INFO_FILE} is not the one given); make a new data source "
            "(catalog.data_source(...))"
        )


class LocalPublisher:
    """A dataset version in a local data dir: work dirs beside the target, published by a
    rename (`catalog.storage.generations`)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.local = target  # where work dirs go: beside the target

    def leftovers(self) -> bool:
        return bool(work_dirs(self.target))

    def check(self) -> None:
        usable_dir(self.target.parent, "the data dir", _HOW)

    @contextlib.contextmanager
    def lock(self) -> Iterator[bool]:
        with dataset_lock(self.target) as waited:
            collect(self.target)  # generations left to readers that are gone now
            yield waited

    def resumable_plans(self) -> list[tuple[str, int]]:
        return []  # the local work dirs' plans say (`driver._resumable_size`)

    def begin(self, key: str, shard_bytes: int, fresh: bool, work: Path) -> LocalSink:
        return LocalSink(str(work))  # units write into the work dir itself

    def publish(self, work: Path, key: str, sink: ShardSink, info: DatasetInfo) -> None:
        info.write(work)
        publish(work, self.target)

    def discard(self, key: str, sink: ShardSink | None) -> None:
        pass  # the work dir (removed by the caller) was all there was


@dataclass(frozen=True)
class LocalSink:
    """A local prepare's shards: files in its work dir, which becomes the generation
    (`catalog.storage.data_dir.ShardSink`)."""

    work: str

    def put(self, written: Path, shard: ShardInfo, stamp: Stamp | None = None) -> None:
        """Move the shard into the work dir; when `written` is still the file that was
        hashed (its `stamp`), remember the moved file's stamp with its size and sha256, so
        that `check` need not hash it again while it stays unwritten."""
        path = Path(self.work) / shard.file
        hashed = stamp is not None and file_stamp(written.stat()) == stamp
        written.replace(path)
        if hashed:
            remembered = self._stamp_path(shard.file)
            remembered.parent.mkdir(parents=True, exist_ok=True)
            seen = {"stamp": list(file_stamp(path.stat())), "shard": asdict(shard)}
            remembered.write_text(json.dumps(seen), "utf-8")

    def finished(self, file: str, record: ShardInfo | None) -> ShardInfo | None:
        """The record's shard when its file is in the work dir at its recorded size."""
        if record is None:
            return None
        try:
            size = (Path(self.work) / file).stat().st_size
        except OSError:
            return None
        return record if size == record.num_bytes else None

    def stored(self, records: Mapping[str, ShardInfo | None]) -> dict[str, ShardInfo]:
        """The recorded shards whose files hold what their records say (size, sha256)."""
        return {
            file: record
            for file, record in records.items()
            if record is not None and self.check(record) is None
        }

    def check(self, shard: ShardInfo) -> str | None:
        """What is wrong with the shard's file in the work dir (size, sha256), or None."""
        path = Path(self.work) / shard.file
        if not path.is_file():
            return f"{path} is missing"
        st = path.stat()
        if st.st_size != shard.num_bytes:
            return f"{path} is {st.st_size} bytes, its unit record says {shard.num_bytes}"
        if self._unwritten_since_hashed(shard, file_stamp(st)):
            return None  # not written since its unit hashed it: that sha256 holds
        digest = sha256_file(path)
        if digest != shard.sha256:
            return f"{path} has sha256 {digest}, its unit record says {shard.sha256}"
        return None

    def scratch_bytes(self, sizes: list[int], at_once: int) -> int:
        return sum(sizes)  # every shard stays in the work dir

    def _stamp_path(self, file: str) -> Path:
        return Path(self.work) / _STAMPS / f"{file}.json"

    def _unwritten_since_hashed(self, shard: ShardInfo, now: Stamp) -> bool:
        """Whether `put` saw the shard's file hashed as `shard` says and it has the same
        stamp now (device, inode, size, mtime, ctime: any write or replacement changes it)."""
        try:
            seen = json.loads(self._stamp_path(shard.file).read_text("utf-8"))
            return bool(tuple(seen["stamp"]) == now and seen["shard"] == asdict(shard))
        except (OSError, ValueError, KeyError, TypeError):
            return False
