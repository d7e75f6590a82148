"""A Croissant record set read in batches (`catalog.formats.croissant.batches`) gives, record
for record and byte for byte, what its row reader gives: on mlcommons' examples (tests/data/
croissant/; those of plain Parquet columns read column by column, the others through the row
reader) and on generated Parquet with nulls, floats in integer fields and numbers in text."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import catalog.formats.croissant.records as croissant_records
from catalog.api.croissant import croissant_builder
from catalog.download import DownloadConfig, DownloadManager
from catalog.errors import SourceFormatError
from catalog.features.batch_encode import BatchEncoder
from catalog.features.codec import RecordCodec
from catalog.formats import FORMATS
from catalog.formats.base import Source
from catalog.formats.croissant.batches import columns_plan
from catalog.formats.croissant.records import Recipe
from catalog.prepare.driver import resources
from catalog.prepare.split_sources import split_sources

EXAMPLES = Path(__file__).parent.parent / "data" / "croissant"
CONTEXT = json.loads((EXAMPLES / "simple-split" / "metadata.json").read_text())["@context"]
FORMAT = FORMATS["croissant"]

#: mlcommons' examples of tables (Parquet read by columns, CSV and JSON by rows).
TABLES = [
    ("simple-parquet/metadata.json", "persons", True),
    ("titanic/metadata.json", "passengers", True),  # CSV read by pyarrow
    ("simple-join/metadata.json", "publications_by_user", False),
    ("simple-split/metadata.json", "data", True),  # split by a regex on the path
]


def _sources(
    tmp_path: Path, croissant: Path, record_set: str, fill: dict[str, str] | None = None
) -> tuple[Any, dict[str, Source]]:
    config = DownloadConfig(offline=True)
    b = croissant_builder(
        f"{croissant}#{record_set}",
        data_dir=tmp_path / "data",
        download_dir=tmp_path / "dl",
        download_config=config,
        fill=fill,
    )
    spec = b.spec
    with DownloadManager(config) as manager:
        files = manager.download_all(resources(spec))
        scratch = Path(tempfile.mkdtemp(dir=tmp_path))
        return spec, split_sources(spec, files, manager, scratch)


def _records_both_ways(spec: Any, source: Source, start: int, stop: int) -> tuple[list, list]:
    """The records of examples ``start..stop-1``: one by one, and from `FORMAT.batches`."""
    encode = RecordCodec(spec.features).encode
    rows = [encode(e) for _, e in list(FORMAT.examples(source))[start:stop]]
    assert BatchEncoder.supports(spec.features)
    encoder = BatchEncoder(spec.features)
    batched: list[bytes] = []
    position = start
    for batch in FORMAT.batches(source, start, stop):  # type: ignore[misc]
        assert batch.start == position and batch.error is None
        if batch.columns is not None:
            batched += encoder.encode(batch.columns, batch.rows)
        else:
            batched += [encode(e) for _, e in batch.examples or ()]
        position += batch.rows
    return rows, batched


@pytest.mark.parametrize(("file", "record_set", "by_columns"), TABLES)
def test_the_examples_give_the_same_records_in_batches(
    tmp_path: Path, file: str, record_set: str, by_columns: bool
) -> None:
    folder = tmp_path / "example"
    shutil.copytree(EXAMPLES / file.split("/")[0], folder)
    spec, sources = _sources(tmp_path, folder / file.split("/", 1)[1], record_set)
    for source in sources.values():
        plan = columns_plan(Recipe(source.options["recipe"], source.options["files"]))
        assert (plan is not None) is by_columns
        rows, batched = _records_both_ways(spec, source, 0, 10**6)
        assert rows and batched == rows
        kinds = {b.columns is not None for b in FORMAT.batches(source, 0, 10**6)}  # type: ignore[misc]
        assert kinds == {by_columns}
        if len(rows) > 2:  # a range inside the split
            assert _records_both_ways(spec, source, 1, len(rows) - 1) == (rows[1:-1], rows[1:-1])


def _field(name: str, kind: str, column: str) -> dict[str, Any]:
    return {
        "@type": "cr:Field",
        "@id": f"rows/{name}",
        "name": name,
        "dataType": kind,
        "source": {"fileSet": {"@id": "parts"}, "extract": {"column": column}},
    }


def _croissant(root: Path, tables: list[pa.Table], fields: list[dict[str, Any]]) -> Path:
    (root / "data").mkdir(parents=True)
    for n, table in enumerate(tables):
        pq.write_table(table, root / "data" / f"part-{n}.parquet", row_group_size=7)
    doc = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": "generated",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [
            {
                "@type": "cr:FileSet",
                "@id": "parts",
                "name": "parts",
                "encodingFormat": "application/x-parquet",
                "includes": "data/*.parquet",
            }
        ],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "rows", "name": "rows", "field": fields}],
    }
    (root / "metadata.json").write_text(json.dumps(doc))
    return root / "metadata.json"


def _table(n: int, seed: int, ints: Any = None) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.2
    texts = [None if nulls[i] else f"row {seed}-{i} é" for i in range(n)]
    floats = rng.normal(size=n)
    floats[rng.random(n) < 0.1] = np.nan
    return pa.table({
        "id": pa.array(np.arange(n) if ints is None else ints),
        "x": pa.array(floats, mask=rng.random(n) < 0.2),
        "x32": pa.array(floats.astype(np.float32)),
        "text": pa.array(texts),
        "big": pa.array(rng.integers(-(2**40), 2**40, n)),
        "flag": pa.array(rng.random(n) < 0.5),
    })  # fmt: skip


FIELDS = [
    _field("id", "sc:Integer", "id"),
    _field("x", "sc:Float", "x"),
    _field("x32", "sc:Float", "x32"),
    _field("text", "sc:Text", "text"),
    _field("big", "sc:Integer", "big"),
    _field("flag", "sc:Boolean", "flag"),
]


@pytest.mark.parametrize(
    "ints",
    [
        None,  # integers: read by columns
        np.arange(40) + 0.75,  # floats in an integer field: cut by the row reader (mlcroissant)
    ],
    ids=["ints", "floats-in-int"],
)
def test_generated_parquet_with_nulls_gives_the_same_records(tmp_path: Path, ints: Any) -> None:
    tables = [_table(40, 0, ints), _table(25, 1), _table(0, 2), _table(33, 3)]
    if ints is not None:
        tables = [tables[0]]
    croissant = _croissant(tmp_path / "set", tables, FIELDS)
    spec, sources = _sources(tmp_path, croissant, "rows", fill={"text": "(none)"})
    (source,) = sources.values()
    assert columns_plan(Recipe(source.options["recipe"], source.options["files"])) is not None
    total = sum(t.num_rows for t in tables)
    rows, batched = _records_both_ways(spec, source, 0, total + 1)  # one past: none there
    kinds = {b.columns is not None for b in FORMAT.batches(source, 0, total)}  # type: ignore[misc]
    assert kinds == {ints is None}  # a float in an integer field: the row reader's cast
    assert len(rows) == total and batched == rows
    for start, stop in [(0, 1), (5, 45), (39, 41), (total - 3, total)]:
        part = _records_both_ways(spec, source, start, stop)
        assert part == (rows[start:stop], rows[start:stop])
    b = croissant_builder(
        croissant, data_dir=tmp_path / "prepared", download_dir=tmp_path / "d",
        fill={"text": "(none)"},
    )  # fmt: skip
    b.download_and_prepare()  # prepare takes the batches: the records the row reader gives
    ds = b.as_data_source(split="rows")
    encode = RecordCodec(spec.features).encode
    assert [encode(dict(r)) for r in ds] == rows
    texts = [t for table in tables for t in table.column("text").to_pylist()]
    assert [r["text"] for r in ds] == [("(none)" if t is None else t) for t in texts]


def test_a_null_integer_is_the_row_readers_error(tmp_path: Path) -> None:
    """A null (mlcroissant gives None): read row by row, the row reader's error naming the
    field and ``--fill``, never the text 'None'; with a fill, read by columns."""
    table = pa.table({"id": pa.array([1, None, 3]), "text": pa.array(["a", "b", None])})
    fields = [_field("id", "sc:Integer", "id"), _field("text", "sc:Text", "text")]
    croissant = _croissant(tmp_path / "set", [table], fields)
    _, sources = _sources(tmp_path, croissant, "rows")
    (source,) = sources.values()
    batches = list(FORMAT.batches(source, 0, 3))  # type: ignore[misc]
    assert [b.rows for b in batches] == [1]
    assert batches[0].examples == [("rows:0", {"id": 1, "text": "a"})]
    assert isinstance(batches[0].error, SourceFormatError)
    assert "field rows/id: a missing value" in str(batches[0].error)
    assert "--fill id=VALUE" in str(batches[0].error)
    with pytest.raises(SourceFormatError, match="--fill id=VALUE"):
        list(FORMAT.examples(source))
    source = Source(source.split, source.files, {**source.options, "fill": {"id": "-1"}},
                    source.features)  # fmt: skip
    with pytest.raises(SourceFormatError, match="--fill text=VALUE"):
        list(FORMAT.examples(source))
    source.options["fill"]["text"] = ""
    got = [e for _, e in FORMAT.examples(source)]
    assert got == [{"id": 1, "text": "a"}, {"id": -1, "text": "b"}, {"id": 3, "text": ""}]
    batches = list(FORMAT.batches(source, 0, 3))  # type: ignore[misc]
    assert [b.columns is not None for b in batches] == [True]


@pytest.mark.parametrize("names", [["red", "blue", "None"], ["red", "blue"]])
def test_an_enumeration_is_read_by_columns_or_is_the_row_readers_error(
    tmp_path: Path, names: list[str]
) -> None:
    """A field referencing an enumeration (a ClassLabel): a null is the class ``--fill``
    names (read by columns), else the row reader's error naming ``--fill``; a fill no
    enumeration holds is an error."""
    table = pa.table({"color": ["red", None, "blue", "red"], "id": [1, 2, 3, 4]})
    color = _field("color", "sc:Text", "color")
    color["references"] = {"field": {"@id": "colors/label"}}
    croissant = _croissant(tmp_path / "set", [table], [_field("id", "sc:Integer", "id"), color])
    doc = json.loads(croissant.read_text())
    doc["recordSet"].insert(0, {
        "@type": "cr:RecordSet", "@id": "colors", "name": "colors", "dataType": "sc:Enumeration",
        "field": [{"@type": "cr:Field", "@id": "colors/label", "name": "label",
                   "dataType": "sc:Text"}],
        "data": [{"colors/label": name} for name in names],
    })  # fmt: skip
    croissant.write_text(json.dumps(doc))
    spec, sources = _sources(tmp_path, croissant, "rows")
    (source,) = sources.values()
    assert spec.features["color"].names == names
    batches = list(FORMAT.batches(source, 0, 4))  # type: ignore[misc]
    assert [b.rows for b in batches] == [1] and batches[0].columns is None
    assert "--fill color=VALUE" in str(batches[0].error)
    with pytest.raises(SourceFormatError, match="--fill color=VALUE"):
        list(FORMAT.examples(source))
    source.options["fill"] = {"color": "None"}
    if "None" in names:
        batches = list(FORMAT.batches(source, 0, 4))  # type: ignore[misc]
        assert [b.columns is not None for b in batches] == [True]
        rows, batched = _records_both_ways(spec, source, 0, 4)
        assert batched == rows and len(rows) == 4
    else:
        with pytest.raises(SourceFormatError, match="not one of the enumeration's values"):
            list(FORMAT.examples(source))


def _no_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a row of a file fails (the splits are counted without reading rows)."""

    def refused(*args: Any) -> Any:
        raise AssertionError(f"a row read: {args[0]}")

    monkeypatch.setattr(croissant_records, "file_rows", refused)


