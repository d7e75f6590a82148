"""TFRecord files and tf.train.Example protos, without TensorFlow.

- `catalog.tfrecord.io`: the framing (length + masked CRC32C), plain or GZIP: `read_records`,
  `TFRecordWriter`, `write_records`.
- `catalog.tfrecord.index`: random access through an index of record offsets, built once and
  cached outside the user's directory: `record_offsets`, `IndexedReader`.
- `catalog.tfrecord.example`: ``tf.train.Example`` / ``SequenceExample`` encoding and decoding.
- `catalog.tfrecord.crc`: CRC32C and TFRecord's masked form of it.
"""

from __future__ import annotations

from catalog.tfrecord.example import (
    encode_example,
    encode_sequence_example,
    parse_example,
    parse_sequence_example,
)
from catalog.tfrecord.index import IndexedReader, record_offsets
from catalog.tfrecord.io import TFRecordWriter, read_records, write_records

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
