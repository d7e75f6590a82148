"""Preparing a large CSV and a large Parquet file, against Hugging Face datasets, pandas and
pyarrow: CPU, wall time, disk and peak RSS, then random reads in a fresh process, side by side.

    python benchmarks/bench_tables.py [--mb 256] [--runs 1] [--reads 1] [--base /tmp/perf-base]

For each size (MB of CSV text), one CSV file of four columns (int64 id, float64 x, a boolean,
a text of 20-40 characters) is generated, and a Parquet file of the same rows (pyarrow, 64k-row
groups). Each contender runs in a fresh process (so its peak RSS is its own, read from the
kernel by ``wait4``, as are its wall and CPU seconds) on a warm page cache:

- ``catalog``: ``catalog.prepare_files(path)``: infer the spec (one pass over every row: types,
  counts; the file's sha256), then prepare (read, check, encode, write ArrayRecord shards).
  ``catalog@base``: the same with the catalog of another tree (``--base``: a before/after).
- ``hf``: Hugging Face ``datasets.load_dataset("csv"/"parquet"/"json", data_files=path)`` into
  a fresh cache dir: the peer that also produces a random-access dataset (Arrow files).
- ``pandas``: ``pandas.read_csv`` / ``read_parquet``, then ``DataFrame.to_parquet`` of the rows.
- ``pyarrow``: ``pyarrow.csv.read_csv`` / ``parquet.read_table``, then
  ``parquet.write_table``.
- ``pandas>AR``, ``pyarrow>AR``: the same reads, then one ArrayRecord record per row
  (``group_size:1,uncompressed``), each row a pickled tuple (untyped, unchecked).

``disk`` is what the contender left in its output dir (catalog's data dir, HF's cache). Then,
for catalog and HF, a fresh process opens the prepared dataset and reads: the open, the first
batch of 128 random rows (``__getitems__`` / ``ds[list]``), the median of 200 more batches,
and the median of 20 groups of 1000 random ``ds[i]``; CPU microseconds per example
(``time.process_time``), decoded as each library returns examples by default (catalog: dicts
of NumPy values; HF: dicts of Python values). ``--reads N``: N fresh processes read each
prepared copy (the read columns are their medians; the noisy first batch wants 5 or more).

pandas and pyarrow hold the whole table in memory (their peak grows with the file); catalog
reads a batch of rows at a time and writes shards of at most 1 GiB and 2^20 examples: its peak
stays flat as the file grows. Give two sizes to see both. Medians of ``--runs`` runs.
Before any timed run, each contender prepares and reads a 1 MB file once, so that its modules
are compiled (into a temporary ``PYTHONPYCACHEPREFIX``) as an installed package's are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_AR_WRITER = (
    "from array_record.python.array_record_module import ArrayRecordWriter; "
    "w = ArrayRecordWriter(sys.argv[2] + '/out.array_record', 'group_size:1,uncompressed'); "
    "write = w.write; from collections import deque; drain = lambda it: deque(it, maxlen=0); "
)

_CATALOG = "import catalog, sys; catalog.prepare_files(sys.argv[1], 'bench', data_dir=sys.argv[2])"
_HF = (
    "import datasets, sys; datasets.disable_progress_bars(); p = sys.argv[1]; "
    "datasets.load_dataset({'.parquet': 'parquet', '.jsonl': 'json'}.get(p[p.rfind('.'):], "
    "'csv'), data_files=p, "
    "split='train', cache_dir=sys.argv[2])"
)

CONTENDERS = {
    "catalog": _CATALOG,
    "catalog@base": _CATALOG,
    "hf": _HF,
    "pandas": (
        "import pandas as pd, sys; p = sys.argv[1]; "
        "df = pd.read_parquet(p) if p.endswith('.parquet') else pd.read_csv(p); "
        "df.to_parquet(sys.argv[2] + '/out.parquet')"
    ),
    "pyarrow": (
        "import pyarrow.csv as c, pyarrow.parquet as pq, sys; p = sys.argv[1]; "
        "t = pq.read_table(p) if p.endswith('.parquet') else c.read_csv(p); "
        "pq.write_table(t, sys.argv[2] + '/out.parquet')"
    ),
    # The same rows into the same container as catalog's: one ArrayRecord record per row
    # (catalog's writer options), each row a pickled tuple.
    "pandas>AR": (
        "import pandas as pd, pickle, sys; p = sys.argv[1]; " + _AR_WRITER + "df = "
        "pd.read_parquet(p) if p.endswith('.parquet') else pd.read_csv(p); dump = pickle.dumps; "
        "drain(map(write, map(dump, df.itertuples(index=False, name=None)))); w.close()"
    ),
    "pyarrow>AR": (
        "import pyarrow.csv as c, pyarrow.parquet as pq, pickle, sys; p = sys.argv[1]; "
        + _AR_WRITER
        + "t = pq.read_table(p) if p.endswith('.parquet') else c.read_csv(p); "
        "dump = pickle.dumps; "
        "drain(map(write, map(dump, (row for b in t.to_batches(1 << 16) "
        "for row in zip(*(col.to_pylist() for col in b.columns)))))); w.close()"
    ),
}


#: Reading a prepared dataset in a fresh process: prints open s, first batch, batch, ds[i]
#: (CPU us per example).
_READ = """
import sys, time, statistics, numpy as np
tool, p, out = sys.argv[1], sys.argv[2], sys.argv[3]
clock = time.process_time
start = clock()
if tool == "hf":
    import datasets
    datasets.disable_progress_bars()
    kind = {".parquet": "parquet", ".jsonl": "json"}.get(p[p.rfind("."):], "csv")
    ds = datasets.load_dataset(kind, data_files=p, split="train", cache_dir=out)
    batch = lambda rows: ds[rows]
