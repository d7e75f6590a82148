"""What preparing local files without a builder.yaml costs on top of preparing them.

    python benchmarks/bench_files.py [--images 1000] [--rows 200000] [--runs 3]

For a folder of JPEG photos and for one CSV file, side by side in one run: the time to infer
the spec (list the files, read image headers or sample rows, count rows, hash every file),
the time to prepare it (check the files, read, encode, write the shards), and the time of
a second `catalog.prepare_files` call in the same process, which infers the spec again and
reuses the prepared copy (the files' digests are not recomputed while their stamps are
unchanged). Each number is the median of `--runs` runs into a fresh data dir; the ratio
says what share of a first prepare the inference is.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import catalog
from catalog.api.files import files_builder


def photos(root: Path, count: int) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(count):
        folder = root / "photos" / ("train" if i % 5 else "test") / f"class{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        out = io.BytesIO()
        size = (96 + i % 64, 128)
        Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(out, "JPEG")
        (folder / f"{i:06d}.jpg").write_bytes(out.getvalue())
    return root / "photos"


def table(root: Path, rows: int) -> Path:
    path = root / "table.csv"
    with open(path, "w") as f:
        f.write("id,x,flag,name\n")
        for i in range(rows):
            f.write(f"{i},{i / 7:.6f},{'true' if i % 3 else 'false'},row number {i}\n")
    return path


def measure(path: Path, name: str, runs: int, root: Path) -> tuple[float, float, float]:
    infer, prepare, again = [], [], []
    for run in range(runs):
        data = root / f"data-{name}-{run}"
        start = time.perf_counter()
        b = files_builder(path, name, data_dir=data)
        infer.append(time.perf_counter() - start)
        start = time.perf_counter()
        b.prepare()
        prepare.append(time.perf_counter() - start)
        start = time.perf_counter()
        catalog.prepare_files(path, name, data_dir=data)
        again.append(time.perf_counter() - start)
    return statistics.median(infer), statistics.median(prepare), statistics.median(again)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = [(photos(root, args.images), "photos"), (table(root, args.rows), "table")]
        print(f"{'data':<28}{'infer':>9}{'prepare':>10}{'infer/prepare':>15}{'again':>9}")
        for path, name in cases:
            infer, prepare, again = measure(path, name, args.runs, root)
            what = f"{args.images} JPEGs" if name == "photos" else f"CSV, {args.rows} rows"
            print(f"{what:<28}{infer:>8.2f}s{prepare:>9.2f}s{infer / prepare:>15.2f}{again:>8.2f}s")


if __name__ == "__main__":
    main()
