"""Reading the records of a prepared dataset's shards, in each process, honestly.

`Records` reads records by flat position (`catalog.read.rows`) from the shards of a dataset,
through the shard readers its record format opens (`catalog.read.record_format`):

- readers are opened lazily, once per process: they are dropped when pickled, and a process
  forked after they were opened opens its own (the parent's are never touched in the child,
  not even closed: `_Process` counts forks, `_inherited` keeps the parent's alive);
- reads take a lock (readers are not thread-safe; decoding, elsewhere, needs none);
- batched reads take the records from a memory map of each shard when the format allows it
  (`catalog.read.mapped_shard`): fixed-size records in one NumPy gather, others as a slice
  of the map each, once a sixteenth of the shard was read (measured: ~1 us instead of ~6
  for a 1 KB record, ~15 instead of ~40 for 50 KB, array_record's read also checking each
  record's hash: the map's whole file is checked against its sha256 once instead, which a
  few reads would not earn back); what a process verified of its maps is pickled
  along, so a worker need not hash the shards again; a fresh process's first batches read
  only the chunks they touch (`catalog.read.chunked_shard`: no index parsed whole);
- honest: the shards are checked when the records are set up (each split's shards are its own
  and hold its count; each file has the size it was written with), each reader when it opens
  (the number of records and, when fixed, their size), and a failed read raises ShardError
  naming the shard and the record, dropping the reader so healthy records stay readable; a
  copy prepared again under a data source (``--overwrite``) is refused, not read.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from catalog.errors import NotPreparedError, ShardError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.chunked_shard import ChunkedShard, chunk_shard
from catalog.read.mapped_shard import MappedShard, ShardIndex, map_shard
from catalog.read.record_format import RecordFormat, ShardReader
from catalog.storage.chunk_hash import chunk_hash_available
from catalog.storage.data_dir import Location, Shards
from catalog.storage.shards import group_size, shard_error

__all__ = ["Records", "check_shards"]

CHUNK = 1024  # records per range read while iterating
_READ_ERRORS = (RuntimeError, IndexError, ValueError)  # what readers raise for a bad record
_SIZE_PROBES = 8  # records tried, in order, for the size check when the first ones are corrupt
#: A batched read by chunks costs about what opening array_record's reader costs per this
#: many records of its shard (measured: ~0.5 ms a call; ~14 ms to open 700,000 short rows)
CHUNKED_CALL_RECORDS = 25_000


def check_shards(folder: Location, info: DatasetInfo) -> None:
    """Every split's shards must be its own and hold its example count (dataset_info.json that
    was edited or damaged would otherwise silently serve another split's examples); that each
    shard is there with the size it was written with, its store checks (`Shards.check`)."""
    where = folder / INFO_FILE
    for split, split_info in info.splits.items():
        held = sum(s.num_examples for s in split_info.shards)
        if held != split_info.num_examples:
            raise ShardError(
                f"{where}: split {split!r} says {split_info.num_examples} examples but its "
                f"shards hold {held}; run 'catalog verify' and 'catalog prepare --overwrite'"
            )
        prefix = f"{info.name}-{split}."  # .array_record-NNNNN-of-NNNNN (or TFDS's .tfrecord-)
        for shard in split_info.shards:
            if not shard.file.startswith(prefix):
                raise ShardError(
                    f"{where}: split {split!r} lists shard {shard.file}, which is not one of "
                    f"its own ({prefix}-*); run 'catalog verify' and 'catalog prepare "
                    "--overwrite'"
                )


class Records:
    """The records of every shard of `info`'s dataset, by flat position, opened through
    `shards` (its data dir's store: `catalog.storage.data_dir.Shards`; local files in place,
    a bucket's through a shard cache or by byte ranges).

    `record_size` is the size of every record when the features are all fixed-size (checked
    when a reader opens; batched reads gather such records from memory maps), else None.
    `stamp` is the dataset_info.json the data source was made for (`Shards.stamp`); `split`
    names the data source in errors.
    """

    def __init__(
        self,
        shards: Shards,
        info: DatasetInfo,
        split: str,
        record_format: RecordFormat,
        record_size: int | None,
        stamp: object | None,
    ) -> None:
        self.info = info
        self.split = split
        self.stamp = stamp
        self._shards = shards
        self._open = shards.open  # resolved once: opening shard i is one call
        self._ranged = shards.ranged
        self._format = record_format
        self._record_size = record_size
        self._mappable = record_format.mappable(info)
        self._group = group_size(info.shard_options)  # records per chunk (the last: the rest)
        if self._group > 1 and self._mappable:  # first batches read chunks, hashed:
            chunk_hash_available()  # highwayhash loaded now, not in the first batch
        self.paths: list[str] = list(shards.paths)
        self._sha256: list[str] = []  # of each shard, as dataset_info.json records it
        self._starts = [0]  # flat position of each shard's first record, then the total
        for split_info in info.splits.values():
            for shard in split_info.shards:
                self._sha256.append(shard.sha256)
                self._starts.append(self._starts[-1] + shard.num_examples)
        self._known_maps: dict[int, ShardIndex] = {}  # shards another process verified
        self._setup_process_state()

    def _setup_process_state(self) -> None:
        self._lock = threading.Lock()
        self.readers: list[ShardReader | None] = [None] * len(self.paths)
        # batched reads through memory maps (`_UNMAPPED` for a shard that cannot be mapped)
        self.maps: list[MappedShard | object | None] = [None] * len(self.paths)
        # batched reads of the chunks a batch touches, until a shard is mapped whole
        self.chunked: list[ChunkedShard | object | None] = [None] * len(self.paths)
        # records of varying size read through the readers, per shard, until it is mapped
        self._unmapped_reads = [0] * len(self.paths)
        self._chunked_calls = [0] * len(self.paths)  # batched reads by chunks, per shard
        self._generation = _process.generation

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # what this process verified of its mapped shards: a worker maps them without
        # parsing and hashing them again (`catalog.read.mapped_shard.ShardIndex`)
        state["_known_maps"] = {
            **self._known_maps,
            **{i: m.index() for i, m in enumerate(self.maps) if isinstance(m, MappedShard)},
        }
        for name in (*_PER_PROCESS, "_generation"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup_process_state()

    def locate(self, position: int) -> tuple[str, int]:
        """The shard holding flat `position`, and the record's index in it."""
        shard = bisect.bisect_right(self._starts, position) - 1
        return self.paths[shard], position - self._starts[shard]

    # -- readers: opened lazily, once per process -----------------------------------------
    def _check_process(self) -> None:
        if self._generation != _process.generation:
            # Forked: the parent's readers must not be touched here, not even closed. Keep
            # them referenced so their destructors never run in this process.
            _inherited.extend(r for r in self.readers if r is not None)
            _inherited.extend(m for m in self.maps if m is not None)
            _inherited.extend(c for c in self.chunked if c is not None)
            self._setup_process_state()

    def _reader(self, shard: int) -> ShardReader:
        reader = self.readers[shard]
        if reader is None:
            self._check_unchanged()
            reader = self._checked(shard, self._open(shard))
            self.readers[shard] = reader
        return reader

    def _check_unchanged(self) -> None:
        """The prepared copy must still be the one this source was made for: a copy prepared
        again under it (``--overwrite``) has other shards and counts."""
        if self.stamp is not None and self._shards.stamp() != self.stamp:
            raise NotPreparedError(
                f"{self._shards.folder} was prepared again after this data source of "
                f"{self.info.full_name} split {self.split!r} was made (its dataset_info.json "
                "changed); make a new data source (catalog.data_source(...))"
            )

    def _checked(self, shard: int, reader: ShardReader) -> ShardReader:
        """`reader` once its shard is checked: it must hold the records dataset_info.json
        says, of the size its features give (when they are all fixed-size); checked once per
        shard per process, when its reader opens, before any example is returned.

        The size is that of the first record that reads. A read that fails leaves
        array_record's reader failed for good (riegeli's failure is sticky: every later call
        repeats it, ``num_records()`` turns 0), so after a corrupt record the check goes on
        with, and returns, a fresh reader: one corrupt record must not make the whole shard
        unreadable (it raises when it is read itself)."""
        path, expected = self.paths[shard], self._starts[shard + 1] - self._starts[shard]
        try:
            held = int(reader.num_records())
            if held != expected:
                message = f"it holds {held} records, dataset_info.json says {expected}"
                raise shard_error(path, message)
            lengths = getattr(reader, "lengths", None)  # known from a remote shard's index
            wrong = None if lengths is None else lengths[lengths != self._record_size]
            if self._record_size and wrong is not None and len(wrong):
                size = int(wrong[0])
                raise shard_error(
                    path,
                    f"its records have {size} bytes, but the features in dataset_info.json "
                    f"encode to {self._record_size}: the data and its description differ",
                )
            probes = min(held, _SIZE_PROBES) if self._record_size and lengths is None else 0
            for record in range(probes):
                try:
                    reader.seek(record)
                    size = len(reader.read())
                except _READ_ERRORS:  # a corrupt record: try the next on a fresh reader
                    _close(reader)
                    reader = self._open(shard)
                    continue
                if size != self._record_size:
                    raise shard_error(
                        path,
                        f"its records have {size} bytes, but the features in dataset_info.json "
                        f"encode to {self._record_size}: the data and its description differ",
                    )
                break
        except BaseException:
            _close(reader)
            raise
        return reader

    def _mapped(self, shard: int) -> MappedShard | None:
        """Shard `shard` mapped for batched reads, or None when it must be read through its
        reader (compressed, not catalog's, or laid out otherwise)."""
        mapped = self.maps[shard]
        if mapped is None:
            with self._lock:
                mapped = self.maps[shard]
                if mapped is None:
                    mapped = _UNMAPPED
                    if self._mappable:
                        self._reader(shard)  # checks the shard's records, once
                        count = self._starts[shard + 1] - self._starts[shard]
                        path = self._shards.local_path(shard)  # None: read by ranges
                        sha256, known = self._sha256[shard], self._known_maps.get(shard)
                        if path is not None:
                            mapped = map_shard(path, count, sha256, known) or _UNMAPPED
                    self.maps[shard] = mapped
        return mapped if isinstance(mapped, MappedShard) else None

    def _chunked(self, shard: int) -> ChunkedShard | None:
        """Shard `shard` read a batch's chunks at a time, or None (read through its reader)."""
        with self._lock:
            if (chunked := self.chunked[shard]) is None:
                path, chunked = self._shards.local_path(shard), _UNMAPPED
                if self._mappable and path is not None:
                    self._check_unchanged()
                    count = self._starts[shard + 1] - self._starts[shard]
                    chunked = chunk_shard(path, count, self._group) or _UNMAPPED
                self.chunked[shard] = chunked
        return chunked if isinstance(chunked, ChunkedShard) and not chunked.failed else None

    def _mapped_for_reads(self, shard: int, count: int) -> MappedShard | ChunkedShard | None:
        """Shard `shard`'s map for reading `count` of its records, or None (read them through
        its reader). Fixed-size records map at once (their batches are gathered from it).
        Records of varying size are read through the reader until this process has read a
        sixteenth of the shard's records (at least 8): mapping first hashes the whole shard
        (~1 ms per MB, a second for a 1 GiB one), which a few reads (`catalog show`, a
        notebook's ``ds[[...]]``) never earn back and an epoch does many times. The first
        batches read their chunks instead (`_chunked`), until they cost what opening the
        reader does (it parses the whole index): `CHUNKED_CALL_RECORDS`."""
        if (
            self.maps[shard] is None
            and self._record_size is None
            and shard not in self._known_maps  # verified by another process: no hashing
        ):
            held = self._starts[shard + 1] - self._starts[shard]
            self._unmapped_reads[shard] += count
            if self._unmapped_reads[shard] < min(held, max(8, held // 16)):
                calls = self._chunked_calls[shard]
                if self.readers[shard] is None and calls * CHUNKED_CALL_RECORDS < held:
                    self._chunked_calls[shard] += 1
                    return self._chunked(shard)
                return None
        return self._mapped(shard)

    def _by_shard(self, flat: np.ndarray[Any, Any]) -> Iterator[tuple[int, np.ndarray[Any, Any]]]:
        """Flat positions grouped by shard: each shard with the rows of `flat` in it."""
        shards = np.searchsorted(self._starts, flat, side="right") - 1
        for shard in sorted(set(shards.tolist())):  # (np.unique first imports numpy.ma: 30 ms)
            yield shard, np.flatnonzero(shards == shard)

    def warm(self, batched: bool = True) -> None:
        """Open every shard now, and with `batched` also map and verify the shards batched
        reads gather from, instead of at the first read."""
        self._check_process()
        for shard in range(len(self.paths)):
            if not (batched and self._mapped(shard)):
                with self._lock:
                    self._reader(shard)

    def close(self) -> None:
        """Close this process's readers and maps (they reopen on the next access)."""
        with self._lock:
            if self._generation == _process.generation:
                for reader in self.readers:
                    if reader is not None:
                        reader.close()
                for mapped in self.maps:
                    if isinstance(mapped, MappedShard):
                        mapped.close()
                for chunked in self.chunked:
                    if isinstance(chunked, ChunkedShard):
                        chunked.close()
            self.readers = [None] * len(self.paths)
            self.maps = [None] * len(self.paths)
            self.chunked = [None] * len(self.paths)
            self._shards.close()

    # -- reads ----------------------------------------------------------------------------
    def read_one(self, position: int) -> bytes:
        """The record at flat `position` (already range-checked): the fewest steps."""
        if self._generation != _process.generation:
            self._check_process()
        lock = self._lock
        lock.acquire()
        shard = 0
        try:
            reader = self.readers[0] if len(self.paths) == 1 else None
            if reader is None:
                shard = bisect.bisect_right(self._starts, position) - 1
                reader = self._reader(shard)
                position -= self._starts[shard]
            reader.seek(position)
            record: bytes = reader.read()
        except _READ_ERRORS as exc:
            raise self._read_error(shard, position, exc) from None
        finally:
            lock.release()
        return record

    def read(self, positions: Sequence[int], out: list[bytes] | None = None) -> list[bytes]:
        """The records at flat `positions` (already range-checked), in order, appended to
        `out` (where a caller finds those read before a record that fails)."""
        self._check_process()
        starts, out = self._starts, [] if out is None else out
        shard, pos = 0, 0
        if self._ranged:
            return self._read_ranges(positions, out)
        if self._mappable and (records := self._read_mapped(positions)) is not None:
            out.extend(records)
            return out
        with self._lock:
            try:
                if len(self.paths) == 1:
                    reader = self._reader(0)
                    for pos in positions:
                        reader.seek(pos)
                        out.append(reader.read())
                else:
                    for pos in positions:
                        shard = bisect.bisect_right(starts, pos) - 1
                        reader = self._reader(shard)
                        reader.seek(pos - starts[shard])
                        out.append(reader.read())
            except _READ_ERRORS as exc:
                raise self._read_error(shard, pos - starts[shard], exc) from None
        return out

    def _read_mapped(self, positions: Sequence[int]) -> list[bytes] | None:
        """The records at flat `positions` as slices of the shards' memory maps; None when a
        shard they are in is not mapped or read by chunks (read them through the readers)."""
        if len(self.paths) == 1:
            mapped = self._mapped_for_reads(0, len(positions))
            return None if mapped is None else mapped.read(positions)
        flat = np.asarray(positions, np.int64)
        found: list[bytes] = [b""] * len(flat)
        for shard, rows in self._by_shard(flat):
            mapped = self._mapped_for_reads(shard, len(rows))
            records = None if mapped is None else mapped.read(flat[rows] - self._starts[shard])
            if records is None:
                return None
            for row, record in zip(rows.tolist(), records, strict=True):
                found[row] = record
        return found

    def _read_ranges(self, positions: Sequence[int], out: list[bytes]) -> list[bytes]:
        """The records at `positions` by byte ranges: one batch of coalesced requests per
        shard (`catalog.read.remote_shard.RangeShard.read_many`)."""
        flat = np.asarray(positions, np.int64)
        found: list[bytes | None] = [None] * len(flat)
        for shard, rows in self._by_shard(flat):
            with self._lock:
                reader = self._reader(shard)
            records = reader.read_many(flat[rows] - self._starts[shard])  # type: ignore[attr-defined]
            for row, record in zip(rows.tolist(), records, strict=True):
                found[row] = record
        out.extend(r for r in found if r is not None)
        return out

    def gather(self, positions: Sequence[int]) -> np.ndarray[Any, Any] | None:
        """The records at flat `positions` as the rows of one uint8 array, gathered from the
        shards' memory maps; None when the records vary in size or a shard is not mapped."""
        size = self._record_size
        if size is None or not len(positions):
            return None
        self._check_process()
        starts = self._starts
        if len(self.paths) == 1:
            mapped = self._mapped(0)
            return None if mapped is None else mapped.gather(positions, size)
        flat = np.asarray(positions, np.int64)
        out = np.empty((len(flat), size), np.uint8)
        for shard, rows in self._by_shard(flat):
            mapped = self._mapped(shard)
            part = None if mapped is None else mapped.gather(flat[rows] - starts[shard], size)
            if part is None:
                return None
            out[rows] = part
        return out

    def read_run(self, first: int, stop: int, out: list[bytes] | None = None) -> list[bytes]:
        """Records at flat positions first..stop-1, all in one shard: one range read. When it
        fails, the records are read one by one on a fresh reader, into `out` (see `read`),
        so that the error names the corrupt record."""
        self._check_process()
        shard = bisect.bisect_right(self._starts, first) - 1
        base = self._starts[shard]
        mapped = self._mapped_for_reads(shard, stop - first)
        if mapped is not None and (found := mapped.read(np.arange(first - base, stop - base))):
            return found
        with self._lock:
            try:
                records: list[bytes] = self._reader(shard).read(first - base, stop - base)
                return records
            except _READ_ERRORS:  # names no record, and leaves the reader failed for good
                reader, self.readers[shard] = self.readers[shard], None
                if reader is not None:
                    _close(reader)
        return self.read(range(first, stop), out)

    def chunks(self, pieces: Sequence[range]) -> Iterator[tuple[Sequence[int], list[bytes]]]:
        """Every record of `pieces` in order with its flat position, a chunk at a time (range
        reads where positions are contiguous). A record that fails raises ShardError after
        the records before it were yielded."""
        for piece in pieces:
            for positions, contiguous in self._spans(piece):
                done: list[bytes] = []  # what was read of the chunk before a failed record
                try:
                    if contiguous:
                        records = self.read_run(positions.start, positions.stop, done)
                    else:
                        records = self.read(positions, done)
                except ShardError:
                    if done:
                        yield positions[: len(done)], done
                    raise
                yield positions, records

    def _spans(self, piece: range) -> Iterator[tuple[range, bool]]:
        """`piece` in chunks of at most CHUNK positions, and whether a chunk is contiguous
        positions in one shard (one range read)."""
        if piece.step != 1:
            for start in range(0, len(piece), CHUNK):
                yield piece[start : start + CHUNK], False
            return
        position = piece.start
        while position < piece.stop:
            shard_end = self._starts[bisect.bisect_right(self._starts, position)]
            stop = min(position + CHUNK, piece.stop, shard_end)
            yield range(position, stop), True
            position = stop

    def _read_error(self, shard: int, record: int, exc: BaseException) -> Exception:
        """Drop the failed reader (the next read reopens it, so healthy records stay readable)
        and name the shard and the record (call with the lock held)."""
        reader, self.readers[shard] = self.readers[shard], None
        if reader is not None:
            _close(reader)
        self._check_unchanged()
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return shard_error(self.paths[shard], f"record {record} cannot be read ({reason})")


def _close(reader: ShardReader) -> None:
    """Close `reader`, which may have failed (a failed reader reports its failure again)."""
    with contextlib.suppress(RuntimeError):
        reader.close()


class _Process:
    """Which process this is, as a counter bumped in every forked child (cheaper than
    calling os.getpid() on each read)."""

    generation = 0

    @classmethod
    def forked(cls) -> None:
        cls.generation += 1


_process = _Process
os.register_at_fork(after_in_child=_Process.forked)
_inherited: list[object] = []  # readers and maps a forked child must never touch
_UNMAPPED = object()  # a shard `map_shard` cannot map
_PER_PROCESS = ("_lock", "readers", "maps", "chunked", "_unmapped_reads", "_chunked_calls")
