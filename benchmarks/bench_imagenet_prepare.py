"""Benchmark: prepare a miniature ImageNet with catalog and with TFDS 4.9.10, side by side.

Generates ImageNet's manual files in their real layout: ``ILSVRC2012_img_train.tar``, a tar
of one tar per class (``n01440764.tar`` holding ``n01440764_<i>.JPEG``; the first `--classes`
classes of TFDS's labels.txt, `--per-class` images each), ``ILSVRC2012_img_val.tar``
(`--val` images ``ILSVRC2012_val_<i>.JPEG``) and ``ILSVRC2012_img_test.tar`` (`--test`
images ``ILSVRC2012_test_<i>.JPEG``, unlabeled: the builder's test split reads it). The JPEGs
have ImageNet's typical size and quality (500x375, quality 90, about 110 KB: a smooth random
picture plus noise; a pool of 32 distinct files reused under every name). Then, each a fresh
process, one after the other:

- catalog ``prepare`` of builders/imagenet2012 (its checksums and counts those of the
  miniature, validation_labels.txt cut to `--val` lines), offline from the manual dir:
  serially, with ``--num-proc 2``, and on Apache Beam (DirectRunner, 2 workers) when
  ``apache_beam`` imports (``--beam-python`` names another interpreter that has it);
- TFDS: ``tfds.builder("imagenet2012").download_and_prepare`` with
  ``DownloadConfig(manual_dir=...)``, in `--tf-python` (a venv with tensorflow and
  tensorflow-datasets 4.9.10; skipped, with a note, when that interpreter is missing).

For each: wall time (whole process), peak RSS of the largest process and of the process tree
(sampled from /proc), the largest disk use under its data and download dirs during the run
(sampled every 0.2 s: an extracted copy of the train tar would show there), the bytes of the
prepared dataset, and its (file name, label) pairs per split, which must be the same set for
every run. catalog hashes the manual files (sha256) on every prepare; TFDS does not check them.

    python benchmarks/bench_imagenet_prepare.py [--classes 100] [--per-class 100] [--val 1000]
        [--test 100]
        [--tf-python /work/venvs/tf/bin/python] [--beam-python PY] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_prepare import _WRAPPER, _tree

ROOT = Path(__file__).resolve().parent.parent
BUILDER = ROOT / "builders" / "imagenet2012"
POOL = 32

TFDS_RUN = """
import json, sys, time
start = time.perf_counter()
import tensorflow_datasets as tfds
data_dir, manual, out = sys.argv[1:4]
builder = tfds.builder("imagenet2012", data_dir=data_dir)
began = time.perf_counter()
builder.download_and_prepare(download_config=tfds.download.DownloadConfig(manual_dir=manual))
prepared = time.perf_counter()
label = builder.info.features["label"]
pairs = {}
for split in builder.info.splits:
    ds = builder.as_dataset(split, decoders={"image": tfds.decode.SkipDecoding()})
    pairs[split] = sorted(
        [ex["file_name"].decode(), label.int2str(int(ex["label"])) if ex["label"] >= 0 else -1]
        for ex in tfds.as_numpy(ds)
    )
result = {"pairs": pairs, "import_s": began - start, "prepare_s": prepared - began}
json.dump(result, open(out, "w"))
"""

CATALOG_PAIRS = """
import json, sys
from pathlib import Path
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
folder = next(Path(sys.argv[1]).rglob(INFO_FILE)).parent
info = DatasetInfo.read(folder)
names = info.features["label"].names
pairs = {}
for split in info.splits:
    ds = DataSource(folder, info, split, decoders={"image": False})
    pairs[split] = sorted(
        [e["file_name"], names[e["label"]] if e["label"] >= 0 else -1] for e in ds
    )
json.dump({"pairs": pairs}, open(sys.argv[2], "w"))
"""


def jpeg_pool(n: int) -> list[bytes]:
    """`n` JPEGs of ImageNet's typical size and quality (500x375, quality 90, ~110 KB)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    pool = []
    for _ in range(n):
        small = rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)
        base = np.asarray(Image.fromarray(small).resize((500, 375), Image.Resampling.BICUBIC))
        noisy = base.astype(np.int16) + rng.normal(0, 18, base.shape).astype(np.int16)
        out = io.BytesIO()
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(out, "JPEG", quality=90)
        pool.append(out.getvalue())
    return pool


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 1_300_000_000, 0o644
    tar.addfile(info, io.BytesIO(data))


