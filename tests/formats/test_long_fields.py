"""Fields longer than Python's csv module reads by default (128 KiB) are read by every CSV
reader in catalog, whichever runs first in the process: the module's limit is one for the
whole process, so each reader raises it itself (`catalog.formats.tables.csv_dialect.reader`)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.formats.croissant import files as croissant_files
from catalog.formats.tables import csv_dialect, delimited

LONG = "x" * 200_000  # over the csv module's default of 131072 characters


@pytest.fixture(autouse=True)
def default_limit() -> Iterator[None]:
    """A process in which no catalog reader has run yet: the module's default limit."""
    before = csv.field_size_limit(131072)
    yield
    csv.field_size_limit(before)


def test_the_default_limit_refuses_a_long_field() -> None:
    with pytest.raises(csv.Error, match="field larger than field limit"):
        list(csv.reader([f"a,{LONG}\n"]))  # what each reader below must not run into


def test_croissant_csv_rows_read_a_long_field(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(f"a,b\n1,{LONG}\n2,short\n", encoding="utf-8")
    rows = list(croissant_files.file_rows(path, "csv", {}, set(), ["a", "b"]))
    assert [r["b"] for r in rows] == [LONG, "short"]


def test_delimited_rows_and_the_dialect_reader_read_a_long_field(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(f"a,b\n1,{LONG}\n", encoding="utf-8")
    options = {"encoding": "utf-8", "delimiter": ",", "quoting": "minimal"}
    assert [fields for _, fields in delimited.rows(path, options)] == [["a", "b"], ["1", LONG]]
    csv.field_size_limit(131072)
    assert list(csv_dialect.reader([f"1,{LONG}\n"])) == [["1", LONG]]
