"""Prepare and read Parquet files of list columns, as the Hub's NLP datasets have them, against
Hugging Face datasets: side by side in one run.

Two files of ``--rows`` rows each, 5-34 elements a row: ``ids`` (``input_ids``: a list of
int32, beside an int64 id and a short text) and ``ner`` (``tokens``: a list of strings, and
``ner_tags``: a list of int64). ``--layout nested``: one file, ``squad``, as Hugging Face writes
nested features: an id, a question, ``answers`` (``Sequence({"text", "answer_start"})``: a
struct of lists, 0-3 answers), ``meta`` (a dict: a struct of a text and a float) and
``objects`` (``List({"bbox": Sequence(float32, length=4), "label"})``: a list of structs).
``--layout jsonl``: the ``squad`` rows and flat rows (an id, a text, a float, a boolean) as
JSON Lines (``load_dataset("json")`` for HF). ``--base TREE`` adds ``catalog@base``, the
catalog of another tree (a worktree of an older commit): a before/after side by side.
Each contender prepares each file in a fresh process (`bench_tables.CONTENDERS`:
``catalog.prepare_files`` and ``datasets.load_dataset("parquet")`` into a fresh cache; CPU
seconds of the whole process, every thread, and its peak RSS), then a fresh process opens the
result and reads (`bench_tables.read_back`: the open, the first batch of 128 random rows, the
median batch, ``ds[i]``, in CPU us per example). Medians of ``--runs``.

    python benchmarks/bench_lists.py --rows 200000 --runs 3
    python benchmarks/bench_lists.py --layout nested --rows 100000 --runs 3
    python benchmarks/bench_lists.py --layout jsonl --rows 100000 --runs 3 --base /tmp/perf-base
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

import bench_tables
from bench_tables import CONTENDERS, ROOT, disk_usage, read_back, run, warm


def make_files(root: Path, rows: int) -> list[Path]:
    """The two Parquet files (see the module docstring), made with a fixed seed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(5, 35, rows))]).astype(np.int32)
    total = int(offsets[-1])
    starts = pa.array(offsets)
    ids = pa.ListArray.from_arrays(starts, pa.array(rng.integers(0, 30_000, total, np.int32)))
    words = ["the", "of", "Paris", "naïve", "EU", "rejects", "German", "call", "to", "boycott"]
    tokens = pa.ListArray.from_arrays(
        starts, pa.array([words[i] for i in rng.integers(0, len(words), total)], pa.string())
    )
    tags = pa.ListArray.from_arrays(starts, pa.array(rng.integers(0, 9, total), pa.int64()))
    made = [root / "ids.parquet", root / "ner.parquet"]
    text = pa.array([f"sentence {i}" for i in range(rows)], pa.string())
    pq.write_table(pa.table({"id": np.arange(rows), "text": text, "input_ids": ids}), made[0])
    pq.write_table(pa.table({"id": np.arange(rows), "tokens": tokens, "ner_tags": tags}), made[1])
    return made


def make_nested(root: Path, rows: int) -> list[Path]:
    """The ``squad`` file of ``--layout nested`` (see the module docstring), fixed seed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, rows)
    starts = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    total = int(counts.sum())
    texts = pa.array([f"answer {i}" for i in range(total)], pa.string())
    answers = pa.StructArray.from_arrays(
        [pa.ListArray.from_arrays(starts, texts),
         pa.ListArray.from_arrays(starts, pa.array(rng.integers(0, 500, total, np.int32)))],
        ["text", "answer_start"],
    )  # fmt: skip
    meta = pa.StructArray.from_arrays(
        [pa.array(np.array(["wiki", "web", "news"])[np.arange(rows) % 3]),
         pa.array(rng.random(rows))],
        ["source", "score"],
    )  # fmt: skip
    boxes = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(4 * total, np.float32)), 4)
    labels = pa.array(rng.integers(0, 80, total))
    objects = pa.ListArray.from_arrays(
        starts, pa.StructArray.from_arrays([boxes, labels], ["bbox", "label"])
    )
    question = pa.array([f"what is {i} about?" for i in range(rows)], pa.string())
    table = pa.table(
        {"id": np.arange(rows), "question": question, "answers": answers, "meta": meta,
         "objects": objects}
    )  # fmt: skip
    made = root / "squad.parquet"
    pq.write_table(table, made)
    return [made]


def make_jsonl(root: Path, rows: int) -> list[Path]:
    """The files of ``--layout jsonl`` (see the module docstring), fixed seed."""
    import json

    import pyarrow.parquet as pq

    made = [root / "flat.jsonl", root / "squad.jsonl"]
    squad = pq.read_table(make_nested(root, rows)[0]).to_pylist()
    with open(made[1], "w") as f:
        f.writelines(json.dumps(row) + "\n" for row in squad)
    with open(made[0], "w") as f:
        f.writelines(
            json.dumps({"id": i, "text": f"some text {i}", "score": i / 7, "ok": i % 2 == 0}) + "\n"
            for i in range(3 * rows)
        )
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layout", choices=("lists", "nested", "jsonl"), default="lists")
    parser.add_argument("--base", type=Path, help="a tree of another catalog (catalog@base)")
    args = parser.parse_args()
    make = {"lists": make_files, "nested": make_nested, "jsonl": make_jsonl}[args.layout]
    tools = ("catalog", "catalog@base", "hf") if args.base else ("catalog", "hf")
    with tempfile.TemporaryDirectory(prefix="bench_lists") as tmp:
        root = Path(tmp)
        bench_tables.PYCACHE = root / "pycache"  # compiled once, as an installed package is
        print(
            f"{'file':<12}{'tool':<9}{'CPU s':>7}{'x hf':>6}{'disk':>9}{'peak RSS':>10} | "
            f"{'open s':>6}{'1st batch':>10}{'batch':>7}{'ds[i]':>7}  (us/example, CPU)"
        )
        for source in make(root, args.rows):
            warm(source)
            results = {}
            for tool in tools:
                tree = args.base if tool == "catalog@base" else ROOT
                cpus, peaks, disks, reads = [], [], [], []
                for n in range(args.runs + 1):  # the first: compiles, untimed
                    out = root / f"out-{tool}-{n}"
                    out.mkdir()
                    try:
                        _, cpu, peak = run(CONTENDERS[tool], source, out, tree, quiet=True)
                    except SystemExit:  # an older catalog refuses the file (said below)
                        break
                    if n:
                        cpus.append(cpu)
                        peaks.append(peak)
                        disks.append(disk_usage(out))
                        reads.append(read_back(tool, source, out, tree))
                    subprocess.run(["rm", "-rf", str(out)], check=True)
                if not cpus:
                    print(f"{source.stem:<12}{tool:<9} refuses this file", flush=True)
                    continue
                read = tuple(statistics.median(r) for r in zip(*reads, strict=True))
                results[tool] = (statistics.median(cpus), max(peaks), statistics.median(disks))
                results[tool] += read
            reference = results["hf"][0]
            for tool, (cpu, peak, disk, *read) in results.items():
                print(
                    f"{source.stem:<12}{tool:<9}{cpu:>7.2f}{cpu / reference:>6.2f}"
                    f"{disk / 2**20:>6.0f} MB{peak / 2**20:>7.0f} MB | {read[0]:>6.2f}"
                    f"{read[1]:>10.1f}{read[2]:>7.1f}{read[3]:>7.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
