"""Examples and batches as nested structures: dicts, tuples and lists around leaf values.

>>> map_leaves(lambda v: v * 2, {"a": 1, "b": (2, [3])})
{'a': 2, 'b': (4, [6])}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["map_leaves"]


def map_leaves(fn: Callable[[Any], Any], struct: Any) -> Any:
    """`struct` with every value that is not a dict, tuple or list replaced by ``fn(value)``,
    visited depth first in order (dict insertion order), so `fn` may collect as it goes."""
    if isinstance(struct, dict):
        return {key: map_leaves(fn, value) for key, value in struct.items()}
    if isinstance(struct, tuple):
        return tuple(map_leaves(fn, value) for value in struct)
    if isinstance(struct, list):
        return [map_leaves(fn, value) for value in struct]
    return fn(struct)
