"""Structs, lists of structs and lists of lists (Parquet) and objects (JSON Lines) prepared as
nested features, each row as the foreign tool reads it.

Hugging Face datasets writes a dict feature as an Arrow struct, ``Sequence({...})`` as a struct
of lists, ``List({...})`` as a list of structs, ``Sequence(..., length=4)`` as a fixed-size list
and a ``ClassLabel`` as integers with its names in the schema metadata. catalog reads them as
`FeaturesDict`, `Sequence` (a list of dicts decoded as TFDS decodes one: a dict of sequences) and
`ClassLabel` with those names, -1 ("no label") taken as Hugging Face takes it. The files here
are written by Hugging Face datasets itself (Parquet and JSON Lines, ``to_parquet``/``to_json``)
and by pyarrow, and compared with what those tools and pandas read back; a null inside a struct
or a list is an error naming row (line), column and field, a null struct takes a JSON fill, and
a field of a type or a name no feature holds is named.
"""

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
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Text

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _plain(value: Any) -> Any:
    """A decoded value with NumPy arrays and scalars as Python lists and numbers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _prepare(path: Path, data_dir: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``catalog prepare PATH --data-dir DATA_DIR ...`` in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--data-dir", str(data_dir),
         *options],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _as_decoded(value: Any, feature: Feature) -> Any:
    """A row's value as the foreign tool gives it (a list of dicts for a list of structs), laid
    out as catalog decodes `feature` (a Sequence of dicts: a dict of lists, as TFDS does)."""
    if isinstance(feature, FeaturesDict):
        return {name: _as_decoded(value[name], feature[name]) for name in feature}
    if isinstance(feature, Sequence):
        element = feature.feature
        if isinstance(element, FeaturesDict):
            if isinstance(value, dict):  # already a dict of lists (a struct of lists)
                return {name: _as_decoded(value[name], Sequence(element[name])) for name in element}
            return {
                name: [_as_decoded(item[name], element[name]) for item in value] for name in element
            }
        return [_as_decoded(item, element) for item in value]
    return value


def test_hugging_face_nested_features_prepare_as_hugging_face_reads_them(tmp_path: Path) -> None:
    hf = pytest.importorskip("datasets")
    n = 2500  # several of the reader's batches
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 4, n)
    features = hf.Features(
        {
            "id": hf.Value("string"),
            "answers": hf.Sequence({"text": hf.Value("string"), "answer_start": hf.Value("int32")}),
            "meta": {"source": hf.Value("string"), "score": hf.Value("float32"),
                     "tags": hf.List(hf.Value("string"))},
            "objects": hf.List({"bbox": hf.Sequence(hf.Value("float32"), length=4),
                                "label": hf.ClassLabel(names=["cat", "dog", "bird"])}),
            "spans": hf.List(hf.List(hf.Value("int32"))),
            "label": hf.ClassLabel(names=["neg", "pos"]),
        }
    )  # fmt: skip
    rows = {
        "id": [f"q{i}" for i in range(n)],
        "answers": [
            {"text": [f"a{i}_{k}" for k in range(m)], "answer_start": [i + k for k in range(m)]}
            for i, m in enumerate(lengths)
        ],
        "meta": [
            {"source": ["wiki", "web", ""][i % 3], "score": i / 8, "tags": ["x"] * (i % 3)}
            for i in range(n)
        ],
        "objects": [
            [{"bbox": [k / 4, 0.0, 1.0, i / n], "label": (i + k) % 3} for k in range(m)]
            for i, m in enumerate(lengths)
        ],
        "spans": [[list(range(k)) for k in range(m)] for m in lengths],
        "label": [-1 if i % 7 == 0 else i % 2 for i in range(n)],  # -1: Hugging Face's no label
    }
    path = tmp_path / "squad_like.parquet"
    hf.Dataset.from_dict(rows, features=features).to_parquet(str(path))  # its own writer
    done = _prepare(path, tmp_path / "d")
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source("squad_like", split="train", data_dir=tmp_path / "d", download=False)
    got = ds.features
    assert got["meta"] == FeaturesDict(
        {"source": Text(), "score": Scalar("float32"), "tags": Sequence(Text())}
    )
    assert got["answers"] == FeaturesDict(
        {"text": Sequence(Text()), "answer_start": Sequence(Scalar("int32"))}
    )
    assert got["spans"] == Sequence(Sequence(Scalar("int32")))
    label, objects = got["label"], got["objects"]
    assert isinstance(label, ClassLabel) and label.names == features["label"].names
    assert isinstance(objects, Sequence) and isinstance(objects.feature, FeaturesDict)
    assert objects.feature["bbox"] == Sequence(Scalar("float32"), length=4)
    assert objects.feature["label"].names == ["cat", "dog", "bird"]
    want = hf.Dataset.from_parquet(str(path), cache_dir=str(tmp_path / "hf"))  # HF reads it
    assert len(ds) == len(want) == n
    for i, example in enumerate(ds):
        row = {name: _as_decoded(want[i][name], got[name]) for name in got}
        assert _plain(example) == row, i
    batch = ds.__getitems__([5, 0, n - 1])  # the batched read path decodes them alike
    assert [_plain(e) for e in batch] == [_plain(ds[5]), _plain(ds[0]), _plain(ds[n - 1])]
    assert ds[0]["label"] == -1 and ds[1]["label"] == 1
    empty = int(np.argmax(lengths == 0))
    assert ds[empty]["objects"]["bbox"].shape == (0, 4)


def test_structs_written_by_pyarrow_prepare_as_pyarrow_reads_them(tmp_path: Path) -> None:
    n = 1500
    table = pa.table(
        {
            "point": pa.array([{"xy": {"x": i, "y": -i}, "name": f"p{i}"} for i in range(n)]),
            "boxes": pa.array([[[float(i), 1.0]] * (i % 3) for i in range(n)],
                              pa.list_(pa.list_(pa.float64(), 2))),
            "runs": pa.array([[{"start": k, "flag": bool(k % 2)} for k in range(i % 4)]
                              for i in range(n)]),
        }
    )  # fmt: skip
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path, row_group_size=600)
    b = catalog.prepare_files(path, "nested", data_dir=tmp_path / "d", write_spec=tmp_path)
    features = b.info.features
    assert features["boxes"] == Sequence(Sequence(Scalar("float64"), length=2))
    ds = b.as_data_source("train")
    want = pq.read_table(path).to_pylist()
    for i, example in enumerate(ds):
        row = {name: _as_decoded(want[i][name], features[name]) for name in features}
        assert _plain(example) == row, i
    # the builder folder written gives back the same features (a struct's fields by name)
    again = catalog.builder(str(tmp_path), data_dir=tmp_path / "again")
    assert again.info.features == features
    # a field builder.yaml could not name is refused, naming it
    odd = tmp_path / "odd.parquet"
    pq.write_table(pa.table({"c": pa.array([{"1960": 1, "x/y": 2}])}), odd)
    with pytest.raises(SpecError, match=r"column 'c' is of .* its field '1960' \(a field's name"):
        catalog.prepare_files(odd, "odd", data_dir=tmp_path / "d")


def test_nulls_in_structs_take_a_json_fill_or_are_named(tmp_path: Path) -> None:
    def write(name: str, column: Any) -> Path:
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"a": column}), path)
        return path

    d = tmp_path / "d"
    holed = write("holed", pa.array([{"x": 1, "s": "a"}, {"x": None, "s": "b"}]))
    with pytest.raises(
        SourceFormatError, match=r"row 1: column 'a': field 'x' is null; .*fill it in the file"
    ):
        catalog.prepare_files(holed, "holed", data_dir=d)
    listed = write("listed", pa.array([[{"x": 1}], [{"x": 2}, None]]))
    with pytest.raises(SourceFormatError, match=r"row 1: column 'a': element 1 is null"):
        catalog.prepare_files(listed, "listed", data_dir=d)
    gap = write("gap", pa.array([{"x": 1, "s": "a"}, None]))
    with pytest.raises(SourceFormatError, match=r"row 1: column 'a' is null.*--fill a='\{"):
        catalog.prepare_files(gap, "gap", data_dir=d)
    with pytest.raises(SourceFormatError, match=r"options.fill 'a': field 'x': expected a number"):
        catalog.prepare_files(gap, "gap", data_dir=d, fill={"a": '{"x": "no", "s": ""}'})
    b = catalog.prepare_files(gap, "gap", data_dir=d, fill={"a": json.dumps({"x": 0, "s": ""})})
    assert [_plain(e["a"]) for e in b.as_data_source("train")] == [
        {"x": 1, "s": "a"}, {"x": 0, "s": ""}
    ]  # fmt: skip
    raw = write("raw", pa.array([{"x": 1, "b": b"\x00"}]))
    with pytest.raises(SpecError, match=r"column 'a' is of Parquet type struct<.*its field 'b'"):
        catalog.prepare_files(raw, "raw", data_dir=d)


def test_class_labels_from_hugging_face_metadata_are_checked_in_bulk_and_by_row(
    tmp_path: Path,
) -> None:
    names = ["neg", "pos"]
    metadata = {"huggingface": json.dumps({"info": {"features": {
        "id": {"dtype": "int64", "_type": "Value"},
        "label": {"names": names, "_type": "ClassLabel"},
    }}})}  # fmt: skip
    n = 3000  # the bulk reader's batches, then the encoder's
    labels = [-1 if i % 5 == 0 else i % 2 for i in range(n)]
    table = pa.table({"id": np.arange(n), "label": labels}).replace_schema_metadata(metadata)
    path = tmp_path / "labels.parquet"
    pq.write_table(table, path)
    b = catalog.prepare_files(path, "labels", data_dir=tmp_path / "d")
    label = b.info.features["label"]
    assert isinstance(label, ClassLabel) and label.names == names and label.allow_unlabeled
    assert [int(e["label"]) for e in b.as_data_source("train")] == labels
    wrong = table.set_column(1, "label", pa.array([*labels[:-1], 2]))  # only 0..1 (and -1)
    pq.write_table(wrong.replace_schema_metadata(metadata), tmp_path / "wrong.parquet")
    with pytest.raises(
        SourceFormatError, match=rf"row {n - 1}: column 'label': class index 2 is outside -1..1"
    ):
        catalog.prepare_files(tmp_path / "wrong.parquet", "wrong", data_dir=tmp_path / "d")


def test_json_lines_objects_prepare_as_pandas_reads_hugging_face_s_export(tmp_path: Path) -> None:
    hf = pytest.importorskip("datasets")
    pd = pytest.importorskip("pandas")
    n = 1200
    features = hf.Features(
        {
            "id": hf.Value("string"),
            "answers": hf.Sequence({"text": hf.Value("string"), "answer_start": hf.Value("int32")}),
            "objects": hf.List({"bbox": hf.List(hf.Value("float64")), "area": hf.Value("int64")}),
            "meta": {"source": hf.Value("string"), "score": hf.Value("float64")},
            "spans": hf.List(hf.List(hf.Value("int64"))),
        }
    )  # fmt: skip
    rows = {
        "id": [f"q{i}" for i in range(n)],
        "answers": [{"text": [f"a{i}"] * (i % 3), "answer_start": [i] * (i % 3)} for i in range(n)],
        "objects": [
            [{"bbox": [i / 4, 0.5], "area": i * k} for k in range(i % 4)] for i in range(n)
        ],
        "meta": [{"source": ["wiki", "web"][i % 2], "score": i / 3} for i in range(n)],
        "spans": [[list(range(k)) for k in range(i % 3)] for i in range(n)],
    }
    path = tmp_path / "squad_like.jsonl"
    hf.Dataset.from_dict(rows, features=features).to_json(str(path))  # JSON Lines, its writer
    done = _prepare(path, tmp_path / "d")
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source("squad_like", split="train", data_dir=tmp_path / "d", download=False)
    got = ds.features
    assert got["meta"] == FeaturesDict({"source": Text(), "score": Scalar("float64")})
    assert got["objects"] == Sequence(
        {"bbox": Sequence(Scalar("float64")), "area": Scalar("int64")}
    )
    assert got["spans"] == Sequence(Sequence(Scalar("int64")))
    want = pd.read_json(path, lines=True, precise_float=True).to_dict("records")
    assert len(ds) == len(want) == n
    for i, example in enumerate(ds):
        row = {name: _as_decoded(want[i][name], got[name]) for name in got}
        assert _plain(example) == row, i


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        (['{"a": {"x": 1}}', '{"a": {"y": 1}}'],
         r":2: key 'a' holds an object without field 'x', unlike line 1's"),
        (['{"a": {"x": 1}}', '{"a": {"x": 1, "y": 2}}'],
         r":2: key 'a' holds an object with field 'y'"),
        (['{"a": {"x": null}}'], r":1: key 'a': field 'x' is null; .*fill it in the file"),
        (['{"a": [[1], null]}'], r":1: key 'a' holds a list holding a null \(element 1\)"),
        (['{"a": {}}'], r":1: key 'a' holds an empty object"),
        (['{"a": {"1960": 1}}'], r":1: key 'a' holds an object with field '1960'; a field's"),
        (['{"a": {"x/y": 1}}'], r":1: key 'a' holds an object with field 'x/y'; a field's"),
        (['{"a": {"x": 1}}', '{"a": "x"}'],
         r":2: key 'a' holds a string where line 1 holds an object"),
        (['{"a": {"x": 1}}', '{"a": {"x": "s"}}'],
         r":2: key 'a.x' holds a string where line 1 holds an integer"),
    ],
)  # fmt: skip
def test_json_objects_that_no_feature_holds_are_named_by_line(
    tmp_path: Path, lines: list[str], error: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SpecError, match=error):
        catalog.prepare_files(path, "t", data_dir=tmp_path / "d")


def test_a_missing_json_object_takes_its_fields_as_a_json_fill(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": {"x": 1, "s": "p"}}\n{"b": 2}\n')
    with pytest.raises(
        SpecError, match=r"missing values in column\(s\) 'a' \(line 2\).*--fill a='\{"
    ):
        catalog.prepare_files(path, "t", data_dir=tmp_path / "d")
    b = catalog.prepare_files(path, "t", data_dir=tmp_path / "d", fill={"a": '{"x": 0, "s": ""}'})
    assert [_plain(e["a"]) for e in b.as_data_source("train")] == [
        {"x": 1, "s": "p"}, {"x": 0, "s": ""}
    ]  # fmt: skip


def test_values_nested_past_the_limit_are_refused_not_recursed_into(tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(40):
        deep = {"x": deep}
    listed: Any = [1]
    for _ in range(900):  # within json's own recursion, past catalog's
        listed = [listed]
    for name, value in (("objects", deep), ("lists", listed)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"a": value}) + "\n")
        with pytest.raises(SpecError, match=r":1: key 'a[.x\[\]0]*' holds values nested more"):
            catalog.prepare_files(path, name, data_dir=tmp_path / "d")
    column: Any = pa.array([1])
    for _ in range(40):
        column = pa.StructArray.from_arrays([column], ["x"])
    path = tmp_path / "deep.parquet"
    pq.write_table(pa.table({"a": column}), path)
    with pytest.raises(SpecError, match=r"column 'a' .*\.\.\.; not supported yet: lists and"):
        catalog.prepare_files(path, "deep", data_dir=tmp_path / "d")


def test_a_hugging_face_audio_column_is_named_not_taken_for_images(tmp_path: Path) -> None:
    struct = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    features = {"audio": {"sampling_rate": 16000, "_type": "Audio"}}
    metadata = {"huggingface": json.dumps({"info": {"features": features}})}
    table = pa.table({"audio": pa.array([{"bytes": b"RIFF....WAVE", "path": "a.wav"}], struct)})
    path = tmp_path / "speech.parquet"
    pq.write_table(table.replace_schema_metadata(metadata), path)
    with pytest.raises(SpecError, match=r"column 'audio' holds Hugging Face Audio files .* WAV"):
        catalog.prepare_files(path, "speech", data_dir=tmp_path / "d")
