"""Batches as structures of columns: stacking examples, slicing, joining and padding.

A batch has the structure of one example (a dict, possibly nested, a tuple, or one value)
with every value replaced by a *column* of ``n`` rows:

- arrays of one shape and dtype stack into one array ``(n, *shape)``; Python and NumPy
  numbers into a 1-D array (ints become int64, floats float64, bools bool);
- anything else is a list of the n values: strings, bytes, and *ragged* arrays (whose shapes
  differ between examples). ``batch(..., pad=value)`` pads ragged arrays instead: each row is
  padded at the end of every axis to the largest size in the batch with `value` (a number for
  all ragged features, or a dict from feature paths such as ``"objects/bbox"`` to numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["PadSpec", "concat", "pad_ragged", "row", "stack", "take"]

#: What `batch(pad=...)` accepts: one number for every ragged feature, or path -> number.
PadSpec = float | int | Mapping[str, float | int] | None
_NUMBERS = (int, float, bool, np.number, np.bool_)


def stack(values: Sequence[Any]) -> Any:
    """The column structure of the examples `values` (at least one)."""
    first = values[0]
    if isinstance(first, dict):
        return {key: stack([v[key] for v in values]) for key in first}
    if isinstance(first, tuple):
        return tuple(stack([v[i] for v in values]) for i in range(len(first)))
    if isinstance(first, np.ndarray):
        shape, dtype = first.shape, first.dtype
        if all(isinstance(v, np.ndarray) and v.shape == shape and v.dtype == dtype for v in values):
            return np.stack(values)
        return list(values)
    if isinstance(first, _NUMBERS) and all(isinstance(v, _NUMBERS) for v in values):
        return np.asarray(values)
    return list(values)


def _map(fn: Callable[[Any], Any], struct: Any) -> Any:
    if isinstance(struct, dict):
        return {key: _map(fn, value) for key, value in struct.items()}
    if isinstance(struct, tuple):
        return tuple(_map(fn, value) for value in struct)
    return fn(struct)


def take(struct: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of every column (views of arrays, not copies)."""
    return _map(lambda column: column[start:stop], struct)


def row(struct: Any, i: int) -> Any:
    """Row `i`: one example again."""
    return _map(lambda column: column[i], struct)


def concat(parts: Sequence[Any]) -> Any:
    """The rows of `parts` (column structures of one example structure) in order."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if isinstance(first, dict):
        return {key: concat([p[key] for p in parts]) for key in first}
    if isinstance(first, tuple):
        return tuple(concat([p[i] for p in parts]) for i in range(len(first)))
    if all(
        isinstance(p, np.ndarray) and p.shape[1:] == first.shape[1:] and p.dtype == first.dtype
        for p in parts
    ):
        return np.concatenate(parts)
    if any(isinstance(p, np.ndarray) and p.dtype != object and p.ndim > 1 for p in parts):
        # Arrays of another shape in each part: ragged across parts, so a list of rows.
        return [value for p in parts for value in p]
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)  # numbers of two dtypes: NumPy's promotion
    return [value for p in parts for value in (list(p) if isinstance(p, np.ndarray) else p)]


def pad_ragged(struct: Any, pad: PadSpec, path: str = "") -> Any:
    """Pad the ragged array columns of `struct` that `pad` names (see the module docstring)."""
    if pad is None:
        return struct
    if isinstance(struct, dict):
        return {k: pad_ragged(v, pad, f"{path}/{k}" if path else k) for k, v in struct.items()}
    if isinstance(struct, tuple):
        return tuple(
            pad_ragged(v, pad, f"{path}/{i}" if path else str(i)) for i, v in enumerate(struct)
        )
    if not isinstance(struct, list) or not struct:
        return struct
    value = pad.get(path) if isinstance(pad, Mapping) else pad
    if value is None or not all(isinstance(v, np.ndarray) for v in struct):
        return struct
    ndims = {v.ndim for v in struct}
    if len(ndims) != 1:
        raise ValueError(
            f"cannot pad feature {path or 'value'!r}: its arrays have {sorted(ndims)} dimensions"
        )
    shape = tuple(max(sizes) for sizes in zip(*(v.shape for v in struct), strict=True))
    dtype = np.result_type(*struct)
    out = np.full((len(struct), *shape), value, dtype=dtype)
    for i, v in enumerate(struct):
        index: tuple[int | slice, ...] = (i, *(slice(0, s) for s in v.shape))
        out[index] = v
    return out
