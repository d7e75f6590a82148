"""Random access into TFRecord files: an index of record offsets, built once and cached.

A TFRecord file has no index, so reading record ``i`` needs the offsets of the records before
it. `record_offsets` scans the headers once (seeking past the data, checking each length's
checksum) and stores the offsets in the index dir, ``<data dir>/tfrecord-index/`` by default,
under a name made of the file's absolute path, size and modification time: the user's own
directory is never written to, and a file that changes gets a new index. `IndexedReader`
then reads any record with one ``pread``, its checksum verified.

GZIP files cannot be read at random; they are refused with what to do instead.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, overload

import numpy as np

from catalog.errors import SourceFormatError
from catalog.interop.tfrecord.io import _HEADER, _header, _truncated, check_record, is_gzip
from catalog.storage import paths

__all__ = ["INDEX_DIR", "IndexedReader", "build_offsets", "record_offsets"]

#: The index dir's name inside the data dir.
INDEX_DIR = "tfrecord-index"


def build_offsets(path: str | os.PathLike[str]) -> np.ndarray[Any, Any]:
    """Scan a TFRecord file: the byte offset of every record, then the file's size (int64)."""
    path = Path(path)
    if is_gzip(path):
        raise SourceFormatError(
            f"{path}: a GZIP-compressed TFRecord file cannot be read at random; read it in order "
            "(catalog.interop.tfrecord.read_records) or decompress it first"
        )
    size = path.stat().st_size
    offsets = [0]
    with open(path, "rb", buffering=0) as f:
        offset, index = 0, 0
        while offset < size:
            header = os.pread(f.fileno(), 12, offset)
            if len(header) < 12:
                raise _truncated(path, index, offset, "length")
            length = _header(path, index, offset, header)
            offset += 16 + length
            if offset > size:
                raise _truncated(path, index, offset - 16 - length, "data")
            offsets.append(offset)
            index += 1
    return np.array(offsets, np.int64)


def _index_file(path: Path, index_dir: Path) -> Path:
    stat = path.stat()
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return index_dir / f"{key}-{stat.st_size}-{stat.st_mtime_ns}.npy"


def record_offsets(
    path: str | os.PathLike[str], index_dir: str | os.PathLike[str] | None = None
) -> np.ndarray[Any, Any]:
    """The record offsets of a TFRecord file, from the index dir or scanned and stored there.

    `index_dir` defaults to ``<data dir>/tfrecord-index`` (for a data dir in a bucket, the
    user cache dir's). The index is written atomically;
    when it cannot be written (a read-only data dir) the scan is used without storing it.
    """
    path = Path(path)
    folder = Path(index_dir) if index_dir is not None else paths.local_dir() / INDEX_DIR
    stored = _index_file(path, folder)
    if stored.is_file():
        try:
            offsets: np.ndarray[Any, Any] = np.load(stored, allow_pickle=False)
            if offsets.dtype == np.int64 and offsets.ndim == 1 and len(offsets):
                return offsets
        except (OSError, ValueError):
            pass  # unreadable: build it again
    offsets = build_offsets(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob(f"{stored.name.split('-')[0]}-*.npy"):
            old.unlink(missing_ok=True)  # the index of an older version of the file
        fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".npy", dir=folder)
        with os.fdopen(fd, "wb") as f:
            np.save(f, offsets, allow_pickle=False)
        Path(tmp).replace(stored)
    except OSError:
        pass  # a read-only index dir: the offsets still serve this process
    return offsets


class IndexedReader:
    """Records of one TFRecord file by index: the reader interface `DataSource` uses.

    ``seek(i)`` then ``read()`` reads record i; ``read(start, stop)`` reads a range. Reads use
    ``pread`` (no shared file position), each checksum verified.
    """

    def __init__(
        self, path: str | os.PathLike[str], index_dir: str | os.PathLike[str] | None = None
    ) -> None:
        self._fd: int | None = None  # set first: `close` (and `__del__`) work after any failure
        self.path = Path(path)
        self._offsets = record_offsets(self.path, index_dir)
        self._fd = os.open(self.path, os.O_RDONLY)
        self._position = 0

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def seek(self, index: int) -> None:
        self._position = index

    def _one(self, index: int, chunk: bytes | None = None, base: int = 0) -> bytes:
        start, stop = int(self._offsets[index]), int(self._offsets[index + 1])
        if chunk is None:
            assert self._fd is not None, "the reader is closed"
            chunk, base = os.pread(self._fd, stop - start, start), start
        record = chunk[start - base : stop - base]
        if len(record) != stop - start:
            raise _truncated(self.path, index, start, "data")
        header, data, footer = record[:12], record[12:-4], record[-4:]
        (length, _) = _HEADER.unpack(header)
        if length != len(data):
            raise SourceFormatError(
                f"{self.path}: record {index} (byte offset {start}) is not where its index says; "
                "the file changed after it was indexed"
            )
        check_record(self.path, index, start, header, data, footer)
        return data

    @overload
    def read(self) -> bytes: ...
    @overload
    def read(self, start: int, stop: int) -> list[bytes]: ...
    def read(self, start: int | None = None, stop: int | None = None) -> bytes | list[bytes]:
        if start is None or stop is None:
            index = self._position
            self._position += 1
            return self._one(index)
        assert self._fd is not None, "the reader is closed"
        base = int(self._offsets[start])
        chunk = os.pread(self._fd, int(self._offsets[stop]) - base, base)
        return [self._one(i, chunk, base) for i in range(start, stop)]

    def close(self) -> None:
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.close()
