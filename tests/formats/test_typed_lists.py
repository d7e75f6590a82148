"""A list value taken by a Sequence of numbers or booleans (`typed_value`) in one NumPy
array: the same values, and the same refusals, as taking each element one by one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from catalog.errors import FeatureError
from catalog.features import Scalar, Sequence
from catalog.formats.tables.typed_values import typed_value


def _one_by_one(element: Scalar, value: list[Any]) -> list[Any]:
    return [typed_value(element, item) for item in value]


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("int32", [1, -2, 2**31 - 1]),
        ("uint8", [0, 255]),
        ("int64", [2**63 - 1, -(2**63)]),
        ("uint64", [2**64 - 1, 0]),
        ("float32", [0.1, 2, -3.0e38]),
        ("float64", [1, 0.5, float("nan")]),
        ("bool", [True, False]),
        ("int16", []),
    ],
)
def test_a_list_in_one_array_equals_its_elements_taken_one_by_one(
    dtype: str, value: list[Any]
) -> None:
    feature = Sequence(Scalar(dtype))
    got = typed_value(feature, value)
    assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype)
    assert feature.encode(got) == feature.encode(_one_by_one(Scalar(dtype), value))


@pytest.mark.parametrize(
    ("dtype", "value", "message"),
    [
        ("int8", [1, 300], "300 does not fit int8"),
        ("int32", [1, True], "expected a number .*got bool"),
        ("int32", [1, 1.5], r"expected an integer \(int32\), got 1.5"),
        ("uint64", [2**64], "does not fit uint64"),
        ("int64", [-1, 2**63], "does not fit int64"),
        ("bool", [True, 1], "expected a boolean, got int"),
        ("float64", [1.0, "2"], "expected a number"),
    ],
)
def test_a_list_that_does_not_fit_is_refused_as_one_by_one(
    dtype: str, value: list[Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        typed_value(Sequence(Scalar(dtype)), value)


def test_a_float_past_its_dtype_is_left_to_the_element_s_own_check() -> None:
    """float32 holds no -3.5e38: not taken as -inf in the array; the element's encoding says
    so, as for a list taken one by one."""
    feature = Sequence(Scalar("float32"))
    got = typed_value(feature, [0.1, -3.5e38])
    assert not isinstance(got, np.ndarray)
    with pytest.raises(FeatureError, match="does not fit float32"):
        feature.encode(got)
