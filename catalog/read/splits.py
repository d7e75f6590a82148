"""Split specs: which examples of which splits a data source reads.

Grammar (whitespace around ``+`` is ignored)::

    spec   := part ("+" part)*
    part   := split | split "[" [bound] ":" [bound] "]"
    bound  := ["-"] digits ["." digits] ["%"]

``train``, ``train[:10%]``, ``train[10:20]``, ``train[-1000:]``, ``train[25%:75%]``,
``train+test``, ``train[:50%]+test[:10]``. Absolute bounds behave like Python slices
(negative counts from the end, out-of-range clips). A percent bound ``p%`` of a split with
``n`` examples is example ``round(n * p / 100)``, halves rounded up, so ``[:50%]`` and
``[50%:]`` of the same split never overlap and never leave a gap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from catalog.errors import SplitError

__all__ = ["SplitSlice", "check_names", "even_splits", "parse", "resolve"]

_VALID_FORMS = (
    "valid forms: 'train', 'train[:10%]', 'train[10:20]', 'train[-1000:]', "
    "'train[25%:75%]', 'train+test', 'train[:50%]+test[:10]'"
)
_PART = re.compile(
    r"^(?P<name>[A-Za-z_][\w-]*)"
    r"(?:\[(?P<start>-?\d+(?:\.\d+)?%?)?:(?P<stop>-?\d+(?:\.\d+)?%?)?\])?$"
)


@dataclass(frozen=True)
class SplitSlice:
    """One part of a split spec: a split and optional bounds (absolute, or percent if str)."""

    split: str
    start: int | float | None = None
    stop: int | float | None = None
    percent: tuple[bool, bool] = (False, False)

    def indices(self, num_examples: int) -> range:
        """The example indices of this part in a split of `num_examples`."""
        start = self._bound(self.start, self.percent[0], num_examples)
        stop = self._bound(self.stop, self.percent[1], num_examples)
        return range(num_examples)[slice(start, stop)]

    @staticmethod
    def _bound(value: float | None, percent: bool, n: int) -> int | None:
        if value is None:
            return None
        if not percent:
            return int(value)
        return math.floor(n * value / 100 + 0.5)


def _bound(text: str | None, spec: str) -> tuple[int | float | None, bool]:
    if text is None:
        return None, False
    if text.endswith("%"):
        value = float(text[:-1])
        if not -100 <= value <= 100:
            raise SplitError(f"bad split spec {spec!r}: {text} is not between -100% and 100%")
        return value, True
    if "." in text:
        raise SplitError(f"bad split spec {spec!r}: {text} must be an integer (or a percent)")
    return int(text), False


def parse(spec: str) -> list[SplitSlice]:
    """Parse a split spec into its parts; raise SplitError naming the spec and valid forms."""
    if not isinstance(spec, str) or not spec.strip():
        raise SplitError(f"bad split spec {spec!r}; {_VALID_FORMS}")
    parts = []
    for text in spec.split("+"):
        match = _PART.match(text.strip())
        if match is None:
            raise SplitError(f"bad split spec {spec!r} (at {text.strip()!r}); {_VALID_FORMS}")
        start, start_pct = _bound(match["start"], spec)
        stop, stop_pct = _bound(match["stop"], spec)
        parts.append(SplitSlice(match["name"], start, stop, (start_pct, stop_pct)))
    return parts


def check_names(spec: str, names: Sequence[str], dataset: str) -> None:
    """Parse `spec` and check its split names against `names` (a dataset's splits, before
    anything is prepared); SplitError naming the dataset when one is unknown."""
    for part in parse(spec):
        if part.split not in names:
            raise SplitError(
                f"{dataset} has no split {part.split!r} (in split spec {spec!r}); "
                f"its splits are {', '.join(names)}"
            )


def resolve(spec: str, num_examples: Mapping[str, int]) -> list[tuple[str, range]]:
    """The (split, example indices) pieces `spec` selects, given each split's size."""
    pieces = []
    for part in parse(spec):
        if part.split not in num_examples:
            raise SplitError(
                f"bad split spec {spec!r}: no split {part.split!r}; the splits are "
                f"{', '.join(num_examples)}"
            )
        pieces.append((part.split, part.indices(num_examples[part.split])))
    return pieces


def even_splits(split: str, n: int) -> list[str]:
    """`n` split specs that cover `split` in parts differing in size by at most one example.

    One per host or worker: ``catalog.data_source(name, split=even_splits("train", 4)[rank])``.

    >>> even_splits("train", 4)
    ['train[0%:25%]', 'train[25%:50%]', 'train[50%:75%]', 'train[75%:100%]']
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"even_splits needs a positive number of parts, got {n!r}")
    if len(parse(split)) != 1 or "[" in split:
        raise SplitError(f"even_splits takes one split name such as 'train', got {split!r}")
    # Neighbours share the very same bound text, so the parts never overlap or leave gaps.
    bounds = [f"{100 * k / n:.12g}%" for k in range(n + 1)]
    return [f"{split}[{bounds[k]}:{bounds[k + 1]}]" for k in range(n)]
