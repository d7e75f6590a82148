"""`catalog list` and `catalog info` stay instant as the catalog grows.

    python benchmarks/bench_list.py [--runs 11]

Times `catalog list` as a fresh process (what a user waits for) over two registries: the
nine datasets of the first catalog (binarized_mnist ... tf_flowers) and every registered
dataset, and `catalog info voc` once. Each line is the median of `--runs` runs. Target: the
whole catalog lists in at most 1.5x the time of the nine. The registries are temporary
files naming the real builder folders; the process is the CLI's own `main` with
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
    version = median_seconds([sys.executable, "-m", "catalog", "--version"], runs)
    configs = sum(max(1, len(catalog.builder(n).spec.configs)) for n in every)
    ratio = whole / nine
    verdict = "OK" if ratio <= 1.5 else "MISSED"
    print(f"python -m catalog --version      {version * 1000:7.0f} ms  (startup alone)")
    print(f"catalog list, {len(FIRST_NINE)} datasets         {nine * 1000:7.0f} ms")
    print(f"catalog list, {len(every)} datasets ({configs} lines)  {whole * 1000:5.0f} ms  "
          f"{ratio:.2f}x the nine (target <= 1.5x: {verdict})")  # fmt: skip
    print(f"catalog info voc                 {info * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
