"""What an engine that catalog runs (Apache Beam) writes on its own, kept off the terminal.

Beam logs a worker's failure with its whole traceback (90 lines for a killed worker, 315 for a
full disk), from the driver's threads through `logging` and from its worker processes straight
to file descriptor 2, before catalog reports the same failure in one line. `to_log_file`
points descriptor 2 at a log file for as long as the engine runs, so that both its worker
processes (which inherit it) and the handlers that write to the old `sys.stderr` land there,
while `sys.stderr` itself (catalog's progress and messages) still reaches the terminal through
a copy of the original descriptor. The error then names the log file
(`EngineLog.mention`). Process-wide while it lasts: one engine run at a time.

A log that names a failure is kept for the user to read; the folder's logs are pruned when a
new one starts (`KEEP_LOGS` newest, none older than `KEEP_DAYS`), so failed runs do not fill
the temporary dir over time.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from catalog._util.terminal import escaping, unescaped

__all__ = ["KEEP_DAYS", "KEEP_LOGS", "EngineLog", "prune", "to_log_file"]

#: Logs kept in an engine's log folder: the newest this many, none older than this many days.
KEEP_LOGS, KEEP_DAYS = 20, 7


class EngineLog:
    """Where an engine's own output went (`path`), and whether it wrote anything."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def written(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except OSError:
            return False

    def mention(self) -> str:
        """The sentence an error ends with: where the engine's own messages are."""
        if not self.written():
            return ""
        return f" (Beam's own messages and tracebacks: {self.path})"


@contextlib.contextmanager
def to_log_file(path: Path) -> Iterator[EngineLog]:
    """Descriptor 2 (and what inherits it) into `path` (appended) while the block runs;
    `sys.stderr` keeps writing where it wrote before."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prune(path.parent)
    log = EngineLog(path)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no descriptor 2 (an embedded interpreter)
        yield log
        return
    previous = sys.stderr
    terminal = None
    try:
        with open(path, "ab") as file:
            os.dup2(file.fileno(), 2)
        terminal = io.TextIOWrapper(
            os.fdopen(os.dup(saved), "wb", buffering=0),
            encoding=getattr(previous, "encoding", None) or "utf-8",
            errors="backslashreplace",
            line_buffering=True,
        )
        # escaped as before when it was (the `catalog` command's stderr, `_util.terminal`)
        sys.stderr = escaping(terminal) if previous is not unescaped(previous) else terminal
        yield log
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stderr = previous
        os.dup2(saved, 2)
        os.close(saved)
        if terminal is not None:
            with contextlib.suppress(Exception):
                terminal.close()


def prune(folder: Path, keep: int = KEEP_LOGS, days: float = KEEP_DAYS) -> None:
    """Remove the ``*.log`` files of `folder` past the newest `keep` or older than `days`
    (another process's log in use is younger than that: it is kept)."""
    logs = []
    for path in folder.glob("*.log"):
        with contextlib.suppress(OSError):
            logs.append((path.stat().st_mtime, path))
    logs.sort(reverse=True)
    oldest = time.time() - days * 86400
    for n, (mtime, path) in enumerate(logs):
        if n >= keep or mtime < oldest:
            with contextlib.suppress(OSError):
                path.unlink()
