"""Scalar: one number of a fixed NumPy dtype."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features.base import Feature
from catalog.features.tensor import as_dtype, float_overflow

__all__ = ["Scalar"]

_KINDS = "biuf"  # bool, signed, unsigned, float


class Scalar(Feature):
    """One number stored with a fixed dtype; decodes to a NumPy scalar of that dtype.

    Stored as its little-endian bytes. Python and NumPy numbers are accepted when they fit
    the dtype: an int must be in range, a float feature takes ints and floats, bool takes
    bools (and 0/1).

    Args:
        dtype: a NumPy dtype name (``int64``, ``float32``, ``bool``, ...).

    Raises:
        FeatureError: a dtype that is not a number or bool; and (``encode_example``, when preparing)
            a value that does not fit, naming the feature and the example (out of range, not a
            number).

    Examples:
        >>> Scalar("float32").to_json()
        {'type': 'Scalar', 'dtype': 'float32'}
    """

    type_name = "Scalar"
    shape = ()
    dtype: np.dtype[Any]

    def __init__(self, dtype: str | np.dtype[Any] | type = "int64") -> None:
        try:
            self.dtype = np.dtype(dtype).newbyteorder("<")
        except TypeError:
            self.dtype = np.dtype("O")  # refused just below, with the same message
        if self.dtype.kind not in _KINDS:
            raise FeatureError(
                f"Scalar dtype must be bool, an int, a uint or a float type, got {dtype!r}"
            )
        self.raw_dtype = self.dtype
        self._largest = float(np.finfo(self.dtype).max) if self.dtype.kind == "f" else 0.0

    @property
    def fixed_size(self) -> int:
        return self.dtype.itemsize

    def encode(self, value: Any) -> bytes:
        if getattr(value, "shape", None) == () and hasattr(value, "item"):
            value = value.item()
        kind = self.dtype.kind
        if kind == "b":
            ok = isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))
        elif kind in "iu":
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
            if ok:
                info = np.iinfo(self.dtype)
                if not info.min <= int(value) <= info.max:
                    raise self._error(
                        f"{value} does not fit {self.dtype.name} ({info.min}..{info.max})"
                    )
        else:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not ok:
            raise self._error(f"expected a {self.dtype.name} value, got {value!r}")
        if kind == "f" and abs(value) > self._largest:  # maybe rounds to infinity
            try:
                given = np.array([float(value)])
            except OverflowError:  # an int beyond every float
                raise self._error(f"{value} does not fit {self.dtype.name}") from None
            problem = float_overflow(given, as_dtype(given, self.dtype))
            if problem:
                raise self._error(problem)
        return np.array(value, dtype=self.dtype).tobytes()

    def decode(self, buf: bytearray, offset: int, length: int) -> Any:
        return np.frombuffer(buf, self.dtype, 1, offset)[0]

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any]:
        return list(block.view(self.dtype)[:, 0])  # NumPy scalars, as `decode` returns

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, "dtype": self.dtype.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scalar:
        return cls(data.get("dtype", "int64"))

    def __repr__(self) -> str:
        return f"Scalar({self.dtype.name!r})"
