"""What the user reads when no source delivered a file: every source tried and why it failed,
then what to do (the flag, the environment variable, the path to put the file at)."""

from __future__ import annotations

from pathlib import Path

from catalog.download.resource import Failure, Resource
from catalog.errors import CatalogError, ChecksumError, DownloadError
from catalog.storage.paths import MIRRORS_ENV, OFFLINE_ENV

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
        advice = (
            "Every source delivered bytes that differ from the registered size/sha256 (the "
            "file may have changed upstream; builder authors: --register-checksums). Check "
            f"the URLs, or place a file with sha256 {resource.sha256} at {manual}"
        )
        return _with_advice(ChecksumError, lines, advice)
    advice = (
        "Check the network connection (or try again later), add a mirror (--mirror or "
        f"{MIRRORS_ENV}), use files already downloaded (--offline or {OFFLINE_ENV}=1), or "
        f"download the files yourself into {manual.parent}/ (the manual dir)"
    )
    return _with_advice(DownloadError, lines, advice)


def _with_advice(kind: type[CatalogError], lines: list[str], advice: str) -> CatalogError:
    """An error whose message is `lines` then `advice`; both kept apart for `combined_error`,
    which states shared advice once."""
    exc = kind("\n".join([*lines, advice]))
    exc.lines, exc.advice = lines, advice  # type: ignore[attr-defined]
    return exc


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
    blocks = ["\n".join(getattr(e, "lines", None) or [str(e)]) for e in errors]
    advice = list(dict.fromkeys(a for e in errors if (a := getattr(e, "advice", None))))
    message = f"{len(errors)} of {total} files could not be fetched:\n" + "\n".join(
        [*blocks, *advice]
    )
    if all(isinstance(e, ChecksumError) for e in errors):
        return ChecksumError(message)
    return DownloadError(message)
