"""Executors that compute units in this process: inline (0 workers) or in worker threads.

An executor computes the units ``start, start + 1, ...`` (below `stop`, when set) and hands
them out in that order through `get`. With N threads, thread ``w`` computes the units
``start + w, start + w + N, ...`` into its own bounded queue, so the consumer takes them
round-robin in order with no reordering buffer, and each thread runs at most `depth` units
ahead.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Protocol

from catalog.pipeline.plan import Block, Plan

__all__ = ["Executor", "Inline", "Threads"]

_POLL = 0.1  # seconds between checks of the stop flag while a queue is full


class Executor(Protocol):
    def get(self) -> Block:
        """The next unit's block (in unit order)."""

    def close(self) -> None:
        """Stop every worker and release what they hold; safe to call twice."""


class Inline:
    """Computes each unit when it is asked for, in the calling thread."""

    def __init__(self, plan: Plan, start: int) -> None:
        self._plan, self._unit, self._window = plan, start, [None]

    def get(self) -> Block:
        block = self._plan.compute(self._unit, self._window)
        self._unit += 1
        return block

    def close(self) -> None:
        pass


class Threads:
    """`workers` threads computing units ahead, each at most `depth` units."""

    def __init__(
        self, plan: Plan, start: int, stop: int | None, workers: int, depth: int = 2
    ) -> None:
        self._stop = threading.Event()
        self._queues: list[queue.Queue[tuple[bool, Any]]] = [
            queue.Queue(maxsize=depth) for _ in range(workers)
        ]
        self._next = 0
        self._threads = [
            threading.Thread(
                target=self._run,
                args=(plan, start + w, stop, workers, self._queues[w]),
                name=f"catalog-pipeline-{w}",
                daemon=True,
            )
            for w in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def _run(
        self,
        plan: Plan,
        unit: int,
        stop: int | None,
        stride: int,
        out: queue.Queue[tuple[bool, Any]],
    ) -> None:
        window: list[Any] = [None]
        while not self._stop.is_set() and (stop is None or unit < stop):
            try:
                item: tuple[bool, Any] = (True, plan.compute(unit, window))
            except BaseException as error:
                item = (False, error)
            while not self._stop.is_set():
                try:
                    out.put(item, timeout=_POLL)
                    break
                except queue.Full:
                    continue
            if not item[0]:
                return
            unit += stride

    def get(self) -> Block:
        q = self._queues[self._next]
        self._next = (self._next + 1) % len(self._queues)
        ok, value = q.get()
        if not ok:
            raise value
        block: Block = value
        return block

    def close(self) -> None:
        self._stop.set()
        for q in self._queues:  # unblock producers waiting on a full queue
            while True:
                try:
                    q.get_nowait()
                except queue.Empty:
                    break
        for thread in self._threads:
            thread.join()
