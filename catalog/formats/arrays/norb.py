"""The NORB datasets' binary matrix files (small NORB's ``-dat``, ``-cat``, ``-info``).

A matrix file (https://cs.nyu.edu/~ylclab/data/norb-v1.0-small/) starts with little-endian
int32s: a magic number giving the element type (``0x1E3D4C55`` uint8, ``0x1E3D4C54`` int32,
``0x1E3D4C56`` int16, ``0x1E3D4C51`` float32, ``0x1E3D4C53`` float64), the number of
dimensions, then the dimensions (at least three of them are written: a matrix of fewer
dimensions pads them with 1s), then the elements in row-major order. `read_matrix` maps one
without reading it.

Format ``norb`` reads a small NORB split from three of them: role ``dat``, ``(N, 2, 96, 96)``
uint8 stereo pairs (``image``: the first camera, ``image2``: the second, each ``(96, 96,
1)``); ``cat``, ``(N,)`` categories (``label_category``); ``info``, ``(N, 4)``: the
instance (``instance``), elevation (``label_elevation``), azimuth (stored as 0, 2, ..., 34:
``label_azimuth`` is half of it, 0..17, as in the reference catalog) and lighting
(``label_lighting``). A Text feature ``id`` is formatted from option ``id`` with
``{index}`` (``train_{index:05d}``). Any range of examples is read without those before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Text
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "MAGIC", "Matrix", "examples", "read_matrix"]

#: magic number -> element type
MAGIC: dict[int, np.dtype[Any]] = {
    0x1E3D4C55: np.dtype(np.uint8),
    0x1E3D4C54: np.dtype("<i4"),
    0x1E3D4C56: np.dtype("<i2"),
    0x1E3D4C51: np.dtype("<f4"),
    0x1E3D4C53: np.dtype("<f8"),
}
_FEATURES = ("image", "image2", "label_category", "instance", "label_elevation",
             "label_azimuth", "label_lighting")  # fmt: skip


@dataclass(frozen=True)
class Matrix:
    """A matrix file's header: element type, shape, and where the elements start."""

    path: Path
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    offset: int

    def array(self) -> np.ndarray[Any, Any]:
        """The elements, memory-mapped (read only as they are used)."""
        if 0 in self.shape:
            return np.zeros(self.shape, self.dtype)
        return np.memmap(self.path, self.dtype, "r", self.offset, self.shape)


def read_matrix(path: Path) -> Matrix:
    """The header of the NORB matrix file `path`; SourceFormatError when it is not one or its
    size does not match its header."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise SourceFormatError(f"{path}: too short for a NORB matrix header")
        magic, ndim = np.frombuffer(head, "<i4")
        if int(magic) not in MAGIC:
            raise SourceFormatError(
                f"{path}: magic number {int(magic):#x} is not one of a NORB matrix file "
                f"({', '.join(f'{m:#x}' for m in MAGIC)}); is it still gzip'd?"
            )
        if not 0 <= ndim <= 16:
            raise SourceFormatError(f"{path}: {int(ndim)} dimensions")
        count = max(3, int(ndim))
        dims = np.frombuffer(f.read(4 * count), "<i4")
    if len(dims) < count or (dims < 0).any():
        raise SourceFormatError(f"{path}: a damaged header (dimensions {dims.tolist()})")
    dtype = MAGIC[int(magic)]
    shape = tuple(int(d) for d in dims[:ndim])
    offset = 8 + 4 * count
    expected = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    size = path.stat().st_size
    if size != expected:
        raise SourceFormatError(
            f"{path}: {size} bytes, but its header ({dtype}, shape {shape}) says {expected}"
        )
    return Matrix(path, dtype, shape, offset)


class _Split:
    """A split's examples by position, from the three memory-mapped matrices."""

    def __init__(self, source: Source) -> None:
        self._source = source
        dat, cat, info = (read_matrix(source.file(role)) for role in ("dat", "cat", "info"))
        n = dat.shape[0] if dat.shape else 0
        wanted = {dat: (n, 2, None, None), cat: (n,), info: (n, 4)}
        for matrix, shape in wanted.items():
            if len(matrix.shape) != len(shape) or any(
                want is not None and want != got
                for want, got in zip(shape, matrix.shape, strict=True)
            ):
                shown = tuple("h" if d is None else d for d in shape)
                raise SourceFormatError(
                    f"{matrix.path}: shape {matrix.shape}, expected {shown} for {n} examples"
                )
        self._dat, self._cat, self._info = dat.array(), cat.array(), info.array()
        self._length = n

    @property
    def length(self) -> int:
        return self._length

    def examples(self, start: int, stop: int) -> Examples:
        id_format = self._source.options["id"]
        for i in range(start, min(stop, self._length)):
            pair, info = self._dat[i], self._info[i]
            example: dict[str, Any] = {
                "image": np.array(pair[0])[..., None],
                "image2": np.array(pair[1])[..., None],
                "label_category": int(self._cat[i]),
                "instance": int(info[0]),
                "label_elevation": int(info[1]),
                "label_azimuth": int(info[2]) // 2,
                "label_lighting": int(info[3]),
            }
            if id_format is not None:
                example["id"] = id_format.format(index=i)
            yield str(i), example

    def close(self) -> None:
        self._dat = self._cat = self._info = np.zeros(0)


def examples(source: Source) -> Examples:
    """Yield ``(index, {image, image2, label_category, instance, label_elevation,
    label_azimuth, label_lighting[, id]})`` for every example."""
    split = _Split(source)
    return split.examples(0, split.length)


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(_FEATURES) | ({"id"} if options["id"] is not None else set()), frozenset()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if options["id"] is not None and not isinstance(features["id"], Text):
        return "feature 'id' must be Text"
    return None


FORMAT = SourceFormat(
    name="norb",
    description="small NORB's binary matrix files: stereo images, category, info",
    roles=(Role("dat"), Role("cat"), Role("info")),
    options={"id": Option("str", None, "the Text feature id, formatted with {index}")},
    features=_features,
    examples=examples,
    validate=_validate,
    random_access=_Split,
)
