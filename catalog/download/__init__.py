"""Downloads: every file a dataset needs, fetched once, verified always, cached by content.

The pipeline, one module per stage::

    config     DownloadConfig: mirrors, offline, manual dir, retries, timeouts, workers
    manager    DownloadManager: cache -> manual dir -> mirror dirs (linked, never copied)
               -> network, in parallel
    mirrors    where a file may be: <mirror>/<host>/<path of its URL> (the `wget -x` layout)
    http       the requests Session, and one URL into a part file with Range resume
    retry      which failures are worth another round, and the backoff between rounds
    resource   what a file must be (size, sha256), and the check every byte goes through
    manual     unverified manual files: taken from the manual dir only, measured and recorded
    cache      <download_dir>/<sha256[:16]>-<filename>, its JSON record, its lock, its .part
    progress   byte bars on a terminal, one line per file in CI
    report     the final error: every source tried, why each failed, what to do
    checksums  checksums.tsv (registered sizes and sha256) and content-addressed file names
    url_paths  what a URL's path decodes to, and whether a segment is unsafe
    extract    archives (zip, tar, gzip, ...) unpacked safely, once, within size limits

Errors: ChecksumError when every source delivered wrong bytes; DownloadError otherwise
(no source delivered, or offline with no local copy); SpecError for a file with no
registered checksum outside ``register_checksums`` mode. Each lists every source tried and
why it failed, and says where to put the file by hand; the download errors also carry a
``summary``, the same in one line (what ``catalog prepare`` prints without ``--verbose``).

This package is the only part of catalog that imports ``requests``, and only when its
manager or HTTP client is used: the names below load their module on first use (PEP 562), so
the spec and the formats can use `checksums` and `extract` without paying for the network stack.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from catalog.download.cache import CachedFile, cache_path
    from catalog.download.config import DownloadConfig, ProgressMode, resolve_config
    from catalog.download.http import USER_AGENT
    from catalog.download.manager import DownloadManager
    from catalog.download.resource import Resource

#: Where each name is defined.
_NAMES = {
    "CachedFile": "cache",
    "cache_path": "cache",
    "DownloadConfig": "config",
    "ProgressMode": "config",
    "resolve_config": "config",
    "USER_AGENT": "http",
    "DownloadManager": "manager",
    "Resource": "resource",
}


def __getattr__(name: str) -> _typing.Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'catalog.download' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"catalog.download.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "USER_AGENT",
    "CachedFile",
    "DownloadConfig",
    "DownloadManager",
    "ProgressMode",
    "Resource",
    "cache_path",
    "resolve_config",
]
