"""Typed features: what each value of an example is, how it is checked, stored and read back."""

from catalog.features.base import Feature
from catalog.features.class_label import ClassLabel
from catalog.features.features_dict import FEATURE_TYPES, FeaturesDict, from_json
from catalog.features.image import Image
from catalog.features.scalar import Scalar

__all__ = ["FEATURE_TYPES", "ClassLabel", "Feature", "FeaturesDict", "Image", "Scalar", "from_json"]
