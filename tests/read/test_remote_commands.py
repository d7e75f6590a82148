"""The CLI on a remote data dir (a real S3 server on 127.0.0.1), run as a subprocess:
`catalog info`, `verify` (a corrupt object found) and `export`, with --data-dir and with
$CATALOG_DATA_DIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from remote_fixtures import prepare_local, publish_to_bucket, shard_files
from s3server import S3Server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("cli"), 60)


@pytest.fixture
def dataset(s3: S3Server, prepared: tuple[Path, Path]) -> tuple[str, Path, Path]:
    generation, folder = prepared
    s3.make_bucket("cli")
    return publish_to_bucket(s3, generation, "cli", "d"), generation, folder


def catalog_cli(
    s3: S3Server, tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **s3.env(), "CATALOG_CACHE_DIR": str(tmp_path / "cache"), **(env or {})}
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), full.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full,
        cwd=tmp_path,
    )


def test_info_and_verify_read_a_bucket(
    s3: S3Server, dataset: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, _, folder = dataset
    info = catalog_cli(s3, tmp_path, "info", str(folder), "--data-dir", url, "--json")
    assert info.returncode == 0, info.stderr
    document = json.loads(info.stdout)
    assert document["prepared"] is True and document["splits"]["train"]["num_examples"] == 60
    verify = catalog_cli(s3, tmp_path, "verify", str(folder), env={"CATALOG_DATA_DIR": url})
    assert verify.returncode == 0, verify.stderr + verify.stdout
    assert "ok" in verify.stdout.lower()


def test_verify_names_a_corrupt_object_in_the_bucket(
    s3: S3Server, dataset: tuple[str, Path, Path], tmp_path: Path
) -> None:
    _, generation, folder = dataset
    s3.make_bucket("cli-bad")
    url = publish_to_bucket(s3, generation, "cli-bad", "d")
    shard = shard_files(generation)[0]
    body = bytearray((generation / shard).read_bytes())
    body[500] ^= 1
    s3.client().put_object(
        Bucket="cli-bad", Key=f"d/tiny/{generation.name}/{shard}", Body=bytes(body)
    )
    verify = catalog_cli(s3, tmp_path, "verify", str(folder), "--data-dir", url, "--json")
    assert verify.returncode != 0
    report = json.loads(verify.stdout)
    assert report["ok"] is False
    (entry,) = report["datasets"]
    assert [(p["kind"], p["file"]) for p in entry["problems"]] == [("sha256", shard)]


def test_export_reads_a_bucket(
    s3: S3Server, dataset: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, generation, folder = dataset
    out = tmp_path / "exported"
    run = catalog_cli(
        s3,
        tmp_path,
        "export",
        str(folder),
        "-o",
        str(out),
        "--data-dir",
        url,
        "--format",
        "tfrecord",
    )
    assert run.returncode == 0, run.stderr
    assert "train 60" in run.stdout
    local = catalog_cli(
        s3, tmp_path, "export", str(generation), "-o", str(tmp_path / "l"), "--format", "tfrecord"
    )
    assert local.returncode == 0, local.stderr
    name = "tiny-train.tfrecord-00000-of-00001"
    assert (out / name).read_bytes() == (tmp_path / "l" / name).read_bytes()


def test_a_url_without_its_dataset_is_one_line(
    s3: S3Server, dataset: tuple[str, Path, Path], tmp_path: Path
) -> None:
    _, _, folder = dataset
    run = catalog_cli(s3, tmp_path, "verify", str(folder), "--data-dir", "s3://cli/nothing")
    assert run.returncode != 0
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "not prepared in s3://cli/nothing" in run.stderr
