"""The user's cache dir, where catalog keeps its indexes (the registry's, TFDS's names):
``$XDG_CACHE_HOME/catalog``, ``~/.cache/catalog`` by default; ``~/Library/Caches/catalog`` on
macOS, ``%LOCALAPPDATA%\\catalog`` on Windows. Only ever a cache: what is in it can be made
again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """The user's cache dir for catalog (see the module docstring). RuntimeError when there
    is no home directory to put it in."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not Path(base).is_absolute():  # the XDG spec: a relative path is ignored
            base = str(Path.home() / ".cache")
    return Path(base) / "catalog"
