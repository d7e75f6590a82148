"""Decoding stored image files as little as the caller needs: the photo path's decoder.

`decode` turns the bytes of a JPEG or PNG file into a uint8 array ``(height, width,
channels)``. Callers that will shrink the result or keep only part of it say so: `window` is
the part of the image (full-size pixel coordinates) they keep, `at_least` the size that part
must still have. A JPEG is then decoded by libjpeg-turbo (through `simplejpeg`) in the DCT
domain at the smallest of the scales M/8 in `SCALES` (1/8, 2/8, 3/8, 4/8, full) at which the
window still covers `at_least`, so what is left for the resize is a shrink by less than 2x;
the window is cut from that. Full-size JPEG pixels are libjpeg-turbo's accurate integer IDCT
with smooth chroma upsampling, as Pillow's decode (same library, same settings).

What goes which way is fixed by the file's header, never a silent fallback after a failure:

- baseline and progressive JPEGs in grayscale or YCbCr/RGB: simplejpeg;
- 8-bit PNGs whose own channels are the ones asked for (gray for 1, RGB for 3, RGBA for 4)
  and that have no palette or transparency chunk: OpenCV's libpng (``cv2.imdecode``; its
  per-call cost is an eighth of Pillow's on a 28x28 PNG), channels swapped from BGR(A);
- everything else (CMYK/YCCK JPEGs, which need Adobe's inverted CMYK conversion; palette,
  16-bit or converted PNGs; other formats): Pillow, a JPEG there in draft mode (1/2, 1/4,
  1/8). PNG is lossless: every route gives Pillow's pixels exactly.

`decoder_for` names the route of a file.

A file that does not decode (corrupt, truncated, not an image), or whose header claims more
pixels than the budget (`catalog.features.pixel_budget`), is a SourceFormatError saying so; a
data source reading a prepared record adds the shard and record to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import simplejpeg

from catalog.errors import SourceFormatError
from catalog.features import pixel_budget

__all__ = ["SCALES", "decode", "decoder_for", "image_size", "jpeg_scale"]

Array = np.ndarray[Any, Any]
Data = bytes | bytearray | memoryview
Window = tuple[int, int, int, int]  # top, left, height, width in full-size pixels
_COLORSPACES = {1: "GRAY", 3: "RGB", 4: "RGBA"}  # channels -> simplejpeg's output colorspace
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}  # channels -> Pillow's mode
_PILLOW_JPEG = frozenset({"CMYK", "YCCK"})  # colorspaces simplejpeg does not convert to RGB


def _is_jpeg(data: Data) -> bool:
    return bytes(data[:3]) == b"\xff\xd8\xff"


def _jpeg_header(data: Data) -> tuple[int, int, str]:
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
    except ValueError as error:
        raise _damaged("JPEG", data, error) from None
    return int(height), int(width), str(colorspace)


def _damaged(kind: str, data: Data, error: BaseException) -> SourceFormatError:
    return SourceFormatError(
        f"a damaged {kind} file of {len(data)} bytes (corrupt or truncated): {error}"
    )


def _channels(channels: int) -> int:
    if channels not in _COLORSPACES:
        raise ValueError(f"channels must be 1, 3 or 4, got {channels!r}")
    return channels


def _is_png(data: Data) -> bool:
    return bytes(data[:8]) == b"\x89PNG\r\n\x1a\n" and bytes(data[12:16]) == b"IHDR"


def _plain_png(data: Data, channels: int) -> bool:
    """An 8-bit PNG with exactly `channels` channels of its own (no palette, no tRNS chunk
    before its pixels): what OpenCV decodes to Pillow's pixels."""
    if not _is_png(data) or len(data) < 29 or data[24] != 8:
        return False
    if _PNG_CHANNELS.get(data[25]) != channels:
        return False
    head = bytes(data[: bytes(data).find(b"IDAT")])
    return b"tRNS" not in head


_PNG_CHANNELS = {0: 1, 2: 3, 6: 4}  # PNG colour type -> channels (3: palette, 4: gray+alpha)


