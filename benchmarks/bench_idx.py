"""Benchmark: prepare a full-size fashion_mnist-shaped IDX dataset, then read it back.

Runs the real ``builders/fashion_mnist`` spec end to end on generated random data served from
127.0.0.1, times download + prepare, prepare alone and reuse, then compares random-access
latency of ``DataSource`` with the raw ArrayRecord floor and with ``ArrayRecordDataSource``.

    python benchmarks/bench_idx.py [--examples 60000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from array_record.python.array_record_data_source import ArrayRecordDataSource
from array_record.python.array_record_module import ArrayRecordReader

from catalog.builder import DatasetBuilder
from catalog.codec import RecordCodec
from catalog.data_source import READER_OPTIONS
from catalog.spec import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import write_idx

REPO = Path(__file__).resolve().parent.parent
PIXELS = 28 * 28
CALLS_PER_SAMPLE = 100  # calls timed together, so timer overhead (~50 ns) stays negligible
BATCH = 128

Row = tuple[str, str, str, str]  # metric, median, mean, note


def generate(folder: Path, n_train: int, n_test: int) -> None:
    """Random uint8 28x28 images and labels 0..9, gzip'd IDX, named as upstream."""
    rng = np.random.default_rng(0)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels)


def seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1e9


def per_call_us(fn: Callable[[int], Any], indices: np.ndarray[Any, Any]) -> list[float]:
    """Per-call microseconds of `fn(i)`, one sample per CALLS_PER_SAMPLE consecutive calls."""
    samples = []
    for chunk in np.array_split(indices, max(1, len(indices) // CALLS_PER_SAMPLE)):
        keys = chunk.tolist()
        start = time.perf_counter_ns()
        for i in keys:
            fn(i)
        samples.append((time.perf_counter_ns() - start) / 1e3 / len(keys))
    return samples


def fmt_us(samples: Sequence[float]) -> tuple[str, str]:
    return f"{statistics.median(samples):.2f} us", f"{statistics.fmean(samples):.2f} us"


def bench_prepare(builder: DatasetBuilder, downloads: Path, repeat: int) -> list[Row]:
    first = seconds(lambda: builder.download_and_prepare(download_dir=downloads))
    again = []
    for _ in range(repeat):
        shutil.rmtree(builder.data_path)
        again.append(seconds(lambda: builder.download_and_prepare(download_dir=downloads)))
    reuse = [
        seconds(lambda: builder.download_and_prepare(download_dir=downloads))
        for _ in range(max(3, repeat))
    ]
    n = sum(s.num_examples for s in builder.info.splits.values())
    prep = statistics.median(again)
    return [
        ("download + prepare (first call)", f"{first:.3f} s", "", "1 run"),
        (
            "prepare only (downloads cached)",
            f"{prep:.3f} s",
            f"{statistics.fmean(again):.3f} s",
            f"{repeat} runs, {n / prep:,.0f} examples/s",
        ),
        ("reuse (already prepared)", f"{statistics.median(reuse) * 1e3:.2f} ms", "", ""),
    ]


def bench_reads(builder: DatasetBuilder, repeat: int) -> list[Row]:
    ds = builder.as_data_source("train")
    path = str(builder.data_path / ds.info.splits["train"].shards[0].file)
    decode = RecordCodec(ds.info.features).decode
    rng = np.random.default_rng(1)
    idx = rng.integers(0, len(ds), size=20_000)
    Path(path).read_bytes()  # warm the page cache

    raw = ArrayRecordReader(path, READER_OPTIONS)

    def raw_read(i: int) -> np.ndarray[Any, Any]:
        raw.seek(i)
        return np.frombuffer(raw.read(), np.uint8, PIXELS, 1)

    ads = ArrayRecordDataSource([path])
    batches = [idx[s : s + BATCH] for s in range(0, len(idx) - BATCH + 1, BATCH)]
    results: dict[str, list[float]] = {}
    try:
        for fn, keys in (
            (raw_read, idx[:1000]),
            (ds.__getitem__, idx[:1000]),
            (lambda i: decode(ads[i]), idx[:200]),
        ):
            per_call_us(fn, keys)  # warm-up: readers opened, code paths hot
        # Interleave the contenders so drift (frequency, noisy neighbours) hits all alike.
        for part in np.array_split(np.arange(len(idx)), 10):
            results.setdefault("raw", []).extend(per_call_us(raw_read, idx[part]))
            results.setdefault("ours", []).extend(per_call_us(ds.__getitem__, idx[part]))
            ads_part = idx[part[: len(part) // 10]]  # slow: 2000 indices in all
            results.setdefault("ads", []).extend(per_call_us(lambda i: decode(ads[i]), ads_part))
        for batch in batches:
            start = time.perf_counter_ns()
            ds.__getitems__(batch)
            results.setdefault("batch", []).append((time.perf_counter_ns() - start) / 1e3 / BATCH)
        iterate = [seconds(lambda: [None for _ in ds]) for _ in range(repeat)]
    finally:
        raw.close()
        ads.__exit__(None, None, None)
        ds.close()
    raw_med, ours_med = statistics.median(results["raw"]), statistics.median(results["ours"])
    ads_med, batch_med = statistics.median(results["ads"]), statistics.median(results["batch"])
    it = statistics.median(iterate)
    return [
        ("(a) raw floor: seek+read+frombuffer", *fmt_us(results["raw"]), "1.00x raw"),
        ("(b) ds[i] (decoded)", *fmt_us(results["ours"]), f"{ours_med / raw_med:.2f}x raw"),
        (
            "(c) ArrayRecordDataSource[i] + decode",
            *fmt_us(results["ads"]),
            f"{ads_med / raw_med:.2f}x raw; {ads_med / ours_med:.1f}x ours",
        ),
        (
            f"(d) ds.__getitems__({BATCH}) per record",
            *fmt_us(results["batch"]),
            f"{batch_med / raw_med:.2f}x raw; {len(batches)} batches",
        ),
        (
            "(e) for ex in ds (sequential)",
            f"{len(ds) / it:,.0f} ex/s",
            f"{len(ds) / statistics.fmean(iterate):,.0f} ex/s",
            f"{it * 1e6 / len(ds):.2f} us/ex = {it * 1e6 / len(ds) / raw_med:.2f}x raw; "
            f"{repeat} passes",
        ),
    ]


def machine() -> list[str]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpus} usable)",
        f"numpy {np.__version__}, array_record {importlib.metadata.version('array-record')}, "
        f"catalog {importlib.metadata.version('catalog')}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60_000, help="train examples (test: /6)")
    parser.add_argument("--repeat", type=int, default=3, help="prepare-only runs and passes")
    args = parser.parse_args(argv)
    n_train, n_test = args.examples, args.examples // 6
    if n_train < BATCH or n_test < 1 or args.repeat < 1:
        parser.error(f"--examples must be >= {BATCH} and --repeat >= 1")

    with tempfile.TemporaryDirectory(prefix="bench_idx-") as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "source"
        source.mkdir()
        gen = seconds(lambda: generate(source, n_train, n_test))
        spec = load_spec(REPO / "builders" / "fashion_mnist")
        with LoopbackServer() as server:
            test_spec = dummy_spec(spec, server, source, {"train": n_train, "test": n_test})
            builder = DatasetBuilder(test_spec, data_dir=tmp / "data")
            rows = bench_prepare(builder, tmp / "downloads", args.repeat)
        rows += bench_reads(builder, args.repeat)

    total = n_train + n_test
    print(
        f"bench_idx: fashion_mnist-shaped IDX, train {n_train} + test {n_test} = {total} "
        f"random 28x28 uint8 examples (generated in {gen:.1f} s)"
    )
    for line in machine():
        print(line)
    widths = [max(len(r[c]) for r in [*rows, ("metric", "median", "mean", "")]) for c in range(3)]
    print(f"{'metric':<{widths[0]}}  {'median':>{widths[1]}}  {'mean':>{widths[2]}}  ratio / note")
    for name, median, mean, note in rows:
        print(f"{name:<{widths[0]}}  {median:>{widths[1]}}  {mean:>{widths[2]}}  {note}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
