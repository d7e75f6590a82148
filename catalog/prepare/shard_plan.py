"""The shard plan: what preparing a dataset writes, decided before any record is written.

A plan is a list of work units, one per shard: a split's examples ``start..stop-1`` (in source
order) -> one ArrayRecord file ``<name>-<split>.array_record-0000k-of-0000n``. Shards are cut
by size: the first examples of each split are encoded to estimate the bytes per example, and a
split of ``B`` estimated bytes gets ``ceil(B / shard_bytes)`` shards of (nearly) equal example
counts, and at least one per `MAX_SHARD_EXAMPLES` examples. Whoever runs the units (this
process, N processes, Apache Beam workers) writes the same bytes, since a unit's shard depends
only on its examples.

The plan's `key` is a digest of everything the shards depend on (the spec's features, splits
and download checksums, the example limit, the shard size, the writer options' policy (the group
size it picks from the records is in the plan, `Plan.writer_options`), the record format and
catalog's version): the work directory is named after it, so a prepare that was
killed is resumed by the next one asking for the same thing, and never by another.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from catalog._version import __version__
from catalog.errors import FeatureError, SourceFormatError
from catalog.features.codec import RECORD_FORMAT, RecordCodec
from catalog.formats import FORMATS, Source
from catalog.formats.base import Examples, RandomAccess
from catalog.formats.resume import Cursor, Resumed
from catalog.spec.model import BuilderSpec, SplitSpec
from catalog.storage.shards import WRITER_OPTIONS, group_size, shard_name, writer_options

__all__ = [
    "MAX_SHARD_EXAMPLES",
    "Plan",
    "Unit",
    "make_plan",
    "open_reader",
    "plan_key",
]

#: The most examples in one shard: ArrayRecord's writer keeps an index entry per record in
#: memory until the shard is closed (about 80 bytes each with ``group_size:1``, measured), so
#: this bounds a writer's memory (about 85 MB) for tables of many small rows.
MAX_SHARD_EXAMPLES = 1 << 20
#: Examples encoded to estimate a split's bytes per example.
_SAMPLE = 64
_FRAMING = 200


@dataclass(frozen=True)
class Unit:
    """One work unit: examples ``start..stop-1`` of a split -> the shard `file`."""

    split: str
    index: int  # the shard's index in its split
    count: int  # shards in the split
    start: int
    stop: int
    file: str
    estimated_bytes: int

    @property
    def num_examples(self) -> int:
        return self.stop - self.start

    def describe(self) -> str:
        """``unit 3 of 8 of split 'train' (examples 3000..3999, shard <file>)``"""
        return (
            f"unit {self.index + 1} of {self.count} of split {self.split!r} (examples "
            f"{self.start}..{self.stop - 1}, shard {self.file})"
        )


@dataclass(frozen=True)
class Plan:
    """Every unit of a dataset, split by split, and the key naming its work directory."""

    key: str
    units: tuple[Unit, ...]
    #: The size the units were cut at (None: a plan written before it was recorded).
    shard_bytes: int | None = None
    #: The array_record writer options of every shard (`catalog.storage.shards.writer_options`:
    #: the group size follows the records' mean size; a plan written before it was recorded
    #: wrote one record per chunk).
    writer_options: str = WRITER_OPTIONS

    def split_units(self, split: str) -> list[Unit]:
        return [u for u in self.units if u.split == split]

    @property
    def estimated_bytes(self) -> int:
        return sum(u.estimated_bytes for u in self.units)

    def to_json(self) -> dict[str, Any]:
        units = [asdict(u) for u in self.units]
        return {
            "key": self.key,
            "units": units,
            "shard_bytes": self.shard_bytes,
            "writer_options": self.writer_options,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        shard_bytes = data.get("shard_bytes")
        if shard_bytes is not None and (type(shard_bytes) is not int or shard_bytes < 1):
            raise ValueError(f"shard_bytes must be a whole number >= 1, got {shard_bytes!r}")
        options = data.get("writer_options", WRITER_OPTIONS)
        if not isinstance(options, str):
            raise ValueError(f"writer_options must be a string, got {options!r}")
        return cls(data["key"], tuple(Unit(**u) for u in data["units"]), shard_bytes, options)


def plan_key(
    spec: BuilderSpec,
    limit: int | None,
    shard_bytes: int,
    writer_options: str,
    manual: dict[str, Any] | None = None,
) -> str:
    """A digest of everything the shards depend on (see the module docstring); `manual`: the
    unverified manual files' sha256, as measured by this prepare (none was published)."""
    splits = {
        name: {
            "format": s.format,
            "files": {role: [ref.download, ref.member] for role, ref in s.files.items()},
            "options": {k: str(v) for k, v in s.options.items()},
            "num_examples": s.num_examples,
        }
        for name, s in spec.splits.items()
    }
    data = {
        "name": spec.full_name,
        "version": spec.version,
        "features": spec.features.to_json(),
        "splits": splits,
        "downloads": {n: d.sha256 for n, d in spec.downloads.items()},
        "manual": manual or {},
        "limit": limit,
        "shard_bytes": shard_bytes,
        "writer_options": writer_options,
        "record_format": RECORD_FORMAT,
        "catalog": __version__,
    }
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _from(key: tuple[str, Source], cursor: Cursor) -> Examples:
    fmt, source = key
    return itertools.islice(FORMATS[fmt].examples(source), cursor.start, None)


