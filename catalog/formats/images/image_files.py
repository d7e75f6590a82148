"""Image files given to an Image feature as they are, or re-encoded when it refuses them.

Readers hand image files to the ``image`` feature untouched, so their original bytes are
stored: a PNG or a JPEG file, whichever the feature's encoding names (a folder of photos
mixing both keeps every file as it is; see `catalog.features.Image`). Some datasets hold
files the feature cannot store as they are: an RGBA PNG for an RGB feature, a JPEG whose
structure Pillow finds damaged although its pixels decode, a GIF, BMP or WebP file. With a
reader's ``reencode_invalid`` option such a file is decoded with Pillow (converted to the
feature's channels, dropping alpha as the reference catalog's decoding does) and stored
anew, losslessly: a png or raw feature encodes the pixels itself, a jpeg feature is given
them as a PNG file (which it stores as it is), so the prepared example decodes to exactly
the pixels Pillow decoded from the file. Valid files keep their bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import FeatureError, SourceFormatError
from catalog.features import Feature, Image, pixel_budget
from catalog.features.image import DEEP_MODES, deep_image

__all__ = ["decode_pixels", "opencv_jpeg", "stored_or_pixels"]

_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def decode_pixels(data: bytes, where: str, channels: int | None = None) -> np.ndarray[Any, Any]:
    """An image file's pixels as a uint8 array: in `channels` (1, 3 or 4) when given, else
    as decoded (L, RGB or RGBA; other modes become RGB)."""
    from PIL import UnidentifiedImageError

    with pixel_budget.open_image(data, where) as img:  # the header, within the pixel budget
        if img.mode in DEEP_MODES:
            raise SourceFormatError(f"{where}: {deep_image(img)}")
        try:
            mode = _MODES[channels] if channels else img.mode
            if mode not in _MODES.values():
                mode = "RGB"
            return np.array(img if img.mode == mode else img.convert(mode))
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as error:
            raise SourceFormatError(f"{where}: not an image Pillow can decode ({error})") from None


def stored_or_pixels(feature: Feature, value: bytes | Path, where: str) -> Any:
    """`value` (a file's bytes or path) if `feature` stores it as it is, else its pixels
    (for a jpeg feature: its pixels as a PNG file, so that nothing is lost)."""
    try:
        feature.encode(value)
    except FeatureError:
        data = value.read_bytes() if isinstance(value, Path) else value
        channels = feature.channels if isinstance(feature, Image) else None
        pixels = decode_pixels(data, where, channels)
        if isinstance(feature, Image) and feature.encoding == "jpeg":
            try:
                return Image(feature.shape, encoding="png").encode(pixels)
            except FeatureError:  # the wrong size: the feature says so, naming the example
                pass
        return pixels
    return value


def opencv_jpeg(data: bytes, where: str, max_pixels: int | None, quality: int | None) -> bytes:
    """An image file (JPEG, PNG, BMP, GIF, ... whatever its name says) as TFDS's SUN397 builder
    stores it: decoded by OpenCV to 3 channels (Pillow, to RGB, for what OpenCV cannot
    decode; a GIF's first frame), shrunk when it has more than `max_pixels` pixels by
    ``cv2.resize(image, None, fx=f, fy=f)`` (bilinear) with ``f = sqrt(max_pixels / pixels)``,
    and encoded as JPEG by OpenCV at `quality` (OpenCV's default, 95, when None)."""
    import cv2

    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH)
    if image is None:
        image = np.ascontiguousarray(decode_pixels(data, where, 3)[:, :, ::-1])  # RGB -> BGR
    if image.dtype == np.uint16:  # a 16-bit PNG (IMREAD_ANYDEPTH keeps it): its high bytes
        image = (image // 256).astype(np.uint8)
    height, width = image.shape[:2]
    if max_pixels is not None and height * width > max_pixels:
        factor = float(np.sqrt(max_pixels / (height * width)))
        image = cv2.resize(image, dsize=None, fx=factor, fy=factor)
    params = [int(cv2.IMWRITE_JPEG_QUALITY), quality] if quality is not None else []
    ok, encoded = cv2.imencode(".jpg", image, params)
    if not ok:
        raise SourceFormatError(f"{where}: OpenCV could not encode the image as JPEG")
    return bytes(encoded.tobytes())
