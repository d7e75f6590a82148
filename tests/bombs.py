"""Image files whose headers claim more pixels than they hold (decompression bombs): a small
valid file with its size fields rewritten, the way a hostile file is made."""

from __future__ import annotations

import io
import zlib
from typing import Any

import numpy as np
from PIL import Image as PILImage


def small(fmt: str, mode: str = "RGB", size: int = 16, **save: Any) -> bytes:
    """A valid `size` x `size` image file of noise in Pillow format `fmt`."""
    channels = {"L": 1, "RGB": 3, "RGBA": 4, "CMYK": 4, "P": 1}[mode]
    pixels = np.random.default_rng(0).integers(0, 255, (size, size, channels), np.uint8)
    img = PILImage.fromarray(pixels[..., 0] if channels == 1 else pixels, None)
    if mode == "P":
        img = img.convert("P")
    elif img.mode != mode:
        img = img.convert(mode)
    out = io.BytesIO()
    img.save(out, format=fmt, **save)
    return out.getvalue()


def claiming(data: bytes, height: int, width: int) -> bytes:
    """`data` (a JPEG or PNG file) with its header saying `height` x `width` pixels (a PNG's
    IHDR checksum fixed, so the header itself is valid)."""
    out = bytearray(data)
    if out[:8] == b"\x89PNG\r\n\x1a\n":
        out[16:20], out[20:24] = width.to_bytes(4, "big"), height.to_bytes(4, "big")
        out[29:33] = zlib.crc32(bytes(out[12:29])).to_bytes(4, "big")
        return bytes(out)
    pos = 2
    while pos < len(out):
        marker = out[pos + 1]
        if marker in (0xC0, 0xC1, 0xC2):
            out[pos + 5 : pos + 7] = height.to_bytes(2, "big")
            out[pos + 7 : pos + 9] = width.to_bytes(2, "big")
            return bytes(out)
        pos += 2 + int.from_bytes(out[pos + 2 : pos + 4], "big")
    raise ValueError("no frame header")
