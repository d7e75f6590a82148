"""Computing units in this process: inline (0 workers) or in worker threads.

`Inline` computes each unit when it is asked for. `ThreadWorkers` are the threads behind
``prefetch(N, "thread")``: each takes orders (ranges of units) from its own inbox and puts
the blocks in its outbox, in order; `catalog.loader.scheduler.Scheduler` decides who
computes what.

A thread cannot be stopped from outside, so `ThreadWorkers.close` waits for its threads
only a bounded time (`JOIN_SECONDS` in all): one stuck in a map that never returns is left
behind, a daemon that does not keep the program alive. Ctrl-C during such a map therefore
ends the program at once, as it does with process workers.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Protocol

from catalog.loader.plan import Block, Plan

__all__ = ["Executor", "Inline", "ThreadWorkers"]

_Result = tuple[bool, Any]
JOIN_SECONDS = 2.0  # how long close waits for threads still in an order, all together
WAKE_SECONDS = 0.1  # the longest the consumer waits for a worker without waking


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


class ThreadWorkers:
    """`size` threads computing the orders they are sent (see `scheduler.Workers`)."""

    order_seconds = 0.001  # a hand-off between threads costs tens of microseconds

    def __init__(self, plan: Plan, size: int) -> None:
        self.size = size
        self._inboxes: list[queue.SimpleQueue[tuple[int, int] | None]] = [
            queue.SimpleQueue() for _ in range(size)
        ]
        self._outboxes: list[queue.SimpleQueue[tuple[list[_Result], float]]] = [
            queue.SimpleQueue() for _ in range(size)
        ]
        self._closed = False
        self._threads = [
            threading.Thread(
                target=self._run,
                args=(plan, self._inboxes[w], self._outboxes[w]),
                name=f"catalog-pipeline-{w}",
                daemon=True,
            )
            for w in range(size)
        ]
        self._started = [False] * size  # a thread starts with its first order

    @staticmethod
    def _run(
        plan: Plan,
        inbox: queue.SimpleQueue[tuple[int, int] | None],
        outbox: queue.SimpleQueue[tuple[list[_Result], float]],
    ) -> None:
        window: list[Any] = [None]
        while (order := inbox.get()) is not None:
            first, count = order
            began = time.perf_counter()
            results: list[_Result] = []
            for unit in range(first, first + count):
                try:
                    results.append((True, plan.compute(unit, window)))
                except BaseException as error:
                    results.append((False, error))
                    break
            outbox.put((results, time.perf_counter() - began))

    def ready(self, wait: bool = False) -> int:
        return self.size

    def send(self, worker: int, first: int, count: int) -> None:
        if not self._started[worker]:
            self._started[worker] = True
            self._threads[worker].start()
        self._inboxes[worker].put((first, count))

    def receive(self, worker: int) -> tuple[list[_Result], float]:
        outbox = self._outboxes[worker]
        while True:
            try:
                return outbox.get(timeout=WAKE_SECONDS)
            except queue.Empty:  # a Ctrl-C that the kernel gave to a worker thread is run
                continue  # by the main thread only when it wakes: never block for good

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for inbox in self._inboxes:
            inbox.put(None)  # after the orders already sent, which finish first
        deadline = time.monotonic() + JOIN_SECONDS
        for thread, started in zip(self._threads, self._started, strict=True):
            # one still in a user's function after that (hung) stays behind as a daemon
            if started:
                thread.join(max(0.0, deadline - time.monotonic()))
