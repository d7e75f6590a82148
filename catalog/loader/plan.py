"""The work of one unit: read its records, run map/filter/cache, stack, finish batches.

A `Plan` is the picklable description a pipeline compiles to; workers (threads or processes)
each hold one and compute *units* (see `catalog.loader.sampler`). Everything a unit yields
is a pure function of the plan and the unit number, so output never depends on which worker
computed it.

Per-example randomness: a function mapped with ``with_rng=True`` gets a
``np.random.Generator`` seeded from (seed, epoch, source index, position of the map in the
chain): the same example in the same epoch always gets the same random numbers (those of
``np.random.default_rng([seed, epoch, index, position])``, made a unit at a time by
`catalog.loader.rngs`). Functions before `cache()` always see epoch 0 (their results are
kept for later epochs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from catalog.errors import PipelineError
from catalog.loader.rngs import generators
from catalog.loader.sampler import Sampler
from catalog.loader.stacking import PadSpec, pad_ragged, stack

__all__ = ["Block", "Filter", "Map", "MapBatch", "Plan"]

Array = np.ndarray[Any, Any]
_DROPPED = object()  # a filtered-out example in the cache


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


@dataclass(frozen=True)
class Map:
    """``fn(example)``, or ``fn(example, rng)`` with `with_rng`; returns the new example."""

    fn: Callable[..., Any]
    with_rng: bool = False


@dataclass(frozen=True)
class Filter:
    """Keeps the examples for which ``predicate(example)`` is true."""

    predicate: Callable[[Any], Any]


@dataclass(frozen=True)
class MapBatch:
    """``fn(batch)``, or ``fn(batch, rng)`` with `with_rng`; returns the new batch."""

    fn: Callable[..., Any]
    with_rng: bool = False


@dataclass
class Block:
    """What one unit yields: `n` examples as a column structure (`catalog.loader.stacking`),
    None when n is 0; `finished` when it is already a whole batch (padded, map_batch run)."""

    n: int
    struct: Any
    finished: bool = False


@dataclass
class Plan:
    """What a pipeline computes (see the module docstring). `cached_ops` run before
    `cache()` (and are kept per source index), `ops` after it."""

    source: Any
    sampler: Sampler
    seed: int = 0
    cached_ops: tuple[Map | Filter, ...] = ()
    cache: bool = False
    ops: tuple[Map | Filter, ...] = ()
    batch_size: int | None = None
    drop_remainder: bool = False
    pad: PadSpec = None
    batch_ops: tuple[MapBatch, ...] = ()
    _memo: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    #: Examples a thread is computing for the cache, and the lock guarding memo and claims:
    #: threads sharing this plan compute each cached example once (a unit of the next epoch
    #: waits for the one of this epoch that is computing it instead of computing it again).
    _claims: dict[int, threading.Event] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_memo"] = {}  # each process keeps its own cache
        del state["_claims"], state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _claims={}, _lock=threading.Lock())

    @property
    def has_filter(self) -> bool:
        return any(isinstance(op, Filter) for op in (*self.cached_ops, *self.ops))

    @property
    def aligned(self) -> bool:
        """Each unit is exactly one batch (batched, nothing filtered): workers finish it."""
        return self.batch_size is not None and not self.has_filter

    @property
    def reads_columns(self) -> bool:
        """Units are read as whole columns (`read_batch`): nothing runs per example."""
        return not self.cached_ops and not self.cache and not self.ops

    def warm(self) -> None:
        """Open (and map) the source's files now rather than in the first unit, when the
        source can (`DataSource.warm`)."""
        warm = getattr(self.source, "warm", None)
        if callable(warm):
            warm(batched=self.reads_columns)

    # -- one unit ---------------------------------------------------------------------------
    def compute(self, unit: int, window: list[Any] | None = None) -> Block:
        epoch, records = self.sampler.unit_records(unit, window)
        if not records.size:
            return Block(0, None)
        if self.reads_columns:
            struct = self._read_columns(records)
            n = len(records)
        else:
            examples = self._examples(epoch, records)
            n = len(examples)
            struct = stack(examples) if n else None
        if self.aligned:
            batch = unit % self.sampler.units_per_epoch
            if self.drop_remainder and n < (self.batch_size or 0):
                return Block(0, None, finished=True)
            return Block(n, self.finish(struct, epoch, batch), finished=True)
        return Block(n, struct)

    def finish(self, struct: Any, epoch: int, batch: int) -> Any:
        """A batch's final form: ragged columns padded, then every map_batch run."""
        struct = pad_ragged(struct, self.pad)
        for i, op in enumerate(self.batch_ops):
            try:
                if op.with_rng:
                    rng = np.random.default_rng([self.seed, epoch, batch, i, 1])
                    struct = op.fn(struct, rng)
                else:
                    struct = op.fn(struct)
            except Exception as error:
                raise _failed(f"map_batch({_name(op.fn)})", error, None, epoch, batch) from error
        return struct

    def _get(self, records: Sequence[int] | Array) -> list[Any]:
        source = self.source
        getitems = getattr(source, "__getitems__", None)
        if getitems is not None:
            result: list[Any] = getitems(records)
            return result
        return [source[int(i)] for i in records]

    def _read_columns(self, records: Array) -> Any:
        read_batch = getattr(self.source, "read_batch", None)
        if read_batch is not None:
            columns = read_batch(records)
            if columns is not None:
                return columns
        return stack(self._get(records))

    def _fill_cache(self, keys: list[int]) -> dict[int, Any]:
        """The memo, holding every example of `keys`: those no thread has or is computing are
        computed here; those another thread is computing are waited for (computed here if
        it failed). A thread waits only after computing its own claims, so never in a cycle."""
        with self._lock:
            mine = [i for i in dict.fromkeys(keys) if i not in self._memo and i not in self._claims]
            theirs = {i: self._claims[i] for i in keys if i in self._claims}
            done = threading.Event()
            self._claims.update(dict.fromkeys(mine, done))
        try:
            if mine:
                _apply_cached(self, mine)
        finally:
            with self._lock:
                for index in mine:
                    del self._claims[index]
            done.set()
        for event in set(theirs.values()):
            event.wait()
        failed = [i for i in theirs if i not in self._memo]  # its thread raised: try here
        if failed:
            _apply_cached(self, failed)
        return self._memo

    def _examples(self, epoch: int, records: Array) -> list[Any]:
        keys: list[int] = records.tolist()
        out: list[Any] = []
        if not self.cache:
            ops = (*self.cached_ops, *self.ops)
            rngs = _generators(ops, self.seed, epoch, keys, 0)
            for j, (index, example) in enumerate(zip(keys, self._get(keys), strict=True)):
                value = _apply(ops, example, epoch, index, rngs, j)
                if value is not _DROPPED:
                    out.append(value)
            return out
        memo = self._fill_cache(keys)
        offset = len(self.cached_ops)
        rngs = _generators(self.ops, self.seed, epoch, keys, offset)
        for j, index in enumerate(keys):
            value = memo[index]
            if value is not _DROPPED and self.ops:
                value = _apply(self.ops, value, epoch, index, rngs, j)
            if value is not _DROPPED:
                out.append(value)
        return out


