"""Writing to a bucket: one file-system handle for writes, bounded retries with a deadline, and
the errors a bucket gives turned into one clear `StorageError` each.

The library's own retries are turned down for writes (s3fs and botocore would otherwise retry
a 503 SlowDown about 25 times over 40 s per request, unbounded by any deadline): s3fs tries a
request (one part of a multipart upload, say) 3 times within half a second, botocore once;
then `retrying` tries the whole operation again after a transient failure (503 SlowDown, 500,
a dropped or timed-out connection) with capped exponential backoff and jitter, until
`DEADLINE` seconds have passed since its first try, and raises a `StorageError` naming the
object and the last answer. What retrying cannot fix (a bucket that does not exist, access
denied, no credentials, an https data dir, which is read-only) is one `StorageError` at once,
saying what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from catalog.errors import CatalogError, StorageError
from catalog.storage import remote
from catalog.storage.environment import REMOTE_DEADLINE_ENV
from catalog.storage.remote import RemoteDir, no_such_bucket, shared_options, url_scheme
from catalog.storage.remote_reads import deadline
from catalog.storage.schemes import SCHEMES, scheme

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

__all__ = [
    "DEADLINE",
    "create",
    "delete",
    "metadata",
    "probe",
    "put_bytes",
    "put_file",
    "read_bytes",
    "retrying",
    "storage_error",
    "write_filesystem",
]

T = TypeVar("T")

#: Seconds one request is retried for (from its first try) before it is an error, unless
#: $CATALOG_REMOTE_DEADLINE says otherwise (as it does for reads).
DEADLINE = 120.0
_BACKOFF_FIRST, _BACKOFF_CAP = 0.1, 5.0
#: Seconds a write waits for the next bytes of an answer (a part upload's answer comes after
#: the server has stored the part: longer than a read's).
_EREMOTEIO = 121  # s3fs: a 500 InternalError
_TRANSIENT_ERRNOS = {errno.EBUSY, errno.EAGAIN, errno.ETIMEDOUT, errno.ECONNRESET, _EREMOTEIO}
_TRANSIENT_NAMES = {  # exception classes of botocore, aiohttp and fsspec, by name (all optional)
    "EndpointConnectionError",
    "ConnectionClosedError",
    "ReadTimeoutError",
    "ConnectTimeoutError",
    "ClientConnectionError",
    "ClientPayloadError",
    "ServerDisconnectedError",
    "FSTimeoutError",
    "IncompleteRead",
    "ResponseParserError",
}


def write_filesystem(where: RemoteDir) -> AbstractFileSystem:
    """The file system writes to `where` go through: the library's retries turned down, so
    that `retrying` decides (one per process and protocol, kept with the read ones in
    `remote._FILESYSTEMS`: forgetting those forgets this one too, so a process whose
    endpoint or credentials changed never writes through a stale client)."""
    if where.read_only:
        raise StorageError(
            f"{where} is read-only (an https data dir is a mirror to read from): prepare into "
            "s3:// or gs://, or a local dir, and serve that"
        )
    cache = remote._FILESYSTEMS
    key = (os.getpid(), f"write {where.protocol}")
    if key not in cache:
        where.filesystem()  # checks the extra is installed, with its pip install message
        import fsspec

        kind = scheme(where.protocol)
        options: dict[str, Any] = {"skip_instance_cache": True, **shared_options(where.protocol)}
        fs = fsspec.filesystem(where.protocol, **options, **kind.write_options())
        tries = kind.write_retries()
        if tries is not None:
            fs.retries = tries
        cache[key] = fs
    found: AbstractFileSystem = cache[key]
    return found


def _transient(error: BaseException) -> bool:
    if isinstance(error, (PermissionError, FileNotFoundError, FileExistsError, CatalogError)):
        return False
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    if isinstance(error, OSError) and error.errno in _TRANSIENT_ERRNOS:
        return True
    text = str(error)
    if any(code in text for code in ("SlowDown", "ServiceUnavailable", "InternalError")):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(error).__mro__)


def storage_error(where: RemoteDir | str, doing: str, error: BaseException) -> StorageError:
    """The one clear error for `error`, raised while `doing` something at `where`."""
    url = str(where)
    bucket = url.split("://", 1)[-1].split("/", 1)[0]
    kind = SCHEMES.get(url_scheme(url))
    names = {cls.__name__ for cls in type(error).__mro__}
    text = str(error)
    if "NoCredentialsError" in names or "Unable to locate credentials" in text:
        how = kind.credentials if kind is not None and kind.credentials else "give credentials"
        return StorageError(f"{url}: no credentials found while {doing}: {how}")
    if isinstance(error, FileNotFoundError) and no_such_bucket(error):
        return StorageError(
            f"{url}: the bucket {bucket!r} does not exist (while {doing}); create it, or give "
            "another --data-dir (or $CATALOG_DATA_DIR)"
        )
    if isinstance(error, PermissionError):
        return StorageError(
            f"{url}: access denied while {doing} ({text or 'no reason given'}); the "
            "credentials in use may not write to this bucket: check them (AWS_PROFILE, "
            "AWS_ACCESS_KEY_ID) and the bucket's policy"
        )
    if isinstance(error, StorageError):
        return error
    return StorageError(f"{url}: {doing} failed: {type(error).__name__}: {text}")


def retrying(where: RemoteDir | str, doing: str, call: Callable[[], T]) -> T:
    """`call()`, tried again after transient failures with capped, jittered exponential
    backoff until `DEADLINE` seconds ($CATALOG_REMOTE_DEADLINE) have passed; every failure as
    `storage_error`."""
    limit = deadline(DEADLINE)
    start = time.monotonic()
    attempt = 0
    while True:
        try:
            return call()
        except Exception as error:
            waited = time.monotonic() - start
            if not _transient(error):
                raise storage_error(where, doing, error) from None
            pause = min(_BACKOFF_CAP, _BACKOFF_FIRST * 2**attempt) * (0.5 + random.random() / 2)
            if waited + pause > limit:
                raise StorageError(
                    f"{where}: {doing} still failed after {attempt + 1} tries over "
                    f"{waited:.0f} s ({type(error).__name__}: {error}); the server is "
                    f"overloaded or unreachable: try again later (or allow longer: "
                    f"${REMOTE_DEADLINE_ENV}, {limit:g} s now)"
                ) from None
            time.sleep(pause)
            attempt += 1


def probe(folder: RemoteDir) -> None:
    """Check `folder` can be reached (its bucket exists, the credentials are accepted) and
    written to: a StorageError saying what is wrong, before any work."""
    fs = write_filesystem(folder)

    def look() -> None:
        fs.invalidate_cache(folder.path)
        try:
            fs.ls(folder.path, detail=False)
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise

    retrying(folder, "looking into the data dir", look)


def put_file(local: Path, where: RemoteDir, meta: dict[str, str]) -> None:
    """Upload `local` as the object `where`, with `meta` as its user metadata (one request
    for small files, a multipart upload for large ones: either way the object appears whole
    or not at all)."""
    fs = write_filesystem(where)
    kwargs = scheme(where.protocol).metadata_keyword(meta)
    retrying(where, "uploading", lambda: fs.put_file(str(local), where.path, **kwargs))


def put_bytes(data: bytes, where: RemoteDir) -> None:
    fs = write_filesystem(where)
    retrying(where, "writing", lambda: fs.pipe_file(where.path, data))


def create(data: bytes, where: RemoteDir) -> bool:
    """Write `data` as `where` only if no object is there (a conditional PUT: S3's
    If-None-Match, GCS's if-generation-match); whether it was written."""
    fs = write_filesystem(where)

    def attempt() -> bool:
        try:
            fs.pipe_file(where.path, data, mode="create")
        except FileExistsError:
            return False
        return True

    return retrying(where, "writing", attempt)


def read_bytes(where: RemoteDir) -> bytes | None:
    """The object's bytes, or None when there is none."""
    fs = write_filesystem(where)

    def read() -> bytes | None:
        try:
            data: bytes = fs.cat_file(where.path)
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise
            return None
        return data

    return retrying(where, "reading", read)


def metadata(where: RemoteDir) -> dict[str, str] | None:
    """The object's user metadata, or None when there is no such object."""
    fs = write_filesystem(where)

    def head() -> dict[str, str] | None:
        try:
            return scheme(where.protocol).head(fs, where.path)[1]
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise
            return None

    return retrying(where, "reading the metadata of", head)


def delete(paths: list[RemoteDir]) -> None:
    """Remove these objects (missing ones are fine)."""
    if not paths:
        return
    fs = write_filesystem(paths[0])
    for start in range(0, len(paths), 1000):  # S3 deletes at most 1000 keys per request
        batch = [p.path for p in paths[start : start + 1000]]

        def remove(batch: list[str] = batch) -> None:
            with contextlib.suppress(FileNotFoundError):
                fs.rm(batch)

        retrying(paths[0], "removing objects under", remove)
