"""Reading objects of a remote data dir (`catalog.storage.remote`): bounded, retried, checked.

Every read goes through `attempt`, which turns what the file-system layer raises into one
CatalogError naming the object and the fix, and retries what is transient (a dropped
connection, a short body, 503/SlowDown, a timeout) with capped exponential backoff until a
deadline (`DEADLINE`, ``$CATALOG_REMOTE_DEADLINE`` seconds): never a hang, never a retry loop
without end. The file-system layer's own timeouts (`catalog.storage.remote`) bound each
attempt.

An object is read at the version it had when it was first seen (`RemoteObject.etag`): range
reads send ``If-Match``, so an object replaced under a reader is refused by the server (412)
instead of mixing two versions, and `ObjectChangedError` says so plainly. Whole-object reads
(the shard cache) are checked against the sha256 recorded at prepare time instead.
"""

from __future__ import annotations

import errno
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from catalog.errors import CatalogError, NotPreparedError, ShardError, StorageError
from catalog.storage.environment import REMOTE_DEADLINE_ENV
from catalog.storage.remote import RemoteDir, read_pointer
from catalog.storage.schemes import scheme

__all__ = [
    "DEADLINE_ENV",
    "ObjectChangedError",
    "RemoteObject",
    "attempt",
    "cat",
    "copy_to",
    "deadline",
    "list_objects",
    "open_object",
    "read_ranges",
    "resolve_generation",
    "stat",
]

DEADLINE_ENV = REMOTE_DEADLINE_ENV
DEADLINE = 60.0  # seconds a read may spend retrying before it gives up
_FIRST_BACKOFF, _MAX_BACKOFF = 0.1, 5.0
_CONCURRENCY = 16  # range requests in flight per process
T = TypeVar("T")


class ObjectChangedError(ShardError):
    """An object of a generation changed after the reader first saw it."""


class _Transient(Exception):
    """A failure worth another attempt (see `attempt`)."""


def deadline(default: float | None = None) -> float:
    """Seconds a bucket request may spend retrying: $CATALOG_REMOTE_DEADLINE, else `default`
    (a read's: `DEADLINE`; `catalog.storage.bucket_io` passes a write's)."""
    value = os.environ.get(DEADLINE_ENV, "")
    try:
        seconds = float(value) if value else (DEADLINE if default is None else default)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise StorageError(f"${DEADLINE_ENV}={value!r} is not a positive number of seconds")
    return seconds


@dataclass(frozen=True)
class RemoteObject:
    """One object of a remote data dir, as it was when first seen."""

    where: RemoteDir
    size: int
    etag: str | None


def attempt(call: Callable[[], T], where: RemoteDir, what: str = "read") -> T:
    """`call()`, retried while it fails transiently, until the deadline; every other failure
    (and the last transient one) as one CatalogError about `where`."""
    limit = time.monotonic() + deadline()
    backoff = _FIRST_BACKOFF
    while True:
        try:
            return call()
        except CatalogError:
            raise
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            translated = _translate(error, where, what)
            if not isinstance(translated, _Transient):
                raise translated from None
            if time.monotonic() + backoff > limit:
                raise StorageError(
                    f"{where}: the {what} kept failing for {deadline():.0f} s ({translated}); "
                    f"the server is overloaded or unreachable: try again later (raise "
                    f"${DEADLINE_ENV} to wait longer)"
                ) from None
            time.sleep(backoff * (0.5 + random.random() / 2))
            backoff = min(backoff * 2, _MAX_BACKOFF)


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while error is not None and error not in seen and len(seen) < 8:
        seen.append(error)
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return seen


