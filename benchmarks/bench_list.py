"""The CLI starts fast: `--version` and `--help` as fast as `import catalog`, and `catalog list`
and `catalog info` stay instant as the catalog grows.

    python benchmarks/bench_list.py [--runs 11]

Times fresh processes (what a user waits for): `python -c "import catalog"`, `catalog
--version` and `catalog --help`, run in turn (target: each at most 1.3x `import catalog`);
then `catalog list` over two registries: the nine datasets of the first catalog
(binarized_mnist ... tf_flowers) and every registered dataset, and `catalog info voc` once.
Each line is the median of `--runs` runs. Target: the whole catalog lists in at most 1.5x the
time of the nine. It also prints which heavy modules each command imports. The registries are
temporary files naming the real builder folders; the process is the CLI's own `main` with
`catalog.spec.registry.registry_file` pointed at one of them, so it imports and parses exactly
what `python -m catalog list` does.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_NINE = ["binarized_mnist", "cifar10", "cifar100", "cmaterdb", "fashion_mnist", "kmnist",
              "mnist", "svhn_cropped", "tf_flowers"]  # fmt: skip
RUN = """
import sys
from pathlib import Path
import catalog.spec.registry
catalog.spec.registry.registry_file = lambda: Path(sys.argv[1])
from catalog.cli import main
sys.exit(main(sys.argv[2:]))
"""


def median_seconds(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def medians_in_turn(commands: dict[str, list[str]], runs: int) -> dict[str, float]:
    """The median time of each command, run in turn (so load on the machine hits all alike)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            start = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


#: What the `catalog` console script runs (pip writes it: import main, call it).
CONSOLE = "import sys; from catalog.cli import main; sys.exit(main())"
HEAVY = ("numpy", "array_record", "requests", "PIL", "yaml")
PROBE = """
import sys, runpy
sys.argv = ["catalog", *sys.argv[1:]]
try:
    runpy.run_module("catalog", run_name="__main__")
except SystemExit:
    pass
print(" ".join(m for m in HEAVY if m in sys.modules), file=sys.stderr)
""".replace("HEAVY", repr(HEAVY))


def heavy_imports(args: list[str]) -> str:
    """The heavy modules `catalog ARGS` imports."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True)
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "none"


def registry(folder: Path, names: list[str]) -> Path:
    path = folder / f"registry-{len(names)}.yaml"
    lines = [f"  {name}: {ROOT / 'builders' / name}" for name in names]
    path.write_text("datasets:\n" + "\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    runs = parser.parse_args().runs
    sys.path.insert(0, str(ROOT))
    import catalog

    every = catalog.list_datasets()
    with tempfile.TemporaryDirectory() as tmp:
        small, full = registry(Path(tmp), FIRST_NINE), registry(Path(tmp), every)
        base = [sys.executable, "-c", RUN]
        nine = median_seconds([*base, str(small), "list"], runs)
        whole = median_seconds([*base, str(full), "list"], runs)
        info = median_seconds([*base, str(full), "info", "voc"], runs)
    start = medians_in_turn(
        {
            "import catalog": [sys.executable, "-c", "import catalog"],
            "catalog --version": [sys.executable, "-c", CONSOLE, "--version"],
            "catalog --help": [sys.executable, "-c", CONSOLE, "--help"],
        },
        runs,
    )
    configs = sum(max(1, len(catalog.builder(n).spec.configs)) for n in every)
    ratio = whole / nine
    verdict = "OK" if ratio <= 1.5 else "MISSED"
    base_time = start["import catalog"]
    print(f'python -c "import catalog"       {base_time * 1000:7.0f} ms')
    for name in ("catalog --version", "catalog --help"):
        r = start[name] / base_time
        print(f"{name:<32} {start[name] * 1000:7.0f} ms  {r:.2f}x import catalog "
              f"(target <= 1.3x: {'OK' if r <= 1.3 else 'MISSED'})")  # fmt: skip
    print(f"catalog list, {len(FIRST_NINE)} datasets         {nine * 1000:7.0f} ms")
    print(f"catalog list, {len(every)} datasets ({configs} lines)  {whole * 1000:5.0f} ms  "
          f"{ratio:.2f}x the nine (target <= 1.5x: {verdict})")  # fmt: skip
    print(f"catalog info voc                 {info * 1000:7.0f} ms")
    for args in (["--version"], ["--help"], ["list"], ["info", "voc"]):
        print(f"heavy modules imported by catalog {' '.join(args)}: {heavy_imports(args)}")


if __name__ == "__main__":
    main()
