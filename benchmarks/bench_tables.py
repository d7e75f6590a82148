"""Preparing a large CSV and a large Parquet file, against pandas and pyarrow reading them and
writing the same rows: wall time and peak RSS, side by side.

    python benchmarks/bench_tables.py [--mb 1024 256] [--runs 1]

For each size (MB of CSV text), one CSV file of four columns (int64 id, float64 x, a boolean,
a text of 20-40 characters) is generated, and a Parquet file of the same rows (pyarrow, 64k-row
groups). Each contender runs in a fresh process (so its peak RSS is its own, read from the
kernel by ``wait4``, as are its wall and CPU seconds) on a warm page cache:

- ``catalog``: ``catalog.prepare_files(path)``: infer the spec (one pass over every row: types,
  counts; the file's sha256), then prepare (read, check, encode, write ArrayRecord shards).
- ``pandas``: ``pandas.read_csv`` / ``read_parquet``, then ``DataFrame.to_parquet`` of the rows.
- ``pyarrow``: ``pyarrow.csv.read_csv`` / ``parquet.read_table``, then
  ``parquet.write_table``.
- ``pandas>AR``, ``pyarrow>AR``: the same reads, then the same rows into the container
  catalog writes: one ArrayRecord record per row, catalog's writer options
  (``group_size:1,uncompressed``), each row a pickled tuple (what a script doing the job
  with pandas or pyarrow would write; untyped, unchecked).

The Parquet contenders write a columnar file (one call for all rows); catalog and the ``>AR``
contenders write one randomly addressable record per row, whose writer costs about 3 us a
record here (``ArrayRecordWriter.write``, measured with cProfile): that is most of the gap
between catalog and ``pandas``.

pandas and pyarrow hold the whole table in memory (their peak grows with the file); catalog
reads a batch of rows at a time (pyarrow's streaming CSV reader, Parquet row groups; the scan
for types likewise), checks and encodes each batch column by column
(`catalog.formats.table_batches`, `catalog.features.batch_encode`) and writes shards of at
most 1 GiB and 2^20 examples (ArrayRecord's writer keeps ~80 bytes per record until a shard
is closed): its peak stays flat as the file grows. Give two sizes to see both. Medians of
``--runs`` runs.
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

CONTENDERS = {
    "catalog": (
        "import catalog, sys; catalog.prepare_files(sys.argv[1], 'bench', data_dir=sys.argv[2])"
    ),
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


def run(code: str, source: Path, out: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, every thread) and peak RSS (bytes) of `code`
    in a fresh process. On a shared machine the CPU seconds are the steadier measure."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    command = [sys.executable, "-c", code, str(source), str(out)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{code!r} failed on {source} (exit {process.returncode})")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, nargs="+", default=[1024], help="CSV sizes in MB")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--tools", nargs="+", choices=list(CONTENDERS), default=list(CONTENDERS),
        help="contenders to run (pandas and pandas>AR always run: the ratios are to them)",
    )  # fmt: skip
    parser.add_argument("--make", nargs=2, help=argparse.SUPPRESS)  # (folder, MB): the files
    args = parser.parse_args()
    if args.make:
        print(make_files(Path(args.make[0]), int(args.make[1]))[2])
        return
    with tempfile.TemporaryDirectory(prefix="bench_tables") as tmp:
        root = Path(tmp)
        print(
            f"{'file':<16}{'rows':>10}  {'tool':<11}{'wall s':>8}{'CPU s':>8}{'CPU x pandas':>14}"
            f"{'x pandas>AR':>13}"
            f"{'peak RSS':>10}"
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
                chosen = {*args.tools, "pandas", "pandas>AR"}
                for tool, code in CONTENDERS.items():
                    if tool not in chosen:
                        continue
                    walls, cpus, peaks = [], [], []
                    for n in range(args.runs):
                        out = root / f"out-{tool}-{n}"
                        out.mkdir()
                        wall, cpu, peak = run(code, source, out)
                        walls.append(wall)
                        cpus.append(cpu)
                        peaks.append(peak)
                        subprocess.run(["rm", "-rf", str(out)], check=True)
                    results[tool] = (statistics.median(walls), statistics.median(cpus), max(peaks))
                size = f"{source.suffix[1:]} {source.stat().st_size / 2**20:.0f} MB"
                for tool, (wall, cpu, peak) in results.items():
                    ratio = cpu / results["pandas"][1]
                    ratio_ar = cpu / results["pandas>AR"][1]
                    print(
                        f"{size:<16}{rows:>10}  {tool:<11}{wall:>8.1f}{cpu:>8.1f}{ratio:>14.2f}"
                        f"{ratio_ar:>13.2f}"
                        f"{peak / 2**20:>7.0f} MB",
                        flush=True,
                    )
            csv_path.unlink()
            parquet.unlink()


if __name__ == "__main__":
    main()
