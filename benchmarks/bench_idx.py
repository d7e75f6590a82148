"""Benchmark: prepare a full-size fashion_mnist-shaped IDX dataset, then read it back.

Runs the real ``builders/fashion_mnist`` spec end to end on generated random data served from
127.0.0.1, times download + prepare, prepare alone and reuse, then, on the same generated train
split and in the same run: random access against the raw ArrayRecord floor,
``ArrayRecordDataSource`` and Hugging Face ``datasets``; one shuffled PyTorch DataLoader epoch
over ``DataSource`` and over Hugging Face ``datasets``; one Grain epoch; and ``import catalog``
against ``import numpy``; then ``tfds:mnist`` (TFDS's own mnist builder, run without
TensorFlow, prepared by catalog from the same generated files) read side by side with the
native copy (skipped without ``catalog[tfds]``). It ends with a block of the issue's targets,
each PASS or FAIL.

The peers (torch, datasets, grain: ``pip install -e '.[bench]'``) are optional; a missing or
broken one is skipped with a note.

    python benchmarks/bench_idx.py [--examples 60000] [--repeat 3] [--imports 15]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib.metadata
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from array_record.python.array_record_data_source import ArrayRecordDataSource
from array_record.python.array_record_module import ArrayRecordReader

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.features.codec import RecordCodec
from catalog.read.data_source import READER_OPTIONS, DataSource
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import write_idx

REPO = Path(__file__).resolve().parent.parent
PIXELS = 28 * 28
CALLS_PER_SAMPLE = 100  # calls timed together, so timer overhead (~50 ns) stays negligible
BATCH = 128
FULL_SIZE = 70_000  # fashion_mnist's train + test: the size the prepare target is set for

Array = np.ndarray[Any, Any]
Row = tuple[str, str, str, str]  # metric, median, mean, note
Metrics = dict[str, float]  # what the targets block checks, filled in by the bench_* functions


# -- helpers ------------------------------------------------------------------------------
def generate(folder: Path, n_train: int, n_test: int) -> tuple[Array, Array]:
    """Random uint8 28x28 images and labels 0..9, gzip'd IDX, named as upstream.

    Returns the train images (n, 28, 28, 1) and labels, for the peers to load the same data."""
    rng = np.random.default_rng(0)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels)
        arrays[prefix] = (images[..., None], labels)
    return arrays["train"]


def seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1e9


def per_call_us(fn: Callable[[int], Any], indices: Array) -> list[float]:
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


def fmt_s(samples: Sequence[float]) -> tuple[str, str]:
    return f"{statistics.median(samples):.3f} s", f"{statistics.fmean(samples):.3f} s"


def fmt_ms(samples: Sequence[float]) -> tuple[str, str]:
    return f"{statistics.median(samples) * 1e3:.1f} ms", f"{statistics.fmean(samples) * 1e3:.1f} ms"


def skipped(name: str, why: str) -> Row:
    return (name, "-", "-", f"skipped: {why}")


def try_import(module: str) -> tuple[Any, str]:
    """(module, "") or (None, why it can't be used)."""
    try:
        return __import__(module), ""
    except Exception as error:  # a broken install raises more than ImportError
        return None, f"{module} not importable ({type(error).__name__}: {error}); " + (
            "pip install -e '.[bench]'"
        )


# -- Hugging Face datasets peer ---------------------------------------------------------------
#: The two ways to hold the images in a Hugging Face dataset: uint8 arrays, and PNG files (the
#: layout of HF's own fashion_mnist). Both are read in numpy format.
HF_LAYOUTS = {"hf": "HF Array3D", "hf_png": "HF Image (PNG)"}


def build_hf(folder: Path, images: Array, labels: Array, layout: str) -> tuple[Any, float]:
    """The train arrays as a Hugging Face dataset saved to disk and memory-mapped back with
    ``load_from_disk``, in numpy format, as a user would have it; and the build time."""
    import datasets
    from datasets import Array3D, ClassLabel, Dataset, Features, Image

    datasets.disable_progress_bars()
    if layout == "hf":
        image: Any = Array3D(shape=(28, 28, 1), dtype="uint8")
        column: Any = images
    else:
        image, column = Image(), list(images[..., 0])  # encoded as PNG by from_dict
    features = Features({"image": image, "label": ClassLabel(num_classes=10)})
    start = time.perf_counter_ns()
    data = {"image": column, "label": labels.astype(np.int64)}
    Dataset.from_dict(data, features=features).save_to_disk(str(folder / layout))
    hf = datasets.load_from_disk(str(folder / layout)).with_format("numpy")
    return hf, (time.perf_counter_ns() - start) / 1e9


# -- benchmarks ---------------------------------------------------------------------------
def bench_prepare(
    builder: DatasetBuilder, downloads: Path, repeat: int, metrics: Metrics
) -> list[Row]:
    first = seconds(lambda: builder.download_and_prepare(download_dir=downloads))
    again = []
    for _ in range(repeat):
        shutil.rmtree(builder.data_path.parent)  # the pointer and its generations
        again.append(seconds(lambda: builder.download_and_prepare(download_dir=downloads)))
    reuse = [
        seconds(lambda: builder.download_and_prepare(download_dir=downloads))
        for _ in range(max(3, repeat))
    ]
    n = sum(s.num_examples for s in builder.info.splits.values())
    prep = metrics["prepare"] = statistics.median(again)
    return [
        ("download + prepare (first call)", f"{first:.3f} s", "", "1 run"),
        (
            "prepare only (downloads cached)",
            *fmt_s(again),
            f"{repeat} runs, {n / prep:,.0f} examples/s",
        ),
        ("reuse (already prepared)", f"{statistics.median(reuse) * 1e3:.2f} ms", "", ""),
    ]


def bench_reads(
    ds: DataSource, path: str, hf: dict[str, Any], hf_note: str, repeat: int, metrics: Metrics
) -> list[Row]:
    """Random access (interleaved, so drift hits all contenders alike) and iteration."""
    decode = RecordCodec(ds.info.features).decode
    rng = np.random.default_rng(1)
    idx = rng.integers(0, len(ds), size=20_000)

    raw = ArrayRecordReader(path, READER_OPTIONS)

    def raw_read(i: int) -> Array:
        raw.seek(i)
        return np.frombuffer(raw.read(), np.uint8, PIXELS, 1)

    ads = ArrayRecordDataSource([path])
    contenders: dict[str, Callable[[int], Any]] = {
        "raw": raw_read,
        "ours": ds.__getitem__,
        "ads": lambda i: decode(ads[i]),
    }
    contenders.update({key: peer.__getitem__ for key, peer in hf.items()})
    slow = {"ads", *HF_LAYOUTS}  # measured on a tenth of the indices: 2000 in all
    batches = [idx[s : s + BATCH] for s in range(0, len(idx) - BATCH + 1, BATCH)]
    results: dict[str, list[float]] = {name: [] for name in [*contenders, "batch"]}
    try:
        for name, fn in contenders.items():
            per_call_us(fn, idx[: 200 if name in slow else 1000])  # warm-up: readers open
        for part in np.array_split(np.arange(len(idx)), 10):
            for name, fn in contenders.items():
                keys = idx[part[: len(part) // 10]] if name in slow else idx[part]
                results[name].extend(per_call_us(fn, keys))
        for batch in batches:
            start = time.perf_counter_ns()
            ds.__getitems__(batch)
            results["batch"].append((time.perf_counter_ns() - start) / 1e3 / BATCH)
        iterate = [seconds(lambda: [None for _ in ds]) for _ in range(repeat)]
    finally:
        raw.close()
        ads.__exit__(None, None, None)
    med = {name: statistics.median(samples) for name, samples in results.items()}
    raw_med, ours_med = med["raw"], med["ours"]
    it = statistics.median(iterate)
    metrics.update(raw=raw_med, ours=ours_med, ads=med["ads"], batch=med["batch"])
    metrics["iter"] = len(ds) / it

    def row(name: str, key: str) -> Row:
        if key not in results:
            return skipped(name, hf_note)
        ratio = f"{med[key] / raw_med:.2f}x raw; {med[key] / ours_med:.1f}x ours"
        return (name, *fmt_us(results[key]), ratio)

    return [
        ("(a) raw floor: seek+read+frombuffer", *fmt_us(results["raw"]), "1.00x raw"),
        ("(b) ds[i] (decoded)", *fmt_us(results["ours"]), f"{ours_med / raw_med:.2f}x raw"),
        row("(c) ArrayRecordDataSource[i] + decode", "ads"),
        (
            f"(d) ds.__getitems__({BATCH}) per record",
            *fmt_us(results["batch"]),
            f"{med['batch'] / raw_med:.2f}x raw; {len(batches)} batches",
        ),
        (
            "(e) for ex in ds (sequential)",
            f"{len(ds) / it:,.0f} ex/s",
            f"{len(ds) / statistics.fmean(iterate):,.0f} ex/s",
            f"{it * 1e6 / len(ds):.2f} us/ex = {it * 1e6 / len(ds) / raw_med:.2f}x raw; "
            f"{repeat} passes",
        ),
        row(f"(f) hf[i], {HF_LAYOUTS['hf']}", "hf"),
        row(f"(g) hf[i], {HF_LAYOUTS['hf_png']}", "hf_png"),
    ]


def bench_epochs(
    ds: DataSource, path: str, hf: dict[str, Any], hf_note: str, repeat: int, metrics: Metrics
) -> list[Row]:
    """One shuffled epoch: raw reads (the floor), DataLoader over ours and over HF, Grain."""
    perm = np.random.default_rng(2).permutation(len(ds)).tolist()
    raw = ArrayRecordReader(path, READER_OPTIONS)

    def raw_epoch() -> None:
        for i in perm:
            raw.seek(i)
            raw.read()

    epochs: dict[str, Callable[[], None]] = {"raw": raw_epoch}
    notes: dict[str, str] = dict.fromkeys(HF_LAYOUTS, hf_note)
    torch, notes["ours"] = try_import("torch")
    if torch is not None:
        from torch.utils.data import DataLoader

        def loader(dataset: Any) -> Iterator[Any]:
            generator = torch.Generator()
            generator.manual_seed(0)  # the same order for every contender
            return iter(DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=generator))

        def loader_epoch(dataset: Any) -> Callable[[], None]:
            def epoch() -> None:
                for _ in loader(dataset):
                    pass

            return epoch

        epochs["ours"] = loader_epoch(ds)
        ours_batch = next(loader(ds))
        for key, peer in hf.items():
            epochs[key] = loader_epoch(peer)
            peer_batch = next(loader(peer))  # same seed: must be the same examples as ours
            if not all(
                torch.equal(ours_batch[k].long(), peer_batch[k].long().reshape(v.shape))
                for k, v in ours_batch.items()
            ):
                notes[key] = "WARNING: first batch differs from ours (not the same data?)"
    else:
        notes.update(dict.fromkeys(HF_LAYOUTS, notes["ours"]))
    grain_epoch, notes["grain"] = grain_setup(ds)
    if grain_epoch is not None:
        epochs["grain"] = grain_epoch

    times: dict[str, list[float]] = {name: [] for name in epochs}
    try:
        for _ in range(repeat):  # interleaved, like the random-access loop
            for name, epoch in epochs.items():
                times[name].append(seconds(epoch))
    finally:
        raw.close()
    med = {name: statistics.median(samples) for name, samples in times.items()}
    metrics.update({f"dl_{key}": med[key] for key in ("ours", *HF_LAYOUTS) if key in med})
    n = len(ds)

    def row(name: str, key: str) -> Row:
        if key not in med:
            return skipped(name, notes[key])
        note = f"{med[key] / med['raw']:.1f}x raw epoch; {n / med[key]:,.0f} ex/s"
        if key != "ours" and "ours" in med:
            note += f"; {med[key] / med['ours']:.2f}x DataLoader over ds"
        if key in HF_LAYOUTS and notes[key]:
            note += f"; {notes[key]}"
        return (name, *fmt_s(times[key]), note)

    return [
        (
            "(h) raw-read epoch floor (shuffled)",
            *fmt_s(times["raw"]),
            f"{n} seek+read, no decode/collate; {repeat} epochs",
        ),
        row("(i) DataLoader epoch over ds", "ours"),
        row(f"(j) DataLoader epoch over {HF_LAYOUTS['hf']}", "hf"),
        row(f"(k) DataLoader epoch over {HF_LAYOUTS['hf_png']}", "hf_png"),
        row(f"(l) grain MapDataset.source(ds).shuffle.batch({BATCH}) epoch", "grain"),
    ]


# -- tfds:mnist: TFDS's own builder, prepared by catalog from the same files --------------------
def prepare_tfds(source: Path, tmp: Path, n_train: int, n_test: int) -> tuple[Any, float, str]:
    """``tfds:mnist`` (TFDS's mnist builder, run without TensorFlow) prepared from the same
    generated IDX files, served on 127.0.0.1 (the builder's URL and example counts patched,
    as TFDS's own mnist test patches them): (its builder, prepare seconds, "") or (None, 0,
    why it was skipped)."""
    _, why = try_import("tensorflow_datasets")
    if why:
        return None, 0.0, why.replace("'.[bench]'", "'catalog[tfds]'")
    from catalog.api.tfds import tfds_builder
    from catalog.download import DownloadConfig
    from catalog.formats.tfds.runtime import import_tfds, parse_name

    import_tfds()
    from tensorflow_datasets.image_classification import mnist

    mnist._TRAIN_EXAMPLES, mnist._TEST_EXAMPLES = n_train, n_test
    with LoopbackServer() as server:
        for file in source.iterdir():
            server.add(f"/mnist/{file.name}", file.read_bytes())
        mnist.MNIST.URL = server.url("/mnist/")
        config = DownloadConfig(download_dir=tmp / "tfds-downloads", register_checksums=True,
                                progress="none")  # fmt: skip
        start = time.perf_counter_ns()
        b = tfds_builder(parse_name("tfds:mnist"), data_dir=tmp / "tfds-data",
                         download_config=config)  # fmt: skip
        b.download_and_prepare()
        took = (time.perf_counter_ns() - start) / 1e9
    return b, took, ""


def bench_tfds(
    native: DataSource, tfds: Any, prepare_s: float, why: str, repeat: int, metrics: Metrics
) -> list[Row]:
    """Reading ``tfds:mnist`` against the native copy of the same data (interleaved)."""
    names = (
        "(t1) tfds:mnist ds[i] (decoded)",
        f"(t2) tfds:mnist __getitems__({BATCH})",
        "(t3) for ex in tfds:mnist ds",
        "(t0) tfds:mnist prepare (downloads included)",
    )
    if tfds is None:
        return [skipped(name, why) for name in names]
    ds = tfds.as_data_source("train")
    try:
        assert len(ds) == len(native)
        for i in (0, len(ds) // 2, len(ds) - 1):  # the same examples, from the same files
            assert np.array_equal(ds[i]["image"], native[i]["image"]), i
            assert int(ds[i]["label"]) == int(native[i]["label"]), i
        idx = np.random.default_rng(2).integers(0, len(ds), size=20_000)
        shard = tfds.data_path / ds.info.splits["train"].shards[0].file
        Path(shard).read_bytes()  # warm the page cache, as for the native copy
        for source in (native, ds):
            per_call_us(source.__getitem__, idx[:1000])  # warm-up: readers open
        batches = [idx[s : s + BATCH] for s in range(0, len(idx) - BATCH + 1, BATCH)]
        results: dict[str, list[float]] = {"native": [], "tfds": [], "nb": [], "tb": []}
        for part in np.array_split(np.arange(len(idx)), 10):
            results["native"].extend(per_call_us(native.__getitem__, idx[part]))
            results["tfds"].extend(per_call_us(ds.__getitem__, idx[part]))
        for batch in batches:
            for key, source in (("nb", native), ("tb", ds)):
                start = time.perf_counter_ns()
                source.__getitems__(batch)
                results[key].append((time.perf_counter_ns() - start) / 1e3 / BATCH)
        iterate: dict[str, list[float]] = {"native": [], "tfds": []}
        for _ in range(repeat):
            for key, source in (("native", native), ("tfds", ds)):
                iterate[key].append(seconds(functools.partial(collections.deque, source, 0)))
    finally:
        ds.close()
    med = {key: statistics.median(v) for key, v in results.items()}
    it = {key: statistics.median(v) for key, v in iterate.items()}
    metrics.update(tfds_read=med["tfds"] / med["native"], tfds_iter=it["tfds"] / it["native"])
    return [
        (names[0], *fmt_us(results["tfds"]),
         f"{med['tfds'] / med['native']:.2f}x native ds[i] ({med['native']:.2f} us)"),
        (names[1], *fmt_us(results["tb"]),
         f"per record; {med['tb'] / med['nb']:.2f}x native ({med['nb']:.2f} us)"),
        (names[2], f"{len(ds) / it['tfds']:,.0f} ex/s", "",
         f"{it['tfds'] / it['native']:.2f}x native time ({len(ds) / it['native']:,.0f} ex/s)"),
        (names[3], f"{prepare_s:.3f} s", "",
         f"{len(ds) + len(tfds.as_data_source('test')):,} examples, 1 run"),
    ]  # fmt: skip


def grain_setup(ds: DataSource) -> tuple[Callable[[], None] | None, str]:
    """A Grain epoch over `ds` (batches fetched by index, one thread), after a check that one
    batch works; or None and why not."""
    logging.getLogger("absl").setLevel(logging.ERROR)  # "Failed to load jax profiler"
    grain, why = try_import("grain")
    if grain is None:
        return None, why
    try:
        batched = grain.MapDataset.source(ds).shuffle(seed=0).batch(BATCH)
        first = batched[0]
        shape = tuple(first["image"].shape)
        if shape != (BATCH, 28, 28, 1) or tuple(first["label"].shape) != (BATCH,):
            return None, f"grain batch has unexpected shape {shape}"
    except Exception as error:
        return None, f"grain failed on DataSource: {type(error).__name__}: {error}"

    def epoch() -> None:
        for i in range(len(batched)):
            batched[i]

    return epoch, ""


def bench_imports(runs: int, cwd: Path, metrics: Metrics) -> list[Row]:
    """Wall time of fresh interpreters, run alternately so drift hits all alike. `import
    catalog` loads names on first use, so the cost of a first use is its own line.

    As installed: numpy's site-packages copy has its .pyc files (pip compiles them), so
    catalog's are compiled first too, and PYTHONDONTWRITEBYTECODE (set on some machines,
    which would make every run recompile catalog from source) is dropped for these runs.
    """
    codes = {
        "pass": "pass",
        "numpy": "import numpy",
        "catalog": "import catalog",
        # names load on first use: what a script that reads data pays in all (not a target)
        "catalog_use": "import catalog; catalog.data_source",
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    package = Path(catalog.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True, env=env)
    times: dict[str, list[float]] = {name: [] for name in codes}
    for run in range(runs + 1):
        for name, code in codes.items():
            start = time.perf_counter_ns()
            subprocess.run([sys.executable, "-c", code], check=True, cwd=cwd, env=env)
            took = (time.perf_counter_ns() - start) / 1e9
            if run:  # the first round warms the page cache and the .pyc files
                times[name].append(took)
    med = {name: statistics.median(samples) for name, samples in times.items()}
    metrics.update(import_numpy=med["numpy"], import_catalog=med["catalog"])
    return [
        (
            'python -c "pass" (interpreter start)',
            *fmt_ms(times["pass"]),
            f"{runs} runs",
        ),
        (
            'python -c "import numpy"',
            *fmt_ms(times["numpy"]),
            f"{runs} runs, alternating",
        ),
        (
            'python -c "import catalog"',
            *fmt_ms(times["catalog"]),
            f"{med['catalog'] / med['numpy']:.2f}x import numpy",
        ),
        (
            'python -c "import catalog; catalog.data_source"',
            *fmt_ms(times["catalog_use"]),
            f"{med['catalog_use'] / med['numpy']:.2f}x import numpy (first use loads the reader)",
        ),
    ]


# -- targets ------------------------------------------------------------------------------
def targets(m: Metrics, total: int) -> list[tuple[str, str, str, str]]:
    """One (target, measured, wanted, PASS/FAIL/SKIP) line per target of the issue."""

    def ratio(a: str, b: str) -> float | None:
        return m[a] / m[b] if a in m and b in m else None

    x2, x1 = "{:.2f}x", "{:.1f}x"
    checks: list[tuple[str, float | None, str, float, str]] = [
        ("ds[i] decoded / raw floor", ratio("ours", "raw"), "<=", 1.5, x2),
        ("ArrayRecordDataSource[i]+decode / ds[i]", ratio("ads", "ours"), ">=", 10, x1),
        (f"ds.__getitems__({BATCH}) per record / raw floor", ratio("batch", "raw"), "<=", 1.5, x2),
        ("for ex in ds (sequential)", m.get("iter"), ">=", 300_000, "{:,.0f} ex/s"),
        (f"DataLoader epoch: {HF_LAYOUTS['hf']} / ds", ratio("dl_hf", "dl_ours"), ">=", 4, x1),
        (f"prepare {total:,} examples, downloads cached", m.get("prepare"), "<=", 1.5, "{:.3f} s"),
        ("import catalog / import numpy", ratio("import_catalog", "import_numpy"), "<=", 1.3, x2),
        ("tfds:mnist ds[i] / native ds[i]", m.get("tfds_read"), "<=", 1.1, x2),
        ("for ex in tfds:mnist / native", m.get("tfds_iter"), "<=", 1.1, x2),
    ]
    lines = []
    for name, value, op, goal, fmt in checks:
        if value is None:
            result = "SKIP (peer missing)"
        else:
            result = "PASS" if (value <= goal if op == "<=" else value >= goal) else "FAIL"
            if name.startswith("prepare") and total != FULL_SIZE:
                result = f"n/a ({result} at this size; the target is for {FULL_SIZE:,})"
            png = ratio("dl_hf_png", "dl_ours")
            if name.startswith("DataLoader") and png is not None:
                result += f" ({HF_LAYOUTS['hf_png']}: {png:.1f}x)"
        measured = "-" if value is None else fmt.format(value)
        lines.append((name, measured, f"{op} {fmt.format(goal)}", result))
    return lines


# -- report -------------------------------------------------------------------------------
def machine() -> list[str]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = [f"numpy {np.__version__}"]
    for dist in ("array-record", "catalog", "torch", "datasets", "pyarrow", "grain"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
    return [
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs ({cpus} usable), "
        f"{memory_gib()} GiB memory, {platform.system()} {platform.machine()}",
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        + ", ".join(versions),
    ]


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what platform knows."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def memory_gib() -> str:
    """Total memory in GiB (Linux: /proc/meminfo), or '?'."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.0f}"
    return "?"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> None:
    """Print `rows` in aligned columns; the last column is free text."""
    cols = len(header) - 1
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(cols)]

    def cell(text: str, c: int) -> str:
        return f"{text:>{widths[c]}}" if c in right else f"{text:<{widths[c]}}"

    for r in [header, *rows]:
        print("  ".join([*(cell(r[c], c) for c in range(cols)), r[cols]]).rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60_000, help="train examples (test: /6)")
    parser.add_argument("--repeat", type=int, default=3, help="prepare runs, passes, epochs")
    parser.add_argument("--imports", type=int, default=15, help="runs of each import")
    args = parser.parse_args(argv)
    n_train, n_test = args.examples, args.examples // 6
    if n_train < BATCH or n_test < 1 or args.repeat < 1 or args.imports < 1:
        parser.error(f"--examples must be >= {BATCH}, --repeat and --imports >= 1")

    metrics: Metrics = {}
    with tempfile.TemporaryDirectory(prefix="bench_idx-") as tmp_name:
        tmp = Path(tmp_name)
        source = tmp / "source"
        source.mkdir()
        start = time.perf_counter_ns()
        images, labels = generate(source, n_train, n_test)
        gen = (time.perf_counter_ns() - start) / 1e9
        spec = load_spec(REPO / "builders" / "fashion_mnist")
        with LoopbackServer() as server:
            test_spec = dummy_spec(spec, server, source, {"train": n_train, "test": n_test})
            builder = DatasetBuilder(test_spec, data_dir=tmp / "data")
            rows = bench_prepare(builder, tmp / "downloads", args.repeat, metrics)

        hf: dict[str, Any] = {}
        hf_build: dict[str, float] = {}
        _, hf_note = try_import("datasets")
        if not hf_note:
            for layout in HF_LAYOUTS:
                hf[layout], hf_build[layout] = build_hf(tmp / "hf", images, labels, layout)
        tfds, tfds_prepare, tfds_note = prepare_tfds(source, tmp, n_train, n_test)
        ds = builder.as_data_source("train")
        path = str(builder.data_path / ds.info.splits["train"].shards[0].file)
        Path(path).read_bytes()  # warm the page cache
        try:
            rows += bench_reads(ds, path, hf, hf_note, args.repeat, metrics)
            rows += bench_epochs(ds, path, hf, hf_note, args.repeat, metrics)
            rows += bench_tfds(ds, tfds, tfds_prepare, tfds_note, args.repeat, metrics)
        finally:
            ds.close()
        rows += bench_imports(args.imports, tmp, metrics)

    total = n_train + n_test
    print(
        f"bench_idx: fashion_mnist-shaped IDX, train {n_train} + test {n_test} = {total} "
        f"random 28x28 uint8 examples (generated in {gen:.1f} s)"
    )
    for line in machine():
        print(line)
    if hf:
        print(
            f"HF datasets peers: the same {n_train} train arrays + ClassLabel, from_dict + "
            "save_to_disk + load_from_disk, numpy format; built in "
            + ", ".join(f"{hf_build[key]:.1f} s ({HF_LAYOUTS[key]})" for key in hf)
        )
    print(
        f"DataLoader: batch_size={BATCH}, shuffle=True with a seeded generator, num_workers=0, "
        "default collate; grain: one thread, batches fetched by index"
    )
    print()
    table(("metric", "median", "mean", "ratio / note"), rows, right=(1, 2))
    print()
    print("targets")
    table(("target", "measured", "wanted", "result"), targets(metrics, total), right=(1, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
