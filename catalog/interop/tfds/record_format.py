"""TensorFlow Datasets' record format, registered for catalog's DataSource to read.

A directory TFDS prepared holds serialized tf.train.Examples (``record_format["name"]`` is
`RECORD_FORMAT_NAME` in the DatasetInfo `catalog.interop.tfds.directory` reads), decoded by
`ExampleCodec`, in ArrayRecord shards (zstd-compressed, opened through
`catalog.read.array_record` like catalog's own) or TFRecord shards (read through an index of
record offsets, `catalog.interop.tfrecord.index`), as ``record_format["file_format"]`` says;
``record_format["tensor_encodings"]`` names the Tensors stored as bytes (`encoded`).
Neither is memory-mapped for batched reads.

Importing this module registers the format; `TFDS_RECORDS` is pickled by reference, so a
DataSource unpickled in a fresh process imports this module, and the format with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from catalog.info.dataset_info import DatasetInfo
from catalog.interop.tfds import RECORD_FORMAT_NAME
from catalog.interop.tfds.codec import ExampleCodec
from catalog.interop.tfrecord.index import IndexedReader
from catalog.read.array_record import open_reader
from catalog.read.record_format import RecordFormat, ShardReader, register
from catalog.storage.shards import is_compressed

__all__ = ["TFDS_RECORDS", "TFDSRecords"]


class _TFRecordShard(IndexedReader):
    """A TFRecord shard read at random, as a `catalog.read.record_format.ShardReader`."""

    def num_records(self) -> int:
        return len(self)


class TFDSRecords(RecordFormat):
    """TFDS's serialized Examples in ArrayRecord or TFRecord shards."""

    def codec(
        self,
        info: DatasetInfo,
        *,
        skip: Iterable[str],
        decoders: Mapping[str, Callable[[bytes], Any]],
    ) -> ExampleCodec:
        encodings = info.record_format.get("tensor_encodings") or {}
        return ExampleCodec(info.features, skip=skip, decoders=decoders, encodings=encodings)

    def open(self, path: str, info: DatasetInfo) -> ShardReader:
        if info.record_format.get("file_format") == "tfrecord":
            return _TFRecordShard(path)
        reader: ShardReader = open_reader(path, compressed=is_compressed(info.shard_options))
        return reader

    def decode_fix(self, info: DatasetInfo) -> str:
        return (
            "the directory's files do not match its features.json: write it again with "
            "the tool that made it (e.g. TFDS's download_and_prepare)"
        )


TFDS_RECORDS = register(TFDSRecords(RECORD_FORMAT_NAME, instance="TFDS_RECORDS"))
