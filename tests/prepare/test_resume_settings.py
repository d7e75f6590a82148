"""An interrupted prepare's finished shards are kept by a later prepare that names no shard size
(it resumes at the size they were cut at), and a prepare that asks for another size says in one
line what it discards and how to keep it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import catalog
from catalog.prepare.options import PrepareOptions
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder, kill_prepare_after

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards


def kill_after_two(folder: Path, data: Path) -> Path:
    kill_prepare_after(folder, data, 2, SHARD)
    (work,) = data.glob("tiny/1.0.0.incomplete-*")
    assert len(list(work.glob("*.array_record-*"))) == 2
    return work


def test_no_size_given_resumes_at_the_interrupted_size(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    kill_after_two(folder, data)
    b = catalog.builder(folder, data_dir=data)
    done = b.prepare(PrepareOptions())  # as data_source() and download_and_prepare() do
    assert (done.units_kept, done.units_written) == (2, 3)
    fresh = catalog.builder(folder, data_dir=tmp_path / "fresh")
    fresh.download_and_prepare(shard_size=SHARD)
    ours = sorted(p.name for p in b.data_path.glob("*.array_record-*"))
    assert ours == sorted(p.name for p in fresh.data_path.glob("*.array_record-*"))
    for name in ours:
        assert (b.data_path / name).read_bytes() == (fresh.data_path / name).read_bytes()


def test_another_size_says_what_it_discards(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    work = kill_after_two(folder, data)
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--shard-size", "120000"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CATALOG_DATA_DIR": str(data)},
    )
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "discarding" in line]
    assert "tiny: discarding 2 finished shards (" in line and str(work) in line
    assert "it cut shards at 58.6 KiB, this prepare at 117.2 KiB" in line
    assert "prepare with --shard-size 60000 (shard_size=60000)" in line
    assert not work.exists()
