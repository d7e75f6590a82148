"""IDX, the format of MNIST and its relatives: a typed, dimensioned array in one file.

Layout (big-endian): two zero bytes, a type code, the number of dimensions, one uint32 per
dimension, then the data. The header is parsed and checked against the file's actual length;
counts are never trusted or hard-coded. Files may be gzip'd (detected by content). Files
are read as streams, a block of items at a time, so memory stays bounded; a file inside a zip
download (EMNIST's gz members) is read in place, the zip never extracted.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.base import Role, Source, SourceFile, SourceFormat

__all__ = ["FORMAT", "ROLES", "examples", "read_idx"]

_GZIP_MAGIC = b"\x1f\x8b"
_TYPES: dict[int, str] = {
    0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8",
}  # fmt: skip
_GZIP_ERRORS = (OSError, EOFError, zlib.error)

#: The files an "idx" split reads, by role.
ROLES = ("images", "labels")
#: Bytes of examples read from the (decompressed) stream at a time: memory stays a few times
#: this, whatever the file's size.
CHUNK_BYTES = 1 << 18


#: How many bytes of items are read at a time: memory stays bounded whatever the file's size
#: (EMNIST byclass: 547 MB of images); 256 KiB keeps the peak near 1-2 MiB of pixels.
BLOCK_BYTES = 1 << 18


class _Reader:
    """An IDX file (optionally gzip'd) opened as a stream: its header, then its items."""

    def __init__(self, path: SourceFile) -> None:
        self.path = path
        with path.open("rb") as f:
            compressed = f.read(2) == _GZIP_MAGIC
        raw: IO[bytes] = path.open("rb")
        self.file: IO[bytes] | gzip.GzipFile = (
            gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        )
        self._raw = raw
        try:
            self._header()
        except BaseException:
            self.close()
            raise

    def _read(self, size: int) -> bytes:
        try:
            return self.file.read(size)
        except (OSError, EOFError, zlib.error) as error:
            raise SourceFormatError(f"{self.path}: not a valid gzip file ({error})") from None

    def _header(self) -> None:
        head = self._read(4)
        if len(head) < 4 or head[0] != 0 or head[1] != 0:
            raise SourceFormatError(
                f"{self.path}: not an IDX file (magic {head.hex() or 'missing'}; expected 0000 "
                "then a type code and a dimension count)"
            )
        type_code, ndim = head[2], head[3]
        if type_code not in _TYPES:
            raise SourceFormatError(f"{self.path}: unknown IDX type code 0x{type_code:02x}")
        if ndim == 0:
            raise SourceFormatError(f"{self.path}: IDX header declares zero dimensions")
        dims = self._read(4 * ndim)
        if len(dims) < 4 * ndim:
            raise SourceFormatError(f"{self.path}: IDX header is cut short ({4 + len(dims)} bytes)")
        self.header_len = 4 + 4 * ndim
        self.shape = tuple(int.from_bytes(dims[4 * i : 4 * i + 4], "big") for i in range(ndim))
        self.dtype = np.dtype(_TYPES[type_code])
        self.item_shape = self.shape[1:]
        self.item_bytes = int(np.prod(self.item_shape)) * self.dtype.itemsize

    def _length_error(self, held: int) -> SourceFormatError:
        expected = self.header_len + self.shape[0] * self.item_bytes
        return SourceFormatError(
            f"{self.path}: IDX header says shape {self.shape} ({expected} bytes with the header) "
            f"but the file holds {held} bytes; the file is truncated or not what it claims"
        )

    def blocks(self) -> Iterator[np.ndarray[Any, Any]]:
        """The items, a block at a time, each of shape (n, *item_shape); the file's length is
        checked against the header at the end."""
        per_block = max(1, BLOCK_BYTES // max(1, self.item_bytes))
        done = 0
        while done < self.shape[0]:
            n = min(per_block, self.shape[0] - done)
            data = self._read(n * self.item_bytes)
            if len(data) != n * self.item_bytes:
                raise self._length_error(self.header_len + done * self.item_bytes + len(data))
            yield np.frombuffer(data, self.dtype).reshape((n, *self.item_shape))
            done += n
        extra = 0
        while chunk := self._read(BLOCK_BYTES):
            extra += len(chunk)
        if extra:
            raise self._length_error(self.header_len + done * self.item_bytes + extra)

    def close(self) -> None:
        self.file.close()
        self._raw.close()


def read_idx(path: str | Path) -> np.ndarray[Any, Any]:
    """Read an IDX file (optionally gzip'd) into an array of the shape its header gives.

    Raises SourceFormatError naming the file when the magic, the type code or the length of
    the data does not match the header. Memory: the array, plus about CHUNK_BYTES.
    """
    reader = _Reader(Path(path) if isinstance(path, str) else path)
    try:
        blocks = list(reader.blocks())
    finally:
        reader.close()
    if not blocks:
        return np.zeros(reader.shape, reader.dtype)
    return np.concatenate(blocks).reshape(reader.shape)


def examples(files: Mapping[str, SourceFile]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(key, {"image": (rows, cols) uint8, "label": int})`` from an images + labels pair,
    read as streams a block at a time (memory stays bounded)."""
    images = _Reader(files["images"])
    try:
        labels = _Reader(files["labels"])
    except BaseException:
        images.close()
        raise
    try:
        if len(images.shape) != 3 or images.dtype != np.uint8:
            raise SourceFormatError(
                f"{files['images']}: expected uint8 images of shape (count, rows, cols), got "
                f"{images.dtype} {images.shape}"
            )
        if len(labels.shape) != 1:
            raise SourceFormatError(
                f"{files['labels']}: expected labels of shape (count,), got {labels.shape}"
            )
        if images.shape[0] != labels.shape[0]:
            raise SourceFormatError(
                f"{files['images']} holds {images.shape[0]} images but {files['labels']} holds "
                f"{labels.shape[0]} labels"
            )
        label_values = (int(v) for block in labels.blocks() for v in block.tolist())
        i = 0
        for block in images.blocks():
            for image in block:
                yield str(i), {"image": image, "label": next(label_values)}
                i += 1
        for _ in label_values:  # reads to the end, which checks the labels file's length
            pass
    finally:
        images.close()
        labels.close()


def _examples(source: Source) -> Iterator[tuple[str, dict[str, Any]]]:
    return examples({role: source.stream(role) for role in ROLES})


FORMAT = SourceFormat(
    name="idx",
    description="IDX images + labels files (MNIST family), gzip'd or not",
    roles=tuple(Role(role, stream=True) for role in ROLES),
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=_examples,
)
