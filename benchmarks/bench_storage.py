"""Benchmark: a Fashion-MNIST-sized dataset read from a local data dir and from a bucket.

One run, side by side, on the same prepared dataset (60,000 random 28x28 images by default,
prepared with the real fashion_mnist spec from files served on 127.0.0.1), uploaded to a local
S3 server (moto's ``moto_server``, started here in its own process on 127.0.0.1):

- local: the prepared data dir on this disk;
- cold cache: ``remote_read="cache"`` with an empty cache dir (the epoch includes fetching and
  verifying every shard);
- warm cache: the same, the shards already cached (a new data source, as a new process would);
- range: ``remote_read="range"``, records by byte ranges, nothing on local disk;
- the floors: the same bytes fetched by the file-system libraries alone (whole shards with
  fsspec/s3fs and with obstore; the range reads of single records with fsspec ``cat_ranges``
  and obstore ``get_ranges``).

For each: one full shuffled epoch in batches of 128 (``__getitems__``, what PyTorch's
DataLoader calls) and 10,000 random ``ds[i]``, medians over ``--repeat`` runs. Then the
requests a 128-batch costs by range reads (random indices, and neighbours), what checking each
range-read record against its chunk hash costs (per record and per batch of 128, checked and
not side by side), and the issue's targets, each PASS or FAIL.

    python benchmarks/bench_storage.py [--examples 60000] [--repeat 3] [--range-batches 5]
        [--range-reads 200] [--verify-batches 20] [--verify-only]
    (moto serves a few hundred requests a second: range reads are sampled)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.read.mapped_shard import forget_verified
from catalog.read.remote_shard import RangeShard, _Tail
from catalog.read.shard_layout import chunk_records
from catalog.spec.load import load_spec
from catalog.storage import remote
from catalog.storage.remote import remote_dir, write_pointer
from catalog.storage.remote_reads import read_ranges
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import write_idx

REPO = Path(__file__).resolve().parent.parent
BATCH = 128
RANDOM_READS = 10_000
BUCKET = "bench"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def s3_server() -> Iterator[str]:
    """moto's S3 server in its own process on 127.0.0.1; yields its endpoint URL."""
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # a loaded machine starts it slowly
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("moto_server did not start (pip install 'moto[server]')")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def prepare(tmp: Path, n_train: int) -> Path:
    """The fashion_mnist spec prepared from random images in `tmp`; its train generation."""
    source = tmp / "source"
    source.mkdir()
    rng = np.random.default_rng(0)
    for prefix, n in (("train", n_train), ("t10k", max(1, n_train // 6))):
        write_idx(
            source / f"{prefix}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28), np.uint8)
        )
        write_idx(source / f"{prefix}-labels-idx1-ubyte.gz", rng.integers(0, 10, n, np.uint8))
    spec = load_spec(REPO / "builders" / "fashion_mnist")
    with LoopbackServer() as server:
        counts = {"train": n_train, "test": max(1, n_train // 6)}
        builder = DatasetBuilder(dummy_spec(spec, server, source, counts), data_dir=tmp / "data")
        builder.download_and_prepare(download_dir=tmp / "downloads")
    path = builder.as_data_source("train").path
    assert isinstance(path, Path)
    return path


def upload(generation: Path) -> str:
    """`generation` into the bucket's layout, pointer last; the dataset's URL."""
    fs = remote_dir(f"s3://{BUCKET}").filesystem()
    fs.mkdir(BUCKET)
    dataset = remote_dir(f"s3://{BUCKET}/data/fashion_mnist")
    for path in sorted(generation.iterdir()):
        fs.put_file(str(path), (dataset / generation.name / path.name).path)
    version = generation.name.split(".gen-")[0]
    write_pointer(dataset, version, generation.name)
    return f"{dataset}/{version}"


def epoch(ds: Any, seed: int, batches: int | None = None, fresh: bool = False) -> float:
    """Seconds for one shuffled epoch in batches of 128; with `batches`, the first that many
    batches timed and the epoch's time extrapolated from them; `fresh`: as a new process's
    (what this one verified of the shards forgotten first)."""
    if fresh:
        forget_verified()
    order = np.random.default_rng(seed).permutation(len(ds))
    firsts = range(0, len(order), BATCH)
    timed_firsts = firsts if batches is None else firsts[:batches]
    start = time.perf_counter()
    for first in timed_firsts:
        ds.__getitems__(order[first : first + BATCH])
    return (time.perf_counter() - start) * len(firsts) / len(timed_firsts)


def random_reads(ds: Any, seed: int, count: int = RANDOM_READS) -> float:
    """Seconds for 10,000 random ds[i] (`count` of them timed, scaled to 10,000)."""
    keys = np.random.default_rng(seed).integers(0, len(ds), count).tolist()
    start = time.perf_counter()
    for i in keys:
        ds[i]
    return (time.perf_counter() - start) * RANDOM_READS / count


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def verification_cost(
    reader: RangeShard, repeat: int, batches: int
) -> list[tuple[str, float, float]]:
    """Seconds per batch of 128, without and with the chunk-hash check (``reader._hash``
    set to None for the first): whole range reads of neighbours and of random rows from the
    server, and the same records split out of bytes already fetched (the check's CPU cost
    alone, without the network's noise)."""
    rng = np.random.default_rng(11)
    n = reader.num_records()
    neighbours = [np.arange(f, f + BATCH) for f in rng.integers(0, n - BATCH, batches)]
    randoms = [np.sort(rng.choice(n, BATCH, replace=False)) for _ in range(batches)]
    index = reader._index
    chunks = np.unique(index.chunk_of(neighbours[0]))
    span = (int(index.offsets[chunks[0]]), int(index.ends[chunks[-1]]))
    data = read_ranges(reader._handle, reader.obj, [span])[0]
    view = _Tail(data, span[0], reader.obj.size)
    where = [(int(index.offsets[c]), int(index.counts[c])) for c in chunks.tolist()]
    hasher = reader._hash

    def split_all(check: Any) -> None:
        for offset, count in where:
            chunk_records(view, offset, count, check)

    def per_batch(fn: Callable[[], Any], count: int) -> float:
        return median([timed(fn) for _ in range(repeat)]) / count

    out = []
    for what, work, count in (
        ("s3 range reads, 128 neighbours", lambda: [reader.read_many(b) for b in neighbours],
         batches),
        ("s3 range reads, 128 random rows", lambda: [reader.read_many(b) for b in randoms],
         batches),
        ("split from fetched bytes (CPU)", lambda: [split_all(reader._hash) for _ in range(100)],
         100),
    ):  # fmt: skip
        reader._hash = None  # type: ignore[assignment]
        plain = per_batch(work, count)
        reader._hash = hasher
        checked = per_batch(work, count)
        out.append((what, plain, checked))
    return out


def print_verification(rows: list[tuple[str, float, float]], args: argparse.Namespace) -> None:
    print(f"\nrange reads checked against the chunk hashes (medians of {args.repeat} runs of "
          f"{args.verify_batches} batches of {BATCH}; us per record / per batch):")  # fmt: skip
    print(f"  {'':34} {'not checked':>18} {'checked':>18} {'ratio':>6}")
    for what, plain, checked in rows:
        cells = [f"{t * 1e6 / BATCH:7.2f} / {t * 1e6:8.1f}" for t in (plain, checked)]
        print(f"  {what:34} {cells[0]:>18} {cells[1]:>18} {checked / plain:6.2f}")


def obstore_store(endpoint: str) -> Any | None:
    try:
        from obstore.store import S3Store
    except ImportError:
        return None
    return S3Store(
        BUCKET,
        endpoint=endpoint,
        access_key_id="bench",
        secret_access_key="bench",
        region="us-east-1",
        virtual_hosted_style_request=False,
        client_options={"allow_http": True},
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--range-batches",
        type=int,
        default=5,
        help="range-read batches timed (the epoch is extrapolated)",
    )
    parser.add_argument("--range-reads", type=int, default=200, help="range ds[i] timed (scaled)")
    parser.add_argument(
        "--verify-batches", type=int, default=20, help="batches timed for the chunk-hash check"
    )
    parser.add_argument(
        "--verify-only",
        action="store_true",
        help="measure only what the range reads' chunk-hash check costs",
    )
    args = parser.parse_args(argv)
    rows: list[tuple[str, float, float | None]] = []  # (what, epoch s, 10k ds[i] s)
    with tempfile.TemporaryDirectory(prefix="bench_storage-") as tmp_name, s3_server() as endpoint:
        tmp = Path(tmp_name)
        os.environ.update(
            AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
            AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
        )  # fmt: skip
        remote._FILESYSTEMS.clear()
        generation = prepare(tmp, args.examples)
        url = upload(generation)
        shards = sorted(generation.glob("*.array_record-*"))
        total = sum(p.stat().st_size for p in shards)
        print(f"{args.examples} examples, {len(shards)} shard(s), {total / 2**20:.1f} MiB; "
              f"endpoint {endpoint}; repeat {args.repeat}", flush=True)  # fmt: skip

        if args.verify_only:  # the chunk-hash check alone, side by side (issue 41)
            ranged = catalog.data_source(url, split="train", remote_read="range")
            ranged[0]  # the shard index
            reader = ranged._records.readers[0]
            assert isinstance(reader, RangeShard)
            print_verification(verification_cost(reader, args.repeat, args.verify_batches), args)
            return 0
        local = catalog.data_source(str(generation), split="train")
        rows.append(("local", median([epoch(local, r) for r in range(args.repeat)]),
                     median([random_reads(local, r) for r in range(args.repeat)])))  # fmt: skip

        cold = []
        for r in range(args.repeat):
            cache = tmp / f"cold-{r}"
            ds = catalog.data_source(url, split="train", cache_dir=cache)
            cold.append(epoch(ds, r))
            ds.close()
            shutil.rmtree(cache)
        rows.append(("s3, cold cache", median(cold), None))

        warm_dir = tmp / "warm"
        catalog.data_source(url, split="train", cache_dir=warm_dir)[0]  # fills the cache
        warm = [
            catalog.data_source(url, split="train", cache_dir=warm_dir) for _ in range(args.repeat)
        ]
        # each a new process's first epoch: what this one verified of the shards is forgotten
        warm_epochs = [epoch(ds, r, fresh=True) for r, ds in enumerate(warm)]
        rows.append(("s3, warm cache", median(warm_epochs),
                     median([random_reads(ds, r) for r, ds in enumerate(warm)])))  # fmt: skip
        # a new data source over the same cached shards in this process (`data_source()`
        # called again in a notebook, a pipeline's worker given the verified indexes)
        again = [
            catalog.data_source(url, split="train", cache_dir=warm_dir) for _ in range(args.repeat)
        ]
        rows.append(("s3, warm cache, same process",
                     median([epoch(ds, r) for r, ds in enumerate(again)]), None))  # fmt: skip

        ranged = catalog.data_source(url, split="train", remote_read="range")
        ranged[0]  # the shard indexes
        range_epoch = epoch(ranged, 0, args.range_batches)
        range_reads = random_reads(ranged, 0, args.range_reads)
        rows.append(("s3, range reads (*)", range_epoch, range_reads))
        for what, e, r in rows:
            print(
                f"  {what}: epoch {e:.3f} s" + ("" if r is None else f", 10k ds[i] {r:.3f} s"),
                flush=True,
            )

        # -- the floors: the same bytes by the file-system libraries alone
        fs = remote_dir(f"s3://{BUCKET}").filesystem()
        objects = [f"{BUCKET}/data/fashion_mnist/{generation.name}/{p.name}" for p in shards]
        objects = [o for o in objects if "-train." in o]  # what the train epochs fetched
        floor_fsspec = median(
            [timed(lambda: [fs.cat_file(o) for o in objects]) for _ in range(args.repeat)]
        )
        store = obstore_store(endpoint)
        floor_obstore = None
        if store is not None:
            import obstore

            names = [o.split("/", 1)[1] for o in objects]
            floor_obstore = median(
                [
                    timed(lambda: [obstore.get(store, n).bytes() for n in names])
                    for _ in range(args.repeat)
                ]
            )
        # single-record ranges, as the range reader asks for them, by each library
        reader = ranged._records.readers[0]
        assert isinstance(reader, RangeShard)
        rng = np.random.default_rng(7)
        rows_wanted = np.sort(rng.integers(0, reader.num_records(), 2000))
        chunks_wanted = reader._index.chunk_of(rows_wanted)
        starts = reader._index.offsets[chunks_wanted].tolist()
        stops = reader._index.ends[chunks_wanted].tolist()
        path = reader.obj.where.path
        range_fsspec = timed(lambda: fs.cat_ranges([path] * len(starts), starts, stops))
        range_obstore = None
        if store is not None:
            import obstore

            name = path.split("/", 1)[1]
            range_obstore = timed(
                lambda: obstore.get_ranges(store, name, starts=starts, ends=stops, coalesce=0)
            )
        range_catalog = timed(lambda: reader.read_many(rows_wanted))

        # -- requests per 128-batch by range reads
        before = reader.requests
        reader.read_many(np.sort(rng.choice(reader.num_records(), BATCH, replace=False)))
        random_requests = reader.requests - before
        before = reader.requests
        reader.read_many(np.arange(1000, 1000 + BATCH))
        neighbour_requests = reader.requests - before

        # -- what checking each record against its chunk hash costs (issue 41), side by side
        verify_rows = verification_cost(reader, args.repeat, args.verify_batches)

    print(f"\n{'':22} {'epoch (s)':>10} {'10k ds[i] (s)':>14}")
    for what, e, r in rows:
        print(f"{what:22} {e:10.3f} {('-' if r is None else f'{r:.3f}'):>14}")
    print(
        f"{'floor: fsspec shards':22} {floor_fsspec:10.3f} {'':>14}   whole shards, s3fs cat_file"
    )
    if floor_obstore is not None:
        name = "floor: obstore shards"
        print(f"{name:22} {floor_obstore:10.3f} {'':>14}   whole shards, obstore.get")
    by_obstore = f", obstore get_ranges {range_obstore:.3f} s" if range_obstore else ""
    print(f"\n{len(starts)} single-record ranges of one shard: catalog {range_catalog:.3f} s "
          f"(coalesced), fsspec cat_ranges {range_fsspec:.3f} s{by_obstore} "
          "(coalesce=0)")  # fmt: skip
    print(f"(*) range reads: the epoch extrapolated from {args.range_batches} batches, ds[i] from "
          f"{args.range_reads} reads")  # fmt: skip
    print(f"requests per 128-batch by range reads: random indices {random_requests}, "
          f"neighbours {neighbour_requests}")  # fmt: skip

    print_verification(verify_rows, args)

    local_epoch, warm_epoch, cold_epoch = rows[0][1], rows[2][1], rows[1][1]
    floor = min(f for f in (floor_fsspec, floor_obstore) if f is not None)
    targets = [
        ("warm cache epoch within 1.2x of local", warm_epoch / local_epoch, 1.2),
        ("cold cache epoch within 1.5x of the floor (fetch alone)", cold_epoch / floor, 1.5),
        (
            "cold cache epoch within 1.5x of floor + local epoch",
            cold_epoch / (floor + local_epoch),
            1.5,
        ),
        ("range __getitems__ of 128 neighbours: a few requests", neighbour_requests, 3),
    ]
    print("\ntargets:")
    for what, got, limit in targets:
        print(f"  {'PASS' if got <= limit else 'FAIL'}  {what}: {got:.2f} (limit {limit})")
    print(f"  (info) random 128-batch by range reads: {random_requests} requests, 16 in flight")
    return 0


if __name__ == "__main__":
    sys.exit(main())
