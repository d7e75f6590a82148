"""The record format: one ArrayRecord record per example.

A record is one version byte followed by the example encoded by its FeaturesDict: fixed-size
features at constant offsets (raw image pixels, labels, scalars), then variable-size ones each
prefixed by its length. Decoding copies the record once into a writable buffer and hands out
NumPy views of it, so arrays are writable (PyTorch's collate accepts them without warnings)
and no value is copied twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "RecordCodec"]

RECORD_VERSION = 1
#: Written into dataset_info.json so a reader knows how the records were encoded.
RECORD_FORMAT = {"name": "catalog-record", "version": RECORD_VERSION}
_HEADER = bytes([RECORD_VERSION])


class RecordCodec:
    """Encodes examples into records and decodes records into examples for one FeaturesDict."""

    def __init__(self, features: FeaturesDict) -> None:
        self.features = features

    def encode(self, example: Mapping[str, Any]) -> bytes:
        """Validate `example` against the features and return its record."""
        return _HEADER + self.features.encode(example)

    def decode(self, record: bytes) -> dict[str, Any]:
        """Return the example stored in `record` (NumPy arrays are writable)."""
        buf = bytearray(record)
        if not buf or buf[0] != RECORD_VERSION:
            got = buf[0] if buf else "an empty record"
            raise SourceFormatError(
                f"record format version {got} is not {RECORD_VERSION}; "
                "prepare the dataset again with this version of catalog (--overwrite)"
            )
        return self.features.decode(buf, 1, len(buf) - 1)
