"""`catalog info tfds:NAME` for every name TFDS registers, and `catalog list --tfds`.

    python benchmarks/bench_tfds_info.py [--runs 3] [--names all|N] [--base DIR]

Times fresh processes (what a user waits for): ``python -m catalog info tfds:NAME`` for every
name tensorflow-datasets registers (``--names N``: every N-th name only), `--runs` times
each, and prints per name the median wall time and the median CPU time (user + system of the
child: on a shared machine the wall time also holds the waits for a core), then the median
and the maximum over all names, the slowest names, and the names whose `info` failed (exit
status and the error's line: a builder that needs a library, a name TFDS serves prepared only).
Then ``catalog list --tfds`` (warm: its index written by a first, untimed listing) and the same
listing cold (the cache dir emptied before each run).

``--base DIR`` runs the same commands with the catalog tree in DIR too (main's checkout, say
``/tmp/base-now``), each name's runs taken in turn with ours so that load hits both alike, and
prints the two side by side (on every ``--base-every``-th name of the ones timed: a sample).

Each tree's index files live in a temporary cache dir (``XDG_CACHE_HOME``), written by one
untimed run first, as they are after the first command a user runs; the data dir is an empty
temporary folder (nothing prepared: `info` shows what TFDS declares). Bytecode caches are
written and used (``PYTHONDONTWRITEBYTECODE`` removed, ``PYTHONPYCACHEPREFIX`` a temporary
folder), as for an installed package. Needs tensorflow-datasets (``catalog[tfds]``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = """
import logging
from catalog.formats.tfds.runtime import import_tfds
import_tfds()
from tensorflow_datasets.core import registered
logging.getLogger("absl").setLevel(logging.ERROR)
print("\\n".join(registered.list_imported_builders()))
"""


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the child, exit status, last line of stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stderr.strip().splitlines()
    return wall, cpu, done.returncode, lines[-1][:150] if lines else ""


def environment(root: Path, tmp: Path, label: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPATH=str(root),
        PYTHONPYCACHEPREFIX=str(tmp / f"pyc-{label}"),
        XDG_CACHE_HOME=str(tmp / f"cache-{label}"),
        CATALOG_DATA_DIR=str(tmp / f"data-{label}"),
    )
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--names", default="all", help="all, or N: every N-th name")
    parser.add_argument("--root", type=Path, default=ROOT, help="the catalog tree to time")
    parser.add_argument("--base", type=Path, help="another catalog tree, side by side")
    parser.add_argument("--base-every", type=int, default=10)
    parser.add_argument("--list-runs", type=int, default=5)
    options = parser.parse_args()
    py = sys.executable
    trees = {"ours": options.root.resolve()}
    if options.base is not None:
        trees["base"] = options.base.resolve()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        envs = {label: environment(root, tmp, label) for label, root in trees.items()}
        names = subprocess.run(
            [py, "-c", NAMES], env=envs["ours"], cwd=trees["ours"], check=True,
            capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        step = 1 if options.names == "all" else int(options.names)
        names = names[::step]
        for label, root in trees.items():  # the index files and bytecode, written untimed
            timed([py, "-m", "catalog", "info", "tfds:mnist"], envs[label], root)
        results: dict[str, dict[str, list[tuple[float, float]]]] = {t: {} for t in trees}
        failed: dict[str, tuple[int, str]] = {}
        for i, name in enumerate(names):
            sides = list(trees) if i % options.base_every == 0 else ["ours"]
            for _ in range(options.runs):
                for label in sides:
                    args = [py, "-m", "catalog", "info", f"tfds:{name}"]
                    wall, cpu, status, line = timed(args, envs[label], trees[label])
                    results[label].setdefault(name, []).append((wall, cpu))
                    if status != 0 and label == "ours":
                        failed[name] = (status, line)
        report(results, failed, names)
        lists = {}
        for label, root in trees.items():
            args = [py, "-m", "catalog", "list", "--tfds"]
            timed(args, envs[label], root)  # the index, written
            warm = [timed(args, envs[label], root)[:2] for _ in range(options.list_runs)]
            cold = []
            for _ in range(max(1, min(options.list_runs, 2))):
                shutil.rmtree(envs[label]["XDG_CACHE_HOME"], ignore_errors=True)
                cold.append(timed(args, envs[label], root)[:2])
            lists[label] = (warm, cold)
        print("\ncatalog list --tfds (median wall / CPU seconds)")
        for label, (warm, cold) in lists.items():
            print(f"  {label:5} warm {med(warm, 0):.2f} / {med(warm, 1):.2f}"
                  f"   cold {med(cold, 0):.2f} / {med(cold, 1):.2f}")  # fmt: skip


def med(runs: list[tuple[float, float]], which: int) -> float:
    return statistics.median(r[which] for r in runs)


def report(
    results: dict[str, dict[str, list[tuple[float, float]]]],
    failed: dict[str, tuple[int, str]],
    names: list[str],
) -> None:
    ours = results["ours"]
    walls = {n: med(r, 0) for n, r in ours.items()}
    cpus = {n: med(r, 1) for n, r in ours.items()}
    print(f"catalog info tfds:NAME, {len(names)} names, median of runs per name (seconds)")
    print(
        f"  wall: median {statistics.median(walls.values()):.2f}, max {max(walls.values()):.2f}"
        f" ({max(walls, key=walls.__getitem__)}); over 1 s: {sum(w > 1 for w in walls.values())}"
    )
    print(
        f"  CPU:  median {statistics.median(cpus.values()):.2f}, max {max(cpus.values()):.2f}"
        f" ({max(cpus, key=cpus.__getitem__)}); over 1 s: {sum(c > 1 for c in cpus.values())}"
    )
    slow = sorted(cpus, key=cpus.__getitem__, reverse=True)[:10]
    print("  slowest by CPU: " + ", ".join(f"{n} {cpus[n]:.2f}" for n in slow))
    ok = [n for n in names if n not in failed]
    print(f"  info succeeded for {len(ok)}, failed (one line, exit status) for {len(failed)}:")
    for name, (status, line) in sorted(failed.items()):
        print(f"    {name}: exit {status}: {line}")
    if "base" in results:
        base = results["base"]
        print("\nside by side (median wall / CPU seconds): name, ours, base")
        both = [n for n in base if n in ours]
        for name in both:
            print(f"  {name:40} {med(ours[name], 0):5.2f} / {med(ours[name], 1):4.2f}"
                  f"   {med(base[name], 0):5.2f} / {med(base[name], 1):4.2f}")  # fmt: skip
        for which, label in ((0, "wall"), (1, "CPU")):
            o = statistics.median(med(ours[n], which) for n in both)
            b = statistics.median(med(base[n], which) for n in both)
            print(f"  median {label} over these {len(both)}: ours {o:.2f}, base {b:.2f}")


if __name__ == "__main__":
    main()