def decoder_for(data: Data, channels: int = 3) -> str:
    """Which library decodes the file `data` to `channels` channels: "simplejpeg",
    "opencv" or "pillow" (see the module docstring)."""
    if _is_jpeg(data) and _jpeg_header(data)[2] not in _PILLOW_JPEG:
        return "simplejpeg"
    if _plain_png(data, channels):
        return "opencv"
    return "pillow"


def image_size(data: Data) -> tuple[int, int]:
    """``(height, width)`` of an image file from its header, without decoding pixels."""
    if _is_jpeg(data):
        height, width, _ = _jpeg_header(data)
        return height, width
    if _is_png(data):
        return int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big")
    with _open(data) as img:
        return img.height, img.width


#: The scales M/8 decoding uses. libjpeg-turbo also decodes at 5/8, 6/8 and 7/8, but its
#: SIMD inverse DCTs are the full-size, 1/2 and 1/4 ones: the other scales run plain C and
#: cost more than a full-size decode (benchmarks/bench_decode.py, "decode at M/8"), so
#: a window that 4/8 does not cover is decoded at full size and left to the resize.
SCALES = (1, 2, 3, 4, 8)


def jpeg_scale(height: int, width: int, at_least: Sequence[int]) -> int:
    """The smallest M of `SCALES` at which a `height` x `width` region, scaled by M/8,
    still has at least ``at_least = (height, width)`` pixels; 8 (full size) when none
    does."""
    want_h, want_w = at_least
    for m in SCALES:
        if height * m / 8 >= want_h and width * m / 8 >= want_w:
            return m
    return 8


def decode(
    data: Data,
    channels: int = 3,
    *,
    window: Window | None = None,
    at_least: Sequence[int] | None = None,
    max_pixels: int | None = None,
) -> Array:
    """The pixels of the image file `data` as uint8 ``(h, w, channels)``.

    `window` ``(top, left, height, width)`` (full-size pixels) keeps only that part (the
    whole image by default); with ``at_least = (h, w)`` the result may be smaller than full
    size: a JPEG is decoded at the smallest M/8 scale at which the window still has at least
    ``h`` x ``w`` pixels, and the window's pixels at that scale are returned. Without
    `at_least` the result is full size. A writable C-contiguous array of its own.

    An image whose header claims more pixels than the budget
    (`catalog.features.pixel_budget`: `max_pixels`, else ``$CATALOG_MAX_IMAGE_PIXELS``, else
    Pillow's default) is a SourceFormatError before anything is allocated.
    """
    channels = _channels(channels)
    if _is_jpeg(data):
        height, width, colorspace = _jpeg_header(data)
        pixel_budget.check(height, width, _what("JPEG", data), max_pixels)
        if colorspace not in _PILLOW_JPEG:
            return _simplejpeg(data, channels, height, width, window, at_least)
    elif _plain_png(data, channels):
        height, width = int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big")
        pixel_budget.check(height, width, _what("PNG", data), max_pixels)
        _check_png_chunks(data)
        return _opencv_png(data, channels, window)
    return _pillow(data, channels, window, at_least, max_pixels)


def _what(kind: str, data: Data) -> str:
    return f"a {kind} file of {len(data)} bytes"


def _check_window(window: Window | None, height: int, width: int) -> Window:
    if window is None:
        return 0, 0, height, width
    top, left, h, w = (int(v) for v in window)
    if h < 1 or w < 1 or top < 0 or left < 0 or top + h > height or left + w > width:
        raise ValueError(
            f"window (top, left, height, width) = {tuple(window)} is not inside the "
            f"{height}x{width} image"
        )
    return top, left, h, w


