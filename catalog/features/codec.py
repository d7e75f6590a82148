"""The record format: one ArrayRecord record per example.

A record is one version byte followed by the example encoded by its FeaturesDict: fixed-size
features at constant offsets (raw image pixels, labels, scalars), then variable-size ones each
prefixed by its length. Decoding copies the record once into a writable buffer and hands out
NumPy views of it, so arrays are writable (PyTorch's collate accepts them without warnings)
and no value is copied twice. A batch of records decodes at once (`decode_many`): one buffer
for the batch, a few NumPy calls per feature, when the features are all fixed-size or those
of varying size decode a column at a time (`Text`; `FeaturesDict.decode_records`); records
of other features (encoded images, sequences) decode one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.features.base import Feature

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "RecordCodec"]

RECORD_VERSION = 1
#: Written into dataset_info.json so a reader knows how the records were encoded.
RECORD_FORMAT = {"name": "catalog-record", "version": RECORD_VERSION}
_HEADER = bytes([RECORD_VERSION])


class RecordCodec:
    """Encodes examples into records and decodes records into examples for one FeaturesDict.

    `skip` and `decoders` change how chosen features decode (see `FeaturesDict.decoder`):
    skipped ones come back as their stored bytes (e.g. the JPEG file).
    """

    def __init__(
        self,
        features: FeaturesDict,
        *,
        skip: Iterable[str] = (),
        decoders: Mapping[str, Callable[[bytes], Any]] | None = None,
    ) -> None:
        self.features = features
        self._decode_body = features.decoder(skip=skip, decoders=decoders)
        size = features.fixed_size
        #: The size of every record when all features are fixed-size, else None.
        self.record_size = None if size is None else size + 1
        custom = self._decode_body != features.decode
        self._record_size = None if custom else self.record_size
        # records of varying size decode a batch column by column when every feature of
        # varying size can (`FeaturesDict.decode_records`), unless a feature decodes its own way
        self._columnwise = not custom and all(
            type(f).decode_spans is not Feature.decode_spans for _, f in features._variable
        )

    def encode(self, example: Mapping[str, Any]) -> bytes:
        """Validate `example` against the features and return its record."""
        return _HEADER + self.features.encode(example)

    def decode(self, record: bytes) -> dict[str, Any]:
        """Return the example stored in `record` (NumPy arrays are writable)."""
        buf = bytearray(record)
        if not buf or buf[0] != RECORD_VERSION:
            raise _version_error(buf[0] if buf else "an empty record")
        result: dict[str, Any] = self._decode_body(buf, 1, len(buf) - 1)
        return result

    def decode_many(self, records: Sequence[bytes]) -> list[dict[str, Any]]:
        """Decode `records` in order; the same values as `decode` on each, faster in bulk."""
        size = self._record_size
        if len(records) < 2 or (size is None and not self._columnwise):
            return [self.decode(record) for record in records]
        buf = bytearray().join(records)  # one copy; bytearray(b"".join(...)) makes two
        if size is None:
            return self._decode_varied(records, buf)
        if len(buf) != size * len(records):
            return [self.decode(record) for record in records]  # raises on the odd one out
        rows = np.frombuffer(buf, np.uint8).reshape(len(records), size)
        if (rows[:, 0] != RECORD_VERSION).any():
            raise _version_error(int(rows[rows[:, 0] != RECORD_VERSION][0, 0]))
        examples = self.features.decode_block(rows[:, 1:])
        if examples is None:
            return [self.decode(record) for record in records]
        return examples

    def _decode_varied(self, records: Sequence[bytes], buf: bytearray) -> list[dict[str, Any]]:
        """`decode_many` of records of varying size joined into `buf`: column by column
        (`FeaturesDict.decode_records`), or one by one when a record does not fit its layout
        (which `decode` reports)."""
        lengths = np.fromiter(map(len, records), np.int64, len(records))
        starts = np.zeros(len(records), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        if (lengths < 1).any():
            return [self.decode(record) for record in records]  # raises on the empty one
        versions = np.frombuffer(buf, np.uint8)[starts]
        if (versions != RECORD_VERSION).any():
            raise _version_error(int(versions[versions != RECORD_VERSION][0]))
        examples = self.features.decode_records(buf, starts + 1, lengths - 1)
        if examples is None:
            return [self.decode(record) for record in records]
        return examples

    def decode_columns(self, records: Sequence[bytes]) -> dict[str, Any] | None:
        """The examples in `records` as one dict of stacked arrays (n rows each), or None.

        None unless every feature is a fixed-shape array of its stored bytes and decodes the
        default way: then a whole batch decodes with one join and one copy per feature.
        """
        size = self._record_size
        if size is None:
            return None
        data = b"".join(records)
        if len(data) != size * len(records):
            return None
        return self.decode_rows(np.frombuffer(data, np.uint8).reshape(len(records), size))

    def decode_rows(self, rows: np.ndarray[Any, Any]) -> dict[str, Any] | None:
        """`decode_columns` of records given as the rows of an ``(n, record_size)`` uint8
        array (as `catalog.read.mapped_shard` gathers them), or None as there."""
        if self._record_size is None or rows.shape[1:] != (self._record_size,):
            return None
        if (rows[:, 0] != RECORD_VERSION).any():
            raise _version_error(int(rows[rows[:, 0] != RECORD_VERSION][0, 0]))
        return self.features.decode_columns(rows[:, 1:])


def _version_error(got: object) -> SourceFormatError:
    return SourceFormatError(
        f"record format version {got} is not {RECORD_VERSION}; "
        "prepare the dataset again with this version of catalog (--overwrite)"
    )
