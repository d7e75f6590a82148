"""Who runs a shard plan's units: this process, N processes, or Apache Beam workers.

Every runner calls `catalog.prepare.work_unit.run_unit` on each task and hands back its `Outcome`s
(in any order); the driver (`catalog.prepare.driver`) verifies and commits. Processes are started
with ``spawn``, never ``fork``: array_record's native state does not survive a fork. A runner
stops handing out work at the first failed unit; units already running finish.

`run_in_processes` keeps its own workers (one pipe each, not a ProcessPoolExecutor, whose pool
breaks as a whole and cannot say which unit a dead worker ran): a worker that dies mid-unit
(SIGKILL from the OS's out-of-memory killer, say) is `WorkerLostError` naming the unit and the
signal, raised after the units the other workers are running have finished and been handed
back, so that every finished unit is kept for the next run.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext, SpawnProcess

from catalog.prepare.work_unit import Outcome, Task, WorkerLostError, lost_worker, run_unit

__all__ = ["run_in_processes", "run_serially"]

_STOP_SECONDS = 10  # for a worker to exit when asked, before it is killed


def run_serially(
    tasks: list[Task], tick: Callable[[Task, int], None] | None = None
) -> Iterator[Outcome]:
    """Run the units one after the other in this process; `tick(task, n)`: n more examples."""
    for task in tasks:
        outcome = run_unit(task, None if tick is None else functools.partial(tick, task))
        yield outcome
        if outcome.shard is None:
            return


def _serve(conn: Connection) -> None:
    """A worker: run the units sent until None (or the pipe closes), sending each outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        conn.send(run_unit(task))


class _Worker:
    """A spawned worker process, its end of the pipe, and the task it is running."""

    def __init__(self, context: SpawnContext, number: int) -> None:
        self.conn, child = context.Pipe()
        self.process: SpawnProcess = context.Process(
            target=_serve, args=(child,), name=f"catalog-prepare-{number}", daemon=True
        )
        self.process.start()
        child.close()
        self.task: Task | None = None

    def give(self, task: Task) -> bool:
        """Send `task`; False when the worker is gone (it died between units)."""
        try:
            self.conn.send(task)
        except OSError:
            return False
        self.task = task
        return True

    def receive(self) -> Outcome | None:
        """The outcome of its task, or None when the worker died before sending it."""
        try:
            outcome: Outcome = self.conn.recv()
        except (EOFError, OSError):
            return None
        self.task = None
        return outcome

    def lost(self) -> WorkerLostError:
        self.process.join(_STOP_SECONDS)
        who = f"prepare worker process {self.process.pid}"
        unit = None if self.task is None else self.task.unit
        return lost_worker(unit, who, self.process.exitcode)

    def stop(self) -> None:
        if self.process.is_alive():
            if self.task is None:
                with contextlib.suppress(OSError):
                    self.conn.send(None)
            else:
                self.process.terminate()
            self.process.join(_STOP_SECONDS)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(_STOP_SECONDS)
        self.conn.close()


def run_in_processes(tasks: list[Task], num_proc: int) -> Iterator[Outcome]:
    """Run the units in `num_proc` spawned processes, yielding outcomes as they finish;
    WorkerLostError when a worker died (see the module docstring)."""
    context = multiprocessing.get_context("spawn")
    todo = list(reversed(tasks))
    workers: list[_Worker] = []
    lost: WorkerLostError | None = None
    failed = False
    try:
        workers = [_Worker(context, n) for n in range(min(num_proc, len(tasks)))]
        for worker in workers:
            if todo and not worker.give(todo.pop()):
                lost = lost or worker.lost()
        while busy := [w for w in workers if w.task is not None]:
            by_handle: dict[object, _Worker] = {w.conn: w for w in busy}
            by_handle.update((w.process.sentinel, w) for w in busy)
            for ready in wait(list(by_handle)):  # type: ignore[arg-type]
                worker = by_handle[ready]
                if worker.task is None:
                    continue  # both its pipe and its sentinel were ready: handled
                outcome = worker.receive() if worker.conn.poll() else None
                if outcome is None:
                    lost = lost or worker.lost()
                    worker.task = None
                    continue
                yield outcome
                failed = failed or outcome.shard is None
                if todo and not failed and lost is None and not worker.give(todo.pop()):
                    lost = lost or worker.lost()
                    worker.task = None
        if lost is not None:
            raise lost
    finally:
        for worker in workers:
            worker.stop()
