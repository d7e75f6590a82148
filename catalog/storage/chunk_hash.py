"""The hash every chunk of an ArrayRecord (Riegeli) file carries in its header.

A Riegeli chunk header (``doc/riegeli_records_file_format.md``) holds ``data_hash``: the
HighwayHash-64 of the chunk's data under Riegeli's fixed key (the ASCII of
``"Riegeli/records\\n"`` twice, as four little-endian words). array_record checks it on every
read of a local file; a record read by byte range (`catalog.read.remote_shard`) is checked
here against the same hash, so a flipped bit in an object in a bucket or on a mirror is an
error and never a wrong pixel; so is each chunk a fresh process's first batches read from a
local shard (`catalog.read.chunked_shard`). HighwayHash comes from ``highwayhash-cffi`` (a
small C extension, about 1.5 us for a 1 KB record), a dependency of catalog.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError

__all__ = ["KEY", "chunk_hash64", "chunk_hash_available", "chunk_hasher", "hash_in"]

#: Riegeli's HighwayHash key, as bytes (four little-endian 64-bit words).
KEY = struct.pack("<2Q", 0x2F696C6567656952, 0x0A7364726F636572) * 2

_hash64: Callable[[bytes], int] | None = None


def chunk_hash64() -> Callable[[bytes], int]:
    """A function giving the ``data_hash`` of a chunk's data as an int (the header's 8 bytes,
    little-endian); MissingDependencyError naming the extra when highwayhash-cffi is not
    installed."""
    global _hash64
    if _hash64 is None:
        _hash64 = _load()
    return _hash64


def chunk_hash_available() -> bool:
    """Whether chunk hashes can be checked here (highwayhash-cffi installed); loads it."""
    try:
        chunk_hash64()
    except MissingDependencyError:
        return False
    return True


def chunk_hasher() -> Callable[[bytes], bytes]:
    """A function giving the 8-byte ``data_hash`` of a chunk's data (as stored in its header);
    MissingDependencyError naming the extra when highwayhash-cffi is not installed."""
    hash64 = chunk_hash64()

    def hasher(data: bytes) -> bytes:
        return hash64(data).to_bytes(8, "little")

    return hasher


def hash_in(buffer: Any, starts: Any, sizes: Any) -> np.ndarray[Any, Any]:
    """The HighwayHash-64 (Riegeli's key) of ``buffer[start:start + size]`` for each of
    `starts` and `sizes` (lists or arrays of ints), as uint64, without copying those bytes
    (`buffer`: a writable NumPy array or a bytearray); MissingDependencyError as
    `chunk_hash64`."""
    hash64 = chunk_hash64()
    starts, sizes = np.asarray(starts).tolist(), np.asarray(sizes).tolist()
    found = _direct()
    if found is None:  # pragma: no cover - another build of the package
        view = memoryview(buffer).cast("B")
        hashes = [hash64(bytes(view[a : a + n])) for a, n in zip(starts, sizes, strict=True)]
    else:
        ffi, function, key = found
        base = ffi.from_buffer("uint8_t[]", buffer)
        hashes = [function(base + a, n, key) for a, n in zip(starts, sizes, strict=True)]
    return np.array(hashes, np.uint64)


@functools.cache
def _direct() -> tuple[Any, Any, Any] | None:
    """highwayhash-cffi's own ffi, its HighwayHash64 and Riegeli's key as its argument."""
    try:
        from highwayhash._highwayhash import ffi, lib
    except ImportError:  # pragma: no cover - another build of the package
        return None
    return ffi, lib.HighwayHash64, ffi.new("uint64_t[4]", list(struct.unpack("<4Q", KEY)))


def _load() -> Callable[[bytes], int]:
    try:
        import highwayhash
    except ImportError:
        raise MissingDependencyError(
            "reading records by byte ranges (remote_read='range') checks each chunk's hash "
            "with highwayhash-cffi, a dependency of catalog that is not installed: pip install "
            "highwayhash-cffi, or read through the shard cache (remote_read='cache')"
        ) from None
    found = _direct()  # the extension itself: a third of the wrapper's cost (it re-packs the
    if found is None:  # key per call)

        def wrapped(data: bytes) -> int:
            return int.from_bytes(highwayhash.highwayhash_64(KEY, bytes(data)), "little")

        return wrapped
    _, hash64, key = found

    def direct(data: bytes) -> int:
        value: int = hash64(data, len(data), key)
        return value

    return direct
