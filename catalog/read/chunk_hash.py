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

import struct
from collections.abc import Callable
from typing import Any

from catalog.errors import MissingDependencyError

__all__ = ["KEY", "chunk_hash64", "chunk_hasher"]

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


def chunk_hasher() -> Callable[[bytes], bytes]:
    """A function giving the 8-byte ``data_hash`` of a chunk's data (as stored in its header);
    MissingDependencyError naming the extra when highwayhash-cffi is not installed."""
    hash64 = chunk_hash64()

    def hasher(data: bytes) -> bytes:
        return hash64(data).to_bytes(8, "little")

    return hasher


def _load() -> Callable[[bytes], int]:
    try:
        import highwayhash
    except ImportError:
        raise MissingDependencyError(
            "reading records by byte ranges (remote_read='range') checks each chunk's hash "
            "with highwayhash-cffi, a dependency of catalog that is not installed: pip install "
            "highwayhash-cffi, or read through the shard cache (remote_read='cache')"
        ) from None
    try:  # the extension itself: a third of the wrapper's cost (it re-packs the key per call)
        from highwayhash._highwayhash import ffi, lib
    except ImportError:  # pragma: no cover - another build of the package

        def wrapped(data: bytes) -> int:
            return int.from_bytes(highwayhash.highwayhash_64(KEY, bytes(data)), "little")

        return wrapped
    key: Any = ffi.new("uint64_t[4]", list(struct.unpack("<4Q", KEY)))
    hash64 = lib.HighwayHash64

    def direct(data: bytes) -> int:
        value: int = hash64(data, len(data), key)
        return value

    return direct
