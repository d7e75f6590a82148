"""Features: value -> decoded value, value -> error message, JSON, repr, and the decode hook.

Most tests are tables: one row per case, read like the feature list.
"""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog import (
    Audio,
    ClassLabel,
    FeatureError,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.features import FEATURE_TYPES, BBox, Feature, from_json
from catalog.features.codec import RecordCodec

IMG = np.arange(28 * 28, dtype=np.uint8).reshape(28, 28, 1)
RGB = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
GRAY = np.full((6, 4, 3), 128, np.uint8)  # uniform: JPEG stores it exactly
NAMES = ClassLabel(names=["cat", "dog", "bird"])
BOXES = Sequence({"bbox": Tensor((4,), "float32"), "label": NAMES})


def image_file(array: np.ndarray[Any, Any], fmt: str, mode: str | None = None) -> bytes:
    pixels = array[:, :, 0] if array.shape[2] == 1 else array
    img = PILImage.fromarray(pixels)
    out = io.BytesIO()
    (img.convert(mode) if mode else img).save(out, format=fmt)
    return out.getvalue()


def roundtrip(feature: Feature, value: Any) -> Any:
    buf = bytearray(feature.encode(value))
    if feature.fixed_size is not None:
        assert len(buf) == feature.fixed_size
    return feature.decode(buf, 0, len(buf))


def assert_same(got: Any, expected: Any) -> None:
    """Equal values of the same types, arrays of the same dtype and shape, recursively."""
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
        np.testing.assert_array_equal(got, expected)
    elif isinstance(expected, dict):
        assert sorted(got) == sorted(expected)
        for key in expected:
            assert_same(got[key], expected[key])
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)
    else:
        assert got == expected


def i64(*values: int) -> np.ndarray[Any, Any]:
    return np.array(values, dtype=np.int64)


def f32(values: Any) -> np.ndarray[Any, Any]:
    return np.array(values, dtype=np.float32)


