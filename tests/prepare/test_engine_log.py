"""catalog.prepare.engine_log: what an engine (Beam) writes itself, from its threads' logging
and its worker processes' stderr, goes to a log file, while catalog's own messages on
sys.stderr still reach the terminal; descriptor 2 is restored afterwards. (The Beam runs
themselves: tests/prepare/test_dying_workers.py, in the Beam venv.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """\
import logging, subprocess, sys
from pathlib import Path
from catalog.prepare.engine_log import to_log_file

logging.basicConfig()  # a handler bound to the sys.stderr of before, as Beam's are
with to_log_file(Path(sys.argv[1])) as log:
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('worker traceback\\\\n')"])
    try:
        raise OSError(28, "No space left on device")
    except OSError:
        logging.getLogger("apache_beam.runners").exception("a worker failed")
    print("catalog progress", file=sys.stderr)
print("catalog: error: it failed" + log.mention(), file=sys.stderr)
"""


def test_an_engines_output_goes_to_the_log_and_ours_to_the_terminal(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "beam.log"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log)], capture_output=True, text=True, timeout=60,
        env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        "catalog progress",
        f"catalog: error: it failed (Beam's own messages and tracebacks: {log})",
    ], run.stderr
    written = log.read_text()
    assert "worker traceback" in written and "Traceback" in written and "No space" in written


def test_old_and_surplus_logs_are_pruned_when_a_new_one_starts(tmp_path: Path) -> None:
    from catalog.prepare.engine_log import KEEP_DAYS, KEEP_LOGS, to_log_file

    folder = tmp_path / "catalog-beam"
    folder.mkdir()
    now = time.time()
    for n in range(KEEP_LOGS + 5):  # n minutes old
        path = folder / f"run{n:02d}.log"
        path.write_text("traceback")
        os.utime(path, (now - 60 * n, now - 60 * n))
    stale = folder / "stale.log"
    stale.write_text("traceback")
    os.utime(stale, (now - (KEEP_DAYS + 1) * 86400,) * 2)
    (folder / "notes.txt").write_text("not a log")
    with to_log_file(folder / "new.log"):
        pass
    left = sorted(p.name for p in folder.iterdir())
    kept = [f"run{n:02d}.log" for n in range(KEEP_LOGS)]  # the newest; stale.log is too old
    assert left == sorted(["new.log", "notes.txt", *kept])
