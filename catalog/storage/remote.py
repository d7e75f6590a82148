"""Data dirs that are URLs: ``s3://bucket/prefix``, ``gs://bucket/prefix`` and read-only
``https://host/prefix``, through one file-system layer (fsspec with s3fs / gcsfs / aiohttp).

Credentials and endpoints come from each ecosystem's standard places, never from catalog's own
configuration: for S3 the AWS environment variables and config files (``AWS_ENDPOINT_URL`` for
S3-compatible servers such as MinIO), for GCS the Google default credentials.

A bucket follows the same publish protocol as a local data dir (`catalog.storage.generations`),
with a pointer object in place of the symlink, because object stores have no rename::

    <name>[/<config>]/<version>.gen-<id>/   shards + dataset_info.json, immutable
    <name>[/<config>]/<version>.pointer      {"generation": "<version>.gen-<id>"}, written last

An https data dir may also be a static mirror of a local data dir (a web server that follows the
``<version>`` symlink): with no pointer object there, ``<version>/`` itself is the generation.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.errors import MissingDependencyError, StorageError
from catalog.storage.schemes import SCHEMES, scheme

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

__all__ = [
    "EXTRAS",
    "DataDir",
    "RemoteDir",
    "is_url",
    "no_such_bucket",
    "pointer_name",
    "read_pointer",
    "remote_dir",
    "shared_options",
    "url_scheme",
    "write_pointer",
]

# scheme -> (the module fsspec needs for it, the catalog extra that installs it)
EXTRAS: dict[str, tuple[str, str]] = {n: s.library for n, s in SCHEMES.items() if s.library}
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://(.*)$")
POINTER_SUFFIX = ".pointer"


def url_scheme(value: object) -> str:
    """The scheme of `value` when it is a URL (``s3`` for ``s3://b/p``, lower-cased), else
    ``""`` (a local path): the one rule for telling them apart."""
    match = _URL.match(value) if isinstance(value, str) else None
    return match.group(1).lower() if match else ""


def is_url(value: object) -> bool:
    """Whether `value` names a data dir by URL (``scheme://...``) rather than a local path."""
    return bool(url_scheme(value))


@dataclass(frozen=True)
class RemoteDir:
    """A directory in object storage (or on a web server), named by its URL."""

    url: str  # normalised: no trailing slash

    @property
    def protocol(self) -> str:
        return self.url.split("://", 1)[0].lower()

    @property
    def read_only(self) -> bool:
        return scheme(self.protocol).read_only

    @property
    def path(self) -> str:
        """The path fsspec uses for it (``bucket/prefix`` for s3/gs, the URL for http)."""
        if self.read_only:
            return self.url
        return self.url.split("://", 1)[1]

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    def filesystem(self) -> AbstractFileSystem:
        """fsspec's file system for this URL (fsspec caches one instance per process)."""
        return _filesystem(self.protocol)

    def joinpath(self, *parts: str) -> RemoteDir:
        tail = "/".join(p.strip("/") for p in parts if p.strip("/"))
        return RemoteDir(f"{self.url}/{tail}" if tail else self.url)

    def __truediv__(self, part: str) -> RemoteDir:
        return self.joinpath(part)

    def __str__(self) -> str:
        return self.url

    def __fspath__(self) -> str:  # so error messages and f-strings show the URL
        return self.url


DataDir = Path | RemoteDir


def remote_dir(url: str) -> RemoteDir:
    """`url` checked: a scheme catalog reads, a bucket or host, its extra installed."""
    match = _URL.match(url.strip())
    if match is None:
        raise StorageError(f"{url!r} is not a URL (scheme://bucket/prefix)")
    scheme, rest = match.group(1).lower(), match.group(2).strip("/")
    if scheme not in EXTRAS:
        known = ", ".join(sorted({f"{s.name}://" for s in SCHEMES.values() if s.library}))
        raise StorageError(f"{url}: catalog does not read {scheme}:// data dirs (it reads {known})")
    if not rest:
        raise StorageError(f"{url}: no bucket or host after {scheme}://")
    _require_extra(scheme)
    return RemoteDir(f"{scheme}://{rest}")


def _require_extra(scheme: str) -> None:
    module, extra = EXTRAS[scheme]
    import importlib.util

    for name in ("fsspec", module):
        if importlib.util.find_spec(name) is None:
            raise MissingDependencyError(
                f"{scheme}:// data dirs need {name}: pip install 'catalog[{extra}]'"
            )


_FILESYSTEMS: dict[tuple[int, str], Any] = {}


def _filesystem(protocol: str) -> AbstractFileSystem:
    key = (os.getpid(), protocol)  # a forked child makes its own (event loops do not fork)
    if key not in _FILESYSTEMS:
        _require_extra(protocol)
        import fsspec

        options = _timeouts(protocol)
        retries = options.pop("retries", None)
        options.update(shared_options(protocol))
        fs = fsspec.filesystem(protocol, skip_instance_cache=True, **options)
        if retries is not None:
            fs.retries = retries  # s3fs's and gcsfs's own retries: few (see `_timeouts`)
        _FILESYSTEMS[key] = fs
    found: AbstractFileSystem = _FILESYSTEMS[key]
    return found


def shared_options(protocol: str) -> dict[str, Any]:
    """What every file system of `protocol` in this process shares (`Scheme.session`: for
    S3, one botocore session; a command opens two file systems, reads with botocore's
    retries and writes with catalog's, `catalog.storage.bucket_io`)."""
    key = (os.getpid(), f"{protocol} session")  # beside the file systems: forgotten with them
    if key not in _FILESYSTEMS:
        _FILESYSTEMS[key] = scheme(protocol).session()
    session = _FILESYSTEMS[key]
    return {} if session is None else {"session": session}


def _timeouts(protocol: str) -> dict[str, Any]:
    """The file-system layer's options that bound every read request (`Scheme.read_options`)."""
    return scheme(protocol).read_options()


def pointer_name(version: str) -> str:
    return f"{version}{POINTER_SUFFIX}"


def read_pointer(dataset_dir: RemoteDir, version: str) -> str | None:
    """The generation ``<version>.pointer`` names in `dataset_dir`, or None without one."""
    record = pointer_record(dataset_dir, version)
    return None if record is None else record["generation"]


def no_such_bucket(error: BaseException) -> bool:
    """Whether `error` says the bucket itself is missing (S3's NoSuchBucket, GCS's "bucket does
    not exist"), not only a key under it: the key's path may contain the word "bucket"."""
    text = str(error).lower()
    return "nosuchbucket" in text or "bucket does not exist" in text


def pointer_record(dataset_dir: RemoteDir, version: str) -> dict[str, Any] | None:
    """``<version>.pointer`` in `dataset_dir`: ``{"generation": ..., "previous": ...}`` (the
    generation it replaced, None for the first; absent in pointers of older catalogs), or None
    without one."""
    fs = dataset_dir.filesystem()
    try:
        data = fs.cat_file((dataset_dir / pointer_name(version)).path)
    except FileNotFoundError as error:
        if no_such_bucket(error):  # no bucket at all: not "no pointer" (s3fs says so)
            raise
        return None
    try:
        record = json.loads(data)
        generation = record["generation"]
    except (ValueError, KeyError, TypeError) as error:
        raise StorageError(
            f"{dataset_dir / pointer_name(version)} is not a catalog pointer "
            f"({error}): remove it and prepare again"
        ) from error
    if not isinstance(generation, str) or "/" in generation or not generation:
        raise StorageError(f"{dataset_dir / pointer_name(version)} names no generation")
    return dict(record)


def write_pointer(
    dataset_dir: RemoteDir, version: str, generation: str, previous: str | None = None
) -> None:
    """Publish `generation`: one small object, written last (a PUT is atomic in S3 and GCS),
    naming also the generation it replaces (`previous`), which the grace rule keeps."""
    if dataset_dir.read_only:
        raise StorageError(f"{dataset_dir} is read-only: prepare into s3:// or gs:// instead")
    fs = dataset_dir.filesystem()
    body = json.dumps({"generation": generation, "previous": previous}).encode()
    fs.pipe_file((dataset_dir / pointer_name(version)).path, body)
