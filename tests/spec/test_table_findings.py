"""Issue 37's findings, as a new user met them on main fcd5d68, each run through the CLI:
a CSV row with a field too many, a semicolon CSV, the hint that looped beside a builder.yaml,
an unquoted glob, a JSON line nested 100,000 deep (issue 41). Each test failed there."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import catalog
from catalog.errors import SourceFormatError
from catalog.features import Scalar, Text
from catalog.spec.infer import name_from_path
from catalog.spec.infer.common import column_feature_names

from conftest import catalog_cli


def _prepared(data_dir: Path) -> list[Path]:
    return sorted(data_dir.glob("*/1.0.0*/dataset_info.json")) if data_dir.exists() else []


@pytest.mark.parametrize(
    ("text", "line", "saw"),
    [
        ("a,b,c\n1,2,3\n4,9,5,6\n", 3, 4),  # the issue's own file: pandas refuses line 3
        ("a,b,c\n" + "1,2,3\n" * 8 + "1,2,99,3\n", 10, 4),  # inserted mid-row: columns shift
    ],
)
def test_a_row_with_a_field_too_many_is_refused_as_pandas_does(
    tmp_path: Path, text: str, line: int, saw: int
) -> None:
    """Finding 1: the extra field was dropped, or shifted every later column, exit 0."""
    path = tmp_path / "extra.csv"
    path.write_text(text)
    with pytest.raises(pd.errors.ParserError, match=f"Expected 3 fields in line {line}, saw {saw}"):
        pd.read_csv(path)
    done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "d"))
    assert done.returncode != 0, done.stderr
    assert f"{path}:{line}: expected 3 fields (as the header), saw {saw}" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert _prepared(tmp_path / "d") == []


def test_a_semicolon_csv_with_quoted_headers_is_read_by_its_delimiter(tmp_path: Path) -> None:
    """Finding 3: wine_quality's semicolon CSV failed with quoted headers (',' expected after
    '"') and was one text column without them; --delimiter did not exist."""
    quoted = tmp_path / "winequality-red.csv"
    quoted.write_text('"fixed acidity";"quality";"name"\n7,4;5;"a;b"\n7,8;6;c\n')
    plain = tmp_path / "plain.csv"
    plain.write_text("a;b\n1;2\n3;4\n")
    for path in (quoted, plain):
        frame = pd.read_csv(path, sep=None, engine="python")
        done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "d"), "-q")
        assert done.returncode == 0, done.stderr
        name = name_from_path(str(path))
        ds = catalog.data_source(name, data_dir=tmp_path / "d", split="train")
        assert len(ds.features) == len(frame.columns) > 1
        names = column_feature_names(list(frame.columns), str(path))
        for i in range(len(frame)):
            got = {n: v.item() if hasattr(v, "item") else v for n, v in ds[i].items()}
            row = frame.iloc[i]
            assert got == {
                n: row[c].item() if hasattr(row[c], "item") else row[c] for n, c in names.items()
            }
    ds = catalog.data_source("plain", data_dir=tmp_path / "d", split="train")
    assert ds.features["a"] == Scalar("int64") and ds[1]["b"] == 4
    wine = catalog.data_source("winequality_red", data_dir=tmp_path / "d", split="train")
    assert wine.features["fixed acidity"] == Text()  # 7,4: a decimal comma is text, as pandas
    assert wine[0]["name"] == "a;b"
    # --delimiter names it: read with ',' this file has one column
    one = catalog_cli(
        "prepare", str(plain), "--name", "one", "--delimiter", ",",
        "--data-dir", str(tmp_path / "d"), "-q",
    )  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert list(catalog.data_source("one", data_dir=tmp_path / "d", split="train").features) == [
        "a;b"
    ]
    tab = tmp_path / "t.csv"
    tab.write_text("x\ty|z\n1\t2|3\n")
    by_tab = catalog.prepare_files(tab, "t", data_dir=tmp_path / "d", delimiter="\t")
    assert by_tab.as_data_source("train")[0]["y|z"] == "2|3"


def test_a_csv_beside_a_builder_yaml_is_that_file(tmp_path: Path) -> None:
    """Finding 4: beside the builder.yaml --write-spec wrote, ./data.csv read as config
    'data.csv' of the builder folder '.', and the hint said to write ././data.csv, forever."""
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    first = catalog_cli(
        "prepare", "./data.csv", "--data-dir", "d", "--write-spec", ".", "-q", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "builder.yaml").is_file()
    again = catalog_cli("prepare", "./data.csv", "--data-dir", "d", "--overwrite", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "././" not in again.stderr
    assert "./data.csv is a file, prepared as local files" in again.stderr
    ds = catalog.data_source("data", data_dir=tmp_path / "d", split="train")
    assert ds[1]["b"] == 4


def test_an_unquoted_glob_is_one_dataset_with_name_else_one_clear_error(tmp_path: Path) -> None:
    """Finding 5: `catalog prepare tables/*.csv` made one dataset per file, and with --name
    the error said nothing about quoting."""
    tables = tmp_path / "tables"
    tables.mkdir()
    for split, rows in (("train", "1,2\n3,4\n5,6\n"), ("test", "7,8\n")):
        (tables / f"{split}.csv").write_text("a,b\n" + rows)
    paths = [str(tables / "test.csv"), str(tables / "train.csv")]  # as a shell expands them
    bare = catalog_cli("prepare", *paths, "--data-dir", str(tmp_path / "d"))
    assert bare.returncode == 2
    assert "quote the glob" in bare.stderr and "--name" in bare.stderr
    assert f"(catalog prepare '{tables}/t*.csv')" in bare.stderr  # their glob, not an example
    assert _prepared(tmp_path / "d") == []
    named = catalog_cli(
        "prepare", *paths, "--name", "tables", "--data-dir", str(tmp_path / "d"), "-q"
    )
    assert named.returncode == 0, named.stderr
    ds = catalog.data_source("tables", data_dir=tmp_path / "d")
    assert {s: len(d) for s, d in ds.items()} == {"train": 3, "test": 1}
    assert ds["test"][0]["b"] == 8


def test_missing_na_as_r_writes_it_from_the_command_line(tmp_path: Path) -> None:
    """A CSV R wrote (NA for a missing number): without a word the column became text; now a
    note names the flag, and `--missing NA` reads it as pandas does."""
    path = tmp_path / "r_export.csv"
    path.write_text('"id","height"\n1,1.5\n2,NA\n3,2.25\n')
    data = str(tmp_path / "d")
    plain = catalog_cli("prepare", str(path), "--data-dir", data)
    assert plain.returncode == 0, plain.stderr
    assert "column 'height' is text only because of 'NA' (first at line 3)" in plain.stderr
    assert "--missing NA" in plain.stderr
    read = catalog_cli("prepare", str(path), "--missing", "NA", "--data-dir", data, "-q")
    assert read.returncode == 0, read.stderr
    ds = catalog.data_source("r_export", data_dir=data, split="train")
    heights = {int(e["id"]): float(e["height"]) for e in ds}
    assert heights[1] == 1.5 and heights[3] == 2.25 and heights[2] != heights[2]  # NaN
    expected = pd.read_csv(path)["height"].tolist()  # pandas' defaults read NA as NaN
    assert [heights[i] for i in (1, 3)] == [expected[0], expected[2]]
    wrong = catalog_cli("prepare", str(path), "--missing", "NA", "--name", "x", "--data-dir",
                        data, "--dtype", "height=int64")  # fmt: skip
    assert wrong.returncode == 3 and "r_export.csv:2: column(s) height" in wrong.stderr
    typed = catalog_cli("prepare", str(path), "--name", "y", "--data-dir", data, "--dtype",
                        "height=float64")  # fmt: skip
    assert "r_export.csv:3: column(s) height for feature 'height': 'NA' is not a number" in (
        typed.stderr
    )
    hint = "if 'NA' means a missing value, give options.missing (catalog prepare FILE: "
    assert hint + "--missing NA)" in typed.stderr and typed.returncode == 3
    assert "'1.5' is not a number (int64)" in wrong.stderr and "Traceback" not in wrong.stderr


def test_json_nested_100000_deep_is_one_error_naming_file_and_line(tmp_path: Path) -> None:
    """Issue 41: a JSON Lines line nested 100,000 deep was a raw RecursionError traceback."""
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "d"))
    assert done.returncode != 0
    assert f"{path}:2: JSON nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(SourceFormatError, match="deep.jsonl:2: JSON nested too deeply"):
        catalog.prepare_files(path, "deep", data_dir=tmp_path / "d")
    assert _prepared(tmp_path / "d") == []


@pytest.mark.parametrize(
    ("second", "said"),
    [
        ('{"a": 2, "b": ', "not JSON: Expecting value, the line ends before the JSON does"),
        (
            '{"a": 2,, "b": 1}',
            "not JSON: Expecting property name enclosed in double quotes, at column 9 of the line",
        ),
        ('{"a": 2} x', "not JSON: Extra data, at column 10 of the line"),
    ],
)
def test_a_broken_json_line_is_named_by_its_line_and_column(
    tmp_path: Path, second: str, said: str
) -> None:
    """The column is the line's (json's own 'line 2 column 1' counted the newline)."""
    path = tmp_path / "broken.jsonl"
    path.write_text('{"a": 1, "b": 1}\n' + second + "\n")
    with pytest.raises(SourceFormatError) as raised:
        catalog.prepare_files(path, "broken", data_dir=tmp_path / "d")
    assert str(raised.value) == f"{path}:2: {said}"
    assert _prepared(tmp_path / "d") == []
