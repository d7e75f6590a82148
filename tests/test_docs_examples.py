"""Every Python example of the documentation runs: the ```python blocks of README.md and of
every page of docs/, page by page, in order, in one fresh interpreter per page (a page's
blocks build on each other, as a reader runs them).

They run offline against stand-ins of the datasets they name, prepared through the real
path from the 50 real Fashion-MNIST test images in tests/data/ (see tests/docs_data.py), in a
home directory of their own (``~/datasets`` is the data dir, ``~/tensorflow_datasets/mnist``
a TFDS directory), with a
``photos/`` folder in the working directory. A block that cannot run here says why on the
line above it: ``<!-- not run: REASON -->``; those are counted apart and need a reason.

Shell blocks are mostly synopses (placeholders, buckets, downloads); the ones marked
``<!-- run -->`` on the line above (the tours of `catalog` commands) run too, line by line
in bash, stopping at the first failing command, in the same environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import docs_data

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.M | re.S)
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\s*$")
SHELL = re.compile(r"^<!-- run -->\n```sh\n(.*?)^```", flags=re.M | re.S)

#: Runs the blocks given on stdin (JSON: [label, source]) in one namespace, as a script does.
DRIVER = """
import json, sys
namespace = {"__name__": "__main__"}
for label, source in json.load(sys.stdin):
    exec(compile(source, label, "exec"), namespace)
print("ran", flush=True)
"""


def blocks(page: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(blocks to run, blocks not run with their reasons) of `page`, each labelled
    ``page:line`` (the line of the opening fence)."""
    text = page.read_text("utf-8")
    run, skipped = [], []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        label = f"{page.relative_to(ROOT)}:{line}"
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        reason = NOT_RUN.search(before)
        if reason:
            skipped.append((label, reason.group(1)))
        else:
            # Padded with blank lines so tracebacks give the line in the page itself.
            run.append((label, "\n" * line + match.group(1)))
    return run, skipped


def shell_blocks(page: Path) -> list[tuple[str, str]]:
    """The shell blocks of `page` marked to run, labelled ``page:line``."""
    text = page.read_text("utf-8")
    return [
        (f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 2}", m.group(1))
        for m in SHELL.finditer(text)
    ]


def environment(work: Path) -> tuple[dict[str, str], Path]:
    """(environment, working directory) the examples run in, the data prepared."""
    home = work / "home"
    data_dir = docs_data.make(work)
    bin_dir = work / "bin"  # `catalog` is this interpreter's, whatever is on PATH
    bin_dir.mkdir()
    (bin_dir / "catalog").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m catalog "$@"\n')
    (bin_dir / "catalog").chmod(0o755)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "CATALOG_DATA_DIR": str(data_dir),
        "CATALOG_OFFLINE": "1",
        "XDG_CACHE_HOME": str(work / "cache"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cwd = work / "cwd"
    docs_data.photos_folder(cwd / "photos")
    docs_data.tfds_mnist(work / "mnist", home / "tensorflow_datasets")
    return env, cwd


def test_every_python_example_of_the_docs_runs(tmp_path: Path) -> None:
    env, cwd = environment(tmp_path)
    executed, failures, reasons = 0, [], []
    seen: set[tuple[str, ...]] = set()
    for page in PAGES:
        run, skipped = blocks(page)
        reasons += skipped
        # docs/index.md repeats the README's examples: each distinct page of examples runs once.
        key = tuple(s.lstrip("\n") for _, s in run + shell_blocks(page))
        if key in seen:
            continue
        seen.add(key)
        for label, script in shell_blocks(page):
            result = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script], env=env, cwd=cwd,
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            if result.returncode != 0:
                failures.append(f"{label}:\n{result.stderr[-3000:]}")
            else:
                executed += 1
        if not run:
            continue
        result = subprocess.run(
            [sys.executable, "-c", DRIVER], input=json.dumps(run), env=env, cwd=cwd,
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if result.returncode != 0 or result.stdout.splitlines()[-1:] != ["ran"]:
            failures.append(f"{page.relative_to(ROOT)}:\n{result.stderr[-3000:]}")
        else:
            executed += len(run)
    assert not failures, "\n\n".join(failures)
    # The docs have examples to run, and a block is left out only for a stated reason.
    assert executed >= 15, executed
    assert all(reason.strip() for _, reason in reasons), reasons
    assert len(reasons) <= executed // 4, f"too many examples not run: {reasons}"
