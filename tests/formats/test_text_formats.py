"""The text, tabular and audio source formats: what they read, and errors naming file:line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.features import Audio, ClassLabel, FeaturesDict, Scalar, Sequence, Tensor, Text
from catalog.features.wav import write_wav
from catalog.formats import FORMATS, Source
from catalog.formats.audio.wav_folder import window_starts
from catalog.formats.text.text_cut import pieces


def source(fmt: str, files: dict[str, Path], features: dict[str, Any], **options: Any) -> Source:
    known = FORMATS[fmt].options
    merged = {name: options.get(name, copy.deepcopy(o.default)) for name, o in known.items()}
    feats = FeaturesDict(features)
    problem = FORMATS[fmt].problem(merged, feats)
    assert problem is None, problem
    return Source("train", {role: (path,) for role, path in files.items()}, merged, feats)


def read(fmt: str, files: dict[str, Path], features: dict[str, Any], **options: Any) -> list[Any]:
    return list(FORMATS[fmt].examples(source(fmt, files, features, **options)))


PEOPLE = {"name": Text(), "age": Scalar("float32"), "kind": ClassLabel(names=["a", "b"])}
COLUMNS = {"name": "name", "age": "age", "kind": "kind"}


def test_delimited_maps_columns_fills_missing_values_and_maps_values(tmp_path: Path) -> None:
    file = tmp_path / "p.csv"
    file.write_text('name,age,kind\n"Smith, J",4.5,x\n\nLee,?,b\n')
    got = read("delimited", {"file": file}, PEOPLE, columns=COLUMNS, missing=["?"],
               fill={"age": "-1"}, values={"kind": {"x": "a"}})  # fmt: skip
    assert got == [("0", {"name": "Smith, J", "age": 4.5, "kind": 0}),
                   ("1", {"name": "Lee", "age": -1.0, "kind": 1})]  # fmt: skip


def test_delimited_names_with_a_slash_beside_nested_paths(tmp_path: Path) -> None:
    """TFDS's ``image/filename`` is one name; ``meta/id`` a path into the dict ``meta``."""
    file = tmp_path / "p.csv"
    file.write_text("f,i,n\na.jpg,7,x\n")
    features = {"image/filename": Text(), "meta": {"id": Scalar("int32")}, "image": Text()}
    [(_, got)] = read("delimited", {"file": file}, features,
                      columns={"image/filename": "f", "meta/id": "i", "image": "n"})  # fmt: skip
    assert got == {"image/filename": "a.jpg", "meta": {"id": 7}, "image": "x"}


def test_delimited_doubled_quotes_and_float32_as_tfds(tmp_path: Path) -> None:
    """TFDS's Yelp reader slices raw lines (quotes stay doubled); TFDS stores every float as
    float32, so a float64 feature reads back rounded."""
    file = tmp_path / "p.csv"
    file.write_text('name,age,kind\n" say ""hi"" ",0.56,a\n')
    features = {**PEOPLE, "age": Scalar("float64")}
    [(_, got)] = read("delimited", {"file": file}, features, columns=COLUMNS,
                      doubled_quotes=["name"], strip=["name"], via_float32=["age"])  # fmt: skip
    assert got["name"] == 'say ""hi""' and got["age"] == 0.5600000023841858
    assert got["age"].dtype == np.float64


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [("name,age,kind\nA,?,a\n", {"missing": ["?"]},
      "p.csv:2: column 'age' is missing ('?'); give options.fill a value for feature 'age'"),
     ("name,age,kind\nA,1,a\nB,old,a\n", {},
      "p.csv:3: column(s) age for feature 'age': 'old' is not a number (float32)"),
     ("name,age,kind\nA,1,c\n", {},
      "p.csv:2: column(s) kind for feature 'kind': 'c' is not a class name (a, b) or an index"),
     ("name,age,kind\nA,1\n", {}, "p.csv:2: 2 fields, the header has 3"),
     ("name,age\nA,1\n", {}, "p.csv: no column 'kind'; the columns are name, age"),
     ('name,age,kind\nA,1,a\n"B,2,a\n', {}, "p.csv:3: cannot read this row"),
     ("", {}, "p.csv: empty; expected a header row")],
)  # fmt: skip
def test_delimited_errors_name_file_and_line(
    tmp_path: Path, text: str, options: dict[str, Any], message: str
) -> None:
    file = tmp_path / "p.csv"
    file.write_text(text)
    with pytest.raises(SourceFormatError) as error:
        read("delimited", {"file": file}, PEOPLE, columns=COLUMNS, **options)
    assert message in str(error.value)


