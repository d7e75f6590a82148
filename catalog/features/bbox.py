"""BBox: one bounding box as 4 float32 values, normalised ``(ymin, xmin, ymax, xmax)``.

As in TensorFlow Datasets, coordinates are fractions of the image's height and width (0 top or
left, 1 bottom or right), each in [0, 1], with ``ymin <= ymax`` and ``xmin <= xmax``. Stored
as 16 raw bytes; decodes to a writable float32 array of shape (4,). In a `Sequence` (the
objects of an image) boxes stack into an ``(n, 4)`` array.

>>> BBox()
BBox()
>>> BBox().validate([0.25, 0.5, 0.75, 1.0]).tolist()
[0.25, 0.5, 0.75, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catalog.features.tensor import Tensor

__all__ = ["BBox", "normalised_box"]


def normalised_box(
    ymin: float, xmin: float, ymax: float, xmax: float, height: float, width: float
) -> tuple[float, float, float, float]:
    """Pixel coordinates as a normalised ``(ymin, xmin, ymax, xmax)``."""
    return (ymin / height, xmin / width, ymax / height, xmax / width)


class BBox(Tensor):
    """A bounding box: float32 ``(ymin, xmin, ymax, xmax)``, each in [0, 1], ordered.

    Takes no arguments. Values are 4 numbers; in a `Sequence` boxes stack to ``(n, 4)``.

    Raises:
        FeatureError: (``encode_example``, when preparing) a value that does not fit, naming
            the feature and the example. A box out of [0, 1] or unordered is refused.
    """

    type_name = "BBox"

    def __init__(self) -> None:
        super().__init__(shape=(4,), dtype="float32")

    def validate(self, value: Any) -> np.ndarray[Any, Any]:
        if isinstance(value, tuple):
            value = list(value)
        array = super().validate(
            np.asarray(value, dtype=np.float64) if isinstance(value, list) else value
        )
        if not np.isfinite(array).all() or (array < 0).any() or (array > 1).any():
            raise self._error(
                f"box {array.tolist()} is not normalised: each of (ymin, xmin, ymax, xmax) "
                "must be in [0, 1] (pixels divided by the image's height or width)"
            )
        if array[0] > array[2] or array[1] > array[3]:
            raise self._error(
                f"box {array.tolist()} is not ordered: expected ymin <= ymax and xmin <= xmax"
            )
        return array

    def describe(self) -> str:
        return "ymin, xmin, ymax, xmax in [0, 1]"

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BBox:
        return cls()

    def __repr__(self) -> str:
        return "BBox()"
