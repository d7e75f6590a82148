"""Pipeline workers and the processes around them, tested as real processes.

Each test runs a real consumer script in a process group of its own and acts on it as the
outside world does: a scheduler or an OOM killer ends the consumer's pid alone (SIGTERM,
SIGKILL), a terminal sends Ctrl-C to the foreground group (SIGINT). Every wait polls with a
deadline; a ``finally`` kills the group and removes the segments, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from catalog.loader import shm

from conftest import ROOT, ctrl_c_reaches_children

SHM = Path("/dev/shm")
PROC = Path("/proc")
pytestmark = pytest.mark.skipif(
    not (SHM.is_dir() and PROC.is_dir()), reason="needs /dev/shm and /proc (Linux)"
)
DEADLINE = 30.0  # seconds for anything the tests wait for; the fixes take a few


def alive(pid: int) -> bool:
    """A live (not zombie) process with this id."""
    try:
        status = (PROC / str(pid) / "status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid`."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "(comm)": state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def segments(pid: int) -> list[str]:
    return sorted(p.name for p in SHM.iterdir() if p.name.startswith(f"catalog-{pid}-"))


def wait_until(condition: Callable[[], bool], seconds: float = DEADLINE) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@contextlib.contextmanager
def consumer(tmp_path: Path, script: str) -> Iterator[subprocess.Popen[bytes]]:
    """`script` running in a process group of its own (as a terminal's foreground job), its
    output in files (a pipe would keep the test waiting on whoever inherited it). Afterwards
    the whole group is killed and its segments removed, however the test went."""
    path = tmp_path / "run.py"
    path.write_text(textwrap.dedent(script))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (
        (tmp_path / "out").open("wb") as out,
        (tmp_path / "err").open("wb") as err,
        ctrl_c_reaches_children(),
    ):
        proc = subprocess.Popen(
            [sys.executable, str(path)],
            stdout=out,
            stderr=err,
            cwd=tmp_path,
            env=env,
            start_new_session=True,
        )
    members = {proc.pid}  # whose segments to remove (a worker may have made a pool too)
    theirs: set[int] = set()  # the semaphores the group maps, by inode
    try:
        yield proc
    finally:
        for _ in range(3):  # the members may be forking while they are killed
            members.update(group_members(proc.pid))
            for pid in group_members(proc.pid):
                theirs |= semaphores_of(pid)  # read just before it dies
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if not group_members(proc.pid):
                break
            time.sleep(0.1)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        for pid in members:
            shm.sweep(f"catalog-{pid}-")
        # A resource tracker killed with the group unlinks nothing: the semaphores the group
        # mapped that no live process maps any more are orphans (any process using one maps
        # it), so they go. Never another process's (another test's, run alongside): only
        # inodes the group mapped are candidates, and the files are listed before the live
        # maps are read, so a semaphore made meanwhile is never taken for an orphan.
        candidates = {i: n for i, n in named_semaphores().items() if i in theirs}
        in_use = mapped_semaphores()
        for inode, name in candidates.items():
            if inode not in in_use:
                with contextlib.suppress(OSError):
                    if (SHM / name).stat().st_ino == inode:
                        (SHM / name).unlink()


def mapped_semaphores() -> set[int]:
    """The inodes of the /dev/shm files (POSIX named semaphores among them) that any live
    process maps. By inode, not name: glibc maps a semaphore's file under a temporary name
    before linking it as sem.<name>, so /proc/<pid>/maps shows ``/dev/shm/sem.XXXXXX
    (deleted)`` for a semaphore that is very much alive."""
    found = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        with contextlib.suppress(OSError):
            for line in maps.read_text().splitlines():
                if "/dev/shm/" in line:
                    found.add(int(line.split()[4]))
    return found


def read(tmp_path: Path, name: str) -> str:
    return (tmp_path / name).read_text(errors="replace")


def wait_for_line(tmp_path: Path, proc: subprocess.Popen[bytes], marker: str) -> str:
    """The first whole line of the consumer's stdout starting with `marker`. Only lines
    already ended count: unbuffered (PYTHONUNBUFFERED), `print` writes each of its pieces
    with a write of its own, and a read between them sees half a line."""

    def line() -> str | None:
        out = read(tmp_path, "out")
        for text in out[: out.rfind("\n") + 1].splitlines():
            if text.startswith(marker):
                return text
        return None

    assert wait_until(lambda: line() is not None or proc.poll() is not None), "no output"
    found = line()
    assert found is not None, read(tmp_path, "err")
    return found


# -- ending the consumer ---------------------------------------------------------------------
KILLED_CONSUMER = """
    import numpy as np
    import catalog

    def big(i):
        return {"x": np.full(20000, i, np.int64)}  # big enough to need shared memory

    if __name__ == "__main__":
        p = catalog.pipeline(np.arange(1000)).repeat().map(big).batch(64)
        it = p.prefetch(2, "process", start_method=START, autotune=False).iterator()
        while len(it.worker_pids) < 2:  # they start in the background
            next(it)
        for _ in range(8):  # each worker has written its slots
            next(it)
        print("workers", *it.worker_pids, flush=True)
        for batch in it:  # forever, until the consumer is ended
            pass
"""


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_ending_the_consumer_alone_ends_its_workers_and_frees_shared_memory(
    tmp_path: Path, start: str, sig: signal.Signals
) -> None:
    """The signal goes to the consumer's pid alone: the workers, the forkserver and the
    resource tracker must notice it is gone and exit, and no segment may stay behind."""
    with consumer(tmp_path, KILLED_CONSUMER.replace("START", repr(start))) as proc:
        workers = [int(p) for p in wait_for_line(tmp_path, proc, "workers").split()[1:]]
        assert len(workers) == 2
        helpers = [pid for pid in group_members(proc.pid) if pid != proc.pid]
        assert set(workers) <= set(helpers)  # + the resource tracker (+ the forkserver)
        os.kill(proc.pid, sig)
        proc.wait(DEADLINE)
        gone = wait_until(lambda: not any(alive(pid) for pid in helpers))
        assert gone, f"still alive: {[pid for pid in helpers if alive(pid)]}"
        assert wait_until(lambda: not segments(proc.pid), 5), segments(proc.pid)


BUSY_WORKERS = """
    import time
    import numpy as np
    import catalog

    def slow(i):
        print("busy", i, flush=True)
        time.sleep(3600)  # an order that takes far longer than anyone waits
        return i

    if __name__ == "__main__":
        p = catalog.pipeline(np.arange(100)).map(slow).batch(4)
        for batch in p.prefetch(2, "process", start_method=START, autotune=False):
            pass
"""


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
def test_workers_in_the_middle_of_an_order_exit_when_the_consumer_is_killed(
    tmp_path: Path, start: str
) -> None:
    with consumer(tmp_path, BUSY_WORKERS.replace("START", repr(start))) as proc:
        wait_for_line(tmp_path, proc, "busy")  # a worker is in the middle of an order
        # both workers, the resource tracker (and the forkserver) are up
        started = 4 if start == "forkserver" else 3
        assert wait_until(lambda: len(group_members(proc.pid)) > started)
        helpers = [pid for pid in group_members(proc.pid) if pid != proc.pid]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(DEADLINE)
        gone = wait_until(lambda: not any(alive(pid) for pid in helpers))
        assert gone, f"still alive: {[pid for pid in helpers if alive(pid)]}"
        assert not segments(proc.pid)


def test_segment_names_go_once_both_sides_map_them_so_killing_everyone_leaves_none(
    tmp_path: Path,
) -> None:
    """An OOM killer may end the consumer and its workers at once: nobody is left to clean
    up, so a segment must not need a name once it is in use."""
    with consumer(tmp_path, KILLED_CONSUMER.replace("START", repr("forkserver"))) as proc:
        wait_for_line(tmp_path, proc, "workers")
        assert wait_until(lambda: not segments(proc.pid), 10), segments(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group at once
        assert wait_until(lambda: not group_members(proc.pid))
        assert not segments(proc.pid)


def semaphores_of(pid: int) -> set[int]:
    """The inodes of the POSIX named semaphores process `pid` maps (named or not any more)."""
    with contextlib.suppress(OSError):
        lines = (PROC / str(pid) / "maps").read_text().splitlines()
        return {int(line.split()[4]) for line in lines if "/dev/shm/sem." in line}
    return set()


def named_semaphores() -> dict[int, str]:
    """The files of /dev/shm's named semaphores, by inode."""
    found = {}
    for path in SHM.glob("sem.*"):
        with contextlib.suppress(OSError):
            found[path.stat().st_ino] = path.name
    return found


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
def test_killing_the_whole_group_leaves_no_semaphore_behind(tmp_path: Path, start: str) -> None:
    """The queues and events between consumer and workers are named semaphores in /dev/shm;
    when everyone is killed at once nobody can remove them, so their names must go once every
    worker has opened them. Told apart from other tests' semaphores by inode (tmpfs does not
    reuse inode numbers), taken from what the consumer maps."""
    with consumer(tmp_path, KILLED_CONSUMER.replace("START", repr(start))) as proc:
        wait_for_line(tmp_path, proc, "workers")
        mapped = semaphores_of(proc.pid)
        assert mapped, "the consumer maps no semaphore: nothing is tested"
        # the names go at the consumer's next look at its workers once all are ready
        wait_until(lambda: not set(named_semaphores()) & semaphores_of(proc.pid), 10)
        mapped |= semaphores_of(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group at once
        assert wait_until(lambda: not group_members(proc.pid))
        left = [name for inode, name in named_semaphores().items() if inode in mapped]
        assert not left, f"{len(left)} of the {len(mapped)} semaphores stay: {sorted(left)}"


FINISHING_CONSUMER = """
    import os, time
    import numpy as np
    import catalog

    def named_here():
        named = {os.stat(f"/dev/shm/{n}").st_ino for n in os.listdir("/dev/shm")
                 if n.startswith("sem.")}
        with open(f"/proc/{os.getpid()}/maps") as maps:
            return {int(line.split()[4]) for line in maps if "/dev/shm/sem." in line} & named

    if __name__ == "__main__":
        p = catalog.pipeline(np.arange(1000)).repeat().map(np.float32).batch(64)
        it = p.prefetch(2, "process", start_method="spawn", autotune=False).iterator()
        deadline = time.monotonic() + 30
        while (len(it.worker_pids) < 2 or named_here()) and time.monotonic() < deadline:
            next(it)
        print("named", len(named_here()), flush=True)
        batches = sum(len(next(it)) > 0 for _ in range(50))  # the queues work without names
        it.close()
        print("batches", batches, flush=True)
"""


def test_semaphores_without_names_still_close_cleanly(tmp_path: Path) -> None:
    """multiprocessing removes the semaphores' names itself at exit (a finalizer, the resource
    tracker): once they are gone already, neither may fail or warn."""
    with consumer(tmp_path, FINISHING_CONSUMER) as proc:
        assert wait_until(lambda: proc.poll() is not None), read(tmp_path, "err")
        assert proc.returncode == 0, read(tmp_path, "err")
        assert read(tmp_path, "out").splitlines() == ["named 0", "batches 50"]
        assert read(tmp_path, "err") == ""


# -- Ctrl-C with thread workers --------------------------------------------------------------
HUNG_THREADS = """
    import threading
    import numpy as np
    import catalog

    def hang(i):
        print("hung", i, flush=True)
        threading.Event().wait()  # a map that never returns
        return i

    p = catalog.pipeline(np.arange(1000)).map(hang).batch(4)
    for batch in p.prefetch(2, "thread", autotune=AUTOTUNE):
        pass
"""


@pytest.mark.parametrize("autotune", [True, False])
def test_one_ctrl_c_ends_a_program_whose_thread_workers_hang(
    tmp_path: Path, autotune: bool
) -> None:
    with consumer(tmp_path, HUNG_THREADS.replace("AUTOTUNE", repr(autotune))) as proc:
        wait_for_line(tmp_path, proc, "hung")
        # every thread that got an order is in the map (the consumer too, autotuned)
        assert wait_until(lambda: read(tmp_path, "out").count("hung") >= 2)
        os.killpg(proc.pid, signal.SIGINT)  # one Ctrl-C, to the foreground group
        ended = wait_until(lambda: proc.poll() is not None, 30)
        assert ended, "one Ctrl-C did not end the program"
        assert proc.returncode != 0
        assert "KeyboardInterrupt" in read(tmp_path, "err")


# -- a script without a main guard -----------------------------------------------------------
NO_MAIN_GUARD = """
    import numpy as np
    import catalog

    def double(i):
        return i * 2

    print("top level", flush=True)
    p = catalog.pipeline(np.arange(100_000)).repeat().map(double).batch(64)
    for batch in p.prefetch(2, "process", start_method=START, autotune=AUTOTUNE):
        pass
"""


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
@pytest.mark.parametrize("autotune", [True, False])
def test_process_workers_without_a_main_guard_are_one_clear_error(
    tmp_path: Path, start: str, autotune: bool
) -> None:
    """spawn and forkserver re-run the script in every worker; without the guard each one
    would start a pipeline of its own. One PipelineError in the caller names the fix."""
    script = NO_MAIN_GUARD.replace("START", repr(start)).replace("AUTOTUNE", repr(autotune))
    with consumer(tmp_path, script) as proc:
        ended = wait_until(lambda: proc.poll() is not None)
        err = read(tmp_path, "err")
        assert ended, f"still running: {err}"
        assert proc.returncode == 1
        assert err.count("catalog.errors.PipelineError") == 1, err
        assert "Traceback" in err and err.count("Traceback") == 1, err
        assert 'if __name__ == "__main__":' in err and "run.py" in err
        assert "bootstrapping phase" not in err  # multiprocessing's own message
        assert not group_members(proc.pid) or wait_until(lambda: not group_members(proc.pid))
        assert not segments(proc.pid)


UNGUARDED_SHORT = """
    import numpy as np
    import catalog

    def double(i):
        return i * 2

    def train():
        return sum(len(b) for b in pipeline.prefetch(2, "process", start_method="START"))

    print("top level", flush=True)
    pipeline = catalog.pipeline(np.arange(64)).map(double).batch(8)
    GUARD
    print("examples", train(), flush=True)
"""


@pytest.mark.parametrize("start", ["forkserver", "spawn"])
def test_a_missing_main_guard_is_refused_before_any_worker_runs_the_script(
    tmp_path: Path, start: str
) -> None:
    """A pipeline short enough that the caller computes it all while workers start: without
    the guard each worker would still run the script (its top level, and the pipeline) again.
    The line that runs it is read from the script's source first: one error naming it, and the
    top level ran once. Under the guard (the same script, indented) it runs as usual."""
    unguarded = UNGUARDED_SHORT.replace("START", start).replace("    GUARD\n", "")
    with consumer(tmp_path, unguarded) as proc:
        assert wait_until(lambda: proc.poll() is not None), read(tmp_path, "err")
        err = read(tmp_path, "err")
        assert proc.returncode == 1
        assert err.count("catalog.errors.PipelineError") == 1 and err.count("Traceback") == 1
        lines = enumerate(unguarded.splitlines(), 1)
        line = next(i for i, text in lines if text.strip().startswith('print("examples"'))
        assert f"run.py, line {line}" in err, err  # the call at the top level, not in train
        assert 'if __name__ == "__main__":' in err
        assert read(tmp_path, "out") == "top level\n"  # no worker ran the script
    guarded = UNGUARDED_SHORT.replace("START", start)
    guarded = guarded.replace("GUARD\n    print", 'if __name__ == "__main__":\n        print')
    (tmp_path / "out").unlink()
    with consumer(tmp_path, guarded) as proc:
        assert wait_until(lambda: proc.poll() is not None), read(tmp_path, "err")
        assert proc.returncode == 0, read(tmp_path, "err")
        # (workers import the script's top level under the guard too, and their "top level"
        # may land in the middle of the caller's line: a substring, not a whole line)
        assert "examples 64" in read(tmp_path, "out")


# -- a worker that cannot start ------------------------------------------------------------
def test_a_worker_that_cannot_start_is_an_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Workers start in a background thread: what fails there must reach the consumer."""
    import errno
    import threading
    from multiprocessing.context import SpawnProcess

    import numpy as np

    import catalog

    def refuse(self: object) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(SpawnProcess, "start", refuse)
    p = catalog.pipeline(np.arange(100)).batch(10)
    p = p.prefetch(2, "process", start_method="spawn", autotune=False)
    outcome: list[BaseException] = []

    def consume() -> None:
        try:
            list(p)
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(DEADLINE)
    assert not thread.is_alive(), "the consumer waits for a worker that never started"
    assert len(outcome) == 1 and isinstance(outcome[0], catalog.PipelineError), outcome
    assert "could not start process worker 0" in str(outcome[0])
    assert "Too many open files" in str(outcome[0])
    p.close()
    assert not segments(os.getpid())
