"""Features: encode -> decode round trips, the errors for bad values, JSON round trips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from catalog import ClassLabel, FeatureError, FeaturesDict, Image, Scalar
from catalog.features import from_json

IMG = np.arange(28 * 28, dtype=np.uint8).reshape(28, 28, 1)
RGB = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
NAMES = ClassLabel(names=["cat", "dog", "bird"])


def roundtrip(feature: Any, value: Any) -> Any:
    buf = bytearray(feature.encode(value))
    if feature.fixed_size is not None:
        assert len(buf) == feature.fixed_size
    return feature.decode(buf, 0, len(buf))


@pytest.mark.parametrize(
    ("feature", "value", "expected"),
    [
        (Image((28, 28, 1)), IMG, IMG),
        (Image((28, 28, 1)), IMG[:, :, 0], IMG),  # grayscale given as (h, w)
        (Image((28, 28, 1), encoding="png"), IMG, IMG),
        (Image((None, None, 3)), RGB, RGB),  # unknown size -> png
        (Image((5, 7, 3), encoding="raw"), RGB, RGB),
        (NAMES, 2, 2),
        (NAMES, "dog", 1),
        (NAMES, np.int64(1), 1),
        (ClassLabel(num_classes=300), 299, 299),  # two-byte storage
        (Scalar("float32"), 1.5, np.float32(1.5)),
        (Scalar("int64"), -(2**40), np.int64(-(2**40))),
        (Scalar("uint8"), 255, np.uint8(255)),
        (Scalar("bool"), True, np.bool_(True)),
    ],
)
def test_value_roundtrips(feature: Any, value: Any, expected: Any) -> None:
    got = roundtrip(feature, value)
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    else:
        assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("feature", "value", "message"),
    [
        (
            Image((28, 28, 1)),
            np.zeros((28, 27, 1), np.uint8),
            "expected shape (28, 28, 1), got (28, 27, 1)",
        ),
        (
            Image((28, 28, 1)),
            np.zeros((28, 28, 1), np.float32),
            "expected dtype uint8, got float32",
        ),
        (Image((28, 28, 1)), [[0]], "expected a NumPy array, got list"),
        (Image((None, None, 3)), np.zeros((4, 4, 1), np.uint8), "expected shape (None, None, 3)"),
        (NAMES, 3, "label 3 is out of range: expected 0..2"),
        (NAMES, -1, "label -1 is out of range"),
        (NAMES, "fish", "unknown class name 'fish'"),
        (NAMES, 1.0, "expected an int index or a class name, got float"),
        (Scalar("uint8"), 256, "256 does not fit uint8 (0..255)"),
        (Scalar("int32"), 1.5, "expected a int32 value"),
        (Scalar("float32"), "x", "expected a float32 value"),
    ],
)
def test_bad_values_are_refused(feature: Any, value: Any, message: str) -> None:
    with pytest.raises(FeatureError, match=message.replace("(", r"\(").replace(")", r"\)")):
        feature.encode(value)


def test_features_dict_names_the_feature_path() -> None:
    features = FeaturesDict({"image": Image((2, 2, 1)), "meta": {"label": NAMES}})
    good = {"image": np.zeros((2, 2, 1), np.uint8), "meta": {"label": "bird"}}
    decoded = features.decode_example(bytearray(features.encode_example(good)))
    assert decoded["meta"] == {"label": 2}
    with pytest.raises(FeatureError) as info:
        features.encode_example({**good, "meta": {"label": 7}})
    assert info.value.feature_path == "meta/label"
    assert str(info.value).startswith("feature 'meta/label': ClassLabel")
    with pytest.raises(FeatureError, match="feature 'image': missing from the example"):
        features.encode_example({"meta": {"label": 0}})
    with pytest.raises(FeatureError, match="keys that are not features: \\['extra'\\]"):
        features.encode_example({**good, "extra": 1})


def test_variable_size_features_follow_fixed_ones() -> None:
    features = FeaturesDict(
        {"photo": Image((None, None, 3)), "label": NAMES, "w": Scalar("float64")}
    )
    assert features.fixed_size is None
    out = features.decode_example(
        bytearray(features.encode_example({"photo": RGB, "label": 1, "w": 0.25}))
    )
    np.testing.assert_array_equal(out["photo"], RGB)
    assert out["label"] == 1 and out["w"] == 0.25


def test_decoded_arrays_are_writable() -> None:
    feature = Image((28, 28, 1))
    assert roundtrip(feature, IMG).flags.writeable


def test_class_label_names_and_conversions() -> None:
    assert NAMES.num_classes == 3 and NAMES.names == ["cat", "dog", "bird"]
    assert NAMES.str2int("bird") == 2 and NAMES.int2str(0) == "cat"
    unnamed = ClassLabel(num_classes=10)
    assert unnamed.names[:3] == ["0", "1", "2"] and unnamed.str2int("7") == 7
    with pytest.raises(FeatureError, match="out of range"):
        NAMES.int2str(3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs names=\\[...\\] or num_classes=N"),
        ({"names": ["a", "b"], "num_classes": 3}, "num_classes=3 but 2 names"),
        ({"names": ["a", "a"]}, "repeated: \\['a'\\]"),
        ({"num_classes": 0}, "positive int"),
    ],
)
def test_class_label_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(FeatureError, match=message):
        ClassLabel(**kwargs)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Image((28, 28, 2)), "1, 3 or 4 channels"),
        (lambda: Image((None, 28, 1), encoding="raw"), "needs a fully known shape"),
        (lambda: Image((28, 28, 1), encoding="webp"), "encoding must be one of"),
        (lambda: Scalar("str"), "Scalar dtype must be"),
    ],
)
def test_bad_feature_definitions(make: Any, message: str) -> None:
    with pytest.raises(FeatureError, match=message):
        make()


@pytest.mark.parametrize(
    "feature",
    [
        Image((28, 28, 1)),
        Image((None, None, 3)),
        Image((32, 32, 3), encoding="png"),
        NAMES,
        ClassLabel(num_classes=10),
        Scalar("float16"),
        FeaturesDict({"a": Scalar("int8"), "b": {"c": NAMES}}),
    ],
)
def test_json_roundtrip(feature: Any) -> None:
    rebuilt = from_json(feature.to_json())
    assert rebuilt == feature and rebuilt.to_json() == feature.to_json()


def test_unknown_feature_type_lists_the_known_ones() -> None:
    with pytest.raises(FeatureError, match="unknown feature type 'Video'.*known types: ClassLabel"):
        from_json({"type": "Video"}, path="clip")


def test_default_image_encoding() -> None:
    assert Image((28, 28, 1)).encoding == "raw"
    assert Image((32, 32, 3)).encoding == "raw"
    assert Image((256, 256, 3)).encoding == "png"
    assert Image((None, None, 3)).encoding == "png"
