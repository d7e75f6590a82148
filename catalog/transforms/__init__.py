"""Plain functions for `Pipeline.map`: image decoding, resizing and augmentation.

Random ones take the ``np.random.Generator`` that ``map(fn, with_rng=True)`` passes, so they
are reproducible per example and epoch.
"""

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
    "decode_image",
    "normalize",
    "random_crop",
    "random_flip",
    "rescale",
    "resize",
]
