"""Split specs: which examples of which splits to read, the way TensorFlow Datasets 4.9 reads them.

A split spec is a string, a `ReadInstruction`, a sum of them, or an `even_splits` part::

    spec   := part ("+" part)*                      whitespace around "+" is ignored
    part   := name | name "[" slice "]" | "all"     "all": every split, in order
    slice  := [bound] ":" [bound] | n "shard"       at least one bound
    bound  := ["-"] digits [unit]                   digits may hold "_" (1_000)
    unit   := "%" | "shard"                         one unit for both bounds

``train``, ``train[:10%]``, ``train[10:20]``, ``train[-1000:]``, ``train[25%:75%]``,
``train[1shard]``, ``train[:2shard]``, ``train+test``, ``train[:50%]+test[:10]``, ``all``.

Resolution, as TFDS's ``core/splits.py`` does it:

- a percent bound ``p`` of a split of ``n`` examples is ``round(p * n / 100)`` (Python's
  rounding, halves to even), or with ``rounding="pct1_dropremainder"`` ``p * (n // 100)``
  (every 1% the same size; refused below 100 examples); ``[:k%]`` and ``[k%:]`` share the bound,
  so they never overlap and never leave a gap;
- a shard bound ``s`` is the number of examples in the first ``s`` shards (a bound of 0 or
  less as the end counts from the last shard), so a shard bound past the last shard is the
  split's end: ``train[:2shard]`` of a split in one shard is all of it, ``train[3shard]``
  nothing;
- an absolute bound beyond the split (``abs(bound) > n``) is refused, not clipped; negative
  bounds count from the end; a start past the end selects nothing.

A percent bound may have decimals (``train[:12.5%]``), as in TFDS. Where catalog differs on
purpose (tests/info/test_splits_tfds_gold.py checks several hundred specs against what TFDS's
own code selects): a spec that selects no example (``train[0:0]``, ``validation[:1%]`` of 30,
a shard past the last) gives an empty data source, where TFDS resolves it the same way but
then refuses to read it ("corresponds to no data"): an empty part is what slicing arithmetic
(`even_splits` of a split smaller than the part count) naturally gives; and a reversed slice
(``train[5:2]``) selects nothing, as a Python slice does, where TFDS hands ``tf.data`` a
negative take that reads on to the end of the shard.
Malformed specs and unknown splits raise `SplitError`, which is both a
``ValueError`` (as in TFDS) and a ``KeyError``.
"""

from __future__ import annotations

import abc
import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from catalog.errors import MissingDependencyError, SplitError

__all__ = [
    "ReadInstruction",
    "Split",
    "SplitArg",
    "SplitsArg",
    "check_split_names",
    "even_splits",
    "resolve",
    "split_for_jax_process",
    "split_text",
]

Unit = Literal["abs", "%", "shard"]
Rounding = Literal["closest", "pct1_dropremainder"]
#: A split's size: its example count, or the example count of each of its shards.
Size = int | Sequence[int]

_GUIDE = (
    "valid forms: 'train', 'train[:10%]', 'train[10:20]', 'train[-1000:]', "
    "'train[25%:75%]', 'train[1shard]', 'train[:2shard]', 'train+test', 'all'"
)
_PART = re.compile(r"^(?P<name>[\w-]+)(\[(?P<selector>[\w%:.-]+)\])?$")
_BOUND = re.compile(r"^((?P<value>-?[\d_]+(\.\d+)?)(?P<unit>%|shard)?)?$")
_PLUS = re.compile(r"\s*\+\s*")


