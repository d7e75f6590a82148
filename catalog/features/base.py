"""The contract every feature type fulfils: validate + encode a value, decode it back, JSON.

A feature turns one value of an example into bytes for the record (`encode`) and those bytes
back into the value a user sees (`decode`). Features whose encoding always has the same length
say so in `fixed_size`; the record codec then reads them at constant offsets, which keeps
decoding (on every training step) to a few slices.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from catalog.errors import FeatureError

__all__ = ["Feature"]


class Feature(abc.ABC):
    """One typed value of an example."""

    #: The tag that names this type in JSON (``{"type": "Image", ...}``).
    type_name: ClassVar[str]

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

    @abc.abstractmethod
    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict with a "type" key; `features.from_json` rebuilds the feature."""

    @classmethod
    @abc.abstractmethod
    def from_json(cls, data: dict[str, Any]) -> Feature:
        """Rebuild the feature from what `to_json` returned (the "type" key is removed)."""

    def _error(self, message: str) -> FeatureError:
        return FeatureError(f"{self!r}: {message}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.to_json() == self.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))