def test_delimited_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "p.csv"
    file.write_bytes(b"name,age,kind\nA,1,a\n\xff,2,b\n")
    with pytest.raises(SourceFormatError, match=r"p\.csv:3: not utf-8 text at byte 0 of the line"):
        read("delimited", {"file": file}, PEOPLE, columns=COLUMNS)
    assert (
        read("delimited", {"file": file}, PEOPLE, columns=COLUMNS, encoding="latin-1")[1][1]["name"]
        == "ÿ"
    )


def test_delimited_streams_rows(tmp_path: Path) -> None:
    file = tmp_path / "big.csv"
    file.write_text("name,age,kind\n" + "A,1,a\n" * 100_000 + "B,broken,a\n")
    rows = FORMATS["delimited"].examples(
        source("delimited", {"file": file}, PEOPLE, columns=COLUMNS)
    )
    assert next(rows) == ("0", {"name": "A", "age": 1.0, "kind": 0})  # before the bad row


def test_delimited_quote_none_stack_constant_and_row_index(tmp_path: Path) -> None:
    file = tmp_path / "t.tsv"
    file.write_text('1\t2\t"q\n3\t4\tr"\n')
    features = {"x": Tensor((2,), "int32"), "s": Text(), "i": Scalar("int32"),
                "l": ClassLabel(num_classes=2, allow_unlabeled=True)}  # fmt: skip
    got = read("delimited", {"file": file}, features, delimiter="\t", quoting="none",
               header=["a", "b", "c"], stack={"x": ["a", "b"]}, columns={"s": "c"},
               constant={"l": "-1"}, row_index="i")  # fmt: skip
    assert [e["s"] for _, e in got] == ['"q', 'r"'] and [e["i"] for _, e in got] == [0, 1]
    np.testing.assert_array_equal(got[1][1]["x"], np.array([3, 4], np.int32))
    assert {e["l"] for _, e in got} == {-1}


@pytest.mark.parametrize(
    ("options", "message"),
    [({"columns": {"name": "name", "age": "age"}},
      "the spec's feature 'kind' is not one of them"),
     ({"columns": {**COLUMNS, "nope": "x"}}, "'nope' is not a feature (features: age, kind"),
     ({"columns": COLUMNS, "quoting": "all"}, "options.quoting must be one of minimal, none"),
     ({"columns": COLUMNS, "fill": {"zzz": "0"}}, "'zzz' in fill, values or strip is not a mapped"),
     ({"columns": COLUMNS, "stack": {"age": ["a"]}},
      "feature 'age' is given a value by more than"),
     ({"columns": COLUMNS, "doubled_quotes": ["age"]},
      "options.doubled_quotes: 'age' is not a mapped Text feature"),
     ({"columns": COLUMNS, "via_float32": ["name"]},
      "options.via_float32: 'name' is not a mapped float feature")],
)  # fmt: skip
def test_delimited_spec_problems(options: dict[str, Any], message: str) -> None:
    fmt = FORMATS["delimited"]
    merged = {name: options.get(name, copy.deepcopy(o.default)) for name, o in fmt.options.items()}
    problem = fmt.problem(merged, FeaturesDict(PEOPLE))
    assert problem is not None
    assert message in problem


def test_text_cut_pieces_and_encoding_errors(tmp_path: Path) -> None:
    assert pieces(10, [0.5]) == [(0, 5), (5, 10)] and pieces(3, [0.9, 0.5]) == [
        (0, 2),
        (2, 2),
        (2, 3),
    ]
    file = tmp_path / "t.txt"
    file.write_text("héllo\r\nworld")  # kept as written: \r\n stays
    got = [read("text_cut", {"file": file}, {"text": Text()}, cuts=[0.5], part=p) for p in (0, 1)]
    assert got == [[("train", {"text": "héllo\r"})], [("train", {"text": "\nworld"})]]
    file.write_bytes(b"ok\xff")
    with pytest.raises(SourceFormatError, match=r"t\.txt: not utf-8 text after character 0"):
        read("text_cut", {"file": file}, {"text": Text()})


