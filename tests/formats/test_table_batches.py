"""Tables read in batches and encoded column by column (issue 37): the records are the row
readers' byte for byte, and every error is the row readers' (same message, same line), on
varied tables, irregular CSV included; a split's units read in turn resume one stream."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog._util.optional import importable
from catalog.errors import CatalogError
from catalog.features import ClassLabel, FeaturesDict, Scalar, Text, batch_encode
from catalog.features.batch_encode import BatchEncoder, TextColumn
from catalog.features.codec import RecordCodec
from catalog.formats import FORMATS, Source
from catalog.formats.tables import csv_batches, table_batches
from catalog.spec.infer.common import complete_options

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
NAMES = ["cat", "dog", "x,y", 'q"t', "-1"]


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except CatalogError as error:
        return type(error).__name__, str(error)


def _row_records(fmt: str, source: Source, start: int = 0, stop: int | None = None) -> list[bytes]:
    codec = RecordCodec(source.features)
    records = [codec.encode(e) for _, e in FORMATS[fmt].examples(source)]
    return records[start:stop]


COLUMNAR: list[int] = []  # rows that came as checked columns (not the row reader's)


def _batch_records(fmt: str, source: Source, start: int, stop: int) -> list[bytes]:
    codec, encoder = RecordCodec(source.features), BatchEncoder(source.features)
    batches = FORMATS[fmt].batches
    assert batches is not None
    records: list[bytes] = []
    position = start
    for batch in batches(source, start, stop):
        assert batch.start == position
        if batch.columns is not None:
            records += encoder.encode(batch.columns, batch.rows)
            COLUMNAR.append(batch.rows)
        else:
            assert batch.examples is not None and len(batch.examples) == batch.rows
            if fmt == "delimited":  # the row reader's keys: the rows' positions
                keys = [key for key, _ in batch.examples]
                assert keys == [str(batch.start + i) for i in range(batch.rows)]
            records += [codec.encode(e) for _, e in batch.examples]
            if batch.error is not None:
                raise batch.error
        position += batch.rows
    return records


def _text_column(texts: list[str]) -> TextColumn:
    data = [t.encode() for t in texts]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return TextColumn(offsets, np.frombuffer(b"".join(data), np.uint8))


@SETTINGS
@given(st.data())
def test_batch_encoder_gives_the_row_records(data: Any) -> None:
    dtypes = ["int8", "uint16", "int32", "int64", "float16", "float32", "float64", "bool"]
    kinds = data.draw(st.lists(st.sampled_from([*dtypes, "text", "label", "label2"]), min_size=1))
    rows = data.draw(st.integers(0, 30))
    features: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    for i, kind in enumerate(kinds):
        name = f"f{i}"
        if kind == "text":
            texts = data.draw(st.lists(st.text(), min_size=rows, max_size=rows))
            texts = [t.encode("utf-8", "replace").decode() for t in texts]
            features[name], columns[name] = Text(), texts
        elif kind.startswith("label"):
            n = 3 if kind == "label" else 300
            feature = ClassLabel(num_classes=n, allow_unlabeled=data.draw(st.booleans()))
            low = -1 if feature.allow_unlabeled else 0
            values = data.draw(st.lists(st.integers(low, n - 1), min_size=rows, max_size=rows))
            features[name], columns[name] = feature, np.array(values, np.int64)
        else:
            feature = Scalar(kind)
            if kind == "bool":
                values = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
            elif feature.dtype.kind == "f":
                width = feature.dtype.itemsize * 8  # NaN, infinities, any value
                values = data.draw(st.lists(st.floats(width=width), min_size=rows, max_size=rows))
            else:
                info = np.iinfo(feature.dtype)
                ints = st.integers(int(info.min), int(info.max))
                values = data.draw(st.lists(ints, min_size=rows, max_size=rows))
            features[name], columns[name] = feature, np.array(values).astype(feature.dtype)
    spec = FeaturesDict(features)
    codec = RecordCodec(spec)
    want = [codec.encode({n: columns[n][i] for n in features}) for i in range(rows)]
    given_columns = {
        n: _text_column(c) if isinstance(features[n], Text) else c for n, c in columns.items()
    }
    shift = data.draw(st.integers(0, 3))  # texts of a slice: their bytes after others'
    for name, column in given_columns.items():
        if isinstance(column, TextColumn):
            garbage = np.full(shift, ord("z"), np.uint8)
            data_ = np.concatenate([garbage, column.data])
            given_columns[name] = TextColumn(column.offsets + shift, data_)
    assert BatchEncoder(spec).encode(given_columns, rows) == want


def test_texts_are_encoded_in_bulk_only_with_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow joins texts into records (every reader giving text columns needs it anyway):
    without it a table with a Text is encoded example by example."""
    with_text = FeaturesDict({"n": Scalar("int64"), "t": Text()})
    assert BatchEncoder.supports(with_text)
    monkeypatch.setattr(
        batch_encode, "importable", lambda name: name != "pyarrow" and importable(name)
    )
    assert not BatchEncoder.supports(with_text)
    assert BatchEncoder.supports(FeaturesDict({"n": Scalar("int64")}))


