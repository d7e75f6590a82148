"""Ben Graham's retina preprocessing, as TFDS's diabetic_retinopathy_detection stores it.

The winner of Kaggle's 2015 Diabetic Retinopathy Detection normalised each fundus photo in
three steps, which TFDS's ``btgraham-300`` config applies before storing the image:

1. **scale** the photo so that the eyeball's radius is `radius` pixels. The radius is
   estimated on the middle row: half the number of pixels whose channel sum exceeds a tenth
   of the row's mean sum (when that is under one pixel, a damaged photo, half the height);
   the photo is resized by ``radius / estimate`` on both axes (OpenCV, bilinear);
2. **subtract the local average colour**: ``4 * image - 4 * blurred + 128`` (saturated to
   0..255), ``blurred`` a Gaussian blur of sigma ``radius / 30``;
3. **mask and crop**: outside a disc of radius ``int(0.9 * radius)`` around the centre the
   photo becomes grey 128, and it is cropped to that disc's bounding box (within the photo).

The result is encoded as a JPEG by OpenCV at quality 72 (the float image rounded half to even
and clipped to 8 bits, as OpenCV converts it). OpenCV does every step, as in TFDS, so the
bytes are the same for the same OpenCV build.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catalog.errors import SourceFormatError

__all__ = ["BTGRAHAM_JPEG_QUALITY", "btgraham_jpeg"]

#: The JPEG quality the processed photo is stored at.
BTGRAHAM_JPEG_QUALITY = 72
_MASK_RATIO = 0.9


def _eye_radius(image: np.ndarray[Any, Any]) -> float:
    """Half the width of the bright part of the middle row (step 1), or half the height."""
    row = image[image.shape[0] // 2].sum(axis=1)
    estimate = float((row > row.mean() / 10.0).sum()) / 2.0
    return estimate if estimate >= 1.0 else image.shape[0] / 2.0


def btgraham_jpeg(data: bytes, where: str, radius: int) -> bytes:
    """The image file `data` processed as the module docstring says, as JPEG bytes."""
    import cv2

    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH)
    if image is None:
        raise SourceFormatError(f"{where}: not an image OpenCV can decode")
    scale = radius / _eye_radius(image)
    image = cv2.resize(image, dsize=None, fx=scale, fy=scale)
    blurred = cv2.GaussianBlur(image, (0, 0), radius / 30)
    image = cv2.addWeighted(image, 4, blurred, -4, 128)
    disc = np.zeros(image.shape)
    height, width = image.shape[:2]
    inner = int(radius * _MASK_RATIO)
    cv2.circle(disc, (width // 2, height // 2), inner, (1, 1, 1), thickness=-1)
    masked = image * disc + (1 - disc) * 128
    top, bottom = max(height // 2 - inner, 0), min(height // 2 + inner, height)
    left, right = max(width // 2 - inner, 0), min(width // 2 + inner, width)
    # OpenCV's own conversion of the float image to 8 bits (saturate_cast: round half to
    # even, then clip), done here so OpenCV does not warn that it falls back to it
    cropped = np.clip(np.rint(masked[top:bottom, left:right, :]), 0, 255).astype(np.uint8)
    ok, encoded = cv2.imencode(
        ".jpg", cropped, [int(cv2.IMWRITE_JPEG_QUALITY), BTGRAHAM_JPEG_QUALITY]
    )
    if not ok:
        raise SourceFormatError(f"{where}: OpenCV could not encode the processed image")
    return bytes(encoded.tobytes())
