"""A missing value of a typed table (JSON Lines, Parquet): its feature's fill, or one error
naming file, line or row, key or column and the --fill to give (one helper for both readers,
`catalog.formats.tables.typed_values.typed_example`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Scalar, Text
from catalog.formats import FORMATS, Source
from catalog.spec.infer.common import complete_options

FEATURES = FeaturesDict({"n": Scalar("int64"), "t": Text()})


def _examples(fmt: str, path: Path, fill: dict[str, str]) -> list[dict[str, object]]:
    options = complete_options(fmt, {"columns": {"n": "n", "t": "t"}, "fill": fill})
    source = Source("train", {"files": (path,)}, options, FEATURES)
    return [example for _, example in FORMATS[fmt].examples(source)]


@pytest.mark.parametrize("fmt", ["json_lines", "parquet"])
def test_a_missing_value_takes_its_fill_or_names_the_flag(tmp_path: Path, fmt: str) -> None:
    if fmt == "json_lines":
        path = tmp_path / "t.jsonl"
        path.write_text('{"n": 1, "t": "a"}\n{"t": "b"}\n{"n": 3, "t": null}\n', "utf-8")
        where, noun, how = f"{path}:2", "key", "is missing (null or absent)"
    else:
        path = tmp_path / "t.parquet"
        table = pa.table({"n": pa.array([1, None, 3]), "t": pa.array(["a", "b", None])})
        pq.write_table(table, path)
        where, noun, how = f"{path}: row 1", "column", "is null"
    want = (
        f"{where}: {noun} 'n' {how}; give options.fill a value for feature 'n' (catalog "
        "prepare FILE: --fill n=VALUE)"
    )
    with pytest.raises(SourceFormatError) as caught:
        _examples(fmt, path, {})
    assert str(caught.value) == want
    filled = _examples(fmt, path, {"n": "-1", "t": "?"})
    assert [(e["n"], e["t"]) for e in filled] == [(1, "a"), (-1, "b"), (3, "?")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"n": "x", "t": "a"}\n', "utf-8")
    if fmt == "parquet":
        bad = tmp_path / "bad.parquet"
        pq.write_table(pa.table({"n": pa.array(["x"]), "t": pa.array(["a"])}), bad)
    with pytest.raises(SourceFormatError, match=f"{noun} 'n': expected a number"):
        _examples(fmt, bad, {})
