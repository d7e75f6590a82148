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
- one generation: a source pins the generation of the dataset it was made for
  (`catalog.storage.generations`) and reads only it, as long as it lives, also while another
  process prepares the dataset again (``--overwrite``); a pointer given as `folder` is
  resolved once;
- any data dir: the shards open through the data dir's store (`catalog.storage.data_dir`,
  `Store.shards`, resolved once when the source is made): a local generation in place, a
  generation in a bucket (a `catalog.storage.remote.RemoteDir`) through a local shard cache
  or by byte ranges (``remote_read=``, `catalog.storage.bucket_shards`); everything above
  holds there too;
- honest: a missing, truncated or corrupt shard raises ShardError naming the shard (checked
  when the source is made, and on every failed read), and one bad record does not stop the
  healthy ones from being read; a record that does not decode is a SourceFormatError naming
  the shard and the record.

This module holds the Sequence protocol, indexing and views. The parts behind it:

- `catalog.read.rows`: the flat row space over every shard of the dataset (split after
  split); a data source is a list of ranges in it (``train[:10%]+test`` is two ranges);
- `catalog.read.records`: reading records from the shards, per process (readers, the lock,
  forks, memory maps, the checks and the read errors);
- `catalog.read.decoding`: records into examples (the codec, ``decoders``, ``as_supervised``);
- `catalog.read.record_format`: the formats records are stored in, by the name
  ``info.record_format`` gives: catalog's own (`catalog.read.catalog_format`), or one another
  module registers (TensorFlow Datasets' serialized Examples, registered where `catalog.open_tfds`
  is defined). An info whose format no module registered is a SourceFormatError.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.info.dataset_info import DatasetInfo
from catalog.info.split_request import SplitRequest
from catalog.info.splits import Split, SplitArg, SplitsArg, split_text
from catalog.read import catalog_format  # noqa: F401  (registers catalog's own record format)
from catalog.read import options as read_options
from catalog.read.array_record import READER_OPTIONS
from catalog.read.decoding import Decoder, Decoding, Example
from catalog.read.options import ReadOptions
from catalog.read.record_format import RecordFormat, format_of
from catalog.read.records import Records, check_shards
from catalog.read.remote_shard import RangeShard
from catalog.read.rows import Rows, split_pieces
from catalog.storage.data_dir import Location, RemoteRead, Shards, Store, location, store_for
from catalog.storage.shard_cache import ShardCache

__all__ = ["READER_OPTIONS", "DataSource", "Decoder", "Example", "open_shards", "open_sources"]


