"""Benchmark: preparing into a bucket against preparing into a local dir, side by side.

The same generated IDX dataset (Fashion-MNIST-shaped 28x28 images, served from 127.0.0.1) is
prepared into a local data dir and into an S3 bucket on moto's standalone server (127.0.0.1),
serially and with ``--num-proc 2``, downloads cached, each ``--repeat`` times; medians and the
bucket/local ratio are printed, with the floor: the same shard bytes uploaded by s3fs alone.
moto is a Python server: on a real bucket the upload side is the network's, not moto's.

    python benchmarks/bench_bucket_prepare.py [--examples 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from conftest import write_builder
from s3server import S3Server

SHARD = 8 << 20


def median_seconds(run: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="catalog-bench-bucket-"))
    with S3Server() as s3, LoopbackServer() as http:
        os.environ.update(s3.env())
        os.environ["CATALOG_DOWNLOAD_DIR"] = str(root / "downloads")
        s3.make_bucket("bench")
        files = {}
        n = args.examples
        for role, array in (("i.gz", pattern_images(n)), ("l.gz", pattern_labels(n))):
            files[role] = write_idx(root / f"bench-{role}", array).read_bytes()
        folder = write_builder(
            root / "bench", http, files, name="bench", splits={"train": ("i.gz", "l.gz", n)}
        )
        catalog.builder(folder, data_dir=root / "warm").download_and_prepare()  # downloads
        results = {}
        for num_proc in (1, 2):
            for where, data_dir in (("local", str(root / "local")), ("bucket", "s3://bench/d")):
                b = catalog.builder(folder, data_dir=data_dir)
                results[(where, num_proc)] = median_seconds(
                    lambda b=b, p=num_proc: b.download_and_prepare(
                        overwrite=True, num_proc=p, shard_size=SHARD
                    ),
                    args.repeat,
                )
        before = len(s3.requests)
        catalog.builder(folder, data_dir="s3://bench/d").download_and_prepare(
            overwrite=True, shard_size=SHARD
        )
        requests = s3.requests[before:]
        import fsspec

        shards = sorted(
            (Path(catalog.builder(folder, data_dir=root / "local").data_path)).glob(
                "*.array_record-*"
            )
        )
        size = sum(p.stat().st_size for p in shards)
        fs = fsspec.filesystem("s3", skip_instance_cache=True)
        floor = median_seconds(
            lambda: [fs.put_file(str(p), f"bench/floor/{p.name}") for p in shards], args.repeat
        )
    print(f"{n} examples, {len(shards)} shards, {size / 2**20:.1f} MiB; median of {args.repeat}")
    for num_proc in (1, 2):
        local, bucket = results[("local", num_proc)], results[("bucket", num_proc)]
        print(
            f"num_proc={num_proc}: local {local:.2f} s, bucket {bucket:.2f} s "
            f"({bucket / local:.2f}x local)"
        )
    print(f"floor: the shards uploaded by s3fs alone {floor:.2f} s")
    puts = sum(1 for method, _ in requests if method in ("PUT", "POST"))
    print(
        f"one serial --overwrite prepare into the bucket: {len(requests)} requests ({puts} writes)"
    )
    extra = results[("bucket", 1)] - results[("local", 1)]
    print(f"bucket - local (serial) = {extra:.2f} s, {extra / floor:.2f}x the upload floor")


if __name__ == "__main__":
    main()
