"""Every URL scheme catalog keeps data dirs in, and all that differs between them, in one table
(as fsspec's registry maps a protocol to its implementation): the store class, the library
fsspec needs and the extra that installs it, whether it is read-only, how its requests are
bounded in time, how objects carry user metadata, and how a user gives credentials.

A new object store (Azure's ``az://``, say) is one `Scheme` here; the stores, the bucket
writers and readers ask this table, never ``protocol == "s3"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CONNECT_TIMEOUT", "READ_TIMEOUT", "SCHEMES", "WRITE_TIMEOUT", "Scheme", "scheme"]

#: Seconds to connect, and to wait for the next bytes of an answer: a server that stops
#: answering fails the attempt (`catalog.storage.remote_reads` retries it, to a deadline).
CONNECT_TIMEOUT, READ_TIMEOUT = 10.0, 30.0
#: Seconds to wait for the next bytes of an answer to an upload (a part takes longer).
WRITE_TIMEOUT = 60.0
#: How often a client library tries each write request (within half a second) before
#: catalog's own retries (`catalog.storage.bucket_io`) do.
LIBRARY_WRITE_TRIES = 3

_BUCKET_STORE = "catalog.storage.bucket_store:BucketStore"


@dataclass(frozen=True)
class Scheme:
    """One URL scheme (see the module docstring). The methods give the options of fsspec's
    file system for it (`read_options`, `write_options`), the keyword carrying an upload's
    user metadata (`metadata_keyword`), and read an object's size and metadata (`head`)."""

    name: str
    #: "module:Class" of its `catalog.storage.data_dir.Store`
    store: str
    #: (the library fsspec needs for it, the catalog extra that installs it); None: local
    library: tuple[str, str] | None = None
    read_only: bool = False
    #: how a user gives credentials, said when none are found
    credentials: str = ""
    #: options of the file system for reads: bounded requests, few library retries
    read: dict[str, Any] = field(default_factory=dict)

    def read_options(self) -> dict[str, Any]:
        """Options bounding every read request (no request waits forever; the library's own
        retries stay few, so that catalog's deadline holds); ``retries``: the file system's
        own retry count to set, when it has one."""
        return dict(self.read)

    def write_options(self) -> dict[str, Any]:
        """Options of the file system writes go through (catalog retries writes itself)."""
        return {}

    def write_retries(self) -> int | None:
        """The file system's own tries per write request to set, when it has such a count."""
        return None

    def session(self) -> Any:
        """What every file system of this scheme in a process shares (None: nothing)."""
        return None

    def metadata_keyword(self, meta: dict[str, str]) -> dict[str, Any]:
        return {"metadata": meta}

    def head(self, fs: Any, path: str) -> tuple[int, dict[str, str]]:
        """The object's size and user metadata (FileNotFoundError when there is none)."""
        info = fs.info(path)
        return int(info["size"]), dict(info.get("metadata") or {})


class _S3(Scheme):
    def write_options(self) -> dict[str, Any]:
        # botocore's own retries off, and its timeouts those of reads: no request waits
        # forever (botocore's default read timeout is 60 s)
        timeouts = {"connect_timeout": CONNECT_TIMEOUT, "read_timeout": WRITE_TIMEOUT}
        return {"config_kwargs": {**timeouts, "retries": {"max_attempts": 1}}}

    def write_retries(self) -> int | None:
        return LIBRARY_WRITE_TRIES  # s3fs's own: per request (a multipart part, say)

    def session(self) -> Any:
        """One botocore session: with one per file system, botocore parsed its S3 service
        model (some MB of JSON) for each, about 0.6 s of every command."""
        from aiobotocore.session import AioSession

        return AioSession()

    def metadata_keyword(self, meta: dict[str, str]) -> dict[str, Any]:
        return {"Metadata": meta}

    def head(self, fs: Any, path: str) -> tuple[int, dict[str, str]]:
        bucket, key, _ = fs.split_path(path)
        answer = fs.call_s3("head_object", Bucket=bucket, Key=key)
        return int(answer["ContentLength"]), dict(answer.get("Metadata") or {})


class _HTTP(Scheme):
    def read_options(self) -> dict[str, Any]:
        import aiohttp

        timeout = aiohttp.ClientTimeout(sock_connect=CONNECT_TIMEOUT, sock_read=READ_TIMEOUT)
        return {"client_kwargs": {"timeout": timeout}}


_AWS = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials "
    "(or run 'aws configure'); for an S3-compatible server also AWS_ENDPOINT_URL"
)
_GOOGLE = "run 'gcloud auth application-default login' or set GOOGLE_APPLICATION_CREDENTIALS"
_S3_READS = {
    "config_kwargs": {
        "connect_timeout": CONNECT_TIMEOUT,
        "read_timeout": READ_TIMEOUT,
        "retries": {"max_attempts": 3, "mode": "standard"},
    },
    "retries": 2,
}
_LOCAL = Scheme("", "catalog.storage.local_store:LocalStore")
_S3_SCHEME = _S3("s3", _BUCKET_STORE, ("s3fs", "s3"), credentials=_AWS, read=_S3_READS)
_GCS_SCHEME = Scheme(
    "gs", _BUCKET_STORE, ("gcsfs", "gcs"), credentials=_GOOGLE, read={"timeout": READ_TIMEOUT}
)
_HTTP_SCHEME = _HTTP("https", _BUCKET_STORE, ("aiohttp", "http"), read_only=True)

#: URL scheme -> its `Scheme` ("" is a local path).
SCHEMES: dict[str, Scheme] = {
    "": _LOCAL,
    "file": _LOCAL,
    "s3": _S3_SCHEME,
    "gs": _GCS_SCHEME,
    "gcs": _GCS_SCHEME,
    "http": _HTTP_SCHEME,
    "https": _HTTP_SCHEME,
}


def scheme(protocol: str) -> Scheme:
    """The `Scheme` of `protocol` (KeyError for one catalog has no store of)."""
    return SCHEMES[protocol.lower()]
