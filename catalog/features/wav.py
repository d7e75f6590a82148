"""WAV files: read the header and samples of a RIFF/WAVE file, and write samples as one.

The standard library's `wave` reads integer PCM only, and before Python 3.12 not the
``WAVE_FORMAT_EXTENSIBLE`` header many tools write; the format is simple enough to read here:
a ``RIFF`` header, then chunks (``fmt ``, ``data`` and others, which are skipped).

Supported: integer PCM of 8, 16, 24 or 32 bits (format tag 1) and IEEE floats of 32 or 64 bits
(tag 3), either directly or inside an extensible header (tag 0xFFFE), any number of channels.
Samples come back as an array of shape ``(frames, channels)``: 8-bit PCM (unsigned on disk)
as int16 values in -128..127, 16-bit as int16, 24- and 32-bit as int32, floats as float32 or
float64. Reading never copies the sample bytes: the array is a view of the buffer given.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog.errors import FeatureError

__all__ = ["WavHeader", "read_header", "read_samples", "write_wav"]

_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE


@dataclass(frozen=True)
class WavHeader:
    """What a WAV file's ``fmt `` chunk says, and where its ``data`` chunk is."""

    sample_rate: int
    channels: int
    bits: int
    is_float: bool
    #: Offset and length, in bytes, of the samples within the file.
    data_offset: int
    data_length: int

    @property
    def frames(self) -> int:
        return self.data_length // (self.channels * self.bits // 8)

    def describe(self) -> str:
        kind = "float" if self.is_float else "PCM"
        return f"{self.bits}-bit {kind}, {self.channels} channel(s), {self.sample_rate} Hz"


def read_header(data: bytes | bytearray | memoryview, where: str = "WAV data") -> WavHeader:
    """Parse a WAV file's header; FeatureError naming `where` when it is no WAV file we read."""
    view = memoryview(data)
    if len(view) < 12 or bytes(view[0:4]) != b"RIFF" or bytes(view[8:12]) != b"WAVE":
        raise FeatureError(f"{where}: not a WAV file (no RIFF/WAVE header)")
    pos, fmt = 12, None
    while pos + 8 <= len(view):
        chunk_id = bytes(view[pos : pos + 4])
        (size,) = struct.unpack_from("<I", view, pos + 4)
        body = pos + 8
        if chunk_id == b"fmt ":
            if size < 16 or body + size > len(view):
                raise FeatureError(f"{where}: a truncated 'fmt ' chunk")
            fmt = _format(view, body, size, where)
        elif chunk_id == b"data":
            if fmt is None:
                raise FeatureError(f"{where}: the 'data' chunk comes before the 'fmt ' chunk")
            length = min(size, len(view) - body)
            if length < size:
                raise FeatureError(
                    f"{where}: truncated: the 'data' chunk says {size} bytes, {length} are there"
                )
            tag, channels, rate, bits = fmt
            frame = channels * bits // 8
            return WavHeader(rate, channels, bits, tag == _FLOAT, body, length - length % frame)
        pos = body + size + (size & 1)  # chunks are padded to an even size
    raise FeatureError(f"{where}: no 'data' chunk")


def _format(view: memoryview, body: int, size: int, where: str) -> tuple[int, int, int, int]:
    tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", view, body)
    if tag == _EXTENSIBLE and size >= 40:
        (tag,) = struct.unpack_from("<H", view, body + 24)  # the sub-format GUID's first bytes
    ok = (tag == _PCM and bits in (8, 16, 24, 32)) or (tag == _FLOAT and bits in (32, 64))
    if not ok or channels < 1 or rate < 1:
        raise FeatureError(
            f"{where}: unsupported WAV format (tag {tag}, {bits} bits, {channels} channels); "
            "readable: 8/16/24/32-bit integer PCM, 32/64-bit float"
        )
    return tag, channels, rate, bits


def read_samples(data: bytearray | bytes, header: WavHeader) -> np.ndarray[Any, Any]:
    """The samples as a ``(frames, channels)`` array (see the module docstring for dtypes).

    16-bit, 32-bit and float samples are a view of `data` (writable when `data` is a bytearray).
    """
    n = header.frames * header.channels
    offset = header.data_offset
    if header.is_float:
        dtype = np.dtype("<f4") if header.bits == 32 else np.dtype("<f8")
        array = np.frombuffer(data, dtype, n, offset)
    elif header.bits == 8:
        array = np.frombuffer(data, np.uint8, n, offset).astype(np.int16) - 128
    elif header.bits == 16:
        array = np.frombuffer(data, np.dtype("<i2"), n, offset)
    elif header.bits == 32:
        array = np.frombuffer(data, np.dtype("<i4"), n, offset)
    else:  # 24 bits: little-endian triples, sign-extended into int32
        raw = np.frombuffer(data, np.uint8, n * 3, offset).reshape(n, 3).astype(np.int32)
        array = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
        array = np.where(array >= 1 << 23, array - (1 << 24), array).astype(np.int32)
    return array.reshape(header.frames, header.channels)


def write_wav(samples: np.ndarray[Any, Any], sample_rate: int) -> bytes:
    """A WAV file of `samples` (``(frames,)`` or ``(frames, channels)``): int16 and int32 as
    integer PCM of that width, float32 and float64 as IEEE floats."""
    array = samples if samples.ndim == 2 else samples.reshape(-1, 1)
    dtype = array.dtype
    if dtype == np.int16 or dtype == np.int32:
        tag = _PCM
    elif dtype == np.float32 or dtype == np.float64:
        tag = _FLOAT
    else:
        raise ValueError(f"write_wav takes int16, int32, float32 or float64 samples, got {dtype}")
    channels, width = array.shape[1], dtype.itemsize
    data = np.ascontiguousarray(array, dtype=dtype.newbyteorder("<")).tobytes()
    fmt = struct.pack(
        "<HHIIHH", tag, channels, sample_rate, sample_rate * channels * width, channels * width,
        8 * width,
    )  # fmt: skip
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body
