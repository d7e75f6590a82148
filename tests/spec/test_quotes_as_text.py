"""CSV/TSV files whose double quotes are text, not quoting (most TSV files: package lists,
GLUE's and many exports, written without a quoting rule): read with ``quoting="none"`` /
``--quoting none`` as pandas reads them with ``quoting=csv.QUOTE_NONE``, by pyarrow's bulk
reader and by the row reader alike; without it, the first row whose quotes do not quote is an
error naming its line and the option."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import catalog
from catalog.errors import SpecError
from catalog.formats.tables.csv_batches import open_fields
from catalog.formats.tables.delimited import rows
from catalog.spec.infer.table_scan import BULK_BYTES_PER_COLUMN

pd = pytest.importorskip("pandas")

#: Lines as real package summaries have them (PyPI's, as this machine's package list holds
#: them): a field opening with a quoted word, an inch mark, a lone opening quote, quotes in
#: the middle, a field that is only quotes.
LINES = [
    'agentk\t0.3.2\t"AGENT" K is a complete minimalistic kubectl "doner"-wrap',
    'floppy\t1.0\tReads 3.5" disks',
    'lone\t2.0\t"unbalanced start of a summary',
    "plain\t3.0\tNothing quoted here",
    'quoted\t4.0\t"A whole summary in quotes"',
    'twice\t5.0\tsays ""hello"" twice',
    'only\t6.0\t""',
]
HEADER = "name\tversion\tsummary"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def _pandas_rows(path: Path) -> list[dict[str, object]]:
    frame = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
    return frame.to_dict("records")  # type: ignore[no-any-return]


def _catalog_rows(source: catalog.DataSource) -> list[dict[str, object]]:
    return [{k: str(v) if isinstance(v, str) else float(v) for k, v in e.items()} for e in source]


def test_without_quoting_none_the_first_such_row_is_named_with_the_option(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "packages.tsv", LINES)
    run = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0
    assert f"{path}:2: cannot read this row" in run.stderr, run.stderr
    assert "--quoting none" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "d" / "packages").exists()  # nothing half-written
    run = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--quoting", "none",
         "--dtype", "version=text", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    ds = catalog.data_source("packages", split="train", data_dir=tmp_path / "d")
    assert _catalog_rows(ds) == _pandas_rows(path)
    assert ds[0]["summary"] == '"AGENT" K is a complete minimalistic kubectl "doner"-wrap'


@pytest.mark.parametrize("copies", [1, 400])
def test_quotes_as_text_read_as_pandas_reads_them(tmp_path: Path, copies: int) -> None:
    """One copy of the lines is read by the row reader; 400 (past the type scan's bulk size)
    by pyarrow, checked on the way in: the same rows as pandas' ``QUOTE_NONE`` either way."""
    lines = [f"{line.split(chr(9))[0]}{i}\t{i}.5\t{line.split(chr(9))[2]}" for i in range(copies)
             for line in LINES]  # fmt: skip
    path = _write(tmp_path / "t.tsv", lines)
    assert (path.stat().st_size >= BULK_BYTES_PER_COLUMN * 3) == (copies > 1)
    if copies > 1:  # the bulk reader takes it (it gives None for what the row reader reads)
        options = {"delimiter": "\t", "encoding": "utf-8", "quoting": "none"}
        opened = open_fields(path, options)
        assert opened is not None
        reader, checked, _ = opened
        fields = [list(r.values()) for b in reader for r in b.to_pylist()]
        checked.close()
        assert not checked.irregular
        assert fields == [row for _, row in rows(path, options)][1:]
    b = catalog.prepare_files(path, "t", data_dir=tmp_path / "d", quoting="none")
    assert _catalog_rows(b.as_data_source("train")) == [
        {**r, "version": float(r["version"])}  # type: ignore[arg-type]
        for r in _pandas_rows(path)
    ]
    options = b.spec.splits["train"].options
    assert options["quoting"] == "none"


def test_quoting_applies_to_delimited_files_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": "\\"x\\""}\n')
    with pytest.raises(SpecError, match="--quoting .* CSV/TSV"):
        catalog.prepare_files(path, "t", data_dir=tmp_path / "d", quoting="none")
    with pytest.raises(SpecError, match="quoting must be one of minimal, none"):
        catalog.prepare_files(path, "t", data_dir=tmp_path / "d", quoting="all")


SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
FIELD = st.text(alphabet='ab"x 1.', max_size=6)


@SETTINGS
@given(st.lists(st.tuples(FIELD, FIELD), min_size=1, max_size=40), st.booleans())
def test_the_bulk_reader_reads_quotes_as_the_row_reader_does(
    tmp_path: Path, table: list[tuple[str, str]], crlf: bool
) -> None:
    """Any fields holding quotes, line ends \\n or \\r\\n: the bulk reader takes the file
    (quotes are no reason to leave it to the row reader now) and pyarrow (no quote character)
    gives the rows Python's csv (``QUOTE_NONE``) gives."""
    end = "\r\n" if crlf else "\n"
    path = tmp_path / "q.csv"
    path.write_text(end.join(["h1,h2", *(f"{a},{b}" for a, b in table)]) + end, newline="")
    options = {"delimiter": ",", "encoding": "utf-8", "quoting": "none"}
    want = [row for _, row in rows(path, options)][1:]
    opened = open_fields(path, options)
    assert opened is not None
    reader, checked, _ = opened
    got = [[str(v) for v in r.values()] for b in reader for r in b.to_pylist()]
    checked.close()
    assert not checked.irregular and got == want
