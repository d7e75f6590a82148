"""JAX adapter: pipeline batches (NumPy) as JAX arrays on a device (``jax.device_put``).

>>> from catalog.jax import to_jax_iter                     # doctest: +SKIP
>>> for batch in to_jax_iter(pipe):                        # doctest: +SKIP
...     state = train_step(state, batch)

Arrays go to the device in one ``device_put`` of the whole structure (a CPU device may
share the memory); strings and lists (ragged values) stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from catalog._util.nested import map_leaves
from catalog.errors import MissingDependencyError

__all__ = ["to_jax", "to_jax_iter"]


def _jax() -> Any:
    try:
        import jax
    except ImportError as error:
        raise MissingDependencyError(
            "catalog.jax needs JAX, which is not installed: pip install jax"
        ) from error
    return jax


class _Index(int):
    """Where an array of the batch went in the list given to `device_put`."""


def to_jax(batch: Any, *, device: Any = None) -> Any:
    """`batch` with every NumPy array put on `device` (default: JAX's default device)."""
    jax = _jax()
    arrays: list[Any] = []

    def take(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype != object:
            arrays.append(value)
            return _Index(len(arrays) - 1)
        return value

    skeleton = map_leaves(take, batch)
    placed = list(jax.device_put(arrays, device))  # one call for every array of the batch
    return map_leaves(lambda v: placed[v] if isinstance(v, _Index) else v, skeleton)


def to_jax_iter(batches: Iterable[Any], *, device: Any = None) -> Iterator[Any]:
    """`to_jax` on each batch of `batches` (a pipeline)."""
    for batch in batches:
        yield to_jax(batch, device=device)
