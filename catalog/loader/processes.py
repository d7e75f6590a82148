"""Worker processes, started with spawn or forkserver (never fork), that compute orders.

`ProcessWorkers` are the workers behind ``prefetch(N, "process")``
(`catalog.loader.scheduler.Scheduler` decides what each computes). They start in a
background thread, so the consumer computes the first units itself while they boot instead
of waiting for them. Each worker unpickles the plan once, then takes orders (ranges of
units) from its inbox; it writes the arrays of all the blocks of an order into one
shared-memory segment (`catalog.loader.shm`) and puts a small description in its outbox.

Workers ignore SIGINT: on Ctrl-C the consumer raises KeyboardInterrupt and shuts them down
itself (`close`), which

1. sets the stop event and joins the workers (terminating one that does not stop within a
   few seconds, or that has not finished starting);
2. removes every segment with these workers' prefix still in ``/dev/shm``: those named by
   unread outbox items and any written by a worker stopped between writing and sending. (The
   queues themselves are never read while closing: a worker stopped in the middle of a
   write would leave half a message there.)

`close` also runs when the iterator is garbage-collected and at interpreter exit. An
exception in a worker reaches the consumer as `PipelineError` with the example index and
the worker's original traceback; a worker that dies without a word (killed) is detected too.

A consumer can also end without a word (SIGKILL, or SIGTERM, from a scheduler or the OOM
killer). Each worker watches it with multiprocessing's parent sentinel: the read end of a
pipe whose only write end the consumer holds, with spawn and with forkserver alike (a
forkserver worker's parent is the server, which would wait for the workers). When it
breaks, the worker removes every segment with the pool's prefix and exits at once, even in
the middle of an order; then the forkserver and the resource tracker, which lived on for the
workers, end too. Segments do not wait for that: the consumer removes a segment's name as
soon as it has mapped it (`shm.Reader`), so the memory goes with the last process that maps it.
Likewise the names of the queues' and events' semaphores go once every worker has started
(`catalog.loader.semaphores`): killing the whole process group at once leaves nothing behind.

spawn and forkserver run the main script again in each worker: a script that would start
workers again there (no ``if __name__ == "__main__":``) is refused first
(`catalog.loader.main_guard`).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import multiprocessing.reduction as mp_reduction
import os
import pickle
import queue
import secrets
import signal
import threading
import time
import traceback
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

from catalog.errors import PipelineError, StorageError
from catalog.loader import semaphores, shm
from catalog.loader.main_guard import NO_MAIN_GUARD, message, refuse_unguarded_start
from catalog.loader.plan import Block, Plan
from catalog.loader.start_methods import DEFAULT_START_METHOD, START_METHODS

__all__ = ["DEFAULT_START_METHOD", "START_METHODS", "ProcessWorkers"]
_POLL = 0.1  # seconds between liveness checks while waiting on a queue
_JOIN_TIMEOUT = 5.0
_PLAN_INLINE = 64 * 1024  # a bigger pickled plan goes to the workers through shared memory
_Result = tuple[bool, Any]
_NAME = "catalog-pipeline-"  # the workers' process names: catalog-pipeline-0, ...
_GONE = 88  # a worker's exit code: its consumer ended without closing it


def _watch_consumer(pool_prefix: str) -> None:
    """In a worker: when the consumer is gone (killed: it could not close the workers), remove
    the pool's segments and exit, whatever the worker is doing (see the module docstring)."""
    parent = mp.parent_process()
    sentinel = getattr(parent, "sentinel", None)
    if sentinel is None:  # not started by multiprocessing: the poll loop checks getppid
        return

    def watch() -> None:
        mp_connection.wait([sentinel])
        shm.sweep(pool_prefix)
        os._exit(_GONE)

    threading.Thread(target=watch, name="catalog-consumer-watch", daemon=True).start()


