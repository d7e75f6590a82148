"""Plain functions for `Pipeline.map`: image decoding, resizing, crops and augmentation.

Random ones take the ``np.random.Generator`` that ``map(fn, with_rng=True)`` passes, so they
are reproducible per example and epoch.
"""

from catalog.transforms.crops import (
    center_crop_resize,
    random_resized_crop,
    random_resized_crop_window,
)
from catalog.transforms.image import (
    center_crop,
    decode_image,
    normalize,
    random_crop,
    random_flip,
    rescale,
    resize,
)

__all__ = [
    "center_crop",
    "center_crop_resize",
    "decode_image",
    "normalize",
    "random_crop",
    "random_flip",
    "random_resized_crop",
    "random_resized_crop_window",
    "rescale",
    "resize",
]
