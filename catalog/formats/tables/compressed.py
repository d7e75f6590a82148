"""Table files compressed as pandas infers it from the name: ``.gz``, ``.bz2``, ``.xz``,
``.zst`` after the table's own suffix (``data.csv.gz``), read as a stream of their bytes.

gzip, bz2 and xz come with Python; Zstandard needs the ``zstandard`` package (the ``zstd``
extra), and without it a ``.zst`` file is one `MissingDependencyError` naming it. What a
reader does with the bytes (lines, their length budget) does not change: a compressed file
is bounded by the same budgets as a plain one.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path
from typing import IO, Any

from catalog.errors import MissingDependencyError, SourceFormatError

__all__ = ["COMPRESSIONS", "compression", "inner_suffix", "open_bytes"]

#: Compression suffixes pandas infers (``compression="infer"``) -> their name.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}


def compression(path: Path) -> str | None:
    """The compression of the file at `path`, from its name (None: not compressed)."""
    return COMPRESSIONS.get(Path(path).suffix.lower())


def inner_suffix(path: Path) -> str:
    """The suffix of the file at `path` under its compression (lower case): ``.csv`` for
    ``data.CSV.gz``, ``.csv`` for ``data.csv``.

    >>> inner_suffix(Path("a.csv.gz")), inner_suffix(Path("a.tsv")), inner_suffix(Path("a.gz"))
    ('.csv', '.tsv', '')
    """
    path = Path(path)
    if compression(path) is None:
        return path.suffix.lower()
    return Path(path.stem).suffix.lower()


def open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed as its name says (a plain file: as it is)."""
    kind = compression(path)
    if kind is None:
        return open(path, "rb")
    if kind == "gzip":
        inner: Any = gzip.open(path, "rb")  # noqa: SIM115 (closed with the reader)
    elif kind == "bz2":
        inner = bz2.open(path, "rb")  # noqa: SIM115
    elif kind == "xz":
        inner = lzma.open(path, "rb")  # noqa: SIM115
    else:
        inner = _zstd(path)
    return io.BufferedReader(_Decompressed(inner, path, kind))


class _Decompressed(io.RawIOBase):
    """A decompressing stream whose damage (a truncated or corrupt file) is one
    SourceFormatError naming the file, whatever the library raised."""

    def __init__(self, inner: Any, path: Path, kind: str) -> None:
        super().__init__()
        self._inner, self._path, self._kind = inner, path, kind

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._inner.read(len(buffer))
        except Exception as error:  # each library has its own: BadGzipFile, LZMAError, ...
            raise SourceFormatError(
                f"{self._path}: not a complete {self._kind} file, as its name says "
                f"({type(error).__name__}: {error}); compress it again, or rename it"
            ) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


def _zstd(path: Path) -> Any:
    try:
        import zstandard
    except ImportError:
        raise MissingDependencyError(
            f"{path}: reading Zstandard-compressed files needs zstandard: pip install "
            "'catalog[zstd]' (or decompress it: zstd -d FILE)"
        ) from None
    raw = open(path, "rb")  # noqa: SIM115 (closed with the reader)
    return zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
