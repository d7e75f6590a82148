"""A Croissant field's values cast to the feature that stores them, as mlcroissant casts
them to the field's data type: text, numbers, booleans, class names, image files' bytes,
bounding boxes, audio files' samples, lists (a Parquet or JSON list, a ``repeated`` field:
a `Sequence` of the element's feature) and nested fields (``subField``) as a dict of their
parts.

A missing value (a null, an empty CSV cell, a left join without a match), where mlcroissant
gives None: the value ``--fill FIELD=VALUE`` gives (the ``fill`` option; a list field's is
JSON, ``[]``), a float field's NaN when none is given, else an error naming the field and
``--fill``: catalog stores no "missing" value, and never the text of a Python value
(``'None'``, ``"['1']"``).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import (
    Audio,
    BBox,
    ClassLabel,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.formats.audio.sound_files import soundfile_module
from catalog.formats.base import Source
from catalog.formats.croissant.files import loads_json
from catalog.formats.images.image_files import stored_or_pixels

__all__ = [
    "audio_format",
    "cast",
    "caster",
    "fill_value",
    "fills_of",
    "is_missing",
    "match_key",
    "resampled",
]

#: The values a list field may hold (Parquet and JSON lists, NumPy arrays pandas gives).
_LISTS = (list, tuple, np.ndarray)


class _Missing(ValueError):
    """A missing value where no fill is given."""


def is_missing(value: Any) -> bool:
    """Whether `value` is what a missing value reads as (None, or NaN: pandas' empty cell)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def fills_of(source: Source) -> dict[str, Any]:
    """The ``fill`` option's values (``--fill FIELD=VALUE``), each cast to its feature."""
    given: Mapping[str, str] = source.options.get("fill") or {}
    return {name: fill_value(source.features[name], text, name) for name, text in given.items()}


def fill_value(feature: Any, text: str, name: str) -> Any:
    """The value ``--fill NAME=TEXT`` stands in with, cast to `feature` (a list field's
    `text` is JSON); SourceFormatError when it does not fit."""
    value: Any = text
    if isinstance(feature, Sequence):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            raise SourceFormatError(
                f"--fill {name}={text[:80]!r}: field {name} holds lists; give a JSON list "
                "(--fill {name}=[])"
            ) from None
    return cast(feature, value, name, name=name)


def match_key(value: Any) -> str:
    """The text a value is matched by: a join's key, a split field's value (bytes decoded
    as UTF-8, anything else as ``str`` shows it, as mlcroissant compares them)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def cast(feature: Any, value: Any, field: str, *, name: str = "", fill: Any = None) -> Any:
    """`value` as `feature` stores it, a missing value as `fill` (already cast: `fill_value`;
    None: none given); SourceFormatError naming the field (and feature `name`) otherwise."""
    try:
        if fill is not None and is_missing(value):
            return fill
        return _cast(feature, value)
    except _Missing:
        kind = (
            "lists" if isinstance(feature, Sequence)
            else f"{feature.dtype.name} values" if isinstance(feature, Scalar)
            else "text" if isinstance(feature, Text)
            else "class names" if isinstance(feature, ClassLabel)
            else type(feature).__name__
        )  # fmt: skip
        shown = name or field.rsplit("/", 1)[-1]
        raise SourceFormatError(
            f"field {field}: a missing value (a null; mlcroissant gives None) where catalog "
            f"stores {kind}, none missing: give one with --fill {shown}=VALUE "
            f"(Python: fill={{{shown!r}: VALUE}})"
        ) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        raise SourceFormatError(f"field {field}: {error}") from None


def _cast(feature: Any, value: Any) -> Any:
    if isinstance(feature, FeaturesDict):
        if not isinstance(value, Mapping):
            raise ValueError(f"expected the parts of a nested field, got {type(value).__name__}")
        return {name: _cast(part, value.get(name)) for name, part in feature.items()}
    if isinstance(feature, Audio):
        if not isinstance(value, (bytes, np.ndarray)):
            raise ValueError(f"expected an audio file's bytes, got {type(value).__name__}")
        return _audio(feature, value)
    if isinstance(value, bytes) and not isinstance(feature, Image):
        value = value.decode("utf-8")
    if is_missing(value):
        if isinstance(feature, Scalar) and feature.dtype.kind == "f":
            return float("nan")  # a float's own missing value, as pandas reads an empty cell
        raise _Missing
    if isinstance(feature, Sequence):
        if not isinstance(value, _LISTS):
            raise ValueError(f"expected a list, got {type(value).__name__} {str(value)[:80]!r}")
        return [_cast(feature.feature, item) for item in value]
    if isinstance(value, (*_LISTS, Mapping)) and not isinstance(feature, (BBox, Tensor, Image)):
        raise ValueError(
            f"holds a list or object ({str(value)[:80]}) where the field's first records hold "
            "one value each; declare it isArray in the Croissant file"
        )
    if isinstance(feature, Text):
        return value if isinstance(value, str) else str(value)
    if isinstance(feature, ClassLabel):
        if isinstance(value, int) and not isinstance(value, bool):  # an index (catalog's export)
            if not 0 <= value < len(feature.names):
                raise ValueError(f"class index {value} is not in 0..{len(feature.names) - 1}")
            return value
        text = str(value)
        if text not in feature.names:
            raise ValueError(f"{text!r} is not one of the enumeration's values")
        return feature.str2int(text)
    if isinstance(feature, Image):
        if not isinstance(value, bytes):
            raise ValueError(f"expected an image file's bytes, got {type(value).__name__}")
        return stored_or_pixels(feature, value, "an image")  # RGBA or grey: converted
    if isinstance(feature, (BBox, Tensor)):
        if isinstance(value, str):
            value = loads_json(value)
        return np.asarray(value, dtype=feature.dtype).reshape(feature.shape)
    if isinstance(feature, Scalar):
        kind = feature.dtype.kind
        if kind == "f" and isinstance(value, str) and not value.strip():
            return float("nan")  # an empty cell, as pandas reads it for mlcroissant
        if kind == "b":
            if isinstance(value, str):
                if value.strip().lower() not in ("true", "false", "1", "0"):
                    raise ValueError(f"expected a boolean, got {value!r}")
                return value.strip().lower() in ("true", "1")
            return bool(value)
        if kind in "iu":
            if isinstance(value, str) and len(value.strip()) > 40:  # before int()'s own limit
                raise ValueError(
                    f"{value.strip()[:12]}... ({len(value.strip())} characters) does not fit "
                    f"{feature.dtype.name}"
                )
            # a number with a fraction is cut to an integer, as mlcroissant's int(value) does
            number = float(value) if isinstance(value, str) and "." in value else value
            result = int(number)
            info = np.iinfo(feature.dtype)
            if not info.min <= result <= info.max:
                raise ValueError(f"{result} does not fit {feature.dtype.name}")
            return result
        return float(value)
    raise ValueError(f"catalog cannot fill {feature!r} from a Croissant field")


def audio_format(data: bytes, where: str) -> tuple[int, int]:
    """(sample rate, channels) of an audio file's bytes (WAV, FLAC, OGG, MP3: what soundfile
    reads); SourceFormatError when it cannot."""

    sf = soundfile_module()
    try:
        info = sf.info(io.BytesIO(data))
    except (RuntimeError, sf.LibsndfileError) as error:
        raise SourceFormatError(
            f"{where}: not an audio file soundfile can read ({error})"
        ) from None
    return int(info.samplerate), int(info.channels)


def _audio(feature: Audio, value: Any) -> Any:
    """An audio file's samples as `feature` holds them: the file's bytes decoded at its own
    sample rate (mlcroissant resamples to 22,050 Hz; catalog keeps the file's), or samples a
    ``samplingRate`` transform gave (`resampled`); the rate and channels must be the
    feature's (the first file's)."""
    if isinstance(value, bytes):
        samples, rate = _decoded(value, feature.dtype.name)
    else:
        samples, rate = np.asarray(value, feature.dtype), feature.sample_rate
    channels = 1 if len(feature.shape) == 1 else int(feature.shape[1] or 1)
    if rate != feature.sample_rate or samples.shape[1] != channels:
        raise ValueError(
            f"{rate} Hz, {samples.shape[1]} channel(s); the feature holds "
            f"{feature.sample_rate} Hz, {channels} channel(s) (the first file's)"
        )
    return samples[:, 0] if channels == 1 else samples


def _decoded(data: bytes, dtype: str) -> tuple[Any, int]:
    """(samples (n, channels), sample rate) of an audio file's bytes."""

    sf = soundfile_module()
    try:
        samples, rate = sf.read(io.BytesIO(data), dtype=dtype, always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as error:
        raise ValueError(f"not an audio file soundfile can read ({error})") from None
    return samples, int(rate)


def resampled(value: Any, rate: int, field: str) -> Any:
    """A ``samplingRate`` transform: an audio file's bytes decoded and resampled to `rate`
    (float32, ``(n, channels)``) with soxr at its high quality, as librosa (mlcroissant's
    audio reader) resamples by default: the same samples."""
    if not isinstance(value, bytes):
        return value
    try:
        import soxr
    except ImportError:
        raise MissingDependencyError(
            "resampling audio (a samplingRate transform) needs soxr: pip install 'catalog[audio]'"
        ) from None
    try:
        samples, source_rate = _decoded(value, "float32")
    except ValueError as error:
        raise SourceFormatError(f"field {field}: {error}") from None
    if source_rate == rate:
        return samples
    out = soxr.resample(samples, source_rate, rate, quality="HQ")
    return np.asarray(out, np.float32).reshape(len(out), samples.shape[1])


def caster(feature: Any, field: str, name: str = "", fill: Any = None) -> Callable[[Any], Any]:
    """`cast` for one feature (`name`, a missing value given as `fill`), with a fast path for
    the value types tables give (text as str, integers as int, floats as float), decided once
    per split instead of per value."""
    if isinstance(feature, Text):
        fast: type | None = str
    elif isinstance(feature, Scalar) and feature.dtype.kind in "iu":
        info = np.iinfo(feature.dtype)
        low, high = int(info.min), int(info.max)

        def integer(value: Any) -> Any:
            if type(value) is int and low <= value <= high:
                return value
            return cast(feature, value, field, name=name, fill=fill)

        return integer
    elif isinstance(feature, Scalar) and feature.dtype.kind == "f":
        fast = float
    else:
        fast = None

    def any_value(value: Any) -> Any:
        if fast is not None and type(value) is fast and not (fill is not None and value != value):
            return value
        return cast(feature, value, field, name=name, fill=fill)

    return any_value
