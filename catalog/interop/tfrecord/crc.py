"""CRC32C (Castagnoli) and TFRecord's masked form of it.

TFRecord stores ``mask(crc32c(data))`` after the length and after the data of each record.
The checksum comes from ``google-crc32c`` (a C extension with SSE4.2/ARMv8 instructions, a
dependency of catalog), else from the ``crc32c`` package, else from a pure-Python table
(about 1000x slower: a warning names the package to install).

>>> crc32c(b"123456789") == 0xE3069283
True
>>> masked_crc32c(b"") == 0xA282EAD8
True
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["IMPLEMENTATION", "crc32c", "mask", "masked_crc32c"]

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


def _pure_crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC32C in Python: correct, slow (a fallback when no C implementation is installed)."""
    table, crc = _TABLE, _U32
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ _U32


_TABLE = _table()


def _choose() -> tuple[Callable[[bytes | bytearray | memoryview], int], str]:
    try:
        import google_crc32c

        if google_crc32c.implementation == "c":
            return google_crc32c.value, "google-crc32c"
    except ImportError:
        pass
    try:
        import crc32c as crc32c_package

        return crc32c_package.crc32c, "crc32c"
    except ImportError:
        pass
    return _pure_crc32c, "python"


crc32c: Callable[[bytes | bytearray | memoryview], int]
#: Which implementation computes checksums: "google-crc32c", "crc32c" or "python".
crc32c, IMPLEMENTATION = _choose()


def mask(crc: int) -> int:
    """TFRecord's mask: rotate right by 15 bits, add a constant (mod 2**32)."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """``mask(crc32c(data))``: the checksum TFRecord stores."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32