def _simplejpeg(
    data: Data,
    channels: int,
    height: int,
    width: int,
    window: Window | None,
    at_least: Sequence[int] | None,
) -> Array:
    top, left, h, w = _check_window(window, height, width)
    m = 8 if at_least is None else jpeg_scale(h, w, at_least)
    # libjpeg-turbo's size at scale M/8 is ceil(size * M / 8); simplejpeg picks the smallest
    # scale whose output is at least min_height x min_width, i.e. M
    try:
        pixels: Array = simplejpeg.decode_jpeg(
            data,
            colorspace=_COLORSPACES[channels],
            min_height=-(-height * m // 8),
            min_width=-(-width * m // 8),
        )
    except ValueError as error:  # strict: a truncated file is an error, not grey pixels
        raise _damaged("JPEG", data, error) from None
    pixels = pixels.reshape(pixels.shape[0], pixels.shape[1], channels)
    if window is None:
        return pixels  # simplejpeg's own new array
    return _cut(pixels, (top, left, h, w), height, width)


def _cut(pixels: Array, window: Window, height: int, width: int) -> Array:
    """The part of `pixels` (the whole image at some scale) that `window` (full-size
    coordinates) covers, copied."""
    top, left, h, w = window
    fy, fx = pixels.shape[0] / height, pixels.shape[1] / width
    y0, x0 = math.floor(top * fy), math.floor(left * fx)
    y1 = max(y0 + 1, min(pixels.shape[0], math.ceil((top + h) * fy - 1e-9)))
    x1 = max(x0 + 1, min(pixels.shape[1], math.ceil((left + w) * fx - 1e-9)))
    return np.ascontiguousarray(pixels[y0:y1, x0:x1])


def _check_png_chunks(data: Data) -> None:
    """Every chunk of a PNG file must fit in it: OpenCV's reader, given a chunk whose length
    runs past the end (a damaged file), spent half a minute on 4 KB (found by
    tests/test_fuzz.py). A few microseconds: a PNG has a handful of chunks per 100 KB."""
    size, pos = len(data), 8
    while pos + 8 <= size:
        length = int.from_bytes(data[pos : pos + 4], "big")
        if pos + 12 + length > size:
            raise _damaged("PNG", data, ValueError(f"a chunk at byte {pos} runs past the end"))
        if bytes(data[pos + 4 : pos + 8]) == b"IEND":
            return
        pos += 12 + length


def _opencv_png(data: Data, channels: int, window: Window | None) -> Array:
    import cv2  # OpenCV: a core dependency, loaded when first needed (~0.1 s)

    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if pixels is None:  # libpng reported the error on stderr; OpenCV returns nothing
        raise _damaged("PNG", data, ValueError("libpng cannot decode it"))
    if channels > 1:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB if channels == 3 else cv2.COLOR_BGRA2RGBA)
    pixels = pixels.reshape(pixels.shape[0], pixels.shape[1], channels)
    if window is None:
        return pixels
    height, width = pixels.shape[:2]
    return _cut(pixels, _check_window(window, height, width), height, width)


def _open(data: Data, max_pixels: int | None = None) -> Any:
    """Pillow's image of `data` (its header read), within the pixel budget."""
    return pixel_budget.open_image(data, _what("image", data), max_pixels)


def _pillow(
    data: Data,
    channels: int,
    window: Window | None,
    at_least: Sequence[int] | None,
    max_pixels: int | None = None,
) -> Array:
    mode = _MODES[channels]
    with _open(data, max_pixels) as img:
        height, width = img.height, img.width
        top, left, h, w = _check_window(window, height, width)
        if img.format in ("JPEG", "MPO") and at_least is not None:
            # draft mode scales by 1/2, 1/4 or 1/8 only: ask for the size at which the window
            # still covers `at_least`
            need_h = math.ceil(at_least[0] * height / h)
            need_w = math.ceil(at_least[1] * width / w)
            img.draft(mode, (min(width, need_w), min(height, need_h)))
        try:
            pixels = np.array(img if img.mode == mode else img.convert(mode))
        except Exception as error:  # truncated or corrupt data: OSError, SyntaxError, ...
            raise _damaged(img.format or "image", data, error) from None
    pixels = pixels.reshape(pixels.shape[0], pixels.shape[1], channels)
    if window is None:
        return pixels
    return _cut(pixels, (top, left, h, w), height, width)
