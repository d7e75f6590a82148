"""DataSource: random access to the examples of a split spec, as NumPy values.

Contract (what PyTorch's DataLoader, Grain and plain loops rely on):

- a ``collections.abc.Sequence``: ``len(ds)``, ``ds[i]`` (negative indices count from the end;
  IndexError past it), ``ds[[i, j]]`` / ``ds[np.array([...])]`` (a list of examples),
  ``ds[a:b:c]`` (a view: a DataSource over those indices, nothing copied), iteration;
- ``__getitems__(indices)`` (PyTorch's batched fetch) and ``_getitems`` (Grain) return a list;
- picklable: readers are dropped when pickled and reopened lazily in each process, also after
  a fork (a reader opened in the parent is never used in a child); catalog's shards are
  uncompressed, which keeps array_record safe in forked workers (see `catalog.storage.shards`);
- safe to call from several threads at once (record reads take a lock; decoding does not);
- fast in bulk: batches of fixed-size examples (`read_batch`) and iteration gather records
  from a memory map of each shard (`catalog.read.mapped_shard`; the shard's sha256 is checked when
  a process first maps it), one NumPy gather per batch instead of a read call per record;
- examples are dicts of writable NumPy arrays and Python ints, ready for default collate;
  ``decoders={"image": False}`` returns a feature's stored bytes undecoded, a callable in
  its place decodes those bytes itself, and ``as_supervised=True`` returns
  ``(input, target)`` tuples of the dataset's supervised keys;
- never loads a split into memory: every access reads only the records it needs;
- honest: a missing, truncated or corrupt shard raises ShardError naming the shard (checked
  when the source is made, and on every failed read), and one bad record does not stop the
  healthy ones from being read.

The records are catalog's own (`catalog.features.codec`) in ArrayRecord shards, or, for a directory
TensorFlow Datasets prepared (`catalog.interop.tfds`), serialized tf.train.Examples in ArrayRecord
or TFRecord shards (``info.record_format``); TFRecord shards are read through an index of record
offsets (`catalog.interop.tfrecord.index`).

Rows are addressed in one flat space over every shard of the dataset (split after split); a
data source is a list of ranges in that space (``train[:10%]+test`` is two ranges).
"""

from __future__ import annotations

import bisect
import contextlib
import operator
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from array_record.python.array_record_module import ArrayRecordReader

from catalog.errors import NotPreparedError, ShardError, SourceFormatError, SplitError
from catalog.features import FeaturesDict
from catalog.features.codec import RECORD_FORMAT, RecordCodec
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.array_record import READER_OPTIONS, open_reader
from catalog.read.mapped_shard import MappedShard, ShardIndex, map_shard
from catalog.read.splits import resolve
from catalog.storage.shards import is_compressed, shard_error

if TYPE_CHECKING:  # only directories TensorFlow Datasets prepared need these
    from catalog.interop.tfds.codec import ExampleCodec
    from catalog.interop.tfrecord.index import IndexedReader

__all__ = ["READER_OPTIONS", "DataSource"]

_CHUNK = 1024  # records per range read while iterating

Example = dict[str, Any]
#: A `decoders` value: False keeps the stored bytes, a function decodes them its own way.
Decoder = Callable[[bytes], Any] | Literal[False]


def _compose(pieces: Sequence[range], rows: range) -> list[range]:
    """The pieces selecting rows `rows` (indices into the concatenation of `pieces`)."""
    if rows.step < 0:
        total = sum(len(p) for p in pieces)
        flipped = range(
            total - 1 - rows.start, total - 1 - rows.start - rows.step * len(rows), -rows.step
        )
        return _compose([p[::-1] for p in reversed(pieces)], flipped)
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


