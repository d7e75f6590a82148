"""A process waiting on a lock says whom it waits for: the holder's pid, host, command and
start time, recorded beside the lock; and when that process is gone, that it is stale."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from catalog.storage.lock_holder import describe_holder, holder_path, write_holder

HOLD = """
import sys
from pathlib import Path
from catalog.storage.locking import dataset_lock
with dataset_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_waiting_prepare_names_the_process_holding_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "tiny" / "1.0.0"
    holder = python(HOLD, str(target), "--marker")
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    waiter = python(HOLD, str(target))
    try:
        assert waiter.stderr is not None
        line = waiter.stderr.readline()
        assert line.startswith(f"waiting for another process preparing {target}: ")
        assert f"pid {holder.pid} on host {socket.gethostname()}" in line
        assert "--marker" in line and ", since 20" in line and "stale" not in line
    finally:
        holder.communicate("", timeout=60)
    assert waiter.stdout is not None and waiter.stdout.readline() == "held\n"
    waiter.communicate("", timeout=60)
    assert holder.returncode == 0 and waiter.returncode == 0
    assert not holder_path(tmp_path / "tiny" / ".1.0.0.lock").exists()  # removed on release


def test_a_holder_that_is_gone_is_called_stale(tmp_path: Path) -> None:
    target = tmp_path / "tiny" / "1.0.0"
    target.parent.mkdir(parents=True)
    lock = target.parent / ".1.0.0.lock"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    record = {
        "pid": int(gone.stdout),
        "host": socket.gethostname(),
        "command": "catalog prepare tiny",
        "started": "2026-01-01T00:00:00+00:00",
    }
    with FileLock(str(lock)):  # still held, e.g. by a child the dead holder started
        holder_path(lock).write_text(json.dumps(record))
        waiter = python(HOLD, str(target))
        assert waiter.stderr is not None
        line = waiter.stderr.readline()
    waiter.communicate("", timeout=60)
    assert f"pid {gone.stdout.strip()} on host" in line and "catalog prepare tiny" in line
    assert "that process is gone (a stale holder)" in line and str(lock) in line


def test_holder_records_are_small_and_unreadable_ones_are_said_to_be(tmp_path: Path) -> None:
    lock = tmp_path / ".x.lock"
    write_holder(lock)
    assert f"on host {socket.gethostname()}" in describe_holder(lock)
    holder_path(lock).write_bytes(b"{" * 100_000)
    assert describe_holder(lock) == "another process (it left no record of itself)"


CONTEND = """
import os, sys
from pathlib import Path
from catalog.storage.lock_holder import hold
lock, log = Path(sys.argv[1]), Path(sys.argv[2])
for _ in range(40):
    with hold(lock, on_wait=lambda holder: None, remove=True):
        with open(log, "a") as f:
            f.write(f"in {os.getpid()}\\n")
            f.flush()
            f.write(f"out {os.getpid()}\\n")
"""


def test_a_lock_removed_by_its_holder_still_excludes_every_other_process(
    tmp_path: Path,
) -> None:
    # Each holder unlinks the lock file as it lets go; a process that opened the old file
    # must notice and lock the new one, or two would hold "the lock" at once.
    lock, log = tmp_path / ".meta" / "x.lock", tmp_path / "log"
    lock.parent.mkdir()
    workers = [
        subprocess.Popen([sys.executable, "-c", CONTEND, str(lock), str(log)]) for _ in range(4)
    ]
    assert [w.wait(timeout=120) for w in workers] == [0] * 4
    lines = log.read_text().splitlines()
    assert len(lines) == 4 * 40 * 2
    for enter, leave in zip(lines[::2], lines[1::2], strict=True):
        assert enter.split()[0] == "in" and leave == f"out {enter.split()[1]}"
    assert not lock.exists() and not holder_path(lock).exists()
