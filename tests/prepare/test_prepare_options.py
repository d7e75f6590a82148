"""PrepareOptions: one frozen set of prepare settings that refuses bad values when made, and
`DatasetBuilder.prepare`, which takes it and says what it did."""

from __future__ import annotations

import dataclasses

import pytest

from catalog.prepare.options import DEFAULT_SHARD_BYTES, PrepareOptions


def test_defaults_are_a_plain_prepare() -> None:
    options = PrepareOptions()
    assert (options.overwrite, options.max_examples_per_split, options.num_proc) == (
        False,
        None,
        1,
    )
    assert (options.beam_pipeline_options, options.shard_bytes) == (None, None)
    assert DEFAULT_SHARD_BYTES == 1 << 30  # what None comes to without an interrupted prepare
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.num_proc = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_examples_per_split", 0, "max_examples_per_split must be >= 1, got 0"),
        ("max_examples_per_split", 2.5, "max_examples_per_split must be >= 1, got 2.5"),
        ("num_proc", 0, "num_proc must be >= 1, got 0"),
        ("num_proc", True, "num_proc must be >= 1, got True"),
        ("shard_bytes", -1, "shard_bytes must be >= 1, got -1"),
        ("shard_bytes", "1GB", "shard_bytes must be >= 1, got '1GB'"),
    ],
)
def test_bad_values_are_refused_when_made(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PrepareOptions(**{field: value})  # type: ignore[arg-type]


def test_beam_options_must_be_text() -> None:
    with pytest.raises(TypeError, match="beam_pipeline_options must be a string"):
        PrepareOptions(beam_pipeline_options={"runner": "DirectRunner"})  # type: ignore[arg-type]
