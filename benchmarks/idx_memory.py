"""Peak Python memory of preparing an IDX dataset: 60,000 generated 28x28 images, gzip'd.

Writes fashion_mnist-named images and labels files (``catalog.testing.idx_files``) into a
temp dir, then under ``tracemalloc``:

1. runs the reader, ``catalog.formats.arrays.idx.examples``, over the train pair, touching every
   image as preparing does;
2. prepares the real ``builders/fashion_mnist`` spec from them (``--examples`` train images,
   100 test images), served from 127.0.0.1 (``catalog.testing.harness.dummy_spec``).

It prints each peak next to the pixel data's size. No network access beyond 127.0.0.1.

    python benchmarks/idx_memory.py [--examples 60000]
"""

from __future__ import annotations

import argparse
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from catalog.api.builder import DatasetBuilder
from catalog.formats.arrays.idx import examples
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

ROOT = Path(__file__).resolve().parent.parent


def peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=60_000)
    count = parser.parse_args().examples
    pixels = count * 28 * 28
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        files = {}
        for prefix, n in (("train", count), ("t10k", 100)):
            files[prefix] = (
                write_idx(tmp / f"{prefix}-images-idx3-ubyte.gz", pattern_images(n)),
                write_idx(tmp / f"{prefix}-labels-idx1-ubyte.gz", pattern_labels(n)),
            )

        def read() -> None:
            images, labels = files["train"]
            for _, example in examples({"images": images, "labels": labels}):
                example["image"].sum()

        reader = peak(read)
        spec = load_spec(ROOT / "builders" / "fashion_mnist")
        with LoopbackServer() as server:
            test_spec = dummy_spec(spec, server, tmp, {"train": count, "test": 100})
            builder = DatasetBuilder(test_spec, data_dir=tmp / "data")
            prepare = peak(builder.download_and_prepare)
    mib = 2**20
    print(f"{count} images of 28x28, pixel data {pixels / mib:.1f} MiB")
    print(f"  reader (idx.examples): peak {reader / mib:.1f} MiB ({reader / pixels:.2f}x)")
    print(f"  download + prepare:    peak {prepare / mib:.1f} MiB ({prepare / pixels:.2f}x)")


if __name__ == "__main__":
    main()
