"""Typed values (JSON Lines, Parquet) checked against the feature they fill, before encoding.

A JSON or Parquet value already has a type; `typed_value` takes it only when it fits the
feature exactly, so a prepared example equals its source value: a Text feature takes a
string, a bool Scalar a boolean, an integer Scalar an integer (never a boolean, and within
the dtype's range), a float Scalar an integer or a float, a ClassLabel one of its class
names or its index (-1 too when it takes "no label"), an Image the bytes of a PNG or JPEG
file (or Hugging Face's ``Image`` struct, ``{"bytes": ..., "path": ...}``, holding them),
stored as they are; a Sequence of any length of those (but images) a list, each element
taken so, none of them null; a FeaturesDict (a Parquet struct) a dict of its fields' values,
and a Sequence of dicts or of lists a list of them, taken so to any depth (a null inside: an
error naming the field or element). Anything else is a ValueError saying what was expected;
readers add file, line or row and column. A missing value (None) takes the reader's ``fill``
for its feature; `typed_example` makes a whole example so, for both readers, and says which
fill is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, Feature, FeaturesDict, Image, Scalar, Sequence, Text

__all__ = ["typed_example", "typed_value"]


def typed_example(
    value_of: Callable[[str], Any],
    columns: Mapping[str, str],
    fills: Mapping[str, Any],
    features: FeaturesDict,
    where: str,
    noun: str,
    null: str,
) -> dict[str, Any]:
    """The example whose feature ``f`` holds ``value_of(columns[f])`` as `typed_value` takes
    it, a missing value (None) the feature's `fills` value; SourceFormatError at `where`
    (``file:line``, ``file: row 3``) naming the `noun` (key, column) otherwise: a value that
    does not fit, or one missing without a fill (`null`: how it is missing)."""
    example = {}
    for feature, column in columns.items():
        value = value_of(column)
        if value is None:
            if feature not in fills:
                value_ = _fill_hint(features[feature])
                raise SourceFormatError(
                    f"{where}: {noun} {column!r} {null}; give options.fill a value for feature "
                    f"{feature!r} (catalog prepare FILE: --fill {column}={value_})"
                )
            example[feature] = fills[feature]
            continue
        try:
            example[feature] = typed_value(features[feature], value)
        except ValueError as error:
            raise SourceFormatError(f"{where}: {noun} {column!r}: {error}") from None
    return example


def typed_value(feature: Feature, value: Any) -> Any:
    """`value` as `feature` takes it; ValueError saying why it does not fit."""
    if isinstance(feature, Text):
        if not isinstance(value, str):
            raise ValueError(f"expected text, got {_shown(value)}")
        return value
    if isinstance(feature, Sequence):
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"expected a list, got {_shown(value)}")
        if feature.length is not None and len(value) != feature.length:
            raise ValueError(f"expected a list of {feature.length}, got {len(value)} elements")
        element = feature.feature
        assert isinstance(element, Feature)
        if not isinstance(element, (Scalar, Text, ClassLabel)):  # structs, lists
            return [_within(f"element {i}", element, item) for i, item in enumerate(value)]
        if any(item is None for item in value):
            raise ValueError(f"a list holding a null (element {list(value).index(None)})")
        if isinstance(element, Scalar) and (numbers := _numbers(element, value)) is not None:
            return numbers
        try:
            return [typed_value(element, item) for item in value]
        except ValueError:  # again, naming the element
            return [_within(f"element {i}", element, item) for i, item in enumerate(value)]
    if isinstance(feature, FeaturesDict):  # a struct: a dict of its fields' values
        if not isinstance(value, dict):
            raise ValueError(f"expected a struct (a dict), got {_shown(value)}")
        absent = sorted(set(feature) - set(value))
        if absent:
            raise ValueError(f"a struct without field {absent[0]!r}")
        return {name: _within(f"field {name!r}", feature[name], value[name]) for name in feature}
    if isinstance(feature, Image):
        data = value.get("bytes") if isinstance(value, dict) else value
        if not isinstance(data, bytes):
            raise ValueError(f"expected an image file's bytes, got {_shown(value)}")
        return data
    if isinstance(feature, ClassLabel):
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            low = -1 if feature.allow_unlabeled else 0  # an index (a Parquet column Hugging
            classes = feature.num_classes or 0  # Face calls a ClassLabel)
            if not low <= int(value) < classes:
                raise ValueError(f"class index {value} is outside {low}..{classes - 1}")
            return int(value)
        if not isinstance(value, str) or value not in feature.names:
            names = ", ".join(feature.names[:6]) + (", ..." if len(feature.names) > 6 else "")
            raise ValueError(f"expected one of the class names ({names}), got {_shown(value)}")
        return feature.str2int(value)
    if isinstance(feature, Scalar):
        kind = feature.dtype.kind
        if kind == "b":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"expected a boolean, got {_shown(value)}")
            return bool(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)
        ):
            raise ValueError(f"expected a number ({feature.dtype.name}), got {_shown(value)}")
        if kind in "iu":
            if isinstance(value, (float, np.floating)):
                raise ValueError(f"expected an integer ({feature.dtype.name}), got {value!r}")
            info = np.iinfo(feature.dtype)
            if not info.min <= int(value) <= info.max:
                raise ValueError(
                    f"{value} does not fit {feature.dtype.name} ({info.min}..{info.max})"
                )
            return int(value)
        return float(value)
    raise ValueError(f"this reader cannot fill {feature!r}")


def _fill_hint(feature: Feature) -> str:
    """What ``--fill COLUMN=...`` takes for `feature`, in an error's words."""
    if isinstance(feature, FeaturesDict):
        return "'{...}' (its fields as a JSON object)"
    if isinstance(feature, Sequence):
        return "'[]' (an empty list)" if feature.length is None else "'[...]' (a JSON list)"
    return "VALUE"


