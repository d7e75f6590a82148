"""Where a file can come from: user mirrors first, then the file's own URLs.

A mirror is a base URL or a local directory holding files in the layout ``wget -x``
produces, ``<mirror>/<host>/<path of the original URL>``::

    >>> mirror_url("https://mirror.example/data", "http://yann.lecun.com/exdb/mnist/t.gz")
    'https://mirror.example/data/yann.lecun.com/exdb/mnist/t.gz'

A URL with a query (Google Drive's ``uc?export=download&id=...``) is looked up in a mirror
directory as ``<host>/<path>?<query>`` first (URLs that differ only in their query are
distinct files), then as ``<host>/<path>``.

Local sources (mirror directories, ``file://`` URLs) are listed before remote ones, so a
mirror directory answers without the network (and in offline mode).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from catalog.download.url_paths import path_segments

__all__ = ["Source", "check_mirror", "local_miss", "mirror_url", "sources"]

_REMOTE = ("http", "https")


@dataclass(frozen=True)
class Source:
    """One place to get a file from: a URL (``path`` None) or a local file."""

    where: str  # the URL, or the local path as text (for messages)
    path: Path | None = None
    #: The mirror dir `path` is in (None for other sources), to say why a file is not there.
    mirror: Path | None = None

    @property
    def local(self) -> bool:
        return self.path is not None


def check_mirror(mirror: str) -> str:
    """Return ``mirror`` if it is an http(s):// URL, or a file:// URL or path of an existing
    directory; else ValueError saying what it is instead."""
    scheme = urlsplit(mirror).scheme.lower()
    if not mirror.strip() or (len(scheme) > 1 and scheme not in (*_REMOTE, "file")):
        raise ValueError(
            f"mirror {mirror!r}: expected an http(s):// or file:// URL or a local directory"
        )
    return mirror


def local_miss(source: Source) -> str:
    """Why a local source has no file: a directory where the file should be; for a mirror dir,
    whether the dir itself is missing or a file, or the file sits there in a flat layout
    instead of <host>/<path>."""
    mirror = source.mirror
    if source.path is not None and source.path.is_dir():
        layout = " (<mirror>/<host>/<path of the URL>)" if mirror is not None else ""
        return (
            "is a directory; expected the downloaded file itself at this path"
            f"{layout}, as the URL serves it (not its extracted contents)"
        )
    if mirror is None:
        return "not found"
    if not mirror.exists():
        return f"not found: the mirror dir {mirror} does not exist"
    if not mirror.is_dir():
        return f"not found: the mirror {mirror} is a file, not a directory"
    assert source.path is not None
    flat = mirror / source.path.name
    if flat.is_file():
        return (
            f"not found; {flat} is there, but a mirror dir holds files as "
            f"<mirror>/<host>/<path of the URL> (the wget -x layout): move it to {source.path}"
        )
    return "not found"


def mirror_url(mirror: str, url: str) -> str:
    """The URL of ``url``'s copy on a remote ``mirror`` (``<mirror>/<host>/<path>``)."""
    return f"{mirror.rstrip('/')}/{_relative(url)}"


def sources(urls: Sequence[str], mirrors: Iterable[str]) -> list[Source]:
    """Every place to try for a file with these ``urls``: local ones, then remote ones."""
    found: list[Source] = []
    for mirror in mirrors:
        directory = _local_path(mirror)
        for url in urls:
            if urlsplit(url).scheme.lower() not in _REMOTE or _relative(url) is None:
                continue
            if directory is None:
                found.append(Source(mirror_url(mirror, url)))
                continue
            for relative in (_with_query(url), _relative(url)):
                if relative is None:
                    continue
                path = directory.joinpath(*unquote(relative).split("/"))
                if not _inside(path, directory):  # _relative refuses such paths: a backstop
                    continue
                found.append(Source(str(path), path, directory))
    for url in urls:
        local = _local_path(url) if urlsplit(url).scheme.lower() == "file" else None
        found.append(Source(str(local), local) if local else Source(url))
    unique = list(dict.fromkeys(found))
    return [s for s in unique if s.local] + [s for s in unique if not s.local]


def _relative(url: str) -> str | None:
    """``<host>/<path>`` of a URL, or None if it has no host, no path or an unsafe segment
    (see :func:`path_segments`)."""
    host = urlsplit(url).netloc.rpartition("@")[2]
    segments = path_segments(url)
    if not host or not segments:
        return None
    return "/".join([host, *segments])


def _with_query(url: str) -> str | None:
    """``<host>/<path>?<query>`` of a URL with a query (Google Drive's ``uc?id=...``: URLs
    that differ only there are distinct files), looked up in a mirror dir before
    ``<host>/<path>``; None without a query, or with one holding a path separator.

    >>> _with_query("https://drive.google.com/uc?export=download&id=0Bz8")
    'drive.google.com/uc?export=download&id=0Bz8'
    """
    query = urlsplit(url).query
    relative = _relative(url)
    if not query or relative is None or any(c in unquote(query) for c in "/\\\0"):
        return None
    return f"{relative}?{query}"


def _inside(path: Path, directory: Path) -> bool:
    """Whether `path` names something inside `directory`, lexically (``..`` collapsed)."""
    root = os.path.normpath(Path(directory).absolute())
    return os.path.normpath(Path(path).absolute()).startswith(root + os.sep)


def _local_path(mirror: str) -> Path | None:
    """The local directory (or file, for a file:// URL) named, or None for http(s)."""
    parts = urlsplit(mirror)
    scheme = parts.scheme.lower()
    if scheme in _REMOTE:
        return None
    if scheme == "file":
        return Path(url2pathname(parts.path))
    return Path(mirror).expanduser()
