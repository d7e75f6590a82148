"""How a prepared dataset is read: one value from the API entry point down to the data sources
(Grain's ``ReadOptions`` shape), in place of loose keywords in every signature on the way."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from catalog.read.decoding import Decoder
from catalog.storage.data_dir import RemoteRead

__all__ = ["DEFAULT", "ReadOptions"]


@dataclass(frozen=True)
class ReadOptions:
    """What `catalog.data_source` and `DatasetBuilder.as_data_source` take as keywords.

    `decoders`: per feature path, False for the stored bytes or a function of them;
    `as_supervised`: ``(input, target)`` tuples of the supervised keys; in a bucket data dir,
    `remote_read` (``"cache"``: whole shards in a local cache, ``"range"``: byte ranges),
    `cache_dir` and `cache_size` (that cache's place and size limit)."""

    decoders: Mapping[str, Decoder] | None = None
    as_supervised: bool = False
    remote_read: RemoteRead = "cache"
    cache_dir: str | os.PathLike[str] | None = None
    cache_size: int | str | None = None


#: The options of a read that gives none.
DEFAULT = ReadOptions()
