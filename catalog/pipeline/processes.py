"""An executor whose workers are processes started with spawn or forkserver (never fork).

Worker ``w`` of N computes the units ``start + w, start + w + N, ...`` on its own copy of the
plan and puts each block into its own bounded queue: the arrays go through shared memory
(`catalog.pipeline.shm`), the queue carries a small description. The consumer takes the
queues round-robin, so units arrive in order. Workers ignore SIGINT: on Ctrl-C the consumer
raises KeyboardInterrupt and shuts them down itself (`close`), which

1. sets the stop event and joins the workers (terminating one that does not stop within a
   few seconds);
2. removes every segment with this executor's prefix still in ``/dev/shm``: those named by
   unread queue items and any written by a worker stopped between writing and sending. (The
   queues themselves are never read while closing: a worker stopped in the middle of a
   write would leave half a message there.)

`close` also runs when the iterator is garbage-collected and at interpreter exit. An
exception in a worker reaches the consumer as `PipelineError` with the example index and
the worker's original traceback; a worker that dies without a word (killed) is detected too.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue
import secrets
import signal
import threading
import traceback
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

from catalog.errors import PipelineError
from catalog.pipeline import shm
from catalog.pipeline.plan import Block, Plan
from catalog.pipeline.start_methods import DEFAULT_START_METHOD, START_METHODS

__all__ = ["DEFAULT_START_METHOD", "START_METHODS", "Processes"]
_POLL = 0.1  # seconds between liveness checks while waiting on a queue
_JOIN_TIMEOUT = 5.0


def _worker(
    plan: Plan,
    unit: int,
    stop: int | None,
    stride: int,
    out: Any,
    stop_event: Any,
    prefix: str,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the consumer decides when to stop
    parent = os.getppid()
    try:
        _produce(plan, unit, stop, stride, out, stop_event, prefix, parent)
        # Stay until the consumer is done with the queue (or gone): exiting now could lose
        # items still in the queue's pipe.
        while not stop_event.wait(_POLL) and os.getppid() == parent:
            pass
    finally:
        out.cancel_join_thread()  # what is left in the queue is the consumer's to discard


def _produce(
    plan: Plan,
    unit: int,
    stop: int | None,
    stride: int,
    out: Any,
    stop_event: Any,
    prefix: str,
    parent: int,
) -> None:
    window: list[Any] = [None]
    seq = 0
    while not stop_event.is_set() and (stop is None or unit < stop):
        name = None
        try:
            block = plan.compute(unit, window)
            described, name, size = shm.write_block(block.struct, f"{prefix}{seq}")
            item: tuple[Any, ...] = ("ok", block.n, block.finished, described, name, size)
        except BaseException as error:
            index = error.index if isinstance(error, PipelineError) else None
            head = str(error) if isinstance(error, PipelineError) else repr(error)
            text = "".join(traceback.format_exception(error))
            item = ("error", unit, index, head, text)
        seq += 1
        while not stop_event.is_set() and os.getppid() == parent:
            try:
                out.put(item, timeout=_POLL)
                break
            except queue.Full:
                continue
        else:
            shm.discard(name)
        if item[0] == "error":
            return
        unit += stride


class Processes:
    """`workers` processes computing units ahead (see the module docstring)."""

    def __init__(
        self,
        plan: Plan,
        start: int,
        stop: int | None,
        workers: int,
        *,
        start_method: str = DEFAULT_START_METHOD,
        depth: int = 2,
    ) -> None:
        if start_method not in START_METHODS:
            raise ValueError(
                f"start_method must be one of {START_METHODS} (fork is unsafe once "
                f"array_record was used), got {start_method!r}"
            )
        try:
            pickle.dumps(plan)
        except Exception as error:
            raise PipelineError(
                f"process workers need a picklable pipeline, but pickling it failed: {error}. "
                "Define the functions given to map/filter at module level (not lambdas or "
                "local functions), or use prefetch(kind='thread')"
            ) from error
        ctx: BaseContext = mp.get_context(start_method)
        if start_method == "forkserver":
            # The server imports catalog once; each worker is then a fork of that clean
            # process (it never opened a reader), which starts in milliseconds.
            ctx.set_forkserver_preload(["catalog.pipeline.processes"])
        self._prefix = f"catalog-{os.getpid()}-{secrets.token_hex(4)}-"
        self._stop = ctx.Event()
        self._queues: list[Any] = [ctx.Queue(maxsize=depth) for _ in range(workers)]
        self._procs: list[BaseProcess] = []
        self._next = 0
        self._closed = False
        self._lock = threading.Lock()
        for w in range(workers):
            proc = ctx.Process(  # type: ignore[attr-defined]
                target=_worker,
                args=(
                    plan,
                    start + w,
                    stop,
                    workers,
                    self._queues[w],
                    self._stop,
                    f"{self._prefix}{w}-",
                ),
                name=f"catalog-pipeline-{w}",
                daemon=True,
            )
            proc.start()
            self._procs.append(proc)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p.pid is not None]

    def get(self) -> Block:
        w = self._next
        q, proc = self._queues[w], self._procs[w]
        while True:
            try:
                item = q.get(timeout=_POLL)
                break
            except queue.Empty:
                if not proc.is_alive() and q.empty():
                    raise PipelineError(
                        f"process worker {w} (pid {proc.pid}) died with exit code "
                        f"{proc.exitcode} without reporting an error (killed, or out of memory)"
                    ) from None
        self._next = (w + 1) % len(self._queues)
        if item[0] == "error":
            _, unit, index, head, text = item
            raise PipelineError(
                f"a process worker failed on unit {unit}: {head}\n\n"
                f"Original traceback (in worker {w}, pid {proc.pid}):\n{text}",
                index=index,
            )
        _, n, finished, described, name, size = item
        return Block(n, shm.read_block(described, name, size), finished)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        for proc in self._procs:
            proc.join(_JOIN_TIMEOUT)
            if proc.is_alive():
                proc.terminate()
                proc.join(_JOIN_TIMEOUT)
            if proc.is_alive():
                proc.kill()
                proc.join()
        # Never read the queues here: a worker stopped in the middle of a write leaves half a
        # message, on which a read would block forever. What they name is swept instead.
        for q in self._queues:
            q.cancel_join_thread()
            q.close()
        for proc in self._procs:
            proc.close()
        shm.sweep(self._prefix)