def write_manual(manual: Path, classes: int, per_class: int, val: int, test: int) -> None:
    """ILSVRC2012_img_train.tar (a tar of per-class tars), ILSVRC2012_img_val.tar and
    ILSVRC2012_img_test.tar."""
    manual.mkdir(parents=True)
    pool = jpeg_pool(POOL)
    wnids = (BUILDER / "labels.txt").read_text().split()[:classes]
    with tarfile.open(manual / "ILSVRC2012_img_train.tar", "w") as outer:
        for c, wnid in enumerate(wnids):
            inner = io.BytesIO()
            with tarfile.open(fileobj=inner, mode="w") as tar:
                for i in range(per_class):
                    _add(tar, f"{wnid}_{1000 + i}.JPEG", pool[(c * per_class + i) % POOL])
            _add(outer, f"{wnid}.tar", inner.getvalue())
    with tarfile.open(manual / "ILSVRC2012_img_val.tar", "w") as tar:
        for i in range(val):
            _add(tar, f"ILSVRC2012_val_{i + 1:08d}.JPEG", pool[(i * 7) % POOL])
    with tarfile.open(manual / "ILSVRC2012_img_test.tar", "w") as tar:
        for i in range(test):
            _add(tar, f"ILSVRC2012_test_{i + 1:08d}.JPEG", pool[(i * 5) % POOL])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def write_builder(folder: Path, manual: Path, counts: dict[str, int]) -> None:
    """builders/imagenet2012 with the miniature's checksums and counts."""
    shutil.copytree(BUILDER, folder, ignore=shutil.ignore_patterns("dummy_data"))
    labels = (BUILDER / "validation_labels.txt").read_text().splitlines()[: counts["validation"]]
    (folder / "validation_labels.txt").write_text("".join(f"{x}\n" for x in labels))
    spec = (folder / "builder.yaml").read_text()
    spec = spec.replace("num_examples: 1281167", f"num_examples: {counts['train']}")
    spec = spec.replace("num_examples: 50000", f"num_examples: {counts['validation']}")
    spec = spec.replace("num_examples: 100000", f"num_examples: {counts['test']}")
    (folder / "builder.yaml").write_text(spec)
    lines = []
    for line in (BUILDER / "checksums.tsv").read_text().splitlines():
        url, _, _, filename = line.split("\t")
        path = manual / filename if "://" in url else folder / url
        lines.append(f"{url}\t{path.stat().st_size}\t{_sha256(path)}\t{filename}\n")
    (folder / "checksums.tsv").write_text("".join(lines))


def _disk(paths: list[Path]) -> int:
    """Bytes of disk used by the files under `paths` (files vanishing meanwhile: skipped)."""
    total = 0
    for path in paths:
        for dirpath, _, files in os.walk(path):
            for name in files:
                with contextlib.suppress(OSError):
                    total += (Path(dirpath) / name).lstat().st_blocks * 512
    return total


