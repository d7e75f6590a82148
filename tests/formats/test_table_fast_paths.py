"""The fast paths of reading tables: the CSV byte check
(`catalog.formats.tables.csv_batches.Checked`) for blocks without quotes and ``\\r`` finds
what the general path finds, however the bytes are cut into blocks; number columns shown by
a cast before any regular expression (the type scan, and the conversion of CSV fields) keep
what the row reader and adding fields one by one give."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.api.files import files_builder
from catalog.formats.tables import csv_check
from catalog.formats.tables.csv_batches import Checked

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
#: Pieces of CSV: plain fields, delimiters, line breaks, blank lines, quotes, a lone \r.
PIECES = st.sampled_from(["a", "bc", ",", "\n", "\n\n", '"', '"x"', '""', "\r\n", "\r", "\0"])


def _findings(path: Path, cuts: list[int], plain: bool) -> tuple[bool, bool]:
    checked = Checked(path, ",")
    checked._plain = plain
    data = path.read_bytes()
    checked._file.close()
    at = 0
    for cut in [*sorted(cuts), len(data)]:
        if cut > at:
            checked._check(data[at:cut])
            at = cut
    checked._check(b"")  # the end
    return checked.irregular, checked.multiline


@SETTINGS
@given(st.lists(PIECES, max_size=30), st.lists(st.integers(0, 200), max_size=6))
def test_the_fast_path_finds_what_the_general_one_finds(
    tmp_path: Path, pieces: list[str], cuts: list[int]
) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes("".join(pieces).encode())
    assert _findings(path, cuts, plain=True) == _findings(path, cuts, plain=False)


def test_the_fast_path_sees_blank_lines_and_breaks_inside_quotes(tmp_path: Path) -> None:
    """Blocks without quotes after one that opened a quoted field, a blank line across a
    block's edge: rows are not one line each."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n")
    assert _findings(path, [], plain=True) == (False, False)
    for text, cuts in [(b'a,"b\nc",d\n', [4]), (b"a,b\n\n1,2\n", [4]), (b"a\n1\n\n", [4])]:
        path.write_bytes(text)
        assert _findings(path, cuts, plain=True) == (False, True), text


def test_number_columns_are_shown_by_a_cast_before_any_regular_expression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch of plain numbers keeps an int64 / float64 column as it is without a regular
    expression; what a cast takes but a column's kind does not (hex, an integer past int64
    among floats, ``+5``) still widens it as one by one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from catalog.spec.infer import column_batches
    from catalog.spec.infer.column_types import TextColumn

    regex: list[int] = []
    real = pc.match_substring_regex
    monkeypatch.setattr(
        pc, "match_substring_regex", lambda *a, **k: regex.append(1) or real(*a, **k)
    )
    for kind, first, then, widened in [
        ("int64", ["1", "2"], ["-3", "70", "42"], {"int64": 2}),
        ("float64", ["1.5", "2"], ["-3", "1e5", ".5", "7.", "1E-3"], {"float64": 2}),
    ]:
        column = TextColumn()
        column_batches.add_batch(column, pa.array(first), 2)
        assert column.kind == kind
        regex.clear()
        column_batches.add_batch(column, pa.array(then), 10)
        assert regex == [] and column.kind == kind and column.widened_at == widened
    for first, then, kind in [
        (["1"], ["0x10"], "text"),  # pyarrow casts hex to int64; pandas reads text
        (["1"], ["+5"], "int64"),  # pyarrow does not cast it; pandas reads 5
        (["1.5"], ["99999999999999999999"], "text"),  # past int64, as one by one
        (["1.5"], ["1e5", "-.5e-3"], "float64"),
    ]:
        bulk, one = TextColumn(), TextColumn()
        for line, fields in ((2, first), (10, then)):
            column_batches.add_batch(bulk, pa.array(fields), line)
            for i, text in enumerate(fields):
                one.add(text, line + i)
        assert bulk == one and bulk.kind == kind, then


