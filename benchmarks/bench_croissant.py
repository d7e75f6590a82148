"""A Croissant dataset of Parquet files prepared by catalog, side by side with the same files
prepared as plain Parquet (`catalog prepare FOLDER`) and with mlcroissant's
``Dataset(...).records()`` iterated to the end.

    nice -n 10 python benchmarks/bench_croissant.py [--mb 64] [--runs 3]

The issue asks for 1 GB of Parquet (``--mb 1024 --runs 1 --paths croissant,parquet``: about
1 GiB of Parquet, 60M rows, written a million rows at a time; each run's prepared copy is
removed after it); on a shared 2-core machine the default is 64 MB (the work of each path
grows linearly with the rows: the ratios are what to read). Files: Parquet of
four columns (int64 id, float64 x, a short text, an int64 label), 8 files in ``data/``, a
Croissant file beside them with a FileSet ``includes: data/*.parquet`` and a field per column.
Each time is the median of `--runs` runs into a fresh data dir (catalog: spec + prepare; plain
Parquet: spec inference + prepare; mlcroissant: every record read, or those it reaches within
``--cap`` seconds: its rows/s is then over those rows). Each run is a child process of its
own, whose peak RSS and CPU seconds (its own and its children's, after the imports) are
reported beside its time: on a shared machine, read the CPU ratios.

``--hub`` lays the files out as the Hub does (``data/train/``, ``data/test/``, the split a
regex on the path); ``--paths spec`` times ``croissant_builder`` alone (the Croissant file
read and each split's examples counted).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.api.croissant import croissant_builder
from catalog.api.files import files_builder

FILES = 8
#: A Croissant 1.0 file whose JSON-LD @context the benchmark's file takes (mlcroissant needs it).
CONTEXT_FROM = (
    Path(__file__).resolve().parent.parent / "tests/data/croissant/simple-split/metadata.json"
)
#: About this many bytes of Parquet per row (measured for the columns below, snappy: 153.2 MiB
#: for 8,947,848 rows), so ``--mb N`` writes about N MiB.
ROW_BYTES = 18


def make(root: Path, mb: int, hub: bool = False) -> tuple[Path, int]:
    """The files and their Croissant file; `hub`: in the Hub's layout, ``data/train/`` (6
    files) and ``data/test/`` (2), the split a regex on the path (a cr:Split record set)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "data").mkdir(parents=True)
    folders = ["train"] * (FILES - 2) + ["test"] * 2 if hub else [""] * FILES
    for folder in set(folders):
        (root / "data" / folder).mkdir(parents=True, exist_ok=True)
    rows = mb * (1 << 20) // ROW_BYTES // FILES
    rng = np.random.default_rng(0)
    chunk = 1 << 20  # rows written at once: memory stays bounded at any --mb
    for n in range(FILES):
        path = root / "data" / folders[n] / f"part-{n:03d}.parquet"
        writer = None
        for first in range(n * rows, (n + 1) * rows, chunk):
            ids = np.arange(first, min(first + chunk, (n + 1) * rows), dtype=np.int64)
            table = pa.table({
                "id": ids,
                "x": rng.random(len(ids)),
                "text": pa.array([f"row {i}" for i in ids.tolist()]),
                "label": ids % 10,
            })  # fmt: skip
            writer = writer or pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
        if writer is not None:
            writer.close()

    def field(name: str, kind: str) -> dict[str, object]:
        return {"@type": "cr:Field", "@id": f"rows/{name}", "name": name, "dataType": kind,
                "source": {"fileSet": {"@id": "parts"}, "extract": {"column": name}}}  # fmt: skip

    doc = {
        "@context": json.loads(CONTEXT_FROM.read_text())["@context"],
        "@type": "sc:Dataset", "name": "bench", "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [{"@type": "cr:FileSet", "@id": "parts", "name": "parts",
                          "encodingFormat": "application/x-parquet", "includes": "data/*.parquet"}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "rows", "name": "rows", "field": [
            field("id", "sc:Integer"), field("x", "sc:Float"), field("text", "sc:Text"),
            field("label", "sc:Integer")]}],
    }  # fmt: skip
    if hub:
        doc["distribution"][0]["includes"] = "data/*/*.parquet"  # type: ignore[index]
        split = field("split", "sc:Text")
        split["references"] = {"field": {"@id": "splits/name"}}
        split["source"] = {"fileSet": {"@id": "parts"}, "extract": {"fileProperty": "fullpath"},
                           "transform": {"regex": "^data/(train|test)/.+parquet$"}}  # fmt: skip
        doc["recordSet"][0]["field"].append(split)  # type: ignore[index]
        doc["recordSet"].insert(0, {  # type: ignore[attr-defined]
            "@type": "cr:RecordSet", "@id": "splits", "name": "splits", "dataType": "cr:Split",
            "field": [{"@type": "cr:Field", "@id": "splits/name", "name": "name",
                       "dataType": "sc:Text"}],
            "data": [{"splits/name": "train"}, {"splits/name": "test"}],
        })  # fmt: skip
    (root / "metadata.json").write_text(json.dumps(doc))
    return root / "metadata.json", rows * FILES


