"""Write IDX files and deterministic pixel patterns, for dummy data, tests and benchmarks."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["pattern_images", "pattern_labels", "write_idx"]

_TYPE_CODES = {np.dtype("uint8"): 0x08, np.dtype("int8"): 0x09, np.dtype(">i4"): 0x0C}


def write_idx(path: str | Path, array: np.ndarray[Any, Any], *, compress: bool = True) -> Path:
    """Write `array` as an IDX file (gzip'd with a fixed timestamp when `compress`)."""
    array = np.ascontiguousarray(array)
    code = _TYPE_CODES[array.dtype]
    header = bytes([0, 0, code, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape
    )
    data = header + array.tobytes()
    path = Path(path)
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def pattern_images(
    count: int, rows: int = 28, cols: int = 28, *, seed: int = 0
) -> np.ndarray[Any, Any]:
    """Images whose every pixel is predictable: ``(31*i + 7*r + 3*c + seed) % 256``."""
    i, r, c = np.ogrid[:count, :rows, :cols]
    pixels: np.ndarray[Any, Any] = (31 * i + 7 * r + 3 * c + seed) % 256
    return pixels.astype(np.uint8)


def pattern_labels(count: int, num_classes: int = 10, *, seed: int = 0) -> np.ndarray[Any, Any]:
    """Labels ``(3*i + seed) % num_classes`` as uint8."""
    return ((3 * np.arange(count) + seed) % num_classes).astype(np.uint8)
