"""The download cache: verified files named by their content, each with a small JSON record.

::

    <download_dir>/<sha256[:16]>-<filename>          a verified file, shared across datasets
                                                 (a hard link, for a mirror dir's file)
    <download_dir>/.meta/<key>.json                  its record: url, size, sha256, when
    <download_dir>/.meta/<key>.lock                  held by the one process fetching it,
                                                 removed when it lets go
    <download_dir>/.meta/<key>.part                  an interrupted download, resumed later

``<key>`` is the cached file's name, so the same bytes are reused whichever dataset, version
or URL asks for them, and a user may place a file at its cache path by hand. A file that
does not match its size and sha256 is never left at a cache path. A file whose checksum is
not registered yet (``--register-checksums``) is keyed by its URL until its bytes are known;
offline, such a file is the one last fetched from its URL (`Cache.last_fetched`: what a
Croissant file's unchecksummed files, the Hub's listing and Parquet files, need).
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import json
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from catalog._util.hashing import Digest, Stamp, file_stamp
from catalog.download.checksums import content_name
from catalog.download.resource import Failure, Resource, verify
from catalog.errors import DownloadError
from catalog.storage.diskspace import disk_full
from catalog.storage.lock_holder import hold

__all__ = ["EXTRACTED_DIR", "META_DIR", "Cache", "CachedFile", "cache_path"]

META_DIR = ".meta"
#: Where archives are extracted, in the download dir (``extracted/<sha256[:16]>-<name>/``).
EXTRACTED_DIR = "extracted"


@dataclass(frozen=True)
class CachedFile:
    """A verified file: where it is, its size and sha256, and where it came from."""

    path: Path
    filename: str
    size: int
    sha256: str
    url: str | None = None  # the URL or local path it was fetched from; None if unknown
    #: The most it may extract to (its Resource's), None: catalog's default limit.
    max_extracted_size: int | None = None
    #: The file's `catalog._util.hashing.file_stamp` when its sha256 was taken (None: a
    #: folder, or unknown): what `catalog.download.watch` compares after it was read.
    stamp: Stamp | None = None


def cache_path(resource: Resource, download_dir: Path) -> Path:
    """Where a registered resource's verified file lives in ``download_dir``."""
    if resource.sha256 is None:
        raise ValueError(f"{resource.filename}: no sha256 registered, so no cache path")
    return Path(download_dir) / content_name(resource.sha256, resource.filename)