def measure(
    name: str, command: list[str], watched: list[Path], env: dict[str, str]
) -> dict[str, Any]:
    """Run `command` (wrapped for ru_maxrss): wall, peak RSS (largest process, tree), peak
    disk use under `watched`."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [command[0], "-c", _WRAPPER, *command], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    peaks = {"tree": 0, "disk": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peaks["tree"] = max(peaks["tree"], _tree(proc.pid)[0])
            peaks["disk"] = max(peaks["disk"], _disk(watched))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{err[-3000:]}")
    tail = err.rsplit("MAXRSS_KB ", 1)[1].split()
    maxrss, cpu = int(tail[0]) * 1024, float(tail[2])
    return {"name": name, "seconds": seconds, "cpu": cpu, "maxrss": maxrss, **peaks}


def run_one(
    name: str, extra: list[str], root: Path, folder: Path, manual: Path,
    args: argparse.Namespace, env: dict[str, str], pairs: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """One prepare in a fresh process, into a fresh data dir (removed after); its (file name,
    label) pairs go into `pairs`."""
    data, downloads, out = root / "data", root / "downloads", root / "pairs.json"
    if name.startswith("tfds"):
        command = [args.tf_python, "-c", TFDS_RUN, str(data), str(manual), str(out)]
        result = measure(name, command, [data], env)
        tf_out = json.loads(out.read_text())
        result["prepare_only"] = tf_out["prepare_s"]
    else:
        python = args.beam_python if "beam" in name else sys.executable
        command = [python, "-m", "catalog", "prepare", str(folder), "--offline",
                   "--manual-dir", str(manual), "--download-dir", str(downloads),
                   "--data-dir", str(data), *extra]  # fmt: skip
        result = measure(name, command, [data, downloads], env)
        read = [sys.executable, "-c", CATALOG_PAIRS, str(data), str(out)]
        subprocess.run(read, check=True, env=env)
    result["bytes"] = _disk([data])
    pairs[name] = json.loads(out.read_text())["pairs"]
    shutil.rmtree(data)
    shutil.rmtree(downloads, ignore_errors=True)
    return result


def report(
    rounds: list[list[dict[str, Any]]], pairs: dict[str, Any], counts: dict[str, int],
    args: argparse.Namespace, train_bytes: int,
) -> None:  # fmt: skip
    """Medians of wall and CPU time over the rounds, the largest peaks, the ratios to TFDS."""
    total = sum(counts.values())
    print(f"\n{total:,} images ({counts['train']:,} train in {args.classes} class tars, "
          f"{counts['validation']:,} validation, {counts['test']:,} test); {os.cpu_count()} "
          f"cores (shared); medians of {len(rounds)} rounds")  # fmt: skip
    print(f"{'run':<20}{'wall s':>8}{'CPU s':>8}{'img/s':>7}{'RSS/proc':>10}{'RSS tree':>10}"
          f"{'peak disk':>11}{'dataset':>9}")  # fmt: skip
    rows = {}
    for i, first in enumerate(rounds[0]):
        runs = [r[i] for r in rounds]
        row = {
            "wall": statistics.median(r["seconds"] for r in runs),
            "cpu": statistics.median(r["cpu"] for r in runs),
            **{k: max(r[k] for r in runs) for k in ("maxrss", "tree", "disk", "bytes")},
        }
        if "prepare_only" in first:
            row["prepare_only"] = statistics.median(r["prepare_only"] for r in runs)
        rows[first["name"]] = row
        print(f"{first['name']:<20}{row['wall']:>8.1f}{row['cpu']:>8.1f}{total / row['wall']:>7.0f}"
              f"{row['maxrss'] / 2**20:>7.0f} MB{row['tree'] / 2**20:>7.0f} MB"
              f"{row['disk'] / 2**20:>8.0f} MB{row['bytes'] / 2**20:>6.0f} MB")  # fmt: skip
    if not any(n.startswith("tfds") for n in rows):
        names = list(pairs)
        same = all(p == pairs[names[0]] for p in pairs.values())
        print(f"same (file name, label) pairs in every catalog run: {same}")
        return
    tfds = rows.pop(next(n for n in rows if n.startswith("tfds")))
    print(f"TFDS download_and_prepare alone (no import, no reading back): "
          f"{tfds['prepare_only']:.1f} s")  # fmt: skip
    for name, row in rows.items():
        print(
            f"{name}: TFDS / catalog = {tfds['wall'] / row['wall']:.2f}x wall, "
            f"{tfds['cpu'] / row['cpu']:.2f}x CPU, "
            f"{tfds['prepare_only'] / row['wall']:.2f}x (TFDS's prepare alone / catalog's process)"
        )
    reference = next(v for n, v in pairs.items() if n.startswith("tfds"))
    same = all(p == reference for p in pairs.values())
    print(
        f"same (file name, label) pairs in every run: {same} "
        f"({', '.join(f'{s} {len(v)}' for s, v in reference.items())})"
    )
    flat = all(r["disk"] < r["bytes"] + train_bytes / 2 for r in rows.values())
    print(
        f"train tar {train_bytes / 2**20:,.0f} MB; catalog's peak disk stays under the dataset "
        f"+ half the tar (no extracted copy): {flat}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--val", type=int, default=1000)
    parser.add_argument("--test", type=int, default=100)
    parser.add_argument("--tf-python", default="/work/venvs/tf/bin/python")
    parser.add_argument("--beam-python", default=sys.executable)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of runs (medians)")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temp dir)")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_imagenet-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as for an installed package
    try:
        manual = root / "manual"
        counts = {"train": args.classes * args.per_class, "validation": args.val}
        counts["test"] = args.test
        start = time.perf_counter()
        write_manual(manual, args.classes, args.per_class, args.val, args.test)
        folder = root / "imagenet2012"
        write_builder(folder, manual, counts)
        sizes = {p.name: p.stat().st_size for p in manual.iterdir()}
        print(f"generated {args.classes} classes x {args.per_class} + {args.val} validation "
              f"JPEGs: " + ", ".join(f"{k} {v / 1e6:,.0f} MB" for k, v in sizes.items())
              + f" in {time.perf_counter() - start:.0f} s")  # fmt: skip
        runs: list[tuple[str, list[str]]] = [
            ("catalog serial", []),
            ("catalog num-proc 2", ["--num-proc", "2"]),
        ]
        beam_ok = (
            subprocess.run(
                [args.beam_python, "-c", "import apache_beam"], capture_output=True, env=env
            ).returncode
            == 0
        )
        if beam_ok:
            options = (
                "runner=DirectRunner,direct_num_workers=2,direct_running_mode=multi_processing"
            )
            runs.append(("catalog beam 2", ["--beam-pipeline-options", options]))
        else:
            print(f"(no Beam run: apache_beam does not import in {args.beam_python})")
        if shutil.which(args.tf_python) or Path(args.tf_python).is_file():
            runs.append(("tfds 4.9.10 + TF", []))
        else:
            print(f"(no TFDS run: {args.tf_python} is missing; --tf-python names one)")
        rounds: list[list[dict[str, Any]]] = []
        pairs: dict[str, Any] = {}
        for _ in range(args.repeat):  # the runs interleaved, so load on the machine hits all
            rounds.append([run_one(name, extra, root, folder, manual, args, env, pairs)
                           for name, extra in runs])  # fmt: skip
        report(rounds, pairs, counts, args, sizes["ILSVRC2012_img_train.tar"])
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
