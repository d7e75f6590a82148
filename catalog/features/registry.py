"""The JSON registry: every feature type by its JSON tag, and `from_json` to rebuild features.

A feature's JSON form is ``{"type": <tag>, <constructor arguments>}``; nested features (a
FeaturesDict's ``features``, a Sequence's ``feature``) are in JSON form too, and are rebuilt
here, depth first, so no feature module needs this one and the imports stay a DAG.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from catalog.errors import FeatureError
from catalog.features.audio import Audio
from catalog.features.base import Feature, join_path
from catalog.features.bbox import BBox
from catalog.features.class_label import ClassLabel
from catalog.features.features_dict import FeaturesDict
from catalog.features.image import Image
from catalog.features.scalar import Scalar
from catalog.features.sequence import Sequence
from catalog.features.tensor import Tensor
from catalog.features.text import Text

__all__ = ["FEATURE_TYPES", "from_json"]

#: Every feature type by its JSON tag. Add new types here.
FEATURE_TYPES: dict[str, type[Feature]] = {
    cls.type_name: cls
    for cls in (Audio, BBox, ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text)
}


def from_json(data: Any, *, path: str = "") -> Feature:
    """Rebuild a feature from its JSON form (``{"type": "Image", "shape": [...], ...}``).

    `path` names the feature in error messages. Unknown types, unknown or missing fields and
    bad values raise FeatureError naming the feature.

    >>> from_json({"type": "Sequence", "feature": {"type": "Text"}, "length": None})
    Sequence(Text())
    """
    where = f" for feature {path!r}" if path else ""
    if not isinstance(data, Mapping) or "type" not in data:
        raise FeatureError(
            f"a feature spec must be a mapping with a 'type' key{where}, got {data!r}"
        )
    fields = dict(data)
    type_name = fields.pop("type")
    cls = FEATURE_TYPES.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise FeatureError(
            f"unknown feature type {type_name!r}{where}; "
            f"known types: {', '.join(sorted(FEATURE_TYPES))}"
        )
    params = inspect.signature(cls).parameters
    unknown = sorted(set(fields) - set(params))
    missing = [n for n, p in params.items() if p.default is p.empty and n not in fields]
    if unknown or missing:
        problem = f"unknown field {unknown[0]!r}" if unknown else f"missing field {missing[0]!r}"
        raise FeatureError(f"bad {type_name} spec{where}: {problem}; fields: {', '.join(params)}")
    if cls is FeaturesDict:
        children = fields["features"]
        if not isinstance(children, Mapping) or not children:
            raise FeatureError(f"FeaturesDict spec{where}: 'features' must be a non-empty mapping")
        fields["features"] = {
            name: from_json(spec, path=join_path(path, str(name)))
            for name, spec in children.items()
        }
    elif cls is Sequence:
        fields["feature"] = from_json(fields["feature"], path=join_path(path, "[]"))
    try:
        return cls.from_json(fields)
    except (TypeError, ValueError) as error:  # FeatureError, or a field of the wrong kind
        raise FeatureError(f"bad {type_name} spec{where}: {error}") from None
