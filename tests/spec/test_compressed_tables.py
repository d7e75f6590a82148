"""Tables compressed as pandas infers it from the name (``.gz``, ``.bz2``, ``.xz``, ``.zst``)
prepare as pandas reads them; a damaged one is one error naming it; ``.zst`` without
zstandard is one line naming the package."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import catalog

zstandard = pytest.importorskip("zstandard")

TEXT = "a,b,c\n1,2.5,x\n3,,y\n-4,1e3,z\n"
COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: bytes(zstandard.ZstdCompressor().compress(data)),
}


def _plain(value: object) -> object:
    return value.item() if hasattr(value, "item") else value


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_a_compressed_csv_prepares_as_pandas_reads_it(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"table.csv{suffix}"
    path.write_bytes(COMPRESS[suffix](TEXT.encode()))
    b = catalog.prepare_files(path, data_dir=tmp_path / "d")
    assert b.info.name == "table"
    frame = pd.read_csv(path)
    got = [{k: _plain(v) for k, v in e.items()} for e in b.as_data_source("train")]
    want = frame.to_dict("records")
    assert [list(g) for g in got] == [list(w) for w in want]
    assert str(got) == str(want)  # NaN included


def test_compressed_tsv_and_json_lines_and_a_folder_of_them(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "train.tsv.gz").write_bytes(gzip.compress(b"a\tb\n1\tx\n2\ty\n"))
    (tmp_path / "f" / "test.tsv.gz").write_bytes(gzip.compress(b"a\tb\n3\tz\n"))
    b = catalog.prepare_files(tmp_path / "f", "f", data_dir=tmp_path / "d")
    assert b.info.splits["train"].num_examples == 2 and b.info.splits["test"].num_examples == 1
    assert b.as_data_source("test")[0]["b"] == "z"
    lines = tmp_path / "e.jsonl.xz"
    lines.write_bytes(lzma.compress(b'{"n": 1, "t": "a"}\n{"n": 2.5, "t": "b"}\n'))
    e = catalog.prepare_files(lines, "e", data_dir=tmp_path / "d")
    frame = pd.read_json(lines, lines=True)
    assert [float(x["n"]) for x in e.as_data_source("train")] == frame["n"].tolist()


def test_a_damaged_compressed_file_is_one_error_naming_it(tmp_path: Path) -> None:
    rng = random.Random(1)
    text = "a,b\n" + "".join(f"{rng.random()},{rng.random()}\n" for _ in range(5000))
    data = gzip.compress(text.encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    run = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(path), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    assert run.stderr.count("\n") == 1 and "cut.csv.gz: not a complete gzip file" in run.stderr
    assert not (tmp_path / "d" / "cut").exists()


BLOCK = """
import importlib.abc, runpy, sys
class NoZstd(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "zstandard":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoZstd())
sys.argv = ["catalog", *sys.argv[1:]]
runpy.run_module("catalog", run_name="__main__")
"""


def test_zst_without_zstandard_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.csv.zst"
    path.write_bytes(COMPRESS[".zst"](TEXT.encode()))
    run = subprocess.run(
        [sys.executable, "-c", BLOCK, "prepare", str(path), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0
    assert run.stderr.count("\n") == 1, run.stderr
    assert "needs zstandard: pip install 'catalog[zstd]'" in run.stderr
