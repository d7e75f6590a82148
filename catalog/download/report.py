"""What the user reads when no source delivered a file: every source tried and why it failed,
then what to do (the flag, the environment variable, the path to put the file at).

Each error has two forms. Its text (``str(error)``) is the full report: one line per source
tried, then the advice; that is what a Python user sees in a traceback or a log. Its
``summary`` attribute (also :func:`summary`) is the same in one line: which files, how many
sources were tried, the most telling reason and what to do; ``catalog prepare`` prints it
unless ``--verbose``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from catalog.download.deadline import DeadlineExceeded
from catalog.download.resource import Failure, Resource
from catalog.errors import CatalogError, ChecksumError, DownloadError, StorageError
from catalog.storage.paths import MIRRORS_ENV, OFFLINE_ENV

__all__ = ["Tried", "combined_error", "download_error", "offline_error", "summary"]

Tried = list[tuple[str, Failure]]  # (source, why it did not deliver), in the order tried

_E = TypeVar("_E", bound=CatalogError)
_ATTEMPTS = re.compile(r" \(\d+ attempts\)$")
_NAMES_SHOWN = 3  # file names a combined summary lists before "..."


@dataclass(frozen=True)
class _Facts:
    """What one failed file's error is made of, kept on it for `combined_error`."""

    filename: str
    tried: tuple[tuple[str, Failure], ...]
    advice: str  # what to do, one sentence
    offline: bool = False


def summary(error: BaseException) -> str | None:
    """The one-line form of an error made here (None for any other error)."""
    return error.summary if isinstance(error, CatalogError) else None


def download_error(resource: Resource, tried: Tried, manual: Path) -> CatalogError:
    """ChecksumError if every source delivered wrong bytes, else DownloadError."""
    if not tried:
        advice = f"Download it yourself and place it at {manual}"
        exc: CatalogError = DownloadError(
            f"could not download {resource.filename}: no URL is registered for it.\n{advice}"
        )
        short = f"could not download {resource.filename}: no URL is registered for it. {advice}"
        return _finish(exc, short, _Facts(resource.filename, (), advice))
    lines = [f"could not download {resource.filename}:"]
    lines += [f"  {where}: {failure.reason}" for where, failure in tried]
    if all(failure.checksum for _, failure in tried):
        advice = (
            "Every source delivered bytes that differ from the registered size/sha256 (the "
            "file may have changed upstream; builder authors: --register-checksums). Check "
            f"the URLs, or place a file with sha256 {resource.sha256} at {manual}"
        )
        exc = _with_advice(ChecksumError, lines, advice)
    else:
        advice = (
            "Check the network connection (or try again later), add a mirror (--mirror or "
            f"{MIRRORS_ENV}), use files already downloaded (--offline or {OFFLINE_ENV}=1), or "
            f"download the files yourself into {manual.parent}/ (the manual dir)"
        )
        exc = _with_advice(DownloadError, lines, advice)
    facts = _Facts(resource.filename, tuple(tried), advice)
    short = f"could not download {resource.filename}: {_why(list(tried))}. {advice}"
    return _finish(exc, short, facts)


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
    advice = (
        f"download {origin}{expected} and place it at {manual} (or pass --manual-dir), or add a "
        f"mirror directory with --mirror or {MIRRORS_ENV}, or run without --offline "
        f"({OFFLINE_ENV}=0)."
    )
    needed = (
        f"{resource.filename} is needed but catalog is offline (--offline or {OFFLINE_ENV}=1) "
        "and no local source has it"
    )
    exc = DownloadError(
        f"{needed}. Looked in:\n" + "\n".join(looked) + f"\nTo provide it: {advice}"
    )
    places = len(looked)
    telling = _most_telling(list(tried), local_only=True)
    where = f"{places} place{'s' if places != 1 else ''} looked in"
    if telling is not None:
        where += f"; {telling[0]}: {telling[1]}"
    short = f"{needed} ({where}). To provide it: {advice}"
    manual_advice = (
        f"place them in {manual.parent}/ (or pass --manual-dir), or add a mirror directory "
        f"with --mirror or {MIRRORS_ENV}, or run without --offline ({OFFLINE_ENV}=0)."
    )
    return _finish(exc, short, _Facts(resource.filename, tuple(tried), manual_advice, True))


