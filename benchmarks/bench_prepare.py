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
(sampled from /proc every 0.2 s), the CPU seconds of all its processes, the shard count, and
whether every shard's sha256 equals the serial run's. It ends with a model of 16 cores (see
`model`).

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
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"MAXRSS_KB {usage.ru_maxrss} CPU_S {usage.ru_utime + usage.ru_stime}", file=sys.stderr)
raise SystemExit(code)
"""
_TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> tuple[int, float]:
    """(bytes resident, CPU seconds used) by `root` and its live descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        cpu = sum(int(f) for f in fields[11:15]) / _TICK  # utime stime cutime cstime
        stats[pid] = (int(fields[21]) * os.sysconf("SC_PAGE_SIZE"), cpu)
    rss, cpu, todo = 0, 0.0, [root]
    while todo:
        pid = todo.pop()
        rss += stats.get(pid, (0, 0.0))[0]
        cpu += stats.get(pid, (0, 0.0))[1]
        todo += children.get(pid, [])
    return rss, cpu


def run(name: str, args: list[str], data_dir: Path) -> dict[str, Any]:
    """One prepare in a fresh process tree: wall, RSS and CPU, and when its phases ended
    (the ``plan:`` line, the last unit's line, the end), each with the CPU used by then."""
    command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "catalog", "prepare", *args]
    command += ["--data-dir", str(data_dir), "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]
    marks: dict[str, tuple[float, float]] = {}
    err_lines: list[str] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree(proc.pid)[0])

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            if ": plan: " in line or " written: " in line:
                mark = (time.perf_counter() - start, _tree(proc.pid)[1])
                marks["plan" if ": plan: " in line else "units"] = mark

    threads = [threading.Thread(target=f, daemon=True) for f in (sample, read_stderr)]
    for thread in threads:
        thread.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.wait()
    seconds = time.perf_counter() - start
    done.set()
    for thread in threads:
        thread.join()
    err = "".join(err_lines)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{err[-3000:]}")
    tail = err.rsplit("MAXRSS_KB ", 1)[1].split()
    maxrss, cpu = int(tail[0]) * 1024, float(tail[2])
    entry = json.loads(out)["datasets"][0]
    shards = [s["sha256"] for s in entry["splits"]["extra"]["shards"]]
    return {"name": name, "seconds": seconds, "maxrss": maxrss, "tree": peak[0], "cpu": cpu,
            "marks": marks, "shards": shards, "bytes": entry["num_bytes"]}  # fmt: skip


def model(serial: dict[str, Any], units: int, cores: int = 16) -> dict[str, float]:
    """Predict the wall time on `cores` idle cores from the serial run's CPU time per phase.

    The serial run's CPU seconds are split at the ``plan:`` line and the last unit's line:
    ``setup`` (start-up, hashing the cached download, inflating the .mat into the staged
    .npy, planning), ``units`` (reading, encoding, writing and hashing the shards) and
    ``commit`` (the driver re-hashing every shard, writing dataset_info.json). Setup and
    commit run in one process; the units spread over ``min(cores, units)`` workers, each
    paying a process start-up (measured: the setup of a run that plans nothing is about 1 s;
    taken as 1 s). CPU time stands in for wall time on an idle core, so the prediction holds
    while the disk keeps up (16 workers write about 16x the serial rate) and the cores are
    not shared (this machine's are: its wall times are inflated).
    """
    plan_cpu = serial["marks"]["plan"][1]
    units_cpu = serial["marks"]["units"][1] - plan_cpu
    commit_cpu = max(0.0, serial["cpu"] - serial["marks"]["units"][1])
    workers = min(cores, units)
    predicted = plan_cpu + 1.0 + units_cpu / workers + commit_cpu
    return {"setup": plan_cpu, "units": units_cpu, "commit": commit_cpu, "workers": workers,
            "predicted": predicted, "serial": plan_cpu + units_cpu + commit_cpu}  # fmt: skip


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
        print("\nCPU seconds (all processes): "
              + ", ".join(f"{r['name']} {r['cpu']:.1f}" for r in results)
              + f"; load average now {os.getloadavg()[0]:.1f} on {cpus} CPUs")  # fmt: skip
        m = model(results[0], units)
        print(f"model from the serial run's CPU time: setup {m['setup']:.1f} s + units "
              f"{m['units']:.1f} s + commit {m['commit']:.1f} s = {m['serial']:.1f} s on one "
              f"idle core; 16 cores ({m['workers']} workers for {units} units): "
              f"{m['predicted']:.1f} s ({m['serial'] / m['predicted']:.1f}x)")  # fmt: skip
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