# -- value -> decoded value ------------------------------------------------------------------
ROUNDTRIPS = [
    # Image
    ("image raw", Image((28, 28, 1)), IMG, IMG),
    ("image grayscale (h, w)", Image((28, 28, 1)), IMG[:, :, 0], IMG),
    ("image png", Image((28, 28, 1), encoding="png"), IMG, IMG),
    ("image unknown size -> png", Image((None, None, 3)), RGB, RGB),
    ("image raw rgb", Image((5, 7, 3), encoding="raw"), RGB, RGB),
    ("image jpeg", Image((None, None, 3), encoding="jpeg"), GRAY, GRAY),
    ("image png bytes", Image((None, None, 3)), image_file(RGB, "PNG"), RGB),
    ("image jpeg bytes", Image((6, 4, 3), encoding="jpeg"), image_file(GRAY, "JPEG"), GRAY),
    ("image png bytes -> raw", Image((5, 7, 3)), image_file(RGB, "PNG"), RGB),
    ("image gray png -> rgb", Image((None, None, 3)), image_file(RGB, "PNG", "L"),
     np.repeat(np.asarray(PILImage.fromarray(RGB).convert("L"))[:, :, None], 3, axis=2)),
    # ClassLabel
    ("label index", NAMES, 2, 2),
    ("label name", NAMES, "dog", 1),
    ("label numpy int", NAMES, np.int64(1), 1),
    ("label two-byte storage", ClassLabel(num_classes=300), 299, 299),
    ("label unnamed by digit string", ClassLabel(num_classes=10), "7", 7),
    # Scalar
    ("scalar float32", Scalar("float32"), 1.5, np.float32(1.5)),
    ("scalar float32 rounds to its largest", Scalar("float32"), 3.40282356e38,
     np.finfo(np.float32).max),
    ("scalar float32 infinity stays", Scalar("float32"), float("-inf"), np.float32("-inf")),
    ("scalar int64", Scalar("int64"), -(2**40), np.int64(-(2**40))),
    ("scalar uint8", Scalar("uint8"), 255, np.uint8(255)),
    ("scalar bool", Scalar("bool"), True, np.bool_(True)),
    # Tensor
    ("tensor fixed", Tensor((2, 3), "float32"), f32(np.ones((2, 3))), f32(np.ones((2, 3)))),
    ("tensor from lists", Tensor((2,), "int16"), [3, -4], np.array([3, -4], np.int16)),
    ("tensor unknown dims", Tensor((None, 2), "float64"), np.zeros((3, 2)), np.zeros((3, 2))),
    ("tensor all unknown", Tensor((None, None), "uint8"), RGB[:, :, 0], RGB[:, :, 0]),
    ("tensor zero rows", Tensor((None, 2), "uint8"), RGB[:0, :2, 0], RGB[:0, :2, 0]),
    ("tensor 0-d", Tensor((), "int32"), 7, np.array(7, np.int32)),
    ("tensor uint8 -> int64", Tensor((2,), "int64"), np.array([1, 2], np.uint8), i64(1, 2)),
    ("tensor ints -> float", Tensor((2,), "float32"), [1, 2], f32([1, 2])),
    ("tensor float64 inf/nan -> float32", Tensor((2,), "float32"), [float("inf"), 1e-50],
     f32([np.inf, 0])),
    ("tensor int64 in range -> uint8", Tensor((2,), "uint8"), np.array([0, 255]),
     np.array([0, 255], np.uint8)),
    ("tensor bool", Tensor((3,), "bool"), [True, False, True], np.array([True, False, True])),
    # Text
    ("text", Text(), "héllo, wörld ✓", "héllo, wörld ✓"),
    ("text empty", Text(), "", ""),
    # Sequence: fixed-shape elements stack into one array, others give a list
    ("seq labels -> int64 array", Sequence(NAMES), ["dog", 2, 0], i64(1, 2, 0)),
    ("seq labels empty", Sequence(NAMES), [], i64()),
    ("seq labels from array", Sequence(NAMES), np.array([2, 1]), i64(2, 1)),
    ("seq scalars fixed length", Sequence(Scalar("float32"), length=3), [1, 2, 3], f32([1, 2, 3])),
    ("seq scalars from array", Sequence(Scalar("float32")), f32([5, 6]), f32([5, 6])),
    ("seq tensors", Sequence(Tensor((2,), "float32")), [[1, 2], [3, 4]], f32([[1, 2], [3, 4]])),
    ("seq tensors empty", Sequence(Tensor((2,), "float32")), [], np.zeros((0, 2), np.float32)),
    ("seq ragged tensors -> list", Sequence(Tensor((None,), "int8")), [[1], [2, 3]],
     [np.array([1], np.int8), np.array([2, 3], np.int8)]),
    ("seq text -> list", Sequence(Text()), ["a", "", "ü"], ["a", "", "ü"]),
    ("seq raw images stack", Sequence(Image((5, 7, 3))), [RGB, RGB], np.stack([RGB, RGB])),
    ("seq png images stack", Sequence(Image((5, 7, 3), encoding="png")), [RGB], RGB[None]),
    ("seq images of any size -> list", Sequence(Image((None, None, 3))), [RGB, GRAY], [RGB, GRAY]),
    ("seq of fixed seqs", Sequence(Sequence(Scalar("uint8"), length=2)), [[1, 2], [3, 4]],
     np.array([[1, 2], [3, 4]], np.uint8)),
    ("seq of dicts -> dict of arrays", BOXES,
     [{"bbox": [0, 0, 1, 1], "label": "dog"}, {"bbox": np.ones(4, np.float32), "label": 2}],
     {"bbox": f32([[0, 0, 1, 1], [1, 1, 1, 1]]), "label": i64(1, 2)}),
    ("seq of dicts from dict of lists", BOXES, {"bbox": [[0, 0, 1, 1]], "label": [0]},
     {"bbox": f32([[0, 0, 1, 1]]), "label": i64(0)}),
    ("seq of dicts empty", BOXES, [], {"bbox": np.zeros((0, 4), np.float32), "label": i64()}),
    ("bbox", BBox(), (0.25, 0.5, 0.75, 1.0), f32([0.25, 0.5, 0.75, 1.0])),
    ("seq of bboxes stack", Sequence(BBox()), [[0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5]],
     f32([[0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5]])),
    # FeaturesDict (nested)
    ("nested dicts", FeaturesDict({"a": Text(), "b": {"c": NAMES, "d": Scalar("int8")}}),
     {"a": "x", "b": {"c": "bird", "d": -3}}, {"a": "x", "b": {"c": 2, "d": np.int8(-3)}}),
]  # fmt: skip


@pytest.mark.parametrize(("feature", "value", "expected"), [r[1:] for r in ROUNDTRIPS],
                         ids=[r[0] for r in ROUNDTRIPS])  # fmt: skip
def test_value_roundtrips(feature: Feature, value: Any, expected: Any) -> None:
    assert_same(roundtrip(feature, value), expected)


