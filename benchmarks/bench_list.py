"""The CLI starts fast: `--version` and `--help` close to `import catalog`, and `catalog list`
stays instant as the registry grows (it reads the registry's index, never every spec).

    python benchmarks/bench_list.py [--runs 11] [--builders 1000]

Times fresh processes (what a user waits for), each command run in turn with the others so
load on the machine hits all alike, and prints the medians of `--runs` runs:

- ``python -c "import catalog"``; `catalog --version` and `catalog --help` against it
  (target: at most 1.3x);
- ``python -c "import catalog, numpy, yaml"``, the floor of any command that loads a spec;
  `catalog list` over the registered datasets and over `--builders` synthetic builder folders
  (temporary, each a valid builder.yaml + checksums.tsv; one in ten with three configs), with
  the index already written (target: each at most 1.5x that floor, however many builders;
  the synthetic listing's time over the registry's says how flat it stays);
- `catalog list` over the synthetic registry with no index (the first listing after an
  install or an upgrade, which loads every spec once), and `catalog info voc`;
- `catalog info NAME` (``--info``, default mnist: a registered dataset that is not prepared,
  shown from the registry's info index) with the index written (warm, against `catalog list`)
  and with no index (cold: the cache dir removed before each run).

``--root DIR`` times the catalog tree in DIR instead of this checkout (the same script, side
by side with another branch: ``--root /work/main``).

It also prints which heavy modules each command imports. Every command runs once untimed
first, and bytecode caches are written and used (``PYTHONDONTWRITEBYTECODE`` removed), as
for an installed package. The index lives in a temporary cache dir (``XDG_CACHE_HOME``),
never the user's. The process is the CLI's own `main` with
`catalog.spec.registry.registry_file` pointed at the registry file, so it imports and reads
exactly what `python -m catalog list` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = """
import sys
from pathlib import Path
import catalog.spec.registry
catalog.spec.registry.registry_file = lambda: Path(sys.argv[1])
from catalog.cli import main
sys.exit(main(sys.argv[2:]))
"""
#: What the `catalog` console script runs (pip writes it: import main, call it).
CONSOLE = "import sys; from catalog.cli import main; sys.exit(main())"
HEAVY = ("numpy", "array_record", "requests", "PIL", "yaml")
PROBE = """
import sys, runpy
from pathlib import Path
import catalog.spec.registry
registry = Path(sys.argv[1])
catalog.spec.registry.registry_file = lambda: registry
sys.argv = ["catalog", *sys.argv[2:]]
try:
    runpy.run_module("catalog", run_name="__main__")
except SystemExit:
    pass
print(" ".join(m for m in HEAVY if m in sys.modules) or "none", file=sys.stderr)
""".replace("HEAVY", repr(HEAVY))

BUILDER = """\
name: {name}
version: 1.{minor}.0
tags: [tabular, tabular-classification]
description: >
  Synthetic dataset {name} for benchmarks/bench_list.py: four measurements per row and a
  class, read from one CSV file in a zip archive.
homepage: https://example.org/{name}
citation: "@misc{{{name}}}"
features:
  features: {{type: Tensor, shape: [4], dtype: float32}}
  label: {{type: ClassLabel, names: [a, b, c]}}
