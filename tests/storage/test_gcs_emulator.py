"""gs:// data dirs against a GCS emulator on 127.0.0.1 (gcp-storage-emulator, reached by gcsfs
through the standard ``STORAGE_EMULATOR_HOST``): `catalog prepare --data-dir gs://...`
publishes one generation behind a pointer, equal to a local prepare, and both ways of reading
(shard cache, byte ranges) serve the same examples; `rm` removes it.

What this emulator cannot show, and a real bucket would: it ignores ``ifGenerationMatch=0``
(so the preparers' lock is only exercised against S3 here), it has no IAM; range reads are
not pinned to an object's generation on GCS (gcsfs sends no ifGenerationMatch on a ranged read,
where s3fs sends If-Match), so a shard object rewritten by hand under an open range reader is
not refused by the request itself; and gcsfs's storage-layout lookup (gRPC) is switched off
with ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false`` because the emulator does not speak gRPC."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.storage import remote
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli, idx_builder
from remote_fixtures import local_shards
from s3server import free_port

# gcsfs reads GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT when it is imported: it is imported only once the
# fixture has set the environment
if not all(importlib.util.find_spec(m) for m in ("gcsfs", "gcp_storage_emulator")):
    pytest.skip("gcsfs and gcp-storage-emulator are test dependencies", allow_module_level=True)

URL = "gs://data/team"
SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards


def _start_emulator() -> tuple[int, subprocess.Popen[bytes]]:
    """The emulator listening on a free port. It takes the port as an argument, found free
    beforehand, which another process may take first: the emulator then exits, and is
    started again on another port."""
    for _ in range(3):
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1",
             "--port", str(port), "--in-memory"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                if proc.poll() is None:  # (not another process's server on that port)
                    return port, proc
            time.sleep(0.1)
        proc.kill()
        proc.wait(10)
    raise AssertionError("the GCS emulator did not start (three ports tried)")


@pytest.fixture
def gcs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """The emulator in its own process, a bucket ``data`` in it; yields its endpoint."""
    port, proc = _start_emulator()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for name, value in {
            "STORAGE_EMULATOR_HOST": endpoint,
            "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
            "GOOGLE_CLOUD_PROJECT": "test",
            "GCE_METADATA_HOST": "127.0.0.1:9",  # no metadata server: anonymous at once
            "GCE_METADATA_IP": "127.0.0.1:9",
            "NO_GCE_CHECK": "true",
            "CATALOG_DOWNLOAD_DIR": str(tmp_path / "downloads"),
        }.items():
            monkeypatch.setenv(name, value)
        remote._FILESYSTEMS.clear()
        _filesystem().mkdir("data")
        yield endpoint
    finally:
        remote._FILESYSTEMS.clear()
        proc.terminate()
        proc.wait(10)


def _filesystem() -> Any:
    from gcsfs.core import GCSFileSystem  # the plain one, whatever the variable said at import

    return GCSFileSystem(token="anon", skip_instance_cache=True)


def _objects(prefix: str) -> dict[str, bytes]:
    fs: Any = _filesystem()
    return {p[len(prefix) + 1 :]: fs.cat_file(p) for p in fs.find(prefix)}


def test_prepare_into_gs_and_read_it_back_both_ways(
    tmp_path: Path, server: LoopbackServer, gcs: str
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD), "--json"
    )
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["datasets"][0]
    assert (entry["status"], entry["path"]) == ("prepared", f"{URL}/tiny/1.0.0")

    objects = _objects("data/team/tiny")
    generation = json.loads(objects["1.0.0.pointer"])["generation"]
    assert generation.startswith("1.0.0.gen-")
    shards = {k.split("/", 1)[1]: v for k, v in objects.items() if ".array_record-" in k}
    assert len(shards) == 5 and all(k.startswith(f"{generation}/") for k in objects if "/" in k)
    assert not [k for k in objects if k.endswith(".lock")]  # the lock was released

    local = catalog.builder(folder, data_dir=tmp_path / "local")
    local.download_and_prepare(shard_size=SHARD)
    local_path = Path(local.data_path)
    assert {n: hashlib.sha256(d).hexdigest() for n, d in shards.items()} == local_shards(local_path)

    want = catalog.data_source(str(local_path), split="train")
    picks = [0, 7, 61, 62, 150, 299]
    for how in ("cache", "range"):
        ds = catalog.data_source(
            str(folder), split="train", data_dir=URL, remote_read=how, cache_dir=tmp_path / "cache"
        )
        assert len(ds) == 300
        for got, expected in zip(ds.__getitems__(picks), want.__getitems__(picks), strict=True):
            assert np.array_equal(got["image"], expected["image"])
            assert got["label"] == expected["label"]
        assert [int(e["label"]) for e in ds] == [int(e["label"]) for e in want]
        ds.close()

    again = catalog_cli("prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD))
    assert again.returncode == 0, again.stderr
    assert "reused" in again.stdout

    gone = catalog_cli("rm", str(folder), "--data-dir", URL)
    assert gone.returncode == 0, gone.stderr
    assert not [k for k in _objects("data/team/tiny") if k.startswith("1.0.0")]


def test_a_tfds_directory_in_gs_is_imported(gcs: str, tmp_path: Path) -> None:
    """TFDS serves some datasets only prepared, in gs:// (``gs://tfds-data/datasets/NAME/
    VERSION``): ``catalog import gs://...`` fetches and imports one, equal to importing the
    same directory from disk (tests/interop/test_tfds_remote_dir.py has S3 and HTTP)."""
    from tf_fixtures import expected, plain, tfds_dir

    folder = tfds_dir(expected("expected.json"), "tfrecord")
    fs = _filesystem()
    for path in folder.iterdir():
        fs.pipe_file(f"data/tfds-data/datasets/tiny_features/1.2.0/{path.name}", path.read_bytes())
    url = "gs://data/tfds-data/datasets/tiny_features/1.2.0"
    result = catalog_cli("import", url, "--data-dir", str(tmp_path / "data"), "--json")
    assert result.returncode == 0, result.stderr
    done = json.loads(result.stdout)
    local, _ = catalog.import_dataset(folder, data_dir=tmp_path / "local")
    assert done["splits"] == {n: s.num_examples for n, s in local.splits.items()}
    got = catalog.data_source(done["path"], split="test")
    want = catalog.data_source(str(tmp_path / "local" / "tiny_features" / "1.2.0"), split="test")
    assert len(got) == len(want) > 0  # type: ignore[arg-type]
    for i in range(len(want)):  # type: ignore[arg-type]
        assert plain(got[i]) == plain(want[i])  # type: ignore[index]