def combined_error(errors: list[CatalogError], total: int) -> CatalogError:
    """One error for several failed files (the single error itself if only one failed)."""
    if len(errors) == 1:
        return errors[0]
    blocks = ["\n".join(getattr(e, "lines", None) or [str(e)]) for e in errors]
    advice = list(dict.fromkeys(a for e in errors if (a := getattr(e, "advice", None))))
    message = f"{len(errors)} of {total} files could not be fetched:\n" + "\n".join(
        [*blocks, *advice]
    )
    exc: CatalogError
    if all(isinstance(e, ChecksumError) for e in errors):
        exc = ChecksumError(message)
    elif all(isinstance(e, StorageError) for e in errors):  # the disk, not the network
        exc = StorageError(message)
    else:
        exc = DownloadError(message)
    facts = [f for e in errors if isinstance(f := getattr(e, "facts", None), _Facts)]
    if len(facts) == len(errors):
        _set_summary(exc, _combined_summary(facts, total))
    return exc


def _combined_summary(facts: list[_Facts], total: int) -> str:
    names = [f.filename for f in facts]
    shown = ", ".join(names[:_NAMES_SHOWN]) + (", ..." if len(names) > _NAMES_SHOWN else "")
    tried = [t for f in facts for t in f.tried]
    if all(f.offline for f in facts):
        telling = _most_telling(tried, local_only=True)
        where = f"; {telling[0]}: {telling[1]}" if telling is not None else ""
        return (
            f"{len(facts)} of {total} files are needed but catalog is offline (--offline or "
            f"{OFFLINE_ENV}=1) and no local source has them ({shown}{where}). To provide "
            f"them: {facts[0].advice}"
        )
    telling = _most_telling(tried)
    advice = next(
        (f.advice for f in facts if telling is not None and telling[2] in f.tried),
        facts[0].advice,
    )
    why = _why(tried) if tried else "no URL is registered for them"
    return f"could not download {len(facts)} of {total} files ({shown}): {why}. {advice}"


def _finish(exc: _E, short: str, facts: _Facts) -> _E:
    _set_summary(exc, short)
    exc.facts = facts  # type: ignore[attr-defined]
    return exc


def _set_summary(exc: CatalogError, short: str) -> None:
    """`exc.summary`: `short` in one line, without a final period (a caller may add to it)."""
    exc.summary = " ".join(short.split("\n")).rstrip(".")


def _why(tried: Tried) -> str:
    """How many sources were tried and the most telling reason, in a few words."""
    telling = _most_telling(tried)
    assert telling is not None
    where, reason, _ = telling
    count = len(tried)
    if count == 1:
        return f"the one source tried failed: {where}: {reason}"
    same = sum(_reason(f) == reason for _, f in tried)
    if same == count:
        return f"all {count} sources tried failed the same way, e.g. {where}: {reason}"
    return f"{count} sources tried, none delivered; most telling: {where}: {reason}"


def _most_telling(
    tried: Tried, *, local_only: bool = False
) -> tuple[str, str, tuple[str, Failure]] | None:
    """The failure that best explains why nothing delivered: wrong bytes first, then a local
    source that says why it has no file (a directory, a flat layout, a missing mirror dir) or
    a deadline, then an HTTP status, then other network errors, then a plain "not found";
    among equals, the most frequent reason. None if nothing fits (`local_only`: a bare "not
    found" explains nothing)."""
    ranked = [(_rank(where, failure), where, failure) for where, failure in tried]
    if local_only:
        ranked = [r for r in ranked if r[0] < 4]
    if not ranked:
        return None
    best = min(rank for rank, _, _ in ranked)
    ties = [(where, failure) for rank, where, failure in ranked if rank == best]
    counts = Counter(_reason(failure) for _, failure in ties)
    where, failure = max(ties, key=lambda t: counts[_reason(t[1])])  # the first of the most
    return where, _reason(failure), (where, failure)


def _rank(where: str, failure: Failure) -> int:
    if failure.checksum or "HTML page" in failure.reason:
        return 0
    remote = where.startswith(("http://", "https://"))
    if isinstance(failure, DeadlineExceeded) or (not remote and failure.reason != "not found"):
        return 1
    if not remote:
        return 4
    return 2 if failure.reason.startswith("HTTP ") else 3


def _reason(failure: Failure) -> str:
    """The reason without its attempt count or line breaks (to compare and to show)."""
    return " ".join(_ATTEMPTS.sub("", failure.reason).split("\n"))