#: The cr:Split record set a split field references (train and test).
SPLITS = {
    "@type": "cr:RecordSet",
    "@id": "splits",
    "name": "splits",
    "dataType": "cr:Split",
    "field": [{"@type": "cr:Field", "@id": "splits/name", "name": "name", "dataType": "sc:Text"}],
    "data": [{"splits/name": "train"}, {"splits/name": "test"}],
}


def test_the_hubs_split_by_path_is_read_by_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hub's layout: a FileSet of Parquet files whose path gives the split (a fileProperty
    field with a regex, referencing a cr:Split record set): each split counted from the
    files' footers, its files read by columns, the split field the same in each row of a
    file."""
    split_field = {
        "@type": "cr:Field", "@id": "rows/split", "name": "split", "dataType": "sc:Text",
        "references": {"field": {"@id": "splits/name"}},
        "source": {"fileSet": {"@id": "parts"}, "extract": {"fileProperty": "fullpath"},
                   "transform": {"regex": "^data/(train|test)/.+parquet$"}},
    }  # fmt: skip
    croissant = _croissant(tmp_path / "set", [], [*FIELDS[:4], split_field])
    for split, seeds in (("train", [0, 1]), ("test", [2])):
        (tmp_path / "set" / "data" / split).mkdir(parents=True)
        for seed in seeds:
            path = tmp_path / "set" / "data" / split / f"{seed}.parquet"
            pq.write_table(_table(30 + seed, seed), path, row_group_size=7)
    doc = json.loads(croissant.read_text())
    doc["distribution"][0]["includes"] = "data/*/*.parquet"
    doc["recordSet"].insert(0, SPLITS)
    croissant.write_text(json.dumps(doc))
    with monkeypatch.context() as patched:
        _no_rows(patched)
        spec, sources = _sources(tmp_path, croissant, "rows", fill={"text": ""})
    assert {k: v.num_examples for k, v in spec.splits.items()} == {"train": 61, "test": 32}
    for name, source in sources.items():
        n = spec.splits[name].num_examples
        kinds = {b.columns is not None for b in FORMAT.batches(source, 0, n)}  # type: ignore[misc]
        assert kinds == {True}
        rows, batched = _records_both_ways(spec, source, 0, n + 1)
        assert len(rows) == n and batched == rows
        assert _records_both_ways(spec, source, 25, 40) == (rows[25:40], rows[25:40])
        decode = RecordCodec(spec.features).decode
        assert {decode(r)["split"] for r in rows} == {name}


def _split_table(n: int, seed: int) -> pa.Table:
    splits = np.where(np.random.default_rng(seed).random(n) < 0.3, "test", "train")
    return _table(n, seed).append_column("part", pa.array(splits.tolist()))


def test_a_split_column_is_counted_from_that_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A split given by a column (referencing a cr:Split record set): counted from that column
    alone: the counts reading every row gives."""
    split_field = _field("split", "sc:Text", "part")
    split_field["references"] = {"field": {"@id": "splits/name"}}
    tables = [_split_table(50, 0), _split_table(31, 1)]
    croissant = _croissant(tmp_path / "set", tables, [*FIELDS[:4], split_field])
    doc = json.loads(croissant.read_text())
    doc["recordSet"].insert(0, SPLITS)
    croissant.write_text(json.dumps(doc))
    parts = [p for t in tables for p in t.column("part").to_pylist()]
    with monkeypatch.context() as patched:
        _no_rows(patched)
        spec, sources = _sources(tmp_path, croissant, "rows", fill={"text": ""})
    assert {k: v.num_examples for k, v in spec.splits.items()} == {
        "train": parts.count("train"),
        "test": parts.count("test"),
    }
    for name, source in sources.items():
        rows = list(FORMAT.examples(source))
        assert len(rows) == spec.splits[name].num_examples
        assert {e["split"] for _, e in rows} == {name}