else:
    import catalog
    ds = catalog.data_source("bench", split="train", data_dir=out, download=False)
    batch = ds.__getitems__
opened = clock() - start
rng = np.random.default_rng(0)
n = len(ds)
rows = [rng.integers(0, n, 128).tolist() for _ in range(201)]
start = clock()
batch(rows[0])
first = (clock() - start) / 128
times = []
for r in rows[1:]:
    start = clock()
    batch(r)
    times.append((clock() - start) / 128)
singles = []
for _ in range(20):
    picks = rng.integers(0, n, 1000).tolist()
    start = clock()
    for i in picks:
        ds[i]
    singles.append((clock() - start) / 1000)
us = 1e6
print(opened, first * us, statistics.median(times) * us, statistics.median(singles) * us)
"""

READERS = ("catalog", "catalog@base", "hf")

#: Where the children keep compiled modules (set by `main`): an installed package has its
#: ``.pyc`` files, so no contender should pay for compiling its modules in the timed run
#: (with ``PYTHONDONTWRITEBYTECODE`` set, catalog's tree was compiled in every run: ~0.5 s).
PYCACHE: Path | None = None


def child_env(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_DATASETS_OFFLINE": "1"}
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def read_back(tool: str, source: Path, out: Path, tree: Path) -> tuple[float, ...]:
    """(open s, first batch, batch, ds[i]: CPU us per example) of `tool`'s prepared `out`."""
    env = child_env(tree)
    done = subprocess.run(
        [sys.executable, "-c", _READ, tool, str(source), str(out)],
        env=env, capture_output=True, text=True, check=True, cwd=out,
    )  # fmt: skip
    return tuple(float(v) for v in done.stdout.split()[-4:])


def disk_usage(path: Path) -> int:
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def make_files(root: Path, mb: int) -> tuple[Path, Path, int]:
    """A CSV of about `mb` MB and a Parquet file of the same rows; their row count."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = root / f"table{mb}.csv"
    target = mb << 20
    rows = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("id,x,flag,name\n")
        size = 0
        while size < target:
            chunk = "".join(
                f"{i},{i / 7:.6f},{'true' if i % 3 else 'false'},row {i} {'abc' * (i % 8)}\n"
                for i in range(rows, rows + 100_000)
            )
            f.write(chunk)
            size += len(chunk)
            rows += 100_000
    parquet = root / f"table{mb}.parquet"
    pq.write_table(pacsv.read_csv(path), parquet, row_group_size=1 << 16)
    return path, parquet, rows


def warm(path: Path) -> None:
    """Read `path` into the page cache a few MB at a time: a child's peak RSS starts at this
    process's own peak (kept across fork and exec), so reading the file whole here would
    show every contender as using at least the file's size."""
    with open(path, "rb") as f:
        while f.read(1 << 22):
            pass


