"""Image functions the tf.data tutorials use, on NumPy arrays ``(height, width, channels)``.

`decode_image` and `resize` also take the stored bytes of a PNG/JPEG file (a data source
opened with ``decoders={"image": False}``): `resize` then asks the decoder
(`catalog.features.image_decode`) for the image at no less than the target size, so a JPEG is
decoded by libjpeg-turbo at the smallest M/8 scale that still covers it, and OpenCV's SIMD
`cv2.resize` does the rest. Shrinking a side by more than 2x (whatever the decode did not)
is antialiased by default: the side is halved, averaging pixel pairs, until at most 2x is
left (mip-map style); ``antialias=False`` keeps the plain interpolation, as
``tf.image.resize`` does by default. Results are writable C-contiguous
arrays that never share memory with the input, so a cached example is never changed.

>>> image = np.zeros((4, 6, 3), np.uint8)
>>> resize(image, (2, 3)).shape
(2, 3, 3)
>>> random_crop(image, (2, 2), np.random.default_rng(0)).shape
(2, 2, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from catalog.features import image_decode

__all__ = [
    "center_crop",
    "decode_image",
    "normalize",
    "random_crop",
    "random_flip",
    "rescale",
    "resize",
]

Array = np.ndarray[Any, Any]
ImageLike = Array | bytes | bytearray | memoryview
#: method -> OpenCV's interpolation; "area" averages the pixels each output pixel covers
_METHODS = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
    "area": cv2.INTER_AREA,
    "lanczos": cv2.INTER_LANCZOS4,
}
#: Shrinking by more than this (on either side) is antialiased by default
ANTIALIAS_ABOVE = 2.0
_CVT = {
    (1, 3): cv2.COLOR_GRAY2RGB,
    (1, 4): cv2.COLOR_GRAY2RGBA,
    (3, 1): cv2.COLOR_RGB2GRAY,
    (3, 4): cv2.COLOR_RGB2RGBA,
    (4, 1): cv2.COLOR_RGBA2GRAY,
    (4, 3): cv2.COLOR_RGBA2RGB,
}


def decode_image(
    data: bytes | bytearray | memoryview, channels: int = 3, *, max_pixels: int | None = None
) -> Array:
    """The pixels of a PNG/JPEG/... file as uint8 ``(height, width, channels)``, full size
    (`catalog.features.image_decode`: libjpeg-turbo for JPEG, Pillow for the rest). A file
    whose header claims more than `max_pixels` pixels (default ``$CATALOG_MAX_IMAGE_PIXELS``,
    else Pillow's default limit) is a SourceFormatError before anything is allocated."""
    return image_decode.decode(data, channels, max_pixels=max_pixels)


def _size(size: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(size, (int, np.integer)):
        size = (int(size), int(size))
    height, width = (int(s) for s in size)
    if height < 1 or width < 1:
        raise ValueError(f"size must be (height, width) of positive ints, got {tuple(size)}")
    return height, width


def _channels(array: Array, channels: int | None) -> Array:
    have = array.shape[2]
    if channels is None or channels == have:
        return array
    if (have, channels) not in _CVT:
        raise ValueError(f"channels must be 1, 3 or 4, got {channels!r} (image has {have})")
    out = cv2.cvtColor(np.ascontiguousarray(array), _CVT[have, channels])
    return out.reshape(out.shape[0], out.shape[1], channels)


def resample(
    pixels: Array, size: Sequence[int], method: str = "bilinear", antialias: bool = True
) -> Array:
    """`pixels` ``(h, w, c)`` resized to exactly ``size = (height, width)`` by cv2.resize;
    with `antialias`, a side shrunk by more than 2x is first halved (pixel pairs averaged)
    until the rest is a shrink by at most 2x (mip-map style), whatever the method except
    "nearest". A new array."""
    height, width = _size(size)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    channels = pixels.shape[2]
    if pixels.shape[:2] == (height, width):
        return np.array(pixels)
    interpolation = _METHODS[method]
    pixels = np.ascontiguousarray(pixels)
    if antialias and method != "nearest":
        # halve each side shrunk by more than 2x until it is not: a bilinear resize to
        # exactly half averages pixel pairs (a box filter, cheap in cv2), so the last resize
        # never skips pixels; cv2's own INTER_AREA costs ten times this at odd factors
        while True:
            have_h, have_w = pixels.shape[:2]
            half_h = have_h > height * ANTIALIAS_ABOVE
            half_w = have_w > width * ANTIALIAS_ABOVE
            if not (half_h or half_w):
                break
            size = (have_w // 2 if half_w else have_w, have_h // 2 if half_h else have_h)
            pixels = cv2.resize(pixels, size, interpolation=cv2.INTER_LINEAR)
    out = cv2.resize(pixels, (width, height), interpolation=interpolation)
    return out.reshape(height, width, channels)


def resize(
    image: ImageLike,
    size: int | Sequence[int],
    *,
    method: str = "bilinear",
    antialias: bool = True,
    channels: int | None = None,
) -> Array:
    """`image` (an array, or image file bytes) resized to ``size = (height, width)``, uint8.

    Aspect ratio is not kept (as ``tf.image.resize``); crop first to keep it, or use
    `center_crop_resize`. File bytes are decoded at no less than `size` (a JPEG at the
    smallest M/8 scale covering it). `method`: nearest, bilinear, bicubic, area or lanczos;
    `antialias` (default) averages instead when shrinking by more than 2x remains; `channels`
    (default: the array's, or 3 for file bytes) sets the output channels.
    """
    height, width = _size(size)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    if isinstance(image, (bytes, bytearray, memoryview)):
        pixels = image_decode.decode(image, channels or 3, at_least=(height, width))
    else:
        pixels = _channels(_check_image(image), channels)
    return resample(pixels, (height, width), method, antialias)


def _check_image(image: Any) -> Array:
    if not isinstance(image, np.ndarray) or image.ndim != 3:
        shape = getattr(image, "shape", None)
        raise ValueError(
            f"expected an image array (height, width, channels), got {type(image).__name__}"
            + (f" of shape {shape}" if shape is not None else "")
        )
    return image


def _crop(image: Array, size: Sequence[int], top: int, left: int) -> Array:
    height, width = _size(size)
    return np.array(image[top : top + height, left : left + width])


def _check_fits(image: Array, size: Sequence[int]) -> tuple[int, int]:
    height, width = _size(size)
    if image.shape[0] < height or image.shape[1] < width:
        raise ValueError(
            f"cannot crop {height}x{width} from an image of {image.shape[0]}x{image.shape[1]}; "
            "resize it first"
        )
    return image.shape[0] - height, image.shape[1] - width


def random_crop(image: Array, size: Sequence[int], rng: np.random.Generator) -> Array:
    """A ``size = (height, width)`` window of `image` at a random position."""
    image = _check_image(image)
    spare_h, spare_w = _check_fits(image, size)
    top = int(rng.integers(0, spare_h + 1))
    left = int(rng.integers(0, spare_w + 1))
    return _crop(image, size, top, left)


def center_crop(image: Array, size: Sequence[int]) -> Array:
    """The ``size = (height, width)`` window in the middle of `image`."""
    image = _check_image(image)
    spare_h, spare_w = _check_fits(image, size)
    return _crop(image, size, spare_h // 2, spare_w // 2)


def random_flip(
    image: Array, rng: np.random.Generator, *, horizontal: bool = True, vertical: bool = False
) -> Array:
    """`image` mirrored left-right (`horizontal`) and/or upside down (`vertical`), each with
    probability 1/2 (``tf.image.random_flip_left_right`` / ``_up_down``)."""
    image = _check_image(image)
    flip_h = horizontal and rng.random() < 0.5
    flip_v = vertical and rng.random() < 0.5
    if flip_h and image.dtype == np.uint8 and image.shape[2] <= 4:
        # OpenCV's SIMD flip: a 192x192 RGB image in ~7 us, 20x the copy below
        flipped = cv2.flip(np.ascontiguousarray(image), -1 if flip_v else 1)
        return flipped.reshape(image.shape)  # a new array; cv2 drops a single channel axis
    if flip_h:
        image = _mirror(image)  # a new array already
        return image[::-1].copy() if flip_v else image
    return np.array(image[::-1] if flip_v else image)  # contiguous, never the caller's array


def _mirror(image: Array) -> Array:
    """`image` left-right, copied a whole pixel at a time: its channels are viewed as one
    opaque item, so the copy moves one item per pixel instead of one per channel value
    (2-3x faster than ``image[:, ::-1].copy()`` for RGB)."""
    pixels = np.ascontiguousarray(image)
    whole = pixels.view(np.dtype((np.void, pixels.shape[2] * pixels.itemsize)))
    return np.ascontiguousarray(whole[:, ::-1]).view(pixels.dtype).reshape(pixels.shape)


def rescale(
    image: Array, scale: float = 1 / 255, offset: float = 0.0, *, dtype: Any = np.float32
) -> Array:
    """``image * scale + offset`` as `dtype` (default: uint8 pixels to floats in [0, 1])."""
    out = np.multiply(image, scale, dtype=dtype)
    if offset:
        out += offset
    return out


def normalize(
    image: Array,
    mean: float | Sequence[float],
    std: float | Sequence[float],
    *,
    scale: float = 1 / 255,
    dtype: Any = np.float32,
) -> Array:
    """``(image * scale - mean) / std`` per channel, as `dtype`; with the default scale, the
    mean and std are on [0, 1] pixels (e.g. ImageNet's (0.485, 0.456, 0.406))."""
    out = rescale(image, scale, dtype=dtype)
    out -= np.asarray(mean, dtype=dtype)
    out /= np.asarray(std, dtype=dtype)
    return out
