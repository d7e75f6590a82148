"""Benchmark: prepare-time downscaling (``--image-max-side``) and the pipeline's automatic
default, on the tf_flowers photo pipeline (issue 29, items 3 and 4).

N generated photo-like JPEGs of tf_flowers' sizes (320-500 x 240-375 px, quality 90) are
prepared through the real ``builders/tf_flowers`` builder (downloads served from 127.0.0.1),
once at full size and once with ``image_max_side=256``. Then, side by side, taking turns, in
one run:

- prepare cost: seconds and bytes of each copy (downloads cached; both from the same files);
- the flowers pipeline (decode + ``catalog.transforms.resize`` to 192x192 + random flip,
  batch 32, ``rescale`` per batch) on both copies: images per second, and how much the
  downscaled copy changes its output (PSNR against the full-size copy's output);
- the obvious pipeline (no ``prefetch``: the automatic default, `catalog.loader.autotune`)
  against every hand-tuned setting (0 workers, 1..cores threads, 1..cores processes) on the
  full-size copy: target, auto within 15% of the best (ratio >= 0.85).

Every pipeline runs a few warm epochs first (workers start, the tuner learns), as a training
loop that runs many epochs sees it.

    python benchmarks/bench_photo_prepare.py [--photos 600] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.features.image import DOWNSCALE_QUALITY
from catalog.loader.autotune import auto_workers, usable_cores
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer
from catalog.transforms import random_flip, rescale, resize

REPO = Path(__file__).resolve().parent.parent
BATCH = 32
SIZE = (192, 192)
MAX_SIDE = 256
WARM_EPOCHS = 3
Row = tuple[str, str, str]


# -- data -------------------------------------------------------------------------------------
def photo(rng: np.random.Generator) -> bytes:
    """A photo-like JPEG (smooth waves and noise) of tf_flowers' sizes."""
    from PIL import Image

    width, height = int(rng.integers(320, 501)), int(rng.integers(240, 376))
    r, c = np.ogrid[:height, :width]
    phase = rng.random(3) * 6
    waves = [127 + 90 * np.sin(r / (20 + 15 * k) + c / (30 + 10 * k) + phase[k]) for k in range(3)]
    pixels = np.stack(waves, axis=-1) + rng.normal(0, 12, (height, width, 3))
    out = io.BytesIO()
    Image.fromarray(pixels.clip(0, 255).astype(np.uint8)).save(out, format="JPEG", quality=90)
    return out.getvalue()


def archive(folder: Path, n: int) -> None:
    folder.mkdir()
    rng = np.random.default_rng(1)
    classes = ["dandelion", "daisy", "tulips", "sunflowers", "roses"]
    with tarfile.open(folder / "flower_photos.tgz", "w:gz") as tar:
        for i in range(n):
            data = photo(rng)
            info = tarfile.TarInfo(f"flower_photos/{classes[i % 5]}/{i:05d}.jpg")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def prepare_both(tmp: Path, n: int) -> tuple[DatasetBuilder, DatasetBuilder, list[Row]]:
    """The full-size and the downscaled copy, and the rows of what each cost."""
    source = tmp / "source"
    archive(source, n)
    spec = load_spec(REPO / "builders" / "tf_flowers")
    downloads = tmp / "downloads"
    with LoopbackServer() as server:
        served = dummy_spec(spec, server, source, {"train": n})
        full = DatasetBuilder(served, data_dir=tmp / "data")
        small = full.with_image_max_side(MAX_SIDE)
        full.download_and_prepare(download_dir=downloads)  # fetched once, cached for both
        seconds = {}
        for name, b in (("full", full), ("small", small)):
            start = time.perf_counter()
            b.download_and_prepare(download_dir=downloads, overwrite=True)
            seconds[name] = time.perf_counter() - start
    size = {
        name: sum(s.num_bytes for s in b.info.splits.values())
        for name, b in (("full", full), ("small", small))
    }
    rows = [
        ("prepare, full size", f"{seconds['full']:.2f} s", f"{size['full'] / 2**20:.1f} MiB"),
        (
            f"prepare --image-max-side {MAX_SIDE} (JPEG quality {DOWNSCALE_QUALITY})",
            f"{seconds['small']:.2f} s ({seconds['small'] / seconds['full']:.2f}x)",
            f"{size['small'] / 2**20:.1f} MiB ({size['small'] / size['full']:.2f}x)",
        ),
    ]
    return full, small, rows


