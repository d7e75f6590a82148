"""A local cache of the shards of remote data dirs: verified, size-limited, shared by processes.

::

    <cache dir>/shards/<sha256>        a shard, read-only, named by the sha256 of its bytes
    <cache dir>/used/<sha256>          empty: its mtime is when that shard was last used
    <cache dir>/locks/<sha256>.lock    held while one process downloads that shard
    <cache dir>/tmp/<sha256>.<pid>.*   a download in progress
    <cache dir>/evict.lock             held while room is made

- **Verified**: a shard is downloaded into ``tmp/``, its size and sha256 checked against what
  dataset_info.json recorded at prepare time, made read-only, and renamed into ``shards/``
  (atomic): a file in ``shards/`` is always whole and right, so a hit needs no hashing. A
  shard that does not match is never kept (the bucket's copy changed or is corrupt: one
  error saying so). Content-addressed, so generations that share a shard share its copy.
- **Shared by processes**: a download takes the shard's lock (another process wanting the
  same shard waits, then finds it); readers hold a shared flock on the file they read
  (`Held`), and eviction removes only files it can lock exclusively: a shard in use is never
  removed under its reader.
- **Size-limited, LRU**: each use touches the mtime of the shard's mark in ``used/``, never
  the shard's own file (whose device, inode, size, mtime and ctime are what a process that
  verified it checks before trusting it again: `catalog.read.mapped_shard`); before a
  download, the least recently used shards no one holds are removed until the new one fits
  under the limit (``cache_size=``, ``$CATALOG_CACHE_SIZE``, default 20 GiB) and on the disk.
  When shards in use alone fill it, `CacheFullError` says so (never a truncated shard: a
  download that runs out of disk is removed, not kept).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import IO, Any

from catalog._util.units import format_size, parse_size
from catalog.errors import ShardError, StorageError
from catalog.storage.environment import CACHE_DIR_ENV, CACHE_SIZE_ENV
from catalog.storage.remote_reads import RemoteObject, copy_to

__all__ = ["DEFAULT_CACHE_SIZE", "CacheFullError", "Held", "ShardCache"]

DEFAULT_CACHE_SIZE = 20 << 30
_USED = "used"  # the folder of the marks of use (LRU)
_DISK_MARGIN = 64 << 20  # left free on the cache's disk


class CacheFullError(StorageError):
    """The shard cache has no room for a shard, even after evicting every shard not in use."""


class Held:
    """A cached shard held by this process: `path` is not evicted while it is open."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()


