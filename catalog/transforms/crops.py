"""Crops that resize, on stored image bytes or on arrays: ImageNet-style training and
evaluation.

`random_resized_crop` (training: a random window of random area and aspect ratio, resized;
torchvision's ``RandomResizedCrop`` parameters) and `center_crop_resize` (evaluation: the
centred window of the output's aspect ratio, resized; torchvision's ``Resize`` +
``CenterCrop``). Given the file bytes of a data source opened with
``decoders={"image": False}``, they choose the window from the file's header and ask the
decoder (`catalog.features.image_decode`) for that window at no less than the output size:
a JPEG is decoded at the smallest M/8 scale at which the window still covers the output, then
the window is cut and resized by OpenCV (antialiased when shrinking by more than 2x remains).

Random choices come from the generator ``map(fn, with_rng=True)`` passes, so a pipeline
repeats them exactly (and resumes exactly).

>>> image = np.zeros((300, 400, 3), np.uint8)
>>> random_resized_crop(image, 224, np.random.default_rng(0)).shape
(224, 224, 3)
>>> center_crop_resize(image, (224, 224)).shape
(224, 224, 3)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from catalog.features import image_decode
from catalog.transforms.image import ImageLike, _channels, _check_image, _size, resample

__all__ = ["center_crop_resize", "crop_window", "random_resized_crop", "random_resized_crop_window"]

Array = np.ndarray[Any, Any]
Window = tuple[int, int, int, int]


def random_resized_crop_window(
    shape: Sequence[int],
    rng: np.random.Generator,
    scale: Sequence[float] = (0.08, 1.0),
    ratio: Sequence[float] = (3 / 4, 4 / 3),
) -> Window:
    """``(top, left, height, width)`` of a random window of an image of ``shape = (height,
    width)``: its area a uniform fraction in `scale` of the image's, its aspect ratio
    (width / height) log-uniform in `ratio`; after 10 draws that do not fit, the centred
    window of the image's ratio clamped to `ratio` (torchvision's ``RandomResizedCrop``)."""
    height, width = int(shape[0]), int(shape[1])
    lo_s, hi_s = float(scale[0]), float(scale[1])
    lo_r, hi_r = float(ratio[0]), float(ratio[1])
    if not 0 < lo_s <= hi_s or not 0 < lo_r <= hi_r:
        raise ValueError(
            f"scale and ratio must be (low, high) with 0 < low <= high, got {tuple(scale)} "
            f"and {tuple(ratio)}"
        )
    area = height * width
    log_lo, log_hi = math.log(lo_r), math.log(hi_r)
    for _ in range(10):
        target = area * rng.uniform(lo_s, hi_s)
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        w = round(math.sqrt(target * aspect))
        h = round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            top = int(rng.integers(0, height - h + 1))
            left = int(rng.integers(0, width - w + 1))
            return top, left, h, w
    in_ratio = width / height
    if in_ratio < lo_r:
        w, h = width, round(width / lo_r)
    elif in_ratio > hi_r:
        w, h = round(height * hi_r), height
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def crop_window(shape: Sequence[int], size: Sequence[int], crop_fraction: float = 1.0) -> Window:
    """``(top, left, height, width)`` of the centred window `center_crop_resize` resizes:
    the largest of the aspect ratio of ``size = (height, width)``, times `crop_fraction`."""
    height, width = int(shape[0]), int(shape[1])
    out_h, out_w = size
    if not 0 < crop_fraction <= 1:
        raise ValueError(f"crop_fraction must be in (0, 1], got {crop_fraction!r}")
    fit = min(height / out_h, width / out_w) * crop_fraction  # image pixels per output pixel
    h = max(1, min(height, round(out_h * fit)))
    w = max(1, min(width, round(out_w * fit)))
    return (height - h) // 2, (width - w) // 2, h, w


def _window_pixels(
    image: ImageLike,
    window_of: Callable[[Sequence[int]], Window],
    size: tuple[int, int],
    channels: int | None,
) -> Array:
    """The pixels of the window `window_of(shape)` chooses, from an array or file bytes (at
    no less than `size`, the cheapest decode that gives them)."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        window = window_of(image_decode.image_size(image))
        return image_decode.decode(image, channels or 3, window=window, at_least=size)
    array = _channels(_check_image(image), channels)
    top, left, h, w = window_of(array.shape[:2])
    return array[top : top + h, left : left + w]


def random_resized_crop(
    image: ImageLike,
    size: int | Sequence[int],
    rng: np.random.Generator,
    *,
    scale: Sequence[float] = (0.08, 1.0),
    ratio: Sequence[float] = (3 / 4, 4 / 3),
    method: str = "bilinear",
    antialias: bool = True,
    channels: int | None = None,
) -> Array:
    """A random window of `image` (array or file bytes), resized to `size` (an int: square):
    ImageNet-style training crops, with torchvision's `scale` (area fraction) and `ratio`
    (width / height) ranges (see `random_resized_crop_window`). With file bytes, only what
    the window needs is decoded (module docstring). uint8 ``(height, width, channels)``."""
    out = _size(size)
    pixels = _window_pixels(
        image, lambda shape: random_resized_crop_window(shape, rng, scale, ratio), out, channels
    )
    return resample(pixels, out, method, antialias)


def center_crop_resize(
    image: ImageLike,
    size: int | Sequence[int],
    *,
    crop_fraction: float = 1.0,
    method: str = "bilinear",
    antialias: bool = True,
    channels: int | None = None,
) -> Array:
    """The centred window of `image` with the aspect ratio of `size`, resized to `size`:
    the short side resized and the middle kept (evaluation). ``crop_fraction`` keeps that
    fraction of the window's sides: 0.875 for torchvision's ``Resize(256)`` +
    ``CenterCrop(224)``. With file bytes, only the window is decoded, at the smallest scale
    that covers `size`. uint8 ``(height, width, channels)``."""
    out = _size(size)
    pixels = _window_pixels(
        image, lambda shape: crop_window(shape, out, crop_fraction), out, channels
    )
    return resample(pixels, out, method, antialias)
