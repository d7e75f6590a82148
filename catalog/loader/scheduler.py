"""Who computes which unit: the consumer itself, or workers it sends orders to.

`Scheduler` is the executor behind ``prefetch(N)`` for both kinds of workers. It hands out
units in order and is *caller-runs*: the consumer sends ranges of units ahead of itself to
its workers as orders (at most `depth` outstanding per worker), and when the unit it needs
has been given to no worker, it computes that unit itself rather than waiting. Workers
(`catalog.loader.threads.ThreadWorkers`, `catalog.loader.processes.ProcessWorkers`) only
compute what they are told and send the blocks back in order. Every unit is a pure function
of its number, so who computed it never shows in the output: the batches, and the state an
iterator resumes from, are the same with any number and kind of workers.

Workers are not always worth having: a unit that takes 80 microseconds of GIL-bound Python
is made slower by threads (they fight over the GIL) and by processes (moving the batch costs
as much as making it). So the `Tuner` measures the rate at which the consumer gets units and
climbs to the number of workers (0 to N) that gives the most: it measures a window of units
at the neighbouring levels and at 0, keeps the fewest workers within a margin of the fastest,
holds that for a growing number of windows, and looks again. The tuner belongs to the
pipeline, so later iterators (the next epoch) start from what earlier ones learned; so do
the workers, which the pipeline keeps between iterators (`Pool`). Orders carry several units
when units are quick, so that the cost of an order (a queue hand-off, a copy through shared
memory) is spread over milliseconds of work. The tuner only measures what the consumer sees;
its outputs never depend on it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from catalog.loader.plan import Block, Plan

__all__ = ["Pool", "Scheduler", "Tuner", "Workers"]

Result = tuple[bool, Any]  # (True, Block) or (False, the exception to raise)


class Workers(Protocol):
    """Workers that compute orders of units on their own copy of the plan."""

    size: int  # how many workers there are
    order_seconds: float  # the work one order should take (amortises its cost)

    def ready(self, wait: bool = False) -> int:
        """How many workers (0, 1, ...) can take orders now (processes start in the
        background); with `wait`, at least one. Raises `PipelineError` when one died."""

    def send(self, worker: int, first: int, count: int) -> None:
        """Order `worker` to compute units ``first .. first + count - 1``."""

    def receive(self, worker: int) -> tuple[list[Result], float]:
        """The results of `worker`'s oldest order, in unit order (ending early at the first
        failure), and the seconds the worker spent on them. Raises `PipelineError` when the
        worker died."""

    def close(self) -> None:
        """Stop the workers and release what they hold; safe to call twice."""


class Tuner:
    """Chooses how many workers get orders by measuring the consumer's rate (see the module
    docstring). Shared by the iterators of one pipeline; used by one consumer at a time.

    A round measures one window at the current level (home) and one at each neighbour (one
    worker fewer, one more, and none, in that order). The fewest workers within `MARGIN` of
    the fastest rate win (a tie goes to fewer: they cost less). A new winner becomes home and
    its own neighbours are measured at once (climbing); when home wins, it is kept for a hold
    of `FIRST_HOLD` windows, doubled each time it wins again (up to `MAX_HOLD`), before the
    next round.

    With `alike` workers (threads: a worker computes a unit exactly as the consumer would,
    and hands it over in microseconds), none is not measured when one worker fewer than home
    was already clearly slower (by more than the margin): the consumer alone is then about
    as fast as one worker it waits on, so no faster than that level, and its window would be
    the dearest of the round (on a photo pipeline whose units take tens of milliseconds, the
    consumer alone runs at half the speed of two threads). Process workers are not alike:
    each also copies its output through shared memory, which the consumer alone does not,
    so none may be much faster than one of them: it is always measured."""

    WINDOW_SECONDS = 0.03  # a measurement window lasts at least this long
    MIN_WINDOW_UNITS = 4
    MARGIN = 1.10  # a rate must beat this much to win over fewer workers (windows are noisy)
    FIRST_HOLD, MAX_HOLD = 4, 256  # windows: at most ~8 s between rounds of 30 ms windows

    def __init__(
        self, workers: int, fixed: bool = False, alike: bool = False, start: int | None = None
    ) -> None:
        """`start`: the level first measured (default `workers`: what the user asked for,
        until measured otherwise; the automatic default starts from none and climbs)."""
        self.workers, self.fixed, self.alike = workers, fixed, alike
        start = workers if start is None or fixed else start
        self.level = start
        self._home = start
        self._probes = self._neighbours(start)
        self._rates: dict[int, float] = {}  # level -> units per second, this round
        self._hold = 0  # windows left before the next round
        self._hold_length = self.FIRST_HOLD
        self._lock = threading.Lock()

    def _neighbours(self, level: int) -> list[int]:
        """The levels to compare with `level`: one fewer and one more worker, then none at
        all (one worker can be the worst of all: the consumer waits on it alone)."""
        near = [n for n in (level - 1, level + 1) if 0 <= n <= self.workers]
        return near + ([0] if level > 0 and 0 not in near else [])

    def _needed(self, level: int) -> bool:
        """Whether `level` is still worth a window this round (see the class docstring)."""
        if level != 0 or self._home < 2 or not self.alike:
            return True
        home, fewer = self._rates.get(self._home), self._rates.get(self._home - 1)
        return home is None or fewer is None or fewer * self.MARGIN >= home

    def window_units(self, unit_seconds: float) -> int:
        if unit_seconds <= 0:
            return self.MIN_WINDOW_UNITS
        return max(self.MIN_WINDOW_UNITS, math.ceil(self.WINDOW_SECONDS / unit_seconds))

    def measured(self, rate: float) -> None:
        """One window at the current level delivered `rate` units per second."""
        with self._lock:
            if self.fixed:
                return
            if self._hold > 0:
                self._hold -= 1
                return
            self._rates[self.level] = rate
            self._probes = [n for n in self._probes if self._needed(n)]
            while not self._probes:
                # the fewest workers within the margin of the fastest: ties cost less
                fastest = max(self._rates.values())
                best = min(n for n, r in self._rates.items() if r * self.MARGIN >= fastest)
                if best == self._home:
                    self.level, self._hold = self._home, self._hold_length
                    self._hold_length = min(self._hold_length * 2, self.MAX_HOLD)
                    self._rates, self._probes = {}, self._neighbours(self._home)
                    return
                self._home, self._hold_length = best, self.FIRST_HOLD  # climb on
                self._probes = [
                    n for n in self._neighbours(best) if n not in self._rates and self._needed(n)
                ]
            self.level = self._probes.pop(0)


class Pool:
    """The workers a pipeline keeps between its iterators, as DataLoader's persistent
    workers: an iterator takes them, and gives them back when it ends (or closes them after
    an error). `close` stops the idle ones; a pool that was closed closes what it gets."""

    def __init__(self) -> None:
        self._idle: Workers | None = None
        self._closed = False
        self._lock = threading.Lock()

    def take(self, make: Callable[[], Workers]) -> Workers:
        with self._lock:
            workers, self._idle = self._idle, None
        return workers if workers is not None else make()

    def give(self, workers: Workers, healthy: bool) -> None:
        with self._lock:
            if healthy and not self._closed and self._idle is None:
                self._idle = workers
                return
        workers.close()

    def close(self) -> None:
        with self._lock:
            workers, self._idle, self._closed = self._idle, None, True
        if workers is not None:
            workers.close()


class Scheduler:
    """Units ``start, start + 1, ...`` (below `stop`) in order, computed by the consumer and
    by `workers` as the `tuner` decides (see the module docstring). A fixed tuner makes it a
    plain prefetcher: the workers compute every unit and the consumer waits for them."""

    MAX_ORDER_UNITS = 16
    TIME_EVERY = 8  # time one in this many of the units the caller computes

    def __init__(
        self,
        plan: Plan,
        start: int,
        stop: int | None,
        workers: Workers,
        tuner: Tuner,
        depth: int = 2,
        release: Callable[[Workers, bool], None] | None = None,
    ) -> None:
        self._plan, self._stop, self._workers, self._tuner = plan, stop, workers, tuner
        self._depth = depth
        self._release = release  # gets the workers back on close (else they are closed)
        self._broken = self._closed = False
        self._next = start  # the unit `get` returns next
        self._claimed = start  # every unit below this is ordered or computed
        self._orders: list[deque[tuple[int, int]]] = [deque() for _ in range(workers.size)]
        self._ready: dict[int, Result] = {}
        self._window: list[Any] = [None]  # the consumer's sampler window
        self._unit_seconds = 0.0  # how long one unit takes (a moving average)
        # the measurement window: units from `_measure_from` on, at the level it started at
        self._measure_from, self._measure_level = start, -1
        self._measure_start, self._measured, self._measure_units = 0.0, 0, 0
        self.computed = {"caller": 0, "workers": 0}  # units handed out, by who computed them
        self._solo = 0  # units `get` computes in the caller without the bookkeeping of `_get`

    @property
    def pids(self) -> list[int]:
        return list(getattr(self._workers, "pids", []))

    # -- ordering ---------------------------------------------------------------------------
    def _level(self) -> int:
        return min(self._tuner.level, self._workers.ready())

    def _order_units(self) -> int:
        if self._unit_seconds <= 0:
            return 1
        wanted = self._workers.order_seconds / self._unit_seconds
        return max(1, min(self.MAX_ORDER_UNITS, int(wanted)))

    def _top_up(self, level: int) -> None:
        """Send orders for the next units to workers 0 .. level - 1 that have room, one order
        per worker in turn: the units the consumer needs next are then spread over the
        workers, each computing its oldest order, instead of queued behind each other on one
        while another works further ahead (and then idles, its orders done but not yet
        collected)."""
        if not level:
            return
        count = self._order_units()
        for slot in range(self._depth):
            for worker in range(level):
                orders = self._orders[worker]
                if len(orders) > slot:
                    continue
                first = self._claimed
                n = count if self._stop is None else min(count, self._stop - first)
                if n <= 0:
                    return
                self._workers.send(worker, first, n)
                orders.append((first, n))
                self._claimed = first + n

    def _owner(self, unit: int) -> int | None:
        for worker, orders in enumerate(self._orders):
            if orders and orders[0][0] <= unit < orders[0][0] + orders[0][1]:
                return worker
        return None

    def _collect(self, worker: int) -> None:
        first, n = self._orders[worker].popleft()
        results, seconds = self._workers.receive(worker)
        for i, result in enumerate(results):
            self._ready[first + i] = result
        if len(results) < n and (not results or results[-1][0]):
            raise RuntimeError(f"a worker returned {len(results)} of {n} units")  # a bug
        if results and results[-1][0]:
            self._learn(seconds / len(results))

    def _learn(self, unit_seconds: float) -> None:
        old = self._unit_seconds
        self._unit_seconds = unit_seconds if old <= 0 else 0.8 * old + 0.2 * unit_seconds

    # -- measuring --------------------------------------------------------------------------
    def _tick(self, unit: int, level: int) -> None:
        """`unit` was handed out: count it in the window if it was ordered under the level
        being measured; close the window when it is long enough."""
        if level != self._measure_level or level != self._tuner.level:
            # the level changed: measure from the first unit ordered after the change
            self._measure_level, self._measure_from, self._measured = level, self._claimed, 0
            return
        if unit < self._measure_from:
            return
        if self._measured == 0:
            self._measure_start = time.perf_counter()
            self._measure_units = self._tuner.window_units(self._unit_seconds)
        self._measured += 1
        if self._measured > self._measure_units:
            seconds = time.perf_counter() - self._measure_start
            rate = (self._measured - 1) / seconds
            if seconds >= self._tuner.WINDOW_SECONDS / 2:
                self._tuner.measured(rate)
                self._measure_from, self._measured = unit + 1, 0
                return
            # sized from a unit slower than the rest (the first of a pipeline, say): as long
            # as its rate says, so that a window of quick units is not a few milliseconds
            self._measure_units = self._tuner.window_units(seconds / (self._measured - 1))
        if not level and self._claimed == self._next and not self._ready:
            # no worker has anything: the rest of this window goes the short way (`get`),
            # up to the unit that closes it
            self._solo = self._measure_units - self._measured

    # -- the executor -----------------------------------------------------------------------
    def get(self) -> Block:
        if self._solo:  # the caller alone, inside a window: nothing else to decide or count
            self._solo -= 1
            want = self._next
            self._next = self._claimed = want + 1
            self._measured += 1
            self.computed["caller"] += 1
            try:
                return self._plan.compute(want, self._window)
            except BaseException:
                self._broken = True
                raise
        try:
            return self._get()
        except BaseException:
            self._broken = True  # an error, a dead worker or Ctrl-C: the workers go too
            raise

    def _get(self) -> Block:
        want = self._next
        level = self._level()
        result = self._ready.pop(want, None) if self._ready else None
        if result is None:
            worker = self._owner(want) if want < self._claimed else None
            if worker is None and self._tuner.fixed:
                self._workers.ready(wait=True)
                level = self._level()
                self._top_up(level)
                worker = self._owner(want)
            if worker is None:  # nobody has it: compute it here, the workers take what follows
                self._claimed = want + 1
                self._top_up(level)
                if self.computed["caller"] % self.TIME_EVERY:
                    result = self._compute(want)
                else:  # how long a unit takes, now and then (it sizes orders and windows)
                    began = time.perf_counter()
                    result = self._compute(want)
                    self._learn(time.perf_counter() - began)
                self.computed["caller"] += 1
            else:
                while want not in self._ready:
                    self._collect(worker)
                result = self._ready.pop(want)
                self.computed["workers"] += 1
        else:
            self.computed["workers"] += 1
        self._next = want + 1
        self._top_up(level)
        self._tick(want, level)
        ok, value = result
        if not ok:
            raise value
        block: Block = value
        return block

    def _compute(self, unit: int) -> Result:
        try:
            return True, self._plan.compute(unit, self._window)
        except Exception as error:
            return False, error

    def close(self) -> None:
        """Give the workers back (to the pipeline's `Pool`) once the orders they are on are
        done and discarded, or close them when something went wrong."""
        if self._closed:
            return
        self._closed = True
        release = self._release or (lambda workers, healthy: workers.close())
        if not self._broken:
            try:
                for worker, orders in enumerate(self._orders):
                    while orders:
                        self._collect(worker)
            except Exception:  # a worker died meanwhile: nothing the caller still wants
                self._broken = True
            except BaseException:  # Ctrl-C while waiting: close them, and let it go up
                self._ready.clear()
                release(self._workers, False)
                raise
        self._ready.clear()
        release(self._workers, not self._broken)