def _apply_cached(plan: Plan, keys: list[int]) -> None:
    """Compute into `plan`'s memo the cached part of the examples `keys`."""
    rngs = _generators(plan.cached_ops, plan.seed, 0, keys, 0)
    for j, (index, example) in enumerate(zip(keys, plan._get(keys), strict=True)):
        plan._memo[index] = _apply(plan.cached_ops, example, 0, index, rngs, j)


def _generators(
    ops: Sequence[Map | Filter], seed: int, epoch: int, keys: list[int], offset: int
) -> list[list[np.random.Generator] | None]:
    """For each op, the generators of the examples `keys` (`catalog.loader.rngs`: those of
    ``default_rng([seed, epoch, index, position])``, made together), None without with_rng."""
    return [
        generators(seed, epoch, keys, i) if isinstance(op, Map) and op.with_rng else None
        for i, op in enumerate(ops, offset)
    ]


def _apply(
    ops: Sequence[Map | Filter],
    example: Any,
    epoch: int,
    index: int,
    rngs: Sequence[list[np.random.Generator] | None],
    j: int,
) -> Any:
    """Run `ops` on one example, the `j`-th of its unit (`rngs[k][j]` is its generator for
    the k-th op); _DROPPED when a filter drops it."""
    for op, column in zip(ops, rngs, strict=True):
        try:
            if isinstance(op, Filter):
                if not op.predicate(example):
                    return _DROPPED
            elif column is not None:
                example = op.fn(example, column[j])
            else:
                example = op.fn(example)
        except Exception as error:
            kind = "filter" if isinstance(op, Filter) else "map"
            fn = op.predicate if isinstance(op, Filter) else op.fn
            raise _failed(f"{kind}({_name(fn)})", error, index, epoch, None) from error
    return example


def _failed(
    what: str, error: BaseException, index: int | None, epoch: int, batch: int | None
) -> PipelineError:
    where = f"example {index}" if index is not None else f"batch {batch}"
    message = (
        f"{what} failed on {where} of epoch {epoch}: {type(error).__name__}: {error}"
        if not isinstance(error, PipelineError)
        else str(error)
    )
    return PipelineError(message, index=index)