def run(
    code: str, source: Path, out: Path, tree: Path = ROOT, quiet: bool = False
) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, every thread) and peak RSS (bytes) of `code`
    in a fresh process (`quiet`: its errors not shown; SystemExit when it fails). On a shared
    machine the CPU seconds are the steadier measure."""
    env = child_env(tree)
    start = time.perf_counter()
    command = [sys.executable, "-c", code, str(source), str(out)]
    # cwd: not this tree (``-c`` puts the working dir first on sys.path)
    stderr = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr, cwd=out)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{code!r} failed on {source} (exit {process.returncode})")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def warm_up(root: Path, tools: list[str], base: Path | None) -> None:
    """Each contender prepares and reads a small CSV and Parquet file once, untimed: the
    modules it imports are compiled into `PYCACHE`, as an installed package's are."""
    folder = root / "warm-up"
    folder.mkdir()
    subprocess.run(
        [sys.executable, __file__, "--make", str(folder), "1"], check=True, capture_output=True
    )
    for source in (folder / "table1.csv", folder / "table1.parquet"):
        for tool in tools:
            tree = base if tool == "catalog@base" and base is not None else ROOT
            out = folder / f"out-{tool}"
            out.mkdir()
            run(CONTENDERS[tool], source, out, tree)
            if tool in READERS:
                read_back(tool, source, out, tree)
            subprocess.run(["rm", "-rf", str(out)], check=True)
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[256], help="CSV sizes in MB")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--tools", nargs="+", choices=list(CONTENDERS), default=["catalog", "hf", "pandas"],
        help="contenders to run (the CPU ratios are to hf's when it runs)",
    )  # fmt: skip
    parser.add_argument("--base", type=Path, help="a tree of another catalog (catalog@base)")
    parser.add_argument(
        "--reads", type=int, default=1,
        help="fresh processes reading each prepared copy (the read columns: their medians)",
    )  # fmt: skip
    parser.add_argument("--make", nargs=2, help=argparse.SUPPRESS)  # (folder, MB): the files
    args = parser.parse_args()
    if args.make:
        print(make_files(Path(args.make[0]), int(args.make[1]))[2])
        return
    tools = [t for t in CONTENDERS if t in args.tools and (t != "catalog@base" or args.base)]
    global PYCACHE
    with tempfile.TemporaryDirectory(prefix="bench_tables") as tmp:
        root = Path(tmp)
        PYCACHE = root / "pycache"
        warm_up(root, tools, args.base)
        print(
            f"{'file':<16}{'rows':>10}  {'tool':<13}{'wall s':>7}{'CPU s':>7}{'x hf':>6}"
            f"{'disk':>9}{'peak RSS':>9} | {'open s':>6}{'1st batch':>10}{'batch':>7}"
            f"{'ds[i]':>7}  (us/example, CPU)"
        )
        for mb in args.mb:
            # made in a process of its own: a child's peak RSS counts its parent's memory at
            # the fork (Linux keeps ru_maxrss across exec), so this process stays small
            made = subprocess.run(
                [sys.executable, __file__, "--make", str(root), str(mb)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            rows = int(made.stdout)
            csv_path, parquet = root / f"table{mb}.csv", root / f"table{mb}.parquet"
            for source in (csv_path, parquet):
                for _ in range(2):  # warm the page cache, in small reads (see `warm`)
                    warm(source)
                results = {}
                for tool in tools:
                    tree = args.base if tool == "catalog@base" else ROOT
                    walls, cpus, peaks, disks, reads = [], [], [], [], []
                    for n in range(args.runs):
                        out = root / f"out-{tool}-{n}"
                        out.mkdir()
                        wall, cpu, peak = run(CONTENDERS[tool], source, out, tree)
                        walls.append(wall)
                        cpus.append(cpu)
                        peaks.append(peak)
                        disks.append(disk_usage(out))
                        if tool in READERS:
                            reads.extend(
                                read_back(tool, source, out, tree) for _ in range(args.reads)
                            )
                        subprocess.run(["rm", "-rf", str(out)], check=True)
                    read = (
                        tuple(statistics.median(r) for r in zip(*reads, strict=True))
                        if reads
                        else ()
                    )
                    results[tool] = (
                        statistics.median(walls), statistics.median(cpus), max(peaks),
                        statistics.median(disks), read,
                    )  # fmt: skip
                size = f"{source.suffix[1:]} {source.stat().st_size / 2**20:.0f} MB"
                reference = results.get("hf", next(iter(results.values())))[1]
                for tool, (wall, cpu, peak, disk, read) in results.items():
                    line = (
                        f"{size:<16}{rows:>10}  {tool:<13}{wall:>7.1f}{cpu:>7.1f}"
                        f"{cpu / reference:>6.2f}{disk / 2**20:>6.0f} MB{peak / 2**20:>6.0f} MB"
                    )
                    if read:
                        line += f" | {read[0]:>6.2f}{read[1]:>10.1f}{read[2]:>7.1f}{read[3]:>7.1f}"
                    print(line, flush=True)
            csv_path.unlink()
            parquet.unlink()


if __name__ == "__main__":
    main()
