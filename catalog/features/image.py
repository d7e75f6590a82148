"""Image: a uint8 array of shape (height, width, channels), stored raw or as PNG."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features.base import Feature

__all__ = ["Image"]

#: Images with a fully known shape up to this many bytes are stored raw by default: decoding
#: a 28x28 PNG costs about six times the record read itself, raw costs nothing.
RAW_MAX_BYTES = 64 * 64 * 4
_ENCODINGS = ("raw", "png")


class Image(Feature):
    """An image as a NumPy uint8 array of shape ``(height, width, channels)``.

    ``channels`` is 1 (grayscale), 3 (RGB) or 4 (RGBA). ``encoding`` is "raw" (the pixels as
    they are; needs a fully known shape) or "png"; by default small fixed-shape images (up to
    64x64x4) are raw and everything else is PNG. A grayscale image may be given as
    ``(height, width)``; it is stored and returned as ``(height, width, 1)``.

    >>> Image(shape=(28, 28, 1))
    Image(shape=(28, 28, 1), dtype='uint8', encoding='raw')
    """

    type_name = "Image"

    def __init__(
        self,
        shape: Sequence[int | None] = (None, None, 3),
        *,
        dtype: str = "uint8",
        encoding: str | None = None,
    ) -> None:
        shape = tuple(shape)
        if len(shape) != 3 or shape[2] not in (1, 3, 4):
            raise FeatureError(
                f"Image shape must be (height, width, channels) with 1, 3 or 4 channels, "
                f"got {shape}"
            )
        if any(d is not None and (not isinstance(d, int) or d < 1) for d in shape[:2]):
            raise FeatureError(f"Image height and width must be positive ints or None, got {shape}")
        if np.dtype(dtype) != np.uint8:
            raise FeatureError(f"Image dtype must be uint8, got {dtype!r}")
        self.shape: tuple[int | None, int | None, int] = shape  # type: ignore[assignment]
        self.dtype = np.dtype(np.uint8)
        known = None not in shape
        if encoding is None:
            encoding = "raw" if known and math.prod(shape) <= RAW_MAX_BYTES else "png"  # type: ignore[arg-type]
        if encoding not in _ENCODINGS:
            raise FeatureError(f"Image encoding must be one of {_ENCODINGS}, got {encoding!r}")
        if encoding == "raw" and not known:
            raise FeatureError(f"Image encoding 'raw' needs a fully known shape, got {shape}")
        self.encoding = encoding
        self._size = math.prod(shape) if known else None  # type: ignore[arg-type]

    @property
    def fixed_size(self) -> int | None:
        return self._size if self.encoding == "raw" else None

    def _validate(self, value: Any) -> np.ndarray[Any, Any]:
        if not isinstance(value, np.ndarray):
            raise self._error(f"expected a NumPy array, got {type(value).__name__}")
        if value.dtype != np.uint8:
            raise self._error(f"expected dtype uint8, got {value.dtype}")
        if value.ndim == 2 and self.shape[2] == 1:
            value = value[:, :, None]
        ok = value.ndim == 3 and all(
            want is None or want == got for want, got in zip(self.shape, value.shape, strict=True)
        )
        if not ok:
            raise self._error(f"expected shape {self.shape}, got {value.shape}")
        return value  # type: ignore[no-any-return]

    def encode(self, value: Any) -> bytes:
        array = self._validate(value)
        if self.encoding == "raw":
            return array.tobytes()
        from PIL import Image as PILImage  # Pillow is only needed for PNG images

        pixels = array[:, :, 0] if self.shape[2] == 1 else array  # Pillow infers L, RGB, RGBA
        out = io.BytesIO()
        PILImage.fromarray(np.ascontiguousarray(pixels)).save(out, format="PNG")
        return out.getvalue()

    def decode(self, buf: bytearray, offset: int, length: int) -> np.ndarray[Any, Any]:
        if self.encoding == "raw":
            return np.frombuffer(buf, np.uint8, length, offset).reshape(self.shape)
        from PIL import Image as PILImage

        with PILImage.open(io.BytesIO(buf[offset : offset + length])) as img:
            array = np.array(img)
        return array.reshape(array.shape[0], array.shape[1], self.shape[2])

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "shape": list(self.shape),
            "dtype": self.dtype.name,
            "encoding": self.encoding,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Image:
        return cls(
            shape=data.get("shape", (None, None, 3)),
            dtype=data.get("dtype", "uint8"),
            encoding=data.get("encoding"),
        )

    def __repr__(self) -> str:
        return f"Image(shape={self.shape}, dtype={self.dtype.name!r}, encoding={self.encoding!r})"