def _csv_source(
    tmp: Path, text: str, features: FeaturesDict, files: int = 1, **given: Any
) -> Source:
    path = tmp / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    options = complete_options(
        "delimited",
        {"columns": {n: n for n in features}, "missing": [""], "incomplete": "missing", **given},
    )
    return Source("train", {"file": (path,) * files}, options, features)


FIELDS = st.one_of(
    st.integers(-(2**64), 2**64).map(str),
    st.floats().map(repr),
    st.sampled_from(["", " 5", "1_000", "+7", "007", "nan", "-nan", "Inf", "1e3", ".5", "5."]),
    st.sampled_from(["0x10", "1e", "1.e5", "+.5", "-", ".", "1-2", "1e+", "99999999999999999999"]),
    st.sampled_from(["true", "FALSE", "True", " true", "1", "0", "tRuE", "cat", "dog", "-1"]),
    st.sampled_from(NAMES),
    st.sampled_from(["NA", "null", "N/A", "None", "<NA>", "#N/A"]),  # pandas' missing values
    st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(',;"\n\r'), max_size=8),
)


@st.composite
def csv_tables(draw: Any) -> tuple[str, FeaturesDict, dict[str, Any]]:
    """A CSV text (regular or not) and features to read it with."""
    kinds = draw(st.lists(st.sampled_from(["int64", "int8", "float64", "float32", "bool",
                                           "text", "label"]), min_size=1, max_size=4))  # fmt: skip
    names = [f"c{i}" for i in range(len(kinds))]
    features: dict[str, Any] = {}
    for name, kind in zip(names, kinds, strict=True):
        if kind == "text":
            features[name] = Text()
        elif kind == "label":
            features[name] = ClassLabel(names=NAMES, allow_unlabeled=draw(st.booleans()))
        else:
            features[name] = Scalar(kind)
    rows = draw(st.lists(st.lists(FIELDS, min_size=len(names), max_size=len(names)), max_size=12))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    given: dict[str, Any] = {}
    if draw(st.booleans()):
        writer.writerow(names)
    else:  # a file without a header row: the names given
        given["header"] = names
    writer.writerows(rows)
    text = out.getvalue()
    for _ in range(draw(st.integers(0, 2))):  # make it irregular here and there
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(['"', "\r", ",", "\n", "\n\n", "x"])) + text[cut:]
    fill = {n: draw(st.sampled_from(["0", "nan", "true", "cat", ""])) for n in names
            if draw(st.booleans())}  # fmt: skip
    some = st.sampled_from(["", "0", "1", "7", "nan", " 5", "true", "cat", "dog", "x,y", "é"])
    values = {n: draw(st.dictionaries(some, some, max_size=3)) for n in names
              if draw(st.booleans())}  # fmt: skip
    return text, FeaturesDict(features), {"fill": fill, "values": values, **given}


@SETTINGS
@given(csv_tables(), st.data())
def test_csv_batches_match_the_row_reader(tmp_path: Path, table: Any, data: Any) -> None:
    text, features, given_ = table
    source = _csv_source(tmp_path, text, features, **given_)
    want = _outcome(lambda: _row_records("delimited", source))
    if want[0] != "ok":
        assert _outcome(lambda: _batch_records("delimited", source, 0, 10**9)) == want
        return
    n = len(want[1])
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n + 2))
    assert _batch_records("delimited", source, start, stop) == want[1][start:stop]