class DataSource(Sequence[Example]):
    """Random access to the examples a split spec selects (see the module docstring).

    A `collections.abc.Sequence` of examples: ``len(ds)``, ``ds[i]`` (a dict of NumPy
    values), ``ds[[i, j]]`` (a list), ``ds[a:b:c]`` (a view), iteration, ``__getitems__``;
    picklable and thread-safe. Made by `catalog.data_source` or
    `DatasetBuilder.as_data_source`, rarely by hand.

    Args:
        folder: the prepared generation's directory (or a pointer to it, resolved once).
        info: the dataset's `DatasetInfo` (its splits and shards).
        split: a split spec or `catalog.ReadInstruction`.
        decoders: per feature path, False for the stored bytes or a function of them.
        as_supervised: examples as ``(input, target)`` of the supervised keys.
        remote_read: for a bucket, ``"cache"`` (whole shards) or ``"range"`` (byte ranges).
        cache: the local shard cache of a bucket data dir.

    Raises:
        SplitError: the split spec is malformed or names no split.
        ShardError: a shard is missing, not its recorded size or count (and, when read, a
            damaged record, naming shard and record).
        NotPreparedError: the generation is gone.
        IndexError: (``ds[i]``) an index past either end.
    """

    def __init__(
        self,
        folder: str | Location,
        info: DatasetInfo,
        split: SplitArg,
        *,
        decoders: Mapping[str, Decoder] | None = None,
        as_supervised: bool = False,
        remote_read: RemoteRead = "cache",
        cache: ShardCache | None = None,
        _pieces: list[range] | None = None,
        _shards: Shards | None = None,
        _parsed: Split | None = None,
    ) -> None:
        self.info = info
        #: the split spec as given, as text (a view's: its source's, with the slice taken)
        self.split = split if isinstance(split, str) else split_text(split)
        self._decoders = dict(decoders or {})
        self._as_supervised = as_supervised
        record_format = format_of(info, folder)
        if _shards is None:  # made by hand from a folder: the store holding it reads it
            where = location(folder)
            _shards = open_shards(holding(where), where, info, record_format, remote_read, cache)
        #: how the records' shards open (`catalog.storage.data_dir.Shards`, from the data
        #: dir's store): the generation resolved and held once (while this source and its
        #: views live), checked when it was resolved, shared with the views
        self._shards = _shards
        self._folder = _shards.folder
        made = None
        if _pieces is None:
            made = _shards.stamp()
            _pieces = split_pieces(info, split if _parsed is None else _parsed)
        self._rows = Rows(_pieces, f"{info.name} split {self.split!r}")
        self._decoding = Decoding(info, record_format, self._decoders, as_supervised)
        self._records = Records(
            _shards, info, self.split, record_format, self._decoding.record_size, made
        )
        self._bind()

    def _bind(self) -> None:
        """What `__getitem__` calls, bound once (the hot path takes the fewest steps)."""
        self._position = self._rows.position
        self._read_one = self._records.read_one
        self._decode = self._decoding.decode

    @property
    def features(self) -> FeaturesDict:
        return self.info.features

    @property
    def path(self) -> Location:
        """The folder of the prepared dataset this source reads: the generation its
        ``<version>`` pointed to when the source was made (`catalog.storage.generations`;
        a `RemoteDir` in a remote data dir)."""
        return self._folder

    def warm(self, batched: bool = True) -> None:
        """Open every shard now, and with `batched` also map and verify the shards batched
        reads gather from (`read_batch`, iteration), instead of at the first read: what a
        pipeline's worker process does before it takes work."""
        self._records.warm(batched)

    def close(self) -> None:
        """Close this process's readers (they reopen on the next access)."""
        self._records.close()

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_position", "_read_one", "_decode"):
            del state[name]
        return state  # readers and codecs are dropped by `Records` and `Decoding` themselves

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    # -- Sequence -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._rows.len

    @overload
    def __getitem__(self, key: int) -> Example: ...
    @overload
    def __getitem__(self, key: slice) -> DataSource: ...
    @overload
    def __getitem__(self, key: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]: ...
    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:  # the hot path: one record, fewest steps
            record = self._read_one(self._position(key))
            try:
                return self._decode(record)
            except SourceFormatError as exc:
                raise self._decode_error([self._position(key)], [record], exc) from None
        if isinstance(key, slice):
            view = DataSource(
                self._folder,
                self.info,
                f"{self.split}[{_slice_text(key)}]",
                decoders=self._decoders,
                as_supervised=self._as_supervised,
                _pieces=self._rows.select(key),
                _shards=self._shards,
            )
            view._records.stamp = self._records.stamp  # the same prepared copy as this one's
            return view
        if isinstance(key, np.ndarray) and key.ndim == 0:
            key = key.item()
        if isinstance(key, (list, tuple, range, np.ndarray)):
            return self.__getitems__(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self[int(key)]
        return self._decode_at([self._position(key)])[0]

    def __getitems__(self, indices: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]:
        return self._decode_at(self._rows.positions(_int_rows(indices)))

    _getitems = __getitems__  # Grain's name for the batched fetch

    def read_batch(self, indices: Sequence[int] | np.ndarray[Any, Any]) -> Any | None:
        """The examples at `indices` as one batch: a dict of stacked arrays (``n`` rows each),
        or an ``(inputs, targets)`` pair with `as_supervised`. None when the features cannot be
        decoded as columns (variable-size features, PNG/JPEG images, custom decoders): use
        `__getitems__` then. Used by `catalog.pipeline` for whole batches."""
        decoding = self._decoding
        if decoding.decode_columns(()) is None:
            return None  # cheap: no record is read for a source that cannot do it
        positions = self._rows.positions(_int_rows(indices))
        gathered = self._records.gather(positions)
        if gathered is not None and decoding.decode_rows is not None:
            try:
                columns = decoding.decode_rows(gathered)
            except SourceFormatError as exc:
                records = self._records.read(positions)
                raise self._decode_error(positions, records, exc) from None
        else:
            records = self._records.read(positions)
            try:
                columns = decoding.decode_columns(records)
                if columns is None:  # these features decode as columns: a record is malformed
                    raise SourceFormatError("a record is not the size its features take")
            except SourceFormatError as exc:
                raise self._decode_error(positions, records, exc) from None
        return decoding.columns(columns)

    def __iter__(self) -> Iterator[Example]:
        decode_many = self._decoding.decode_many
        for positions, records in self._records.chunks(self._rows.pieces):
            try:
                examples = decode_many(records)
            except SourceFormatError as exc:
                raise self._decode_error(positions, records, exc) from None
            yield from examples

    def _decode_at(self, positions: Sequence[int]) -> list[Example]:
        """The examples at flat `positions` (already range-checked), in order."""
        records = self._records.read(positions)
        try:
            return self._decoding.decode_many(records)
        except SourceFormatError as exc:
            raise self._decode_error(positions, records, exc) from None

    def _decode_error(
        self, positions: Sequence[int], records: Sequence[bytes], exc: SourceFormatError
    ) -> SourceFormatError:
        return self._decoding.error(positions, records, exc, self._records.locate, self.split)

    def __repr__(self) -> str:
        return (
            f"DataSource(name={self.info.name!r}, version={self.info.version!r}, "
            f"split={self.split!r}, num_examples={len(self)}, features={self.features!r})"
        )


def _int_rows(indices: Sequence[int] | np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`indices` as an array, which must hold ints."""
    rows = np.asarray(indices)
    if rows.dtype.kind not in "iu" and rows.size:
        raise TypeError(f"DataSource indices must be ints, got {rows.dtype} values")
    return rows


def _slice_text(key: slice) -> str:
    parts = ["" if v is None else str(v) for v in (key.start, key.stop)]
    text = ":".join(parts)
    return text if key.step is None else f"{text}:{key.step}"


def holding(where: Location) -> Store:
    """The store holding the generation `where`, for a folder given by hand (not found by the
    resolver): `DataSource(folder, ...)`, `open_tfds(path)`, `open_sources` without a store.
    Nothing else below `catalog.api` makes a store."""
    return store_for(where)


def open_sources(
    store: Store | None,
    folder: str | Location,
    info: DatasetInfo,
    split: SplitsArg | SplitRequest | None = None,
    options: ReadOptions = read_options.DEFAULT,
) -> DataSource | list[DataSource] | dict[str, DataSource]:
    """The data sources of the prepared generation `folder` of the data dir `store` (None:
    the store holding `folder`, for a dataset directory opened by path): one `DataSource` for
    a split spec, a list of them for a list of specs (as TFDS's ``split=["train", "test"]``),
    or ``{split: DataSource}`` of every split when `split` is None. What `builder().
    as_data_source`, `data_source(path)` and `open_tfds` return. A remote `folder` is listed
    once for all of them; `options` say how it is read. `split` is parsed here unless it comes
    parsed (`catalog.info.split_request.SplitRequest`)."""
    request = SplitRequest.parse(split)
    where = location(folder)
    store = store if store is not None else holding(where)
    read = store.source_options(options.remote_read, options.cache_dir, options.cache_size)
    shards = open_shards(store, where, info, format_of(info, where), **read)

    def one(text: str, parsed: Split) -> DataSource:
        return DataSource(
            where, info, text, decoders=options.decoders, as_supervised=options.as_supervised,
            _shards=shards, _parsed=parsed,
        )  # fmt: skip

    return request.sources(one, info.splits)


def open_shards(
    store: Store,
    folder: str | Location,
    info: DatasetInfo,
    record_format: RecordFormat,
    remote_read: RemoteRead = "cache",
    cache: ShardCache | None = None,
) -> Shards:
    """How the shards of the generation in `folder` open: its data dir's `store` decides
    (`catalog.storage.data_dir.Store.shards`), handed the record format's reader for a local
    file and `RangeShard` for byte ranges), checked: each split's shards its own and holding
    its count, each shard there with the size it was written with."""
    where = location(folder)
    open_file = functools.partial(record_format.open, info=info)
    shards = store.shards(where, info, open_file, RangeShard, remote_read, cache)
    check_shards(shards.folder, info)
    shards.check()
    return shards
