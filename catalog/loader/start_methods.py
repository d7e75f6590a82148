"""How pipeline worker processes start: never fork (array_record's native state does not
survive it, see `catalog.storage.shards`). Kept apart from `catalog.loader.processes` so that
`import catalog` does not import multiprocessing: only a process prefetch needs it."""

from __future__ import annotations

import os

__all__ = ["DEFAULT_START_METHOD", "START_METHODS"]

START_METHODS = ("spawn", "forkserver")
#: forkserver where the platform has it (POSIX: workers fork from a clean server process that
#: imported catalog once, so they start fast), else spawn.
DEFAULT_START_METHOD = "forkserver" if os.name == "posix" else "spawn"