class DataSource(Sequence[Example]):
    """Random access to the examples a split spec selects (see the module docstring)."""

    def __init__(
        self,
        folder: str | Path,
        info: DatasetInfo,
        split: str,
        *,
        decoders: Mapping[str, Decoder] | None = None,
        as_supervised: bool = False,
        _pieces: list[range] | None = None,
    ) -> None:
        self.info = info
        self.split = split
        self._decoders = dict(decoders or {})
        self._as_supervised = as_supervised
        self._folder = Path(folder)
        self._compressed = is_compressed(info.shard_options)
        self._stamp = _stamp(self._folder) if _pieces is None else None
        self._paths: list[str] = []
        self._sha256: list[str] = []  # of each shard, as dataset_info.json records it
        self._starts = [0]  # flat position of each shard's first record, then the total
        split_base = {}
        for name, split_info in info.splits.items():
            split_base[name] = self._starts[-1]
            if _pieces is None:
                _check_split(self._folder, info, name)
            for shard in split_info.shards:
                self._paths.append(str(self._folder / shard.file))
                self._sha256.append(shard.sha256)
                self._starts.append(self._starts[-1] + shard.num_examples)
                if _pieces is None:
                    _check_shard(self._paths[-1], shard.num_bytes)
        if _pieces is None:
            counts = {name: s.num_examples for name, s in info.splits.items()}
            _pieces = [
                range(r.start + split_base[name], r.stop + split_base[name], r.step)
                for name, r in resolve(split, counts)
            ]
        self._pieces = [p for p in _pieces if p] or [range(0)]
        self._piece_starts = [0]
        for piece in self._pieces:
            self._piece_starts.append(self._piece_starts[-1] + len(piece))
        self._len = self._piece_starts[-1]
        self._known_maps: dict[int, ShardIndex] = {}  # shards another process verified
        self._setup_decoding()
        self._setup_process_state()

    def _setup_decoding(self) -> None:
        decoders = self._decoders
        for path, decoder in decoders.items():
            if decoder is not False and not callable(decoder):
                raise TypeError(
                    f"decoders[{path!r}] must be False (keep the stored bytes) or a function "
                    f"of the stored bytes, got {decoder!r}"
                )
        codec_type: type[RecordCodec | ExampleCodec] = RecordCodec
        if self.info.record_format.get("name") != RECORD_FORMAT["name"]:
            from catalog.interop.tfds import RECORD_FORMAT_NAME

            if self.info.record_format.get("name") == RECORD_FORMAT_NAME:
                from catalog.interop.tfds.codec import ExampleCodec

                codec_type = ExampleCodec  # a TFDS directory's serialized Examples
        codec = codec_type(
            self.info.features,
            skip=[path for path, d in decoders.items() if d is False],
            decoders={path: d for path, d in decoders.items() if d is not False},
        )
        self._decode: Callable[[bytes], Any] = codec.decode
        self._decode_many: Callable[[Sequence[bytes]], list[Any]] = codec.decode_many
        # Whole batches as columns: catalog's own fixed-size records only (TFDS's Examples are
        # decoded one by one).
        self._decode_columns: Callable[[Sequence[bytes]], Any | None] = (
            codec.decode_columns if isinstance(codec, RecordCodec) else _no_columns
        )
        self._decode_rows: Callable[[np.ndarray[Any, Any]], Any | None] | None = (
            codec.decode_rows if isinstance(codec, RecordCodec) else None
        )
        # The size of every stored record (fixed-size features): checked when a reader opens.
        self._record_size = codec.record_size if isinstance(codec, RecordCodec) else None
        if self._as_supervised:
            keys = self.info.supervised_keys
            if keys is None:
                raise SplitError(
                    f"{self.info.name} declares no supervised_keys, so as_supervised=True "
                    "cannot pick (input, target); index the example dicts instead"
                )
            self._decode, self._decode_many = _supervised(keys, codec)

    def _setup_process_state(self) -> None:
        self._lock = threading.Lock()
        self._readers: list[ArrayRecordReader | IndexedReader | None] = [None] * len(self._paths)
        # batched reads through memory maps (catalog's uncompressed shards; `_UNMAPPED` for a
        # shard laid out otherwise, read through array_record)
        self._maps: list[MappedShard | object | None] = [None] * len(self._paths)
        self._generation = _process.generation

    @property
    def features(self) -> FeaturesDict:
        return self.info.features

    @property
    def path(self) -> Path:
        """The folder of the prepared dataset this source reads."""
        return self._folder

    # -- readers: opened lazily, once per process -----------------------------------------
    def _check_process(self) -> None:
        if self._generation != _process.generation:
            # Forked: the parent's readers must not be touched here, not even closed. Keep
            # them referenced so their destructors never run in this process.
            _inherited.extend(r for r in self._readers if r is not None)
            _inherited.extend(m for m in self._maps if m is not None)
            self._setup_process_state()

    def _reader(self, shard: int) -> ArrayRecordReader | IndexedReader:
        reader = self._readers[shard]
        if reader is None:
            self._check_unchanged()
            path = self._paths[shard]
            if self.info.record_format.get("file_format") == "tfrecord":  # a TFDS directory's
                from catalog.interop.tfrecord.index import IndexedReader

                reader = IndexedReader(path)
            else:
                reader = open_reader(path, compressed=self._compressed)
            try:
                self._check_records(shard, reader)
            except BaseException:
                reader.close()
                raise
            self._readers[shard] = reader
        return reader

    def _check_unchanged(self) -> None:
        """The prepared copy must still be the one this source was made for: a copy prepared
        again under it (``--overwrite``) has other shards and counts."""
        if self._stamp is not None and _stamp(self._folder) != self._stamp:
            raise NotPreparedError(
                f"{self._folder} was prepared again after this data source of "
                f"{self.info.full_name} split {self.split!r} was made (its dataset_info.json "
                "changed); make a new data source (catalog.data_source(...))"
            )

    def _check_records(self, shard: int, reader: ArrayRecordReader | IndexedReader) -> None:
        """A shard must hold the records dataset_info.json says, of the size its features
        give (when they are all fixed-size): checked once per shard per process, when its
        reader opens, before any example is returned."""
        path, expected = self._paths[shard], self._starts[shard + 1] - self._starts[shard]
        held = int(reader.num_records()) if hasattr(reader, "num_records") else len(reader)
        if held != expected:
            raise shard_error(path, f"it holds {held} records, dataset_info.json says {expected}")
        if self._record_size is not None and held:
            reader.seek(0)
            size = len(reader.read())
            if size != self._record_size:
                raise shard_error(
                    path,
                    f"its records have {size} bytes, but the features in dataset_info.json "
                    f"encode to {self._record_size}: the data and its description differ",
                )

    def _mapped(self, shard: int) -> MappedShard | None:
        """Shard `shard` mapped for batched reads, or None when it must be read through
        array_record (compressed, a TFDS directory's, or laid out otherwise)."""
        mapped = self._maps[shard]
        if mapped is None:
            with self._lock:
                mapped = self._maps[shard]
                if mapped is None:
                    mapped = _UNMAPPED
                    if not self._compressed and self._record_size is not None:
                        self._reader(shard)  # checks the shard's records, once
                        count = self._starts[shard + 1] - self._starts[shard]
                        path, sha256 = self._paths[shard], self._sha256[shard]
                        known = self._known_maps.get(shard)
                        mapped = map_shard(path, count, sha256, known) or _UNMAPPED
                    self._maps[shard] = mapped
        return mapped if isinstance(mapped, MappedShard) else None

    def warm(self, batched: bool = True) -> None:
        """Open every shard now, and with `batched` also map and verify the shards batched
        reads gather from (`read_batch`, iteration), instead of at the first read: what a
        pipeline's worker process does before it takes work."""
        self._check_process()
        for shard in range(len(self._paths)):
            if not (batched and self._mapped(shard)):
                with self._lock:
                    self._reader(shard)

    def _gather(self, positions: Sequence[int]) -> np.ndarray[Any, Any] | None:
        """The records at flat `positions` as the rows of one uint8 array, gathered from the
        shards' memory maps; None when the records vary in size or a shard is not mapped."""
        size = self._record_size
        if size is None or not len(positions):
            return None
        self._check_process()
        starts = self._starts
        if len(self._paths) == 1:
            mapped = self._mapped(0)
            return None if mapped is None else mapped.gather(positions, size)
        flat = np.asarray(positions, np.int64)
        shards = np.searchsorted(starts, flat, side="right") - 1
        out = np.empty((len(flat), size), np.uint8)
        for shard in np.unique(shards).tolist():
            mapped = self._mapped(shard)
            rows = np.flatnonzero(shards == shard)
            part = None if mapped is None else mapped.gather(flat[rows] - starts[shard], size)
            if part is None:
                return None
            out[rows] = part
        return out

    def _read(self, positions: Sequence[int]) -> list[bytes]:
        """The records at flat `positions` (already range-checked), in order."""
        self._check_process()
        starts, out = self._starts, []
        shard, pos = 0, 0
        with self._lock:
            try:
                if len(self._paths) == 1:
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
            except (RuntimeError, IndexError, ValueError) as exc:
                raise self._read_error(shard, pos - starts[shard], exc) from None
        return out

    def _read_error(self, shard: int, record: int, exc: BaseException) -> Exception:
        """Drop the failed reader (the next read reopens it, so healthy records stay readable)
        and name the shard and the record (call with the lock held)."""
        reader, self._readers[shard] = self._readers[shard], None
        if reader is not None:
            with contextlib.suppress(RuntimeError):  # a failed reader reports it again
                reader.close()
        self._check_unchanged()
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return shard_error(self._paths[shard], f"record {record} cannot be read ({reason})")

    def close(self) -> None:
        """Close this process's readers (they reopen on the next access)."""
        with self._lock:
            if self._generation == _process.generation:
                for reader in self._readers:
                    if reader is not None:
                        reader.close()
                for mapped in self._maps:
                    if isinstance(mapped, MappedShard):
                        mapped.close()
            self._readers = [None] * len(self._paths)
            self._maps = [None] * len(self._paths)

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # what this process verified of its mapped shards: a worker maps them without
        # parsing and hashing them again (`catalog.read.mapped_shard.ShardIndex`)
        state["_known_maps"] = {
            **self._known_maps,
            **{i: m.index() for i, m in enumerate(self._maps) if isinstance(m, MappedShard)},
        }
        for name in (
            "_lock",
            "_readers",
            "_maps",
            "_generation",
            "_decode",
            "_decode_many",
            "_decode_columns",
            "_decode_rows",
        ):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup_decoding()
        self._setup_process_state()

    # -- Sequence -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._len

    def _position(self, index: Any) -> int:
        """The flat position of row `index` (negative counts from the end)."""
        try:
            if len(self._pieces) == 1:
                position: int = self._pieces[0][index]
                return position
            row: int = range(self._len)[index]
        except IndexError:
            raise IndexError(
                f"index {index} is out of range for {self.info.name} split {self.split!r} "
                f"with {self._len} examples"
            ) from None
        except TypeError:
            raise TypeError(
                "DataSource indices must be ints, slices, or lists/arrays of ints, got "
                f"{type(index).__name__}"
            ) from None
        piece = bisect.bisect_right(self._piece_starts, row) - 1
        return self._pieces[piece][row - self._piece_starts[piece]]

    @overload
    def __getitem__(self, key: int) -> Example: ...
    @overload
    def __getitem__(self, key: slice) -> DataSource: ...
    @overload
    def __getitem__(self, key: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]: ...
    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:  # the hot path: one record, fewest steps
            position = self._position(key)
            if self._generation != _process.generation:
                self._check_process()
            lock = self._lock
            lock.acquire()
            shard = 0
            try:
                reader = self._readers[0] if len(self._paths) == 1 else None
                if reader is None:
                    shard = bisect.bisect_right(self._starts, position) - 1
                    reader = self._reader(shard)
                    position -= self._starts[shard]
                reader.seek(position)
                record = reader.read()
            except (RuntimeError, IndexError, ValueError) as exc:
                raise self._read_error(shard, position, exc) from None
            finally:
                lock.release()
            try:
                return self._decode(record)
            except SourceFormatError as exc:
                raise self._decode_error([self._position(key)], [record], exc) from None
        if isinstance(key, slice):
            pieces = _compose(self._pieces, range(self._len)[key])
            split = f"{self.split}[{_slice_text(key)}]"
            view = DataSource(
                self._folder,
                self.info,
                split,
                decoders=self._decoders,
                as_supervised=self._as_supervised,
                _pieces=pieces,
            )
            view._stamp = self._stamp  # the same prepared copy as this source's
            return view
        if isinstance(key, np.ndarray) and key.ndim == 0:
            key = key.item()
        if isinstance(key, (list, tuple, range, np.ndarray)):
            return self.__getitems__(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self[operator.index(key)]
        return self._decode_at([self._position(key)])[0]

    def __getitems__(self, indices: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]:
        rows = np.asarray(indices)
        if rows.dtype.kind not in "iu" and rows.size:
            raise TypeError(f"DataSource indices must be ints, got {rows.dtype} values")
        return self._decode_at([self._position(i) for i in rows.tolist()])

    _getitems = __getitems__  # Grain's name for the batched fetch

    def read_batch(self, indices: Sequence[int] | np.ndarray[Any, Any]) -> Any | None:
        """The examples at `indices` as one batch: a dict of stacked arrays (``n`` rows each),
        or an ``(inputs, targets)`` pair with `as_supervised`. None when the features cannot be
        decoded as columns (variable-size features, PNG/JPEG images, custom decoders): use
        `__getitems__` then. Used by `catalog.pipeline` for whole batches."""
        if self._decode_columns(()) is None:
            return None  # cheap: no record is read for a source that cannot do it
        rows = np.asarray(indices)
        if rows.dtype.kind not in "iu" and rows.size:
            raise TypeError(f"DataSource indices must be ints, got {rows.dtype} values")
        piece = self._pieces[0]
        if (
            len(self._pieces) == 1
            and piece.step == 1
            and rows.size
            and rows.min() >= 0
            and rows.max() < self._len
        ):
            positions = (rows + piece.start).tolist()  # one contiguous range: no lookups
        else:
            positions = [self._position(i) for i in rows.tolist()]
        gathered = self._gather(positions)
        if gathered is not None and self._decode_rows is not None:
            try:
                columns = self._decode_rows(gathered)
            except SourceFormatError as exc:
                raise self._decode_error(positions, self._read(positions), exc) from None
        else:
            records = self._read(positions)
            try:
                columns = self._decode_columns(records)
                if columns is None:  # these features decode as columns: a record is malformed
                    raise SourceFormatError("a record is not the size its features take")
            except SourceFormatError as exc:
                raise self._decode_error(positions, records, exc) from None
        if columns is None or not self._as_supervised:
            return columns
        keys = self.info.supervised_keys
        assert keys is not None  # checked when as_supervised was set
        return columns[keys[0]], columns[keys[1]]

    def _read_run(self, first: int, stop: int) -> list[bytes]:
        """Records at flat positions first..stop-1, all in one shard: one range read."""
        self._check_process()
        shard = bisect.bisect_right(self._starts, first) - 1
        base = self._starts[shard]
        if self._record_size is not None and (mapped := self._mapped(shard)) is not None:
            return mapped.read(np.arange(first - base, stop - base))
        with self._lock:
            try:
                records: list[bytes] = self._reader(shard).read(first - base, stop - base)
            except (RuntimeError, IndexError, ValueError) as exc:
                raise self._read_error(shard, first - base, exc) from None
        return records

    def _chunks(self) -> Iterator[tuple[Sequence[int], list[bytes]]]:
        """Every record in order with its flat position, a chunk at a time (range reads where
        rows are contiguous)."""
        for piece in self._pieces:
            if piece.step != 1:
                for start in range(0, len(piece), _CHUNK):
                    positions = piece[start : start + _CHUNK]
                    yield positions, self._read(positions)
                continue
            position = piece.start
            while position < piece.stop:
                shard_end = self._starts[bisect.bisect_right(self._starts, position)]
                stop = min(position + _CHUNK, piece.stop, shard_end)
                yield range(position, stop), self._read_run(position, stop)
                position = stop

    def __iter__(self) -> Iterator[Example]:
        for positions, records in self._chunks():
            try:
                examples = self._decode_many(records)
            except SourceFormatError as exc:
                raise self._decode_error(positions, records, exc) from None
            yield from examples

    def _decode_at(self, positions: Sequence[int]) -> list[Example]:
        """The examples at flat `positions` (already range-checked), in order."""
        records = self._read(positions)
        try:
            return self._decode_many(records)
        except SourceFormatError as exc:
            raise self._decode_error(positions, records, exc) from None

    def _decode_error(
        self, positions: Sequence[int], records: Sequence[bytes], exc: SourceFormatError
    ) -> SourceFormatError:
        """`exc` naming the shard and record of the first of `records` that does not decode
        (a record whose bytes were read but do not match the dataset's features)."""
        culprit = positions[0]
        for position, record in zip(positions, records, strict=True):
            try:
                self._decode(record)
            except SourceFormatError as error:
                exc, culprit = error, position
                break
        shard = bisect.bisect_right(self._starts, culprit) - 1
        if self.info.record_format.get("name") == RECORD_FORMAT["name"]:
            fix = (
                f"the shard no longer matches the dataset's features (changed after it was "
                f"prepared?): run 'catalog verify {self.info.name}' to check it, and 'catalog "
                f"prepare {self.info.name} --overwrite' to prepare it again"
            )
        else:
            fix = (
                "the directory's files do not match its features.json: write it again with "
                "the tool that made it (e.g. TFDS's download_and_prepare)"
            )
        return SourceFormatError(
            f"{self._paths[shard]}: record {culprit - self._starts[shard]} (split "
            f"{self.split!r}) cannot be decoded: {exc}; {fix}"
        )

    def __repr__(self) -> str:
        return (
            f"DataSource(name={self.info.name!r}, version={self.info.version!r}, "
            f"split={self.split!r}, num_examples={self._len}, features={self.features!r})"
        )


def _no_columns(records: Sequence[bytes]) -> None:
    """`read_batch` for records that cannot be decoded as columns."""


def _stamp(folder: Path) -> tuple[int, int, int] | None:
    """Which dataset_info.json `folder` holds now (inode, mtime, size), or None."""
    try:
        st = (folder / INFO_FILE).stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _check_split(folder: Path, info: DatasetInfo, split: str) -> None:
    """A split's shards must be its own and hold its example count (dataset_info.json that was
    edited or damaged would otherwise silently serve another split's examples)."""
    split_info = info.splits[split]
    held = sum(s.num_examples for s in split_info.shards)
    where = folder / INFO_FILE
    if held != split_info.num_examples:
        raise ShardError(
            f"{where}: split {split!r} says {split_info.num_examples} examples but its shards "
            f"hold {held}; run 'catalog verify' and 'catalog prepare --overwrite'"
        )
    prefix = f"{info.name}-{split}."  # .array_record-NNNNN-of-NNNNN (or TFDS's .tfrecord-)
    for shard in split_info.shards:
        if not shard.file.startswith(prefix):
            raise ShardError(
                f"{where}: split {split!r} lists shard {shard.file}, which is not one of its "
                f"own ({prefix}-*); run 'catalog verify' and 'catalog prepare --overwrite'"
            )


def _check_shard(path: str, num_bytes: int) -> None:
    """A shard must be there with the size it was written with (a cheap stat per shard)."""
    try:
        size = Path(path).stat().st_size
    except FileNotFoundError:
        raise shard_error(path, "the file is missing") from None
    if size != num_bytes:
        raise shard_error(path, f"it has {size} bytes, but {num_bytes} were written")


def _supervised(
    keys: tuple[str, str], codec: RecordCodec | ExampleCodec
) -> tuple[Callable[[bytes], Any], Callable[[Sequence[bytes]], list[Any]]]:
    """Decoders returning ``(example[input], example[target])`` instead of the dict."""
    x, y = keys

    def one(record: bytes) -> tuple[Any, Any]:
        example = codec.decode(record)
        return example[x], example[y]

    def many(records: Sequence[bytes]) -> list[Any]:
        return [(e[x], e[y]) for e in codec.decode_many(records)]

    return one, many


def _slice_text(key: slice) -> str:
    parts = ["" if v is None else str(v) for v in (key.start, key.stop)]
    text = ":".join(parts)
    return text if key.step is None else f"{text}:{key.step}"


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
