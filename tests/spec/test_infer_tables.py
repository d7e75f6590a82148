"""CSV, TSV, JSON Lines and Parquet files prepared with no builder.yaml
(catalog.spec.infer.tables): types inferred from every row, every row checked, missing
numbers NaN and other missing values refused unless filled, class labels when asked, splits
from file names; every prepared value equals its source."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import catalog
from catalog.api.files import files_builder
from catalog.errors import ChecksumError, FeatureError, SourceFormatError, SpecError
from catalog.features import ClassLabel, Scalar, Text
from catalog.spec.load import load_spec

ROWS = [
    {"id": 1, "score": 0.5, "ok": True, "text": "plain", "kind": "cat"},
    {"id": -7, "score": 3.0, "ok": False, "text": 'quote " and, comma', "kind": "dog"},
    {"id": 2**40, "score": -1.25e-3, "ok": True, "text": "ünïcode\nnew line", "kind": "cat"},
    {"id": 0, "score": 1e300, "ok": False, "text": "  spaces  ", "kind": "bird"},
]


def write_csv(path: Path, rows: list[dict[str, object]], delimiter: str = ",") -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: str(v).lower() if isinstance(v, bool) else v for k, v in row.items()}
            )


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")


def write_parquet(path: Path, rows: list[dict[str, object]]) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=3)


WRITERS = {".csv": write_csv, ".jsonl": write_jsonl, ".parquet": write_parquet}


def plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_a_table_is_prepared_exactly(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"data{suffix}"
    if suffix == ".tsv":
        write_csv(path, ROWS, delimiter="\t")
    else:
        WRITERS[suffix](path, ROWS)
    b = catalog.prepare_files(path, "table", data_dir=tmp_path / "d", label="kind")
    features = b.info.features
    assert features["id"] == Scalar("int64")
    assert features["score"] == Scalar("float64")
    assert features["ok"] == Scalar("bool")
    assert features["text"] == Text()
    assert isinstance(features["kind"], ClassLabel)
    assert features["kind"].names == ["bird", "cat", "dog"]
    ds = catalog.data_source("table", data_dir=tmp_path / "d", split="train")
    assert len(ds) == len(ROWS)
    for i, row in enumerate(ROWS):
        got = {k: plain(v) for k, v in ds[i].items()}
        assert got == {**row, "kind": features["kind"].names.index(str(row["kind"]))}


def test_files_named_by_split_are_splits_and_a_glob_reads_many(tmp_path: Path) -> None:
    for name, rows in [("train.jsonl", ROWS[:3]), ("test.jsonl", ROWS[3:])]:
        write_jsonl(tmp_path / name, rows)
    spec = files_builder(tmp_path, "t").spec
    assert {n: s.num_examples for n, s in spec.splits.items()} == {"train": 3, "test": 1}
    (tmp_path / "parts").mkdir()
    for i in range(3):
        write_csv(tmp_path / "parts" / f"part{i}.csv", ROWS[i : i + 2])
    b = catalog.prepare_files(
        str(tmp_path / "parts" / "part*.csv"), "parts", data_dir=tmp_path / "d"
    )
    ds = b.as_data_source("train")
    assert [plain(ds[i]["id"]) for i in range(len(ds))] == [1, -7, -7, 2**40, 2**40, 0]


def test_a_split_word_anywhere_in_a_file_name_makes_its_split(tmp_path: Path) -> None:
    """Kaggle's fashion-mnist_train.csv and fashion-mnist_test.csv were one train split (only
    a name's first word counted): the test rows were read as training rows without a word.
    A split word anywhere in the name counts now, as in Hugging Face's file patterns."""
    kaggle = tmp_path / "kaggle"
    kaggle.mkdir()
    write_csv(kaggle / "fashion-mnist_train.csv", [{"label": 1}, {"label": 2}])
    write_csv(kaggle / "fashion-mnist_test.csv", [{"label": 3}])
    b = catalog.prepare_files(kaggle, "fm", data_dir=tmp_path / "d")
    assert {n: len(d) for n, d in b.as_data_source().items()} == {"train": 2, "test": 1}
    assert int(b.as_data_source("test")[0]["label"]) == 3
    parts = tmp_path / "parts"
    parts.mkdir()
    for name in ("sales_train_1.csv", "sales_train_2.csv", "sales_val.csv", "contest.csv"):
        write_csv(parts / name, [{"n": 1}])
    with pytest.raises(SpecError, match="sales_train_1.csv is of split 'train' by its name, "
                       "but contest.csv names no split"):  # fmt: skip
        files_builder(parts, "p")
    (parts / "contest.csv").unlink()
    spec = files_builder(parts, "p").spec
    assert {n: s.num_examples for n, s in spec.splits.items()} == {"train": 2, "validation": 1}
    write_csv(parts / "dev.csv", [{"n": 1}])  # a second validation file, named otherwise
    with pytest.raises(SpecError, match=r"no one pattern matches the files of split "
                       r"'validation' \(dev.csv, sales_val.csv\)"):  # fmt: skip
        files_builder(parts, "p")


