"""IDX, the format of MNIST and its relatives: a typed, dimensioned array in one file.

Layout (big-endian): two zero bytes, a type code, the number of dimensions, one uint32 per
dimension, then the data. The header is parsed and checked against the file's actual length;
counts are never trusted or hard-coded. Files may be gzip'd (detected by content). Data is
read from the (decompressed) stream in chunks of about CHUNK_BYTES, so preparing holds a few
hundred KiB of pixels at a time, not the whole file (``benchmarks/idx_memory.py`` measures
it: 1.6 MiB peak for 60,000 28x28 images, where reading the file whole took 91 MiB).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.base import Role, Source, SourceFormat

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


class _IdxFile:
    """An open IDX file (gzip'd or not): its header, checked, and its data as a stream."""

    def __init__(self, path: Path, stack: contextlib.ExitStack) -> None:
        self.path = path
        raw = stack.enter_context(open(path, "rb"))  # noqa: SIM115 (closed by `stack`)
        gzipped = raw.read(2) == _GZIP_MAGIC
        actual = os.fstat(raw.fileno()).st_size
        if gzipped and actual >= 18:  # the gzip trailer: the data's size modulo 4 GiB
            raw.seek(-4, os.SEEK_END)
            actual = int.from_bytes(raw.read(4), "little")
        raw.seek(0)
        self.stream: io.BufferedIOBase = raw
        if gzipped:
            self.stream = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        head = self._read(4, exact=False)
        if len(head) < 4 or head[0] != 0 or head[1] != 0:
            raise SourceFormatError(
                f"{path}: not an IDX file (magic {head[:4].hex() or 'missing'}; expected 0000 "
                "then a type code and a dimension count)"
            )
        type_code, ndim = head[2], head[3]
        if type_code not in _TYPES:
            raise SourceFormatError(f"{path}: unknown IDX type code 0x{type_code:02x}")
        if ndim == 0:
            raise SourceFormatError(f"{path}: IDX header declares zero dimensions")
        dims = self._read(4 * ndim, exact=False)
        if len(dims) < 4 * ndim:
            raise SourceFormatError(f"{path}: IDX header is cut short ({4 + len(dims)} bytes)")
        self.shape = tuple(int.from_bytes(dims[4 * i : 4 * i + 4], "big") for i in range(ndim))
        self.dtype = np.dtype(_TYPES[type_code])
        self.header_len = 4 + 4 * ndim
        self.expected = self.header_len + int(np.prod(self.shape)) * self.dtype.itemsize
        # A cheap check of the length up front (the plain file's size, the gzip trailer's);
        # reading checks it again, as the bytes come.
        if actual != self.expected % (1 << 32 if gzipped else 1 << 64):
            self._mismatch(actual, gzipped=gzipped)

    def _mismatch(self, actual: int, *, gzipped: bool = False) -> NoReturn:
        holds = "its gzip trailer says it holds" if gzipped else "the file holds"
        what = "truncated, not a valid gzip file," if gzipped else "truncated"
        raise SourceFormatError(
            f"{self.path}: IDX header says shape {self.shape} ({self.expected} bytes with the "
            f"header) but {holds} {actual} bytes; the file is {what} or not what it claims"
        )

    def _read(self, n: int, *, exact: bool = True) -> bytes:
        try:
            data = self.stream.read(n)
        except _GZIP_ERRORS as error:
            raise SourceFormatError(f"{self.path}: not a valid gzip file ({error})") from None
        if exact and len(data) < n:
            self._mismatch(self.stream.tell())
        return data

    def chunks(self, rows_per_chunk: int | None = None) -> Iterator[np.ndarray[Any, Any]]:
        """The data, as arrays of up to `rows_per_chunk` rows (along the first dimension)."""
        row_bytes = int(np.prod(self.shape[1:])) * self.dtype.itemsize
        per_chunk = rows_per_chunk or max(1, CHUNK_BYTES // max(row_bytes, 1))
        for start in range(0, self.shape[0], per_chunk):
            rows = min(per_chunk, self.shape[0] - start)
            data = self._read(rows * row_bytes)
            yield np.frombuffer(data, self.dtype).reshape((rows, *self.shape[1:]))
        if self._read(1, exact=False):
            extra = self.expected + 1 + len(self._read(CHUNK_BYTES, exact=False))
            self._mismatch(extra)

    def read_all(self) -> np.ndarray[Any, Any]:
        out = np.empty(self.shape, self.dtype)
        flat = out.reshape(self.shape[0], -1) if self.shape[0] else out
        start = 0
        for chunk in self.chunks():
            flat[start : start + len(chunk)] = chunk.reshape(len(chunk), -1)
            start += len(chunk)
        return out


def read_idx(path: str | Path) -> np.ndarray[Any, Any]:
    """Read an IDX file (optionally gzip'd) into an array of the shape its header gives.

    Raises SourceFormatError naming the file when the magic, the type code or the length of
    the data does not match the header. Memory: the array, plus about CHUNK_BYTES.
    """
    with contextlib.ExitStack() as stack:
        return _IdxFile(Path(path), stack).read_all()


def examples(files: Mapping[str, Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(key, {"image": (rows, cols) uint8, "label": int})`` from an images + labels pair.

    The images stream from the (gzip'd) file about CHUNK_BYTES at a time, so memory stays
    bounded by that and the labels, whatever the number of images.
    """
    with contextlib.ExitStack() as stack:
        images = _IdxFile(Path(files["images"]), stack)
        labels = read_idx(files["labels"])
        if len(images.shape) != 3 or images.dtype != np.uint8:
            raise SourceFormatError(
                f"{files['images']}: expected uint8 images of shape (count, rows, cols), got "
                f"{images.dtype} {images.shape}"
            )
        if labels.ndim != 1:
            raise SourceFormatError(
                f"{files['labels']}: expected labels of shape (count,), got {labels.shape}"
            )
        if images.shape[0] != len(labels):
            raise SourceFormatError(
                f"{files['images']} holds {images.shape[0]} images but {files['labels']} "
                f"holds {len(labels)} labels"
            )
        index = 0
        label_list = labels.tolist()
        for chunk in images.chunks():
            for image in chunk:
                yield str(index), {"image": image, "label": label_list[index]}
                index += 1


def _examples(source: Source) -> Iterator[tuple[str, dict[str, Any]]]:
    return examples({role: source.file(role) for role in ROLES})


FORMAT = SourceFormat(
    name="idx",
    description="IDX images + labels files (MNIST family), gzip'd or not",
    roles=tuple(Role(role) for role in ROLES),
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=_examples,
)