def _within(part: str, feature: Feature, value: Any) -> Any:
    """`typed_value` of a struct's field or a list's element, errors naming that `part`
    (``field 'score': element 2: expected a number``); a null there is one (no fill)."""
    if value is None:
        raise ValueError(
            f"{part} is null; catalog fills a missing value of a whole column (--fill), not one "
            "inside a list or a struct: fill it in the file and write the file again"
        )
    try:
        return typed_value(feature, value)
    except ValueError as error:
        raise ValueError(f"{part}: {error}") from None


#: The Python types of the values an element of each dtype kind takes (as `typed_value`).
_TAKES: dict[str, set[type]] = {"b": {bool}, "i": {int}, "u": {int}, "f": {int, float}}


def _numbers(element: Scalar, value: Any) -> np.ndarray[Any, Any] | None:
    """`value` (a list) as one array of `element`'s dtype, as `typed_value` of each element
    would give them (the Sequence stores that array's bytes as they are); None when some
    value is of another type or out of range: then each is taken, and refused, one by one."""
    kind = element.dtype.kind
    takes: set[type] = _TAKES.get(kind, set())
    if not value or not {type(item) for item in value} <= takes:
        return np.empty(0, element.dtype) if takes and not value else None
    if kind == "b":
        return np.array(value, np.bool_)
    if kind == "f":
        wide = np.array(value, np.float64)
        with np.errstate(over="ignore"):
            found = wide.astype(element.dtype)
        if found.dtype != wide.dtype and (np.isinf(found) & np.isfinite(wide)).any():
            return None  # past the dtype's range: refused one by one
        return found
    info = np.iinfo(element.dtype)
    try:
        found = np.array(value, np.uint64 if min(value) >= 0 else np.int64)
    except OverflowError:  # past 64 bits, or past int64 beside a negative value
        return None
    if int(found.min()) < info.min or int(found.max()) > info.max:
        return None
    return found.astype(element.dtype)


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(value).__name__} {text}"
