"""TFDS's records: catalog values <-> the ``tf.train.Example`` TFDS serializes them as.

TFDS flattens an example's features into Example keys joined with ``/`` (``objects/bbox``)
and stores each as a list: images as their PNG/JPEG file in a BytesList, text as UTF-8
bytes, class labels, ints and bools as Int64List, floats as FloatList (float64 as float32),
tensors flattened row-major, or as their raw bytes when features.json gives a Tensor an
``encoding`` of "bytes" or "zlib" (`catalog.interop.tfds.encoded`). A Sequence concatenates
its elements' lists; one whose elements vary in shape is ragged: ``<key>/ragged_flat_values``
plus ``<key>/ragged_row_lengths_<k>`` per ragged dimension.

`ExampleCodec` decodes such records into exactly what catalog's own codec gives for the same
features (see `catalog.features`), and encodes catalog examples the way TFDS does, so a
TFDS directory catalog writes loads in ``tfds.builder_from_directory``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Sequence as SequenceABC
from typing import Any

import numpy as np

from catalog.errors import FeatureError, SourceFormatError
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
from catalog.features.base import join_path
from catalog.interop.tfds import RECORD_FORMAT_NAME, encoded
from catalog.interop.tfrecord import checked
from catalog.interop.tfrecord.example import Value, encode_example, parse_example

__all__ = ["RECORD_FORMAT_NAME", "ExampleCodec", "example_key", "image_paths"]

#: `DatasetInfo.record_format["name"]` of data in TFDS's records (serialized Examples).

Parsed = Mapping[str, Value]
Getter = Callable[[Parsed], Any]
Putter = Callable[[Any, dict[str, Any]], None]

_FLAT, _ROWS = "ragged_flat_values", "ragged_row_lengths_"


def example_key(path: str) -> str:
    """The Example key of a feature path (``objects/bbox``; paths use ``/`` already)."""
    return path


def _storage_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.float32) if dtype.kind == "f" else np.dtype(np.int64)


def image_paths(feature: Feature, path: str = "") -> Iterator[str]:
    """Paths of the PNG/JPEG Image features (alone or in a Sequence): their stored bytes
    can be carried over as they are."""
    if isinstance(feature, FeaturesDict):
        for name, child in feature.items():
            yield from image_paths(child, join_path(path, name))
    elif isinstance(feature, Sequence):
        if feature.columns is not None:
            yield from image_paths(feature.columns, path)
        elif isinstance(feature.feature, Image) and feature.feature.encoding != "raw":
            yield path
    elif isinstance(feature, Image) and feature.encoding != "raw":
        yield path


def _leaf(feature: Sequence) -> tuple[list[int | None], Feature]:
    """The lengths of nested Sequences and the feature inside them."""
    dims: list[int | None] = []
    inner: Feature = feature
    while isinstance(inner, Sequence):
        dims.append(inner.length)
        inner = inner.feature
    return dims, inner


_NO_VALUES = np.empty(0, np.int64)  # what a Sequence with no elements may omit its key for


def _named(path: str, get: Getter) -> Getter:
    """`get`, its errors (a list that does not fit the feature, the feature's own check)
    naming the feature. A missing key (KeyError) is named by `ExampleCodec.decode`."""

    def named(p: Parsed) -> Any:
        try:
            return get(p)
        except SourceFormatError:
            raise  # named already, by a feature inside this one
        except (ValueError, IndexError, TypeError) as error:  # Mismatch, FeatureError, ...
            raise SourceFormatError(f"feature {path!r}: {checked.reason(error)}") from None

    return named


def _check_bytes(feature: Feature) -> Callable[[bytes], None]:
    """What stored bytes handed over undecoded (``decoders``) must pass: an image file's
    header (size, channels, format, pixels) without decoding it; text is handed over as is."""
    if isinstance(feature, Image):
        return feature.check_file
    return lambda data: None


def _numbers(leaf: Feature, value: Value, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The flat values of numeric elements: class indices in range, other numbers of the
    right list kind that fit `dtype`."""
    if isinstance(leaf, ClassLabel):
        return checked.class_labels(value, leaf)
    return checked.number_list(value, dtype)


def _check_elements(leaf: Feature, values: np.ndarray[Any, Any]) -> None:
    """Elements of a Tensor type with checks of its own (BBox: range and order) pass them."""
    if isinstance(leaf, Tensor) and type(leaf).validate is not Tensor.validate:
        for element in values.reshape(-1, *leaf.shape):
            leaf.validate(element)


class _Plan:
    """Builds the getters (decoding) of a FeaturesDict, with overrides by feature path.

    Every getter checks the record's list against its feature before making anything from
    it (`catalog.interop.tfrecord.checked`): its kind, its length, the range of its values,
    an image file's header; what does not match is a SourceFormatError naming the feature.
    """

    def __init__(
        self, overrides: Mapping[str, Callable[[bytes], Any]], encodings: Mapping[str, str]
    ) -> None:
        self.overrides = dict(overrides)
        self.encodings = encodings
        self.used: set[str] = set()

    def getter(self, feature: Feature, path: str) -> Getter:
        if isinstance(feature, FeaturesDict):
            children = [(n, self.getter(f, join_path(path, n))) for n, f in feature.items()]
            return lambda p: {name: get(p) for name, get in children}
        if isinstance(feature, Sequence):
            return _named(path, self.sequence(feature, path))
        return _named(path, self.leaf(feature, path))

    def leaf(self, feature: Feature, path: str) -> Getter:
        key = example_key(path)
        if path in self.encodings:
            return encoded.tensor_getter(feature, key, self.encodings[path])
        override = self.override(path, feature)
        if override is not None:
            check = _check_bytes(feature)

            def handed_over(p: Parsed) -> Any:
                data = checked.one_bytes(p[key])
                check(data)
                return override(data)

            return handed_over
        if isinstance(feature, Image):
            return lambda p: feature.decode_file(checked.one_bytes(p[key]))
        if isinstance(feature, ClassLabel):
            return lambda p: checked.one_label(p[key], feature)
        if isinstance(feature, Text):
            return lambda p: checked.text(checked.one_bytes(p[key]))
        if isinstance(feature, Scalar):
            dtype = feature.dtype
            return lambda p: checked.number_list(p[key], dtype, 1)[0]
        if isinstance(feature, Tensor):
            return lambda p: checked.tensor(p[key], feature)
        raise FeatureError(f"feature {path!r}: {feature!r} cannot be read from a TFDS record")

    def override(self, path: str, feature: Feature) -> Callable[[bytes], Any] | None:
        fn = self.overrides.get(path)
        if fn is not None:
            if not isinstance(feature, (Image, Text)):
                raise FeatureError(
                    f"decoders[{path!r}]: only Image and Text features of a TFDS dataset have "
                    f"stored bytes to hand over, not {feature!r}"
                )
            self.used.add(path)
        return fn

    def sequence(self, feature: Sequence, path: str) -> Getter:
        if feature.columns is not None:
            columns = self.getter(feature.columns, path)

            def same_length(p: Parsed) -> Any:
                values = columns(p)
                lengths = {name: len(v) for name, v in values.items()}
                if len(set(lengths.values())) > 1:
                    held = ", ".join(f"{name} {n}" for name, n in lengths.items())
                    raise checked.Mismatch(
                        f"its features hold different numbers of elements: {held}"
                    )
                return values

            return same_length
        dims, leaf = _leaf(feature)
        key = example_key(path)
        if path in self.encodings:
            if len(dims) != 1:
                raise FeatureError(f"feature {path!r}: nested Sequences of a tensor stored as "
                                   f"{self.encodings[path]!r}")  # fmt: skip
            return encoded.sequence_getter(leaf, key, self.encodings[path], dims[0])
        if isinstance(leaf, FeaturesDict):
            raise FeatureError(f"feature {path!r}: a Sequence of a Sequence of a dict")
        if isinstance(leaf, (Image, Text)):
            return self._files(leaf, dims, key, path)
        dtype = leaf.dtype
        assert dtype is not None and leaf.shape is not None
        shape = (*dims, *leaf.shape)
        if None not in shape[1:]:

            def fixed(p: Parsed) -> Any:
                value = p.get(key, _NO_VALUES)
                flat = _numbers(leaf, value, dtype)
                values = flat.reshape(
                    checked.element_count(shape, len(flat), checked.describe(value))
                )
                _check_elements(leaf, values)
                return values

            return fixed
        return _ragged(leaf, shape, key)

    def _files(self, leaf: Image | Text, dims: list[int | None], key: str, path: str) -> Getter:
        """A Sequence of Image or Text: a BytesList of its elements' stored bytes."""
        if len(dims) != 1:
            raise FeatureError(f"feature {path!r}: nested Sequences of {leaf!r}")
        count = dims[0]
        override = self.override(path, leaf)
        if override is not None:
            check = _check_bytes(leaf)

            def handed_over(p: Parsed) -> Any:
                items = [bytes(b) for b in checked.byte_items(p.get(key, []), count)]
                for data in items:
                    check(data)
                return [override(data) for data in items]

            return handed_over
        if isinstance(leaf, Text):
            return lambda p: [
                checked.text(bytes(b)) for b in checked.byte_items(p.get(key, []), count)
            ]
        decode = leaf.decode_file
        if None in leaf.shape:
            return lambda p: [decode(bytes(b)) for b in checked.byte_items(p.get(key, []), count)]
        empty = (0, *leaf.shape)

        def images(p: Parsed) -> Any:
            values = [decode(bytes(b)) for b in checked.byte_items(p.get(key, []), count)]
            return np.stack(values) if values else np.empty(empty, np.uint8)

        return images


def _ragged(leaf: Feature, shape: tuple[int | None, ...], key: str) -> Getter:
    """A Sequence with ragged dimensions: its flat values and the row lengths of each ragged
    dimension, which must add up level by level (checked before any row is made)."""
    dtype = leaf.dtype
    assert dtype is not None
    trailing: list[int] = []
    for d in reversed(shape):
        if d is None:
            break
        trailing.insert(0, d)
    inner = math.prod(trailing)
    ragged_dims = sum(d is None for d in shape[1:])
    flat_key, rows_keys = f"{key}/{_FLAT}", [f"{key}/{_ROWS}{k}" for k in range(ragged_dims)]

    def ragged(p: Parsed) -> Any:
        flat = _numbers(leaf, p[flat_key], dtype)
        if len(flat) % inner:
            raise checked.Mismatch(f"{len(flat)} flat values cannot be rows of {tuple(trailing)}")
        rows = [checked.number_list(p[k], np.dtype(np.int64)) for k in rows_keys]
        held = len(flat) // inner
        for rows_key, lengths in zip(reversed(rows_keys), reversed(rows), strict=True):
            if len(lengths) and lengths.min() < 0:
                raise checked.Mismatch(f"{rows_key} holds a negative row length")
            total = int(lengths.sum())
            if total != held:
                raise checked.Mismatch(
                    f"the row lengths in {rows_key} add up to {total}, but {held} rows are stored"
                )
            held = len(lengths)
        if shape[0] is not None and held != shape[0]:
            raise checked.Mismatch(f"expected {shape[0]} elements, got {held}")
        values: Any = flat.reshape((-1, *trailing))
        _check_elements(leaf, values)
        for lengths in reversed(rows):
            bounds = np.concatenate(([0], np.cumsum(lengths)))
            values = [values[a:b] for a, b in itertools.pairwise(bounds)]
        return values

    return ragged


class _Writer:
    """Builds the putters (encoding) of a FeaturesDict."""

    def __init__(self, encodings: Mapping[str, str]) -> None:
        self.encodings = encodings

    def putter(self, feature: Feature, path: str) -> Putter:
        key = example_key(path)
        if path in self.encodings and not isinstance(feature, Sequence):
            return encoded.tensor_putter(feature, key, self.encodings[path])
        if isinstance(feature, FeaturesDict):
            children = [(n, self.putter(f, join_path(path, n))) for n, f in feature.items()]

            def put_dict(value: Any, out: dict[str, Any]) -> None:
                for name, put in children:
                    put(value[name], out)

            return put_dict
        if isinstance(feature, Sequence):
            return self.sequence(feature, path)
        if isinstance(feature, Image):
            encode = _image_encoder(feature)
            return lambda v, out: out.__setitem__(key, [encode(v)])
        if isinstance(feature, Text):
            return lambda v, out: out.__setitem__(key, [v.encode() if isinstance(v, str) else v])
        if isinstance(feature, (ClassLabel, Scalar, Tensor)):
            dtype = _storage_dtype(feature.dtype)
            return lambda v, out: out.__setitem__(key, np.asarray(v).reshape(-1).astype(dtype))
        raise FeatureError(f"feature {path!r}: {feature!r} has no tf.train.Example form")

    def sequence(self, feature: Sequence, path: str) -> Putter:
        key = example_key(path)
        if feature.columns is not None:
            columns = self.putter(feature.columns, path)

            def put_columns(value: Any, out: dict[str, Any]) -> None:
                if not isinstance(value, Mapping):  # a list of dicts
                    value = {n: [row[n] for row in value] for n in feature.columns or {}}
                columns(value, out)

            return put_columns
        dims, leaf = _leaf(feature)
        if path in self.encodings:
            if len(dims) != 1:
                raise FeatureError(f"feature {path!r}: nested Sequences of a tensor stored as "
                                   f"{self.encodings[path]!r}")  # fmt: skip
            return encoded.sequence_putter(leaf, key, self.encodings[path])
        if isinstance(leaf, (Image, Text, FeaturesDict)):
            if len(dims) != 1 or isinstance(leaf, FeaturesDict):
                raise FeatureError(f"feature {path!r}: nested Sequences of {leaf!r}")
            one = _image_encoder(leaf) if isinstance(leaf, Image) else _text_bytes
            return lambda v, out: out.__setitem__(key, np.array([one(x) for x in v], dtype=object))
        assert leaf.dtype is not None and leaf.shape is not None
        dtype = _storage_dtype(leaf.dtype)
        shape = (*dims, *leaf.shape)
        if None not in shape[1:]:
            return lambda v, out: out.__setitem__(key, np.asarray(v).reshape(-1).astype(dtype))
        ragged_dims = sum(d is None for d in shape[1:])

        def put_ragged(value: Any, out: dict[str, Any]) -> None:
            rows: list[list[int]] = [[] for _ in range(ragged_dims)]
            level: list[Any] = list(value)
            for k in range(ragged_dims):
                rows[k] = [len(item) for item in level]
                level = [x for item in level for x in item]
            flat = np.asarray(level).reshape(-1) if level else np.empty(0)
            out[f"{key}/{_FLAT}"] = flat.astype(dtype)
            for k, lengths in enumerate(rows):
                out[f"{key}/{_ROWS}{k}"] = np.array(lengths, np.int64)

        return put_ragged


def _text_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _image_encoder(feature: Image) -> Callable[[Any], bytes]:
    """A function giving an image's file bytes: stored bytes pass through, arrays are
    encoded (PNG, or JPEG for a jpeg feature) by the feature itself."""
    target = feature if feature.encoding != "raw" else Image(feature.shape, encoding="png")

    def encode(value: Any) -> bytes:
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        return target.encode(value)

    return encode


class ExampleCodec:
    """Decodes TFDS records (serialized Examples) into catalog examples, and encodes them.

    The same interface as `catalog.features.codec.RecordCodec`: `decode`, `decode_many`, `encode`.
    `skip` and `decoders` name Image/Text features (or Sequences of them) whose stored bytes
    come back undecoded, or go to a function instead. `encodings` gives the Tensors (by
    feature path) that features.json stores as "bytes" or "zlib" (`tensor_encodings`).
    """

    def __init__(
        self,
        features: FeaturesDict,
        *,
        skip: Iterable[str] = (),
        decoders: Mapping[str, Callable[[bytes], Any]] | None = None,
        encodings: Mapping[str, str] | None = None,
    ) -> None:
        self.features = features
        overrides: dict[str, Callable[[bytes], Any]] = dict.fromkeys(skip, bytes)
        overrides.update(decoders or {})
        encodings = dict(encodings or {})
        plan = _Plan(overrides, encodings)
        self._get = plan.getter(features, "")
        unknown = sorted(set(overrides) - plan.used)
        if unknown:
            raise FeatureError(f"decoders: no Image or Text feature {unknown[0]!r} in {features!r}")
        self._put = _Writer(encodings).putter(features, "")

    def decode(self, record: bytes) -> dict[str, Any]:
        parsed = parse_example(record)
        try:
            result: dict[str, Any] = self._get(parsed)
        except KeyError as error:
            held = ", ".join(sorted(parsed))
            raise SourceFormatError(
                f"a record has no key {error.args[0]!r} that its features.json declares; it "
                f"holds {held}"
            ) from None
        except SourceFormatError:
            raise  # names the feature
        except (IndexError, ValueError, TypeError) as error:
            raise SourceFormatError(f"a record does not match its features.json: {error}") from None
        return result

    def decode_many(self, records: SequenceABC[bytes]) -> list[dict[str, Any]]:
        return [self.decode(record) for record in records]

    def encode(self, example: Mapping[str, Any]) -> bytes:
        """The serialized Example TFDS writes for `example` (catalog values)."""
        out: dict[str, Any] = {}
        self._put(example, out)
        return encode_example(out)
