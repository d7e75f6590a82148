"""IDX, the format of MNIST and its relatives: a typed, dimensioned array in one file.

Layout (big-endian): two zero bytes, a type code, the number of dimensions, one uint32 per
dimension, then the data. The header is parsed and checked against the file's actual length;
counts are never trusted or hard-coded. Files may be gzip'd (detected by content).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.base import Role, Source, SourceFormat

__all__ = ["FORMAT", "ROLES", "examples", "read_idx"]

_GZIP_MAGIC = b"\x1f\x8b"
_TYPES: dict[int, str] = {
    0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8",
}  # fmt: skip

#: The files an "idx" split reads, by role.
ROLES = ("images", "labels")


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise SourceFormatError(f"{path}: not a valid gzip file ({error})") from None
    return data


def read_idx(path: str | Path) -> np.ndarray[Any, Any]:
    """Read an IDX file (optionally gzip'd) into an array of the shape its header gives.

    Raises SourceFormatError naming the file when the magic, the type code or the length of
    the data does not match the header.
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise SourceFormatError(
            f"{path}: not an IDX file (magic {data[:4].hex() or 'missing'}; expected 0000 then "
            "a type code and a dimension count)"
        )
    type_code, ndim = data[2], data[3]
    if type_code not in _TYPES:
        raise SourceFormatError(f"{path}: unknown IDX type code 0x{type_code:02x}")
    if ndim == 0:
        raise SourceFormatError(f"{path}: IDX header declares zero dimensions")
    header_len = 4 + 4 * ndim
    if len(data) < header_len:
        raise SourceFormatError(f"{path}: IDX header is cut short ({len(data)} bytes)")
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(_TYPES[type_code])
    expected = header_len + int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        raise SourceFormatError(
            f"{path}: IDX header says shape {shape} ({expected} bytes with the header) but the "
            f"file holds {len(data)} bytes; the file is truncated or not what it claims"
        )
    return np.frombuffer(data, dtype, offset=header_len).reshape(shape)


def _arrays(files: Mapping[str, Path]) -> tuple[np.ndarray[Any, Any], list[int]]:
    images = read_idx(files["images"])
    labels = read_idx(files["labels"])
    if images.ndim != 3 or images.dtype != np.uint8:
        raise SourceFormatError(
            f"{files['images']}: expected uint8 images of shape (count, rows, cols), got "
            f"{images.dtype} {images.shape}"
        )
    if labels.ndim != 1:
        raise SourceFormatError(
            f"{files['labels']}: expected labels of shape (count,), got {labels.shape}"
        )
    if len(images) != len(labels):
        raise SourceFormatError(
            f"{files['images']} holds {len(images)} images but {files['labels']} holds "
            f"{len(labels)} labels"
        )
    return images, labels.tolist()


class _Arrays:
    """The split's examples by position (the files are read whole: gzip cannot seek)."""

    def __init__(self, source: Source) -> None:
        self._images, self._labels = _arrays({role: source.file(role) for role in ROLES})

    @property
    def length(self) -> int:
        return len(self._labels)

    def examples(self, start: int, stop: int) -> Iterator[tuple[str, dict[str, Any]]]:
        for i in range(start, min(stop, self.length)):
            yield str(i), {"image": self._images[i], "label": self._labels[i]}

    def close(self) -> None:
        pass


def examples(files: Mapping[str, Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(key, {"image": (rows, cols) uint8, "label": int})`` from an images + labels pair."""
    images, labels = _arrays(files)
    for i, (image, label) in enumerate(zip(images, labels, strict=True)):
        yield str(i), {"image": image, "label": label}


def _examples(source: Source) -> Iterator[tuple[str, dict[str, Any]]]:
    return examples({role: source.file(role) for role in ROLES})


FORMAT = SourceFormat(
    name="idx",
    description="IDX images + labels files (MNIST family), gzip'd or not",
    roles=tuple(Role(role) for role in ROLES),
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=_examples,
    random_access=_Arrays,
)
