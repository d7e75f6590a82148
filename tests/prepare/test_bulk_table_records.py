"""Tables prepared column by column (`catalog.features.batch_encode`, the table batch readers)
write the shards the per-example path writes, byte for byte: every column type, missing
values filled (``--fill``) or NaN, unicode and empty texts, a label column; CSV and Parquet."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import catalog
from catalog.errors import SourceFormatError
from catalog.features.batch_encode import BatchEncoder

ROWS = 3000  # several pyarrow blocks with a small block size


def _shards(data_dir: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data_dir.rglob("*.array_record-*"))
    }


def _prepare_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path, **options: object
) -> tuple[dict[str, str], dict[str, str], int]:
    from catalog.formats.tables import csv_batches

    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 12)
    encoded = []
    real = BatchEncoder.encode_packed
    monkeypatch.setattr(
        BatchEncoder, "encode_packed", lambda self, c, r: encoded.append(r) or real(self, c, r)
    )
    bulk = tmp_path / "bulk"
    catalog.prepare_files(str(path), "t", data_dir=str(bulk), **options)  # type: ignore[arg-type]
    rows_in_bulk = sum(encoded)
    with monkeypatch.context() as m:  # the per-example path: RecordCodec.encode per row
        m.setattr(BatchEncoder, "supports", staticmethod(lambda features: False))
        one = tmp_path / "one"
        catalog.prepare_files(str(path), "t", data_dir=str(one), **options)  # type: ignore[arg-type]
    return _shards(bulk), _shards(one), rows_in_bulk


def _row(i: int) -> tuple[str, str, str, str, str, str]:
    n = "" if i % 7 == 0 else str(i - 1500)  # missing: filled
    x = "" if i % 11 == 0 else repr(i / 3 - 400)  # missing: NaN
    flag = ["true", "False", "TRUE", "false"][i % 4]
    text = ["", "é", "naïve ✓", "x,y", '"q"', "日本語"][i % 6]
    label = ["cat", "dog", "bird"][i % 3]
    small = str(i % 100 - 50)
    return n, x, flag, text, label, small


def test_a_csv_of_every_column_type_gives_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.csv"
    lines = ["n,x,flag,text,label,small"]
    for i in range(ROWS):
        n, x, flag, text, label, small = _row(i)
        quoted = f'"{text.replace(chr(34), chr(34) * 2)}"' if text else '""'
        lines.append(",".join([n, x, flag, quoted, label, small]))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    bulk, one, rows = _prepare_both_ways(
        tmp_path,
        monkeypatch,
        path,
        fill={"n": "0", "text": "∅"},
        label="label",
        dtypes={"small": "int8"},
    )
    assert rows == ROWS and bulk and bulk == one


def test_a_parquet_file_with_nulls_gives_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [_row(i) for i in range(ROWS)]
    table = pa.table(
        {
            "n": pa.array([int(r[0]) if r[0] else None for r in rows], pa.int64()),
            "x": pa.array([float(r[1]) if r[1] else None for r in rows], pa.float64()),
            "flag": pa.array([r[2].lower() == "true" for r in rows]),
            "text": pa.array([r[3] if i % 5 else None for i, r in enumerate(rows)]),
            "label": pa.array([r[4] for r in rows]),
            "small": pa.array([int(r[5]) for r in rows], pa.int8()),
            "f32": pa.array([i / 7 for i in range(ROWS)], pa.float32()),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)
    bulk, one, encoded = _prepare_both_ways(
        tmp_path, monkeypatch, path, fill={"n": "-1", "text": ""}, label="label"
    )
    assert encoded == ROWS and bulk and bulk == one


def test_a_parquet_file_prepares_without_importing_pandas(tmp_path: Path) -> None:
    """Column values are read from pyarrow's buffers (`table_batches.numpy_values`), not by
    pyarrow's ``to_numpy``, which imports pandas: a third of a second and ~50 MB of a
    prepare that needs none of it (a fresh process, as `catalog prepare` runs)."""
    path = tmp_path / "t.parquet"
    rows = range(2000)
    table = pa.table(
        {
            "n": pa.array(list(rows), pa.int64()),
            "x": pa.array([i / 3 for i in rows]),
            "flag": pa.array([i % 2 == 0 for i in rows]),
            "text": pa.array([f"row {i}" for i in rows]),
        }
    )
    pq.write_table(table, path)
    assert not _prepare_imports_pandas(path, tmp_path, "")


def test_a_csv_scans_and_prepares_without_importing_pandas(tmp_path: Path) -> None:
    """The type scan and the prepare of a CSV make their pyarrow arrays and masks from
    buffers (`table_batches.arrow_array`): ``pa.array`` and ``pa.scalar`` import pandas."""
    path = tmp_path / "t.csv"
    lines = ["n,x,flag,code,big,label,text"] + [
        f"{i if i % 50 else ''},{i / 7:.4f},{'true' if i % 3 else 'false'},"
        f"{i % 90:03d},{i * 10**6},{'ab'[i % 2]},{'NA' if i < 3 else f'row {i}'}"
        for i in range(3000)
    ]
    path.write_text("\n".join(lines) + "\n")  # missing values, zero-padded codes, NA texts
    assert not _prepare_imports_pandas(path, tmp_path, ", label='label', fill={'n': '-1'}")


def _prepare_imports_pandas(path: Path, tmp_path: Path, arguments: str) -> bool:
    """Whether `catalog.prepare_files(path, ...<arguments>)` imports pandas, in a fresh
    process (as `catalog prepare` runs)."""
    import subprocess
    import sys

    code = (
        "import sys, catalog; "
        f"catalog.prepare_files(sys.argv[1], 'no_pandas', data_dir=sys.argv[2]{arguments}); "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(tmp_path / "data")],
        capture_output=True, text=True, check=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    answer = done.stdout.strip().splitlines()[-1]
    assert answer in ("True", "False"), done.stdout + done.stderr
    return answer == "True"


def test_parquet_list_columns_give_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists of numbers, booleans and texts (Hugging Face's ``Sequence`` columns: token ids,
    scores, masks, tokens), empty lists and sliced batches among them, beside text and numbers;
    a list column with a null list goes example by example (its fill) and gives the same
    shards too."""
    import numpy as np

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 9, ROWS)
    starts = np.concatenate([[0], np.cumsum(lengths)])

    def lists(values: np.ndarray, kind: pa.DataType) -> pa.Array:
        return pa.ListArray.from_arrays(pa.array(starts, pa.int32()), pa.array(values, kind))

    total = int(starts[-1])
    table = pa.table(
        {
            "text": [f"row {i}" for i in range(ROWS)],
            "input_ids": lists(rng.integers(-30000, 30000, total), pa.int32()),
            "ids64": lists(rng.integers(0, 2**40, total), pa.int64()),
            "scores": lists(rng.normal(size=total), pa.float64()),
            "half": lists(rng.normal(size=total).astype(np.float32), pa.float32()),
            "mask": lists(rng.integers(0, 2, total).astype(bool), pa.bool_()),
            "tokens": lists(
                np.array(["", "é", "naïve ✓", "x,y", "日本語", "word"])[np.arange(total) % 6],
                pa.string(),
            ),
            "n": np.arange(ROWS),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)  # batches cut across row groups
    bulk, one, rows = _prepare_both_ways(tmp_path, monkeypatch, path)
    assert rows == ROWS and bulk and bulk == one
    ids = pa.array([[1, 2], None, [], [3]] * 50, pa.list_(pa.int64()))
    words = pa.array([[], [], ["a"], []] * 50, pa.list_(pa.string()))  # a batch of empty lists
    pq.write_table(pa.table({"ids": ids, "words": words}), path)
    bulk, one, rows = _prepare_both_ways(tmp_path / "nulls", monkeypatch, path, fill={"ids": "[]"})
    assert bulk and bulk == one
    empty = pa.array([[]] * 50, pa.list_(pa.string()))  # a batch whose lists are all empty
    pq.write_table(
        pa.table({"words": empty, "ids": pa.array([[]] * 50, pa.list_(pa.int8()))}), path
    )
    bulk, one, rows = _prepare_both_ways(tmp_path / "empty", monkeypatch, path)
    assert rows == 50 and bulk and bulk == one


def test_parquet_struct_columns_give_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Structs (Hugging Face's dict features, SQuAD's ``answers``: a struct of lists): one of
    fixed-size fields (laid out inside the record's fixed part), one of texts and lists, one
    inside another; a list of structs (a detection dataset's ``objects``: fixed-size boxes,
    labels, lists, a struct); a fixed-size list (an embedding) and lists of them; lists of
    lists of numbers and of texts, empty ones among them; in batches
    cut across row groups, encoded in bulk to the per-example path's bytes. A struct column
    with a null struct goes example by example (its fill)."""
    rows = ROWS
    lengths = [i % 4 for i in range(rows)]
    table = pa.table(
        {
            "id": [f"q{i}" for i in range(rows)],
            "point": [{"x": i - 700, "y": i / 7, "ok": bool(i % 3)} for i in range(rows)],
            "answers": pa.array(
                [{"text": ["é", f"a{i}"][: k % 3], "start": list(range(k))}
                 for i, k in enumerate(lengths)],
                pa.struct([("text", pa.list_(pa.string())), ("start", pa.list_(pa.int32()))]),
            ),
            "meta": [{"source": ["wiki", "", "日本語"][i % 3], "at": {"line": i, "col": -i}}
                     for i in range(rows)],
            "objects": pa.array(
                [[{"bbox": [k / 4, 0.5, 1.0, i / rows], "label": k, "name": "x" * k,
                   "points": [float(i)] * (2 * k), "part": {"id": k}} for k in range(n)]
                 for i, n in enumerate(lengths)],
                pa.list_(pa.struct([("bbox", pa.list_(pa.float32(), 4)), ("label", pa.int64()),
                                    ("name", pa.string()), ("points", pa.list_(pa.float32())),
                                    ("part", pa.struct([("id", pa.int16())]))])),
            ),
            "embedding": pa.array([[i / 3, -i / 3, 0.25] for i in range(rows)],
                                  pa.list_(pa.float64(), 3)),
            "boxes": pa.array([[[float(i), 1.0]] * k for i, k in enumerate(lengths)],
                              pa.large_list(pa.list_(pa.float64(), 2))),
            "polygons": pa.array([[[i / 2] * j for j in range(k)] for i, k in enumerate(lengths)],
                                 pa.list_(pa.list_(pa.float32()))),
            "words": [[["é", "w"][: j % 3] for j in range(k)] for k in lengths],
        }
    )  # fmt: skip
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=700)
    bulk, one, encoded = _prepare_both_ways(tmp_path, monkeypatch, path)
    assert encoded == rows and bulk and bulk == one
    holed = pa.array([{"x": 1, "s": "a"}, None] * 30)
    pq.write_table(pa.table({"a": holed}), path)
    fill = {"a": '{"x": 0, "s": ""}'}
    bulk, one, encoded = _prepare_both_ways(tmp_path / "nulls", monkeypatch, path, fill=fill)
    assert encoded == 0 and bulk and bulk == one


def test_hugging_face_class_labels_in_lists_give_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hugging Face's ``Sequence(ClassLabel)`` (CoNLL's ``ner_tags``) and a ClassLabel inside a
    list of structs (a detection dataset's ``category``), named in the file's metadata,
    encoded in bulk to the per-example path's bytes; a label past the names goes to the row
    reader, which names it."""
    import json

    tags = ["O", "B-PER", "I-PER", "B-LOC"]
    features = {
        "ner_tags": {"feature": {"names": tags, "_type": "ClassLabel"}, "_type": "List"},
        "objects": {"feature": {"bbox": {"feature": {"dtype": "float32", "_type": "Value"},
                                         "length": 4, "_type": "List"},
                                "category": {"names": ["cat", "dog"], "_type": "ClassLabel"}},
                    "_type": "List"},
        "label": {"names": ["neg", "pos"], "_type": "ClassLabel"},
    }  # fmt: skip
    metadata = {"huggingface": json.dumps({"info": {"features": features}})}
    lengths = [i % 5 for i in range(ROWS)]
    box = pa.list_(pa.struct([("bbox", pa.list_(pa.float32(), 4)), ("category", pa.int64())]))
    table = pa.table(
        {
            "ner_tags": [[(i + k) % 4 for k in range(n)] for i, n in enumerate(lengths)],
            "objects": pa.array([[{"bbox": [0.0, 0.5, k, i], "category": k % 2}
                                  for k in range(n % 3)] for i, n in enumerate(lengths)], box),
            "label": [-1 if i % 9 == 0 else i % 2 for i in range(ROWS)],
        }
    ).replace_schema_metadata(metadata)  # fmt: skip
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=1000)
    bulk, one, encoded = _prepare_both_ways(tmp_path, monkeypatch, path)
    assert encoded == ROWS and bulk and bulk == one
    wrong = table.set_column(0, "ner_tags", pa.array([[0, 4]] * ROWS))
    pq.write_table(wrong.replace_schema_metadata(metadata), path)
    with pytest.raises(SourceFormatError, match=r"row 0: column 'ner_tags': element 1: class"):
        catalog.prepare_files(path, "w", data_dir=tmp_path / "w")


def test_json_lines_give_the_per_example_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON Lines read a block at a time by pyarrow's parser (cut small here: lines across
    blocks, several files) encode to the per-example path's bytes: integers among floats,
    escapes and accents, lists, objects, lists of objects, missing keys with fills, blank and
    ``\\r\\n`` lines, a byte order mark; blocks the row reader must read (``NaN``, a key given
    twice) give its values, and two objects on one line its error, naming the line."""
    import json

    from catalog.formats.tables import json_batches

    monkeypatch.setattr(json_batches, "BLOCK_BYTES", 1 << 12)

    def line(i: int) -> str:
        row: dict[str, object] = {
            "id": i, "x": i / 3 if i % 4 else i, "ok": bool(i % 2),
            "text": ["é\\n\"q\"", "naïve ✓", "", "日本語", "\\ud83d\\ude00"][i % 5],
            "tags": ["a", "bc"][: i % 3], "ids": list(range(i % 4)),
            "meta": {"source": "wiki", "score": i * 1.5},
            "objects": [{"label": k, "bbox": [k, 0.5, 1.0, 2.0]} for k in range(i % 3)],
        }  # fmt: skip
        if i % 11 == 0:
            del row["text"]  # missing: filled
        if i % 13 == 0:
            row["x"] = None  # null float: NaN
        return json.dumps(row, ensure_ascii=i % 2 == 0)

    folder = tmp_path / "data"
    folder.mkdir()
    for part in range(2):
        lines = [line(part * 1000 + i) for i in range(1000)]
        lines[10] += "\r"  # a \r\n line
        lines.insert(20, "")  # a blank line
        text = "\ufeff" * (part == 0) + "\n".join(lines) + "\n"
        (folder / f"train-{part}.jsonl").write_text(text)
    fill = {"text": ""}
    bulk, one, encoded = _prepare_both_ways(tmp_path / "a", monkeypatch, folder, fill=fill)
    assert encoded == 2000 and bulk and bulk == one
    odd = folder / "train-1.jsonl"
    rows = odd.read_text().splitlines()
    rows[500] = rows[500].replace('"ok": ', '"ok": true, "ok": ', 1)  # the row reader: last
    at = next(i for i, row in enumerate(rows) if row.startswith('{"id": 1900,'))
    rows[at] = rows[at].replace('"x": 1900,', '"x": NaN,', 1)  # Python's json reads it
    assert '"x": NaN' in rows[at]
    odd.write_text("\n".join(rows) + "\n")
    bulk, one, encoded = _prepare_both_ways(tmp_path / "b", monkeypatch, folder, fill=fill)
    assert 0 < encoded < 2000 and bulk and bulk == one
    rows[700] = rows[700] + " " + rows[701]  # two objects on one line
    odd.write_text("\n".join(rows) + "\n")
    with pytest.raises(SourceFormatError, match=r"train-1.jsonl:701: not JSON: Extra data"):
        catalog.prepare_files(folder, "t", data_dir=tmp_path / "c", fill=fill)


def test_a_json_line_past_the_budget_is_the_row_reader_s_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line longer than the reader's budget stops the block reader where the row reader
    would stop, with its error (never a block of it parsed)."""
    import json

    from catalog.formats.tables import json_batches

    path = tmp_path / "t.jsonl"
    rows = [{"t": "x" * (9000 if i == 40 else 10)} for i in range(60)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setattr(json_batches, "BLOCK_BYTES", 1 << 10)
    monkeypatch.setattr(json_batches, "LINE_BYTES", 1 << 12)  # the scan's own is larger
    with pytest.raises(SourceFormatError, match=r"t.jsonl:41: a line longer than"):
        catalog.prepare_files(path, "t", data_dir=tmp_path / "d")
    assert not list((tmp_path / "d").rglob("*.array_record-*"))
