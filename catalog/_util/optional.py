"""Whether an optional library can be imported: a fast path taken only when it is there.

`importable` imports the module once and remembers the answer, so a library that is installed
but broken (its import fails) counts as absent, as one that is not installed does; the caller
then takes its path without it.
"""

from __future__ import annotations

import functools
import importlib

__all__ = ["importable"]


@functools.cache
def importable(name: str) -> bool:
    """Whether ``import name`` succeeds (the answer is kept for the process)."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True