class ShardCache:
    """The shard cache in `root` ($CATALOG_CACHE_DIR, else the user cache dir), holding at
    most `limit` bytes ($CATALOG_CACHE_SIZE, else `DEFAULT_CACHE_SIZE`); see the module
    docstring. Picklable: a worker process uses the same directory."""

    def __init__(self, root: str | os.PathLike[str] | None = None, limit: int | str | None = None):
        if root is None:
            root = os.environ.get(CACHE_DIR_ENV) or None
        if root is None:
            import platformdirs

            root = Path(platformdirs.user_cache_dir("catalog")) / "shards"
        self.root = Path(root).expanduser()
        if limit is None:
            limit = os.environ.get(CACHE_SIZE_ENV) or DEFAULT_CACHE_SIZE
        if isinstance(limit, str):
            try:
                limit = parse_size(limit)
            except ValueError as error:
                raise StorageError(
                    f"the shard cache size: {error} (cache_size= or ${CACHE_SIZE_ENV})"
                ) from None
        if limit <= 0:
            raise StorageError(f"the shard cache size must be positive, got {limit}")
        self.limit = int(limit)

    def __reduce__(self) -> tuple[Any, tuple[str, int]]:
        return ShardCache, (str(self.root), self.limit)

    def __repr__(self) -> str:
        return f"ShardCache({str(self.root)!r}, limit={format_size(self.limit)})"

    def _dirs(self) -> tuple[Path, Path, Path]:
        dirs = self.root / "shards", self.root / "locks", self.root / "tmp"
        try:
            for folder in (*dirs, self.root / _USED):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(
                f"cannot use {self.root} as the shard cache ({error.strerror or error}): "
                f"choose another with cache_dir= or ${CACHE_DIR_ENV}"
            ) from None
        return dirs

    def get(self, obj: RemoteObject, sha256: str) -> Held:
        """The shard `obj` (whose bytes must have `sha256`) in the cache, held; downloaded
        and verified first when it is not there."""
        shards, locks, tmp = self._dirs()
        path = shards / sha256
        held = _hold(path, obj.size)
        if held is not None:
            return held
        if obj.size > self.limit:
            raise CacheFullError(
                f"{obj.where} ({format_size(obj.size)}) is larger than the shard cache's limit "
                f"({format_size(self.limit)} in {self.root}): raise it (cache_size= or "
                f"${CACHE_SIZE_ENV}) or read by byte ranges (remote_read='range')"
            )
        with _locked(locks / f"{sha256}.lock", fcntl.LOCK_EX):
            held = _hold(path, obj.size)  # another process may have fetched it meanwhile
            if held is None:
                self._download(obj, sha256, path, tmp)
                held = _hold(path, obj.size)
        if held is None:  # evicted at once by a process that needed the room
            raise CacheFullError(
                f"{obj.where}: the shard cache in {self.root} is too busy to keep it"
            )
        return held

    def _download(self, obj: RemoteObject, sha256: str, path: Path, tmp: Path) -> None:
        self.make_room(obj.size)
        part = tmp / f"{sha256}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            with open(part, "wb") as raw:
                out = _Hashing(raw)
                copy_to(obj, out)  # type: ignore[arg-type]
                raw.flush()
                os.fsync(raw.fileno())  # whole on disk before it is named by its hash
            digest, size = out.digest.hexdigest(), out.size
            if size != obj.size or digest != sha256:
                raise ShardError(
                    f"shard {obj.where}: its bytes in the bucket do not match what was prepared "
                    f"({size} bytes, sha256 {digest[:12]}..., expected {obj.size} bytes, "
                    f"{sha256[:12]}...): it changed or is corrupt there; run 'catalog verify' "
                    "on the data dir and prepare the dataset again with --overwrite"
                )
            part.chmod(0o444)
            part.replace(path)
        except OSError as error:
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                raise CacheFullError(
                    f"the disk of the shard cache ({self.root}) filled up while downloading "
                    f"{obj.where} ({format_size(obj.size)}): free space there, lower the cache "
                    f"size (${CACHE_SIZE_ENV}), or use another cache_dir"
                ) from None
            raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                part.unlink()

    def make_room(self, needed: int) -> None:
        """Evict least recently used shards no one holds until `needed` more bytes fit under
        the limit and on the disk; CacheFullError when they cannot."""
        shards = self.root / "shards"
        with _locked(self.root / "evict.lock", fcntl.LOCK_EX):
            entries = []
            for entry in os.scandir(shards):
                with contextlib.suppress(FileNotFoundError):
                    st = entry.stat()
                    path = Path(entry.path)
                    entries.append((_last_used(path, st), st.st_size, path))
            total = sum(size for _, size, _ in entries)
            free = shutil.disk_usage(self.root).free - _DISK_MARGIN
            entries.sort()
            for _, size, path in entries:
                if total + needed <= self.limit and needed <= free:
                    break
                if _evict(path):
                    total -= size
                    free += size
            if total + needed > self.limit or needed > free:
                why = (
                    f"its limit is {format_size(self.limit)}"
                    if total + needed > self.limit
                    else f"its disk has {format_size(max(free, 0))} free"
                )
                raise CacheFullError(
                    f"the shard cache in {self.root} has no room for {format_size(needed)} "
                    f"more: shards in use hold {format_size(total)} and {why}; raise the limit "
                    f"(cache_size= or ${CACHE_SIZE_ENV}), use another cache_dir, or read by "
                    "byte ranges (remote_read='range')"
                )

    def size(self) -> int:
        """Bytes of shards in the cache now."""
        shards = self.root / "shards"
        if not shards.is_dir():
            return 0
        return sum(e.stat().st_size for e in os.scandir(shards) if e.is_file())


def _hold(path: Path, size: int) -> Held | None:
    """`path` held with a shared flock (its size checked) and marked as used now, or None
    when it is not there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        st = os.fstat(fd)
        if st.st_nlink == 0 or path.stat().st_ino != st.st_ino:  # evicted meanwhile
            raise FileNotFoundError(path)
        if st.st_size != size:  # cannot happen to a file the cache wrote: refuse it anyway
            raise ShardError(f"{path} has {st.st_size} bytes, not {size}: remove it")
        _mark_used(path)
    except FileNotFoundError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return Held(path, fd)


def _marker(path: Path) -> Path:
    """The file whose mtime says when the shard at `path` (in ``shards/``) was last used."""
    return path.parent.parent / _USED / path.name


def _mark_used(path: Path) -> None:
    """Record that the shard at `path` is used now (its mark's mtime; the shard's own file
    is left as it is). Best effort: where no mark can be written (a cache on a read-only
    disk), eviction goes by when the shards were placed."""
    marker, now = _marker(path), time.time_ns()  # the clock, not the file system's coarser one
    try:
        os.utime(marker, ns=(now, now))
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
            os.utime(marker, ns=(now, now))
    except OSError:
        pass


def _last_used(path: Path, st: os.stat_result) -> int:
    """When the shard at `path` (whose stat is `st`) was last used: its mark's mtime, or the
    file's own (when it was placed) for a shard never marked."""
    try:
        return max(_marker(path).stat().st_mtime_ns, st.st_mtime_ns)
    except FileNotFoundError:
        return st.st_mtime_ns


def _evict(path: Path) -> bool:
    """Remove `path` (and its mark) unless a reader holds it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    try:
        path.unlink()
        with contextlib.suppress(FileNotFoundError):
            _marker(path).unlink()
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(path: Path, how: int) -> Any:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)


class _Hashing:
    """A file written through: the sha256 and size of what was written, as it is written."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw, self.digest, self.size = raw, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.raw.write(data)