class _SharedPlan:
    """A pickled plan in a segment without a name (`shm.put_bytes`): it reaches each worker as
    a file descriptor that multiprocessing passes on with the process."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled only with a starting worker's arguments, where DupFd hands the fd over
        return _received_plan, (mp_reduction.DupFd(self.fd), self.size)


def _received_plan(fd: Any, size: int) -> _SharedPlan:
    return _SharedPlan(fd.detach(), size)


def _load_plan(plan: bytes | _SharedPlan) -> Plan:
    """The plan as `ProcessWorkers` passed it: pickled bytes, or a segment holding them."""
    if isinstance(plan, _SharedPlan):
        try:
            data = shm.get_bytes(plan.fd, plan.size)
        finally:
            os.close(plan.fd)
    else:
        data = plan
    loaded: Plan = pickle.loads(data)
    return loaded


def _worker(
    plan_bytes: bytes | _SharedPlan,
    inbox: Any,
    outbox: Any,
    ready: Any,
    stop_event: Any,
    pool_prefix: str,
    worker: int,
    slots: int,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the consumer decides when to stop
    _watch_consumer(pool_prefix)
    parent = os.getppid()
    prefix = f"{pool_prefix}{worker}-"
    writer = shm.Writer(prefix)
    try:
        plan: Plan | BaseException
        try:
            plan = _load_plan(plan_bytes)
        except Exception as error:  # answered to every order
            plan = error
        if isinstance(plan, Plan):
            # open and map the files before taking work, not in the first order; what
            # fails here fails again, with its example, in the order that reads it
            with contextlib.suppress(Exception):
                plan.warm()
        ready.set()
        window: list[Any] = [None]
        seq = 0
        while not stop_event.is_set() and os.getppid() == parent:
            try:
                order = inbox.get(timeout=_POLL)
            except queue.Empty:
                continue
            if order is None:  # close(): stop now rather than at the next poll
                break
            first, count = order
            outbox.put(_pickled(_compute(plan, first, count, window, writer, seq % slots), first))
            seq += 1
    finally:
        outbox.cancel_join_thread()  # what is left in the queue is the consumer's to discard
        writer.close()


class _Unsendable(PipelineError):
    """An order's output that cannot be pickled to be sent to the consumer."""


def _failure(unit: int, error: BaseException) -> tuple[int, int | None, str, str | None, str]:
    """(unit, example index, message, traceback, error class); no traceback for catalog's own
    messages (a full /dev/shm, an output that cannot be sent), which say what to do."""
    if isinstance(error, StorageError | _Unsendable):
        return unit, None, str(error), None, type(error).__name__
    index = error.index if isinstance(error, PipelineError) else None
    head = str(error) if isinstance(error, PipelineError) else repr(error)
    return unit, index, head, "".join(traceback.format_exception(error)), "PipelineError"


def _pickled(result: tuple[Any, ...], first: int) -> bytes:
    """`_compute`'s result as the bytes the outbox carries. Pickled here, where a failure can
    still be reported: the queue pickles in a thread of its own that only prints a failure,
    and the consumer would wait for the result forever."""
    try:
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        slot, seconds = result[0], result[-1]
        problem = _Unsendable(
            f"what the pipeline's functions returned cannot be sent from a process worker: "
            f"{error}. Return NumPy arrays, numbers, strings, bytes, or dicts, lists and tuples "
            "of them; or use prefetch(kind='thread')"
        )
        return pickle.dumps((slot, [], None, 0, _failure(first, problem), seconds))


def _compute(
    plan: Plan | BaseException,
    first: int,
    count: int,
    window: list[Any],
    writer: shm.Writer,
    slot: int,
) -> tuple[Any, ...]:
    """Compute an order into `slot`: (slot, described blocks, segment name, size, failure or
    None, seconds)."""
    began = time.perf_counter()
    blocks: list[tuple[int, bool, Any]] = []
    failure = None
    for unit in range(first, first + count):
        try:
            if isinstance(plan, BaseException):
                raise PipelineError(f"the worker could not unpickle the pipeline: {plan!r}")
            block = plan.compute(unit, window)
        except BaseException as error:
            failure = _failure(unit, error)
            break
        blocks.append((block.n, block.finished, block.struct))
    try:
        described, name, size = writer.write(slot, blocks)
    except BaseException as error:  # e.g. /dev/shm is full
        failure = _failure(first, error)
        described, name, size = [], None, 0
    return slot, described, name, size, failure, time.perf_counter() - began


