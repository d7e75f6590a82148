"""Benchmark: prepare an svhn `extra`-sized split serially, in 2 processes and on Beam.

Generates a MATLAB v5 ``.mat`` file shaped like SVHN's ``extra_32x32.mat`` (``X`` uint8
(32, 32, 3, N) and ``y`` (N, 1), both zlib-compressed as SVHN ships them; N = 531,131 by
default), streamed so the generator never holds it whole. A one-split builder in the
``mat`` format reads it from the manual dir (offline: nothing touches the network). Then,
side by side, each a fresh ``catalog prepare`` process into its own data dir:

- ``serial``:   one process;
- ``num-proc``: ``--num-proc 2``;
- ``beam``:     ``--beam-pipeline-options runner=DirectRunner,direct_num_workers=2,
  direct_running_mode=multi_processing``.

For each: wall time, the peak RSS of the largest single process (``ru_maxrss`` of the run's
process tree, from a wrapper process), the peak sum of RSS over the whole process tree
(sampled from /proc every 0.2 s), the shard count, and whether every shard's sha256 equals
the serial run's. It ends with a model of 16 cores (see `model`).

    python benchmarks/bench_prepare.py [--examples 531131] [--shard-size 128MiB] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

FILENAME = "extra_32x32.mat"
URL = f"http://ufldl.stanford.edu/housenumbers/{FILENAME}"  # never fetched: --offline
IMAGE = 32 * 32 * 3
BLOCK = 8192  # examples generated at a time


def _element(kind: int, data: bytes) -> bytes:
    return struct.pack("<II", kind, len(data)) + data + b"\0" * (-len(data) % 8)


def _matrix_head(name: bytes, mx_class: int, dims: tuple[int, ...]) -> bytes:
    flags = _element(6, struct.pack("<II", mx_class, 0))
    dims_element = _element(5, struct.pack(f"<{len(dims)}i", *dims))
    name_element = struct.pack("<I", 1 | (len(name) << 16)) + name.ljust(4, b"\0")
    return flags + dims_element + name_element


def _write_compressed(out: Any, name: bytes, mx_class: int, dims: tuple[int, ...],
                      data_type: int, chunks: Any, nbytes: int) -> None:  # fmt: skip
    """A miCOMPRESSED element holding one miMATRIX, its data streamed from `chunks`."""
    head = _matrix_head(name, mx_class, dims)
    pad = -nbytes % 8
    inner = struct.pack("<II", 14, len(head) + 8 + nbytes + pad) + head
    inner += struct.pack("<II", data_type, nbytes)
    start = out.tell()
    out.write(struct.pack("<II", 15, 0))  # the size is filled in once known
    z = zlib.compressobj(1)
    out.write(z.compress(inner))
    for chunk in chunks:
        out.write(z.compress(chunk))
    out.write(z.compress(b"\0" * pad) + z.flush())
    end = out.tell()
    out.seek(start + 4)
    out.write(struct.pack("<I", end - start - 8))
    out.seek(end)


def images(n: int) -> Any:
    """Blocks of (32, 32, 3) images in MATLAB's column-major order: a pattern plus noise."""
    rng = np.random.default_rng(0)
    for first in range(0, n, BLOCK):
        count = min(BLOCK, n - first)
        i, r, c, ch = np.ogrid[first : first + count, :32, :32, :3]
        pixels = (5 * i + 3 * r + 7 * c + 80 * ch) % 256 + rng.integers(0, 48, (count, 32, 32, 3))
        # Example-major, each image column-major: MATLAB's X(:, :, :, k) is contiguous.
        yield np.ascontiguousarray(pixels.astype(np.uint8).transpose(0, 3, 2, 1)).tobytes()


def labels(n: int) -> np.ndarray[Any, Any]:
    return (np.arange(n) * 7 % 10 + 1).astype(np.uint8)  # 1..10, 10 meaning 0, as SVHN


def write_mat(path: Path, n: int) -> None:
    with open(path, "wb") as out:
        out.write(b"MATLAB 5.0 MAT-file, written by catalog's bench_prepare".ljust(116, b" "))
        out.write(b"\0" * 8 + struct.pack("<H", 0x0100) + b"IM")
        _write_compressed(out, b"X", 9, (32, 32, 3, n), 2, images(n), n * IMAGE)
        # y is a double array stored as uint8 data, as MATLAB saves small whole numbers.
        _write_compressed(out, b"y", 6, (n, 1), 2, [labels(n).tobytes()], n)