# -- value -> error message --------------------------------------------------------------------
IMAGE_28 = "Image(shape=(28, 28, 1), dtype='uint8', encoding='raw')"
IMAGE_JPEG = "Image(shape=(None, None, 3), dtype='uint8', encoding='jpeg')"
NAMES_REPR = "ClassLabel(names=['cat', 'dog', 'bird'])"
ERRORS = [
    (Image((28, 28, 1)), np.zeros((28, 27, 1), np.uint8),
     f"{IMAGE_28}: expected shape (28, 28, 1), got (28, 27, 1)"),
    (Image((28, 28, 1)), np.zeros((28, 28, 1), np.float32),
     f"{IMAGE_28}: expected dtype uint8, got float32"),
    (Image((28, 28, 1)), [[0]],
     f"{IMAGE_28}: expected a NumPy array, image file bytes or a path, got list"),
    (Image((None, None, 3)), np.zeros((4, 4, 1), np.uint8),
     "expected shape (None, None, 3), got (4, 4, 1)"),
    (Image((None, None, 3), encoding="jpeg"), image_file(RGB, "GIF"),
     f"{IMAGE_JPEG}: expected a PNG or JPEG file, got a GIF image; give the decoded array to "
     "encode it"),
    (Image((None, None, 1), encoding="png"), image_file(RGB, "PNG"),
     "expected 1 channel(s) (mode L), got a PNG image in mode RGB; convert it, or give the "
     "decoded array"),
    (Image((6, 6, 3), encoding="png"), image_file(RGB, "PNG"),
     "expected shape (6, 6, 3), got a PNG image of 5x7 pixels"),
    (Image((None, None, 3)), b"<html>not an image</html>",
     "the 25 bytes given are not an image file Pillow can read"),
    (Image((None, None, 3)), "/nonexistent/cat.png",
     "cannot read image file '/nonexistent/cat.png': No such file or directory"),
    (NAMES, 3, f"{NAMES_REPR}: label 3 is out of range: expected 0..2"),
    (NAMES, -1, f"{NAMES_REPR}: label -1 is out of range: expected 0..2"),
    (NAMES, "fish", f"{NAMES_REPR}: unknown class name 'fish'; known: cat, dog, bird"),
    (NAMES, 1.0, f"{NAMES_REPR}: expected an int index or a class name, got float"),
    (NAMES, True, f"{NAMES_REPR}: expected an int index or a class name, got bool"),
    (Scalar("uint8"), 256, "Scalar('uint8'): 256 does not fit uint8 (0..255)"),
    (Scalar("int32"), 1.5, "Scalar('int32'): expected a int32 value, got 1.5"),
    (Scalar("float32"), "x", "Scalar('float32'): expected a float32 value, got 'x'"),
    (Scalar("float32"), 1e300,
     "Scalar('float32'): 1e+300 does not fit float32 (largest 3.4028235e+38)"),
    (Scalar("float16"), -70000, "-70000.0 does not fit float16 (largest 65504)"),
    (Scalar("float64"), 10**400, "does not fit float64"),
    (Tensor((2,), "float32"), [1.0, -1e39], "-1e+39 does not fit float32"),
    (Tensor((1,), "float16"), np.array([2**20], np.int64),
     "1048576 does not fit float16 (largest 65504)"),
    (Tensor((2,), "float32"), np.zeros(3, np.float32),
     "Tensor(shape=(2,), dtype='float32'): expected shape (2,), got (3,)"),
    (Tensor((None, 2), "float32"), np.zeros((2, 2, 1), np.float32),
     "expected shape (None, 2), got (2, 2, 1)"),
    (Tensor((2,), "int32"), np.array([1.5, 2.0]), "expected int32 values, got dtype float64"),
    (Tensor((2,), "uint8"), [0, 300], "values 0..300 do not fit uint8 (0..255)"),
    (Tensor((2,), "bool"), [0, 1], "expected bool values, got dtype int64"),
    (Tensor((None, None), "int32"), [[1], [2, 3]],
     "expected a rectangular array, got ragged nested lists"),
    (Tensor((2,), "float32"), "1 2", "expected a NumPy array or a list, got str"),
    (Text(), b"bytes", "Text(): expected a str, got bytes (decode the bytes first)"),
    (Text(), 3, "Text(): expected a str, got int"),
    (Text(), "\ud800", "Text(): not encodable as UTF-8: surrogates not allowed at 0"),
    (Sequence(NAMES), "dog", f"Sequence({NAMES_REPR}): expected a list of values, got str"),
    (Sequence(NAMES, length=2), [1],
     f"Sequence({NAMES_REPR}, length=2): expected 2 elements, got 1"),
    (BOXES, [{"bbox": [0, 0, 1, 1], "label": 0, "score": 1.0}],
     "elements have keys that are not features: ['score']"),
    (BOXES, {"bbox": [[0, 0, 1, 1]], "label": [0, 1]},
     "the features of each element need as many values; got bbox 1, label 2"),
    (BBox(), [0.5, 0.0, 1.5, 1.0], "box [0.5, 0.0, 1.5, 1.0] is not normalised: each of"),
    (BBox(), [0.5, 0.0, 0.25, 1.0], "box [0.5, 0.0, 0.25, 1.0] is not ordered: expected ymin"),
    (BBox(), [0.0, 0.5, 1.0], "expected shape (4,), got (3,)"),
    (BBox(), [float("nan"), 0, 1, 1], "is not normalised"),
]  # fmt: skip


@pytest.mark.parametrize(("feature", "value", "message"), ERRORS)
def test_bad_values_are_refused(feature: Feature, value: Any, message: str) -> None:
    with pytest.raises(FeatureError) as info:
        feature.encode(value)
    assert message in str(info.value)
    if message.startswith(repr(feature)):
        assert str(info.value) == message


EXAMPLE = FeaturesDict(
    {
        "image": Image((2, 2, 1)),
        "meta": {"label": NAMES},
        "objects": BOXES,
        "tags": Sequence(Text()),
        "grid": Sequence(Sequence(Scalar("uint8"), length=2)),
    }
)
GOOD = {
    "image": np.zeros((2, 2, 1), np.uint8),
    "meta": {"label": "bird"},
    "objects": [{"bbox": [0, 0, 1, 1], "label": 0}],
    "tags": ["a"],
    "grid": [[1, 2]],
}
PATH_ERRORS = [
    ({"meta": {"label": 7}}, f"feature 'meta/label': {NAMES_REPR}: label 7 is out of range"),
    ({"objects": [{"bbox": [0, 0, 1, 1], "label": 0}, {"bbox": [0, 0, 1, 1], "label": 9}]},
     f"feature 'objects/label[1]': {NAMES_REPR}: label 9 is out of range: expected 0..2"),
    ({"objects": [{"bbox": [0, 0, 1], "label": 0}]},
     "feature 'objects/bbox[0]': Tensor(shape=(4,), dtype='float32'): expected shape (4,), "
     "got (3,)"),
    ({"objects": [{"bbox": [0, 0, 1, 1]}]}, "feature 'objects': Sequence({'bbox'"),
    ({"objects": ["x"]}, "feature 'objects[0]': Sequence({'bbox'"),
    ({"tags": ["a", "b", 3]}, "feature 'tags[2]': Text(): expected a str, got int"),
    ({"grid": [[1, 2], [3, 256]]}, "feature 'grid[1][1]': Scalar('uint8'): 256 does not fit uint8"),
    ({"image": None}, "feature 'image': Image(shape=(2, 2, 1)"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), PATH_ERRORS)