def test_csv_batches_read_header_and_values_in_bulk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file without a header row (``header``) and texts given others (``values``), as
    ag_news is read: column by column, the row reader's records."""
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)
    features = FeaturesDict({"label": ClassLabel(names=["World", "Sports"]), "title": Text()})
    text = "".join(f'"{1 + i % 2}","title {i}, ""quoted"""\n' for i in range(1000))
    source = _csv_source(
        tmp_path,
        text,
        features,
        header=["label", "title"],
        values={"label": {"1": "World", "2": "Sports"}, "title": {'title 7, "quoted"': "7"}},
    )
    want = _row_records("delimited", source)
    COLUMNAR.clear()
    assert _batch_records("delimited", source, 0, 1000) == want
    assert sum(COLUMNAR) == 1000
    assert _batch_records("delimited", source, 10, 500) == want[10:500]


def test_csv_batches_fall_back_mid_file_with_the_row_readers_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)  # many blocks, many batches
    lines = [f"{i},{i / 3},row {i}" for i in range(2000)]
    features = FeaturesDict({"a": Scalar("int64"), "b": Scalar("float64"), "c": Text()})
    good = "a,b,c\n" + "\n".join(lines) + "\n"
    source = _csv_source(tmp_path, good, features)
    want = _row_records("delimited", source)
    COLUMNAR.clear()
    assert _batch_records("delimited", source, 0, 2000) == want
    assert sum(COLUMNAR) == 2000 and len(COLUMNAR) > 10  # checked column by column
    assert _batch_records("delimited", source, 700, 1500) == want[700:1500]
    for bad in ['"x"y', "1,2,3,4", "1.5", " 17", '"a\rb"']:  # refused, or only Python's
        broken = lines.copy()
        broken[1500] = bad + lines[1500][len(bad) :] if bad != "1,2,3,4" else bad
        source = _csv_source(tmp_path, "a,b,c\n" + "\n".join(broken) + "\n", features)
        want_ = _outcome(lambda source=source: _row_records("delimited", source))
        got = _outcome(lambda source=source: _batch_records("delimited", source, 0, 2000))
        assert got == want_, bad


@pytest.mark.parametrize(
    "changes",
    [
        {1500: " 17,0.5,x"},  # a number only Python reads
        {1500: "1_000,0.5,x", 1700: "3,1_0.5,y"},  # two, batches apart
        {1500: "5,6"},  # a short row (incomplete: missing): c gets its fill
        {1500: "5", 1501: "6,7", 1502: "8"},  # short rows in a run
        dict.fromkeys(range(0, 2000, 97), "5"),  # short rows in every batch
    ],
    ids=["space", "underscores", "short", "short-run", "short-everywhere"],
)
def test_csv_batches_fall_back_for_one_batch_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict[int, str]
) -> None:
    """A row only the row reader reads sends its batch there, not the rest of the file."""
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)
    lines = [f"{i},{i / 3},row {i}" for i in range(2000)]
    for at, line in changes.items():
        lines[at] = line
    features = FeaturesDict({"a": Scalar("int64"), "b": Scalar("float64"), "c": Text()})
    text = "a,b,c\n" + "\n".join(lines) + "\n"
    source = _csv_source(tmp_path, text, features, fill={"b": "nan", "c": "none"})
    want = _row_records("delimited", source)
    COLUMNAR.clear()
    assert _batch_records("delimited", source, 0, 2000) == want
    batches = len(COLUMNAR)
    assert batches > 10
    if len(changes) < 5:  # the other batches still came column by column
        assert sum(COLUMNAR) >= 2000 - len(changes) * 2000 // batches * 2
    else:  # short rows put back in place: every batch column by column
        assert sum(COLUMNAR) == 2000
    for start, stop in [(1490, 1510), (1501, 1502), (0, 1501), (1500, 2000)]:
        assert _batch_records("delimited", source, start, stop) == want[start:stop]
    without_fill = _csv_source(tmp_path, text, features)  # an error, the row reader's line
    want_ = _outcome(lambda: _row_records("delimited", without_fill))
    assert _outcome(lambda: _batch_records("delimited", without_fill, 0, 2000)) == want_


