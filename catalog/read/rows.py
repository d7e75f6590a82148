"""The row space: which records a data source reads, as pieces of one flat space.

Every record of a prepared dataset has a flat position: its shards in the order
dataset_info.json lists them, split after split. A data source is a list of ranges (pieces)
in that space: ``train[:10%]+test`` is two (`split_pieces`); a slice of a data source is a new
list of pieces (`compose`), nothing copied; `Rows.position` is where row ``i`` of the data
source lies in the flat space.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.info.dataset_info import DatasetInfo
from catalog.info.splits import SplitArg, resolve

__all__ = ["Rows", "compose", "split_pieces"]


def split_pieces(info: DatasetInfo, split: SplitArg) -> list[range]:
    """The pieces of the flat space that split spec `split` selects."""
    base, bases = 0, {}
    for name, split_info in info.splits.items():
        bases[name] = base
        base += sum(shard.num_examples for shard in split_info.shards)
    sizes = {
        name: tuple(shard.num_examples for shard in split_info.shards)
        for name, split_info in info.splits.items()
    }
    return [
        range(r.start + bases[name], r.stop + bases[name], r.step)
        for name, r in resolve(split, sizes)
    ]


def compose(pieces: Sequence[range], rows: range) -> list[range]:
    """The pieces selecting rows `rows` (indices into the concatenation of `pieces`)."""
    if rows.step < 0:
        total = sum(len(p) for p in pieces)
        flipped = range(
            total - 1 - rows.start, total - 1 - rows.start - rows.step * len(rows), -rows.step
        )
        return compose([p[::-1] for p in reversed(pieces)], flipped)
    out, base = [], 0
    for piece in pieces:
        lo, hi = base, base + len(piece)
        base = hi
        if not rows or rows.start >= hi or rows[-1] < lo:
            continue
        first = (
            rows.start
            if rows.start >= lo
            else rows.start + -(-(lo - rows.start) // rows.step) * rows.step
        )
        part = piece[first - lo : min(hi, rows[-1] + 1) - lo : rows.step]
        if part:
            out.append(part)
    return out


class Rows:
    """The rows of a data source: `pieces` of the flat space, one after the other.

    `label` names them in errors (``"mnist split 'train'"``).
    """

    def __init__(self, pieces: Sequence[range], label: str) -> None:
        self.pieces = [p for p in pieces if p] or [range(0)]
        self.label = label
        self._starts = [0]  # the row each piece starts at, then the number of rows
        for piece in self.pieces:
            self._starts.append(self._starts[-1] + len(piece))
        self.len = self._starts[-1]

    def position(self, index: Any) -> int:
        """The flat position of row `index` (negative counts from the end)."""
        try:
            if len(self.pieces) == 1:
                position: int = self.pieces[0][index]
                return position
            row: int = range(self.len)[index]
        except IndexError:
            raise IndexError(
                f"index {index} is out of range for {self.label} with {self.len} examples"
            ) from None
        except TypeError:
            raise TypeError(
                "DataSource indices must be ints, slices, or lists/arrays of ints, got "
                f"{type(index).__name__}"
            ) from None
        piece = bisect.bisect_right(self._starts, row) - 1
        return self.pieces[piece][row - self._starts[piece]]

    def positions(self, rows: np.ndarray[Any, Any]) -> list[int]:
        """The flat positions of rows `rows` (an int array), range-checked."""
        piece = self.pieces[0]
        if (
            len(self.pieces) == 1
            and piece.step == 1
            and rows.ndim == 1
            and rows.size
            and rows.min() >= 0
            and rows.max() < self.len
        ):
            fast: list[int] = (rows + piece.start).tolist()  # one contiguous range: no lookups
            return fast
        return [self.position(i) for i in rows.tolist()]

    def select(self, key: slice) -> list[range]:
        """The pieces of rows ``[key]``."""
        return compose(self.pieces, range(self.len)[key])
