"""Shard files: their names, the options they are written with, and the error for a bad one.

Shards are ArrayRecord files written uncompressed: no zstd, which is what keeps readers safe in
forked processes (the reasons are in `catalog.read.array_record`, which opens them). One record
per example; records of a few hundred bytes or less share a chunk (``group_size`` > 1,
`writer_options`; written by `catalog.storage.shard_writer`, a batch of records at a time):
a chunk costs a writer two hashes and adds about 40 bytes of header and 20 of index. Readers find
every record from the file's own index whatever the group size (`catalog.read.mapped_shard`);
an uncompressed chunk stores its records one after the other, so a record is still read
without reading its neighbours. The options a dataset's shards were written with are in its
dataset_info.json (``shard_options``); they are not part of what a prepared copy is: a copy
written with other options is read as it is.
"""

from __future__ import annotations

import os

from catalog.errors import ShardError

__all__ = [
    "CHUNK_BYTES",
    "MAX_GROUP_SIZE",
    "WRITER_OPTIONS",
    "group_size",
    "is_compressed",
    "shard_error",
    "shard_name",
    "writer_options",
]

#: The options of one record per chunk (records of more than `CHUNK_BYTES` / 2 bytes, and
#: older copies); uncompressed keeps readers fork-safe (`catalog.read.array_record`).
WRITER_OPTIONS = "group_size:1,uncompressed"
#: Records share a chunk until it holds about this many bytes of records.
CHUNK_BYTES = 1024
#: The most records in one chunk (a power of two).
MAX_GROUP_SIZE = 64

_FIX = "run 'catalog verify' to check the dataset, and 'catalog prepare --overwrite' to redo it"


def shard_name(dataset: str, split: str, index: int = 0, count: int = 1) -> str:
    """``<dataset>-<split>.array_record-<index>-of-<count>``, both five digits."""
    return f"{dataset}-{split}.array_record-{index:05d}-of-{count:05d}"


def writer_options(mean_record_bytes: float) -> str:
    """The writer options for shards of records of `mean_record_bytes` on average: as many
    records per chunk (a power of two, at most `MAX_GROUP_SIZE`) as fit in `CHUNK_BYTES`, one
    for records larger than half of it. Chunks of small records are written in the calling
    thread (``max_parallelism:1``): array_record hands each chunk to a thread pool otherwise,
    which costs more CPU than the chunk itself (about 10% of the writer's CPU at 48-byte
    records); the file's bytes are the same. Larger groups were measured and not taken: 64
    records a chunk made batches of 128 random reads about 10-20% slower.

    >>> writer_options(48), writer_options(785)
    ('group_size:16,uncompressed,max_parallelism:1', 'group_size:1,uncompressed')
    """
    group = 1
    while group < MAX_GROUP_SIZE and 2 * group * max(mean_record_bytes, 1.0) <= CHUNK_BYTES:
        group *= 2
    if group == 1:
        return WRITER_OPTIONS
    return f"group_size:{group},uncompressed,max_parallelism:1"


def group_size(options: str | None) -> int:
    """The ``group_size`` of writer `options` (array_record's default, 65536, when they do not
    say; 1 for None: catalog wrote one record per chunk before it recorded its options)."""
    if options is None:
        return 1
    for option in options.split(","):
        name, _, value = option.partition(":")
        if name.strip() == "group_size" and value.strip().isdigit():
            return int(value)
    return 65536


def is_compressed(writer_options: str | None) -> bool:
    """Whether shards written with `writer_options` hold compressed chunks (None: written by a
    catalog that did not record its options, with array_record's default, zstd)."""
    if writer_options is None:
        return True
    return "uncompressed" not in writer_options.split(",")


def shard_error(path: str | os.PathLike[str], problem: str) -> ShardError:
    """The error for a shard that is missing, truncated or corrupt: which file, what, the fix."""
    return ShardError(f"shard {path}: {problem}; {_FIX}")
