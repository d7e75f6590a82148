"""Prepared datasets in a bucket for the remote-reading tests: prepared locally with the real
prepare path (`catalog.builder(...).download_and_prepare`), its generation uploaded to the
local S3 server in the bucket layout (`catalog.storage.remote`), the pointer written last."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import catalog
from catalog.read.verify import Problem, verify
from catalog.storage.data_dir import location, store_for
from catalog.storage.remote import remote_dir, write_pointer
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder
from s3server import S3Server


def prepare_local(root: Path, count: int, *, shard_size: int | None = None) -> tuple[Path, Path]:
    """A dataset `tiny` of `count` pattern images prepared in `root`/data; returns its
    generation and its builder folder."""
    root.mkdir(parents=True, exist_ok=True)
    with LoopbackServer() as server:
        folder = idx_builder(root, server, count)
        b = catalog.builder(str(folder), data_dir=root / "data")
        b.download_and_prepare(shard_size=shard_size)
    source = b.as_data_source("train")
    generation = source.path
    assert isinstance(generation, Path)
    return generation, folder


def publish_to_bucket(s3: S3Server, generation: Path, bucket: str, prefix: str) -> str:
    """Upload `generation` to ``s3://bucket/prefix/tiny/1.0.0.gen-...`` and point
    ``1.0.0.pointer`` at it; returns the data dir URL."""
    s3.upload_dir(generation, bucket, f"{prefix}/tiny/{generation.name}")
    write_pointer(remote_dir(f"s3://{bucket}/{prefix}/tiny"), "1.0.0", generation.name)
    return f"s3://{bucket}/{prefix}"


def shard_files(generation: Path) -> list[str]:
    info = json.loads((generation / "dataset_info.json").read_text())
    return [s["file"] for split in info["splits"].values() for s in split["shards"]]


def local_shards(folder: Path) -> dict[str, str]:
    """``{shard file name: sha256}`` of a prepared generation on disk."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.glob("*.array_record-*"))
    }


def verify_at(path: object) -> list[Problem]:
    """`catalog.read.verify.verify` of the prepared dataset at a path or URL (its data dir's
    store found from it, as the resolver would)."""
    where = location(path)  # type: ignore[arg-type]
    return verify(store_for(where), where)
