"""Decoding a data source's records into examples: the codec, ``decoders=``, ``as_supervised``.

`Decoding` asks the dataset's record format (`catalog.read.record_format`) for the codec of its
features, with the features ``decoders={"image": False}`` names kept as their stored bytes and
those given a function decoded by it. Examples are dicts of writable NumPy arrays and Python
ints; with ``as_supervised=True`` they are ``(input, target)`` tuples of the dataset's
supervised keys. A codec that decodes fixed-size records as columns (`ColumnCodec`: catalog's
own) also decodes whole batches at once (`decode_columns`, `decode_rows`).

A record that was read but does not decode is a SourceFormatError naming the shard and the
record, and what to do about it (`Decoding.error`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from catalog.errors import SourceFormatError, SplitError
from catalog.features import SupervisedKeys, supervised_pair
from catalog.info.dataset_info import DatasetInfo
from catalog.read.record_format import Codec, ColumnCodec, RecordFormat

__all__ = ["Decoder", "Decoding", "Example"]

Example = dict[str, Any]
#: A `decoders` value: False keeps the stored bytes, a function decodes them its own way.
Decoder = Callable[[bytes], Any] | Literal[False]
_State = tuple[DatasetInfo, RecordFormat, dict[str, Decoder], bool]  # what `Decoding` pickles


class Decoding:
    """How the records of `info`'s dataset (in `record_format`) decode, as `decoders` and
    `as_supervised` ask. Pickles as those, and makes its codec again when unpickled."""

    def __init__(
        self,
        info: DatasetInfo,
        record_format: RecordFormat,
        decoders: Mapping[str, Decoder],
        as_supervised: bool,
    ) -> None:
        self._setup(info, record_format, dict(decoders), as_supervised)

    def _setup(
        self,
        info: DatasetInfo,
        record_format: RecordFormat,
        decoders: dict[str, Decoder],
        as_supervised: bool,
    ) -> None:
        self._args = (info, record_format, decoders, as_supervised)
        for path, decoder in decoders.items():
            if decoder is not False and not callable(decoder):
                raise TypeError(
                    f"decoders[{path!r}] must be False (keep the stored bytes) or a function "
                    f"of the stored bytes, got {decoder!r}"
                )
        codec = record_format.codec(
            info,
            skip=[path for path, d in decoders.items() if d is False],
            decoders={path: d for path, d in decoders.items() if d is not False},
        )
        self.decode: Callable[[bytes], Any] = codec.decode
        self.decode_many: Callable[[Sequence[bytes]], list[Any]] = codec.decode_many
        # Whole batches as columns: codecs of fixed-size records only (others decode one by
        # one). `record_size`: the size of every stored record, checked when a reader opens.
        columns = codec if isinstance(codec, ColumnCodec) else None
        self.decode_columns: Callable[[Sequence[bytes]], Any | None] = (
            _no_columns if columns is None else columns.decode_columns
        )
        self.decode_rows: Callable[[np.ndarray[Any, Any]], Any | None] | None = (
            None if columns is None else columns.decode_rows
        )
        self.record_size = None if columns is None else columns.record_size
        #: (input, target) of `as_supervised`, else None
        self.supervised_keys: SupervisedKeys | None = None
        if as_supervised:
            keys = info.supervised_keys
            if keys is None:
                raise SplitError(
                    f"{info.name} declares no supervised_keys, so as_supervised=True "
                    "cannot pick (input, target); index the example dicts instead"
                )
            self.supervised_keys = keys
            self.decode, self.decode_many = _supervised(keys, codec)

    def __getstate__(self) -> _State:
        return self._args

    def __setstate__(self, state: _State) -> None:
        self._setup(*state)

    def columns(self, columns: Any | None) -> Any | None:
        """Decoded columns as the caller asked: the dict, or an ``(inputs, targets)`` pair."""
        keys = self.supervised_keys
        if columns is None or keys is None:
            return columns
        return supervised_pair(keys, columns)

    def error(
        self,
        positions: Sequence[int],
        records: Sequence[bytes],
        exc: SourceFormatError,
        locate: Callable[[int], tuple[str, int]],
        split: str,
    ) -> SourceFormatError:
        """`exc` naming the shard and record (`locate` gives them for a flat position) of the
        first of `records` that does not decode (a record whose bytes were read but do not
        match the dataset's features), and what to do."""
        culprit = positions[0]
        for position, record in zip(positions, records, strict=True):
            try:
                self.decode(record)
            except SourceFormatError as error:
                exc, culprit = error, position
                break
        path, record_index = locate(culprit)
        info, record_format = self._args[0], self._args[1]
        return SourceFormatError(
            f"{path}: record {record_index} (split {split!r}) cannot be decoded: {exc}; "
            f"{record_format.decode_fix(info)}"
        )


def _no_columns(records: Sequence[bytes]) -> None:
    """`decode_columns` of records that cannot be decoded as columns."""


def _supervised(
    keys: SupervisedKeys, codec: Codec
) -> tuple[Callable[[bytes], Any], Callable[[Sequence[bytes]], list[Any]]]:
    """Decoders returning ``(example[input], example[target])`` instead of the dict (the
    input a dict of features when the keys name one)."""

    def one(record: bytes) -> tuple[Any, Any]:
        return supervised_pair(keys, codec.decode(record))

    def many(records: Sequence[bytes]) -> list[Any]:
        return [supervised_pair(keys, e) for e in codec.decode_many(records)]

    return one, many
