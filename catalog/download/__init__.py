"""Downloads: every file a dataset needs, fetched once, verified always, cached by content.

The pipeline, one module per stage::

    config     DownloadConfig: mirrors, offline, manual dir, retries, timeouts, workers
    manager    DownloadManager: cache -> manual dir -> mirror dirs -> network, in parallel
    mirrors    where a file may be: <mirror>/<host>/<path of its URL> (the `wget -x` layout)
    http       the requests Session, and one URL into a part file with Range resume
    retry      which failures are worth another round, and the backoff between rounds
    resource   what a file must be (size, sha256), and the check every byte goes through
    cache      <download_dir>/<sha256[:16]>-<filename>, its JSON record, its lock, its .part
    progress   byte bars on a terminal, one line per file in CI
    report     the final error: every source tried, why each failed, what to do

Errors: ChecksumError when every source delivered wrong bytes; DownloadError otherwise
(no source delivered, or offline with no local copy); SpecError for a file with no
registered checksum outside ``register_checksums`` mode. Each lists every source tried and
why it failed, and says where to put the file by hand.

This package is the only part of catalog that imports ``requests``.
"""

from catalog.download.cache import CachedFile, cache_path
from catalog.download.config import DownloadConfig, ProgressMode, resolve_config
from catalog.download.http import USER_AGENT
from catalog.download.manager import DownloadManager
from catalog.download.resource import Resource

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
