"""What the user reads when no source delivered a file: every source tried and why it failed,
then what to do (the flag, the environment variable, the path to put the file at)."""

from __future__ import annotations

from pathlib import Path

from catalog.download.resource import Failure, Resource
from catalog.errors import CatalogError, ChecksumError, DownloadError
from catalog.paths import MIRRORS_ENV, OFFLINE_ENV

__all__ = ["Tried", "combined_error", "download_error", "offline_error"]

Tried = list[tuple[str, Failure]]  # (source, why it did not deliver), in the order tried


def download_error(resource: Resource, tried: Tried, manual: Path) -> CatalogError:
    """ChecksumError if every source delivered wrong bytes, else DownloadError."""
    if not tried:
        return DownloadError(
            f"could not download {resource.filename}: no URL is registered for it.\n"
            f"Download it yourself and place it at {manual}"
        )
    lines = [f"could not download {resource.filename}:"]
    lines += [f"  {where}: {failure.reason}" for where, failure in tried]
    if all(failure.checksum for _, failure in tried):
        lines.append(
            "Every source delivered bytes that differ from the registered size/sha256 (the "
            "file may have changed upstream; builder authors: --register-checksums). Check "
            f"the URLs, or place a file with sha256 {resource.sha256} at {manual}"
        )
        return ChecksumError("\n".join(lines))
    lines.append(
        f"Check the network connection (or try again later), add a mirror (--mirror or "
        f"{MIRRORS_ENV}), or download the file yourself and place it at {manual}"
    )
    return DownloadError("\n".join(lines))


def offline_error(
    resource: Resource, tried: Tried, manual: Path, cached: Path | None
) -> DownloadError:
    """Offline and no local source has the file: where we looked, how to provide it."""
    looked = [f"  {cached} (cache): not found"] if cached is not None else []
    if not manual.exists():
        looked.append(f"  {manual} (manual dir): not found")
    looked += [f"  {where}: {failure.reason}" for where, failure in tried]
    expected = f" ({resource.size} bytes, sha256 {resource.sha256})" if resource.registered else ""
    origin = resource.urls[0] if resource.urls else "the file"
    return DownloadError(
        f"{resource.filename} is needed but catalog is offline (--offline or {OFFLINE_ENV}=1) "
        "and no local source has it. Looked in:\n"
        + "\n".join(looked)
        + f"\nTo provide it: download {origin}{expected} and place it at {manual} (or pass"
        f" --manual-dir), or add a mirror directory with --mirror or {MIRRORS_ENV}, or run"
        f" without --offline ({OFFLINE_ENV}=0)."
    )


def combined_error(errors: list[CatalogError], total: int) -> CatalogError:
    """One error for several failed files (the single error itself if only one failed)."""
    if len(errors) == 1:
        return errors[0]
    message = f"{len(errors)} of {total} files could not be fetched:\n\n" + "\n\n".join(
        str(e) for e in errors
    )
    if all(isinstance(e, ChecksumError) for e in errors):
        return ChecksumError(message)
    return DownloadError(message)
