"""A TFDS generator's raw example -> the values catalog's features encode.

TFDS's ``_generate_examples`` yields what TFDS's own features take: image file paths, open
files, bytes, NumPy arrays or PIL images; class labels as names (str or bytes) or ints; text
as str or bytes; a Sequence as a list of elements or a dict of lists. catalog's features take
most of these as they are (a path is read, a name looked up); this module turns the rest into
one of those, walking the catalog features the dataset's TFDS features were mapped to:

- an open file (anything with ``read``) -> its bytes; a PIL image -> a uint8 array;
- bytes for a Text or a ClassLabel name -> str (UTF-8); a Text's bytes that are not UTF-8 ->
  a `RawText`, kept as they are (TFDS's Text keeps them; its data source gives them back);
- a Sequence given as a dict of lists -> a list of dicts;
- a TFDS TranslationVariableLanguages' dict of language -> text(s) -> its sorted
  ``language`` and ``translation`` lists, as TFDS stores them;
- an audio file (path or open file) for a TFDS Audio feature -> its samples (WAV);
- numbers given as text (a CSV's cells) -> a NumPy value of the feature's dtype, as TFDS's
  ``np.asarray(value, dtype)`` makes them;
- None for a float Scalar/Tensor (or inside its list) -> NaN, as ``np.asarray(None, float32)``
  makes it in TFDS (None for an int or bool feature is refused, as TFDS refuses it).

>>> from catalog.features import ClassLabel, FeaturesDict, Text
>>> features = FeaturesDict({"t": Text(), "l": ClassLabel(names=["a", "b"])})
>>> to_values({"t": b"hi", "l": b"b"}, features)
{'t': 'hi', 'l': 'b'}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
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
from catalog.features.text import RawText
from catalog.features.wav import read_header, read_samples

__all__ = ["to_values"]


def to_values(
    value: Any,
    feature: Feature,
    audio: frozenset[str] = frozenset(),
    path: str = "",
    *,
    translations: frozenset[str] = frozenset(),
) -> Any:
    """`value` (a TFDS generator's, for `feature` at `path`) as `feature.encode` takes it.
    `audio`: the paths of TFDS Audio features (catalog Tensors of samples), whose values
    may be audio files, decoded here (WAV), as TFDS's Audio feature decodes them.
    `translations`: the paths of TFDS TranslationVariableLanguages features (catalog
    FeaturesDicts of ``language`` and ``translation`` lists), whose values are dicts of
    language -> text or texts, made the sorted pairs TFDS stores."""
    if path in translations and isinstance(value, Mapping):
        value = _translation_pairs(value)
    if isinstance(feature, FeaturesDict):
        if not isinstance(value, Mapping):
            return value  # the feature says what is wrong
        return {
            name: to_values(
                value[name],
                sub,
                audio,
                f"{path}/{name}" if path else name,
                translations=translations,
            )
            if name in value
            else value.get(name)
            for name, sub in feature.items()
        }
    if path in audio and isinstance(feature, Tensor):
        return _audio(value, feature)
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
            if isinstance(feature, Text):
                return RawText(value)  # TFDS's Text keeps any bytes
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
    if isinstance(feature, (Scalar, Tensor)) and _holds_none(value):
        return _none_as_nan(value, feature)
    if (
        isinstance(feature, Tensor)
        and isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (str, np.str_)) for v in value)
    ):
        return _number(value, feature.dtype)
    return value


def _translation_pairs(value: Mapping[str, Any]) -> dict[str, list[Any]]:
    """A TranslationVariableLanguages value ({language: a text or a list of texts}) as TFDS
    stores it: every (language, text) pair, sorted, as a ``language`` and a ``translation``
    list."""
    pairs: list[tuple[Any, Any]] = []
    for language, text in value.items():
        texts = [text] if isinstance(text, (str, bytes)) else list(text)
        pairs.extend((language, t) for t in texts)
    pairs.sort()  # as TFDS's encode_example sorts them
    return {"language": [p[0] for p in pairs], "translation": [p[1] for p in pairs]}


def _holds_none(value: Any) -> bool:
    """Whether `value` is None or a list/tuple with a None at some depth."""
    if value is None:
        return True
    return isinstance(value, (list, tuple)) and any(_holds_none(v) for v in value)


def _none_as_nan(value: Any, feature: Scalar | Tensor) -> Any:
    """None for a float feature as TFDS's Tensor/Scalar encodes it, ``np.asarray(value,
    dtype)``: NaN (a None inside a list too). For other dtypes NumPy refuses None, and so does
    TFDS: the value is left for the feature to refuse with its own message."""
    if np.dtype(feature.dtype).kind != "f":
        return value
    return np.asarray(value, dtype=feature.dtype)


def _audio(value: Any, feature: Tensor) -> Any:
    """An audio file (a path or an open file) as its samples, ``(frames,)`` for one channel
    else ``(frames, channels)``, in the feature's dtype (what TFDS's Audio gives through
    pydub); arrays pass as they are. WAV only: another format is a FeatureError."""
    if isinstance(value, (str, os.PathLike)):
        data = Path(value).read_bytes()
    elif hasattr(value, "read") and callable(value.read):
        data = value.read()
    else:
        return value
    if not bytes(data[:4]) == b"RIFF":
        raise FeatureError(
            f"{feature!r}: an audio file that is not WAV ({bytes(data[:4])!r}...); the tfds: "
            "route decodes WAV files only (TFDS uses pydub/ffmpeg for the others)"
        )
    header = read_header(data, "an audio file")
    samples = read_samples(data, header)
    if header.channels == 1:
        samples = samples[:, 0]
    return samples.astype(feature.dtype)


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