def write_builder(root: Path, n: int) -> tuple[Path, Path]:
    manual = root / "manual"
    manual.mkdir(parents=True)
    mat = manual / FILENAME
    write_mat(mat, n)
    digest = hashlib.sha256()
    with open(mat, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    folder = root / "svhn_extra"
    folder.mkdir()
    (folder / "builder.yaml").write_text(
        "name: svhn_extra\nversion: 1.0.0\n"
        "features:\n  id: {type: Text}\n  image: {type: Image, shape: [32, 32, 3]}\n"
        "  label: {type: ClassLabel, num_classes: 10}\n"
        f"downloads:\n  extra: {{url: {URL}}}\n"
        "splits:\n  extra: {format: mat, files: {mat: extra}, options: {label_modulo: 10}, "
        f"num_examples: {n}}}\n"
    )
    (folder / "checksums.tsv").write_text(
        f"{URL}\t{mat.stat().st_size}\t{digest.hexdigest()}\t{FILENAME}\n"
    )
    return folder, manual


_WRAPPER = """\
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(f"MAXRSS_KB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}", file=sys.stderr)
raise SystemExit(code)
"""


def _tree_rss(root: int) -> int:
    """Bytes resident in `root` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def run(name: str, args: list[str], data_dir: Path) -> dict[str, Any]:
    command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "catalog", "prepare", *args]
    command += ["--data-dir", str(data_dir), "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{err[-3000:]}")
    maxrss = int(err.rsplit("MAXRSS_KB ", 1)[1].split()[0]) * 1024
    entry = json.loads(out)["datasets"][0]
    shards = [s["sha256"] for s in entry["splits"]["extra"]["shards"]]
    return {"name": name, "seconds": seconds, "maxrss": maxrss, "tree": peak[0],
            "shards": shards, "bytes": entry["num_bytes"]}  # fmt: skip


def model(t1: float, t2: float, units: int, cores: int = 16) -> tuple[float, float, float]:
    """Amdahl's law fitted to 1 and 2 workers: ``T(n) = s + p / min(n, units)``.

    From ``T(1) = s + p`` and ``T(2) = s + p/2``: ``p = 2 (T(1) - T(2))``, ``s = T(1) - p``
    (s: what one process does whatever the workers: start-up, hashing the download, staging
    the .mat, planning, the driver's final verification; p: the units). A negative s (a
    super-linear 2-worker run, noise) is taken as 0. No more workers help than there are units.
    """
    p = max(0.0, 2 * (t1 - t2))
    s = max(0.0, t1 - p)
    return s, p, s + p / min(cores, units)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=531_131)
    parser.add_argument("--shard-size", default="128MiB")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temp dir)")
    parser.add_argument("--no-beam", action="store_true", help="skip the Beam run")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_prepare-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        folder, manual = write_builder(root / "source", args.examples)
        size = (manual / FILENAME).stat().st_size
        print(f"generated {FILENAME}: {args.examples:,} examples, {size / 1e6:,.0f} MB "
              f"compressed, in {time.perf_counter() - start:.0f} s")  # fmt: skip
        common = [str(folder), "--offline", "--manual-dir", str(manual), "--download-dir",
                  str(root / "downloads"), "--shard-size", args.shard_size]  # fmt: skip
        runs = [("serial", [])]
        runs.append(("num-proc 2", ["--num-proc", "2"]))
        if not args.no_beam:
            options = (
                "runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing"
            )
            runs.append(("beam 2 workers", ["--beam-pipeline-options", options]))
        # One warm-up prepare (hashes the download into the cache) that is not measured.
        run("warm-up", [*common, "--max-examples-per-split", "10"], root / "warm")
        results = []
        for name, extra in runs:
            results.append(run(name, [*common, *extra], root / name.replace(" ", "-")))
            shutil.rmtree(root / name.replace(" ", "-"))  # keep the disk bounded
        cpus = os.cpu_count()
        print(f"\n{args.examples:,} examples of 32x32x3, shards of {args.shard_size}; "
              f"{cpus} CPUs; python {sys.version.split()[0]}")  # fmt: skip
        print(f"{'run':<16}{'wall s':>8}{'ex/s':>10}{'peak RSS/process':>18}"
              f"{'peak RSS tree':>15}{'shards':>8}  same bytes as serial")  # fmt: skip
        for r in results:
            same = r["shards"] == results[0]["shards"]
            print(f"{r['name']:<16}{r['seconds']:>8.1f}{args.examples / r['seconds']:>10,.0f}"
                  f"{r['maxrss'] / 2**20:>15.0f} MiB{r['tree'] / 2**20:>12.0f} MiB"
                  f"{len(r['shards']):>8}  {'yes' if same else 'NO'}")  # fmt: skip
        units = len(results[0]["shards"])
        s, p, t16 = model(results[0]["seconds"], results[1]["seconds"], units)
        print(f"\nmodel (Amdahl fitted to 1 and 2 workers): serial part {s:.1f} s, parallel "
              f"part {p:.1f} s; 16 cores over {units} units: {t16:.1f} s "
              f"({results[0]['seconds'] / t16:.1f}x serial)")  # fmt: skip
        worst = max(r["maxrss"] for r in results)
        print(f"peak RSS of any process: {worst / 2**20:.0f} MiB (target < 500 MB: "
              f"{'PASS' if worst < 500e6 else 'FAIL'})")  # fmt: skip
        if not all(r["shards"] == results[0]["shards"] for r in results):
            raise SystemExit("the runs wrote different bytes")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