def test_text_folder_labels_folders_and_errors(tmp_path: Path) -> None:
    for folder, name, text in [
        ("pos", "b.txt", " yes \n"),
        ("pos", "a.txt", "sure"),
        ("neg", "c.txt", "no"),
    ]:
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text(text)
    features = {"text": Text(), "label": ClassLabel(names=["neg", "pos"])}
    got = read("text_folder", {"root": tmp_path}, features)
    assert got == [("neg/c.txt", {"text": "no", "label": "neg"}),
                   ("pos/a.txt", {"text": "sure", "label": "pos"}),
                   ("pos/b.txt", {"text": "yes", "label": "pos"})]  # fmt: skip
    with pytest.raises(SourceFormatError, match="unsup: no such folder"):
        read("text_folder", {"root": tmp_path}, features, folders={"unsup": "neg"})
    (tmp_path / "neg" / "bad.txt").write_bytes(b"\xffbad")
    with pytest.raises(SourceFormatError, match=r"bad\.txt: not utf-8 text at byte 0"):
        read("text_folder", {"root": tmp_path}, features)


SQUAD = {"answers": Sequence({"text": Text(), "answer_start": Scalar("int32")}),
         "id": Text(), "title": Text(), "context": Text(), "question": Text()}  # fmt: skip


def test_squad_json_errors_name_the_place(tmp_path: Path) -> None:
    file = tmp_path / "s.json"
    file.write_text('{"data": [\n  {"title": "t",\n   "paragraphs": [}]}')
    with pytest.raises(SourceFormatError, match=r"s\.json:3:19: not valid JSON"):
        read("squad_json", {"file": file}, SQUAD)
    doc = {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "1", "answers": []}]}]}]}
    file.write_text(json.dumps(doc))
    with pytest.raises(
        SourceFormatError, match=r"data\[0\]\.paragraphs\[0\]\.qas\[0\]\.question: expected a str"
    ):
        read("squad_json", {"file": file}, SQUAD)


def test_wav_folder_lists_labels_and_windows(tmp_path: Path) -> None:
    for name, count in [("yes/a.wav", 3), ("yes/b.wav", 4), ("cat/c.wav", 5), ("noise/n.wav", 10)]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(write_wav(np.arange(count, dtype=np.int16), 100))
    (tmp_path / "list.txt").write_text("./yes/b.wav\n\nnoise//n.wav\n")
    (tmp_path / "README.md").write_text("not audio")
    features = {"audio": Audio(100), "label": ClassLabel(names=["yes", "_silence_", "_unknown_"])}
    common = {"labels": {"noise": "_silence_"}, "other": "_unknown_", "windows": ["noise/*"],
              "window": 4, "hop": 2}  # fmt: skip
    got = read("wav_folder", {"root": tmp_path}, features,
               include={"l": tmp_path / "list.txt"}, **common)  # fmt: skip
    assert [(k, e["label"]) for k, e in got] == [
        ("noise/n.wav@0", "_silence_"), ("noise/n.wav@2", "_silence_"),
        ("noise/n.wav@4", "_silence_"), ("yes/b.wav", "yes"),
    ]  # fmt: skip
    np.testing.assert_array_equal(got[2][1]["audio"], np.arange(4, 8, dtype=np.int16))
    rest = read("wav_folder", {"root": tmp_path}, features, exclude={"l": tmp_path / "list.txt"},
                exclude_paths=["yes/a.wav"], **common)  # fmt: skip
    assert [(k, e["label"]) for k, e in rest] == [("cat/c.wav", "_unknown_")]
    (tmp_path / "list.txt").write_text("yes/b.wav\nyes/zzz.wav\n")
    with pytest.raises(
        SourceFormatError, match=r"list\.txt:2: 'yes/zzz\.wav' is not in the folder"
    ):
        read(
            "wav_folder",
            {"root": tmp_path},
            features,
            include={"l": tmp_path / "list.txt"},
            **common,
        )
    with pytest.raises(SourceFormatError, match="label 'cat' is no class name of feature 'label'"):
        read("wav_folder", {"root": tmp_path}, features)
    assert list(window_starts(24000, 16000, 8000)) == [0] and list(window_starts(10, 16, 8)) == []