def _translate(error: BaseException, where: RemoteDir, what: str) -> Exception:
    """One CatalogError (or `_Transient`) for what the file-system layer raised."""
    chain = _chain(error)
    text = " | ".join(f"{type(e).__name__}: {e}" for e in chain)
    names = {type(e).__name__ for e in chain}
    status = next((s for e in chain if isinstance(s := getattr(e, "status", None), int)), None)
    host = where.url.split("://", 1)[1].split("/", 1)[0]
    if "NoCredentialsError" in names or "PartialCredentialsError" in names:
        how = scheme(where.protocol).credentials
        return StorageError(f"{where}: no credentials for {where.protocol}:// ({how})")
    if "PreconditionFailed" in text or status == 412:
        return ObjectChangedError(
            f"{where} changed after this data source first read it (the server no longer "
            "has the version it started with): the dataset was prepared again or its files "
            "were replaced; make a new data source (catalog.data_source(...)) to read the "
            "new generation"
        )
    if "bucket does not exist" in text or "NoSuchBucket" in text:
        return StorageError(
            f"{where}: bucket {host!r} does not exist"
            + (
                f" at {os.environ['AWS_ENDPOINT_URL']}"
                if os.environ.get("AWS_ENDPOINT_URL")
                else ""
            )
            + ": check the data dir URL (and AWS_ENDPOINT_URL for an S3-compatible server)"
        )
    if isinstance(error, PermissionError) or status in (401, 403) or "AccessDenied" in text:
        return StorageError(
            f"{where}: access denied ({chain[-1]}): the credentials in use may not {what} "
            "it; check them (AWS_PROFILE / AWS_ACCESS_KEY_ID, or the Google default "
            "credentials) and the bucket's policy"
        )
    if isinstance(error, FileNotFoundError) or status in (404, 410):
        return NotPreparedError(f"{where} does not exist")
    if isinstance(error, ValueError) and "range requests" in str(error):
        return StorageError(
            f"{where}: the server ignores byte ranges (Range requests): read this data dir "
            "through the shard cache (remote_read='cache')"
        )
    transient = (
        (status is not None and (status >= 500 or status == 429))
        or "SlowDown" in text
        or (isinstance(error, OSError) and error.errno in (errno.EBUSY, errno.EAGAIN))
        or isinstance(error, (ConnectionError, TimeoutError, EOFError, _ShortRead))
        or bool(names & _TRANSIENT_NAMES)
    )
    if transient:
        return _Transient(chain[-1] if str(chain[-1]) else type(chain[-1]).__name__)
    return StorageError(f"{where}: the {what} failed ({type(error).__name__}: {error})")


_TRANSIENT_NAMES = {
    "ClientPayloadError",
    "ServerDisconnectedError",
    "ClientConnectionError",
    "ClientConnectorError",
    "ClientOSError",
    "ContentLengthError",
    "ResponseStreamingError",
    "IncompleteReadError",
    "IncompleteRead",
    "ReadTimeoutError",
    "ConnectTimeoutError",
    "EndpointConnectionError",
    "ConnectionClosedError",
    "ServerTimeoutError",
    "TimeoutError",
}


class _ShortRead(Exception):
    """A body shorter than the range asked for (a connection dropped mid-transfer)."""


def resolve_generation(dataset_dir: RemoteDir, version: str) -> RemoteDir:
    """The generation to read for `version` in `dataset_dir`, resolved once: the one its
    pointer names, else ``<version>/`` itself (a static https mirror of a local data dir,
    whose web server follows the ``<version>`` symlink; whether a dataset is there shows
    when its dataset_info.json is read)."""
    generation = attempt(lambda: read_pointer(dataset_dir, version), dataset_dir / version)
    return dataset_dir / (generation if generation is not None else version)


def stat(where: RemoteDir) -> RemoteObject:
    """`where`'s size and version (ETag) now."""
    fs = where.filesystem()
    info: dict[str, Any] = attempt(lambda: fs.info(where.path), where, "read")
    if info.get("type") == "directory" or info.get("size") is None:
        raise NotPreparedError(f"{where} does not exist")
    return RemoteObject(where, int(info["size"]), _etag(info))


def _etag(info: dict[str, Any]) -> str | None:
    value = info.get("ETag") or info.get("etag") or info.get("e_tag")
    return str(value) if value else None


