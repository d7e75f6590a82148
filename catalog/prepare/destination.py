"""Where a prepare publishes: the data dir's `Publisher` (`catalog.storage.data_dir`), the
same steps for a local data dir and a bucket.

The driver (`catalog.prepare.driver`) runs the steps: check the copy there, take the lock,
plan, run the units into a local work dir, publish a new generation. Where the shards end up
is the store's business: a local work dir renamed into a generation
(`catalog.storage.local_store`), or shards uploaded one by one into a bucket's generation and
a pointer object written last (`catalog.storage.bucket_store`).
"""

from __future__ import annotations

from pathlib import Path

from catalog.storage.data_dir import Publisher, store_for
from catalog.storage.remote import RemoteDir

__all__ = ["Destination", "destination"]

Destination = Publisher


def destination(target: Path | RemoteDir, scratch: Path | None) -> Destination:
    """The destination of a prepare into `target`; `scratch`: local space for a bucket's."""
    return store_for(target).publisher(target, scratch)
