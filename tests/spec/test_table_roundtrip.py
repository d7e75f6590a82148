"""Tables written by the real tools, prepared by catalog, compared value by value with what
the same tools read back (issue 37): random tables written by pandas ``to_csv`` in several
dialects and by pyarrow's Parquet writer (Hypothesis, a bounded number of examples), and
malformed CSV files given the verdict pandas gives (accept or refuse), a refusal being one
clear line with nothing left behind.

catalog's rules where pandas has several, as the tests read pandas: only an empty field is a
missing value (``keep_default_na=False, na_values=[""]``: catalog keeps the text ``NA``), a
missing text is the ``fill`` given (here ``""``). Text values start with a letter so that pandas and
catalog both see text (a column of digits is a number column for both, tested apart).
"""

from __future__ import annotations

import contextlib
import csv
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import catalog
from catalog.errors import CatalogError

from conftest import catalog_cli

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TEXTS = st.builds(lambda s: "x" + s, st.text(_CHARS | st.sampled_from(',;\t|"\n\r '), max_size=12))
KINDS = ("int", "int_nulls", "float", "bool", "text")


@st.composite
def tables(draw: Any, min_columns: int = 1) -> pd.DataFrame:
    """A DataFrame of random columns (ints, ints with nulls, floats with NaN and infinities,
    booleans, texts with delimiters, quotes, newlines, unicode and nulls)."""
    n_rows = draw(st.integers(1, 25))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=min_columns, max_size=6))
    data: dict[str, Any] = {}
    for i, kind in enumerate(kinds):
        name = f"c{i}"
        if kind == "int":
            values = draw(
                st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n_rows, max_size=n_rows)
            )
            data[name] = pd.Series(values, dtype="int64")
        elif kind == "int_nulls":
            ints = st.none() | st.integers(-(2**53), 2**53)
            values = draw(st.lists(ints, min_size=n_rows, max_size=n_rows))
            data[name] = pd.Series(values, dtype="Int64")
        elif kind == "float":
            floats = st.none() | st.floats(allow_nan=False, width=64)
            data[name] = pd.Series(
                draw(st.lists(floats, min_size=n_rows, max_size=n_rows)), dtype="float64"
            )
        elif kind == "bool":
            data[name] = pd.Series(
                draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)), dtype=bool
            )
        else:
            texts = st.none() | TEXTS
            data[name] = pd.Series(
                draw(st.lists(texts, min_size=n_rows, max_size=n_rows)), dtype=object
            )
    return pd.DataFrame(data)


def _same(got: Any, want: Any) -> bool:
    got = got.item() if isinstance(got, np.generic) else got
    want = want.item() if isinstance(want, np.generic) else want
    if want is None or (isinstance(want, float) and math.isnan(want)):
        return got == "" or (isinstance(got, float) and math.isnan(got))
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want or (got == want and type(got) is type(want))
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return got == want
    return got == want


def _prepare_and_compare(path: Path, frame: pd.DataFrame, name: str, **options: Any) -> None:
    texts = [c for c in frame.columns if frame[c].dtype.kind not in "biuf"]
    with tempfile.TemporaryDirectory() as out:
        b = catalog.prepare_files(
            path, name, data_dir=out, fill=dict.fromkeys(texts, ""), **options
        )
        ds = b.as_data_source("train")
        assert len(ds) == len(frame)
        for i in range(len(frame)):
            example = ds[i]
            for column in frame.columns:
                assert _same(example[column], frame[column].iloc[i]), (
                    i,
                    column,
                    example[column],
                    frame[column].iloc[i],
                )