def test_texts_a_cast_takes_but_int_and_float_refuse_go_to_the_row_reader(tmp_path: Path) -> None:
    """pyarrow casts ``0x10`` to int64 16 where Python's ``int`` refuses it: read in bulk, an
    int64 column holding it is the row reader's error (line and column named), as without
    batches; plain decimal texts are converted in bulk, as the row reader converts them."""
    import pyarrow as pa

    from catalog.features import FeaturesDict, Scalar
    from catalog.formats import FORMATS
    from catalog.formats.tables.table_batches import only_bytes
    from tests.formats.test_table_batches import (
        _batch_records,
        _csv_source,
        _outcome,
        _row_records,
    )

    assert only_bytes(pa.array(["1", "-2"]), b"0123456789+-")
    assert not only_bytes(pa.array(["1", "0x2"]), b"0123456789+-")
    features = FeaturesDict({"a": Scalar("int64"), "b": Scalar("float64")})
    good = _csv_source(tmp_path, "a,b\n1,1.5\n-2,2e-3\n3,.5\n4,7.\n", features)
    want = _row_records("delimited", good)
    assert _batch_records("delimited", good, 0, 9) == want and len(want) == 4
    bad = _csv_source(tmp_path, "a,b\n1,1.5\n0x10,2\n", features)
    error = _outcome(lambda: _row_records("delimited", bad))
    assert error[0] != "ok" and "t.csv:3:" in error[1] and "0x10" in error[1]
    assert _outcome(lambda: _batch_records("delimited", bad, 0, 9)) == error
    assert FORMATS["delimited"].batches is not None


def _read_whole(checked: Checked) -> bytes:
    out = b""
    while data := checked.read(7):  # small reads: many blocks, as pyarrow asks
        out += data
    checked.close()
    return out


def _checked_bytes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the blocks `Checked` checks from now on."""
    sizes: list[int] = []
    real = csv_check.Checked._check

    def counting(self: Checked, data: bytes) -> None:
        sizes.append(len(data))
        real(self, data)

    monkeypatch.setattr(csv_check.Checked, "_check", counting)
    return sizes


def test_a_file_checked_whole_is_not_checked_again_until_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The type scan and the prepare read the same file: its bytes are checked once, and
    again once the file is written (even with its size and mtime set back)."""
    sizes = _checked_bytes(monkeypatch)
    path = tmp_path / "t.csv"
    text = b'a,b\n1,"x\ny"\n2,3\n'
    path.write_bytes(text)
    first = Checked(path, ",")
    assert not first.known and _read_whole(first) == text
    assert (first.irregular, first.multiline) == (False, True)
    assert sum(sizes) == len(text)
    second = Checked(path, ",")
    assert second.known and second.multiline and not second.irregular
    assert _read_whole(second) == text
    assert sum(sizes) == len(text)  # not checked again
    other = Checked(path, ";")  # another dialect: other findings
    other.close()
    assert not other.known
    st = path.stat()
    path.write_bytes(b'a,b\n1,"x"y\n2,3\n')  # text after a closing quote: irregular
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    third = Checked(path, ",")
    assert not third.known
    _read_whole(third)
    assert third.irregular


def test_a_file_read_in_part_or_irregular_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 100)
    part = Checked(path, ",")
    part.read(10)
    part.close()
    again = Checked(path, ",")
    again.close()
    assert not again.known
    path.write_bytes(b'a,b\n1,2"\n')  # a quote inside an unquoted field
    bad = Checked(path, ",")
    _read_whole(bad)
    assert bad.irregular
    again = Checked(path, ",")
    again.close()
    assert not again.known


def test_a_csv_prepare_checks_the_bytes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = _checked_bytes(monkeypatch)
    path = tmp_path / "table.csv"
    rows = "".join(f"{i},{'ab'[i % 2]},n{i}\n" for i in range(3000))
    path.write_text("x,label,note\n" + rows)  # large enough for the scan's bulk path
    b = files_builder(path, "table", data_dir=tmp_path / "data")
    b.download_and_prepare()
    assert sum(sizes) == path.stat().st_size  # by the type scan; the prepare took its finding
    ds = b.as_data_source("train")
    assert len(ds) == 3000 and int(ds[2999]["x"]) == 2999
