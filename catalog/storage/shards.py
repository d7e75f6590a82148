"""Shard files: their names, the options they are written with, and the error for a bad one.

Shards are ArrayRecord files written ``group_size:1,uncompressed``: every record individually
addressable, and no zstd, which is what keeps readers safe in forked processes (the reasons
are in `catalog.read.array_record`, which opens them).
"""

from __future__ import annotations

import os

from catalog.errors import ShardError

__all__ = ["WRITER_OPTIONS", "is_compressed", "shard_error", "shard_name"]

#: group_size:1 keeps every record individually addressable (larger groups make one random
#: read cost tens of milliseconds); uncompressed keeps readers fork-safe
#: (`catalog.read.array_record`).
WRITER_OPTIONS = "group_size:1,uncompressed"

_FIX = "run 'catalog verify' to check the dataset, and 'catalog prepare --overwrite' to redo it"


def shard_name(dataset: str, split: str, index: int = 0, count: int = 1) -> str:
    """``<dataset>-<split>.array_record-<index>-of-<count>``, both five digits."""
    return f"{dataset}-{split}.array_record-{index:05d}-of-{count:05d}"


def is_compressed(writer_options: str | None) -> bool:
    """Whether shards written with `writer_options` hold compressed chunks (None: written by a
    catalog that did not record its options, with array_record's default, zstd)."""
    if writer_options is None:
        return True
    return "uncompressed" not in writer_options.split(",")


def shard_error(path: str | os.PathLike[str], problem: str) -> ShardError:
    """The error for a shard that is missing, truncated or corrupt: which file, what, the fix."""
    return ShardError(f"shard {path}: {problem}; {_FIX}")
