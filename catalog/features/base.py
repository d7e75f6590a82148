"""The contract every feature type fulfils: validate + encode a value, decode it back, JSON.

A feature turns one value of an example into bytes for the record (`encode`) and those bytes
back into the value a user sees (`decode`). Features whose encoding always has the same length
say so in `fixed_size`; the record codec then reads them at constant offsets, which keeps
decoding (on every training step) to a few slices.

Every feature also states the `shape` and `dtype` of what it decodes to (TFDS's convention:
``None`` for an unknown dimension), which `catalog info` shows and `Sequence` uses to stack
elements into one array.

Feature paths name a feature inside an example: ``"label"``, ``"objects/label"`` (through a
dict), ``"tags[3]"`` (element 3 of a sequence), ``"objects/label[3]"``. Errors carry them in
`FeatureError.feature_path`; `join_path` builds them.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from catalog.errors import FeatureError

__all__ = ["DecodeFn", "Feature", "join_path", "stored_bytes"]

#: Decodes `length` bytes of a record buffer starting at `offset`: ``fn(buf, offset, length)``.
DecodeFn = Callable[[bytearray, int, int], Any]


def join_path(parent: str, child: str) -> str:
    """The path of `child` in `parent`: ``a`` + ``b`` is ``a/b``, ``a`` + ``[3]`` is ``a[3]``."""
    if not child:
        return parent
    if not parent or child.startswith("["):
        return f"{parent}{child}"
    return f"{parent}/{child}"


def stored_bytes(buf: bytearray, offset: int, length: int) -> bytes:
    """A DecodeFn that skips decoding: the value's stored bytes (e.g. the JPEG file), copied
    once (slicing the bytearray itself would copy them twice)."""
    return bytes(memoryview(buf)[offset : offset + length])


class Feature(abc.ABC):
    """One typed value of an example.

    The base of every feature type: each one encodes a value to bytes (``encode_example``),
    decodes them (``decode_example``), and round-trips through JSON (``to_json``,
    `catalog.features.from_json`). Subclass it for a new type; take no arguments here.

    Raises:
        FeatureError: (``encode_example``, when preparing) a value that does not fit, naming
            the feature and the example.
    """

    #: The tag that names this type in JSON (``{"type": "Image", ...}``).
    type_name: ClassVar[str]

    #: Shape of the decoded value, None for unknown dimensions; None for a dict of features.
    shape: tuple[int | None, ...] | None = None
    #: NumPy dtype of the decoded value; None when it is no NumPy value (str, dict).
    dtype: np.dtype[Any] | None = None
    #: Set when the stored bytes of a value, read as an array of this dtype, reshaped to
    #: `shape` and cast to `dtype`, are the value (fixed size): `Sequence` then reads n values
    #: as one array.
    raw_dtype: np.dtype[Any] | None = None

    @property
    def dtype_name(self) -> str:
        """The dtype as `catalog info` shows it: "uint8", "int64", "str"; "" for a dict."""
        return self.dtype.name if self.dtype is not None else ""

    @property
    def fixed_size(self) -> int | None:
        """Length in bytes of every encoding of this feature, or None when it varies."""
        return None

    @abc.abstractmethod
    def encode(self, value: Any) -> bytes:
        """Validate `value` and return its bytes; raise FeatureError when it does not fit."""

    @abc.abstractmethod
    def decode(self, buf: bytearray, offset: int, length: int) -> Any:
        """Turn `length` bytes of `buf` starting at `offset` back into the value."""

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any] | None:
        """Decode this feature of many records at once, or return None when it cannot.

        `block` is an ``(n, fixed_size)`` uint8 view of n records' bytes for this feature,
        rows of one writable buffer. Features whose decoded value is a view of their stored
        bytes (raw images, tensors, labels, scalars) decode a whole block with a few NumPy
        calls instead of n Python calls: iteration and batched reads use this.
        """
        return None

    def decode_spans(self, data: bytearray, starts: list[int], ends: list[int]) -> list[Any] | None:
        """Decode this variable-size feature of many records at once, or return None when it
        cannot: value k is ``data[starts[k]:ends[k]]``, giving what `decode` gives for it.

        `catalog.features.FeaturesDict.decode_records` decodes a batch of records holding
        variable-size features column by column when each of those features does this
        (`Text`); the others are decoded one record at a time.
        """
        return None

    def compile_decoder(self, overrides: Mapping[str, DecodeFn]) -> DecodeFn:
        """`decode`, except that the features at some paths are decoded by other functions.

        `overrides` maps feature paths relative to this feature (``""`` is the feature itself)
        to DecodeFns. Composite features pass deeper paths on to their parts. The caller,
        `FeaturesDict.decoder`, checks the paths, so unknown ones never get here.
        """
        return overrides.get("", self.decode)

    def children(self) -> Mapping[str, Feature]:
        """The features inside this one that a path can name (a dict's features); else {}."""
        return {}

    @abc.abstractmethod
    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict with a "type" key; `catalog.features.from_json` rebuilds it."""

    @classmethod
    @abc.abstractmethod
    def from_json(cls, data: dict[str, Any]) -> Feature:
        """Rebuild the feature from what `to_json` returned, without its "type" key.

        Nested features (of FeaturesDict and Sequence) arrive already rebuilt: the registry,
        `catalog.features.from_json`, rebuilds them first. Call that function, not this one.
        """

    def describe(self) -> str:
        """Details `catalog info` shows after the shape and dtype (encoding, class names)."""
        return ""

    def _file_value(self, value: Any, what: str) -> Any:
        """`value`, or the bytes of the file it names when it is a path (``what``: the kind
        of file, for the error)."""
        if not isinstance(value, (str, os.PathLike)):
            return value
        try:
            return Path(value).read_bytes()
        except OSError as error:
            raise self._error(f"cannot read {what} file {str(value)!r}: {error.strerror}") from None

    def _error(self, message: str) -> FeatureError:
        return FeatureError(f"{self!r}: {message}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_json() == self.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))
