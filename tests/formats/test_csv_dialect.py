"""The dialect sniffer (`catalog.formats.tables.csv_dialect.sniff`): a property test over tables
that
Python's csv module writes with each delimiter (quoted fields holding the delimiter, quotes
and line breaks, headers past the sniffed head), bounded in examples."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.formats.tables.csv_dialect import DELIMITERS, SNIFF_BYTES, sniff

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, bytes]:
    """(delimiter, the bytes of a table csv.writer wrote with it): cells of letters, digits,
    spaces, quotes, line breaks and the delimiter itself (quoted), no other delimiter."""
    delimiter = draw(st.sampled_from(DELIMITERS))
    cell = st.text(st.sampled_from(f'ab1 "\n{delimiter}'), max_size=6).map(lambda s: "v" + s)
    width = draw(st.integers(2, 6))
    rows = draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1, max_size=8))
    wide = draw(st.booleans())  # a header longer than the sniffed head
    header = [f"c{i}" + ("x" * (SNIFF_BYTES // width) if wide else "") for i in range(width)]
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows([header, *rows])
    return delimiter, out.getvalue().encode()


@SETTINGS
@given(tables())
def test_the_delimiter_a_table_was_written_with_is_found(table: tuple[str, bytes]) -> None:
    delimiter, data = table
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(data)
        assert sniff(path).delimiter == delimiter