def test_types_come_from_every_row_widening_as_values_come(tmp_path: Path) -> None:
    """Finding 2 of issue 37: the red-wine CSV's ``77.5`` at row 1297 in a column whose first
    1000 rows are integers failed the prepare; every row now decides the type."""
    rows = [{"n": str(i), "t": str(i), "b": "true"} for i in range(1500)]
    rows[1296]["n"] = "77.5"
    rows[1400]["t"] = "many"
    write_csv(tmp_path / "d.csv", rows)
    notes: list[str] = []
    b = catalog.prepare_files(tmp_path / "d.csv", "d", data_dir=tmp_path / "out")
    assert b.info.features["n"] == Scalar("float64")
    assert b.info.features["t"] == Text()
    assert b.info.features["b"] == Scalar("bool")
    ds = b.as_data_source("train")
    assert plain(ds[1296]["n"]) == 77.5 and plain(ds[5]["n"]) == 5.0
    assert ds[1400]["t"] == "many" and ds[7]["t"] == "7"
    files_builder(tmp_path / "d.csv", "d", note=notes.append)
    assert (
        f"{tmp_path / 'd.csv'}: column 'n' holds integers and decimals (the first decimal at "
        "line 1298): float64"
    ) in notes

    lines = [json.dumps({"n": i}) for i in range(20)] + ['{"n": 2.5}', '{"n": "seven"}']
    (tmp_path / "j.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        SpecError, match=r"j.jsonl:22: key 'n' holds a string where line 1 holds a number"
    ):
        files_builder(tmp_path / "j.jsonl", "j")
    (tmp_path / "j.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    assert files_builder(tmp_path / "j.jsonl", "j").spec.features["n"] == Scalar("float64")


def test_dtype_sets_a_column_type_and_every_value_is_checked(tmp_path: Path) -> None:
    write_csv(tmp_path / "d.csv", [{"n": "1", "z": "007"}, {"n": "2", "z": "010"}])
    b = catalog.prepare_files(
        tmp_path / "d.csv", "d", data_dir=tmp_path / "o", dtypes={"n": "int8", "z": "text"}
    )
    assert b.info.features["n"] == Scalar("int8") and b.info.features["z"] == Text()
    assert b.as_data_source("train")[1]["z"] == "010"
    write_csv(tmp_path / "e.csv", [{"n": "1"}, {"n": "1.5"}])
    builder = files_builder(tmp_path / "e.csv", "e", data_dir=tmp_path / "o", dtypes={"n": "int64"})
    with pytest.raises(SourceFormatError, match=r"e.csv:3: column\(s\) n .*'1.5' is not a number"):
        builder.download_and_prepare()
    assert not any((tmp_path / "o").glob("e/1.0.0*/dataset_info.json"))
    with pytest.raises(SpecError, match="--dtype n=int65: unknown type; the types are int8"):
        files_builder(tmp_path / "e.csv", "e", dtypes={"n": "int65"})
    with pytest.raises(SpecError, match="no column 'm'; the columns are n"):
        files_builder(tmp_path / "e.csv", "e", dtypes={"m": "int64"})


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_missing_values_are_refused_unless_filled(tmp_path: Path, suffix: str) -> None:
    rows: list[dict[str, object]] = [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    path = tmp_path / f"m{suffix}"
    if suffix == ".csv":
        path.write_text("a,b\n1,x\n2,\n")
    else:
        WRITERS[suffix](path, rows)
    if suffix == ".parquet":  # nulls are counted while preparing
        b = files_builder(path, "m", data_dir=tmp_path / "d")
        with pytest.raises(SourceFormatError, match="row 1: column 'b' is null; .*--fill b="):
            b.download_and_prepare()
    else:  # every such column named at once, before anything is prepared
        line = 3 if suffix == ".csv" else 2
        with pytest.raises(SpecError, match=rf"m{suffix}: missing values in column\(s\) 'b' "
                           rf"\(line {line}\), which hold no null .*--fill b=VALUE"):  # fmt: skip
            files_builder(path, "m", data_dir=tmp_path / "d")
    assert not (tmp_path / "d").exists() or not list((tmp_path / "d").rglob("*.array_record*"))
    filled = catalog.prepare_files(path, "m", data_dir=tmp_path / "d", fill={"b": "?"})
    ds = filled.as_data_source("train")
    assert [ds[i]["b"] for i in range(2)] == ["x", "?"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_missing_numbers_are_nan_as_pandas_reads_them(tmp_path: Path, suffix: str) -> None:
    import pandas as pd

    path = tmp_path / f"m{suffix}"
    if suffix == ".csv":
        path.write_text("a,f\n1,0.5\n,\n3\n")  # the last row is short: both missing
    else:
        path.write_text('{"a": 1, "f": 0.5}\n{"a": null, "f": null}\n{"a": 3}\n')
    b = catalog.prepare_files(path, "m", data_dir=tmp_path / "d")
    assert b.info.features["a"] == Scalar("float64") == b.info.features["f"]
    ds = b.as_data_source("train")
    frame = pd.read_csv(path) if suffix == ".csv" else pd.read_json(path, lines=True)
    for column in ("a", "f"):
        got = np.array([plain(ds[i][column]) for i in range(3)], dtype=float)
        np.testing.assert_array_equal(got, frame[column].to_numpy(dtype=float))
    kept = catalog.prepare_files(path, "k", data_dir=tmp_path / "d", fill={"a": "-1"})
    assert kept.info.features["a"] == Scalar("int64")
    assert [plain(kept.as_data_source("train")[i]["a"]) for i in range(3)] == [1, -1, 3]


def test_the_cli_prepares_a_csv_with_a_label_and_writes_its_spec(tmp_path: Path) -> None:
    write_csv(tmp_path / "train.csv", ROWS)
    write_csv(tmp_path / "test.csv", ROWS[:2])
    done = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(tmp_path), "--name", "pets",
         "--label", "kind", "--write-spec", str(tmp_path), "--data-dir", str(tmp_path / "d"),
         "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pets 1.0.0: prepared" in done.stdout
    spec = load_spec(tmp_path)
    assert spec.features["kind"].names == ["bird", "cat", "dog"]
    assert {n: s.num_examples for n, s in spec.splits.items()} == {"train": 4, "test": 2}
    checksums = (tmp_path / "checksums.tsv").read_text()
    assert checksums.startswith("test.csv\t") and "\ntrain.csv\t" in checksums
    ds = catalog.data_source("pets", data_dir=tmp_path / "d", split="test")
    assert ds[1]["text"] == ROWS[1]["text"]
    # info and show find it by name too.
    info = subprocess.run(
        [sys.executable, "-m", "catalog", "info", "pets", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert info.returncode == 0, info.stderr
    assert "kind   ClassLabel" in info.stdout and "3 classes: bird, cat, dog" in info.stdout


def test_nested_json_and_unknown_parquet_types_are_named(tmp_path: Path) -> None:
    (tmp_path / "n.jsonl").write_text('{"a": {}}\n')  # (objects: tests/spec/test_nested_columns)
    with pytest.raises(SpecError, match=r"n.jsonl:1: key 'a' holds an empty object"):
        files_builder(tmp_path / "n.jsonl", "n")
    pq.write_table(pa.table({"span": pa.array([1, 2], pa.duration("s"))}), tmp_path / "t.parquet")
    with pytest.raises(SpecError, match=r"column 'span' is of Parquet type duration\["):
        files_builder(tmp_path / "t.parquet", "t")


def test_columns_keep_the_names_pandas_reads(tmp_path: Path) -> None:
    """Header names stay as pandas reads them (they were rewritten to TFDS-style names without
    a word: ``1960`` became ``column_1960``, ``'popul'`` became ``popul``), and every option
    takes them; empty and repeated names are renamed as pandas does, with a note."""
    (tmp_path / "r.csv").write_text(
        "Sepal Length (cm),2 3,1960,'popul',x,x,,2nd\n1.5,3,4,5,6,7,8,9\n"
    )
    notes: list[str] = []
    b = files_builder(
        tmp_path / "r.csv", "r", data_dir=tmp_path / "d", note=notes.append,
        dtypes={"1960": "float32", "x.1": "text"}, fill={"'popul'": "0"},
    )  # fmt: skip
    frame = pd.read_csv(tmp_path / "r.csv")
    assert list(b.info.features) == list(frame.columns)
    assert list(frame.columns)[-3:] == ["x.1", "Unnamed: 6", "2nd"]
    assert b.info.features["1960"] == Scalar("float32") and b.info.features["x.1"] == Text()
    b.download_and_prepare()
    example = b.as_data_source("train")[0]
    assert list(example) == list(frame.columns)  # the file's order
    assert {k: plain(v) for k, v in example.items()} == {
        "Sepal Length (cm)": 1.5, "2 3": 3, "1960": 4.0, "'popul'": 5, "x": 6, "x.1": "7",
        "Unnamed: 6": 8, "2nd": 9,
    }  # fmt: skip
    assert any("'x' -> 'x.1', '' -> 'Unnamed: 6'" in n for n in notes), notes


def test_a_name_no_feature_can_hold_is_renamed_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("a/,x[0],km/h\n1,2,3\n")
    notes: list[str] = []
    b = files_builder(
        tmp_path / "r.csv", "r", data_dir=tmp_path / "d", note=notes.append, dtypes={"a/": "text"}
    )
    assert list(b.info.features) == ["a_", "x_0]", "km/h"]
    assert b.info.features["a_"] == Text()
    assert sum("cannot name a feature" in n for n in notes) == 2


def test_a_file_changed_after_its_spec_was_made_is_noticed(tmp_path: Path) -> None:
    write_csv(tmp_path / "data.csv", ROWS)
    b = files_builder(tmp_path / "data.csv", "data", data_dir=tmp_path / "d")
    write_csv(tmp_path / "data.csv", ROWS[::-1])  # same size, other bytes
    with pytest.raises(
        ChecksumError, match=r"data.csv: the file changed since its size and sha256"
    ):
        b.download_and_prepare()
    # Prepared again from its path, the new contents are recorded and prepared.
    again = catalog.prepare_files(tmp_path / "data.csv", "data", data_dir=tmp_path / "d")
    assert again.as_data_source("train")[0]["text"] == ROWS[-1]["text"]


def test_a_hidden_file_a_glob_would_read_is_refused(tmp_path: Path) -> None:
    write_csv(tmp_path / "a.csv", ROWS)
    write_csv(tmp_path / "b.csv", ROWS)
    write_csv(tmp_path / ".c.csv", ROWS)
    with pytest.raises(SpecError, match=r"\*.csv also matches .c.csv, which is not read"):
        files_builder(tmp_path, "t")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_text_column_with_few_values_is_offered_as_a_label(tmp_path: Path, suffix: str) -> None:
    rows = [{**ROWS[i % 4], "text": f"unique {i}"} for i in range(12)]
    WRITERS[suffix](tmp_path / f"p{suffix}", rows)
    notes: list[str] = []
    files_builder(tmp_path / f"p{suffix}", "p", note=notes.append)
    within = " in its first rows" if suffix == ".parquet" else ""  # CSV, JSONL: every row
    assert notes == [
        f"{tmp_path / f'p{suffix}'}: column 'kind' holds 3 distinct values{within}; "
        "--label kind (label='kind') makes it a ClassLabel"
    ]
    notes.clear()
    files_builder(tmp_path / f"p{suffix}", "p", note=notes.append, label="kind")
    assert notes == []


def test_parquet_images_in_hugging_faces_struct_layout_are_stored_as_they_are(
    tmp_path: Path,
) -> None:
    import io

    from PIL import Image as PILImage

    rng = np.random.default_rng(5)
    images = []
    for i in range(4):
        out = io.BytesIO()
        pixels = rng.integers(0, 256, (6 + i, 9, 3), dtype=np.uint8)
        PILImage.fromarray(pixels).save(out, format="PNG" if i % 2 else "JPEG")
        images.append(out.getvalue())
    rows = [
        {"image": {"bytes": data, "path": f"{i}.png"}, "label": "ab"[i % 2]}
        for i, data in enumerate(images)
    ]
    write_parquet(tmp_path / "img.parquet", rows)
    b = catalog.prepare_files(
        tmp_path / "img.parquet", "img", data_dir=tmp_path / "d", label="label"
    )
    assert b.info.features["image"].shape == (None, None, 3)
    raw = b.as_data_source("train", decoders={"image": False})
    ds = b.as_data_source("train")
    for i, data in enumerate(images):
        assert raw[i]["image"] == data
        with PILImage.open(io.BytesIO(data)) as img:
            np.testing.assert_array_equal(ds[i]["image"], np.array(img.convert("RGB")))
        assert ds[i]["label"] == i % 2


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_number_beyond_its_float_dtype_is_an_error_naming_its_row(
    tmp_path: Path, suffix: str
) -> None:
    """float32 holds any float64 rounded, except those beyond its range: 1e300 would become
    infinity, a value the file does not hold. Refused like an int out of range, on the bulk
    path as on the row reader's, and nothing is left behind."""
    values = [1.5] * 2500 + [-1e300] + [2.0] * 10 + [float("inf")]
    path = tmp_path / f"d.{suffix}"
    if suffix == "csv":
        write_csv(path, [{"x": v} for v in values])
    else:
        pq.write_table(pa.table({"x": pa.array(values, pa.float64())}), path)
    data = tmp_path / "o"
    with pytest.raises(FeatureError) as info:  # as `--dtype n=int8` and 300
        catalog.prepare_files(path, "d", data_dir=data, dtypes={"x": "float32"})
    message = str(info.value)
    assert "example 2500 " in message and "-1e+300 does not fit float32" in message
    assert not list(data.rglob("*.array_record*"))
    ok = [v for v in values if v != -1e300]
    path.unlink()
    if suffix == "csv":
        write_csv(path, [{"x": v} for v in ok])
    else:
        pq.write_table(pa.table({"x": pa.array(ok, pa.float64())}), path)
    ds = catalog.prepare_files(path, "d", data_dir=data, dtypes={"x": "float32"})
    got = sorted(float(e["x"]) for e in ds.as_data_source("train"))
    assert got == sorted(float(np.float32(v)) for v in ok) and got[-1] == float("inf")


@pytest.mark.parametrize("rows", [3, 3000], ids=["one by one", "in batches"])
def test_a_column_made_text_only_by_pandas_missing_values_gets_a_note(
    tmp_path: Path, rows: int
) -> None:
    """R writes a missing number as NA, which pandas reads as NaN: here it stays text (only
    an empty field is missing unless told), so a number column turns text without a word but
    for this note, which says how to read it as pandas does."""
    values = [f"{i / 4}" for i in range(rows)]
    values[1], values[-1] = "NA", "null"
    labels = ["NA" if i == 2 else "Paris" for i in range(rows)]  # real text: no note
    write_csv(
        tmp_path / "r.csv", [{"x": v, "city": c} for v, c in zip(values, labels, strict=True)]
    )
    notes: list[str] = []
    b = files_builder(tmp_path / "r.csv", "r", note=notes.append)
    assert b.spec.features["x"] == Text() and b.spec.features["city"] == Text()
    mine = [n for n in notes if "only because" in n]
    assert mine == [
        f"{tmp_path / 'r.csv'}: column 'x' is text only because of 'NA', 'null' (first at line "
        "3), which pandas reads as a missing value; --missing NA --missing null "
        "(missing=['NA', 'null']) reads it so, and the column is then typed by its other values"
    ]
    notes.clear()
    files_builder(tmp_path / "r.csv", "r", note=notes.append, dtypes={"x": "text"})
    assert not [n for n in notes if "only because" in n]  # the user chose text


def test_missing_texts_are_missing_values_as_pandas_na_values(tmp_path: Path) -> None:
    """``missing=["NA"]`` (``--missing NA``): NA is a missing value like the empty field: a
    number column is float64 with NaN, a text column needs a fill, as pandas' na_values."""
    rows = [{"x": "1", "city": "Paris"}, {"x": "NA", "city": "NA"}, {"x": "", "city": "Oslo"}]
    write_csv(tmp_path / "m.csv", rows)
    data = tmp_path / "o"
    with pytest.raises(SpecError, match=r"m.csv: missing values in column\(s\) 'city' \(line 3\)"):
        catalog.prepare_files(tmp_path / "m.csv", "m", data_dir=data, missing=["NA"])
    b = catalog.prepare_files(
        tmp_path / "m.csv", "m", data_dir=data, missing="NA", fill={"city": "?"}
    )
    assert b.info.features["x"] == Scalar("float64")
    got = {e["city"]: float(e["x"]) for e in b.as_data_source("train")}
    assert sorted(got) == ["?", "Oslo", "Paris"]
    assert got["Paris"] == 1.0 and np.isnan(got["?"]) and np.isnan(got["Oslo"])
    # what pandas reads with the same na_values
    read = pd.read_csv(tmp_path / "m.csv", na_values=["", "NA"], keep_default_na=False)
    assert read["x"].isna().tolist() == [False, True, True] and read["x"].dtype == np.float64
    pq.write_table(pa.table({"x": [1, None]}), tmp_path / "p.parquet")
    with pytest.raises(SpecError, match="--missing .* CSV/TSV fields; parquet files have nulls"):
        files_builder(tmp_path / "p.parquet", "p", missing=["NA"])


@pytest.mark.parametrize("rows", [3, 3000], ids=["one by one", "in batches"])
@pytest.mark.parametrize("newline", ["\r", "\r\n", "mixed"])
def test_lines_ending_with_a_lone_carriage_return_read_as_pandas_reads_them(
    tmp_path: Path, newline: str, rows: int
) -> None:
    """Old Mac files (and Excel's "CSV (Macintosh)") end lines with \\r alone: pandas reads
    them; catalog refused the first row ("new-line character seen in unquoted field")."""
    lines = ["id,x,note", *(f'{i},{i / 2},"a{i}\rb"' for i in range(rows))]
    ends = ["\r", "\n", "\r\n"]
    text = "".join(
        line + (ends[i % 3] if newline == "mixed" else newline) for i, line in enumerate(lines)
    )
    path = tmp_path / "mac.csv"
    path.write_bytes(text.encode())
    b = catalog.prepare_files(path, "mac", data_dir=tmp_path / "o")
    got = sorted((int(e["id"]), float(e["x"]), e["note"]) for e in b.as_data_source("train"))
    read = pd.read_csv(path)
    assert got == list(zip(read["id"], read["x"], read["note"], strict=True))
    assert got[1] == (1, 0.5, "a1\rb")


def test_integers_with_spaces_around_are_integers_as_for_pandas(tmp_path: Path) -> None:
    """pandas' C parser reads " 2 " as the integer 2 (int64): so does catalog (it said
    float64, as only a float could have spaces)."""
    (tmp_path / "s.csv").write_text("a, b\n1, 2\n3,\t4 \n")
    b = catalog.prepare_files(tmp_path / "s.csv", "s", data_dir=tmp_path / "o")
    read = pd.read_csv(tmp_path / "s.csv")
    assert read[" b"].dtype == np.int64 and b.info.features[" b"] == Scalar("int64")
    assert sorted(int(e[" b"]) for e in b.as_data_source("train")) == read[" b"].tolist()


def test_json_integers_past_int64_are_kept_exactly_or_refused(tmp_path: Path) -> None:
    """A JSON integer past int64 became a float64, rounded (18446744073709551615 ->
    1.8446744073709552e19) without a word. Now uint64, as pandas reads it, and where no
    64-bit integer holds the values, one error naming the lines."""
    big = (1 << 64) - 1
    write_jsonl(tmp_path / "u.jsonl", [{"n": 5}, {"n": big}, {"n": 1 << 63}])
    b = catalog.prepare_files(tmp_path / "u.jsonl", "u", data_dir=tmp_path / "o")
    assert b.info.features["n"] == Scalar("uint64")
    assert sorted(int(e["n"]) for e in b.as_data_source("train")) == [5, 1 << 63, big]
    assert str(pd.read_json(tmp_path / "u.jsonl", lines=True)["n"].dtype) == "uint64"
    write_jsonl(tmp_path / "m.jsonl", [{"n": big}, {"n": 1}, {"n": -1}])
    both = r"m.jsonl:3: key 'n' holds integers past int64 \(line 1\) and negative ones \(line 3\)"
    with pytest.raises(SpecError, match=both):
        files_builder(tmp_path / "m.jsonl", "m")
    write_jsonl(tmp_path / "h.jsonl", [{"n": 1}, {"n": 1 << 64}])
    with pytest.raises(SpecError, match=r"h.jsonl:2: key 'n' holds 18446744073709551616, an "
                       "integer past 64 bits"):  # fmt: skip
        files_builder(tmp_path / "h.jsonl", "h")
    notes: list[str] = []
    write_jsonl(tmp_path / "f.jsonl", [{"n": big}, {"n": 0.5}, {"n": -1}])  # as pandas: floats
    assert files_builder(tmp_path / "f.jsonl", "f", note=notes.append).spec.features["n"] == (
        Scalar("float64")
    )
    assert any("holds integers and decimals (the first decimal at line 2)" in n for n in notes)


def test_every_column_wanting_a_fill_is_named_at_once(tmp_path: Path) -> None:
    """A table with missing values in several text columns (house prices' Alley, PoolQC,
    Fence...) was refused one column per prepare; now one error names them all, with the
    line of each one's first missing value, before anything is prepared."""
    header = ["id", *(f"t{i}" for i in range(16)), "ok", "x"]
    rows = [",".join(["1", *("a" for _ in range(16)), "true", "1.5"])]
    rows.append(",".join(["2", *("" if i % 2 else "b" for i in range(16)), "", ""]))
    (tmp_path / "h.csv").write_text("\n".join([",".join(header), *rows]) + "\n")
    with pytest.raises(SpecError) as info:
        files_builder(tmp_path / "h.csv", "h", dtypes={"id": "int8"})
    message = str(info.value)
    assert message.startswith(
        f"{tmp_path / 'h.csv'}: missing values in column(s) 't1' (line 3), 't3' (line 3), "
    )
    assert "'t15' (line 3) and 1 more" in message and "'x'" not in message  # x: NaN
    assert "--fill t1=VALUE --fill t3=VALUE --fill t5=VALUE ..." in message
    filled = {f"t{i}": "" for i in range(1, 16, 2)} | {"ok": "false"}
    assert files_builder(tmp_path / "h.csv", "h", fill=filled).spec.features["x"] == (
        Scalar("float64")
    )


def test_a_json_lines_file_opening_with_a_byte_order_mark(tmp_path: Path) -> None:
    """Windows tools (PowerShell 5's Out-File, Notepad) open UTF-8 files with a BOM: it was
    "bom.jsonl:1: not JSON: Unexpected UTF-8 BOM"."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1, "t": "\xc3\xa9"}\r\n{"a": 2, "t": "x"}\r\n')
    b = catalog.prepare_files(path, "bom", data_dir=tmp_path / "d")
    assert sorted((int(e["a"]), e["t"]) for e in b.as_data_source("train")) == [
        (1, "é"),
        (2, "x"),
    ]
    path.write_bytes(b'{"a": 1}\n\xef\xbb\xbf{"a": 2}\n')  # elsewhere it is a broken line
    with pytest.raises(SourceFormatError, match="bom.jsonl:2: not JSON"):
        files_builder(path, "bom")


@pytest.mark.parametrize("rows", [3, 3000], ids=["one by one", "in batches"])
def test_numbers_written_with_leading_zeros_get_a_note(tmp_path: Path, rows: int) -> None:
    """ZIP codes and IDs like 01234 become the number 1234, as in pandas: the file still says
    where, and how to keep them as written."""
    zips = [str(10000 + i) for i in range(rows)]
    zips[-1] = "02134"
    write_csv(
        tmp_path / "z.csv",
        [{"zip": z, "n": i, "code": "0x" if i == 0 else "007"} for i, z in enumerate(zips)],
    )
    notes: list[str] = []
    b = files_builder(tmp_path / "z.csv", "z", note=notes.append)
    assert b.spec.features["zip"] == Scalar("int64")
    mine = [n for n in notes if "leading zeros" in n]
    assert mine == [
        f"{tmp_path / 'z.csv'}: column 'zip' holds numbers written with leading zeros ('02134' "
        f"at line {rows + 1}): as int64 they lose them, as in pandas; --dtype zip=text "
        "(dtypes={'zip': 'text'}) keeps them as written"
    ]  # n: "0" is no padding; code: text keeps them
    notes.clear()
    kept = catalog.prepare_files(
        tmp_path / "z.csv", "z", data_dir=tmp_path / "d", dtypes={"zip": "text"}
    )
    assert "02134" in {e["zip"] for e in kept.as_data_source("train")}


def test_skip_rows_and_no_header_read_as_pandas_reads(tmp_path: Path) -> None:
    """scikit-learn's CSVs open with a count line (``569,30,malignant,benign``); other files
    have no header row. ``skip_rows``/``--skip-rows`` and ``no_header``/``--no-header`` read
    them as pandas' ``skiprows=1`` and ``header=None`` do (names ``0``, ``1``... as text)."""
    counted = tmp_path / "breast.csv"
    counted.write_text("3,2,malignant,benign\nradius,texture,target\n1.5,2,0\n2.5,3,1\n4,5,0\n")
    b = catalog.prepare_files(counted, "breast", data_dir=tmp_path / "d", skip_rows=1)
    frame = pd.read_csv(counted, skiprows=1)
    assert list(b.info.features) == list(frame.columns)
    got = [{k: plain(v) for k, v in e.items()} for e in b.as_data_source("train")]
    assert got == frame.to_dict("records")
    bare = tmp_path / "bare.csv"
    bare.write_text("1,2.5,x\n3,4.5,y\n")
    run = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(bare), "--no-header",
         "--dtype", "1=float32", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(bare, header=None)
    ds = catalog.data_source("bare", data_dir=tmp_path / "d", split="train")
    assert list(ds.features) == [str(c) for c in frame.columns] == ["0", "1", "2"]
    assert ds.features["1"] == Scalar("float32")
    assert [plain(e["2"]) for e in ds] == ["x", "y"] and [plain(e["0"]) for e in ds] == [1, 3]
    both = tmp_path / "both.csv"
    both.write_text("# made by a tool\n7,8\n9,10\n")
    b = catalog.prepare_files(both, "both", data_dir=tmp_path / "d", skip_rows=1, no_header=True)
    assert [plain(e["1"]) for e in b.as_data_source("train")] == [8, 10]
    with pytest.raises(SpecError, match="skip_rows must be a whole number"):
        files_builder(bare, "x", skip_rows=-1)


def test_a_one_column_file_that_splits_on_spaces_gets_a_note(tmp_path: Path) -> None:
    """scikit-learn's linnerud files are space-separated: read as one column (as pandas does
    without ``sep``), with a note naming ``--delimiter ' '``, which reads them as columns."""
    path = tmp_path / "linnerud.csv"
    path.write_text("Chins Situps Jumps\n5 162 60\n2 110 60\n")
    notes: list[str] = []
    b = files_builder(path, "l", data_dir=tmp_path / "d", note=notes.append)
    assert list(b.info.features) == ["Chins Situps Jumps"]
    assert any("--delimiter ' '" in n for n in notes), notes
    notes.clear()
    b = files_builder(path, "l", data_dir=tmp_path / "d", note=notes.append, delimiter=" ")
    assert list(b.info.features) == ["Chins", "Situps", "Jumps"]
    assert not any("--delimiter" in n for n in notes), notes
    prose = tmp_path / "prose.csv"
    prose.write_text("text\na few words\nmore words here\n")  # no note: rows differ
    notes.clear()
    files_builder(prose, "p", data_dir=tmp_path / "d", note=notes.append)
    assert not any("--delimiter" in n for n in notes), notes


def test_write_spec_of_pandas_names_loads_and_prepares(tmp_path: Path) -> None:
    """A column named ``1960`` is a feature of that name, which builder.yaml's rule refuses:
    --write-spec writes it renamed (``feature_1960``) reading the same column, so the folder
    loads and prepares the same values."""
    from catalog.spec.infer.write import write_spec

    (tmp_path / "w.csv").write_text("1960,'popul',x\n1,2,3\n")
    b = files_builder(tmp_path / "w.csv", "w", data_dir=tmp_path / "d", fill={"'popul'": "0"})
    write_spec(b.spec, tmp_path)
    spec = load_spec(tmp_path)
    assert list(spec.features) == ["feature_1960", "popul", "x"]
    assert spec.splits["train"].options["columns"]["feature_1960"] == "1960"
    assert spec.splits["train"].options["fill"] == {"popul": "0"}
    built = catalog.builder(str(tmp_path), data_dir=tmp_path / "d2")
    built.download_and_prepare()
    assert {k: plain(v) for k, v in built.as_data_source("train")[0].items()} == {
        "feature_1960": 1, "popul": 2, "x": 3,
    }  # fmt: skip


def test_skip_rows_and_no_header_round_trip_through_write_spec(tmp_path: Path) -> None:
    """The spec's options say it too: ``skip_rows`` and ``header`` of the delimited format."""
    from catalog.spec.infer.write import write_spec

    (tmp_path / "c.csv").write_text("2,2,a,b\n1.5,x\n2.5,y\n")
    b = files_builder(tmp_path / "c.csv", "c", data_dir=tmp_path / "d", skip_rows=1, no_header=True)
    write_spec(b.spec, tmp_path)
    options = load_spec(tmp_path).splits["train"].options
    assert options["skip_rows"] == 1 and options["header"] == ["0", "1"]
    built = catalog.builder(str(tmp_path), data_dir=tmp_path / "d2")
    built.download_and_prepare()
    # builder.yaml names features by its rule: column "1" is feature_1
    assert [plain(e["feature_1"]) for e in built.as_data_source("train")] == ["x", "y"]