def list_objects(folder: RemoteDir) -> dict[str, RemoteObject] | None:
    """The objects directly in `folder` by name, with their sizes and ETags (one listing
    request); None for an http(s) data dir, which has no listing to rely on."""
    if folder.read_only:
        return None
    fs = folder.filesystem()
    entries: list[dict[str, Any]] = attempt(
        lambda: fs.ls(folder.path, detail=True, refresh=True), folder, "list"
    )
    found = {}
    for entry in entries:
        if entry.get("type") == "file":
            name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
            found[name] = RemoteObject(folder / name, int(entry["size"]), _etag(entry))
    return found


def cat(where: RemoteDir) -> bytes:
    """The whole (small) object `where`."""
    fs = where.filesystem()
    data: bytes = attempt(lambda: fs.cat_file(where.path), where, "read")
    return data


def copy_to(obj: RemoteObject, out: IO[bytes], chunk: int = 16 << 20, in_flight: int = 4) -> None:
    """Stream `obj` into `out` (at its current position) at the version `obj` names
    (If-Match): `chunk`-byte ranges, up to `in_flight` of them requested at once and written
    in order as each arrives while the next ones are fetched (a sliding window: memory stays
    under chunk * in_flight), each retried on its own after a dropped connection."""
    handle = open_object(obj)
    pending: deque[Future[bytes]] = deque()
    try:
        for start in range(0, obj.size, chunk):
            span = (start, min(start + chunk, obj.size))
            pending.append(_pool().submit(_read_span, handle, obj, span))
            if len(pending) >= in_flight:
                out.write(pending.popleft().result())
        while pending:
            out.write(pending.popleft().result())
    finally:
        for future in pending:  # an error (or Ctrl-C) stops the rest
            future.cancel()


def open_object(obj: RemoteObject) -> Any:
    """A file handle of `obj` for range reads at its version (fsspec's S3File / HTTPFile:
    s3fs sends If-Match with the ETag it saw; for http(s) we send it)."""
    fs = obj.where.filesystem()
    kwargs: dict[str, Any] = {"block_size": 1 << 20, "cache_type": "none"}
    if obj.where.read_only:
        kwargs["size"] = obj.size
        if obj.etag:
            kwargs["headers"] = {"If-Match": obj.etag}
    handle = attempt(lambda: fs.open(obj.where.path, "rb", **kwargs), obj.where, "read")
    etag = _etag(getattr(handle, "details", {})) if not obj.where.read_only else obj.etag
    if obj.etag and etag and etag != obj.etag:
        raise _translate(OSError("PreconditionFailed"), obj.where, "read")
    return handle


def _fetch(handle: Any, obj: RemoteObject, start: int, stop: int) -> bytes:
    data: bytes = handle._fetch_range(start, stop)  # fsspec's AbstractBufferedFile hook
    if len(data) != stop - start:
        raise _ShortRead(f"{len(data)} of {stop - start} bytes of the range arrived")
    return data


def _read_span(handle: Any, obj: RemoteObject, span: tuple[int, int]) -> bytes:
    """The bytes of one ``(start, stop)`` span of `obj`, retried to the deadline."""
    return attempt(lambda: _fetch(handle, obj, span[0], span[1]), obj.where, "read")


def read_ranges(handle: Any, obj: RemoteObject, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    """The bytes of each ``(start, stop)`` span of `obj`, requests in flight together."""
    if len(spans) == 1:
        return [_read_span(handle, obj, spans[0])]
    return list(_pool().map(lambda span: _read_span(handle, obj, span), spans))


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """This process's pool of request threads (a forked child makes its own)."""
    pid = os.getpid()
    with _POOLS_LOCK:
        pool = _POOLS.get(pid)
        if pool is None:
            pool = _POOLS[pid] = ThreadPoolExecutor(_CONCURRENCY, "catalog-range")
        return pool


def _after_fork() -> None:
    global _POOLS_LOCK
    _POOLS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)
