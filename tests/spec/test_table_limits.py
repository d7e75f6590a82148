"""Tables at the edges (issue 49): a header longer than the sniffer's head, lines and fields
past their byte budget, numbers past float64, UTF-16 without a BOM, a header split by one
delimiter over rows split by another, a damaged Parquet footer. Each is read right or is one
clear error (exit 3, one line, no traceback), within bounded memory."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.api.files import files_builder
from catalog.errors import SourceFormatError
from catalog.formats.tables import csv_dialect
from catalog.formats.tables.csv_dialect import sniff


def _prepare(path: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--data-dir",
         str(tmp_path / "d"), *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _one_error(run: subprocess.CompletedProcess[str], *words: str) -> None:
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("catalog: error:"), run.stderr
    for word in words:
        assert word in first, run.stderr


def test_a_header_longer_than_the_sniffed_head_is_read_whole(tmp_path: Path) -> None:
    # 6,000 ';' columns: a header of 100 KB, past the 64 KiB head (it was one text column)
    path = tmp_path / "wide.csv"
    names = [f"column_{i}" for i in range(6000)]
    path.write_text(";".join(names) + "\n" + ";".join(map(str, range(6000))) + "\n")
    assert path.stat().st_size > csv_dialect.SNIFF_BYTES
    assert sniff(path).delimiter == ";"
    b = catalog.prepare_files(path, "wide", data_dir=tmp_path / "d")
    assert list(b.info.features) == names
    assert int(b.as_data_source("train")[0]["column_5999"]) == 5999


def test_a_line_past_the_budget_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # lines past the bulk reader's block go to the row reader, which holds the budget
    monkeypatch.setattr(csv_dialect, "LINE_BYTES", 3 << 19)
    path = tmp_path / "long.csv"
    path.write_text("a,b\n1," + "x" * (2 << 20) + "\n")
    with pytest.raises(SourceFormatError, match=r"long.csv:2: a line longer than"):
        files_builder(path, "long")
    header = tmp_path / "header.csv"
    header.write_text("," * (2 << 20) + "\n1\n")  # a header past the budget, past the head
    with pytest.raises(SourceFormatError, match=r"header.csv:1: a line longer than"):
        sniff(header)
    lines = tmp_path / "long.jsonl"
    lines.write_text('{"a": "' + "x" * (2 << 20) + '"}\n')
    with pytest.raises(SourceFormatError, match=r"long.jsonl:1: a line longer than"):
        files_builder(lines, "lines")


def test_a_field_past_the_budget_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a quoted field over many short lines: bounded by characters, not by lines
    monkeypatch.setattr(csv_dialect, "FIELD_LIMIT", 1 << 20)
    before = csv.field_size_limit(1 << 20)  # the process's limit, as catalog raises it
    try:
        path = tmp_path / "field.csv"
        path.write_text('a,b\n1,"' + "word\n" * 300_000 + '"\n')
        with pytest.raises(SourceFormatError, match=r"field.csv:2: a field longer than 1 Mi"):
            files_builder(path, "field")
    finally:
        csv.field_size_limit(before)


def test_a_line_of_nuls_past_the_budget_ends_in_bounded_memory(tmp_path: Path) -> None:
    # 80 MiB of NULs without a line break, past the 64 MiB budget: one error, never held whole
    path = tmp_path / "nul.csv"
    with open(path, "wb") as f:
        f.write(b"a,b\n")
        f.truncate(4 + (80 << 20))  # sparse: no disk used
    script = (
        "import resource, subprocess, sys\n"
        "run = subprocess.run([sys.executable, '-m', 'catalog', *sys.argv[1:]],"
        " capture_output=True, text=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10\n"
        "print(run.returncode, peak, run.stderr.splitlines()[0])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, "prepare", str(path), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    code, peak, first = run.stdout.split(" ", 2)
    assert code == "3" and "nul.csv:2: a line longer than 64 MiB" in first, run.stdout
    assert int(peak) < 600, f"peak RSS {peak} MiB"


def test_numbers_past_float64_are_one_error_and_1e300_is_kept(tmp_path: Path) -> None:
    fine = tmp_path / "fine.csv"
    fine.write_text("a,b\n1,1e300\n2,-1e300\n3,inf\n")
    b = catalog.prepare_files(fine, "fine", data_dir=tmp_path / "d")
    assert [float(e["b"]) for e in b.as_data_source("train")] == [1e300, -1e300, float("inf")]
    for text in ("1e309", "-1e309"):
        path = tmp_path / f"over{text[0] == '-'}.csv"
        path.write_text(f"a,b\n1,2.5\n2,{text}\n")
        _one_error(_prepare(path, tmp_path), ":3:", "outside float64")
    lines = tmp_path / "big.jsonl"
    lines.write_text(json.dumps({"a": 1.5}) + "\n" + '{"a": 1e309}\n')
    _one_error(_prepare(lines, tmp_path), "big.jsonl:2:", "outside float64")


def test_utf16_without_a_bom_is_one_error_naming_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "u16.csv"
    path.write_bytes("a,b\n1,2\n3,4\n".encode("utf-16-le"))
    _one_error(_prepare(path, tmp_path), "UTF-16-LE", "--encoding utf-16-le")
    done = _prepare(path, tmp_path, "--encoding", "utf-16-le")
    assert done.returncode == 0, done.stderr


def test_a_comma_header_over_semicolon_rows_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text("a,b,c\n1;2;3\n4;5;6\n")
    _one_error(_prepare(path, tmp_path), "header is split by ','", "rows by ';'")


def test_a_damaged_parquet_footer_is_one_error(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), good)
    data = good.read_bytes()
    cases = {
        "length": data[:-8] + b"\xff\xff\xff\x7f" + data[-4:],  # a footer longer than the file
        "magic": data[:-4] + b"PAR0",
        "metadata": data[:-60] + b"\x00" * 52 + data[-8:],  # the footer's bytes zeroed
    }
    for name, damaged in cases.items():
        path = tmp_path / f"{name}.parquet"
        path.write_bytes(damaged)
        _one_error(_prepare(path, tmp_path), f"{name}.parquet")
