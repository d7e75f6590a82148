"""Typed features: what each value of an example is, how it is checked, stored and read back.

One type per module: `Audio`, `BBox`, `Image`, `ClassLabel`, `Scalar`, `Tensor`, `Text`,
`Sequence` and `FeaturesDict` (nested dicts); `registry` rebuilds any of them from JSON.
"""

from catalog.features.audio import Audio
from catalog.features.base import Feature
from catalog.features.bbox import BBox
from catalog.features.class_label import ClassLabel
from catalog.features.features_dict import (
    FeaturesDict,
    SupervisedKeys,
    supervised_keys_problem,
    supervised_pair,
    supervised_text,
)
from catalog.features.image import Image
from catalog.features.registry import FEATURE_TYPES, from_json
from catalog.features.scalar import Scalar
from catalog.features.sequence import Sequence
from catalog.features.tensor import Tensor
from catalog.features.text import Text

__all__ = [
    "FEATURE_TYPES",
    "Audio",
    "BBox",
    "ClassLabel",
    "Feature",
    "FeaturesDict",
    "Image",
    "Scalar",
    "Sequence",
    "SupervisedKeys",
    "Tensor",
    "Text",
    "from_json",
    "supervised_keys_problem",
    "supervised_pair",
    "supervised_text",
]