@SETTINGS
@given(
    table=tables(),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    newline=st.sampled_from(["\n", "\r\n"]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),
)
def test_a_csv_pandas_wrote_is_prepared_as_pandas_reads_it(
    table: pd.DataFrame, sep: str, quoting: int, newline: str, encoding: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        table.to_csv(
            path, sep=sep, index=False, quoting=quoting, lineterminator=newline, encoding=encoding
        )
        read = pd.read_csv(
            path, sep=sep, keep_default_na=False, na_values=[""],
            encoding=encoding,
        )  # fmt: skip
        # the delimiter is found from the file when the header has two columns to tell it by
        given = {"delimiter": sep} if len(table.columns) == 1 else {}
        _prepare_and_compare(path, read, "t", **given)


@SETTINGS
@given(table=tables(), row_group=st.integers(1, 10))
def test_a_parquet_file_pyarrow_wrote_is_prepared_as_pyarrow_reads_it(
    table: pd.DataFrame, row_group: int
) -> None:
    table = table[[c for c in table.columns if table[c].dtype != "Int64"]]  # nulls: see below
    if table.columns.empty:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.parquet"
        pq.write_table(
            pa.Table.from_pandas(table, preserve_index=False), path, row_group_size=row_group
        )
        read = pq.read_table(path).to_pandas()
        _prepare_and_compare(path, read, "t")


def test_a_parquet_integer_column_with_nulls_is_refused_unless_filled(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"a": pa.array([1, None, 3], pa.int64())}), path)
    with pytest.raises(CatalogError, match="row 1: column 'a' is null; .*--fill a=VALUE"):
        catalog.prepare_files(path, "n", data_dir=tmp_path / "d")
    b = catalog.prepare_files(path, "n", data_dir=tmp_path / "d", fill={"a": "-1"})
    assert [int(b.as_data_source("train")[i]["a"]) for i in range(3)] == [1, -1, 3]


#: Malformed CSV files, each given pandas' verdict. Not here, on purpose: a first data row one
#: field longer than the header (pandas makes its first field the index; catalog refuses it as
#: any longer row), a quoted field followed by more text (``"x"y``: pandas joins it, catalog
#: refuses it as broken quoting), a short row whose absent field is text (pandas gives NaN;
#: catalog asks for --fill, as for any missing text), a header with no rows (pandas reads an
#: empty frame; catalog prepares no empty split).
MALFORMED = {
    "a field too many": b"a,b\n1,2\n3,4,5\n",
    "a field too many, quoted": b'a,b\n1,2\n"3","4","5"\n',
    "fields missing": b"a,b,c\n1,2,3\n4\n5,6\n",
    "an unclosed quote": b'a,b\n1,"2\n3,4\n',
    "bad UTF-8": b"a,b\n1,x\n2,\xff\xfe\n",
    "a NUL byte": b"a,b\n1,x\x00y\n",
    "a blank line": b"a,b\n1,2\n\n3,4\n",
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_csv_gets_pandas_verdict(tmp_path: Path, case: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(MALFORMED[case])
    try:
        pd.read_csv(path)
        pandas_accepts = True
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError):
        pandas_accepts = False
    done = catalog_cli(
        "prepare", str(path), "--name", "bad", "--data-dir", str(tmp_path / "d"), "-q"
    )
    assert (done.returncode == 0) == pandas_accepts, done.stderr
    if not pandas_accepts:
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert str(path) in done.stderr
        assert not list((tmp_path / "d").glob("bad/1.0.0*/dataset_info.json"))
    if case == "bad UTF-8":
        assert f"{path}:3: not utf-8 text at byte 2 of the line" in done.stderr


def test_a_50_mb_line_is_read_as_pandas_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    big = "y" * (50 << 20)
    path.write_text(f"a,b\n1,{big}\n2,z\n")
    assert len(pd.read_csv(path)) == 2
    b = catalog.prepare_files(path, "long", data_dir=tmp_path / "d")
    ds = b.as_data_source("train")
    assert ds[0]["b"] == big and ds[1]["b"] == "z"


@settings(max_examples=15, deadline=None, derandomize=True)
@example(head=b"a\n", body=b"1" * 5000 + b"\n", suffix=".csv")  # int() refuses 4300+ digits
@example(head=b"", body=b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", suffix=".jsonl")
@given(
    head=st.sampled_from(
        [b"", b"a,b\n", b"a;b\n", b'"a"\t"b"\n', b"\xef\xbb\xbfa,b\n", b"\xff\xfe"]
    ),
    body=st.binary(max_size=200),
    suffix=st.sampled_from([".csv", ".tsv", ".jsonl"]),
)
def test_malformed_bytes_give_only_catalogs_errors(head: bytes, body: bytes, suffix: str) -> None:
    """Issue 41: the CSV/TSV and JSON Lines readers (the inference's pass and the prepare's)
    raise nothing but CatalogError subclasses, whatever the bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"f{suffix}"
        path.write_bytes(head + body)
        with contextlib.suppress(CatalogError):
            catalog.prepare_files(path, "f", data_dir=Path(tmp) / "d")
