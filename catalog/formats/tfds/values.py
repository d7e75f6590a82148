"""A TFDS generator's raw example -> the values catalog's features encode.

TFDS's ``_generate_examples`` yields what TFDS's own features take: image file paths, open
files, bytes, NumPy arrays or PIL images; class labels as names (str or bytes) or ints; text
as str or bytes; a Sequence as a list of elements or a dict of lists. catalog's features take
most of these as they are (a path is read, a name looked up); this module turns the rest into
one of those, walking the catalog features the dataset's TFDS features were mapped to:

- an open file (anything with ``read``) -> its bytes; a PIL image -> a uint8 array;
- bytes for a Text or a ClassLabel name -> str (UTF-8);
- a Sequence given as a dict of lists -> a list of dicts;
- numbers given as text (a CSV's cells) -> a NumPy value of the feature's dtype, as TFDS's
  ``np.asarray(value, dtype)`` makes them.

>>> from catalog.features import ClassLabel, FeaturesDict, Text
>>> features = FeaturesDict({"t": Text(), "l": ClassLabel(names=["a", "b"])})
>>> to_values({"t": b"hi", "l": b"b"}, features)
{'t': 'hi', 'l': 'b'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features import (
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)

__all__ = ["to_values"]


def to_values(value: Any, feature: Feature) -> Any:
    """`value` (a TFDS generator's, for `feature`) as `feature.encode` takes it."""
    if isinstance(feature, FeaturesDict):
        if not isinstance(value, Mapping):
            return value  # the feature says what is wrong
        return {
            name: to_values(value[name], sub) if name in value else value.get(name)
            for name, sub in feature.items()
        }
    if isinstance(feature, Sequence):
        inner = feature.feature
        if isinstance(inner, FeaturesDict) and isinstance(value, Mapping):
            columns = {name: list(value.get(name, ())) for name in inner}
            lengths = {len(column) for column in columns.values()}
            rows = lengths.pop() if len(lengths) == 1 else 0
            value = [{name: columns[name][i] for name in inner} for i in range(rows)]
        if isinstance(value, (list, tuple)):
            return [to_values(element, inner) for element in value]
        return value
    if isinstance(feature, (Text, ClassLabel)) and isinstance(value, (bytes, np.bytes_)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as error:
            raise FeatureError(
                f"{feature!r}: TFDS's generator gave bytes that are not UTF-8 text "
                f"({error.reason} at byte {error.start})"
            ) from None
    if isinstance(feature, ClassLabel) and isinstance(value, np.str_):
        return str(value)
    if isinstance(feature, Image):
        return _image(value)
    if isinstance(feature, (Scalar, Tensor)) and isinstance(value, (str, np.str_)):
        return _number(value, feature.dtype)
    if (
        isinstance(feature, Tensor)
        and isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (str, np.str_)) for v in value)
    ):
        return _number(value, feature.dtype)
    return value


def _number(value: Any, dtype: Any) -> Any:
    """Numbers a generator gave as text (a CSV's cells), as TFDS's features take them:
    ``np.asarray(value, dtype)``; text that is no number is left for the feature to refuse."""
    if np.dtype(dtype).kind not in "biuf":
        return value
    try:
        return np.asarray(value, dtype=dtype)
    except (ValueError, TypeError):
        return value


def _image(value: Any) -> Any:
    """An image as a path, bytes or an array."""
    if hasattr(value, "read") and callable(value.read):
        data = value.read()
        return data.encode() if isinstance(data, str) else data
    if type(value).__module__.startswith("PIL."):
        return np.asarray(value)
    return value
