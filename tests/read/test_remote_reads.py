"""Reading a dataset from a bucket (a real S3 server on 127.0.0.1: moto's), through the shard
cache and by byte ranges: the same examples as the local copy, every way a DataSource is read."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.read.remote_shard import RangeShard

from remote_fixtures import prepare_local, publish_to_bucket
from s3server import S3Server

ROOT = Path(__file__).resolve().parents[2]

COUNT = 300


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("prepared"), COUNT, shard_size=120_000)


@pytest.fixture
def bucket(s3: S3Server, prepared: tuple[Path, Path]) -> tuple[str, Path, Path]:
    """A data dir URL holding `tiny` (COUNT examples in 3 shards), its local copy, and its
    builder folder."""
    generation, folder = prepared
    return publish_to_bucket(s3, generation, "data", "team"), generation, folder


def local_source(generation: Path) -> catalog.DataSource:
    return catalog.data_source(str(generation), split="train")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("mode", ["cache", "range"])
def test_every_way_of_reading_gives_the_local_examples(
    bucket: tuple[str, Path, Path], cache_dir: Path, mode: str
) -> None:
    url, generation, folder = bucket
    local = local_source(generation)
    ds = catalog.data_source(str(folder), data_dir=url, split="train", remote_read=mode)
    assert len(ds) == COUNT and len(local._records.paths) == 3
    assert str(ds.path).startswith(url) and ".gen-" in str(ds.path)
    for i in (0, 1, 119, 150, COUNT - 1, -1):
        assert same(ds[i], local[i])
    rows = [5, 299, 0, 5, 180, 181, 182]
    assert all(same(a, b) for a, b in zip(ds[rows], local[rows], strict=True))
    assert all(
        same(a, b) for a, b in zip(ds.__getitems__(np.array(rows)), local[rows], strict=True)
    )
    assert all(same(a, b) for a, b in zip(ds, local, strict=True))
    view = ds[100:200:3]
    assert all(same(a, b) for a, b in zip(view, local[100:200:3], strict=True))
    batch = ds.read_batch(rows)
    expected = local.read_batch(rows)
    assert batch is not None and expected is not None and same(batch, expected)
    clone = pickle.loads(pickle.dumps(ds))
    assert same(clone[42], local[42])
    if mode == "cache":
        assert sorted(p.stat().st_size for p in (cache_dir / "shards").iterdir()) == sorted(
            p.stat().st_size for p in generation.glob("*.array_record-*")
        )
    else:
        assert not cache_dir.exists()


def test_a_batch_of_neighbours_is_one_request(bucket: tuple[str, Path, Path], s3: S3Server) -> None:
    url, _, _ = bucket
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    ds[0]  # opens the first shard (its index: one request)
    before = s3.count(".array_record-00000")
    ds[list(range(3, 3 + 64))]
    assert s3.count(".array_record-00000") - before == 1
    reader = ds._records.readers[0]
    assert isinstance(reader, RangeShard)


WORKERS_SCRIPT = """\
import sys
import catalog, torch
from torch.utils.data import ConcatDataset, DataLoader

def main():
    url = sys.argv[1]
    both = [catalog.data_source(url + "/tiny/1.0.0", split="train", remote_read=mode)
            for mode in ("cache", "range")]
    for ds in both:
        ds[0]  # the parent reads first: its fsspec loop, threads and handles exist at the fork
        loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=2,
                            multiprocessing_context="fork")
        labels = [int(x) for batch in loader for x in batch["label"]]
        print("fork", len(labels), sum(labels))
    loader = DataLoader(ConcatDataset(both), batch_size=64, shuffle=True, num_workers=2,
                        multiprocessing_context="spawn")
    labels = [int(x) for batch in loader for x in batch["label"]]
    print("spawn", len(labels), sum(labels))
    p = catalog.pipeline(both[1]).shuffle(seed=1).batch(50).prefetch(2, "process")
    labels = [int(x) for batch in p for x in batch["label"]]
    print("pipeline", len(labels), sum(labels))

if __name__ == "__main__":
    main()
"""


def test_dataloader_workers_fork_and_spawn_and_the_pipeline_read_the_bucket(
    bucket: tuple[str, Path, Path], s3: S3Server, tmp_path: Path
) -> None:
    """Both ways of reading, in DataLoader workers started by fork (after the parent read:
    its event loop thread and connections must not be used in the child) and by spawn (the
    source pickled), and in the pipeline's process workers."""
    pytest.importorskip("torch")
    url, generation, _ = bucket
    total = sum(int(e["label"]) for e in local_source(generation))
    script = tmp_path / "workers.py"
    script.write_text(WORKERS_SCRIPT)
    env = {**os.environ, **s3.env(), "CATALOG_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, str(script), url],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    n, t = str(COUNT), str(total)
    assert run.stdout.split() == [
        "fork", n, t, "fork", n, t, "spawn", str(2 * COUNT), str(2 * total), "pipeline", n, t
    ]  # fmt: skip