class Split(abc.ABC):
    """Something ``split=`` takes: resolved against a dataset's split sizes into example ranges.

    Splits add up (``ReadInstruction("train") + "test"``) and print as the spec they stand for.
    """

    @classmethod
    def from_spec(cls, spec: SplitArg) -> Split:
        """The `Split` of a spec string (a `Split` is returned as it is)."""
        if isinstance(spec, Split):
            return spec
        if not isinstance(spec, str):
            raise SplitError(
                f"a split spec must be a string or a catalog.ReadInstruction, got "
                f"{type(spec).__name__} {spec!r}"
            )
        parts = _PLUS.split(spec)
        result = _part(parts[0], spec)
        for text in parts[1:]:
            result = result + _part(text, spec)
        return result

    @abc.abstractmethod
    def to_absolute(self, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
        """The (split, example indices) pieces this selects, given each split's size."""

    @abc.abstractmethod
    def names(self, all_names: Sequence[str]) -> list[str]:
        """The splits this reads (``all``: every one of `all_names`)."""

    def __add__(self, other: SplitArg) -> Split:
        if not isinstance(other, (str, Split)):
            return NotImplemented
        return _Sum(self, Split.from_spec(other))

    def __radd__(self, other: str) -> Split:
        if not isinstance(other, str):
            return NotImplemented
        return _Sum(Split.from_spec(other), self)


#: One split spec: a string or a `Split` (a `ReadInstruction`, a sum, an even part).
SplitArg = str | Split
#: What ``split=`` takes: one spec, or a list (or tuple) of them (a list of data sources).
SplitsArg = SplitArg | list[SplitArg] | tuple[SplitArg, ...]


@dataclass(frozen=True)
class ReadInstruction(Split):
    """One split, or a slice of it, in examples (``"abs"``), percent or shards.

    Args:
        split_name: the split (``"train"``).
        from_: the first bound (None: the start); negative counts from the end.
        to: the end bound, excluded (None: the end).
        unit: ``"abs"`` (examples), ``"%"`` or ``"shard"``.
        rounding: how percent bounds round: ``"closest"`` or ``"pct1_dropremainder"`` (as
            TFDS).

    Raises:
        SplitError: a bad name, unit, rounding or bound; an unknown split or a bound past
            its end is an error when the instruction is read.

    Examples:
        >>> ReadInstruction("train", to=10, unit="%")
        ReadInstruction('train[:10%]')
        >>> str(ReadInstruction("test", from_=-5) + "train[1shard]")
        'test[-5:]+train[1shard:2shard]'
    """

    split_name: str
    from_: int | float | None = None
    to: int | float | None = None
    unit: Unit = "abs"
    rounding: Rounding = "closest"

    def __post_init__(self) -> None:
        if not isinstance(self.split_name, str) or not re.fullmatch(r"[\w-]+", self.split_name):
            raise SplitError(f"a split name is letters, digits, _ and -, got {self.split_name!r}")
        if self.unit not in ("abs", "%", "shard"):
            raise SplitError(f"unit must be one of 'abs', '%', 'shard', got {self.unit!r}")
        if self.rounding not in ("closest", "pct1_dropremainder"):
            raise SplitError(
                f"rounding must be 'closest' or 'pct1_dropremainder', got {self.rounding!r}"
            )
        for bound in (self.from_, self.to):
            if bound is None:
                continue
            whole = isinstance(bound, int) and not isinstance(bound, bool)
            if not (whole or (self.unit == "%" and isinstance(bound, float))):
                kind = "a number" if self.unit == "%" else "a whole number"
                raise SplitError(f"the bounds of {self} must be {kind}, got {bound!r}")
            if self.unit == "%" and not -100 <= bound <= 100:
                raise SplitError(f"percent bounds must be in [-100, 100], got {self}")

    def __str__(self) -> str:
        if self.from_ is None and self.to is None:
            return self.split_name
        unit = "" if self.unit == "abs" else self.unit
        ends = ["" if b is None else f"{_bound_text(b)}{unit}" for b in (self.from_, self.to)]
        return f"{self.split_name}[{ends[0]}:{ends[1]}]"

    def __repr__(self) -> str:
        rounding = f", rounding={self.rounding!r}" if self.rounding != "closest" else ""
        return f"ReadInstruction({str(self)!r}{rounding})"

    def names(self, all_names: Sequence[str]) -> list[str]:
        return [self.split_name]

    def to_absolute(self, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
        name = self.split_name
        if name not in sizes:
            raise _unknown(name, list(sizes), str(self))
        size = sizes[name]
        n = size if isinstance(size, int) else sum(size)
        start, stop = self.from_, self.to
        if self.unit == "%":
            start = 0 if start is None else self._percent(start, n)
            stop = n if stop is None else self._percent(stop, n)
        elif self.unit == "shard":
            if isinstance(size, int):
                raise SplitError(
                    f"{self}: shard bounds need the split's shard lengths, which are known only "
                    "once it is prepared; prepare it first, or slice in examples or percent"
                )
            lengths = list(size)
            start = 0 if start is None else sum(lengths[: int(start)])
            if stop is not None and stop <= 0:
                stop = len(lengths) + stop
            stop = n if stop is None else sum(lengths[: int(stop)])
        else:
            start = 0 if start is None else int(start)
            stop = n if stop is None else int(stop)
        if abs(start) > n or abs(stop) > n:
            raise SplitError(
                f"split spec {str(self)!r}: slice [{start}:{stop}] is outside split {name!r} "
                f"of {n} examples (bounds must lie within -{n}..{n})"
            )
        start = start + n if start < 0 else start
        stop = stop + n if stop < 0 else stop
        return [(name, range(start, max(start, stop)))]

    def _percent(self, bound: float, n: int) -> int:
        if self.rounding == "closest":
            return round(bound * n / 100)
        if n < 100:
            raise SplitError(
                f"{self!r}: 'pct1_dropremainder' rounding of a split of {n} examples (fewer "
                "than 100) always selects nothing; use the default rounding"
            )
        return int(bound * math.trunc(n / 100))


@dataclass(frozen=True)
class _Sum(Split):
    left: Split
    right: Split

    def __str__(self) -> str:
        return f"{self.left}+{self.right}"

    def __repr__(self) -> str:
        return f"{self.left!r}+{self.right!r}"

    def names(self, all_names: Sequence[str]) -> list[str]:
        return [*self.left.names(all_names), *self.right.names(all_names)]

    def to_absolute(self, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
        return [*self.left.to_absolute(sizes), *self.right.to_absolute(sizes)]


@dataclass(frozen=True)
class _All(Split):
    def __str__(self) -> str:
        return "all"

    def __repr__(self) -> str:
        return "ReadInstruction('all')"

    def names(self, all_names: Sequence[str]) -> list[str]:
        return list(all_names)

    def to_absolute(self, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
        return [piece for name in sizes for piece in ReadInstruction(name).to_absolute(sizes)]


@dataclass(frozen=True)
class _EvenPart(Split):
    """Part `index` of `count` of every piece `split` selects (see `even_splits`)."""

    split: Split
    index: int
    count: int
    drop_remainder: bool

    def __str__(self) -> str:
        drop = ", drop_remainder=True" if self.drop_remainder else ""
        return f"even_splits({str(self.split)!r}, {self.count}{drop})[{self.index}]"

    def __repr__(self) -> str:
        return str(self)

    def names(self, all_names: Sequence[str]) -> list[str]:
        return self.split.names(all_names)

    def to_absolute(self, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
        out = []
        for name, rows in self.split.to_absolute(sizes):
            per_part, left = divmod(len(rows), self.count)
            start = per_part * self.index
            stop = start + per_part
            if left and not self.drop_remainder:  # the first `left` parts get one more each
                start += min(self.index, left)
                stop += min(self.index + 1, left)
            out.append((name, rows[start:stop]))
        return out


def _part(text: str, spec: str) -> Split:
    """One ``+``-separated part of `spec`."""
    match = _PART.match(text)
    if match is None:
        raise SplitError(f"bad split spec {spec!r} (at {text!r}); {_GUIDE}")
    name, selector = match["name"], match["selector"]
    if name == "all":
        if selector is not None:
            raise SplitError(f"bad split spec {spec!r}: 'all' takes no slice; {_GUIDE}")
        return _All()
    if selector is None:
        return ReadInstruction(name)
    bounds = [_BOUND.match(b) for b in selector.split(":")]
    if len(bounds) > 2 or not all(bounds) or not any(b[0] for b in bounds if b):
        raise SplitError(f"bad split spec {spec!r} (at {text!r}); {_GUIDE}")
    values = [_number(b["value"], spec) if b and b["value"] else None for b in bounds]
    units = [b["unit"] for b in bounds if b and b["unit"]]
    unit: Unit = "%" if units and units[0] == "%" else "shard" if units else "abs"
    if len(bounds) == 1:  # train[1shard]: one shard
        if unit != "shard" or values[0] is None:
            raise SplitError(
                f"bad split spec {spec!r}: only shards can be picked by one index "
                f"(train[1shard]); slice examples or percent as train[10:20]"
            )
        return ReadInstruction(name, int(values[0]), int(values[0]) + 1, "shard")
    return ReadInstruction(name, values[0], values[1], unit)


def _bound_text(bound: float) -> str:
    if isinstance(bound, int):
        return str(bound)
    return format(bound, "f").rstrip("0").rstrip(".")


def _number(text: str, spec: str) -> int | float:
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        raise SplitError(f"bad split spec {spec!r}: {text!r} is not a number; {_GUIDE}") from None


def _unknown(name: str, names: list[str], spec: str) -> SplitError:
    close = difflib.get_close_matches(name, names, n=1)
    every = f"{', '.join(names)} (and 'all', every one of them)" if names else "none"
    hint = f": did you mean {close[0]!r}? The splits are" if close else "; the splits are"
    return SplitError(f"no split {name!r} (in split spec {spec!r}){hint} {every}")


def resolve(spec: SplitArg, sizes: Mapping[str, Size]) -> list[tuple[str, range]]:
    """The (split, example indices) pieces `spec` selects, given each split's size (its count,
    or its shards' counts, which shard bounds need)."""
    return Split.from_spec(spec).to_absolute(sizes)


def check_split_names(spec: SplitArg, names: Sequence[str]) -> Split:
    """`spec` parsed, its split names checked against `names` (before anything is prepared);
    SplitError naming the closest split when one is unknown."""
    split = Split.from_spec(spec)
    for name in split.names(names):
        if name not in names:
            raise _unknown(name, list(names), str(split))
    return split


def split_text(spec: SplitArg) -> str:
    """The spec as text, for messages and `DataSource.split`."""
    return str(Split.from_spec(spec))


def even_splits(split: SplitArg, n: int, *, drop_remainder: bool = False) -> list[Split]:
    """`n` disjoint parts of `split` of the same size, one per host or worker.

    Every piece of `split` (each ``+`` part) is cut in `n`: with ``drop_remainder=False`` the
    first parts get one example more each when the piece does not divide evenly (11 examples in
    3 parts: 4, 4, 3); with ``drop_remainder=True`` the remainder is left out (3, 3, 3). The
    parts go wherever a split goes: ``catalog.data_source(name, split=parts[rank])``.

    Args:
        split: a split spec or `catalog.ReadInstruction` (``"train"``, ``"train+test"``).
        n: the number of parts, at least 1.
        drop_remainder: leave out the examples that do not divide evenly.

    Returns:
        `n` split values, each usable as ``split=`` (``str()`` shows how it was made).

    Raises:
        ValueError: `n` is not a positive int.
        SplitError: `split` is malformed (the split names are checked when it is read).

    Examples:
        >>> [str(p) for p in even_splits("train", 2)]
        ["even_splits('train', 2)[0]", "even_splits('train', 2)[1]"]
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"even_splits needs a positive number of parts, got {n!r}")
    parsed = Split.from_spec(split)
    return [_EvenPart(parsed, index, n, bool(drop_remainder)) for index in range(n)]


def split_for_jax_process(
    split: SplitArg,
    *,
    process_index: int | None = None,
    process_count: int | None = None,
    drop_remainder: bool = False,
) -> Split:
    """This process's part of `split`: ``even_splits(split, process_count)[process_index]``,
    as ``tfds.split_for_jax_process``. The index and count default to JAX's
    ``jax.process_index()`` and ``jax.process_count()`` (JAX is imported only then).

    Args:
        split: a split name or spec (``"train"``, ``"train[:50%]"``) or a `Split`.
        process_index: this process's index; default ``jax.process_index()``.
        process_count: how many processes; default ``jax.process_count()``.
        drop_remainder: give every process the same number of examples, dropping the rest.

    Returns:
        This process's `Split`, for ``split=`` of `catalog.data_source`.

    Raises:
        SplitError: a malformed split spec, or an index outside ``0 .. process_count - 1``.
        MissingDependencyError: the index or count not given, and JAX not installed.

    >>> str(split_for_jax_process("train", process_index=1, process_count=2))
    "even_splits('train', 2)[1]"
    """
    if process_index is None or process_count is None:
        try:
            import jax
        except ImportError:
            raise MissingDependencyError(
                "split_for_jax_process needs process_index= and process_count=, or JAX to ask "
                "them from (pip install jax)"
            ) from None
        process_index = jax.process_index() if process_index is None else process_index
        process_count = jax.process_count() if process_count is None else process_count
    parts = even_splits(split, process_count, drop_remainder=drop_remainder)
    whole = not isinstance(process_index, bool) and isinstance(process_index, int)
    if not whole or not 0 <= process_index < process_count:
        raise SplitError(
            f"split_for_jax_process: process_index must be an int in 0..{process_count - 1} "
            f"(process_count={process_count}), got {process_index!r}"
        )
    return parts[process_index]
