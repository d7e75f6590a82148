"""The lock and the work-dir names that keep a prepared dataset whole.

Preparing writes into ``<version>.incomplete-XXXX`` beside the target and renames it into
place; removing deletes it. Both hold ``.<version>.lock`` in the same folder, so neither ever
sees the other's half-done work.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["INCOMPLETE", "dataset_lock", "work_dirs"]

#: Work dirs are named ``<version>.incomplete-<random>``.
INCOMPLETE = ".incomplete-"


@contextlib.contextmanager
def dataset_lock(target: Path) -> Iterator[bool]:
    """Hold the lock guarding `target` (a dataset version's folder); say so when waiting.

    Yields whether it had to wait for another process (which may have prepared `target`).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(target.parent / f".{target.name}.lock"))
    waited = False
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"waiting for another process preparing {target} ...", file=sys.stderr)
        lock.acquire()
        waited = True
    try:
        yield waited
    finally:
        lock.release()


def work_dirs(target: Path) -> list[Path]:
    """Work dirs of `target` left by runs that were killed (call with the lock held)."""
    return sorted(target.parent.glob(f"{target.name}{INCOMPLETE}*"))
