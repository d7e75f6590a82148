"""Prepare each kind of own file the guide names with what the base install has.

``python tests/base_install_check.py`` writes a CSV, a TSV, a ``;`` CSV, a JSON Lines file,
a JSON array of records (objects inside), an image folder and a WAV folder into a temporary
folder, prepares each with ``python -m catalog prepare`` (a subprocess, as a user runs it),
reads it back with `catalog.data_source` and compares the values; a Parquet file must fail
with the one line naming its extra. It exits 1 naming every case that failed.

CI runs it in a venv made with ``python -m pip install -e .`` (no extras: no pyarrow, no
pandas). ``--without pyarrow,pandas`` simulates their absence in an installed tree (this
process and every child refuse to import them), which `tests/test_base_install.py` uses.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

#: A sys.meta_path finder refusing the modules named in CATALOG_CHECK_WITHOUT, as if they were
#: not installed; written as a sitecustomize.py so that every child process has it too.
_BLOCKER = """
import importlib.abc, os, sys

_WITHOUT = frozenset(os.environ.get("CATALOG_CHECK_WITHOUT", "").split(",")) - {""}


class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _WITHOUT:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
"""


def _write_files(root: Path) -> dict[str, tuple[Path, int]]:
    """The files of each kind: name -> (path, the number of examples it holds)."""
    import numpy as np
    from PIL import Image

    (root / "people.csv").write_text("name,age,height\nada,36,1.65\nalan,41,1.75\ngrace,85,\n")
    (root / "people.tsv").write_text("name\tage\nada\t36\nalan\t41\n")
    (root / "semicolon.csv").write_text("name;score\nada;1,5\nalan;2\n")
    (root / "events.jsonl").write_text('{"kind": "a", "n": 1}\n{"kind": "b", "n": 2.5}\n')
    records = '[{"kind": "a", "at": {"x": 1}}, {"kind": "b", "at": {"x": 2}}]'
    (root / "records.json").write_text(records)
    for label in ("cat", "dog"):
        (root / "photos" / label).mkdir(parents=True)
        (root / "speech" / label).mkdir(parents=True)
        for i in range(2):
            pixels = np.full((5, 4, 3), 40 * i, np.uint8)
            Image.fromarray(pixels).save(root / "photos" / label / f"{i}.png")
            with wave.open(str(root / "speech" / label / f"{i}.wav"), "wb") as sound:
                sound.setnchannels(1)
                sound.setsampwidth(2)
                sound.setframerate(8000)
                sound.writeframes(np.arange(80, dtype="<i2").tobytes())
    return {
        "people_csv": (root / "people.csv", 3),
        "people_tsv": (root / "people.tsv", 2),
        "semicolon": (root / "semicolon.csv", 2),
        "events": (root / "events.jsonl", 2),
        "records": (root / "records.json", 2),
        "photos": (root / "photos", 4),
        "speech": (root / "speech", 4),
    }


def _expected(name: str, example: dict[str, object]) -> str | None:
    """What is wrong with the first example of `name` (None: nothing)."""
    want = {
        "people_csv": {"name": b"ada", "age": 36, "height": 1.65},
        "people_tsv": {"name": b"ada", "age": 36},
        "semicolon": {"name": b"ada", "score": b"1,5"},
        "events": {"kind": b"a", "n": 1.0},
        "records": {"kind": b"a", "at": {"x": 1}},
    }.get(name)
    if want is None:
        key = "image" if name == "photos" else "audio"
        return None if key in example and "label" in example else f"no {key}/label: {example}"
    got = {k: v.item() if hasattr(v, "item") else v for k, v in example.items()}
    got = {k: v.encode() if isinstance(v, str) else v for k, v in got.items()}
    return None if got == want else f"first example {got}, expected {want}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--without", default="", help="modules to refuse, e.g. pyarrow,pandas")
    parser.add_argument(
        "--absent", default="", help="modules that must not be installed (the base venv's check)"
    )
    args = parser.parse_args(argv)
    present = [m for m in args.absent.split(",") if m and _has(m)]
    if present:
        print(f"FAILED: {', '.join(present)} installed; this check needs them absent")
        return 1
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="catalog-base-") as tmp:
        root = Path(tmp)
        if args.without:
            (root / "site").mkdir()
            (root / "site" / "sitecustomize.py").write_text(_BLOCKER)
            env["CATALOG_CHECK_WITHOUT"] = args.without
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(root / "site"), env.get("PYTHONPATH")) if p
            )
            os.environ.update(CATALOG_CHECK_WITHOUT=args.without)
            exec(compile(_BLOCKER, "blocker", "exec"), {})  # this process too
        data_dir = root / "data"
        failures = []
        for name, (path, count) in _write_files(root).items():
            command = [sys.executable, "-m", "catalog", "prepare", str(path), "--name", name]
            run = subprocess.run(
                [*command, "--data-dir", str(data_dir)],
                capture_output=True, text=True, env=env, timeout=300,
            )  # fmt: skip
            if run.returncode != 0:
                failures.append(f"{name}: exit {run.returncode}: {run.stderr.strip()[-2000:]}")
                continue
            problem = _read_back(name, data_dir, count)
            print(f"{name}: {'prepared and read back' if problem is None else problem}")
            if problem is not None:
                failures.append(f"{name}: {problem}")
        (root / "table.parquet").write_bytes(b"PAR1")
        if not _has("pyarrow"):  # one line naming the extra
            run = subprocess.run(
                [sys.executable, "-m", "catalog", "prepare", str(root / "table.parquet"),
                 "--data-dir", str(data_dir)],
                capture_output=True, text=True, env=env, timeout=300,
            )  # fmt: skip
            lines = run.stderr.strip().splitlines()
            if run.returncode == 0 or len(lines) != 1 or "catalog[parquet]" not in lines[0]:
                failures.append(f"parquet: expected one line naming the extra, got {lines}")
            else:
                print(f"parquet without pyarrow: {lines[0]}")
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _read_back(name: str, data_dir: Path, count: int) -> str | None:
    import catalog

    source = catalog.data_source(name, split="train", data_dir=str(data_dir))
    if len(source) != count:
        return f"{len(source)} examples read back, expected {count}"
    return _expected(name, source[0])


if __name__ == "__main__":
    sys.exit(main())