def _csv_croissant(root: Path, files: list[str]) -> Path:
    """A FileSet of CSV files (``data/part-N.csv``) and fields for its four columns."""
    croissant = _croissant(root, [], [
        _field("id", "sc:Integer", "id"), _field("x", "sc:Float", "x"),
        _field("name", "sc:Text", "name"), _field("flag", "sc:Boolean", "flag"),
    ])  # fmt: skip
    for n, text in enumerate(files):
        (root / "data" / f"part-{n}.csv").write_text(text, newline="")
    doc = json.loads(croissant.read_text())
    doc["distribution"][0].update(encodingFormat="text/csv", includes="data/*.csv")
    croissant.write_text(json.dumps(doc))
    return croissant


def _csv_rows(first: int, n: int) -> str:
    lines = [f'{i},{"" if i % 7 == 0 else i / 4},{"true" if i % 2 else "0"},"name, {i} ""q"""'
             for i in range(first, first + n)]  # fmt: skip
    return "id,x,flag,name\r\n" + "\r\n".join(lines) + "\r\n"


@pytest.mark.parametrize(
    ("change", "by_columns"),
    [
        (None, {True}),  # every column converted by pyarrow (an empty float cell: NaN)
        (("\r\n45,", "\r\n45.75,"), {True, False}),  # a fraction in an integer field: cut
        ((',"name, 50 ""q"""', ',"name, 50 "x'), {True, False}),  # text after a quote: rows
        ((',"name, 61 ""q"""', ""), {True, False}),  # a short row: DictReader's None, filled
    ],
    ids=["regular", "fraction-in-int", "irregular-quote", "short-row"],
)
def test_a_csv_record_set_gives_the_same_records_in_batches(
    tmp_path: Path, change: Any, by_columns: set[bool]
) -> None:
    """A Croissant CSV record set of plain columns is read by pyarrow (`csv_batches`' reader)
    column by column, the row reader's values wherever a value or the bytes may differ."""
    texts = [_csv_rows(0, 40), _csv_rows(40, 30), _csv_rows(70, 25)]
    if change is not None:
        texts = [t.replace(*change) for t in texts]
        assert texts != [_csv_rows(0, 40), _csv_rows(40, 30), _csv_rows(70, 25)]
    croissant = _csv_croissant(tmp_path / "set", texts)
    spec, sources = _sources(tmp_path, croissant, "rows", fill={"name": "-"})
    (source,) = sources.values()
    plan = columns_plan(Recipe(source.options["recipe"], source.options["files"]))
    assert plan is not None and plan.kind == "csv"
    n = spec.splits["rows"].num_examples
    assert n == 95
    kinds = {b.columns is not None for b in FORMAT.batches(source, 0, n)}  # type: ignore[misc]
    assert kinds == by_columns
    rows, batched = _records_both_ways(spec, source, 0, n + 1)
    assert len(rows) == n and batched == rows
    for start, stop in [(3, 44), (41, 75), (60, 95)]:
        assert _records_both_ways(spec, source, start, stop) == (rows[start:stop],) * 2
