"""Disk space: free space checked before a write whose size is known (a full disk is one clear
error up front instead of a half-written file), and the space a folder takes."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path

from catalog._util.units import format_size
from catalog.errors import StorageError

__all__ = ["FULL_ERRNOS", "disk_full", "disk_usage", "free_space", "require_free"]

#: What a write to a full disk (or past a quota or file size limit) raises.
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_WHAT_TO_DO = (
    "free some space or point catalog at another disk "
    "(--download-dir or CATALOG_DOWNLOAD_DIR, --data-dir or CATALOG_DATA_DIR)"
)


def free_space(path: Path) -> int | None:
    """Bytes free for this user on the file system holding `path` (or its nearest existing
    parent); None when it cannot be told."""
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None:
        return None
    try:
        return shutil.disk_usage(existing).free
    except OSError:
        return None


def require_free(path: Path, needed: int, what: str) -> None:
    """Raise StorageError unless `needed` bytes are free at `path`, naming `what` is written
    there, the free and the needed space, and what to do."""
    free = free_space(path)
    if free is None or free >= needed:
        return
    raise StorageError(
        f"not enough free space in {path} for {what}: {format_size(free)} free, "
        f"{format_size(needed)} needed; {_WHAT_TO_DO}"
    )


def disk_full(error: OSError, path: Path, what: str) -> StorageError | None:
    """The StorageError for `error` if it says the disk holding `path` is full (else None),
    naming `what` was being written and the free space."""
    if error.errno not in FULL_ERRNOS:
        return None
    free = free_space(path)
    left = f" ({format_size(free)} free)" if free is not None else ""
    return StorageError(
        f"no space left in {path}{left} while {what} ({os.strerror(error.errno or 0)}); "
        f"{_WHAT_TO_DO}"
    )


def disk_usage(folder: Path) -> int:
    """Bytes in the files under `folder` (0 when it does not exist)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while walking
                total += (Path(root) / name).stat().st_size
    return total