supervised_keys: [features, label]
downloads:
  archive: {{url: https://example.org/{name}.zip}}
splits:
  train:
    format: delimited
    files: {{file: {{download: archive, member: {name}.csv}}}}
    options:
      header: [m1, m2, m3, m4, species]
      stack: {{features: [m1, m2, m3, m4]}}
      columns: {{label: species}}
    num_examples: {count}
"""
CONFIGS = """\
configs:
  small: {description: the first rows}
  medium: {description: more rows}
  large: {description: every row}
default_config: medium
"""


def synthetic_registry(folder: Path, count: int) -> Path:
    """`count` builder folders (synth_0000, ...) and a registry.yaml naming them."""
    lines = []
    for i in range(count):
        name = f"synth_{i:04d}"
        builder = folder / name
        builder.mkdir()
        text = BUILDER.format(name=name, minor=i % 7, count=100 + i)
        (builder / "builder.yaml").write_text(text + (CONFIGS if i % 10 == 0 else ""))
        (builder / "checksums.tsv").write_text(
            f"https://example.org/{name}.zip\t{1000 + i}\t{i:064x}\t{name}.zip\n"
        )
        lines.append(f"  {name}: {name}")
    path = folder / "registry.yaml"
    path.write_text("datasets:\n" + "\n".join(lines) + "\n")
    return path


def medians_in_turn(commands: dict[str, list[str]], runs: int, env: dict[str, str],
                    before: dict[str, object] | None = None) -> dict[str, float]:  # fmt: skip
    """The median time of each command, run in turn; `before[name]()` runs untimed first."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            if before and name in before:
                before[name]()  # type: ignore[operator]
            start = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True, env=env)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--builders", type=int, default=1000)
    parser.add_argument("--info", default="mnist", help="the dataset of the info rows")
    parser.add_argument("--root", type=Path, default=ROOT, help="the catalog tree to time")
    options = parser.parse_args()
    runs = options.runs
    root = options.root.resolve()
    sys.path.insert(0, str(root))
    from catalog.spec.registry import registry_file

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        # bytecode caches written and used, as an installed package has them
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(root))
        synthetic = synthetic_registry(Path(tmp), options.builders)
        real = registry_file()
        py = sys.executable
        commands = {
            "import catalog": [py, "-c", "import catalog"],
            "catalog --version": [py, "-c", CONSOLE, "--version"],
            "catalog --help": [py, "-c", CONSOLE, "--help"],
            "floor": [py, "-c", "import catalog, numpy, yaml"],
            "list real": [py, "-c", RUN, str(real), "list"],
            "list synthetic": [py, "-c", RUN, str(synthetic), "list"],
            "info warm": [py, "-c", RUN, str(real), "info", options.info],
        }
        medians_in_turn(commands, 1, env)  # writes both indexes and the bytecode caches
        times = medians_in_turn(commands, runs, env)
        cold_env = {**env, "XDG_CACHE_HOME": str(Path(tmp) / "cold")}
        cold = medians_in_turn(
            {
                "list synthetic, no index": [py, "-c", RUN, str(synthetic), "list"],
                "info voc": [py, "-c", RUN, str(real), "info", "voc"],
                "info cold": [py, "-c", RUN, str(real), "info", options.info],
            },
            max(1, min(runs, 3)),
            cold_env,
            before={name: lambda: shutil.rmtree(cold_env["XDG_CACHE_HOME"], ignore_errors=True)
                    for name in ("list synthetic, no index", "info cold")},
        )  # fmt: skip
        heavy = {}
        for registry, args in (
            (real, ["--version"]),
            (real, ["--help"]),
            (real, ["list"]),
            (synthetic, ["list"]),
            (real, ["info", "voc"]),
        ):
            label = " ".join(args) + (f" ({options.builders} builders)" if registry == synthetic
                                      else "")  # fmt: skip
            done = subprocess.run([py, "-c", PROBE, str(registry), *args], capture_output=True,
                                  text=True, env=env)  # fmt: skip
            heavy[label] = done.stderr.strip().splitlines()[-1]
        lines = len(
            subprocess.run([py, "-c", RUN, str(synthetic), "list"], check=True,
                           capture_output=True, text=True, env=env).stdout.splitlines()
        )  # fmt: skip
        real_lines = len(
            subprocess.run([py, "-c", RUN, str(real), "list"], check=True,
                           capture_output=True, text=True, env=env).stdout.splitlines()
        )  # fmt: skip

    def ms(name: str, source: dict[str, float] = times) -> str:
        return f"{source[name] * 1000:7.0f} ms"

    def verdict(ratio: float, target: float) -> str:
        return f"{ratio:.2f}x (target <= {target}x: {'OK' if ratio <= target else 'MISSED'})"

    base, floor = times["import catalog"], times["floor"]
    print(f"median of {runs} fresh processes per line, commands run in turn")
    print(f'python -c "import catalog"                   {ms("import catalog")}')
    for name in ("catalog --version", "catalog --help"):
        print(f"{name:<44} {ms(name)}  {verdict(times[name] / base, 1.3)} import catalog")
    print(f'python -c "import catalog, numpy, yaml"      {ms("floor")}')
    label = f"catalog list, registry ({real_lines} lines)"
    print(f"{label:<44} {ms('list real')}  {verdict(times['list real'] / floor, 1.5)} the floor")
    label = f"catalog list, {options.builders} builders ({lines} lines)"
    ratio = times["list synthetic"] / floor
    growth = times["list synthetic"] / times["list real"]
    print(f"{label:<44} {ms('list synthetic')}  {verdict(ratio, 1.5)} the floor, "
          f"{growth:.2f}x the registry's listing")  # fmt: skip
    label = f"catalog list, {options.builders} builders, no index"
    print(f"{label:<44} {ms('list synthetic, no index', cold)}  (loads every spec once)")
    print(f"{'catalog info voc':<44} {ms('info voc', cold)}")
    label = f"catalog info {options.info}, index warm"
    ratio = times["info warm"] / times["list real"]
    print(f"{label:<44} {ms('info warm')}  {ratio:.2f}x catalog list (registry)")
    label = f"catalog info {options.info}, no index"
    print(f"{label:<44} {ms('info cold', cold)}  (the cache dir removed before each run)")
    for args, modules in heavy.items():
        print(f"heavy modules imported by catalog {args}: {modules}")


if __name__ == "__main__":
    main()