def test_errors_name_the_feature_path(change: dict[str, Any], message: str) -> None:
    with pytest.raises(FeatureError) as info:
        EXAMPLE.encode_example({**GOOD, **change})
    assert str(info.value).startswith(message), str(info.value)
    assert info.value.feature_path == message.split("'")[1]


def test_errors_name_the_example_too() -> None:
    error = FeatureError("label 12 is out of range", feature_path="objects/label[3]",
                         example="split 'train', example 17 (key '17')")  # fmt: skip
    assert str(error) == (
        "split 'train', example 17 (key '17'): feature 'objects/label[3]': label 12 is out of range"
    )


def test_features_dict_missing_and_extra_keys() -> None:
    with pytest.raises(FeatureError, match="feature 'image': missing from the example"):
        EXAMPLE.encode_example({k: v for k, v in GOOD.items() if k != "image"})
    with pytest.raises(FeatureError, match="keys that are not features: \\['extra'\\]"):
        EXAMPLE.encode_example({**GOOD, "extra": 1})


def test_a_record_cut_short_or_too_long_is_a_source_format_error() -> None:
    """Bytes that do not match the features (another tool, a damaged file) are refused with
    a SourceFormatError, never decoded into wrong values or an IndexError."""
    record = bytearray(EXAMPLE.encode_example(GOOD))
    assert EXAMPLE.decode_example(bytearray(record))  # the whole record decodes
    for bad in (record[:-1], record[: len(record) // 2], record[:3], record + b"\x00"):
        with pytest.raises(catalog.SourceFormatError, match="does not match the features"):
            EXAMPLE.decode_example(bytearray(bad))


def test_nested_example_roundtrip_and_layout() -> None:
    assert EXAMPLE.fixed_size is None
    decoded = EXAMPLE.decode_example(bytearray(EXAMPLE.encode_example(GOOD)))
    assert_same(
        decoded,
        {
            "image": GOOD["image"],
            "meta": {"label": 2},
            "objects": {"bbox": f32([[0, 0, 1, 1]]), "label": i64(0)},
            "tags": ["a"],
            "grid": np.array([[1, 2]], np.uint8),
        },
    )


def test_fixed_size_features_stay_fixed() -> None:
    assert Tensor((2, 3), "float32").fixed_size == 24
    assert Tensor((None, 3), "float32").fixed_size is None
    assert Sequence(Scalar("int16"), length=4).fixed_size == 8
    assert Sequence(Scalar("int16")).fixed_size is None
    assert Sequence({"a": NAMES, "b": Scalar("float32")}, length=2).fixed_size == 10
    assert FeaturesDict({"a": Image((2, 2, 3)), "b": NAMES}).fixed_size == 13


def test_decoded_arrays_are_writable() -> None:
    for feature, value in [
        (Image((28, 28, 1)), IMG),
        (Image((28, 28, 1), encoding="png"), IMG),
        (Tensor((None, 2), "float32"), np.ones((3, 2), np.float32)),
        (Sequence(NAMES), [0, 1]),
        (Sequence(Scalar("float64")), [1.0]),
    ]:
        assert roundtrip(feature, value).flags.writeable, feature


def test_a_sequence_array_encodes_like_its_list() -> None:
    feature = Sequence(Tensor((2,), "float32"))
    array = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert feature.encode(array) == feature.encode(array.tolist())
    fixed = Sequence(Scalar("int32"), length=3)
    assert fixed.encode(np.array([1, 2, 3], np.int32)) == fixed.encode([1, 2, 3])


# -- image files: original bytes kept --------------------------------------------------------
@pytest.mark.parametrize(("encoding", "fmt"), [("png", "PNG"), ("jpeg", "JPEG")])
def test_image_files_keep_their_original_bytes(tmp_path: Path, encoding: str, fmt: str) -> None:
    data = image_file(GRAY, fmt)
    path = tmp_path / f"photo.{encoding}"
    path.write_bytes(data)
    feature = Image((None, None, 3), encoding=encoding)
    assert feature.encode(data) == data
    assert feature.encode(path) == data
    assert feature.encode(str(path)) == data
    assert_same(roundtrip(feature, path), GRAY)


@pytest.mark.parametrize(("fmt", "mode"), [("PNG", "P"), ("JPEG", "L"), ("JPEG", "CMYK")])
def test_image_file_in_a_wider_mode_is_kept_and_converted_when_read(fmt: str, mode: str) -> None:
    data = image_file(RGB, fmt, mode)
    feature = Image((5, 7, 3), encoding=fmt.lower())
    assert feature.encode(data) == data  # never re-encoded (lossy for JPEG)
    expected = np.asarray(PILImage.open(io.BytesIO(data)).convert("RGB"))
    assert_same(roundtrip(feature, data), expected)


def test_jpeg_quality_is_95() -> None:
    noise = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    stored = Image((32, 32, 3), encoding="jpeg").encode(noise)
    out = io.BytesIO()
    PILImage.fromarray(noise).save(out, format="JPEG", quality=95)
    assert stored == out.getvalue()


# -- the decode hook data sources use --------------------------------------------------------
PHOTO = image_file(GRAY, "JPEG")
SKIP_FEATURES = FeaturesDict(
    {
        "photo": Image((None, None, 3), encoding="jpeg"),
        "label": NAMES,
        "objects": BOXES,
        "album": Sequence(Image((None, None, 3), encoding="jpeg")),
        "meta": {"caption": Text()},
    }
)
SKIP_EXAMPLE = {
    "photo": PHOTO,
    "label": 1,
    "objects": [{"bbox": [0, 0, 1, 1], "label": 2}],
    "album": [PHOTO, PHOTO],
    "meta": {"caption": "hi"},
}
SKIPS = [
    ({"photo"}, {"photo": PHOTO}),
    ({"label"}, {"label": b"\x01"}),
    ({"objects/label"}, {"objects": {"bbox": f32([[0, 0, 1, 1]]), "label": [b"\x02"]}}),
    ({"album"}, {"album": [PHOTO, PHOTO]}),
    ({"meta/caption"}, {"meta": {"caption": b"hi"}}),
    ({"meta"}, {"meta": b"\x02\x00\x00\x00hi"}),
    ({"photo", "album", "label"}, {"photo": PHOTO, "album": [PHOTO, PHOTO], "label": b"\x01"}),
]  # fmt: skip


@pytest.mark.parametrize(("skip", "changed"), SKIPS)
def test_decoder_skips_features(skip: set[str], changed: dict[str, Any]) -> None:
    record = bytearray(SKIP_FEATURES.encode(SKIP_EXAMPLE))
    full = SKIP_FEATURES.decode(record, 0, len(record))
    got = SKIP_FEATURES.decoder(skip=skip)(record, 0, len(record))
    assert_same(got, {**full, **changed})


def test_decoder_with_custom_functions() -> None:
    record = bytearray(SKIP_FEATURES.encode(SKIP_EXAMPLE))
    decode = SKIP_FEATURES.decoder(
        skip={"photo"}, decoders={"album": len, "meta/caption": bytes.upper}
    )
    got = decode(record, 0, len(record))
    assert got["photo"] == PHOTO and got["album"] == [len(PHOTO)] * 2
    assert got["meta"] == {"caption": b"HI"} and got["label"] == 1


def test_decoder_without_skips_is_decode_itself() -> None:
    assert SKIP_FEATURES.decoder() == SKIP_FEATURES.decode
    assert SKIP_FEATURES.decoder(skip=()) == SKIP_FEATURES.decode


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"skip": {"image"}}, "no feature 'image' to skip or decode otherwise; features: photo,"),
        ({"skip": {"objects/score"}}, "no feature 'objects/score'"),
        ({"skip": {"photo"}, "decoders": {"photo": bytes}}, "'photo' is both skipped and given"),
    ],
)
def test_decoder_refuses_unknown_paths(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(FeatureError, match=message):
        SKIP_FEATURES.decoder(**kwargs)


def test_paths_and_leaves() -> None:
    assert [p for p, _ in SKIP_FEATURES.paths()] == [
        "photo", "label", "objects", "objects/bbox", "objects/label", "album", "meta",
        "meta/caption",
    ]  # fmt: skip
    assert [p for p, _ in SKIP_FEATURES.leaves()] == [
        "photo", "label", "objects/bbox", "objects/label", "album", "meta/caption",
    ]  # fmt: skip


# -- ClassLabel ------------------------------------------------------------------------------
def test_class_label_names_and_conversions() -> None:
    assert NAMES.num_classes == 3 and NAMES.names == ["cat", "dog", "bird"]
    assert NAMES.str2int("bird") == 2 and NAMES.int2str(0) == "cat"
    unnamed = ClassLabel(num_classes=10)
    assert unnamed.names[:3] == ["0", "1", "2"] and unnamed.str2int("7") == 7
    assert NAMES.has_names and not unnamed.has_names and not ClassLabel().has_names
    with pytest.raises(FeatureError, match="out of range"):
        NAMES.int2str(3)


def test_class_label_from_a_names_file(tmp_path: Path) -> None:
    path = tmp_path / "labels.txt"
    path.write_text("airplane\n\n  automobile \r\nbird\n\n")
    label = ClassLabel(names_file=path)
    assert label.names == ["airplane", "automobile", "bird"]
    assert label.to_json() == {"type": "ClassLabel", "names": ["airplane", "automobile", "bird"]}
    assert ClassLabel(names_file=str(path), num_classes=3) == label


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"names": ["a", "b"], "num_classes": 3}, "num_classes=3 but 2 names"),
        ({"names": ["a", "a"]}, "repeated: \\['a'\\]"),
        ({"names": "ab"}, "names must be a list of strings"),
        ({"num_classes": -1}, "num_classes must be an int >= 0, got -1"),
        ({"num_classes": True}, "num_classes must be an int >= 0, got True"),
        ({"names": ["a"], "names_file": "x.txt"}, "both names and names_file"),
        ({"names_file": "/nonexistent/names.txt"}, "cannot read it \\(No such file"),
    ],
)
def test_class_label_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(FeatureError, match=message):
        ClassLabel(**kwargs)


