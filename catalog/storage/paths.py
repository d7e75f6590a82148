"""Where catalog keeps things and where files come from: resolved in one place, argument >
environment > default (platformdirs)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from catalog.errors import StorageError
from catalog.storage.environment import (
    DATA_DIR_ENV,
    DOWNLOAD_DIR_ENV,
    MIN_RATE_ENV,
    MIRRORS_ENV,
    OFFLINE_ENV,
)
from catalog.storage.remote import RemoteDir, is_url

__all__ = [
    "DATA_DIR_ENV",
    "DOWNLOAD_DIR_ENV",
    "MIN_RATE_ENV",
    "MIRRORS_ENV",
    "OFFLINE_ENV",
    "data_dir",
    "download_dir",
    "local_dir",
    "manual_dir",
    "mirrors",
    "offline",
    "usable_dir",
]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The local data dir: `explicit`, else $CATALOG_DATA_DIR, else the platform's user data
    dir. A URL is refused here: a data dir that may be a bucket is opened as a store
    (`catalog.storage.data_dir.data_dir_store`); local caches beside it use `local_dir`."""
    if explicit is not None:
        if is_url(explicit) or isinstance(explicit, RemoteDir):
            raise StorageError(f"{explicit}: this needs a local data dir, not a URL")
        return _given(explicit, "the data dir", f"--data-dir or ${DATA_DIR_ENV}")
    if os.environ.get(DATA_DIR_ENV):
        if is_url(os.environ[DATA_DIR_ENV]):
            url = os.environ[DATA_DIR_ENV]
            raise StorageError(f"${DATA_DIR_ENV}={url}: this needs a local data dir, not a URL")
        return Path(os.environ[DATA_DIR_ENV]).expanduser()
    import platformdirs  # only needed when neither an argument nor the variable says

    return Path(platformdirs.user_data_dir("catalog", appauthor=False))


def local_dir() -> Path:
    """A local folder for what catalog keeps beside the data (indexes, caches): the data dir
    when it is local, else (a data dir in a bucket) the platform's user cache dir."""
    given = os.environ.get(DATA_DIR_ENV) or None
    if is_url(given):
        import platformdirs

        return Path(platformdirs.user_cache_dir("catalog", appauthor=False))
    return data_dir()


def download_dir(
    explicit: str | os.PathLike[str] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> Path:
    """The download cache: `explicit`, else $CATALOG_DOWNLOAD_DIR, else <data dir>/downloads;
    for a data dir that is a URL (downloads cannot go into a bucket), the platform's user
    cache dir's ``downloads``."""
    if explicit is not None:
        return _given(explicit, "the download dir", f"--download-dir or ${DOWNLOAD_DIR_ENV}")
    if os.environ.get(DOWNLOAD_DIR_ENV):
        return Path(os.environ[DOWNLOAD_DIR_ENV]).expanduser()
    given = data if data is not None else os.environ.get(DATA_DIR_ENV) or None
    if isinstance(given, RemoteDir) or is_url(given):
        import platformdirs

        return Path(platformdirs.user_cache_dir("catalog", appauthor=False)) / "downloads"
    return data_dir(data) / "downloads"


def _given(explicit: str | os.PathLike[str], what: str, how: str) -> Path:
    if not os.fspath(explicit).strip():
        raise StorageError(f"{what} is an empty string: give a directory ({how})")
    return Path(explicit).expanduser()


def usable_dir(path: Path, what: str, how: str) -> Path:
    """`path` as a directory catalog can write in, created if missing; else StorageError
    naming it, what is wrong and how to point catalog elsewhere (`how`)."""
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise StorageError(
            f"{what} {path}: {existing} is a file, not a directory; use another ({how})"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"{what} {path} cannot be created in {existing} ({exc.strerror}): it is not "
            f"writable; make it writable or use another ({how})"
        ) from None
    import tempfile  # only preparing checks a dir: `import catalog` need not load it

    try:  # os.access says yes to root, also on read-only mounts and immutable dirs: try it
        fd, probe = tempfile.mkstemp(prefix=".catalog-write-test-", dir=path)
        os.close(fd)
        Path(probe).unlink()
    except OSError as exc:
        raise StorageError(
            f"{what} {path} is not writable ({exc.strerror}); make it writable or use another "
            f"({how})"
        ) from None
    return path


def mirrors(explicit: Sequence[str] | None = None) -> tuple[str, ...]:
    """User mirrors, tried before a file's own URLs: `explicit`, else $CATALOG_MIRRORS.

    The variable holds base URLs or local directories separated by whitespace (as pip's
    PIP_EXTRA_INDEX_URL does: URLs contain ':', so os.pathsep cannot separate them).
    """
    if explicit is not None:
        return tuple(explicit)
    return tuple(os.environ.get(MIRRORS_ENV, "").split())


def offline(explicit: bool | None = None) -> bool:
    """Whether to stay off the network: `explicit`, else $CATALOG_OFFLINE (1/0, true/false)."""
    if explicit is not None:
        return explicit
    value = os.environ.get(OFFLINE_ENV, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{OFFLINE_ENV}={value!r}: expected 1 or 0 (or true/false, yes/no, on/off)")


def manual_dir(
    explicit: str | os.PathLike[str] | None = None, downloads: str | os.PathLike[str] | None = None
) -> Path:
    """Where a user puts files by hand: `explicit`, else <download dir>/manual."""
    if explicit is not None:
        return Path(explicit).expanduser()
    return download_dir(downloads) / "manual"
