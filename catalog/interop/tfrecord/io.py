"""TFRecord files: reading and writing the framing, plain or GZIP-compressed.

A TFRecord file is a run of records, each::

    uint64 length (little-endian) | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

Reading checks both checksums (``verify=False`` skips the data's, not the length's: a bad
length must never make us read gigabytes) and a short or corrupt file raises
SourceFormatError naming the file, the record and its byte offset. A GZIP file (TF's
``compression_type="GZIP"``) is recognized by its magic bytes and decompressed as a stream.
Writers write into a temporary file beside the target and rename it into place on close, so
a failed export never leaves half a file under the final name.
"""

from __future__ import annotations

import gzip
import os
import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from catalog.errors import SourceFormatError
from catalog.interop.tfrecord.crc import masked_crc32c

__all__ = [
    "Compression",
    "TFRecordWriter",
    "check_record",
    "is_gzip",
    "read_records",
    "write_records",
]

Compression = Literal["auto", "none", "gzip"]
_HEADER = struct.Struct("<QI")
_CRC = struct.Struct("<I")
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 1 << 20


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts with the GZIP magic bytes."""
    with open(path, "rb") as f:
        return f.read(2) == _GZIP_MAGIC


def _open(path: Path, compression: Compression) -> BinaryIO:
    gz = is_gzip(path) if compression == "auto" else compression == "gzip"
    if gz:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb", buffering=_BLOCK)


def check_record(
    path: object, index: int, offset: int, header: bytes, data: bytes, footer: bytes
) -> None:
    """Raise SourceFormatError unless `data`'s stored checksum in `footer` matches."""
    (stored,) = _CRC.unpack(footer)
    computed = masked_crc32c(data)
    if stored != computed:
        raise SourceFormatError(
            f"{path}: record {index} (byte offset {offset}): data checksum mismatch (stored "
            f"{stored:#010x}, computed {computed:#010x}); the file is corrupt"
        )


def _header(path: object, index: int, offset: int, header: bytes) -> int:
    """The data length a record header gives, its checksum verified."""
    length, stored = _HEADER.unpack(header)
    computed = masked_crc32c(header[:8])
    if stored != computed:
        raise SourceFormatError(
            f"{path}: record {index} (byte offset {offset}): length checksum mismatch (stored "
            f"{stored:#010x}, computed {computed:#010x}); not a TFRecord file, or corrupt "
            "(is it GZIP-compressed under another name? pass compression='gzip')"
        )
    return int(length)


def _truncated(path: object, index: int, offset: int, what: str) -> SourceFormatError:
    return SourceFormatError(
        f"{path}: record {index} (byte offset {offset}): the file ends inside the record's "
        f"{what}; it is truncated"
    )


def read_records(
    path: str | os.PathLike[str], *, compression: Compression = "auto", verify: bool = True
) -> Iterator[bytes]:
    """Yield the records of a TFRecord file in order, checksums verified."""
    path = Path(path)
    try:
        with _open(path, compression) as f:
            yield from _records(f, path, verify)
    except (OSError, EOFError, zlib.error) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise SourceFormatError(f"{path}: cannot read it as TFRecord ({error})") from None


def _records(f: BinaryIO, path: Path, verify: bool) -> Iterator[bytes]:
    read, unpack, index, offset = f.read, _HEADER.unpack, 0, 0
    while True:
        header = read(12)
        if len(header) < 12:
            if header:
                raise _truncated(path, index, offset, "length")
            return
        length, stored = unpack(header)
        if masked_crc32c(header[:8]) != stored:
            _header(path, index, offset, header)  # raises, naming what is wrong
        data = _read_exactly(f, length) if length > _BLOCK else read(length)
        footer = read(4)
        if len(data) != length or len(footer) != 4:
            raise _truncated(path, index, offset, "data" if len(data) != length else "checksum")
        if verify and _CRC.unpack(footer)[0] != masked_crc32c(data):
            check_record(path, index, offset, header, data, footer)
        yield data
        index += 1
        offset += 16 + length


def _read_exactly(f: BinaryIO, length: int) -> bytes:
    """Up to `length` bytes, read a block at a time (a huge length costs no huge buffer
    unless the data is really there)."""
    parts, left = [], length
    while left:
        part = f.read(min(left, 64 * _BLOCK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def frame(data: bytes) -> bytes:
    """One record, framed: header, data, checksum."""
    length = struct.pack("<Q", len(data))
    return length + _CRC.pack(masked_crc32c(length)) + data + _CRC.pack(masked_crc32c(data))


class TFRecordWriter:
    """Writes records to `path` (GZIP-compressed with ``compression="gzip"``).

    The file appears under its name only when `close` succeeds (a context manager closes
    it; leaving the block with an exception removes the partial file).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, compression: Literal["none", "gzip"] = "none"
    ) -> None:
        self.path = Path(path)
        # a fresh hidden name beside the target, created with the permissions the umask gives
        # (mkstemp's are always 0600)
        self._tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:12]}")
        fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        raw = os.fdopen(fd, "wb", buffering=_BLOCK)
        self._file: BinaryIO = (
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)  # type: ignore[assignment]
            if compression == "gzip"
            else raw
        )
        self._raw = raw
        self.count = 0

    def write(self, data: bytes) -> None:
        self._file.write(frame(data))
        self.count += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.close()
        self._raw.close()
        self._tmp.replace(self.path)

    def abort(self) -> None:
        """Drop what was written: the target is left as it was."""
        if not self._file.closed:
            self._file.close()
            self._raw.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_records(
    path: str | os.PathLike[str],
    records: Iterable[bytes],
    *,
    compression: Literal["none", "gzip"] = "none",
) -> int:
    """Write `records` to a TFRecord file; return how many."""
    with TFRecordWriter(path, compression=compression) as writer:
        for record in records:
            writer.write(record)
    return writer.count
