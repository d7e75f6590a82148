"""FeaturesDict: named features making up an example (or a nested part of one)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from catalog.errors import FeatureError, SourceFormatError
from catalog.features.base import DecodeFn, Feature, join_path, stored_bytes

__all__ = [
    "FeaturesDict",
    "SupervisedKeys",
    "feature_at",
    "split_path",
    "supervised_keys_problem",
    "supervised_pair",
    "supervised_text",
]

#: ``(input, target)``: feature names, or as input a dict of names -> feature names (TFDS's
#: titanic: the 13 feature columns as one dict, ``survived`` the target).
SupervisedKeys = tuple[str | dict[str, str], str]

_LENGTH_BYTES = 4  # variable-size values are prefixed with their length, uint32 little-endian


class FeaturesDict(Feature, Mapping[str, Feature]):
    """A mapping from names to features; encodes and decodes whole examples (dicts).

    Fixed-size features come first in the encoding at constant offsets; variable-size ones
    follow, each prefixed by its length. A plain dict among the features becomes a nested
    FeaturesDict; errors name the path through them (``objects/label``).

    `decoder` builds the decode function a data source uses when some features must come
    back undecoded (their stored bytes, e.g. the JPEG file) or decoded by other functions.

    Args:
        features: feature name -> `Feature` (or a dict of them, which nests).

    Raises:
        FeatureError: an empty dict, a name outside TFDS's rule, a value that is no feature;
            and (``encode_example``, when preparing) a value that does not fit, naming
            the feature and the example.

    Examples:
        >>> from catalog.features import ClassLabel, FeaturesDict
        >>> FeaturesDict({"label": ClassLabel(num_classes=3)}).decode_example(
        ...     bytearray(b"\\x02"))
        {'label': 2}
    """

    type_name = "FeaturesDict"

    def __init__(self, features: Mapping[str, Feature | Mapping[str, Any]]) -> None:
        if not isinstance(features, Mapping) or not features:
            raise FeatureError(f"FeaturesDict needs a non-empty dict of features, got {features!r}")
        self._features: dict[str, Feature] = {}
        for name, feature in features.items():
            if not isinstance(name, str) or "[" in name or "" in name.split("/"):
                raise FeatureError(
                    "feature names must be non-empty strings without '[', '/' only between "
                    f"words (TFDS's 'image/filename'), got {name!r}"
                )
            if isinstance(feature, Mapping) and not isinstance(feature, Feature):
                if isinstance(feature.get("type"), str):
                    raise FeatureError(
                        f"feature {name!r} is a JSON spec ({feature!r}); rebuild JSON with "
                        "catalog.features.from_json"
                    )
                feature = FeaturesDict(feature)
            if not isinstance(feature, Feature):
                raise FeatureError(f"feature {name!r} must be a Feature, got {feature!r}")
            self._features[name] = feature
        for name in self._features:  # 'a/b' beside a dict 'a': one path for two features
            for cut in [i for i, c in enumerate(name) if c == "/"]:
                head = self._features.get(name[:cut])
                if head is not None and head.children():
                    raise FeatureError(
                        f"feature name {name!r} is also the path of a feature inside "
                        f"{name[:cut]!r}, which has features of its own; rename one of them"
                    )
        # The layout (below) is made on first use, not here: a ClassLabel made without classes
        # may get its names after it was put in the dict (TFDS allows that), which decides its
        # storage width.

    #: What `_layout` sets: fixed-size features first (constant offsets), then variable-size
    #: ones, and what `decode` runs for each.
    _LAYOUT = frozenset(
        {"_fixed_plan", "_fixed_total", "_variable", "_fixed_decode", "_variable_decode"}
    )

    def __getattr__(self, name: str) -> Any:
        """Makes the layout the first time one of its attributes is asked for (later lookups
        find the attributes themselves: no cost on the decoding path)."""
        if name not in FeaturesDict._LAYOUT or "_features" not in self.__dict__:
            raise AttributeError(name)
        self._layout()
        return self.__dict__[name]

    def _layout(self) -> None:
        fixed_plan: list[tuple[str, Feature, int, int]] = []
        offset = 0
        for name, feature in self._features.items():
            size = feature.fixed_size
            if size is not None:
                fixed_plan.append((name, feature, offset, size))
                offset += size
        variable = [(n, f) for n, f in self._features.items() if f.fixed_size is None]
        self._fixed_decode: list[tuple[str, DecodeFn, int, int]] = [
            (name, f.decode, off, size) for name, f, off, size in fixed_plan
        ]
        self._variable_decode: list[tuple[str, DecodeFn]] = [(n, f.decode) for n, f in variable]
        self._fixed_total = offset
        self._variable = variable
        # the features' own order, when the record's (fixed-size ones first) is another
        stored = [n for n, *_ in fixed_plan] + [n for n, _ in variable]
        self._order = tuple(self._features) if stored != list(self._features) else None
        self._fixed_plan = fixed_plan  # last: the others are there once this one is

    # Mapping
    def __getitem__(self, name: str) -> Feature:
        return self._features[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._features)

    def __len__(self) -> int:
        return len(self._features)

    def children(self) -> Mapping[str, Feature]:
        return self._features

    @property
    def fixed_size(self) -> int | None:
        return self._fixed_total if not self._variable else None

    # -- encoding ---------------------------------------------------------------------------
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
            path = join_path(name, error.feature_path)
            raise FeatureError(error.reason, feature_path=path) from None

    def encode_example(self, example: Mapping[str, Any]) -> bytes:
        """Validate and encode a whole example (a dict with one value per feature)."""
        return self.encode(example)

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, buf: bytearray, offset: int, length: int) -> dict[str, Any]:
        end = offset + length
        pos = offset + self._fixed_total
        if pos > end:
            raise _malformed(length, "its fixed-size features alone take", pos - offset)
        out = {name: fn(buf, offset + off, size) for name, fn, off, size in self._fixed_decode}
        for name, fn in self._variable_decode:
            size = int.from_bytes(buf[pos : pos + _LENGTH_BYTES], "little")
            pos += _LENGTH_BYTES
            if pos + size > end:
                raise _malformed(length, f"feature {name!r} would end at byte", pos + size - offset)
            out[name] = fn(buf, pos, size)
            pos += size
        if pos != end:
            raise _malformed(length, "its features take", pos - offset)
        if self._order is not None:  # an example's keys in the features' order
            return {name: out[name] for name in self._order}
        return out

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any] | None:
        if self._variable:
            return None
        columns = []
        for _, feature, off, size in self._fixed_plan:
            column = feature.decode_block(block[:, off : off + size])
            if column is None:
                return None
            columns.append(column)
        return _zip_dicts([name for name, _, _, _ in self._fixed_plan], columns)

    def decode_records(
        self, buf: bytearray, starts: np.ndarray[Any, Any], lengths: np.ndarray[Any, Any]
    ) -> list[dict[str, Any]] | None:
        """Decode n examples column by column (example k: the `lengths[k]` bytes of `buf`
        from `starts[k]` on): what `decode` of each gives, with one NumPy gather for every
        record's fixed-size bytes and one per variable-size feature's length prefixes. None
        when a feature cannot decode a column (`decode_block`, `decode_spans`) or a record
        does not have these features' layout (`decode` of each then says what is wrong)."""
        fixed, variable = self._fixed_total, self._variable
        ends = starts + lengths
        if (lengths < fixed + _LENGTH_BYTES * len(variable)).any():
            return None
        array = np.frombuffer(buf, np.uint8)
        names, columns = [], []
        if fixed:
            block = array[starts[:, None] + np.arange(fixed)]
            for name, feature, off, size in self._fixed_plan:
                column = feature.decode_block(block[:, off : off + size])
                if column is None:
                    return None
                names.append(name)
                columns.append(column)
        pos = starts + fixed
        prefix = np.arange(_LENGTH_BYTES)
        for name, feature in variable:
            if (pos + _LENGTH_BYTES > ends).any():
                return None
            sizes = array[pos[:, None] + prefix].view("<u4")[:, 0].astype(np.int64)
            pos = pos + _LENGTH_BYTES
            stops = pos + sizes
            if (stops > ends).any():
                return None
            values = feature.decode_spans(buf, pos.tolist(), stops.tolist())
            if values is None:
                return None
            names.append(name)
            columns.append(values)
            pos = stops
        if (pos != ends).any():
            return None
        if self._order is not None:  # an example's keys in the features' order
            by_name = dict(zip(names, columns, strict=True))
            names, columns = list(self._order), [by_name[name] for name in self._order]
        return _zip_dicts(names, columns)

    def decode_columns(self, block: np.ndarray[Any, Any]) -> dict[str, Any] | None:
        """Decode n records' fixed-size bytes into one stacked array per feature, or None.

        `block` is an ``(n, fixed_size)`` uint8 array of n records (as `decode_block`). Each
        array has n rows of the feature's shape and dtype, is C-contiguous and writable (one
        copy of the bytes per feature; no per-example objects). None when some feature is not
        a fixed-shape array of its stored bytes (`raw_dtype`), e.g. a nested dict or PNG.
        """
        if self._variable:
            return None
        n = len(block)
        out: dict[str, Any] = {}
        for name, feature, off, size in self._fixed_plan:
            raw, shape = feature.raw_dtype, feature.shape
            if raw is None or shape is None or None in shape or feature.dtype is None:
                return None
            column = np.ascontiguousarray(block[:, off : off + size]).view(raw)
            column = column.reshape((n, *shape))  # type: ignore[arg-type]
            out[name] = column if raw == feature.dtype else column.astype(feature.dtype)
        return out

    def decode_example(self, buf: bytearray, offset: int = 0) -> dict[str, Any]:
        """Decode one example from `buf` (writable, so arrays handed out are writable too)."""
        return self.decode(buf, offset, len(buf) - offset)

    def decoder(
        self,
        *,
        skip: Iterable[str] = (),
        decoders: Mapping[str, Callable[[bytes], Any]] | None = None,
    ) -> Callable[[bytearray, int, int], dict[str, Any]]:
        """A function like `decode` (``fn(buf, offset, length) -> example``) that skips or
        replaces the decoding of some features.

        `skip` names features (by path: ``"image"``, ``"objects/label"``) to return as their
        stored bytes, undecoded: a PNG/JPEG image's file bytes, raw pixels, a Text's UTF-8,
        a label's little-endian index. `decoders` maps paths to functions that get those
        bytes and return the value instead (e.g. your own JPEG decoder). Inside a Sequence
        both apply to each element, and the sequence comes back as a list.
        With neither, this is `decode` itself: the all-default path costs nothing extra.

        >>> from catalog.features import ClassLabel, Image
        >>> features = FeaturesDict({"image": Image((2, 2, 1)), "label": ClassLabel(num_classes=3)})
        >>> features.decoder(skip={"image"})(bytearray(b"\\x00\\x01\\x02\\x03\\x02"), 0, 5)
        {'image': b'\\x00\\x01\\x02\\x03', 'label': 2}
        """
        overrides: dict[str, DecodeFn] = {}
        for path in [skip] if isinstance(skip, str) else skip:
            overrides[path] = stored_bytes
        for path, fn in (decoders or {}).items():
            if path in overrides:
                raise FeatureError(f"feature {path!r} is both skipped and given a decoder")
            overrides[path] = _from_stored_bytes(fn)
        known = dict(self.paths())
        for path in overrides:
            if path not in known:
                raise FeatureError(
                    f"no feature {path!r} to skip or decode otherwise; features: "
                    f"{', '.join(known)}",
                    feature_path=path,
                )
        return self.compile_decoder(overrides)

    def compile_decoder(self, overrides: Mapping[str, DecodeFn]) -> DecodeFn:
        if "" in overrides:
            return overrides[""]
        if not overrides:
            return self.decode
        inner: dict[str, dict[str, DecodeFn]] = {name: {} for name in self._features}
        for path, fn in overrides.items():
            found = split_path(self._features, path)
            if found is not None:
                inner[found[0]][found[1]] = fn
        decode_fns: dict[str, DecodeFn] = {
            name: feature.compile_decoder(inner[name]) if inner[name] else feature.decode
            for name, feature in self._features.items()
        }
        # The same decode loop over other functions: a copy of this dict with its plan changed
        # (the layout made first, so the copy has it and never makes its own over these).
        fixed_plan, variable = self._fixed_plan, self._variable
        plan = copy.copy(self)
        plan._fixed_decode = [(n, decode_fns[n], off, size) for n, _, off, size in fixed_plan]
        plan._variable_decode = [(n, decode_fns[n]) for n, _ in variable]
        return plan.decode

    # -- structure --------------------------------------------------------------------------
    def split_path(self, path: str) -> tuple[str, str] | None:
        """(the feature of this dict `path` starts with, the rest of the path inside it), or
        None. A name may hold '/' (TFDS's ``image/filename``), so the longest name wins:
        ``image/filename`` is that feature, not ``filename`` inside ``image``."""
        return split_path(self._features, path)

    def feature_at(self, path: str) -> Feature | None:
        """The feature at `path` (through nested dicts and Sequences of dicts), or None."""
        return feature_at(self._features, path)

    def paths(self, prefix: str = "") -> Iterator[tuple[str, Feature]]:
        """Every feature a path can name, depth first: ``objects``, ``objects/label``, ...

        Paths go through nested dicts and through Sequences of dicts (whose features are
        named as if the Sequence were not there).
        """
        return _paths(self._features, prefix)

    def leaves(self, prefix: str = "") -> Iterator[tuple[str, Feature]]:
        """Every feature that has no features inside, with its path ("image", "objects/label")."""
        for path, feature in self.paths(prefix):
            if not feature.children():
                yield path, feature

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "features": {name: f.to_json() for name, f in self._features.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FeaturesDict:
        return cls(data["features"])

    def __repr__(self) -> str:
        inner = ", ".join(f"{name!r}: {f!r}" for name, f in self._features.items())
        return f"FeaturesDict({{{inner}}})"


def split_path(features: Mapping[str, Feature], path: str) -> tuple[str, str] | None:
    """`FeaturesDict.split_path` over any mapping of features (a Sequence's children too).

    >>> split_path({"image": None, "image/filename": None}, "image/filename")
    ('image/filename', '')
    >>> split_path({"objects": None}, "objects/label")
    ('objects', 'label')
    """
    if path in features:
        return path, ""
    # the longest name first: cut at each '/' from the right (time linear in the path's
    # length, whatever the number of features)
    cut = len(path)
    while (cut := path.rfind("/", 0, cut)) >= 0:
        if path[:cut] in features:
            return path[:cut], path[cut + 1 :]
    return None


def feature_at(features: Mapping[str, Feature], path: str) -> Feature | None:
    """The feature at `path` in `features`, through nested dicts and Sequences of dicts."""
    found = split_path(features, path)
    if found is None:
        return None
    feature = features[found[0]]
    return feature_at(feature.children(), found[1]) if found[1] else feature


def _paths(features: Mapping[str, Feature], prefix: str) -> Iterator[tuple[str, Feature]]:
    for name, feature in features.items():
        yield f"{prefix}{name}", feature
        yield from _paths(feature.children(), f"{prefix}{name}/")


def _from_stored_bytes(fn: Callable[[bytes], Any]) -> DecodeFn:
    """A DecodeFn calling `fn` with a value's stored bytes."""

    def decode(buf: bytearray, offset: int, length: int) -> Any:
        return fn(stored_bytes(buf, offset, length))

    return decode


def _zip_dicts(names: list[str], columns: list[list[Any]]) -> list[dict[str, Any]]:
    """One dict per row of `columns`; dict displays for the common small cases are ~3x
    faster than dict(zip(...)), and this runs once per example while iterating."""
    if len(names) == 1:
        (a,), (ca,) = names, columns
        return [{a: x} for x in ca]
    if len(names) == 2:
        a, b = names
        return [{a: x, b: y} for x, y in zip(*columns, strict=True)]
    if len(names) == 3:
        a, b, c = names
        return [{a: x, b: y, c: z} for x, y, z in zip(*columns, strict=True)]
    out: list[dict[str, Any]] = [{} for _ in columns[0]]  # filled a column at a time: ~4x
    for name, column in zip(names, columns, strict=True):  # faster than a dict(zip()) a row
        for example, value in zip(out, column, strict=True):
            example[name] = value
    return out


def _malformed(length: int, what: str, needed: int) -> SourceFormatError:
    return SourceFormatError(
        f"a record of {length} bytes does not match the features: {what} {needed}"
    )


def supervised_keys_problem(keys: Any, features: FeaturesDict) -> str | None:
    """What is wrong with `keys` as ``[input, target]`` feature names (the input may be a
    dict of names -> feature names, as TFDS's), or None. The input may be the target itself
    (``[text, text]``: a language model's, as TFDS's lm1b), not one of a dict's inputs."""
    shape = "[input, target] naming two features (input: a name or {name: feature, ...})"
    if not isinstance(keys, (list, tuple)) or len(keys) != 2 or not isinstance(keys[1], str):
        return f"expected {shape}, got {keys!r}"
    inputs = keys[0]
    if isinstance(inputs, dict):
        if not inputs or not all(isinstance(k, str) and isinstance(v, str)
                                 for k, v in inputs.items()):  # fmt: skip
            return f"expected {shape}: the input dict maps names to feature names, got {inputs!r}"
        named = list(inputs.values())
    elif isinstance(inputs, str):
        named = [inputs]
    else:
        return f"expected {shape}, got {keys!r}"
    unknown = [k for k in [*named, keys[1]] if k not in features]
    if unknown:
        return (
            f"expected {shape}, got {list(keys)}: {unknown[0]!r} is not a feature; features: "
            f"{', '.join(features)}"
        )
    if isinstance(inputs, dict) and keys[1] in named:
        # one feature as both the input and the target is TFDS's language-model form
        # (lm1b: ("text", "text")); a target among several named inputs is a mistake
        return f"expected {shape}, the target not among the dict's inputs, got {list(keys)}"
    return None


def supervised_pair(keys: SupervisedKeys, example: Mapping[str, Any]) -> tuple[Any, Any]:
    """``(input, target)`` of a decoded example (or of decoded columns): the input a dict
    when the keys name one.

    >>> supervised_pair(({"x": "a"}, "b"), {"a": 1, "b": 2, "c": 3})
    ({'x': 1}, 2)
    """
    inputs, target = keys
    if isinstance(inputs, dict):
        return {name: example[key] for name, key in inputs.items()}, example[target]
    return example[inputs], example[target]


def supervised_text(keys: SupervisedKeys) -> str:
    """The keys as text: ``(image, label)``, ``({age, fare, ...}, survived)`` for a dict input
    (its names; a name mapped to another feature as ``name: feature``).

    >>> supervised_text(("image", "label")), supervised_text(({"a": "a", "b": "c"}, "y"))
    ('(image, label)', '({a, b: c}, y)')
    """
    inputs, target = keys
    if isinstance(inputs, dict):
        named = ", ".join(k if k == v else f"{k}: {v}" for k, v in inputs.items())
        return f"({{{named}}}, {target})"
    return f"({inputs}, {target})"
