"""Text ``.amat`` files (binarized MNIST): one example per line, its pixels as 0/1 values.

A line holds the values of the ``image`` feature's (fully known) shape in row-major order,
separated by whitespace, each ``0`` or ``1``. The file is read line by line and every line
is checked; a bad one is named by file and line number. The key is the line's index.
"""

from __future__ import annotations

import math

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Image
from catalog.formats.base import Examples, Role, Source, SourceFormat, shape_of

__all__ = ["FORMAT", "examples"]

_ZERO = ord("0")


def examples(source: Source) -> Examples:
    """Yield ``(line index, {"image": uint8 0/1 array of the image feature's shape})``."""
    path = source.file("lines")
    shape = shape_of(source.features, "image", "amat")
    size = math.prod(shape)
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            values = line.split()
            digits = b"".join(values)
            if len(values) != size:
                raise SourceFormatError(
                    f"{path}:{number}: expected {size} values (0 or 1) for an image of shape "
                    f"{shape}, got {len(values)}"
                )
            pixels = np.frombuffer(digits, np.uint8) - _ZERO  # anything but 0/1 ends up > 1
            if len(digits) != size or (pixels > 1).any():
                bad = next(v for v in values if v not in (b"0", b"1"))
                raise SourceFormatError(
                    f"{path}:{number}: value {bad.decode(errors='replace')!r} is not 0 or 1"
                )
            yield str(number - 1), {"image": pixels.reshape(shape)}


def _validate(options: object, features: FeaturesDict) -> str | None:
    image = features["image"]
    if not isinstance(image, Image) or None in image.shape:
        return f"feature 'image' must be an Image of a fully known shape, got {image!r}"
    return None


FORMAT = SourceFormat(
    name="amat",
    description="text .amat files: one image per line as whitespace-separated 0/1 values",
    roles=(Role("lines"),),
    features=lambda options: (frozenset({"image"}), frozenset()),
    examples=examples,
    validate=_validate,
)
