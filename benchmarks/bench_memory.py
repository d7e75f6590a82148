"""Peak memory of preparing the two largest single splits of the image catalog.

    python benchmarks/bench_memory.py [--scale 1.0] [--dir /tmp]

Each case writes a full-size synthetic source file, then a fresh process runs the
real reader -> features -> ArrayRecord writer of `catalog.prepare.driver` over it, and reports the
preparing process's peak resident memory (``ru_maxrss``) before and after, and tracemalloc's peak of
Python allocations (NumPy's included) during preparation:

- stl10 ``unlabelled``: 100,000 images of 96x96x3 in one 2.76 GB raw file (format
  ``raw_images``, layout cwh), each encoded as PNG;
- emnist ``byclass`` train: 697,932 images of 28x28 in a 547 MB IDX file, gzip'd (format
  ``idx``, read as a stream).

`--scale` multiplies the example counts (0.1 for a quick run): bounded memory means the peaks
do not grow with it. Source and output files live in a temp dir under `--dir`, deleted after.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def write_stl10(folder: Path, count: int) -> Path:
    path = folder / "unlabeled_X.bin"
    block = 100
    i, r, c, ch = np.ogrid[:block, :96, :96, :3]
    with open(path, "wb") as f:
        for start in range(0, count, block):
            n = min(block, count - start)
            images = ((i[:n] + start + 3 * r * c + 50 * ch) % 256).astype(np.uint8)
            f.write(images.transpose(0, 3, 2, 1).tobytes())
    return path


def write_emnist(folder: Path, count: int) -> tuple[Path, Path]:
    images, labels = folder / "images-idx3-ubyte.gz", folder / "labels-idx1-ubyte.gz"
    block = 10000
    i, r, c = np.ogrid[:block, :28, :28]
    with gzip.open(images, "wb", compresslevel=1) as f:
        f.write(bytes([0, 0, 8, 3]) + b"".join(d.to_bytes(4, "big") for d in (count, 28, 28)))
        for start in range(0, count, block):
            n = min(block, count - start)
            f.write(((i[:n] + start + r * c) % 256).astype(np.uint8).tobytes())
    with gzip.open(labels, "wb", compresslevel=1) as f:
        f.write(bytes([0, 0, 8, 1]) + count.to_bytes(4, "big"))
        f.write((np.arange(count) % 62).astype(np.uint8).tobytes())
    return images, labels


def write_source(case: str, count: int, folder: Path) -> dict[str, list[str]]:
    """Write a case's source files (in the parent process); their paths by role."""
    if case == "stl10":
        return {"images": [str(write_stl10(folder, count))]}
    images, labels = write_emnist(folder, count)
    return {"images": [str(images)], "labels": [str(labels)]}


def run_case(case: str, paths: dict[str, list[str]], folder: Path) -> dict[str, float]:
    """Prepare a case's source files; called in a fresh process."""
    from array_record.python.array_record_module import ArrayRecordWriter

    from catalog.features.codec import RecordCodec
    from catalog.formats import FORMATS, Source
    from catalog.spec.load import load_spec
    from catalog.storage.shards import WRITER_OPTIONS

    files = {role: tuple(Path(p) for p in found) for role, found in paths.items()}
    if case == "stl10":
        spec = load_spec(ROOT / "builders" / "stl10")
        fmt, options = "raw_images", {"layout": "cwh", "labels": {}, "label_offset": 0}
    else:
        spec = load_spec(ROOT / "builders" / "emnist", "byclass")
        fmt, options = "idx", {}
    source_bytes = sum(p.stat().st_size for paths in files.values() for p in paths)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.perf_counter()
    encode = RecordCodec(spec.features).encode
    writer = ArrayRecordWriter(str(folder / "out.array_record"), WRITER_OPTIONS)
    written = 0
    for _, example in FORMATS[fmt].examples(Source("train", files, options, spec.features)):
        writer.write(encode(example))
        written += 1
    writer.close()
    seconds = time.perf_counter() - start
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"examples": written, "source_mb": source_bytes / 2**20, "seconds": seconds,
            "tracemalloc_peak_mb": traced / 2**20, "maxrss_before_mb": before / 1024,
            "maxrss_after_mb": after / 1024}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--dir", default=None, help="where the temp dir goes (default: /tmp)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--paths", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:  # the child process
        print(json.dumps(run_case(args.case, json.loads(args.paths), Path(args.dir))))
        return
    for case, full in (("stl10", 100_000), ("emnist", 697_932)):
        count = max(1, round(full * args.scale))
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            paths = json.dumps(write_source(case, count, Path(tmp)))
            out = subprocess.run(
                [sys.executable, __file__, "--case", case, "--paths", paths, "--dir", tmp],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
        r = json.loads(out.stdout)
        rss = f"{r['maxrss_before_mb']:.0f} MB before -> {r['maxrss_after_mb']:.0f} MB"
        print(f"{case:7} {r['examples']:>7,} examples, source {r['source_mb']:7.0f} MB, "
              f"{r['seconds']:6.1f} s: tracemalloc peak {r['tracemalloc_peak_mb']:6.1f} MB, "
              f"max RSS {rss}")  # fmt: skip


if __name__ == "__main__":
    main()