def test_the_row_reader_converts_only_from_an_irregular_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes only Python's csv reads alike (a lone \\r in a quoted value) send the rest of
    the file to the row reader, which parses the rows before them again, not converting them."""
    from catalog.formats.tables import delimited

    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 8)  # read ahead: 32 blocks
    lines = [f"{i},row {i}" for i in range(2000)]
    lines[1500] = '1500,"a\rb"'
    features = FeaturesDict({"a": Scalar("int64"), "c": Text()})
    source = _csv_source(tmp_path, "a,c\n" + "\n".join(lines) + "\n", features)
    want = _row_records("delimited", source)
    converted = []
    real = delimited.RowConverter.__call__
    monkeypatch.setattr(
        delimited.RowConverter, "__call__", lambda *a: converted.append(1) or real(*a)
    )
    COLUMNAR.clear()
    assert _batch_records("delimited", source, 0, 2000) == want
    # pyarrow reads up to 32 blocks (+1) ahead in a thread of its own, so how far before
    # row 1500 the row reader takes over depends on that thread: at most 33 blocks of lines
    # of at least 10 bytes before it
    assert sum(COLUMNAR) > 1500 - 33 * (1 << 8) // 10
    assert sum(COLUMNAR) + len(converted) == 2000  # each row converted once


def test_units_in_turn_resume_one_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)
    features = FeaturesDict({"a": Scalar("int64"), "c": Text()})
    text = "a,c\n" + "".join(f"{i},t{i}\n" for i in range(999))
    source = _csv_source(tmp_path, text, features, files=2)
    want = _row_records("delimited", source)
    assert len(want) == 1998
    opened = []
    real = csv_batches.open_fields
    monkeypatch.setattr(csv_batches, "open_fields", lambda *a: opened.append(1) or real(*a))
    got = []
    for start in range(0, 1998, 250):
        got += _batch_records("delimited", source, start, min(start + 250, 1998))
    assert got == want
    assert len(opened) == 2  # each file opened (and read) once for the eight units
    assert _batch_records("delimited", source, 1200, 1300) == want[1200:1300]  # afresh


@pytest.mark.parametrize("irregular", [False, True])
def test_a_workers_units_pass_over_the_others_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, irregular: bool
) -> None:
    """Two workers, each taking every other unit: each reads the files once (not each unit
    from the file's start), converting only its own units' rows."""
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)
    features = FeaturesDict({"a": Scalar("int64"), "c": Text()})
    rows = [f"{i},t{i}" for i in range(999)]
    if irregular:  # a value only Python reads: its batch alone goes to the row reader
        rows[600] = " 600,t600"
    source = _csv_source(tmp_path, "a,c\n" + "\n".join(rows) + "\n", features, files=2)
    want = _row_records("delimited", source)
    opened, converted = [], []
    real_open, real_convert = csv_batches.open_fields, csv_batches.from_strings
    monkeypatch.setattr(csv_batches, "open_fields", lambda *a: opened.append(1) or real_open(*a))

    def convert(array: Any, *rest: Any) -> Any:
        converted.append(len(array))
        return real_convert(array, *rest)

    monkeypatch.setattr(csv_batches, "from_strings", convert)
    units = [(start, min(start + 125, 1998)) for start in range(0, 1998, 125)]
    for worker in (0, 1):
        stream = table_batches.resumable(csv_batches._stream)  # a worker process's own
        monkeypatch.setattr(csv_batches, "batches", stream)
        opened.clear(), converted.clear()
        for start, stop in units[worker::2]:
            assert _batch_records("delimited", source, start, stop) == want[start:stop]
        assert len(opened) == 2  # each file opened (and parsed) once for its eight units
        mine = sum(stop - start for start, stop in units[worker::2])
        assert sum(converted) <= 2 * (mine + 2 * len(units))  # 2 columns; ends of batches


def _parquet_source(tmp: Path, table: pa.Table, features: FeaturesDict, fill: Any) -> Source:
    path = tmp / "t.parquet"
    pq.write_table(table, path, row_group_size=7)
    options = complete_options("parquet", {"columns": {n: n for n in features}, "fill": fill})
    return Source("train", {"files": (path, path)}, options, features)


@SETTINGS
@given(st.data())
def test_parquet_batches_match_the_row_reader(tmp_path: Path, data: Any) -> None:
    rows = data.draw(st.integers(0, 30))
    arrays, features, fill = {}, {}, {}
    choices = ["int64", "int16", "uint64", "float32", "float64", "bool", "text", "label", "dict"]
    for i, kind in enumerate(data.draw(st.lists(st.sampled_from(choices), min_size=1, max_size=4))):
        name = f"c{i}"
        nulls = data.draw(st.booleans())
        if kind in ("text", "label", "dict"):
            strategy: Any = st.sampled_from(NAMES) if kind != "text" else st.text(max_size=5)
            pa_type = pa.string()
        elif kind == "bool":
            strategy, pa_type = st.booleans(), pa.bool_()
        elif kind.startswith("float"):
            # finite values (those beyond float32's range are refused by a float32 feature,
            # on both paths), NaN and infinities
            finite = st.floats(allow_nan=False, allow_infinity=False,
                               width=32 if kind == "float32" else 64)  # fmt: skip
            strategy = finite | st.sampled_from([math.nan, math.inf, -math.inf])
            pa_type = getattr(pa, kind)()
        else:
            info = np.iinfo(kind)
            strategy, pa_type = st.integers(int(info.min), int(info.max)), getattr(pa, kind)()
        values = data.draw(st.lists(st.none() | strategy if nulls else strategy,
                                    min_size=rows, max_size=rows))  # fmt: skip
        array = pa.array(values, pa_type)
        arrays[name] = array.dictionary_encode() if kind == "dict" else array
        target = data.draw(st.sampled_from(["int8", "int64", "float32", "float64", "bool",
                                            "text", "label"]))  # fmt: skip
        features[name] = (
            Text() if target == "text"
            else ClassLabel(names=NAMES) if target == "label" else Scalar(target)
        )  # fmt: skip
        if data.draw(st.booleans()):
            fill[name] = data.draw(st.sampled_from(["0", "nan", "true", "cat", "", "300"]))
    spec = FeaturesDict(features)
    want = _outcome(lambda: None)
    try:
        source = _parquet_source(tmp_path, pa.table(arrays), spec, fill)
        want = _outcome(lambda: _row_records("parquet", source))
    except CatalogError:
        return  # a fill that is not a value of its feature: refused before any row
    if want[0] != "ok":
        assert _outcome(lambda: _batch_records("parquet", source, 0, 2 * rows)) == want
        return
    start = data.draw(st.integers(0, 2 * rows))
    stop = data.draw(st.integers(start, 2 * rows))
    assert _batch_records("parquet", source, start, stop) == want[1][start:stop]


@SETTINGS
@given(csv_tables(), st.booleans(), st.sampled_from([(), ("NA",), ("null", "None", "cat")]))
def test_column_types_from_batches_match_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: Any, tsv: bool, missing: Any
) -> None:
    """Kinds, missing counts and the missing-like texts seen (pandas' ``NA``...), given
    texts as missing values or not."""
    from catalog.spec.infer import table_scan

    text = table[0].replace(",", "\t") if tsv else table[0]
    path = tmp_path / ("t.tsv" if tsv else "t.csv")
    path.write_bytes(text.encode("utf-8"))
    kind = "tsv" if tsv else "csv"
    missing = frozenset(missing)
    monkeypatch.setattr(table_scan, "BULK_BYTES_PER_COLUMN", 0)  # small files in batches too
    bulk = _outcome(lambda: table_scan.scan(kind, [path, path], label="c0", missing=missing))
    with monkeypatch.context() as m:
        m.setattr(table_scan, "_bulk_scan", lambda *a: None)
        one_by_one = _outcome(
            lambda: table_scan.scan(kind, [path, path], label="c0", missing=missing)
        )
    assert bulk == one_by_one


@SETTINGS
@given(st.lists(st.lists(FIELDS, max_size=6), min_size=1, max_size=5))
def test_column_batches_match_adding_one_by_one(batches: list[list[str]]) -> None:
    """Batch after batch (the fields fitting the column's kind so far not sorted again), the
    kind, where it widened, the missing values and the distinct ones are `add`'s."""
    from catalog.spec.infer import column_batches
    from catalog.spec.infer.column_types import TextColumn

    bulk, one = TextColumn(), TextColumn()
    line = 2
    for fields in batches:
        column_batches.add_batch(bulk, pa.array(fields, pa.string()), line)
        for text in fields:
            one.add(text, line)
            line += 1
    assert bulk == one


def test_column_batches_sort_only_what_may_widen(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalog.spec.infer import column_batches
    from catalog.spec.infer.column_types import TextColumn

    sorted_ = []
    real = column_batches._kinds
    monkeypatch.setattr(column_batches, "_kinds", lambda t: sorted_.append(len(t)) or real(t))
    for first, then, widened, texts in [
        (["1", "2"], ["3", "-4", "+5", ""], {"int64": 2}, (1, 21)),  # "x" sorted: text
        (["1.5"], ["3", "2e5", "nan", "-inf", ".5"], {"float64": 2}, (1, 21)),
        (["true"], ["FALSE", "True", "false"], {"bool": 2}, (3, 20)),  # "1": a bool's text
    ]:
        column, sorted_[:] = TextColumn(), []
        column_batches.add_batch(column, pa.array(first), 2)
        column_batches.add_batch(column, pa.array(then), 10)
        assert sorted_ == [len(first)]  # the second batch: every field fits, none sorted
        assert column.widened_at == widened
        column_batches.add_batch(column, pa.array(["1", "x", "2"]), 20)
        assert (sorted_[-1], column.widened_at["text"]) == texts and column.kind == "text"


def test_column_types_from_batches_on_every_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catalog.spec.infer import table_scan

    bulk = table_scan._bulk_scan
    monkeypatch.setattr(table_scan, "BULK_BYTES_PER_COLUMN", 0)  # small files in batches too
    used: list[bool] = []
    monkeypatch.setattr(table_scan, "_bulk_scan", lambda *a: used.append(True) or bulk(*a))
    rows = [
        "a,b,c,d,e,f,g",
        "1,1,true,x,,1, 2",
        "2,1.5,FALSE,y,,99999999999999999999,3",
        "+3,nan,True,1,,000000000000000000001,٣",
        "-4,-inf,false,true,5,2,4.5",
    ]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n", "utf-8")
    found = table_scan.scan("csv", [path])
    assert used == [True]
    kinds = {name: (s.kind, s.widened_at, s.missing, s.first_missing)
             for name, s in found.stats.items()}  # fmt: skip
    assert kinds == {
        "a": ("int64", {"int64": 2}, 0, None),
        "b": ("float64", {"int64": 2, "float64": 3}, 0, None),
        "c": ("bool", {"bool": 2}, 0, None),
        "d": ("text", {"text": 2}, 0, None),
        "e": ("int64", {"int64": 5}, 3, 2),
        "f": ("text", {"int64": 2, "text": 3}, 0, None),
        "g": ("text", {"int64": 2, "text": 4}, 0, None),  # " 2": an integer, as pandas
    }


def test_a_prepared_table_in_shards_of_bounded_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import catalog
    from catalog.prepare import shard_plan

    monkeypatch.setattr(shard_plan, "MAX_SHARD_EXAMPLES", 100)
    monkeypatch.setattr(csv_batches, "BLOCK_BYTES", 1 << 10)
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + "".join(f"{i},{i / 4},x{i}\n" for i in range(250)), "utf-8")
    catalog.prepare_files(str(path), "bounded", data_dir=str(tmp_path / "data"))
    source = catalog.data_source("bounded", split="train", data_dir=str(tmp_path / "data"))
    assert len(list((tmp_path / "data").rglob("bounded-train.array_record-*"))) == 3
    assert [(int(e["a"]), float(e["b"]), e["c"]) for e in (source[i] for i in range(250))] == [
        (i, i / 4, f"x{i}") for i in range(250)
    ]