#: The examples of a format read from its start, a range starting where the last one stopped
#: (or after it) going on reading where it was (`catalog.formats.resume`).
_STREAMS: Resumed[tuple[str, dict[str, Any]]] = Resumed(
    _from, files=lambda key: (key[1].files, key[1].options)
)


class _Sequential:
    """The reader of a format that can only be read from the start: a range goes on from
    where the last range this process read stopped, when it starts there or after it, and
    else skips the examples before it (without encoding them). Its length is unknown until
    read: the plan takes the spec's count."""

    length = None

    def __init__(self, source: Source, fmt: str) -> None:
        self._source = source
        self._fmt = fmt

    def examples(self, start: int, stop: int) -> Examples:
        return _STREAMS((self._fmt, self._source), start, stop)

    def close(self) -> None:
        pass


def open_reader(split: SplitSpec, source: Source) -> RandomAccess:
    """Random access to a split's examples: the format's own, or reading from the start."""
    fmt = FORMATS[split.format]
    if fmt.random_access is not None:
        return fmt.random_access(source)
    return _Sequential(source, split.format)


def needed_examples(
    spec: BuilderSpec, split: SplitSpec, length: int | None, limit: int | None
) -> int:
    """How many examples the split's shards hold; SourceFormatError when the source's count
    (if the reader knows it) cannot give them."""
    want = split.num_examples if limit is None else min(limit, split.num_examples)
    if length is not None and (length < want or (limit is None and length != want)):
        where = spec.path / "builder.yaml" if spec.path else "the builder spec"
        raise SourceFormatError(
            f"split {split.name!r} of {spec.full_name}: the source files hold {length} examples "
            f"but {where} (splits.{split.name}.num_examples) expects {split.num_examples}"
        )
    return want


def _bytes_per_example(spec: BuilderSpec, split: SplitSpec, reader: RandomAccess, n: int) -> float:
    encode = RecordCodec(spec.features).encode
    sizes = []
    for index, (key, example) in enumerate(reader.examples(0, min(n, _SAMPLE))):
        try:
            sizes.append(len(encode(example)))
        except FeatureError as error:
            raise FeatureError(
                error.reason,
                feature_path=error.feature_path,
                example=f"split {split.name!r}, example {index} (key {key!r})",
            ) from None
    return sum(sizes) / len(sizes) if sizes else 0.0


def _ranges(n: int, parts: int) -> Iterator[tuple[int, int]]:
    for i in range(parts):
        yield i * n // parts, (i + 1) * n // parts


def make_plan(
    spec: BuilderSpec,
    sources: dict[str, Source],
    key: str,
    *,
    limit: int | None,
    shard_bytes: int,
) -> Plan:
    """Cut every split into units of about `shard_bytes` each (see the module docstring),
    the shards' writer options chosen from the mean size of the records sampled."""
    sizes: dict[str, tuple[int, float]] = {}  # examples, and their mean record size
    for split in spec.splits.values():
        reader = open_reader(split, sources[split.name])
        try:
            n = needed_examples(spec, split, reader.length, limit)
            sizes[split.name] = n, _bytes_per_example(spec, split, reader, n)
        finally:
            reader.close()
    records = sum(n for n, _ in sizes.values())
    total = sum(n * mean for n, mean in sizes.values())
    options = writer_options(total / records) if records else WRITER_OPTIONS
    units: list[Unit] = []
    for name, (n, mean) in sizes.items():
        # + what array_record adds per chunk (measured: about 200 bytes), shared by its records
        per_example = mean + _FRAMING / group_size(options) if mean else 0.0
        count = max(1, min(n, math.ceil(n * per_example / shard_bytes)))
        count = max(count, math.ceil(n / MAX_SHARD_EXAMPLES))
        for index, (start, stop) in enumerate(_ranges(n, count)):
            file = shard_name(spec.name, name, index, count)
            estimate = math.ceil((stop - start) * per_example)
            units.append(Unit(name, index, count, start, stop, file, estimate))
    return Plan(key, tuple(units), shard_bytes, options)
