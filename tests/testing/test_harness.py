"""The builder test harness's example check accepts what features decode, and nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.features import ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text
from catalog.testing.harness import check_example

FEATURES = FeaturesDict(
    {
        "image": Image((None, None, 3)),
        "label": ClassLabel(num_classes=3),
        "weight": Scalar("float32"),
        "text": Text(),
        "points": Tensor((None, 2), "float32"),
        "tags": Sequence(ClassLabel(num_classes=3)),
        "notes": Sequence(Text()),
        "objects": Sequence({"bbox": Tensor((4,), "float32"), "name": Text()}),
    }
)
EXAMPLE = {
    "image": np.zeros((5, 4, 3), np.uint8),
    "label": 2,
    "weight": 0.5,
    "text": "hello",
    "points": np.ones((3, 2), np.float32),
    "tags": [0, 2],
    "notes": ["a", "bc"],
    "objects": [{"bbox": np.zeros(4, np.float32), "name": "cat"}],
}


def decoded() -> dict:
    return FEATURES.decode_example(bytearray(FEATURES.encode_example(EXAMPLE)))


def test_every_decoded_feature_passes() -> None:
    check_example(FEATURES, decoded(), where="example")


@pytest.mark.parametrize(
    ("key", "bad", "message"),
    [
        ("label", 7, "example/label: 7"),
        ("label", np.int64(1), "example/label"),
        ("weight", 0.5, "example/weight"),
        ("text", b"hello", "example/text"),
        ("image", np.zeros((5, 4, 1), np.uint8), r"shape \(5, 4, 1\)"),
        ("points", np.ones((3, 2), np.float64), "example/points"),
        ("notes", "ab", "example/notes"),
    ],
)
def test_wrong_values_fail(key: str, bad: object, message: str) -> None:
    example = decoded()
    example[key] = bad
    with pytest.raises(AssertionError, match=message):
        check_example(FEATURES, example, where="example")
