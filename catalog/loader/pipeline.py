"""Pipeline: an immutable chain from a random-access source to examples or batches.

>>> import numpy as np
>>> p = pipeline(np.arange(10)).shuffle(seed=0).batch(4)
>>> [len(b) for b in p]
[4, 4, 2]

Each method returns a new Pipeline. The *sampler* methods (`shuffle`, `repeat`, `shard`) say
which source index each position reads and hold for the whole chain, wherever they are
called (but before `batch`); the *transformations* (`map`, `filter`, `cache`, `batch`,
`map_batch`) run in the order called; `prefetch` says who computes (see `iterator`); without
it, `catalog.loader.autotune` does: tuned worker threads, one per core.
The output is a pure function of the pipeline and (epoch, position): the same for 0 or N
workers, threads or processes, and for a run resumed from `state_dict()`.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from catalog.loader.autotune import auto_workers, reads_safely_in_threads
from catalog.loader.iterator import PipelineIterator, State, check_state
from catalog.loader.plan import Filter, Map, MapBatch, Plan
from catalog.loader.sampler import Sampler
from catalog.loader.scheduler import Pool, Scheduler, Tuner, Workers
from catalog.loader.stacking import PadSpec
from catalog.loader.start_methods import DEFAULT_START_METHOD, START_METHODS
from catalog.loader.threads import Executor, Inline, ThreadWorkers

__all__ = ["Pipeline", "pipeline"]

ELEMENT_CHUNK = 128  # examples per unit when the pipeline does not batch
Kind = Literal["thread", "process"]


def _check_int(name: str, value: Any, low: int) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return value


@dataclass(frozen=True)
class _Prefetch:
    workers: int | None = None  # None: automatic (`catalog.loader.autotune`)
    kind: Kind = "thread"
    depth: int = 2
    start_method: str = DEFAULT_START_METHOD
    autotune: bool = True


@dataclass(frozen=True)
class Pipeline:
    """See the module docstring; make one with `catalog.pipeline(source)`.

    A pipeline is immutable: every method (``shuffle``, ``repeat``, ``shard``, ``map``,
    ``filter``, ``cache``, ``batch``, ``map_batch``, ``prefetch``) returns a new one.
    Iterating gives examples or batches (a `PipelineIterator`); ``len()`` counts them.

    Args:
        source: the random-access source (anything with ``len`` and ``[i]``).
        seed: the shuffle seed (``shuffle(seed)``), None when not shuffled.
        num_epochs: epochs to run (``repeat``); None repeats forever.
        shard_spec: ``(index, count, drop_remainder)`` of ``shard``.
        cached_ops: the maps and filters before ``cache()``.
        cache_after: whether ``cache()`` keeps the first epoch's examples.
        ops: the maps and filters on examples (after any cache).
        batch_size: the ``batch`` size, None without batching.
        drop_remainder: whether ``batch`` drops a last, smaller batch.
        pad: how ``batch`` pads ragged arrays (a number or per feature path).
        batch_ops: the ``map_batch`` functions.
        prefetch_spec: the workers of ``prefetch`` (count, kind, depth, autotune).
        rng_seed: seeds ``map(..., with_rng=True)`` of an unshuffled pipeline. All but
            `source` are set by the methods, never by hand: `catalog.pipeline` makes one.

    Raises:
        ValueError: (from the methods) a bad argument or an order that does not work, such
            as ``map_batch()`` before ``batch()``.
        PipelineError: (while iterating) a function given to ``map``/``filter``/``map_batch``
            or a worker failed.
    """

    source: Any
    seed: int | None = None
    num_epochs: int | None = 1
    shard_spec: tuple[int, int, bool] = (0, 1, False)
    cached_ops: tuple[Map | Filter, ...] = ()
    cache_after: bool = False
    ops: tuple[Map | Filter, ...] = ()
    batch_size: int | None = None
    drop_remainder: bool = False
    pad: PadSpec = None
    batch_ops: tuple[MapBatch, ...] = ()
    prefetch_spec: _Prefetch = field(default_factory=_Prefetch)
    rng_seed: int = 0
    # what this pipeline's iterators learned about how many workers pay (not copied by
    # the methods that make a new pipeline: another chain is other work)
    _tuner: list[Tuner] = field(default_factory=list, init=False, compare=False, repr=False)
    # the workers kept between iterators (closed with the pipeline, or by close())
    _pool: list[Pool] = field(default_factory=list, init=False, compare=False, repr=False)

    # -- sampler ----------------------------------------------------------------------------
    def _sampler_call(self, what: str) -> None:
        if self.batch_size is not None:
            raise ValueError(
                f"{what}() after batch() would act on batches; call it before batch() "
                "(the sampler decides the order of examples before they are batched)"
            )

    def shuffle(self, seed: int) -> Pipeline:
        """A new global order in every epoch: a permutation of the (shard's) source indices
        computed from (seed, epoch); no buffer, no stored permutation."""
        self._sampler_call("shuffle")
        _check_int("shuffle seed", seed, 0)
        return replace(self, seed=seed, rng_seed=seed)

    def repeat(self, num_epochs: int | None = None) -> Pipeline:
        """Read the source `num_epochs` times (None: forever), shuffled anew each epoch."""
        self._sampler_call("repeat")
        if num_epochs is not None:
            _check_int("num_epochs", num_epochs, 1)
        return replace(self, num_epochs=num_epochs)

    def shard(self, index: int, count: int, drop_remainder: bool = False) -> Pipeline:
        """Only shard `index` of `count`: a contiguous block of the source's indices. Shards
        are disjoint and cover the source; with `drop_remainder` all have ``len // count``."""
        self._sampler_call("shard")
        _check_int("shard count", count, 1)
        if type(index) is not int or not 0 <= index < count:
            raise ValueError(f"shard index must be an int in [0, {count}), got {index!r}")
        return replace(self, shard_spec=(index, count, bool(drop_remainder)))

    # -- transformations ---------------------------------------------------------------------
    def _add(self, op: Map | Filter, what: str) -> Pipeline:
        if self.batch_size is not None:
            raise ValueError(f"{what}() after batch() acts on examples; use map_batch()")
        if self.cache_after:
            return replace(self, ops=(*self.ops, op))
        return replace(self, cached_ops=(*self.cached_ops, op))

    def map(self, fn: Callable[..., Any], *, with_rng: bool = False) -> Pipeline:
        """``fn(example)`` for each example; with `with_rng`, ``fn(example, rng)`` where rng
        is a ``np.random.Generator`` determined by (seed, epoch, source index). `fn` must not
        modify its argument in place (it may be a cached example)."""
        return self._add(Map(fn, with_rng), "map")

    def filter(self, predicate: Callable[[Any], Any]) -> Pipeline:
        """Keep the examples for which ``predicate(example)`` is true."""
        return self._add(Filter(predicate), "filter")

    def cache(self) -> Pipeline:
        """Keep each example as the chain so far made it in the first epoch, in memory (in
        each process worker's memory, with process workers); later epochs reuse it."""
        if self.cache_after:
            raise ValueError("cache() was already called on this pipeline")
        if self.batch_size is not None:
            raise ValueError("cache() after batch() is not supported; cache examples first")
        return replace(self, cache_after=True)

    def batch(self, size: int, drop_remainder: bool = False, *, pad: PadSpec = None) -> Pipeline:
        """Examples become batches: one structure of stacked arrays (`catalog.loader.
        stacking` says how ragged values are batched; `pad` pads them). Batches never span
        two epochs."""
        if self.batch_size is not None:
            raise ValueError("batch() was already called on this pipeline")
        _check_int("batch size", size, 1)
        return replace(self, batch_size=size, drop_remainder=bool(drop_remainder), pad=pad)

    def map_batch(self, fn: Callable[..., Any], *, with_rng: bool = False) -> Pipeline:
        """``fn(batch)`` (or ``fn(batch, rng)``) for each batch."""
        if self.batch_size is None:
            raise ValueError("map_batch() needs batch() before it; use map() for examples")
        return replace(self, batch_ops=(*self.batch_ops, MapBatch(fn, with_rng)))

    def prefetch(
        self,
        workers: int = 1,
        kind: Kind = "thread",
        *,
        depth: int = 2,
        start_method: str = DEFAULT_START_METHOD,
        autotune: bool = True,
    ) -> Pipeline:
        """Compute ahead in `workers` threads or processes, each at most `depth` orders of
        units ahead; 0 workers computes in the caller's thread. Processes are started with
        `start_method` ("forkserver" where available, else "spawn"; never fork) and need
        picklable functions.

        With `autotune` (the default) the caller computes a unit itself when no worker has
        it, and the number of workers given work is tuned between 0 and `workers` to what
        delivers batches fastest (`catalog.loader.scheduler`): workers never make a
        pipeline slower than computing it in the caller. ``autotune=False`` keeps all
        `workers` busy and the caller only waits for them. The output is the same either way.

        Without a call to `prefetch` a pipeline runs as ``prefetch(auto_workers(),
        "thread")``: one thread per usable core, tuned, for a source that is safe to read in
        threads (`catalog.loader.autotune` says which, and why); ``prefetch(0)`` computes in
        the caller only."""
        _check_int("workers", workers, 0)
        _check_int("depth", depth, 1)
        if kind not in ("thread", "process"):
            raise ValueError(f"prefetch kind must be 'thread' or 'process', got {kind!r}")
        if start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {START_METHODS}, got {start_method!r}")
        spec = _Prefetch(workers, kind, depth, start_method, autotune)
        return replace(self, prefetch_spec=spec)

    # -- running ----------------------------------------------------------------------------
    def plan(self) -> Plan:
        """The picklable description workers compute from."""
        sampler = Sampler(
            num_records=len(self.source),
            seed=self.seed,
            num_epochs=self.num_epochs,
            shard=self.shard_spec,
            chunk=self.batch_size or ELEMENT_CHUNK,
        )
        return Plan(
            source=self.source,
            sampler=sampler,
            seed=self.rng_seed,
            cached_ops=self.cached_ops,
            cache=self.cache_after,
            ops=self.ops,
            batch_size=self.batch_size,
            drop_remainder=self.drop_remainder,
            pad=self.pad,
            batch_ops=self.batch_ops,
        )

    def iterator(self, state: State | None = None) -> PipelineIterator:
        """An iterator from the start, or continuing exactly where `state` (from
        `state_dict()` of an iterator of an equal pipeline) was taken."""
        state = check_state(state) if state is not None else {"unit": 0, "skip": 0, "batch": 0}
        plan = self.plan()
        spec = self.prefetch_spec
        workers = spec.workers
        if workers is None:  # no prefetch(): the automatic default
            workers = auto_workers() if reads_safely_in_threads(self.source) else 0
        stop = plan.sampler.num_units

        if workers and not self._tuner:
            alike = spec.kind == "thread"  # see Tuner
            # the automatic default starts from the caller alone (no thread has a cost until
            # a window shows one pays: an epoch of quick units is over before a tuner at two
            # threads would have settled on none), a `prefetch(N)` from the N asked for
            start = 0 if spec.workers is None else workers
            self._tuner.append(Tuner(workers, fixed=not spec.autotune, alike=alike, start=start))
            self._pool.append(Pool())
            weakref.finalize(self, self._pool[0].close)
        # the iterator holds the tuner and the pool, not this pipeline: a pipeline that is
        # dropped stops the workers of its pool (an iterator's close stops them too, then)
        tuner, pool = (self._tuner[0], self._pool[0]) if workers else (None, None)

        def make_workers() -> Workers:
            if spec.kind == "thread":
                return ThreadWorkers(plan, workers)
            # multiprocessing only when processes are asked for: `import catalog` stays light
            from catalog.loader.processes import ProcessWorkers

            return ProcessWorkers(plan, workers, depth=spec.depth, start_method=spec.start_method)

        def executor(start: int) -> Executor:
            if tuner is None or pool is None:
                return Inline(plan, start)
            running = pool.take(make_workers)
            return Scheduler(plan, start, stop, running, tuner, spec.depth, pool.give)

        return PipelineIterator(plan, state, executor)

    def __iter__(self) -> Iterator[Any]:
        return self.iterator()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its workers and what its tuner learned (a copy starts afresh)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_tuner", "_pool")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _tuner=[], _pool=[])

    def close(self) -> None:
        """Stop the workers this pipeline keeps between its iterators (they also stop when
        the pipeline is garbage-collected, and at exit). Iterating again starts new ones."""
        if self._pool:
            pool = self._pool.pop()
            self._tuner.clear()
            pool.close()

    def batches_per_epoch(self) -> int | None:
        """Batches in one epoch when that is known before reading (no filter), else None."""
        if any(isinstance(op, Filter) for op in (*self.cached_ops, *self.ops)):
            return None
        n = Sampler(len(self.source), shard=self.shard_spec).epoch_size
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_remainder else math.ceil(n / self.batch_size)

    def __len__(self) -> int:
        """How many outputs (batches, or examples without `batch`) one iteration gives, over
        all its epochs, as ``len()`` of a tf.data dataset or a DataLoader: for progress bars
        and learning-rate schedules. A TypeError when that is not known before reading: a
        pipeline that repeats forever, or filters (`batches_per_epoch` is None then)."""
        per_epoch = self.batches_per_epoch()
        if self.num_epochs is None:
            raise TypeError(
                "this pipeline repeats forever, so it has no length; batches_per_epoch() gives "
                "one epoch's"
            )
        if per_epoch is None:
            raise TypeError(
                "this pipeline filters examples, so its length is known only after reading; "
                "count the outputs of one iteration instead"
            )
        return per_epoch * self.num_epochs

    def __bool__(self) -> bool:
        """Always true, as any object: ``if pipeline`` does not ask for its length."""
        return True

    def __repr__(self) -> str:
        parts = [f"pipeline({type(self.source).__name__} of {len(self.source)})"]
        if self.shard_spec != (0, 1, False):
            parts.append("shard({}, {}, drop_remainder={})".format(*self.shard_spec))
        if self.seed is not None:
            parts.append(f"shuffle({self.seed})")
        if self.num_epochs != 1:
            parts.append(f"repeat({self.num_epochs})")
        for op in self.cached_ops:
            parts.append(_describe(op))
        if self.cache_after:
            parts.append("cache()")
        parts.extend(_describe(op) for op in self.ops)
        if self.batch_size is not None:
            parts.append(f"batch({self.batch_size}, drop_remainder={self.drop_remainder})")
        parts.extend(_describe(op) for op in self.batch_ops)
        if self.prefetch_spec.workers:
            parts.append(f"prefetch({self.prefetch_spec.workers}, {self.prefetch_spec.kind!r})")
        return ".".join(parts)


def _describe(op: Map | Filter | MapBatch) -> str:
    kind = {Map: "map", Filter: "filter", MapBatch: "map_batch"}[type(op)]
    fn = op.predicate if isinstance(op, Filter) else op.fn
    return f"{kind}({getattr(fn, '__qualname__', repr(fn))})"


def pipeline(source: Sequence[Any], *, seed: int = 0) -> Pipeline:
    """A pipeline over `source`: anything with ``len`` and ``[i]`` (a `DataSource`, a list, an
    array). `seed` seeds the random generators of ``map(..., with_rng=True)`` when the
    pipeline is not shuffled (a shuffle seed replaces it).

    Args:
        source: a random-access sequence of examples.
        seed: seeds ``map(..., with_rng=True)`` of an unshuffled pipeline (an int >= 0).

    Returns:
        A `Pipeline` that reads `source` once, in order; chain ``shuffle``, ``repeat``,
        ``map``, ``batch``, ``prefetch`` ... on it.

    Raises:
        TypeError: `source` has no ``len`` or ``[i]``.
        ValueError: `seed` is not an int >= 0.

    Examples:
        >>> import numpy as np
        >>> from catalog.loader import pipeline
        >>> [b.tolist() for b in pipeline(np.arange(5)).batch(2)]
        [[0, 1], [2, 3], [4]]
    """
    if not hasattr(source, "__len__") or not hasattr(source, "__getitem__"):
        raise TypeError(
            f"a pipeline needs a random-access source (len and [i]), got {type(source).__name__}"
        )
    _check_int("seed", seed, 0)
    return Pipeline(source=source, rng_seed=seed)
