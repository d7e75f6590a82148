"""catalog's own record format, registered: `RecordCodec` records in ArrayRecord shards.

Records are encoded by `catalog.features.codec` (``record_format["name"]`` is
``catalog-record``), one per example, in ArrayRecord shards opened through
`catalog.read.array_record` (which refuses compressed shards in a forked process instead of
crashing). Shards catalog writes are uncompressed with one record per chunk, so batched reads
may gather their records from a memory map (`catalog.read.mapped_shard`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from catalog.features.codec import RECORD_FORMAT, RecordCodec
from catalog.info.dataset_info import DatasetInfo
from catalog.read.array_record import open_reader
from catalog.read.record_format import RecordFormat, ShardReader, register
from catalog.storage.shards import is_compressed

__all__ = ["CATALOG_RECORDS", "CatalogRecords"]


class CatalogRecords(RecordFormat):
    """catalog's records (`RecordCodec`) in ArrayRecord shards."""

    def codec(
        self,
        info: DatasetInfo,
        *,
        skip: Iterable[str],
        decoders: Mapping[str, Callable[[bytes], Any]],
    ) -> RecordCodec:
        return RecordCodec(info.features, skip=skip, decoders=decoders)

    def open(self, path: str, info: DatasetInfo) -> ShardReader:
        reader: ShardReader = open_reader(path, compressed=is_compressed(info.shard_options))
        return reader

    def mappable(self, info: DatasetInfo) -> bool:
        return not is_compressed(info.shard_options)

    def decode_fix(self, info: DatasetInfo) -> str:
        return (
            f"the shard no longer matches the dataset's features (changed after it was "
            f"prepared?): run 'catalog verify {info.name}' to check it, and 'catalog "
            f"prepare {info.name} --overwrite' to prepare it again"
        )


CATALOG_RECORDS = register(CatalogRecords(str(RECORD_FORMAT["name"]), instance="CATALOG_RECORDS"))
