"""Publishing a prepared dataset: a finished work dir takes the place of the dataset's folder.

Readers see the old copy or the new one, never half of one: the work dir is complete (every
shard verified, dataset_info.json written last) before it is renamed into place.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from catalog.storage.locking import INCOMPLETE

__all__ = ["publish"]


def publish(work: Path, target: Path) -> None:
    """Replace `target` by `work` with renames, so readers see the old or the new, never half."""
    if target.exists():
        old = target.with_name(f"{target.name}{INCOMPLETE}old")
        os.rename(target, old)
        os.rename(work, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(work, target)
