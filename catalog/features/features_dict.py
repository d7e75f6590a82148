"""FeaturesDict: named features making up an example, and the JSON registry of feature types."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from catalog.errors import FeatureError
from catalog.features.base import Feature
from catalog.features.class_label import ClassLabel
from catalog.features.image import Image
from catalog.features.scalar import Scalar

__all__ = ["FEATURE_TYPES", "FeaturesDict", "from_json"]

_LENGTH_BYTES = 4  # variable-size values are prefixed with their length, uint32 little-endian


class FeaturesDict(Feature, Mapping[str, Feature]):
    """A mapping from names to features; encodes and decodes whole examples (dicts).

    Fixed-size features come first in the encoding at constant offsets; variable-size ones
    follow, each prefixed by its length. Nested FeaturesDicts are allowed.

    >>> FeaturesDict({"label": ClassLabel(num_classes=3)}).decode_example(
    ...     bytearray(b"\\x02"))
    {'label': 2}
    """

    type_name = "FeaturesDict"

    def __init__(self, features: Mapping[str, Feature | Mapping[str, Any]]) -> None:
        if not features:
            raise FeatureError("FeaturesDict needs at least one feature")
        self._features: dict[str, Feature] = {}
        for name, feature in features.items():
            if not isinstance(name, str) or not name or "/" in name:
                raise FeatureError(
                    f"feature names must be non-empty strings without '/', got {name!r}"
                )
            if isinstance(feature, Mapping):
                feature = FeaturesDict(feature)
            if not isinstance(feature, Feature):
                raise FeatureError(f"feature {name!r} must be a Feature, got {feature!r}")
            self._features[name] = feature
        # Fixed-size features first (constant offsets), then variable-size ones.
        self._fixed_plan: list[tuple[str, Feature, int, int]] = []
        offset = 0
        for name, feature in self._features.items():
            size = feature.fixed_size
            if size is not None:
                self._fixed_plan.append((name, feature, offset, size))
                offset += size
        self._fixed_total = offset
        self._variable = [(n, f) for n, f in self._features.items() if f.fixed_size is None]

    # Mapping
    def __getitem__(self, name: str) -> Feature:
        return self._features[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._features)

    def __len__(self) -> int:
        return len(self._features)

    @property
    def fixed_size(self) -> int | None:
        return self._fixed_total if not self._variable else None

    def encode(self, value: Any) -> bytes:
        if not isinstance(value, Mapping):
            raise FeatureError(f"expected a dict of features, got {type(value).__name__}")
        extra = [k for k in value if k not in self._features]
        if extra:
            raise FeatureError(
                f"the example has keys that are not features: {sorted(map(str, extra))}; "
                f"features are {list(self._features)}"
            )
        parts: list[bytes] = []
        for name, feature, _, _ in self._fixed_plan:
            parts.append(self._encode_child(name, feature, value))
        for name, feature in self._variable:
            data = self._encode_child(name, feature, value)
            parts.append(len(data).to_bytes(_LENGTH_BYTES, "little"))
            parts.append(data)
        return b"".join(parts)

    @staticmethod
    def _encode_child(name: str, feature: Feature, example: Mapping[str, Any]) -> bytes:
        if name not in example:
            raise FeatureError(
                f"missing from the example (it has {sorted(map(str, example))})", feature_path=name
            )
        try:
            return feature.encode(example[name])
        except FeatureError as error:
            path = f"{name}/{error.feature_path}" if error.feature_path else name
            raise FeatureError(error.reason, feature_path=path) from None

    def encode_example(self, example: Mapping[str, Any]) -> bytes:
        """Validate and encode a whole example (a dict with one value per feature)."""
        return self.encode(example)

    def decode(self, buf: bytearray, offset: int, length: int) -> dict[str, Any]:
        out = {name: f.decode(buf, offset + off, size) for name, f, off, size in self._fixed_plan}
        pos = offset + self._fixed_total
        for name, feature in self._variable:
            size = int.from_bytes(buf[pos : pos + _LENGTH_BYTES], "little")
            pos += _LENGTH_BYTES
            out[name] = feature.decode(buf, pos, size)
            pos += size
        return out

    def decode_example(self, buf: bytearray, offset: int = 0) -> dict[str, Any]:
        """Decode one example from `buf` (writable, so arrays handed out are writable too)."""
        return self.decode(buf, offset, len(buf) - offset)

    def leaves(self, prefix: str = "") -> Iterator[tuple[str, Feature]]:
        """Every non-dict feature with its path ("image", "objects/label")."""
        for name, feature in self._features.items():
            path = f"{prefix}{name}"
            if isinstance(feature, FeaturesDict):
                yield from feature.leaves(f"{path}/")
            else:
                yield path, feature

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "features": {name: f.to_json() for name, f in self._features.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FeaturesDict:
        features = data.get("features")
        if not isinstance(features, Mapping):
            raise FeatureError("FeaturesDict JSON needs a 'features' mapping")
        return cls({name: from_json(spec, path=name) for name, spec in features.items()})

    def __repr__(self) -> str:
        inner = ", ".join(f"{name!r}: {f!r}" for name, f in self._features.items())
        return f"FeaturesDict({{{inner}}})"


#: Every feature type by its JSON tag. Add new types here.
FEATURE_TYPES: dict[str, type[Feature]] = {
    cls.type_name: cls for cls in (ClassLabel, FeaturesDict, Image, Scalar)
}


def from_json(data: Any, *, path: str = "") -> Feature:
    """Rebuild a feature from its JSON form (``{"type": "Image", "shape": [...], ...}``)."""
    where = f" for feature {path!r}" if path else ""
    if not isinstance(data, Mapping) or "type" not in data:
        raise FeatureError(
            f"a feature spec must be a mapping with a 'type' key{where}, got {data!r}"
        )
    fields = dict(data)
    type_name = fields.pop("type")
    cls = FEATURE_TYPES.get(type_name)
    if cls is None:
        raise FeatureError(
            f"unknown feature type {type_name!r}{where}; "
            f"known types: {', '.join(sorted(FEATURE_TYPES))}"
        )
    try:
        return cls.from_json(fields)
    except TypeError as error:  # e.g. a field of the wrong kind
        raise FeatureError(f"bad {type_name} spec{where}: {error}") from None
