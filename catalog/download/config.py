"""DownloadConfig: how a dataset's files are fetched, checked when built.

Fields left as None are filled by :func:`resolve_config`, argument > environment > default,
through :mod:`catalog.storage.paths`: ``download_dir`` ($CATALOG_DOWNLOAD_DIR, else
``<data dir>/downloads``), ``mirrors`` ($CATALOG_MIRRORS, whitespace-separated), ``offline``
($CATALOG_OFFLINE=1), ``manual_dir`` (``<download dir>/manual``) and ``min_rate``
($CATALOG_MIN_DOWNLOAD_RATE, else 32 KiB/s; see :mod:`catalog.download.deadline`).

Every configuration bounds the time one file can take (no field switches it off): a server
that never answers fails after two attempts of ``connect_timeout`` + ``read_timeout`` (about
30 s), one that stops sending after ``read_timeout`` per attempt, one that drips (under
``min_rate`` / 8 for ``read_timeout`` seconds) after two such attempts, and one that sends too
slowly over all at the file's deadline (60 s + size / ``min_rate``, over every URL and retry).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from catalog.download.deadline import min_rate
from catalog.download.mirrors import check_mirror
from catalog.storage import paths

__all__ = ["DownloadConfig", "ProgressMode", "resolve_config"]

#: ``auto``: byte bars on a terminal, one line per file otherwise (CI); ``none``: silent.
ProgressMode = Literal["auto", "bars", "lines", "none"]


@dataclass(frozen=True)
class DownloadConfig:
    """How files are fetched and where they are kept.

    >>> DownloadConfig(offline=True, mirrors=["/srv/mirror"]).mirrors
    ('/srv/mirror',)
    """

    download_dir: Path | None = None  # the cache; None: resolved (see the module docstring)
    mirrors: tuple[str, ...] | None = None  # base URLs or directories, tried before the URLs
    offline: bool | None = None  # never touch the network: cache, mirror dirs, manual dir
    manual_dir: Path | None = None  # files placed by hand, by original file name
    register_checksums: bool = False  # record new or changed files' size and sha256
    max_workers: int = 4  # files of one dataset downloaded at once
    retries: int = 3  # extra rounds over a file's URLs after transient failures
    backoff: float = 0.5  # seconds before the first retry round; doubles each round
    max_backoff: float = 30.0  # cap on one wait, Retry-After included
    connect_timeout: float = 10.0  # seconds to establish a connection
    #: seconds without a byte, or under min_rate / 8 on average, before a transfer is stalled
    read_timeout: float = 15.0
    #: Bytes/s a file must average: its deadline is 60 s + size / min_rate (None: resolved).
    min_rate: float | None = None
    progress: ProgressMode = "auto"

    def __post_init__(self) -> None:
        for name in ("download_dir", "manual_dir"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(os.fspath(value)).expanduser())
        if isinstance(self.mirrors, str):
            raise ValueError("DownloadConfig.mirrors must be a sequence of mirrors, not a string")
        if self.mirrors is not None:
            object.__setattr__(self, "mirrors", tuple(check_mirror(m) for m in self.mirrors))
        _check(self.max_workers >= 1, f"max_workers must be >= 1, got {self.max_workers}")
        _check(self.retries >= 0, f"retries must be >= 0, got {self.retries}")
        _check(self.backoff >= 0, f"backoff must be >= 0, got {self.backoff}")
        _check(self.max_backoff >= self.backoff, "max_backoff must be >= backoff")
        if self.min_rate is not None:
            _check(self.min_rate > 0, f"min_rate must be > 0 bytes/s, got {self.min_rate}")
        for name in ("connect_timeout", "read_timeout"):
            _check(getattr(self, name) > 0, f"{name} must be > 0, got {getattr(self, name)}")
        modes = get_args(ProgressMode)
        _check(self.progress in modes, f"progress must be one of {modes}, got {self.progress!r}")


def _check(condition: bool, problem: str) -> None:
    if not condition:
        raise ValueError(f"DownloadConfig: {problem}")


def resolve_config(
    config: DownloadConfig | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    download_dir: str | os.PathLike[str] | None = None,
) -> DownloadConfig:
    """``config`` with every None filled: argument > environment > default.

    ``download_dir`` (an argument of its own, e.g. ``--download-dir``) overrides the config's.
    Raises ValueError for a malformed environment variable.
    """
    config = config or DownloadConfig()
    downloads = paths.download_dir(
        download_dir if download_dir is not None else config.download_dir, data_dir
    )
    return dataclasses.replace(
        config,
        download_dir=downloads,
        mirrors=paths.mirrors(config.mirrors),
        offline=paths.offline(config.offline),
        manual_dir=paths.manual_dir(config.manual_dir, downloads),
        min_rate=min_rate(config.min_rate),
    )
