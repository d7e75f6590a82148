"""Tensor: an N-dimensional NumPy array of a fixed dtype, some dimensions possibly unknown."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features.base import Feature

__all__ = ["Tensor", "as_dtype", "check_array_dtype", "float_overflow"]

_KINDS = "biuf"  # bool, signed, unsigned, float
_DIM_BYTES = 4  # each unknown dimension is stored as uint32 little-endian


def check_array_dtype(array: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> str | None:
    """Why `array` cannot be stored as `dtype` without changing a value, or None when it can.

    Bools store as bool, ints, uints or floats; ints and uints as ints and uints whose range
    holds every value, or as floats; floats only as floats.
    """
    src, dst = array.dtype.kind, dtype.kind
    if src not in (("b",) if dst == "b" else "biu" if dst in "iu" else "biuf"):
        return f"expected {dtype.name} values, got dtype {array.dtype}"
    if dst in "iu" and array.size and not np.can_cast(array.dtype, dtype, "safe"):
        info = np.iinfo(dtype)
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            return f"values {low}..{high} do not fit {dtype.name} ({info.min}..{info.max})"
    return None


def as_dtype(array: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """`array` cast to `dtype` (contiguous; itself when it is already), without NumPy's
    overflow warning: `float_overflow` tells what the cast made infinite."""
    if np.can_cast(array.dtype, dtype, "safe"):  # nothing can overflow
        return np.ascontiguousarray(array, dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.ascontiguousarray(array, dtype=dtype)


def float_overflow(array: np.ndarray[Any, Any], stored: np.ndarray[Any, Any]) -> str | None:
    """Why `stored`, `array` (numbers) cast to a float type, does not hold it: a finite value
    made infinite (1e300 as float32); None when it holds every value. Rounding to the
    nearest value of the narrower type is what storing as it means; infinity is not."""
    if stored.dtype.kind != "f" or stored.dtype == array.dtype:
        return None
    infinite = np.isinf(stored)
    if not infinite.any():  # the usual case: one pass over the cast values
        return None
    wide = infinite & np.isfinite(array)
    if not wide.any():
        return None
    value, dtype = array[wide].flat[0].item(), stored.dtype
    return f"{value!r} does not fit {dtype.name} (largest {np.finfo(dtype).max.item():.8g})"


class Tensor(Feature):
    """A NumPy array of a fixed dtype and a shape whose dimensions may be None (unknown).

    A fully known shape is stored as the raw little-endian values (fixed size, read at a
    constant offset); otherwise the unknown dimensions come first (uint32 each), then the
    values. Values are NumPy arrays or (nested) lists, cast to the dtype when no value
    changes (see `check_array_dtype`). Decodes to a writable array.

    Args:
        shape: the dimensions, None where they vary.
        dtype: a NumPy dtype name.

    Raises:
        FeatureError: a bad shape or dtype; and (``encode_example``, when preparing) a value that
            does not fit, naming the feature and the example (a wrong shape, a value the dtype
            cannot hold).

    Examples:
        >>> Tensor(shape=(None, 4), dtype="float32")
        Tensor(shape=(None, 4), dtype='float32')
    """

    type_name = "Tensor"
    dtype: np.dtype[Any]

    def __init__(self, shape: Sequence[int | None], dtype: str | np.dtype[Any] | type) -> None:
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
            raise FeatureError(f"Tensor shape must be a list of ints or None, got {shape!r}")
        dims = tuple(shape)
        if any(d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1)
               for d in dims):  # fmt: skip
            raise FeatureError(f"Tensor dimensions must be positive ints or None, got {dims}")
        try:
            self.dtype = np.dtype(dtype).newbyteorder("<")
        except TypeError:
            self.dtype = np.dtype("O")  # refused just below
        if self.dtype.kind not in _KINDS:
            raise FeatureError(
                f"Tensor dtype must be bool, an int, a uint or a float type, got {dtype!r}"
            )
        self.shape: tuple[int | None, ...] = dims
        self._unknown = [i for i, d in enumerate(dims) if d is None]
        self._count = None if self._unknown else math.prod(dims)  # type: ignore[arg-type]
        if self._count is not None:
            self.raw_dtype = self.dtype

    @property
    def fixed_size(self) -> int | None:
        return None if self._count is None else self._count * self.dtype.itemsize

    def encode(self, value: Any) -> bytes:
        array = self.validate(value)
        data = array.tobytes()
        if self._unknown:
            dims = b"".join(array.shape[i].to_bytes(_DIM_BYTES, "little") for i in self._unknown)
            return dims + data
        return data

    def validate(self, value: Any) -> np.ndarray[Any, Any]:
        """`value` as a contiguous array of this dtype and shape; FeatureError if it won't fit."""
        if isinstance(value, np.ndarray):
            array = value
        elif isinstance(value, (list, tuple, int, float, np.generic)):
            try:
                array = np.asarray(value)
            except ValueError:  # ragged nested lists
                raise self._error("expected a rectangular array, got ragged nested lists") from None
        else:
            raise self._error(f"expected a NumPy array or a list, got {type(value).__name__}")
        problem = check_array_dtype(array, self.dtype)
        if problem:
            raise self._error(problem)
        shape = self.shape
        if array.ndim != len(shape) or any(
            want is not None and want != got for want, got in zip(shape, array.shape, strict=True)
        ):
            raise self._error(f"expected shape {shape}, got {array.shape}")
        stored = as_dtype(array, self.dtype)
        problem = float_overflow(array, stored)
        if problem:
            raise self._error(problem)
        return stored

    def decode(self, buf: bytearray, offset: int, length: int) -> np.ndarray[Any, Any]:
        if self._count is not None:  # a view of the record's buffer; the fastest constructor
            return np.ndarray(self.shape, self.dtype, buf, offset)  # type: ignore[arg-type]
        shape = list(self.shape)
        for i in self._unknown:
            shape[i] = int.from_bytes(buf[offset : offset + _DIM_BYTES], "little")
            offset += _DIM_BYTES
        count = math.prod(shape)  # type: ignore[arg-type]
        return np.frombuffer(buf, self.dtype, count, offset).reshape(shape)

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any] | None:
        if self._count is None:
            return None
        values = block.view(self.dtype).reshape(len(block), *self.shape)
        if not self.shape:  # 0-d arrays, as `decode` gives (a list of rows would be scalars)
            return [value.reshape(()) for value in values.reshape(-1, 1)]
        return list(values)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, "shape": list(self.shape), "dtype": self.dtype.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tensor:
        return cls(shape=data["shape"], dtype=data["dtype"])

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, dtype={self.dtype.name!r})"