def test_class_label_with_zero_classes_as_tfds() -> None:
    """TFDS allows ``ClassLabel(num_classes=0)`` and ``ClassLabel(names=[])``; -1 (no label)
    is the one value they encode, as TFDS's ``encode_example(-1) == -1``."""
    for label in (ClassLabel(num_classes=0), ClassLabel(names=[])):
        assert (label.num_classes, label.names, label.lowest) == (0, [], -1)
        stored = label.encode(-1)
        assert label.decode(bytearray(stored), 0, len(stored)) == -1
        assert (label.str2int("-1"), label.int2str(-1)) == (-1, "-1")
        with pytest.raises(FeatureError, match="label 0 is out of range: the feature has no"):
            label.encode(0)
        features = FeaturesDict({"label": label})
        assert features.decode(bytearray(features.encode({"label": -1})), 0, 1) == {"label": -1}
    late = ClassLabel()
    late.names = []
    assert late.lowest == -1 and ClassLabel(names=["a"]).lowest == 0
    assert from_json(ClassLabel(names=[]).to_json()) == ClassLabel(names=[])


def test_class_label_names_set_after_construction_as_tfds() -> None:
    """TFDS: ``label = ClassLabel(); label.names = [...]``; a conflicting set is refused."""
    label = ClassLabel()
    assert (label.num_classes, label.names, repr(label)) == (None, [], "ClassLabel()")
    features = FeaturesDict({"label": label})  # the names may come after the dict is made
    with pytest.raises(FeatureError, match="no classes yet: give names"):
        features.encode({"label": 0})
    label.names = ["cat", "dog"]
    assert features.decode(bytearray(features.encode({"label": "dog"})), 0, 1) == {"label": 1}
    label.names = ["cat", "dog"]  # the same names again: fine
    with pytest.raises(FeatureError, match="names are already cat, dog; they cannot be changed"):
        label.names = ["dog", "cat"]
    counted = ClassLabel(num_classes=3)
    with pytest.raises(FeatureError, match="num_classes=3 but 2 names"):
        counted.names = ["a", "b"]
    counted.names = ["a", "b", "c"]
    assert counted.str2int("c") == 2
    assert from_json(ClassLabel().to_json()) == ClassLabel()