# -- what runs in workers (module level: picklable for spawn) ----------------------------------
def augment(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    return {"image": random_flip(resize(example["image"], SIZE), rng), "label": example["label"]}


def to_float(batch: dict[str, Any]) -> dict[str, Any]:
    return {**batch, "image": rescale(batch["image"])}


def flowers(b: DatasetBuilder) -> catalog.Pipeline:
    """The obvious pipeline: no worker count, no prefetch depth."""
    ds = b.as_data_source("train", decoders={"image": False})
    return (
        catalog.pipeline(ds).shuffle(0).map(augment, with_rng=True).batch(BATCH).map_batch(to_float)
    )


# -- timing -------------------------------------------------------------------------------------
def drain(p: Any) -> None:
    for _ in p:
        pass


def take_turns(contenders: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """The median seconds of each contender; they take turns, so drift hits all alike, and
    each turn starts one further down the list, so no contender always runs first."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for turn in range(repeat):
        shift = turn % len(names)
        for name in names[shift:] + names[:shift]:
            fn = contenders[name]
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def psnr(full: DatasetBuilder, small: DatasetBuilder, n: int = 50) -> float:
    """dB between the resized images of the full-size and the downscaled copy."""
    a = full.as_data_source("train", decoders={"image": False})
    b = small.as_data_source("train", decoders={"image": False})
    errors = [
        np.mean((resize(a[i]["image"], SIZE).astype(float) - resize(b[i]["image"], SIZE)) ** 2)
        for i in range(min(n, len(a)))
    ]
    return float(10 * np.log10(255**2 / np.mean(errors)))


def cpu_per_image(b: DatasetBuilder, n: int = 200) -> float:
    """CPU milliseconds (this thread's, so other load on the machine hardly counts) the map
    takes per image: read, decode, resize, flip."""
    ds = b.as_data_source("train", decoders={"image": False})
    rng = np.random.default_rng(0)
    count = min(n, len(ds))
    start = time.thread_time()
    for i in range(count):
        augment(ds[i], rng)
    return (time.thread_time() - start) / count * 1e3


def bench(full: DatasetBuilder, small: DatasetBuilder, repeat: int) -> tuple[list[Row], float]:
    n = len(full.as_data_source("train"))
    cores = usable_cores()
    pipelines: dict[str, catalog.Pipeline] = {"auto": flowers(full)}
    for workers in range(cores + 1):
        kinds = ("thread",) if workers == 0 else ("thread", "process")
        for kind in kinds:
            pipelines[f"{kind}{workers}"] = flowers(full).prefetch(workers, kind)  # type: ignore[arg-type]
    pipelines["small_auto"] = flowers(small)
    pipelines["small_thread0"] = flowers(small).prefetch(0)
    pipelines["small_thread2"] = flowers(small).prefetch(2, "thread")
    for _ in range(WARM_EPOCHS):
        for p in pipelines.values():
            drain(p)
    med = take_turns({k: functools.partial(drain, p) for k, p in pipelines.items()}, repeat)
    rate = {k: n / s for k, s in med.items()}
    hand = {k: v for k, v in rate.items() if not k.startswith(("auto", "small"))}
    best = max(hand, key=hand.__getitem__)
    label = {"thread0": "0 workers"} | {
        k: f"prefetch({k[-1]}, {k[:-1]!r})" for k in hand if k != "thread0"
    }
    rows: list[Row] = []
    for key in hand:
        mark = " (best hand-tuned)" if key == best else ""
        rows.append(
            (f"full size, {label[key]}{mark}", f"{rate[key]:,.0f} img/s", level(pipelines[key]))
        )
    ratio = rate["auto"] / rate[best]
    rows.append(
        (
            f"full size, no prefetch: auto ({auto_workers()} tuned threads)",
            f"{rate['auto']:,.0f} img/s",
            f"{ratio:.2f}x best hand-tuned (target >= 0.85); {level(pipelines['auto'])}",
        )
    )
    db = psnr(full, small)
    cpu_full, cpu_small = cpu_per_image(full), cpu_per_image(small)
    rows.append(
        ("CPU per image, full size (read + decode + resize + flip)", f"{cpu_full:.2f} ms", "")
    )
    rows.append(
        (
            f"CPU per image, --image-max-side {MAX_SIDE}",
            f"{cpu_small:.2f} ms",
            f"{cpu_full / cpu_small:.2f}x less",
        )
    )
    for key, what in (
        ("small_thread0", "0 workers"),
        ("small_thread2", "prefetch(2, 'thread')"),
        ("small_auto", "no prefetch: auto"),
    ):
        rows.append(
            (
                f"--image-max-side {MAX_SIDE}, {what}",
                f"{rate[key]:,.0f} img/s",
                f"{rate[key] / rate[key.replace('small_', '')]:.2f}x full size; "
                f"output PSNR {db:.1f} dB",
            )
        )
    return rows, ratio


def level(p: catalog.Pipeline) -> str:
    """The number of workers the pipeline's tuner settled on last (0: the caller alone)."""
    tuner = p._tuner[0] if p._tuner else None
    return "" if tuner is None else f"tuner at {tuner.level} of {tuner.workers} workers"


def table(rows: Sequence[Row]) -> None:
    widths = [max(len(r[c]) for r in rows) for c in range(2)]
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]}".rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=600, help="generated JPEGs")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each contender")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_photo_prepare-") as name:
        full, small, rows = prepare_both(Path(name), args.photos)
        more, ratio = bench(full, small, args.repeat)
    print(
        f"bench_photo_prepare: {args.photos} tf_flowers-sized JPEGs; decode + resize to "
        f"{SIZE} + flip, batch {BATCH}; {os.cpu_count()} CPUs ({usable_cores()} usable)"
    )
    table([("what", "time / rate", "size / note"), *rows, *more])
    print(f"\nauto / best hand-tuned: {ratio:.2f} ({'PASS' if ratio >= 0.85 else 'FAIL'} >= 0.85)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
