"""Parquet list columns (Hugging Face's ``Sequence`` of numbers, booleans or strings: token
ids, tags, scores) prepared as `Sequence` features, every row as pyarrow itself reads it; a
null list needs a fill (``[]``); a list of anything else is named as not supported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.errors import SourceFormatError, SpecError
from catalog.features import Scalar, Sequence, Text

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def test_list_columns_prepare_as_sequences_as_pyarrow_reads_them(tmp_path: Path) -> None:
    n = 2500  # several of the reader's batches
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 6, n)
    table = pa.table(
        {
            "id": np.arange(n),
            "tokens": [[f"w{i}_{k}" for k in range(m)] for i, m in enumerate(lengths)],
            "ids": pa.array([list(range(i, i + m)) for i, m in enumerate(lengths)],
                            pa.list_(pa.int32())),
            "scores": pa.array([[float(k) / 3 for k in range(m)] for m in lengths],
                               pa.large_list(pa.float64())),
            "flags": [[bool(k % 2) for k in range(m)] for m in lengths],
        }
    )  # fmt: skip
    path = tmp_path / "hub.parquet"
    pq.write_table(table, path, row_group_size=1000)
    b = catalog.prepare_files(path, "hub", data_dir=tmp_path / "d")
    features = b.info.features
    assert features["tokens"] == Sequence(Text())
    assert features["ids"] == Sequence(Scalar("int32"))
    assert features["scores"] == Sequence(Scalar("float64"))
    assert features["flags"] == Sequence(Scalar("bool"))
    ds = b.as_data_source("train")
    want = pq.read_table(path).to_pylist()
    assert len(ds) == n
    for i, example in enumerate(ds):
        assert {k: _plain(v) for k, v in example.items()} == want[i], i
    assert ds[int(np.argmax(lengths == 0))]["ids"].shape == (0,)


def test_a_null_list_needs_a_fill_and_nested_lists_are_named(tmp_path: Path) -> None:
    path = tmp_path / "gaps.parquet"
    pq.write_table(pa.table({"tags": [["a"], None, ["b", "c"]]}), path)
    with pytest.raises(
        SourceFormatError, match=r"row 1: column 'tags' is null.*--fill tags='\[\]'"
    ):
        catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d")
    b = catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d", fill={"tags": "[]"})
    assert [e["tags"] for e in b.as_data_source("train")] == [["a"], [], ["b", "c"]]
    holed = tmp_path / "holed.parquet"
    pq.write_table(pa.table({"tags": [["a", None]]}), holed)
    with pytest.raises(SourceFormatError, match=r"row 0: column 'tags'.*null \(element 1\)"):
        catalog.prepare_files(holed, "holed", data_dir=tmp_path / "d")
    nested = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"spans": [[[1, 2]], [[3]]]}), nested)
    with pytest.raises(SpecError, match=r"column 'spans' is of Parquet type list<.*not supported"):
        catalog.prepare_files(nested, "nested", data_dir=tmp_path / "d")