class Cache:
    """The files, records, locks and partial downloads under one download dir."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.meta = self.root / META_DIR

    def key(self, resource: Resource) -> str:
        if resource.sha256 is not None:
            return cache_path(resource, self.root).name
        url_hash = hashlib.sha256(resource.urls[0].encode() if resource.urls else b"").hexdigest()
        return f"url-{url_hash[:16]}-{resource.filename}"

    def last_fetched(self, resource: Resource) -> Resource | None:
        """`resource` (registered nowhere: no sha256) as the bytes last fetched from one of
        its URLs under its file name were: its size and sha256 from the newest record; None
        when none was."""
        found: list[tuple[str, int, int, str]] = []
        for path in self.meta.glob(f"*-{glob.escape(resource.filename)}.json"):
            record = self._read_record(path.name.removesuffix(".json"))
            if not record or record.get("url") not in resource.urls:
                continue
            size, sha256 = record.get("size"), record.get("sha256")
            if isinstance(size, int) and isinstance(sha256, str):
                when = str(record.get("downloaded_at", ""))
                found.append((when, path.stat().st_mtime_ns, size, sha256))
        if not found:
            return None
        _, _, size, sha256 = max(found)
        return dataclasses.replace(resource, size=size, sha256=sha256)

    def part_path(self, resource: Resource) -> Path:
        return self.meta / f"{self.key(resource)}.part"

    @contextlib.contextmanager
    def locked(
        self,
        resource: Resource,
        *,
        on_wait: Callable[[str], object],
        cancelled: threading.Event,
    ) -> Iterator[None]:
        """Hold the resource's lock (one process fetches a file; the others wait, then reuse);
        ``on_wait`` gets who holds it (see :mod:`catalog.storage.lock_holder`)."""
        self.meta.mkdir(parents=True, exist_ok=True)
        path = self.meta / f"{self.key(resource)}.lock"
        with hold(
            path,
            on_wait=on_wait,
            cancelled=cancelled,
            cancelled_error=lambda: DownloadError(f"cancelled while waiting for {path}"),
            remove=True,
        ):
            yield

    def lookup(self, resource: Resource, *, on_corrupt: Callable[[str], None]) -> CachedFile | None:
        """The verified cached file, if there is one; a corrupted one is removed."""
        if resource.sha256 is None:
            return None
        path = cache_path(resource, self.root)
        try:
            stat = path.stat()
        except OSError:
            return None
        record = self._read_record(path.name)
        url = record.get("url") if record else None
        source = url if isinstance(url, str) else None
        if (
            record is not None
            and record.get("checked") == _stamp(stat)
            and (record.get("sha256"), record.get("size")) == (resource.sha256, resource.size)
        ):
            # Hashed when it was written or last checked, and untouched since (same inode,
            # size, mtime and ctime): not read again, so reusing a cached 1.6 GB file costs a
            # stat. A hard link to a mirror file shares its inode: a change there shows here.
            return CachedFile(
                path, resource.filename, stat.st_size, resource.sha256, source,
                stamp=file_stamp(stat),
            )  # fmt: skip
        digest = Digest.of_file(path)
        try:
            verify(resource, digest, remote=False)
        except Failure as failure:
            if source is not None and "://" not in source and stat.st_nlink > 1:
                # A hard link to a mirror file (see DownloadManager): changed at the mirror.
                damage = f"a link to {source}, which no longer matches"
            else:
                damage = "damaged"
            on_corrupt(f"{path} is {damage} ({failure.reason}); fetching it again")
            path.unlink(missing_ok=True)
            self._record_path(path.name).unlink(missing_ok=True)
            return None
        self._write_record(path, resource.filename, digest, source, record)
        return CachedFile(
            path, resource.filename, digest.size, digest.sha256, source, stamp=digest.stamp
        )

    def commit(self, part: Path, resource: Resource, digest: Digest, url: str) -> CachedFile:
        """Move verified bytes from ``part`` to their cache path and record where they came from."""
        path = self.root / content_name(digest.sha256, resource.filename)
        part.replace(path)  # atomic: the cache path is absent or complete and verified
        self._write_record(path, resource.filename, digest, url)
        stamp = file_stamp(path.stat())  # written by this process: these bytes were hashed
        return CachedFile(path, resource.filename, digest.size, digest.sha256, url, stamp=stamp)

    def new_part(self, resource: Resource) -> Path:
        """A fresh, unique temporary path in the cache (for copies that are not resumed)."""
        self.meta.mkdir(parents=True, exist_ok=True)
        return self.meta / f"{self.key(resource)}.{secrets.token_hex(4)}.tmp"

    def _record_path(self, name: str) -> Path:
        return self.meta / f"{name}.json"

    def _read_record(self, name: str) -> dict[str, object] | None:
        try:
            data = json.loads(self._record_path(name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write_record(
        self,
        path: Path,
        filename: str,
        digest: Digest,
        url: str | None,
        old: dict[str, object] | None = None,
    ) -> None:
        """Record what `path` holds, where it came from and the file's stamp when it was
        hashed (`old`: the record to update, keeping when it was downloaded)."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        record = {
            "filename": filename,
            "url": url,
            "size": digest.size,
            "sha256": digest.sha256,
            "downloaded_at": (old or {}).get("downloaded_at", now),
            "checked": _stamp(path.stat()),
        }
        self.meta.mkdir(parents=True, exist_ok=True)
        target = self._record_path(path.name)
        temp = target.with_name(f"{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            temp.write_text(json.dumps(record, indent=2) + "\n", "utf-8")
            temp.replace(target)
        except OSError as error:
            temp.unlink(missing_ok=True)
            full = disk_full(error, self.root, f"recording {path.name}")
            if full is None:
                raise
            raise full from None


def _stamp(stat: os.stat_result) -> list[int]:
    """What says a file is unchanged since it was hashed: its inode, size, mtime and ctime.

    The ctime changes on every write and cannot be set back, so even a file rewritten in
    place with its old size and mtime restored (a mirror file the cache holds a hard link
    to, updated by a tool that keeps times) is hashed again rather than trusted."""
    return [stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]
