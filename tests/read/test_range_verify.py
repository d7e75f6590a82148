"""Range reads verify what they serve: one flipped bit in a record of a shard object (in an
s3:// bucket, moto's server on 127.0.0.1, or on an https mirror) is one ShardError naming the
shard, the chunk and the record, in every read path, never a wrong pixel; the healthy records
around it stay readable."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import PipelineError, ShardError
from catalog.read.mapped_shard import map_shard
from catalog.read.shard_layout import chunk_index
from catalog.storage import remote

from remote_fixtures import prepare_local, publish_to_bucket, shard_files
from s3server import S3Server, StaticServer

ROOT = Path(__file__).resolve().parents[2]
COUNT = 200
BAD = 57  # the record whose last byte (a pixel) is flipped


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("verify"), COUNT)


def flipped(shard: Path, record: int) -> tuple[bytes, int]:
    """The shard's bytes with one bit of `record`'s last byte flipped, and that chunk's
    offset."""
    body = bytearray(shard.read_bytes())
    index = chunk_index(bytes(body))
    assert index is not None
    chunk = int(index.chunk_of(np.array([record]))[0])
    offset = int(index.offsets[chunk])
    mapped = map_shard(str(shard), int(index.firsts[-1]), hashlib.sha256(body).hexdigest())
    assert mapped is not None
    stop = int(mapped.starts[record]) + int(mapped.lengths[record])
    mapped.close()
    body[stop - 1] ^= 0x01
    return bytes(body), offset


@pytest.fixture
def s3_url(
    s3: S3Server, prepared: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, int]:
    """A bucket data dir holding `tiny` with one bit of record BAD flipped after it was
    published (as a damaged disk or a bad copy would leave it)."""
    s3.make_bucket("flip")
    url = publish_to_bucket(s3, prepared[0], "flip", "p")
    shard = shard_files(prepared[0])[0]
    body, offset = flipped(prepared[0] / shard, BAD)
    key = f"p/tiny/{prepared[0].name}/{shard}"
    s3.client().put_object(Bucket="flip", Key=key, Body=body)
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "3")
    return url, offset


def expect_corrupt(error: BaseException, offset: int) -> None:
    text = str(error)
    assert f"record {BAD} (chunk {BAD}, at byte {offset}) is corrupt" in text, text
    assert "does not match the hash in its chunk header" in text and "array_record-00000" in text


def test_every_read_path_refuses_a_flipped_bit_and_serves_the_rest(
    s3_url: tuple[str, int], prepared: tuple[Path, Path]
) -> None:
    url, offset = s3_url
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    local = catalog.data_source(str(prepared[0]), split="train")
    reads = {
        "ds[i]": lambda: ds[BAD],
        "ds[list]": lambda: ds[[3, BAD, 120]],
        "__getitems__": lambda: ds.__getitems__([BAD - 1, BAD]),
        "read_batch": lambda: ds.read_batch(list(range(BAD - 5, BAD + 5))),
        "iteration": lambda: list(ds),
        "view": lambda: list(ds[BAD - 3 : BAD + 3]),
        "pipeline": lambda: list(catalog.pipeline(ds).batch(128)),
    }
    for name, read in reads.items():
        with pytest.raises(ShardError) as caught:
            read()
        expect_corrupt(caught.value, offset)
        assert name  # (which path failed shows in the traceback)
    for i in (0, BAD - 1, BAD + 1, COUNT - 1):  # the healthy records are still read
        assert np.array_equal(ds[i]["image"], local[i]["image"])


def test_pipeline_worker_processes_report_it(s3_url: tuple[str, int]) -> None:
    url, offset = s3_url
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    pipe = catalog.pipeline(ds).batch(128).prefetch(2, "process")
    with pytest.raises((ShardError, PipelineError)) as caught:
        list(pipe)
    expect_corrupt(caught.value, offset)


LOADER = """\
import sys
import catalog
from torch.utils.data import DataLoader

if __name__ == "__main__":
    ds = catalog.data_source(sys.argv[1], split="train", remote_read="range")
    loader = DataLoader(ds, batch_size=128, num_workers=1, multiprocessing_context="fork")
    try:
        for _ in loader:
            pass
    except catalog.ShardError as error:
        print("ShardError", error)
    else:
        print("no error")
"""


def test_dataloader_workers_report_it(s3_url: tuple[str, int], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    url, offset = s3_url
    script = tmp_path / "loader.py"
    script.write_text(LOADER)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, str(script), f"{url}/tiny/1.0.0"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("ShardError"), run.stdout + run.stderr[-2000:]
    expect_corrupt(RuntimeError(run.stdout), offset)


def test_an_https_mirror_with_a_flipped_bit_is_refused(
    prepared: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "mirror"
    shutil.copytree(prepared[0].parent.parent, data_dir, symlinks=True)
    generation = data_dir / "tiny" / prepared[0].name
    shard = generation / shard_files(generation)[0]
    body, offset = flipped(shard, BAD)
    shard.write_bytes(body)
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "2")
    remote._FILESYSTEMS.clear()
    with StaticServer(data_dir) as mirror:
        ds = catalog.data_source(f"{mirror.url}/tiny/1.0.0", split="train", remote_read="range")
        with pytest.raises(ShardError) as caught:
            ds[BAD]
        expect_corrupt(caught.value, offset)
        assert int(ds[BAD + 1]["label"]) >= 0
    remote._FILESYSTEMS.clear()
