"""`catalog prepare` as CI runs it: --json, reuse, failures, --max-examples-per-split, quiet."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip


def prepare_json(*args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run `catalog prepare ... --json`; stdout must be exactly one JSON document."""
    result = run("prepare", *args, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout)


def test_json_result_then_reuse_without_a_request(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 5)
    data = tmp_path / "data"
    result, doc = prepare_json(str(folder), "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    assert doc["ok"] is True and len(doc["datasets"]) == 1
    entry = doc["datasets"][0]
    path = data / "tiny" / "1.0.0"
    assert {k: entry[k] for k in ("name", "config", "version", "status", "path", "error")} == {
        "name": "tiny", "config": None, "version": "1.0.0", "status": "prepared",
        "path": str(path), "error": None,
    }  # fmt: skip
    assert entry["max_examples_per_split"] is None
    assert isinstance(entry["seconds"], float) and entry["seconds"] >= 0
    train = entry["splits"]["train"]
    assert train["num_examples"] == 5 and len(train["shards"]) == 1
    shard = train["shards"][0]
    shard_file = path / shard["file"]
    assert shard["sha256"] == hashlib.sha256(shard_file.read_bytes()).hexdigest()
    assert shard["num_bytes"] == shard_file.stat().st_size == train["num_bytes"]
    assert shard["num_examples"] == 5 and entry["num_bytes"] == shard["num_bytes"]
    # Progress went to stderr as lines (stdout is not a terminal): no bars.
    assert "downloading i.gz" in result.stderr and "\r" not in result.stderr
    requests = len(server.requests)
    assert requests == 2

    again, doc = prepare_json(str(folder), "--data-dir", str(data))
    assert again.returncode == 0, again.stderr
    reused = doc["datasets"][0]
    assert reused["status"] == "reused" and reused["splits"] == entry["splits"]
    assert len(server.requests) == requests  # nothing fetched, not even a HEAD
    assert again.stderr == ""


def test_one_of_two_failing_in_json(tmp_path: Path, server: LoopbackServer) -> None:
    good = idx_builder(tmp_path, server, 3, name="good")
    bad = idx_builder(tmp_path, server, 3, name="bad")
    server.add("/files/bad/i.gz", b"<!DOCTYPE html><html>oops</html>", content_type="text/html")
    result, doc = prepare_json(str(bad), str(good), "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 1
    assert doc["ok"] is False
    failed, prepared = doc["datasets"]
    assert failed["name"] == "bad" and failed["status"] == "failed" and failed["splits"] == {}
    assert "HTML page" in failed["error"] and "/files/bad/i.gz" in failed["error"]
    assert prepared["name"] == "good" and prepared["status"] == "prepared"
    assert (tmp_path / "data" / "good" / "1.0.0" / "dataset_info.json").is_file()
    # The error is on stderr too, with the count of failures.
    assert "catalog: error: bad: " in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "catalog: 1 of 2 failed: bad"


def test_max_examples_per_split_is_marked_and_never_taken_for_the_full_dataset(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 5)
    data = ["--data-dir", str(tmp_path / "data")]
    result = run("prepare", str(folder), *data, "--max-examples-per-split", "2")
    assert result.returncode == 0, result.stderr
    assert "(at most 2 examples per split): train 2 examples" in result.stdout
    info = json.loads((tmp_path / "data/tiny/1.0.0/dataset_info.json").read_text())
    assert info["splits"]["train"]["num_examples"] == 2

    _, doc = prepare_json(str(folder), *data, "--max-examples-per-split", "2")
    assert doc["datasets"][0]["status"] == "reused"
    assert doc["datasets"][0]["max_examples_per_split"] == 2
    # Without the limit the partial copy is replaced by the whole dataset ...
    _, doc = prepare_json(str(folder), *data)
    assert doc["datasets"][0]["status"] == "prepared"
    assert doc["datasets"][0]["splits"]["train"]["num_examples"] == 5
    # ... which then serves any limit as it is.
    _, doc = prepare_json(str(folder), *data, "--max-examples-per-split", "2")
    assert doc["datasets"][0]["status"] == "reused"
    assert doc["datasets"][0]["splits"]["train"]["num_examples"] == 5


def test_overwrite_and_quiet(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 3)
    data = ["--data-dir", str(tmp_path / "data")]
    assert run("prepare", str(folder), *data, "-q").stderr == ""
    result = run("prepare", str(folder), *data, "--overwrite", "--quiet")
    assert result.returncode == 0 and result.stderr == ""
    assert "tiny 1.0.0: prepared in" in result.stdout and "train 3 examples" in result.stdout


def test_usage_error_prints_one_error_document(tmp_path: Path) -> None:
    """(It printed nothing on stdout: a script reading the JSON got no document.)"""
    result = run("prepare", "no_such_dataset", "--json", "--data-dir", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith("catalog: error: no dataset named 'no_such_dataset'")
    document = json.loads(result.stdout)
    assert document == {"ok": False, "exit_code": 2, "errors": [result.stderr[16:].rstrip("\n")]}
