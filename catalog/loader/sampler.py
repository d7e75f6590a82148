"""The index sampler: which source record each position of the pipeline reads.

It is decided before any record is read. `shard` selects a contiguous block of the source's
records (shards are disjoint and together cover the source; with ``drop_remainder`` all have
``len // count`` records); `shuffle` permutes that block anew in every epoch with the
permutation of `catalog.loader.permutation` keyed by (seed, epoch); `repeat` sets the number
of epochs. Work is cut into *units*: `chunk` consecutive positions of one epoch. Unit ``u``
is chunk ``u % units_per_epoch`` of epoch ``u // units_per_epoch``: a pure function of the
sampler, which is what makes any worker count give the same output and a resumed iterator
continue exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog.loader.permutation import permute

__all__ = ["Sampler", "shard_range"]

WINDOW = 16384  # positions permuted at once: amortises the per-call cost of the Feistel rounds

Array = np.ndarray[Any, Any]


def shard_range(total: int, index: int, count: int, drop_remainder: bool) -> range:
    """The records of shard `index` of `count`: contiguous, disjoint, covering ``range(total)``
    (without `drop_remainder`, the first ``total % count`` shards get one record more)."""
    if drop_remainder:
        size = total // count
        return range(index * size, (index + 1) * size)
    size, extra = divmod(total, count)
    start = index * size + min(index, extra)
    return range(start, start + size + (index < extra))


@dataclass(frozen=True)
class Sampler:
    """Positions -> record indices for `num_records` records (see the module docstring)."""

    num_records: int
    seed: int | None = None  # None: no shuffle (the source's order)
    num_epochs: int | None = 1  # None: repeat forever
    shard: tuple[int, int, bool] = (0, 1, False)  # index, count, drop_remainder
    chunk: int = 128

    @property
    def records(self) -> range:
        """The source records one epoch reads (this shard's)."""
        index, count, drop = self.shard
        return shard_range(self.num_records, index, count, drop)

    @property
    def epoch_size(self) -> int:
        return len(self.records)

    @property
    def units_per_epoch(self) -> int:
        return -(-self.epoch_size // self.chunk)

    @property
    def num_units(self) -> int | None:
        """Units over all epochs; None when it repeats forever."""
        if self.num_epochs is None:
            return None if self.units_per_epoch else 0
        return self.units_per_epoch * self.num_epochs

    def unit_records(self, unit: int, cache: list[Any] | None = None) -> tuple[int, Array]:
        """(epoch, the record indices of unit `unit`). `cache` (a one-item list) keeps the
        last window of the permutation between calls of one thread or process."""
        epoch, chunk = divmod(unit, self.units_per_epoch)
        records = self.records
        start = chunk * self.chunk
        stop = min(start + self.chunk, len(records))
        if self.seed is None:
            return epoch, np.arange(records.start + start, records.start + stop, dtype=np.int64)
        window = start // WINDOW
        if (stop - 1) // WINDOW != window:  # a chunk across two windows: permute it alone
            positions = np.arange(start, stop, dtype=np.int64)
            return epoch, permute(positions, len(records), seed=self.seed, epoch=epoch) + (
                records.start
            )
        key = (epoch, window)
        hit = cache[0] if cache else None
        if hit is not None and hit[0] == key:
            order = hit[1]
        else:
            first = window * WINDOW
            positions = np.arange(first, min(first + WINDOW, len(records)), dtype=np.int64)
            order = permute(positions, len(records), seed=self.seed, epoch=epoch)
            order += records.start
            if cache is not None:
                cache[:] = [(key, order)]
        offset = window * WINDOW
        return epoch, order[start - offset : stop - offset]