def run_one(path: str, root: Path, run: int, rows: int, cap: float) -> dict[str, float]:
    """One path's run in this process: its seconds, the rows it read, its peak RSS."""
    meta = root / "set" / "metadata.json"
    done = rows
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu_before = sum(u.ru_utime + u.ru_stime for u in used)  # the imports' excluded
    start = time.perf_counter()
    if path in ("croissant", "spec"):
        b = croissant_builder(meta, data_dir=root / f"c{run}", download_dir=root / "dl")
        if path == "croissant":  # spec: the Croissant file read, its splits counted
            b.download_and_prepare()
    elif path == "parquet":
        b = files_builder(root / "set" / "data", "plain", data_dir=root / f"p{run}")
        b.download_and_prepare()
    else:
        import mlcroissant as mlc

        done = 0
        for _ in mlc.Dataset(str(meta)).records("rows"):  # every split's
            done += 1
            if cap and not done % 1000 and time.perf_counter() - start > cap:
                break
        assert cap or done == rows, done
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in used) - cpu_before
    for prepared in (root / f"c{run}", root / f"p{run}"):  # disk stays one run's (1 GB: GBs)
        shutil.rmtree(prepared, ignore_errors=True)
    return {"seconds": seconds, "cpu": cpu, "rows": done, "rss_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cap", type=float, default=0.0, help="mlcroissant's seconds (0: all)")
    parser.add_argument(
        "--paths", default="croissant,parquet,mlcroissant", help="of croissant, parquet, "
        "mlcroissant and spec (croissant_builder alone: the Croissant file read, splits counted)"
    )  # fmt: skip
    parser.add_argument("--hub", action="store_true", help="the Hub's layout: split by path")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # PATH ROOT RUN (a child)
    args = parser.parse_args()
    if args.hub and "parquet" in args.paths.split(","):
        parser.error("--hub: `catalog prepare FOLDER` reads no train/ test/ folders of Parquet")
    if args.one:
        path, root_text, run = args.one
        rows = json.loads((Path(root_text) / "rows.json").read_text())
        print(json.dumps(run_one(path, Path(root_text), int(run), rows, args.cap)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        _, rows = make(root / "set", args.mb, args.hub)
        (root / "rows.json").write_text(json.dumps(rows))
        size = sum(p.stat().st_size for p in (root / "set" / "data").rglob("*.parquet"))
        print(f"{rows} rows in {FILES} Parquet files, {size / (1 << 20):.1f} MiB")
        paths = args.paths.split(",")
        results: dict[str, list[dict[str, float]]] = {k: [] for k in paths}
        for run in range(args.runs):
            for path in paths:
                command = [sys.executable, __file__, "--one", path, str(root), str(run)]
                done = subprocess.run(
                    [*command, "--cap", str(args.cap)], capture_output=True, text=True, check=True
                )
                results[path].append(json.loads(done.stdout.strip().splitlines()[-1]))
        rates = {
            k: statistics.median(r["rows"] / r["seconds"] for r in v) for k, v in results.items()
        }
        base = rates.get("croissant") or next(iter(rates.values()))
        cpu_rates = {
            k: statistics.median(r["rows"] / r["cpu"] for r in v) for k, v in results.items()
        }
        cpu_base = cpu_rates.get("croissant") or next(iter(cpu_rates.values()))
        print(f"{'path':<12} {'median s':>9} {'CPU s':>7} {'rows read':>10} {'rows/s':>10} "
              f"{'time/row vs croissant':>22} {'CPU/row vs croissant':>21} "
              f"{'peak RSS MB':>12}")  # fmt: skip
        for name, runs in results.items():
            seconds = statistics.median(r["seconds"] for r in runs)
            cpu = statistics.median(r["cpu"] for r in runs)
            read = statistics.median(r["rows"] for r in runs)
            peak = max(r["rss_mb"] for r in runs)
            print(f"{name:<12} {seconds:9.2f} {cpu:7.2f} {read:10.0f} {rates[name]:10.0f} "
                  f"{base / rates[name]:21.2f}x {cpu_base / cpu_rates[name]:20.2f}x "
                  f"{peak:12.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
