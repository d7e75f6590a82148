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


def _split(value: Any, arrays: list[Any]) -> Any:
    """`value` with its arrays replaced by their index in `arrays` (collected)."""
    if isinstance(value, dict):
        return {k: _split(v, arrays) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_split(v, arrays) for v in value)
    if isinstance(value, list):
        return [_split(v, arrays) for v in value]
    if isinstance(value, np.ndarray) and value.dtype != object:
        arrays.append(value)
        return _Index(len(arrays) - 1)
    return value


class _Index(int):
    pass


def _join(value: Any, arrays: list[Any]) -> Any:
    if isinstance(value, dict):
        return {k: _join(v, arrays) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_join(v, arrays) for v in value)
    if isinstance(value, list):
        return [_join(v, arrays) for v in value]
    if isinstance(value, _Index):
        return arrays[value]
    return value


def to_jax(batch: Any, *, device: Any = None) -> Any:
    """`batch` with every NumPy array put on `device` (default: JAX's default device)."""
    jax = _jax()
    arrays: list[Any] = []
    skeleton = _split(batch, arrays)
    return _join(skeleton, list(jax.device_put(arrays, device)))


def to_jax_iter(batches: Iterable[Any], *, device: Any = None) -> Iterator[Any]:
    """`to_jax` on each batch of `batches` (a pipeline)."""
    for batch in batches:
        yield to_jax(batch, device=device)
