"""``.json`` files as people have them: an array of records (pandas'
``to_json(orient="records")``, Alpaca's ``alpaca_data.json``), JSON Lines under a ``.json`` name
(Hugging Face datasets' ``to_json("x.json")``), or a Croissant file; each prepared as the tool
that wrote it reads it back.

An array is read an element at a time (memory holds one element, never the file), each
example keyed by its index, errors naming the line its element begins on; a JSON document that
is neither a table nor Croissant is one error saying what catalog reads; a document beside the
data files of a folder (``dataset_infos.json``) is not taken for a table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import catalog
from catalog.errors import SourceFormatError, SpecError
from catalog.formats.tables import json_lines
from catalog.formats.tables.json_lines import json_layout, objects
from tests.spec.test_nested_columns import _plain, _prepare

pd = pytest.importorskip("pandas")


def test_an_array_of_records_prepares_as_pandas_reads_it(tmp_path: Path) -> None:
    n = 3000  # several MiB: elements are cut by the reader's 1 MiB reads
    frame = pd.DataFrame(
        {
            "instruction": [f'Give {i} reasons. "Quoted", \\ and \u00e9' for i in range(n)],
            "input": ["" if i % 3 else "x" * (i % 4000) for i in range(n)],
            "output": [f"{i / 7}" for i in range(n)],
            "score": [i / 3 for i in range(n)],
            "n": list(range(n)),
        }
    )
    path = tmp_path / "alpaca_data.json"
    frame.to_json(path, orient="records", force_ascii=False, indent=2)  # pandas' own writer
    assert json_layout(path) == "array"
    done = _prepare(path, tmp_path / "d")
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source("alpaca_data", split="train", data_dir=tmp_path / "d", download=False)
    want = pd.read_json(path, orient="records", precise_float=True, dtype=False)
    assert list(ds.features) == list(want.columns)
    assert len(ds) == n
    for i, row in enumerate(want.to_dict("records")):
        assert _plain(ds[i]) == row, i
    # minified, on one line (json.dump's default): every element still its own example
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(frame.head(50).to_dict("records")))
    b = catalog.prepare_files(flat, "flat", data_dir=tmp_path / "d")
    assert [_plain(e) for e in b.as_data_source("train")] == frame.head(50).to_dict("records")


def test_json_lines_under_a_json_name_prepare_as_hugging_face_wrote_them(tmp_path: Path) -> None:
    hf = pytest.importorskip("datasets")
    rows = {"text": [f"t{i}" for i in range(300)], "label": [i % 4 for i in range(300)]}
    path = tmp_path / "hf_export.json"
    hf.Dataset.from_dict(rows).to_json(str(path))  # JSON Lines, whatever the name says
    assert json_layout(path) == "lines"
    done = _prepare(path, tmp_path / "d")
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source("hf_export", split="train", data_dir=tmp_path / "d", download=False)
    want = hf.Dataset.from_json(str(path), cache_dir=str(tmp_path / "hf"))
    assert [_plain(e) for e in ds] == [dict(r) for r in want]


def test_a_folder_s_json_document_is_not_a_table_and_croissant_stays_croissant(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "train.json").write_text(json.dumps([{"x": 1}, {"x": 2}]))
    (folder / "test.json").write_text(json.dumps([{"x": 3}]))
    (folder / "dataset_infos.json").write_text(json.dumps({"default": {"description": "d"}}))
    b = catalog.prepare_files(folder, "data", data_dir=tmp_path / "d")
    assert {s: n.num_examples for s, n in b.info.splits.items()} == {"train": 2, "test": 1}
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "1.1", "data": [{"title": "t"}]}, indent=1))
    assert json_layout(squad) == "document"
    done = _prepare(squad, tmp_path / "d")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nor a table (catalog reads one from JSON Lines" in done.stderr
    assert "jq -c '.data[]'" in done.stderr
    croissant = tmp_path / "croissant.json"
    croissant.write_text(json.dumps({"@context": {"@vocab": "https://schema.org/"}, "name": "c"}))
    assert json_layout(croissant) == "document"  # read as Croissant (what it says is its own)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[{"a": 1},\n {"a": 2}\n', r"t.json:3: not JSON: expected ',' or ']' after an element"),
        ('[{"a": 1},\n {"a": 2,,}]', r"t.json:2: not JSON: Expecting property name"),
        ('[{"a": 1},\n 5]', r"t.json:2: expected an array of JSON objects, got a int"),
        ('[{"a": 1}] [', r"t.json:1: not JSON: more after the array's \]"),
        ('[{"a": 1e999}]', r"t.json:1: not JSON \(the number 1e999 is outside float64"),
    ],
)
def test_a_bad_array_is_one_error_naming_the_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(SourceFormatError, match=error):
        list(objects(path))


def test_an_array_is_read_an_element_at_a_time_within_a_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_lines, "_READ", 4096)  # elements cut across many reads
    path = tmp_path / "t.json"
    elements = [{"i": i, "t": "é" * (i * 37 % 3000)} for i in range(400)]
    path.write_text(json.dumps(elements, ensure_ascii=False))
    assert [obj for _, obj in objects(path)] == elements
    monkeypatch.setattr(json_lines, "LINE_BYTES", 10_000)  # an element past it: an error,
    big = tmp_path / "big.json"  # read no further than the budget
    big.write_text(json.dumps([{"t": "x" * 5000}, {"t": "x" * 50_000}, {"t": "y"}]))
    with pytest.raises(SourceFormatError, match=r"big.json:1: an array element of more than"):
        list(objects(big))
    early = tmp_path / "early.json"  # an error early in a large file: found without reading on
    early.write_text('[{"a": }' + ", ".join(['{"a": 1}'] * 200_000) + "]")
    reads: list[int] = []
    opened = json_lines.open_bytes

    def counting(path: Any) -> Any:
        f = opened(path)
        read = f.read
        f.read = lambda n=-1: reads.append(n) or read(n)  # type: ignore[method-assign]
        return f

    monkeypatch.setattr(json_lines, "open_bytes", counting)
    with pytest.raises(SourceFormatError, match=r"early.json:1: not JSON: Expecting value"):
        list(objects(early))
    assert len(reads) <= 3


def test_a_missing_value_in_an_array_is_named_as_in_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "gaps.json"
    path.write_text('[\n{"a": "x"},\n{"a": null}\n]')
    with pytest.raises(SpecError, match=r"missing values in column\(s\) 'a' \(line 3\)"):
        catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d")
    b = catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d", fill={"a": ""})
    assert [e["a"] for e in b.as_data_source("train")] == ["x", ""]


def test_json_lines_whose_first_line_is_long_are_still_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "articles.json"  # a first record past the 64 KiB looked at first
    rows = [{"text": "x" * 200_000, "n": 1}, {"text": "y", "n": 2}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert json_layout(path) == "lines"
    b = catalog.prepare_files(path, "articles", data_dir=tmp_path / "d")
    assert [_plain(e) for e in b.as_data_source("train")] == rows
