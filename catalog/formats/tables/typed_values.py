"""Typed values (JSON Lines, Parquet) checked against the feature they fill, before encoding.

A JSON or Parquet value already has a type; `typed_value` takes it only when it fits the
feature exactly, so a prepared example equals its source value: a Text feature takes a
string, a bool Scalar a boolean, an integer Scalar an integer (never a boolean, and within
the dtype's range), a float Scalar an integer or a float, a ClassLabel one of its class
names, an Image the bytes of a PNG or JPEG file (or Hugging Face's ``Image`` struct,
``{"bytes": ..., "path": ...}``, holding them), stored as they are. Anything else is a
ValueError saying what was expected; readers add file, line or row and column. A missing
value (None) is the reader's to handle (its ``fill`` option).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catalog.features import ClassLabel, Feature, Image, Scalar, Text

__all__ = ["typed_value"]


def typed_value(feature: Feature, value: Any) -> Any:
    """`value` as `feature` takes it; ValueError saying why it does not fit."""
    if isinstance(feature, Text):
        if not isinstance(value, str):
            raise ValueError(f"expected text, got {_shown(value)}")
        return value
    if isinstance(feature, Image):
        data = value.get("bytes") if isinstance(value, dict) else value
        if not isinstance(data, bytes):
            raise ValueError(f"expected an image file's bytes, got {_shown(value)}")
        return data
    if isinstance(feature, ClassLabel):
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


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(value).__name__} {text}"
