"""Who holds a lock: so a process that waits can say whom it waits for.

The holder of ``<name>.lock`` writes ``<name>.lock.holder`` beside it: a small JSON record of
its pid, host, command line and start time, removed when it lets go. A process that finds the
lock taken prints that record; when the holder's pid is gone on this host (the record outlived
its process, while something it left behind, e.g. a child, still holds the lock), it says so.

>>> describe_holder(Path("/nonexistent/.1.0.0.lock"))
'another process (it left no record of itself)'
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["clear_holder", "describe_holder", "hold", "holder_path", "write_holder"]

_MAX_RECORD = 4096  # bytes of a holder record read: it is small, whatever is in the file


def holder_path(lock: Path) -> Path:
    return lock.with_name(f"{lock.name}.holder")


def write_holder(lock: Path) -> None:
    """Record this process as the holder of `lock` (best effort: a lock works without it)."""
    record = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(sys.argv)[:300],
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    path = holder_path(lock)
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        temp.write_text(json.dumps(record) + "\n", "utf-8")
        temp.replace(path)


def clear_holder(lock: Path) -> None:
    with contextlib.suppress(OSError):
        holder_path(lock).unlink()


def describe_holder(lock: Path) -> str:
    """``pid 123 on host h (catalog prepare mnist), since 2026-01-01T10:00:00+00:00``, with
    a note when that process is gone; a plain phrase when there is no readable record."""
    try:
        with open(holder_path(lock), "rb") as f:
            record = json.loads(f.read(_MAX_RECORD))
        pid, host = int(record["pid"]), str(record["host"])
        command, started = str(record.get("command", "?")), str(record.get("started", "?"))
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it left no record of itself)"
    text = f"pid {pid} on host {host} ({command}), since {started}"
    if host == socket.gethostname() and not _alive(pid):
        text += (
            f"; that process is gone (a stale holder): a process it started may still hold "
            f"the lock; if none does, remove {lock}"
        )
    return text


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, as another user's
        return True
    return True


@contextlib.contextmanager
def hold(
    lock: Path,
    *,
    on_wait: Callable[[str], object],
    cancelled: threading.Event | None = None,
    cancelled_error: Callable[[], BaseException] | None = None,
    remove: bool = False,
) -> Iterator[None]:
    """Hold the file lock at `lock` (an exclusive flock), recording this process as its
    holder. When another process holds it, call ``on_wait(describe_holder(lock))`` once and
    wait (until `cancelled` is set, then raise ``cancelled_error()``).

    ``remove``: unlink the lock file on release, so a lock leaves nothing behind. Safe because
    every holder checks, once it has the flock, that the path still names the file it locked
    (a file unlinked by its last holder is never mistaken for the lock; it tries again).
    """
    fd = _try_lock(lock)
    if fd is None:
        on_wait(describe_holder(lock))
        while fd is None:
            if cancelled is not None and cancelled.is_set():
                raise (cancelled_error or (lambda: TimeoutError(f"cancelled: {lock}")))()
            time.sleep(0.05 if cancelled is None else 0.2)
            fd = _try_lock(lock)
    try:
        write_holder(lock)
        yield
    finally:
        clear_holder(lock)
        if remove:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
        os.close(fd)  # lets the flock go


def _try_lock(lock: Path) -> int | None:
    """An fd holding the exclusive flock on the file at `lock`, or None if another holds it."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            raise
        try:
            same = lock.stat().st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # its holder removed it as we opened it: lock the file there now