def test_class_label_empty_names_file(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(FeatureError, match="empty.txt' has no names"):
        ClassLabel(names_file=tmp_path / "empty.txt")


# -- definitions, JSON, repr -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Image((28, 28, 2)), "1, 3 or 4 channels"),
        (lambda: Image((None, 28, 1), encoding="raw"), "needs a fully known shape"),
        (lambda: Image((28, 28, 1), encoding="webp"), "encoding must be one of"),
        (lambda: Image((28, 28, 4), encoding="jpeg"), "no alpha channel"),
        (lambda: Image((28, 28, 1), dtype="float32"), "Image dtype must be uint8"),
        (lambda: Scalar("str"), "Scalar dtype must be"),
        (lambda: Scalar("nonsense"), "Scalar dtype must be"),
        (lambda: Tensor((0, 3), "float32"), "positive ints or None"),
        (lambda: Tensor(3, "float32"), "shape must be a list"),
        (lambda: Tensor((3,), "U8"), "Tensor dtype must be"),
        (lambda: Sequence(Text(), length=0), "length must be a positive int or None"),
        (lambda: Sequence("Text"), "Sequence needs a Feature"),
        (lambda: FeaturesDict({}), "non-empty dict"),
        (lambda: FeaturesDict({"a//b": Text()}), "'/' only between words"),
        (lambda: FeaturesDict({"a[0]": Text()}), "without '\\['"),
        (lambda: FeaturesDict({"a": {"type": "Text"}}), "is a JSON spec"),
    ],
)
def test_bad_feature_definitions(make: Any, message: str) -> None:
    with pytest.raises(FeatureError, match=message):
        make()


ALL_KINDS = [
    BBox(),
    Image((28, 28, 1)),
    Image((None, None, 3)),
    Image((32, 32, 3), encoding="png"),
    Image((None, None, 1), encoding="jpeg"),
    NAMES,
    ClassLabel(num_classes=10),
    Scalar("float16"),
    Tensor((None, 4), "float32"),
    Tensor((), "bool"),
    Text(),
    Sequence(NAMES),
    Sequence(Text(), length=3),
    BOXES,
    Sequence(Sequence(Tensor((2,), "int8"))),
    FeaturesDict({"a": Scalar("int8"), "b": {"c": NAMES}}),
    Audio(16000),
    Audio(44100, "float32", shape=(None, 2)),
    ClassLabel(names=["neg", "pos"], allow_unlabeled=True),
]


