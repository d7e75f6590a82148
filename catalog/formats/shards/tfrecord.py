"""TFRecord files of ``tf.train.Example`` protos, with a declared key -> feature mapping.

The classic way to write Fashion-MNIST to TFRecord stores ``image_raw`` (the pixel bytes)
with ``height``, ``width``, ``depth`` and ``label`` as Int64Lists; other files hold PNG/JPEG
bytes, class names, floats. A split says which Example key fills which feature::

    format: tfrecord
    files: {records: {download: train}}         # one file, or a glob of many (in order)
    options:
      keys: {image: image_raw, label: label}    # feature -> Example key: every feature
      shapes: {image: "height,width,depth"}     # raw pixel bytes: the keys holding the shape
    num_examples: 60000

How a key's list becomes a value: Image from PNG/JPEG bytes (stored as they are, their header
checked) or raw uint8 pixels (shaped by `shapes`, else by the feature's shape); ClassLabel
from an int (an Int64List) or a class name (a BytesList); Scalar and Text from the one value;
Tensor from the list reshaped to its shape (raw bytes are read as its dtype); Sequence from
the whole list. A list of the wrong kind or length (a FloatList for a class index, an
Int64List for text or an image) is a SourceFormatError naming the file, the record, the key
and the feature, found before anything is made from its values
(`catalog.interop.tfrecord.checked`). Files may be GZIP-compressed
(detected). The key of an example is ``<file>:<record index>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
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
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.interop.tfrecord import checked
from catalog.interop.tfrecord.example import Value, parse_example
from catalog.interop.tfrecord.io import read_records

__all__ = ["FORMAT", "converter", "examples", "value_of"]

_INT64 = np.dtype(np.int64)
_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")


Convert = Callable[[Value, "tuple[int, ...] | None"], Any]


def _image(feature: Image) -> Convert:
    def convert(value: Value, shape: tuple[int, ...] | None) -> Any:
        data = checked.one_bytes(value)
        if data.startswith(_MAGIC):
            feature.check_file(data)  # the header, before the file is kept as it is
            return data
        dims = shape or feature.shape
        if None in dims:
            raise ValueError("raw pixel bytes need a shape: give options.shapes for this feature")
        if any(d < 1 for d in dims):  # type: ignore[operator]
            raise ValueError(f"raw pixel bytes of shape {dims}: dimensions must be >= 1")
        return np.frombuffer(data, np.uint8).reshape(dims)

    return convert


def _tensor(feature: Tensor) -> Convert:
    def convert(value: Value, shape: tuple[int, ...] | None) -> Any:
        if isinstance(value, list) and value:  # raw bytes, as tf.io.decode_raw reads them
            array = np.frombuffer(checked.one_bytes(value), feature.dtype)
            return array.reshape(shape or checked.element_count(feature.shape, len(array), ""))
        array = checked.number_list(value, feature.dtype, ints_as_floats=True)
        return array.reshape(shape or checked.element_count(feature.shape, len(array), ""))

    return convert


def _class_label(feature: ClassLabel) -> Convert:
    def convert(value: Value, shape: object) -> Any:
        if isinstance(value, list):  # a class name
            return checked.text(checked.one_bytes(value))
        return checked.one_label(value, feature)

    return convert


def _scalar(feature: Scalar) -> Convert:
    def convert(value: Value, shape: object) -> Any:
        return checked.number_list(value, feature.dtype, 1, ints_as_floats=True)[0].item()

    return convert


def _sequence(feature: Sequence) -> Convert:
    inner = feature.feature
    if isinstance(inner, Text):
        return lambda value, shape: [checked.text(bytes(v)) for v in checked.byte_items(value)]
    if isinstance(inner, ClassLabel):
        return lambda value, shape: (
            [checked.text(bytes(v)) for v in value]
            if isinstance(value, list) and value
            else checked.class_labels(value, inner)
        )
    dtype = inner.dtype
    if isinstance(inner, Scalar) and dtype is not None:
        return lambda value, shape: checked.number_list(value, dtype, ints_as_floats=True)
    return lambda value, shape: value


def converter(feature: Feature) -> Convert:
    """The function turning one Example list (and the shape of raw bytes, if any) into the
    value for `feature`. Each checks the list's kind and length first (see
    `catalog.interop.tfrecord.checked`): a FloatList is no class index, an Int64List no text
    or image."""
    if isinstance(feature, Image):
        return _image(feature)
    if isinstance(feature, ClassLabel):
        return _class_label(feature)
    if isinstance(feature, Text):
        return lambda value, shape: checked.text(checked.one_bytes(value))
    if isinstance(feature, Scalar):
        return _scalar(feature)
    if isinstance(feature, Tensor):
        return _tensor(feature)
    if isinstance(feature, Sequence):
        return _sequence(feature)
    raise ValueError(f"{feature!r} cannot be read from a tf.train.Example list")


def value_of(feature: Feature, value: Value, shape: tuple[int, ...] | None = None) -> Any:
    """The value for `feature` from one Example list (`shape`: of raw pixel bytes)."""
    return converter(feature)(value, shape)


def examples(source: Source) -> Examples:
    """Yield ``("<file>:<index>", example)`` for every record of the split's files."""
    shapes = {f: [k.strip() for k in v.split(",")] for f, v in source.options["shapes"].items()}
    plan = [
        (name, key, converter(source.features[name]), shapes.get(name))
        for name, key in source.options["keys"].items()
    ]
    compression = source.options["compression"]
    for path in source.paths("records"):
        for index, record in enumerate(read_records(path, compression=compression)):
            try:
                parsed = parse_example(record)
            except SourceFormatError as error:
                raise SourceFormatError(f"{path}: record {index}: {error}") from None
            example = {}
            for name, key, convert, shape_keys in plan:
                value = parsed.get(key)
                if value is None:
                    held = ", ".join(sorted(parsed))
                    raise SourceFormatError(
                        f"{path}: record {index} has no key {key!r} (for feature {name!r}); it "
                        f"holds {held}"
                    )
                try:
                    shape = None
                    if shape_keys is not None:
                        shape = tuple(
                            int(checked.number_list(parsed[k], _INT64, 1)[0]) for k in shape_keys
                        )
                    example[name] = convert(value, shape)
                except (ValueError, KeyError, TypeError, IndexError) as error:
                    raise SourceFormatError(
                        f"{path}: record {index}: key {key!r} for feature {name!r}: {error}"
                    ) from None
            yield f"{path.name}:{index}", example


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if options["compression"] not in ("auto", "none", "gzip"):
        return f"compression must be auto, none or gzip, got {options['compression']!r}"
    for name in options["keys"]:
        if isinstance(features[name], FeaturesDict):
            return f"keys: feature {name!r} is a dict; map each of its features to a key"
    for name, spec in options["shapes"].items():
        if name not in options["keys"]:
            return f"shapes: {name!r} is not one of the features in keys"
        if not isinstance(features[name], (Image, Tensor)):
            return f"shapes: feature {name!r} must be an Image or a Tensor"
        if isinstance(features[name], Image) and len(spec.split(",")) != 3:
            return f"shapes: {name!r} needs three keys (height, width, depth), got {spec!r}"
    return None


FORMAT = SourceFormat(
    name="tfrecord",
    description="TFRecord files of tf.train.Example protos (GZIP or not), keys mapped to features",
    roles=(Role("records", many=True),),
    options={
        "keys": Option("str_map", {}, "feature -> the Example key that holds it (every feature)"),
        "shapes": Option("str_map", {}, "feature -> 'h,w,c' keys holding raw pixel bytes' shape"),
        "compression": Option("str", "auto", "auto (detect GZIP), none or gzip"),
    },
    features=lambda options: (frozenset(options["keys"]), frozenset()),
    examples=examples,
    validate=_validate,
)
