"""What the per-example generators of ``map(fn, with_rng=True)`` cost.

    python benchmarks/bench_rng.py [--repeat 9] [--examples 20000]

Each example gets ``np.random.default_rng([seed, epoch, index, position])``
(`catalog.loader.rngs`). Side by side, alternating, medians of `--repeat` runs:

- making the generators of a unit of 32 examples: NumPy's ``default_rng`` per example
  (what the pipeline did before) vs `catalog.loader.rngs.generators` (the same generators,
  made together), in microseconds per example;
- a pipeline over `--examples` 28x28 images, ``map(random_flip, with_rng=True).batch(128)``,
  computed in the caller (``prefetch(0)``: one thread, no tuner), with the pipeline's
  generators made either way (the pipeline's own function swapped for NumPy's
  per-example one for the "before" runs), in examples per second. Target: at least 2x.

Both ways give the same generators: tests/loader/test_rngs.py checks every draw.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import catalog
from catalog.loader import plan as plan_module
from catalog.loader.rngs import generators
from catalog.transforms import random_flip


def numpy_generators(seed: int, epoch: int, keys: Sequence[int], op: int) -> list[Any]:
    return [np.random.default_rng([seed, epoch, i, op]) for i in keys]


def flip(image: np.ndarray[Any, Any], rng: np.random.Generator) -> np.ndarray[Any, Any]:
    return random_flip(image, rng)


def seconds(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--examples", type=int, default=20000)
    args = parser.parse_args(argv)

    keys = list(range(1000, 1032))
    make = {
        "numpy": lambda: [numpy_generators(0, 1, keys, 2) for _ in range(20)],
        "catalog": lambda: [generators(0, 1, keys, 2) for _ in range(20)],
    }
    images = list(np.random.default_rng(0).integers(0, 256, (args.examples, 28, 28, 1), np.uint8))
    pipe = catalog.pipeline(images).shuffle(0).map(flip, with_rng=True).batch(128).prefetch(0)

    def epoch(way: Callable[..., Any]) -> Callable[[], None]:
        def run() -> None:
            setattr(plan_module, "generators", way)  # noqa: B010 (swapped for the runs)
            try:
                for _ in pipe:
                    pass
            finally:
                setattr(plan_module, "generators", generators)  # noqa: B010

        return run

    runs = {"numpy": epoch(numpy_generators), "catalog": epoch(generators)}
    made: dict[str, list[float]] = {k: [] for k in make}
    rate: dict[str, list[float]] = {k: [] for k in runs}
    for fn in (*make.values(), *runs.values()):
        fn()  # warm
    for _ in range(args.repeat):
        for name in make:
            made[name].append(seconds(make[name]) / (20 * len(keys)) * 1e6)
            rate[name].append(args.examples / seconds(runs[name]))
    med = {k: statistics.median(v) for k, v in made.items()}
    per_s = {k: statistics.median(v) for k, v in rate.items()}
    print(
        f"generators for a unit of 32: NumPy default_rng {med['numpy']:.1f} us/example, "
        f"catalog {med['catalog']:.1f} us/example ({med['numpy'] / med['catalog']:.1f}x)"
    )
    print(
        f"map(random_flip, with_rng=True) on 28x28, 1 thread: before {per_s['numpy']:,.0f} "
        f"ex/s, now {per_s['catalog']:,.0f} ex/s"
    )
    ratio = per_s["catalog"] / per_s["numpy"]
    print(f"target: now / before >= 2.0x: {ratio:.2f}x {'PASS' if ratio >= 2 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