class ProcessWorkers:
    """`size` worker processes computing the orders they are sent (see `scheduler.Workers`
    and the module docstring)."""

    order_seconds = 0.004  # an order costs a shared-memory segment and two queue hand-offs

    def __init__(
        self, plan: Plan, size: int, *, depth: int = 2, start_method: str = DEFAULT_START_METHOD
    ) -> None:
        if start_method not in START_METHODS:
            raise ValueError(
                f"start_method must be one of {START_METHODS} (fork is unsafe once "
                f"array_record was used), got {start_method!r}"
            )
        refuse_unguarded_start(_NAME)
        # Map and verify the shards here first (the caller needs them for the units it
        # computes anyway): the workers get what was verified with the plan and skip it.
        with contextlib.suppress(Exception):  # what fails here fails again where it is read
            plan.warm()
        try:
            plan_bytes = pickle.dumps(plan)
        except Exception as error:
            raise PipelineError(
                f"process workers need a picklable pipeline, but pickling it failed: {error}. "
                "Define the functions given to map/filter at module level (not lambdas or "
                "local functions), or use prefetch(kind='thread')"
            ) from error
        self.size, self.depth = size, depth
        ctx: BaseContext = mp.get_context(start_method)
        if start_method == "forkserver":
            # The server imports catalog once; each worker is then a fork of that clean
            # process (it never opened a reader), which starts in milliseconds.
            ctx.set_forkserver_preload(["catalog.loader.processes"])
        self._prefix = f"catalog-{os.getpid()}-{secrets.token_hex(4)}-"
        self._stop = ctx.Event()
        self._inboxes: list[Any] = [ctx.Queue() for _ in range(size)]
        self._outboxes: list[Any] = [ctx.Queue() for _ in range(size)]
        self._ready_events: list[Any] = [ctx.Event() for _ in range(size)]
        self._procs: list[BaseProcess | None] = [None] * size
        self._readers = [shm.Reader() for _ in range(size)]
        self._pending = [0] * size  # orders sent and not received, at most `depth` each
        self._ready = 0
        self._checked = time.monotonic()
        self._closed = False
        self._start_error: BaseException | None = None
        self._lock = threading.Lock()
        plan_arg: bytes | _SharedPlan = plan_bytes
        self._plan_fd: int | None = None
        if shm.AVAILABLE and len(plan_bytes) > _PLAN_INLINE:
            # A plan with the shard indexes is ~12 bytes a record: through a socket that is
            # many GIL hand-offs for the thread starting workers while the caller computes.
            self._plan_fd = shm.put_bytes(f"{self._prefix}plan", plan_bytes)
            plan_arg = _SharedPlan(self._plan_fd, len(plan_bytes))
        self._starter = threading.Thread(
            target=self._start, args=(ctx, plan_arg), name="catalog-pipeline-start", daemon=True
        )
        self._starter.start()

    def _start(self, ctx: BaseContext, plan_bytes: bytes | _SharedPlan) -> None:
        for w in range(self.size):
            with self._lock:
                if self._closed:
                    return
                proc = ctx.Process(  # type: ignore[attr-defined]
                    target=_worker,
                    args=(
                        plan_bytes,
                        self._inboxes[w],
                        self._outboxes[w],
                        self._ready_events[w],
                        self._stop,
                        self._prefix,
                        w,
                        self.depth,  # slots: an order's slot is free once `depth` later ones
                    ),
                    name=f"{_NAME}{w}",
                    daemon=True,
                )
                try:
                    proc.start()
                except BaseException as error:  # e.g. out of processes or file descriptors
                    self._start_error = error  # raised by ready(): never a silent hang
                    return
                self._procs[w] = proc

    @property
    def pids(self) -> list[int]:
        """The ids of the workers started so far."""
        return [p.pid for p in self._procs if p is not None and p.pid is not None]

    def ready(self, wait: bool = False) -> int:
        now = time.monotonic()
        if now - self._checked > _POLL:
            self._checked = now
            self._check_alive()
        while self._ready < self.size and self._ready_events[self._ready].is_set():
            w = self._ready
            self._ready += 1
            # worker w has opened its queues and events: their names are no longer needed
            semaphores.forget_names(self._inboxes[w], self._outboxes[w], self._ready_events[w])
            if self._ready == self.size:  # every worker has read the plan, opened the stop event
                self._close_plan()
                semaphores.forget_names(self._stop)
        while wait and not self._ready:
            self._ready_events[0].wait(_POLL)
            self._check_alive()
            self.ready()
        return self._ready

    def _close_plan(self) -> None:
        if self._plan_fd is not None:
            os.close(self._plan_fd)
            self._plan_fd = None

    def _check_alive(self) -> None:
        if self._start_error is not None:
            raise PipelineError(
                f"could not start process worker {sum(p is not None for p in self._procs)}: "
                f"{self._start_error!r}. Use fewer workers, or prefetch(kind='thread')"
            ) from self._start_error
        for w, proc in enumerate(self._procs):
            if proc is None or (code := self._exitcode(proc)) is None:
                continue
            if code == NO_MAIN_GUARD and not self._ready_events[w].is_set():
                raise PipelineError(message())
            raise PipelineError(
                f"process worker {w} (pid {proc.pid}) died with exit code "
                f"{code} without reporting an error (killed, or out of memory)"
            )

    def _exitcode(self, proc: BaseProcess | None) -> int | None:
        """`proc.exitcode`, asked only while no worker is starting (else None: asked again at
        the next poll). `Process.start` polls the other children too, and two threads polling
        one forkserver child race for its exit code: the loser records 255."""
        if proc is None or not self._lock.acquire(blocking=False):
            return None
        try:
            return proc.exitcode
        finally:
            self._lock.release()

    def send(self, worker: int, first: int, count: int) -> None:
        if self._pending[worker] >= self.depth:  # its slot would be overwritten unread
            raise RuntimeError(f"more than {self.depth} orders sent to worker {worker}")
        self._pending[worker] += 1
        self._inboxes[worker].put((first, count))

    def receive(self, worker: int) -> tuple[list[_Result], float]:
        q = self._outboxes[worker]
        while True:
            try:
                data = q.get(timeout=_POLL)
                break
            except queue.Empty:
                if self._exitcode(self._procs[worker]) is not None and q.empty():
                    self._check_alive()
        self._pending[worker] -= 1
        try:
            slot, described, name, size, failure, seconds = pickle.loads(data)
        except Exception as unreadable:  # e.g. a returned object that rebuilds only there
            raise PipelineError(
                f"what process worker {worker} returned cannot be unpickled here: "
                f"{unreadable!r}. Return NumPy arrays, numbers, strings, bytes, or dicts, lists "
                "and tuples of them; or use prefetch(kind='thread')"
            ) from unreadable
        results: list[_Result] = [
            (True, Block(n, struct, finished))
            for n, finished, struct in self._readers[worker].read(slot, described, name, size)
        ]
        if failure is not None:
            unit, index, head, text, kind = failure
            pid = self._procs[worker].pid  # type: ignore[union-attr]
            error: Exception
            if text is None:  # catalog's own message (see _failure): it says it all
                error = StorageError(head) if kind == "StorageError" else PipelineError(head)
            else:
                error = PipelineError(
                    f"a process worker failed on unit {unit}: {head}\n\n"
                    f"Original traceback (in worker {worker}, pid {pid}):\n{text}",
                    index=index,
                )
            results.append((False, error))
        return results, seconds

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._starter.join()
        self._stop.set()
        for w, proc in enumerate(self._procs):
            if proc is not None:
                with contextlib.suppress(Exception):  # a closed or broken queue: it polls
                    self._inboxes[w].put(None)
        for w, proc in enumerate(self._procs):
            if proc is None:
                continue
            # one that never finished starting holds nothing: no need to wait for it
            proc.join(_JOIN_TIMEOUT if self._ready_events[w].is_set() else 0)
            if proc.is_alive():
                proc.terminate()
                proc.join(_JOIN_TIMEOUT)
            if proc.is_alive():
                proc.kill()
                proc.join()
        # Never read the queues here: a worker stopped in the middle of a write leaves half a
        # message, on which a read would block forever. What they name is swept instead.
        for q in (*self._inboxes, *self._outboxes):
            q.cancel_join_thread()
            q.close()
        for proc in self._procs:
            if proc is not None:
                proc.close()
        for reader in self._readers:
            reader.close()
        self._close_plan()
        shm.sweep(self._prefix)