@pytest.mark.parametrize("feature", ALL_KINDS, ids=repr)
def test_json_roundtrip(feature: Feature) -> None:
    data = json.loads(json.dumps(feature.to_json()))
    rebuilt = from_json(data)
    assert rebuilt == feature and rebuilt.to_json() == feature.to_json()
    assert repr(rebuilt) == repr(feature)


def test_every_feature_type_is_covered_and_documented() -> None:
    assert {type(f) for f in ALL_KINDS} == set(FEATURE_TYPES.values())
    for cls in FEATURE_TYPES.values():
        assert cls.__doc__ and len(cls.__doc__.strip()) > 40, cls


@pytest.mark.parametrize("name", catalog.list_datasets())
def test_every_registered_builders_features_roundtrip(name: str) -> None:
    features = catalog.builder(name).info.features
    rebuilt = from_json(json.loads(json.dumps(features.to_json())))
    assert rebuilt == features and repr(rebuilt) == repr(features)


REPRS = [
    (Image((28, 28, 1)), "Image(shape=(28, 28, 1), dtype='uint8', encoding='raw')"),
    (NAMES, "ClassLabel(names=['cat', 'dog', 'bird'])"),
    (ClassLabel(num_classes=10), "ClassLabel(num_classes=10)"),
    (Scalar("float32"), "Scalar('float32')"),
    (Tensor((None, 4), "float32"), "Tensor(shape=(None, 4), dtype='float32')"),
    (Tensor((3,), "int8"), "Tensor(shape=(3,), dtype='int8')"),
    (Text(), "Text()"),
    (Sequence(Text(), length=2), "Sequence(Text(), length=2)"),
    (Sequence({"t": Text()}), "Sequence({'t': Text()})"),
    (FeaturesDict({"t": Text(), "d": {"s": Scalar("int8")}}),
     "FeaturesDict({'t': Text(), 'd': FeaturesDict({'s': Scalar('int8')})})"),
]  # fmt: skip


@pytest.mark.parametrize(("feature", "text"), REPRS)
def test_repr_reads_like_the_spec(feature: Feature, text: str) -> None:
    assert repr(feature) == text
    assert eval(text, dict(vars(catalog))) == feature  # the repr is code that builds it


def test_class_label_repr_abbreviates_many_names() -> None:
    many = ClassLabel(names=[f"c{i}" for i in range(100)])
    assert repr(many) == "ClassLabel(names=['c0', 'c1', 'c2', 'c3', 'c4', ... (100 in all)])"
    assert many.describe() == "100 classes: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, ..., c99"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "Video"}, "unknown feature type 'Video' for feature 'clip'; known types: "
         "Audio, BBox, ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text"),
        ({"type": "ClassLabel", "name": ["a"]},
         "bad ClassLabel spec for feature 'clip': unknown field 'name'; fields: names, "
         "num_classes, names_file"),
        ({"type": "Tensor", "shape": [2]},
         "bad Tensor spec for feature 'clip': missing field 'dtype'"),
        ({"type": "ClassLabel", "num_classes": "ten"}, "bad ClassLabel spec for feature 'clip': "
         "ClassLabel num_classes must be an int >= 0, got 'ten'"),
        ({"type": "Sequence", "feature": {"type": "Nope"}},
         "unknown feature type 'Nope' for feature 'clip[]'"),
        ({"type": "FeaturesDict", "features": {"a": {"type": "Text", "x": 1}}},
         "bad Text spec for feature 'clip/a': unknown field 'x'"),
        (["Image"], "a feature spec must be a mapping with a 'type' key for feature 'clip'"),
    ],
)  # fmt: skip
def test_bad_json_names_the_feature(data: Any, message: str) -> None:
    with pytest.raises(FeatureError) as info:
        from_json(data, path="clip")
    assert str(info.value).startswith(message), str(info.value)


def test_default_image_encoding() -> None:
    assert Image((28, 28, 1)).encoding == "raw"
    assert Image((32, 32, 3)).encoding == "raw"
    assert Image((256, 256, 3)).encoding == "png"
    assert Image((None, None, 3)).encoding == "png"


@pytest.mark.parametrize(
    ("feature", "shape", "dtype"),
    [
        (Image((None, None, 3)), (None, None, 3), "uint8"),
        (NAMES, (), "int64"),
        (Scalar("float32"), (), "float32"),
        (Tensor((None, 4), "int16"), (None, 4), "int16"),
        (Text(), (), "str"),
        (Sequence(NAMES), (None,), "int64"),
        (Sequence(Tensor((4,), "float32"), length=2), (2, 4), "float32"),
        (BOXES, None, ""),
    ],
)
def test_shape_and_dtype_of_decoded_values(
    feature: Feature, shape: tuple[int | None, ...] | None, dtype: str
) -> None:
    assert feature.shape == shape and feature.dtype_name == dtype


def test_records_of_every_feature_type_roundtrip() -> None:
    codec = RecordCodec(EXAMPLE)
    decoded = codec.decode(codec.encode(GOOD))
    assert_same(decoded, EXAMPLE.decode_example(bytearray(EXAMPLE.encode_example(GOOD))))
    assert decoded["objects"]["bbox"].flags.writeable


