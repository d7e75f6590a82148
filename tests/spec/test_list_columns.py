"""List columns prepared as `Sequence` features, each row as the foreign tool reads it.

Parquet lists (Hugging Face's ``Sequence`` of numbers, booleans or strings: token ids, tags,
scores), against pyarrow; a null list needs a fill (``[]``); a list of what no feature holds
(bytes) is named as not supported. JSON Lines keys holding lists (``"tags": ["a", "b"]``, as
``to_json(orient="records", lines=True)`` and Hugging Face's exports write a ``Sequence``),
against pandas; the elements are typed as a key's values are (integers widen to float64); a
list beside other values or a null inside a list are errors naming the line; a missing list
takes ``--fill KEY='[]'``. (Lists of lists and objects: tests/spec/test_nested_columns.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.errors import SourceFormatError, SpecError
from catalog.features import Scalar, Sequence, Text

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")


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
    nested = tmp_path / "nested.parquet"  # lists of lists: tests/spec/test_parquet_structs.py
    pq.write_table(pa.table({"spans": [[b"\x00"]]}), nested)
    with pytest.raises(
        SpecError, match=r"column 'spans' is of Parquet type list<.*not supported yet: its elements"
    ):
        catalog.prepare_files(nested, "nested", data_dir=tmp_path / "d")


def test_list_keys_prepare_as_sequences_as_pandas_reads_them(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "id": range(300),
            "tags": [[f"t{k}" for k in range(i % 4)] for i in range(300)],
            "ids": [list(range(i % 3)) for i in range(300)],
            "scores": [
                [0.5 * k for k in range(i % 3)] + ([1] if i == 7 else []) for i in range(300)
            ],
            "flags": [[bool(k % 2) for k in range(i % 5)] for i in range(300)],
        }
    )
    path = tmp_path / "export.jsonl"
    frame.to_json(path, orient="records", lines=True)
    b = catalog.prepare_files(path, "export", data_dir=tmp_path / "d")
    features = b.info.features
    assert features["tags"] == Sequence(Text())
    assert features["ids"] == Sequence(Scalar("int64"))
    assert features["scores"] == Sequence(Scalar("float64"))  # an integer among floats
    assert features["flags"] == Sequence(Scalar("bool"))
    want = pd.read_json(path, lines=True).to_dict("records")
    ds = b.as_data_source("train")
    assert len(ds) == len(want)
    for i, example in enumerate(ds):
        got = {k: _plain(v) for k, v in example.items()}
        assert got == {k: [float(x) for x in v] if k == "scores" else v for k, v in want[i].items()}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"a": [1]}', '{"a": 2}'],
            r"x.jsonl:2: key 'a' holds an integer where line 1 holds a list",
        ),
        (
            ['{"a": "x"}', '{"a": ["y"]}'],
            r"x.jsonl:2: key 'a' holds a list where line 1 holds a str",
        ),
        (['{"a": [1, null]}'], r"x.jsonl:1: key 'a' holds a list holding a null \(element 1\)"),
        (['{"a": [[1], 2]}'], r"x.jsonl:1: key 'a\[1\]' holds an integer where line 1 holds a l"),
        (['{"a": [1, "x"]}'], r"x.jsonl:1: key 'a\[1\]' holds a string where line 1 holds an int"),
    ],
)
def test_lists_beside_other_values_or_holding_them_are_named(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SpecError, match=message):
        catalog.prepare_files(path, "x", data_dir=tmp_path / "d")


def test_a_missing_list_takes_an_empty_one_given_as_its_fill(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [{"t": ["a"]}, {"t": None}, {}]) + "\n")
    run = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0 and "--fill t='[]'" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    b = catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d", fill={"t": "[]"})
    assert [e["t"] for e in b.as_data_source("train")] == [["a"], [], []]
