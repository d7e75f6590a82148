"""Unverified manual files: what a user places by hand and nobody published a checksum of.

Some datasets exist only behind a login or a cloud-drive link, and their publishers give no
checksum (RESISC45's folder, Kaggle's retinopathy images, the ImageNet test tar a user
assembles). A builder declares such a file with ``manual: <name>`` instead of ``url:``
(`catalog.spec.load`): a file or a folder the user places at ``<manual dir>/<name>``.

It cannot be checked against a published size and sha256, so catalog does what it can:

- it is taken from the manual dir only (never the network, the cache or a mirror), and its
  absence is one error saying where to put it;
- its size and sha256 (a folder's: those of its manifest, `catalog.download.local_tree`) are
  measured and said on stderr as unverified, and recorded in ``dataset_info.json``
  (``downloads.<name>``: ``manual``, ``size``, ``sha256``, ``verified: false``);
- the reader still checks its layout: the member names and example counts the spec expects;
- a prepare's resume key holds its sha256 (measured once per prepare), so the finished shards
  of a killed prepare are never kept for another file, even one copied over it with the same
  size and mtime (``cp -p``); what a prepare read of it is checked to be what it hashed
  (`catalog.download.watch`);
- a later prepare compares the file's size with the recorded one (a stat, no read) and prepares
  again when it differs; `catalog verify` re-hashes it and reports a changed file.
- a FIFO, a device or an unreadable file is refused before it is opened (`DownloadError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog._util.units import format_size
from catalog.download.cache import CachedFile
from catalog.download.local_tree import file_digest, tree_digest, tree_files
from catalog.download.resource import Failure, Resource
from catalog.errors import CatalogError, ChecksumError, DownloadError

__all__ = ["by_hand_error", "changed_files", "found_entry", "manual_file", "unverified_note"]


def manual_file(resource: Resource, manual_dir: Path) -> CachedFile:
    """The file or folder `resource` names in `manual_dir`, measured (size, sha256), read where
    it is; DownloadError when it is not there."""
    path = manual_dir / resource.filename
    if not path.exists():
        raise DownloadError(
            f"{resource.filename} is a manual download with no published checksum: place it at "
            f"{path} (or pass --manual-dir); `catalog info` says where to get it"
        )
    try:
        digest = tree_digest(path) if path.is_dir() else file_digest(path)
    except Failure as failure:
        raise DownloadError(f"{path} (manual dir): {failure.reason}") from None
    except OSError as error:  # a folder (or a file in it) that cannot be read
        where = error.filename or path
        raise DownloadError(
            f"{where} (manual dir): cannot be read ({error.strerror or error}); make it "
            "readable, or place the file again"
        ) from None
    return CachedFile(
        path, resource.filename, digest.size, digest.sha256, str(path), stamp=digest.stamp
    )


def by_hand_error(
    resource: Resource, manual_dir: Path, tried: list[tuple[str, Failure]], error: CatalogError
) -> DownloadError:
    """The error for a file downloaded by hand (builder.yaml's ``manual: true``: a login, an
    agreement) that neither the manual dir, the cache nor its URL delivered: where to place
    it first (what the manual dir held instead, if anything), then why fetching it failed."""
    size = f"{format_size(resource.size)}, " if resource.size is not None else ""
    url = f" from {resource.urls[0]}" if resource.urls else ""
    held = "".join(f"; {where} is not it: {why.reason}" for where, why in tried)
    lines = getattr(error, "lines", None) or str(error).splitlines()
    reason = " ".join(line.strip() for line in lines if line.strip()) or type(error).__name__
    return DownloadError(
        f"place {resource.filename} ({size}downloaded by hand{url}) in the manual dir "
        f"{manual_dir} (or pass --manual-dir); `catalog info` says where to get it{held}; "
        f"fetching it failed: {reason}"
    )


def unverified_note(file: CachedFile) -> str:
    """What is said on stderr about a manual file no checksum could be checked against."""
    what = "folder" if file.path.is_dir() else "file"
    return (
        f"using {file.filename} from the manual dir ({file.path}): UNVERIFIED, no published "
        f"checksum to check it against; this {what} has {format_size(file.size)}, sha256 "
        f"{file.sha256} (recorded in dataset_info.json)"
    )


def found_entry(file: CachedFile) -> dict[str, Any]:
    """The ``dataset_info.json`` ``downloads`` entry of a manual file as it was found."""
    return {"manual": file.filename, "size": file.size, "sha256": file.sha256, "verified": False}


def _manual_entries(downloads: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, Any, Any]]:
    return [
        (name, str(d["manual"]), d.get("size"), d.get("sha256"))
        for name, d in downloads.items()
        if isinstance(d, Mapping) and isinstance(d.get("manual"), str)
    ]


def _size(path: Path) -> int:
    if not path.is_dir():
        return path.stat().st_size
    return sum(file.stat().st_size for _, file in tree_files(path))


def changed_files(
    downloads: Mapping[str, Mapping[str, Any]], manual_dir: Path, *, rehash: bool
) -> list[tuple[str, str]]:
    """``(file name, what changed)`` for each manual file a prepared copy's ``downloads``
    record (`found_entry`) that is in `manual_dir` now and differs from what was recorded:
    its size (a stat of the file, of each file of a folder), and with `rehash` its sha256.
    A file no longer there is not a change (the prepared copy still holds what it read)."""
    changes = []
    for _, filename, size, sha256 in _manual_entries(downloads):
        path = manual_dir / filename
        if not path.exists():
            continue
        try:
            now = _size(path)
            if now != size:
                changes.append((filename, f"{now} bytes now, {size} when it was prepared"))
                continue
            if rehash:
                digest = tree_digest(path) if path.is_dir() else file_digest(path)
                if digest.sha256 != sha256:
                    changes.append(
                        (filename, f"sha256 {digest.sha256} now, {sha256} when it was prepared")
                    )
        except (OSError, Failure) as error:
            raise ChecksumError(f"{path} (manual dir): cannot read it: {error}") from None
    return changes
