"""Iterating a pipeline: examples or batches in order, and a state to resume from.

The iterator takes the blocks of consecutive units from an executor (inline, threads or
processes; `catalog.loader.threads`, `catalog.loader.processes`) and hands out

- examples, one row of a block at a time (no `batch`);
- the blocks themselves when each unit is one batch (`batch` and no `filter`): workers have
  stacked, padded and run map_batch already;
- batches cut from the surviving examples of consecutive units (`batch` after `filter`).

Batches never span two epochs: the last batch of an epoch is short (or dropped with
``drop_remainder``). The state is ``{"unit": u, "skip": s, "batch": b}``: the next output
starts at row `s` of unit `u`, and is batch `b` of its epoch. Since every unit is a pure
function of the pipeline, `Pipeline.iterator(state)` continues exactly, with any worker count.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any

from catalog.loader.plan import Block, Plan
from catalog.loader.stacking import concat, row, take
from catalog.loader.threads import Executor

__all__ = ["PipelineIterator", "State"]

State = dict[str, int]
STATE_KEYS = ("unit", "skip", "batch")


def check_state(state: Any) -> State:
    """`state` as a State, or a ValueError saying what is wrong with it."""
    if (
        not isinstance(state, dict)
        or sorted(state) != sorted(STATE_KEYS)
        or not all(type(state[k]) is int and state[k] >= 0 for k in STATE_KEYS)
    ):
        raise ValueError(
            f"a pipeline state is a dict of non-negative ints {list(STATE_KEYS)}, as "
            f"state_dict() returns, got {state!r}"
        )
    return {k: state[k] for k in STATE_KEYS}


class PipelineIterator(Iterator[Any]):
    """What `iter(pipeline)` returns: examples or batches, plus `state_dict()` and `close()`.

    Made by ``iter(pipeline)`` or ``pipeline.iterator(state)``, never by hand.

    Args:
        plan: the pipeline's plan of work.
        state: where to start (``{"unit", "skip", "batch"}``, as `state_dict` returns).
        executor: makes the workers' executor for a number of workers.

    Raises:
        PipelineError: (from ``next``) a pipeline function or a worker failed.
    """

    def __init__(self, plan: Plan, state: State, executor: Callable[[int], Executor]) -> None:
        self._plan = plan
        self._unit, self._skip, self._batch = state["unit"], state["skip"], state["batch"]
        self._stop = plan.sampler.num_units
        self._per_epoch = plan.sampler.units_per_epoch
        self._block: Block | None = None
        self._executor: Executor | None = None
        self._make_executor = executor
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def state_dict(self) -> State:
        """Where the next output starts: a small JSON-serialisable dict of ints."""
        return {"unit": self._unit, "skip": self._skip, "batch": self._batch}

    @property
    def epoch(self) -> int:
        """The epoch the next output comes from."""
        return self._unit // self._per_epoch if self._per_epoch else 0

    def _exhausted(self) -> bool:
        return self._stop is not None and self._unit >= self._stop

    def _current(self) -> Block:
        if self._block is None:
            if self._executor is None:
                self._executor = self._make_executor(self._unit)
                self._finalizer = weakref.finalize(self, self._executor.close)
            self._block = self._executor.get()
        return self._block

    def _advance(self) -> bool:
        """Move to the next unit; True when that ends an epoch."""
        self._unit += 1
        self._skip = 0
        self._block = None
        return self._unit % self._per_epoch == 0

    def __next__(self) -> Any:
        try:
            return self._next()
        except BaseException:  # the end, an error or Ctrl-C: stop the workers first
            self.close()
            raise

    def _next(self) -> Any:
        plan = self._plan
        if plan.batch_size is None:
            return self._next_example()
        if plan.aligned:
            while not self._exhausted():
                block = self._current()
                self._batch = (self._unit + 1) % self._per_epoch
                self._advance()
                if block.n:
                    return block.struct
            raise StopIteration
        return self._next_rebatched(plan.batch_size)

    def _next_example(self) -> Any:
        while not self._exhausted():
            block = self._current()
            if self._skip < block.n:
                example = row(block.struct, self._skip)
                self._skip += 1
                if self._skip == block.n:
                    self._advance()
                return example
            self._advance()
        raise StopIteration

    def _next_rebatched(self, size: int) -> Any:
        plan = self._plan
        while not self._exhausted():
            parts, count, epoch, batch = [], 0, self.epoch, self._batch
            epoch_ended = False
            while count < size and not self._exhausted():
                block = self._current()
                got = min(size - count, block.n - self._skip)
                if got > 0:
                    parts.append(take(block.struct, self._skip, self._skip + got))
                    count += got
                    self._skip += got
                if self._skip >= block.n and self._advance():
                    epoch_ended = True
                    break
            self._batch = 0 if epoch_ended else batch + 1
            if count and (count == size or not plan.drop_remainder):
                return plan.finish(concat(parts), epoch, batch)
            if not epoch_ended:
                self._batch = batch  # nothing was emitted
        raise StopIteration

    def close(self) -> None:
        """Stop the workers and release their shared memory (also on garbage collection)."""
        self._block = None
        if self._finalizer is not None:
            self._finalizer()
        self._executor = None
        self._finalizer = None

    @property
    def worker_pids(self) -> list[int]:
        """The process ids of process workers (empty for threads or none)."""
        return list(getattr(self._executor, "pids", []))

    def __enter__(self) -> PipelineIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
