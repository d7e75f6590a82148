"""`catalog verify` and catalog.read.verify: corrupt, missing and miscounted shards are named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.read.verify import Problem
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder
from remote_fixtures import verify_at


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


@pytest.fixture
def prepared(tmp_path: Path, server: LoopbackServer) -> Path:
    """The data path of a prepared 5-example dataset, 'tiny'."""
    folder = idx_builder(tmp_path, server, 5)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare()
    return b.data_path


SHARD = "tiny-train.array_record-00000-of-00001"


def flip_a_byte(path: Path, at: int = 200) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def edit_info(data_path: Path, **shard_fields: object) -> None:
    info_file = data_path / "dataset_info.json"
    info = json.loads(info_file.read_text())
    info["splits"]["train"]["shards"][0].update(shard_fields)
    if "num_examples" in shard_fields:
        info["splits"]["train"]["num_examples"] = shard_fields["num_examples"]
    info_file.write_text(json.dumps(info))


def test_an_intact_dataset_has_no_problems(prepared: Path) -> None:
    assert verify_at(prepared) == []


def test_each_kind_of_problem(prepared: Path) -> None:
    shard = prepared / SHARD
    flip_a_byte(shard)
    [problem] = verify_at(prepared)
    assert problem.kind == "sha256" and problem.file == SHARD
    assert str(problem).startswith(f"{SHARD}: sha256 is ")
    flip_a_byte(shard)  # back as it was
    assert verify_at(prepared) == []

    with open(shard, "ab") as f:
        f.write(b"more")
    [problem] = verify_at(prepared)
    assert problem.kind == "size" and problem.message.endswith("dataset_info.json says " + str(
        shard.stat().st_size - 4))  # fmt: skip
    shard.write_bytes(shard.read_bytes()[:-4])

    edit_info(prepared, num_examples=6)  # the file is intact, the count recorded is not
    assert verify_at(prepared) == [
        Problem("records", SHARD, "holds 5 records, dataset_info.json says 6")
    ]
    edit_info(prepared, num_examples=5)

    shard.unlink()
    assert [(p.kind, p.file) for p in verify_at(prepared)] == [("missing", SHARD)]

    for garbage in ("{not json", '{"splits": [], "features": {}}', "[]"):
        (prepared / "dataset_info.json").write_text(garbage)
        [problem] = verify_at(prepared)
        assert problem.kind == "info" and problem.file == "dataset_info.json"
        assert "unreadable" in problem.message
    (prepared / "dataset_info.json").unlink()
    assert verify_at(prepared) == [
        Problem("info", "dataset_info.json", f"cannot read {prepared / 'dataset_info.json'}: "
                "No such file or directory")
    ]  # fmt: skip


def test_a_split_count_that_its_shards_do_not_add_up_to(prepared: Path) -> None:
    info_file = prepared / "dataset_info.json"
    info = json.loads(info_file.read_text())
    info["splits"]["train"]["num_examples"] = 7
    info_file.write_text(json.dumps(info))
    assert verify_at(prepared) == [
        Problem("info", "dataset_info.json", "split 'train' says 7 examples but its shards hold 5")
    ]


def test_cli_verify_names_the_corrupt_shard_and_exits_1(prepared: Path) -> None:
    data_dir = prepared.parent.parent  # <data dir>/tiny/1.0.0
    data, folder = ["--data-dir", str(data_dir)], str(data_dir.parent / "tiny")
    ok = run("verify", folder, *data)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("tiny 1.0.0: ok: 1 shard, 5 examples, ")
    assert ok.stdout.rstrip().endswith(f"-> {prepared}")

    flip_a_byte(prepared / SHARD)
    bad = run("verify", folder, *data)
    assert bad.returncode == 1 and bad.stderr == ""
    lines = bad.stdout.splitlines()
    assert lines[0].startswith(f"tiny 1.0.0: {SHARD}: sha256 is ")
    assert lines[1] == (
        f"tiny 1.0.0: 1 problem in 1 shard; prepare it again: catalog prepare {folder} "
        f"--overwrite {' '.join(data)}"
    )

    (prepared / SHARD).unlink()
    result = run("verify", folder, *data, "--json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    [entry] = doc["datasets"]
    assert entry["name"] == "tiny" and entry["ok"] is False and entry["shards"] == 1
    assert entry["problems"] == [
        {"kind": "missing", "file": SHARD, "message": f"missing from {prepared}"}
    ]


def test_cli_verify_of_a_dataset_not_prepared_is_a_usage_error(tmp_path: Path) -> None:
    result = run("verify", "mnist", "--data-dir", str(tmp_path))
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr == (
        f"catalog: error: mnist 3.0.1 is not prepared in {tmp_path}; prepare it first: "
        f"catalog prepare mnist --data-dir {tmp_path}\n"
    )
