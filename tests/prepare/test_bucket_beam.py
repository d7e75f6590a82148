"""Apache Beam workers prepare straight into a bucket (the DirectRunner against moto's S3 server
on 127.0.0.1): each work item uploads its unit's shard into the generation, the driver
publishes; and a unit's error reaches the driver through Beam's, as a cluster's would.

Beam is an extra with its own pins: these run in a venv with ``.[test,beam]`` (see .ci/run)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder
from s3server import S3Server

pytest.importorskip("apache_beam")

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards
URL = "s3://data/team"


def beam_prepare(folder: Path, mode: str) -> subprocess.CompletedProcess[str]:
    options = f"runner=DirectRunner,direct_num_workers=2,direct_running_mode={mode}"
    return subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", URL,
         "--shard-size", str(SHARD), "--beam-pipeline-options", options, "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_beam_workers_upload_into_the_bucket(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, mode: str
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    result = beam_prepare(folder, mode)
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["datasets"][0]
    assert entry["status"] == "prepared" and entry["units_written"] == 5
    client = s3.client()
    pointer = client.get_object(Bucket="data", Key="team/tiny/1.0.0.pointer")["Body"].read()
    generation = json.loads(pointer)["generation"]
    prefix = f"team/tiny/{generation}/"
    uploaded = {
        key[len(prefix) :]: hashlib.sha256(
            client.get_object(Bucket="data", Key=key)["Body"].read()
        ).hexdigest()
        for key in s3.keys("data", prefix)
        if ".array_record-" in key
    }
    serial = catalog.builder(folder, data_dir=tmp_path / "serial")
    serial.download_and_prepare(shard_size=SHARD)
    local = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in Path(serial.data_path).glob("*.array_record-*")
    }
    assert uploaded == local
    assert not [k for k in s3.keys("data", "team/") if ".incomplete-" in k or k.endswith(".lock")]


def test_a_unit_error_on_a_beam_worker_reaches_the_driver(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    spec = folder / "builder.yaml"
    spec.write_text(spec.read_text().replace("num_examples: 300", "num_examples: 301"))
    result = beam_prepare(folder, "in_memory")
    assert result.returncode == 3  # the source data does not match its description
    entry = json.loads(result.stdout)["datasets"][0]
    assert "301" in entry["error"] and "tiny-train.array_record-00004-of-00005" in entry["error"]
    assert s3.keys("data", "team/") == {}  # nothing is left that a reader would take
