"""Who runs a shard plan's units: this process, N processes, or Apache Beam workers.

Every runner calls `catalog.prepare.work_unit.run_unit` on each task and hands back its `Outcome`s
(in any order); the driver (`catalog.prepare.driver`) verifies and commits. Processes are started
with ``spawn``, never ``fork``: array_record's native state does not survive a fork. A runner
stops handing out work at the first failed unit; units already running finish.
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from catalog.prepare.work_unit import Outcome, Task, run_unit

__all__ = ["run_in_processes", "run_serially"]


def run_serially(
    tasks: list[Task], tick: Callable[[Task, int], None] | None = None
) -> Iterator[Outcome]:
    """Run the units one after the other in this process; `tick(task, n)`: n more examples."""
    for task in tasks:
        outcome = run_unit(task, None if tick is None else functools.partial(tick, task))
        yield outcome
        if outcome.shard is None:
            return


def run_in_processes(tasks: list[Task], num_proc: int) -> Iterator[Outcome]:
    """Run the units in `num_proc` spawned processes, yielding outcomes as they finish."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=num_proc, mp_context=context) as pool:
        pending: set[Future[Outcome]] = {pool.submit(run_unit, task) for task in tasks}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                failed = False
                for future in done:
                    outcome = future.result()
                    failed = failed or outcome.shard is None
                    yield outcome
                if failed:
                    return
        finally:
            for future in pending:
                future.cancel()
