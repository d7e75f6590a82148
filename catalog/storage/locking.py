"""The lock and the work-dir names that keep a prepared dataset whole.

Preparing writes into ``<version>.incomplete-XXXX`` beside the target and renames it into
place; removing deletes it. Both hold ``.<version>.lock`` in the same folder, so neither ever
sees the other's half-done work.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

from catalog.storage.lock_holder import hold

__all__ = ["INCOMPLETE", "dataset_lock", "make_dir", "work_dirs"]

#: Work dirs are named ``<version>.incomplete-<random>``.
INCOMPLETE = ".incomplete-"


@contextlib.contextmanager
def dataset_lock(target: Path) -> Iterator[bool]:
    """Hold the lock guarding `target` (a dataset version's folder); when waiting, say for
    whom (see :mod:`catalog.storage.lock_holder`).

    Yields whether it had to wait for another process (which may have prepared `target`).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    waited = False

    def waiting(holder: str) -> None:
        nonlocal waited
        waited = True
        print(f"waiting for another process preparing {target}: {holder} ...", file=sys.stderr)

    with hold(target.parent / f".{target.name}.lock", on_wait=waiting):
        yield waited


def work_dirs(target: Path) -> list[Path]:
    """Work dirs of `target` left by runs that were killed (call with the lock held)."""
    return sorted(target.parent.glob(f"{target.name}{INCOMPLETE}*"))


def make_dir(parent: Path, prefix: str) -> Path:
    """A new directory ``<parent>/<prefix><random>`` with the permissions the umask gives.

    (tempfile.mkdtemp makes it 0o700: the other users of a shared data dir could not read
    what is renamed into place from it.)"""
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            path.mkdir(0o777)  # the kernel applies the umask (thread-safe, unlike os.umask)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name {prefix}XXXXXXXX in {parent}")