def test_features_and_skip_decoders_pickle() -> None:
    rebuilt = pickle.loads(pickle.dumps(SKIP_FEATURES))
    assert rebuilt == SKIP_FEATURES
    record = bytearray(SKIP_FEATURES.encode(SKIP_EXAMPLE))
    decode = pickle.loads(pickle.dumps(SKIP_FEATURES.decoder(skip={"photo", "meta/caption"})))
    assert decode(record, 0, len(record))["photo"] == PHOTO


def jpeg_file(mode: str, size: tuple[int, int] = (40, 30), **options: Any) -> bytes:
    out = io.BytesIO()
    pixels = np.random.default_rng(0).integers(0, 256, (size[1], size[0], len(mode)), np.uint8)
    image = PILImage.fromarray(pixels[:, :, 0] if mode == "L" else pixels, mode)
    image.save(out, "JPEG", **options)
    return out.getvalue()


@pytest.mark.parametrize(
    ("feature", "data"),
    [
        (catalog.Image(shape=(30, 40, 3), encoding="jpeg"), jpeg_file("RGB")),
        (catalog.Image(shape=(None, None, 3), encoding="jpeg"), jpeg_file("RGB", keep_rgb=True)),
        (catalog.Image(shape=(None, None, 3), encoding="jpeg"), jpeg_file("L")),  # widens
        (catalog.Image(shape=(None, None, 3), encoding="jpeg"), jpeg_file("CMYK")),  # widens
        (catalog.Image(shape=(None, None, 1), encoding="jpeg"), jpeg_file("L")),
        (catalog.Image(shape=(None, None, 1), encoding="jpeg"), jpeg_file("RGB")),  # refused
        (catalog.Image(shape=(31, 40, 3), encoding="jpeg"), jpeg_file("RGB")),  # refused
        (catalog.Image(shape=(None, None, 3), encoding="png"), jpeg_file("RGB")),  # kept
        (catalog.Image(shape=(None, None, 3), max_side=20), jpeg_file("RGB")),  # shrunk
        (catalog.Image(shape=(30, 40, 3), encoding="raw"), jpeg_file("RGB")),  # decoded
        (catalog.Image(shape=(None, None, 3), encoding="jpeg"), jpeg_file("RGB")[:300]),
        (catalog.Image(shape=(None, None, 3), encoding="jpeg"), b"\xff\xd8\xff\xe0garbage"),
    ],
)
def test_a_jpeg_told_from_its_header_by_libjpeg_is_encoded_as_pillow_would(
    feature: catalog.Image, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JPEG files kept as they are skip Pillow (libjpeg-turbo reads their header): the
    same bytes kept, or the same error, as when Pillow opens every file."""

    def outcome() -> Any:
        try:
            return feature.encode(data)
        except catalog.FeatureError as error:
            return type(error)

    fast = outcome()
    monkeypatch.setattr(catalog.Image, "_jpeg_kept", lambda self, data: False)
    assert fast == outcome()


def test_a_jpeg_kept_as_it_is_is_not_opened_by_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalog.features import pixel_budget

    def refuse(*args: Any) -> None:
        raise AssertionError("Pillow opened the file")

    monkeypatch.setattr(pixel_budget, "open_image", refuse)
    feature = catalog.Image(shape=(None, None, 3), encoding="jpeg")
    for data in (jpeg_file("RGB"), jpeg_file("L"), jpeg_file("CMYK")):
        assert feature.encode(data) == data
    monkeypatch.setenv(pixel_budget.PIXELS_ENV, "1000")  # 40x30: over this budget
    with pytest.raises(catalog.FeatureError, match="more than the 1000 an image may have"):
        feature.encode(jpeg_file("RGB"))


def test_raw_text_keeps_bytes_that_are_not_utf8() -> None:
    """A `RawText` (TFDS's Text keeps any bytes: rockyou.txt's passwords) is stored as it is
    and decodes to those bytes; UTF-8 still decodes to str, and plain bytes stay refused."""
    from catalog.features.text import RawText

    features = FeaturesDict({"t": Text(), "many": Sequence(Text())})
    example = {"t": RawText(b"caf\xe9"), "many": ["ok", RawText(b"\xff\xfe"), RawText(b"fine")]}
    decoded = features.decode_example(bytearray(features.encode_example(example)))
    assert decoded == {"t": b"caf\xe9", "many": ["ok", b"\xff\xfe", "fine"]}
    assert type(decoded["t"]) is bytes
    assert pickle.loads(pickle.dumps(RawText(b"\xe9"))) == RawText(b"\xe9")
    with pytest.raises(catalog.FeatureError, match="expected a str, got bytes"):
        Text().encode(b"caf\xe9")


def test_a_class_label_of_many_names_refuses_only_the_repeated_ones() -> None:
    """Repeated names are found by counting the names once (counting the list once per name
    took 13 s for Open Images' 20k classes: `benchmarks/bench_tfds_info.py`); a repeated one
    is still refused by name."""
    names = [f"class {i}" for i in range(20_000)]
    assert ClassLabel(names=names).num_classes == 20_000
    with pytest.raises(FeatureError, match=r"repeated: \['class 7'\]"):
        ClassLabel(names=[*names[:10], "class 7"])
