"""TFRecord files and tf.train.Example protos, without TensorFlow.

- `catalog.interop.tfrecord.io`: the framing (length + masked CRC32C), plain or GZIP:
  `read_records`, `TFRecordWriter`, `write_records`.
- `catalog.interop.tfrecord.index`: random access through an index of record offsets, built once and
  cached outside the user's directory: `record_offsets`, `IndexedReader`.
- `catalog.interop.tfrecord.example`: ``tf.train.Example`` / ``SequenceExample`` encoding and
decoding.
- `catalog.interop.tfrecord.crc`: CRC32C and TFRecord's masked form of it.
"""

from __future__ import annotations

from catalog.interop.tfrecord.example import (
    encode_example,
    encode_sequence_example,
    parse_example,
    parse_sequence_example,
)
from catalog.interop.tfrecord.index import IndexedReader, record_offsets
from catalog.interop.tfrecord.io import TFRecordWriter, read_records, write_records

__all__ = [
    "IndexedReader",
    "TFRecordWriter",
    "encode_example",
    "encode_sequence_example",
    "parse_example",
    "parse_sequence_example",
    "read_records",
    "record_offsets",
    "write_records",
]
